//! The live view (issue 37 item 5; docs/console.md "Live view") over real
//! HTTP: a client reads `/live/…` as a browser's EventSource would and sees
//! `change` after a message is ingested or an operator action is applied;
//! the per-user bound, the lifetime and the keep-alive (on the test's
//! Clock), the session check; the pages stay whole without the script; and
//! in a browser the Overview's counter moves without a reload.

use super::*;
use tokio::net::TcpStream;

/// From a change committed to its event on the stream: the poll interval
/// (500 ms) and the stream's write, with room for a loaded machine.
const WITHIN: Duration = Duration::from_millis(1000);
/// Bound on an event that does not race a change (the first poll, a stream
/// ending): only keeps a broken stream from hanging the test.
const EVENTUALLY: Duration = Duration::from_secs(10);

/// An open `/live/…` stream read as raw bytes (the events are found by
/// their text; each arrives in one chunk).
struct LiveStream {
    s: TcpStream,
    status: u16,
    head: String,
    text: String,
    /// Where the next [`LiveStream::until`] starts looking.
    read_to: usize,
}

impl LiveStream {
    /// The stream at `path` with the session `cookie` (or none).
    async fn open(c: &Console, path: &str, cookie: Option<&str>) -> LiveStream {
        match cookie {
            Some(cookie) => {
                let value = format!("msgx_console={cookie}");
                LiveStream::open_with(c, path, ("Cookie", &value)).await
            }
            None => LiveStream::open_with(c, path, ("Accept", "text/event-stream")).await,
        }
    }

    /// The stream at `path`, sending the header `(name, value)`.
    async fn open_with(c: &Console, path: &str, (name, value): (&str, &str)) -> LiveStream {
        let mut s = common::connect_from(ip("127.0.0.1"), c.addr).await;
        let req = format!(
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n{name}: {value}\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await.expect("write");
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
            let n = tokio::time::timeout(EVENTUALLY, s.read(&mut buf))
                .await
                .expect("an answer head")
                .expect("read");
            assert!(n > 0, "closed before the head: {raw:?}");
            raw.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        LiveStream {
            s,
            status,
            head,
            text: String::from_utf8_lossy(&raw[head_end + 4..]).into_owned(),
            read_to: 0,
        }
    }

    /// Reads until `what` appears after what earlier calls consumed;
    /// false after `bound` or at the stream's end.
    async fn until(&mut self, what: &str, bound: Duration) -> bool {
        let deadline = Instant::now() + bound;
        let mut buf = [0u8; 4096];
        loop {
            if let Some(at) = self.text[self.read_to..].find(what) {
                self.read_to += at + what.len();
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.s.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => self.text.push_str(&String::from_utf8_lossy(&buf[..n])),
                _ => return false,
            }
        }
    }

    /// Reads to the end of the stream (its last chunk, or the connection's
    /// end); false if it is still open after `bound`.
    async fn ends_within(&mut self, bound: Duration) -> bool {
        let deadline = Instant::now() + bound;
        let mut buf = [0u8; 4096];
        loop {
            if self.text.ends_with("\r\n0\r\n\r\n") || self.text.starts_with("0\r\n\r\n") {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.s.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                Ok(Ok(n)) => self.text.push_str(&String::from_utf8_lossy(&buf[..n])),
                Err(_) => return false,
            }
        }
    }

    /// What was read after the last match.
    fn rest(&self) -> &str {
        &self.text[self.read_to..]
    }
}

const CHANGE: &str = "event: change";

/// The `data-live-src` of a page.
fn live_src(body: &str) -> String {
    let at = body
        .find("data-live-src=\"")
        .unwrap_or_else(|| panic!("a live page: {body}"));
    body[at + 15..]
        .split('"')
        .next()
        .expect("attribute value")
        .to_string()
}

/// The Overview without its script is the whole page: every fragment the
/// live view refreshes is server-rendered in it, marked `data-live`; the
/// stream is refused without a session; and a viewer's stream tells of a
/// message ingested within the bound.
#[tokio::test]
async fn a_viewers_overview_stream_tells_of_an_ingested_message_within_a_second() {
    let c = Console::start(|_| {}).await;
    c.fill().await;
    let (viewer, _) = c.login(VICTOR).await;

    let page = c.get("/", Some(&viewer)).await;
    assert_eq!(page.status, 200, "{page:?}");
    for id in [
        "overview-feed",
        "overview-charts",
        "overview-states",
        "overview-outbox",
        "overview-backfill",
        "overview-jobs",
    ] {
        let tag = format!("<section id=\"{id}\" data-live>");
        assert!(page.body.contains(&tag), "{tag} in {}", page.body);
    }
    for filled in [
        "id=\"fact-w\"",
        "id=\"fact-state-dead\"",
        "id=\"table-outbox\"",
    ] {
        assert!(page.body.contains(filled), "{filled} server-rendered");
    }
    assert!(
        page.body
            .contains("<script src=\"/assets/live.js\" defer></script>")
    );
    let src = live_src(&page.body);
    assert!(src.starts_with("/live/overview?v="), "{src}");
    let script = c.get("/assets/live.js", None).await;
    assert_eq!(script.status, 200);
    assert!(script.body.contains("EventSource"), "{}", script.body);

    // No session, or a forged one: refused, not redirected.
    assert_eq!(c.get(&src, None).await.status, 403);
    assert_eq!(c.get(&src, Some("forged")).await.status, 403);

    let mut live = LiveStream::open(&c, &src, Some(&viewer)).await;
    assert_eq!(live.status, 200, "{}", live.head);
    assert!(
        live.head
            .to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{}",
        live.head
    );
    assert!(live.until("retry: 3000", EVENTUALLY).await, "{}", live.text);
    // The poller's first look: nothing was watched before it.
    assert!(live.until(CHANGE, EVENTUALLY).await, "{}", live.text);

    c.mailbox.insert(&sis::schd_one_flight(50, 9050)).await;
    drain(&c.runner).await;
    let ingested = Instant::now();
    assert!(
        live.until(CHANGE, WITHIN).await,
        "no change within {WITHIN:?} of the ingest: {}",
        live.rest()
    );
    println!(
        "change seen {:?} after the drain returned",
        ingested.elapsed()
    );
}

/// A message's stream tells of an action on that message (a replay applied
/// at the same Clock instant as its last write: told apart by the row's
/// version), and another message's stream stays quiet: its next output is
/// the keep-alive, once the Clock has moved by `keep-alive`.
#[tokio::test]
async fn a_message_stream_tells_of_its_own_replay_and_not_of_other_messages() {
    let c = Console::start(|_| {}).await;
    let f = c.fill().await;
    let (viewer, _) = c.login(VICTOR).await;
    let page = c
        .get(&format!("/messages/{}", f.unsupported), Some(&viewer))
        .await;
    for tag in [
        "<div id=\"message-facts\" data-live>",
        "<div id=\"message-actions\" class=\"actions\" data-live>",
        "<section id=\"message-events\" data-live>",
    ] {
        assert!(page.body.contains(tag), "{tag} in {}", page.body);
    }
    // Both pages are rendered before either stream starts the poller: a page
    // rendered after its first look is current, and its stream rightly
    // stays quiet (this test once lost that race).
    let other = c.get(&format!("/messages/{}", f.schd), Some(&viewer)).await;
    let mut mine = LiveStream::open(&c, &live_src(&page.body), Some(&viewer)).await;
    let mut other = LiveStream::open(&c, &live_src(&other.body), Some(&viewer)).await;
    assert_eq!((mine.status, other.status), (200, 200));
    assert!(mine.until(CHANGE, EVENTUALLY).await, "{}", mine.text);
    assert!(other.until(CHANGE, EVENTUALLY).await, "{}", other.text);

    let id = f.unsupported.to_string();
    let a = apply_as(&c, OPERATOR_TOKEN, "replay", &id, "codec fixed").await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(state_of(&c.db, f.unsupported).await, "PENDING");
    assert!(
        mine.until(CHANGE, WITHIN).await,
        "no change within {WITHIN:?} of the replay: {}",
        mine.rest()
    );

    let keep_alive = c.runner.config.msgx.console.live.keep_alive.chrono();
    c.clock.advance(keep_alive);
    assert!(
        other.until(": keep-alive", EVENTUALLY).await,
        "{}",
        other.text
    );
    assert!(
        !other.text[..other.read_to].contains("event: change\ndata: {\"version\":2"),
        "the other message's stream got only the first look: {}",
        other.text
    );
    assert_eq!(
        other.text.matches(CHANGE).count(),
        1,
        "only the first look before the keep-alive: {}",
        other.text
    );
}

/// A user holds at most `connections-per-user` streams (429 beyond, other
/// users unaffected); streams end at `max-lifetime` on the Clock and give
/// their slots back.
#[tokio::test]
async fn a_user_holds_a_bounded_number_of_streams_each_for_a_bounded_time() {
    let c = Console::start(|c| {
        c.msgx.console.live.connections_per_user = 2;
        c.msgx.console.live.max_lifetime = "2m".parse().expect("duration");
    })
    .await;
    let (viewer, _) = c.login(VICTOR).await;
    let (operator, _) = c.login(ALICE).await;
    let mut held = Vec::new();
    for _ in 0..2 {
        let s = LiveStream::open(&c, "/live/overview", Some(&viewer)).await;
        assert_eq!(s.status, 200, "{}", s.head);
        held.push(s);
    }
    let refused = LiveStream::open(&c, "/live/overview", Some(&viewer)).await;
    assert_eq!(refused.status, 429, "{}", refused.head);
    assert!(
        refused.text.contains("connections-per-user"),
        "{}",
        refused.text
    );
    let bearer = format!("Bearer {VIEWER_TOKEN}");
    let mut token = LiveStream::open_with(&c, "/live/overview", ("Authorization", &bearer)).await;
    assert_eq!(
        token.status, 200,
        "a token is a user of its own: {}",
        token.head
    );
    let mut other = LiveStream::open(&c, "/live/overview", Some(&operator)).await;
    assert_eq!(other.status, 200, "another user is not affected");

    c.clock.advance(chrono::Duration::minutes(2));
    for s in held.iter_mut().chain([&mut other, &mut token]) {
        assert!(s.ends_within(EVENTUALLY).await, "ended: {}", s.text);
    }
    let again = LiveStream::open(&c, "/live/overview", Some(&viewer)).await;
    assert_eq!(
        again.status, 200,
        "the slots were given back: {}",
        again.head
    );
}

/// The live view's own requests (its stream, its script's fetch of the page,
/// marked `X-Msgx-Live`) read the session without extending it: a page left
/// open is signed out after `session-idle-timeout` like an idle one.
#[tokio::test]
async fn the_live_views_requests_do_not_keep_a_session_alive() {
    let c = Console::start(|c| {
        c.msgx.console.session_idle_timeout = "30m".parse().expect("duration");
    })
    .await;
    let (viewer, _) = c.login(VICTOR).await;
    let cookie = format!("msgx_console={viewer}");
    let refetch = |c: &Console| {
        let headers = [("Cookie", cookie.as_str()), ("X-Msgx-Live", "1")];
        let addr = c.addr;
        async move { request(addr, "GET", "/", &headers, "").await.status }
    };
    c.clock.advance(chrono::Duration::minutes(20));
    assert_eq!(
        refetch(&c).await,
        200,
        "within the idle timeout of the login"
    );
    let s = LiveStream::open(&c, "/live/overview", Some(&viewer)).await;
    assert_eq!(s.status, 200, "{}", s.head);
    c.clock.advance(chrono::Duration::minutes(11));
    assert_eq!(
        refetch(&c).await,
        303,
        "31 min after the user's last own request"
    );
    assert_eq!(c.get("/live/overview", Some(&viewer)).await.status, 403);
}

/// In a browser: the Overview's watermark moves after an ingest without a
/// reload (the page's own script, the stream, the fragment swap).
#[tokio::test]
async fn in_a_browser_the_overviews_counter_moves_without_a_reload() {
    let Some(b) = common::browser::Browser::start().await else {
        return;
    };
    let c = Console::start(|_| {}).await;
    c.fill().await;
    let base = format!("http://{}", c.addr);
    b.goto(&format!("{base}/login")).await;
    b.fill("login-user", VICTOR.0).await;
    b.fill("login-password", VICTOR.1).await;
    b.click("login-submit").await;
    b.wait_for("#page-overview").await;
    let before = b.text_of("#fact-w dd").await;
    // Set on this document only: a reload would lose it.
    b.client()
        .execute("window.msgxNotReloaded = true; return 1;", vec![])
        .await
        .expect("script");
    b.wait_for("#live-status:not([hidden])").await;
    // The first look refreshes the page once; wait for it to settle.
    b.wait_for("[data-live-refreshed]").await;

    c.mailbox.insert(&sis::schd_one_flight(60, 9060)).await;
    drain(&c.runner).await;
    let w: i64 = sqlx::query_scalar("SELECT w FROM inbox_cursor")
        .fetch_one(&c.db.pool)
        .await
        .expect("W");
    assert_ne!(before, w.to_string(), "the ingest moved W");
    let moved = b
        .wait_for_text("#fact-w dd", &w.to_string(), common::browser::WAIT_TIMEOUT)
        .await;
    assert!(moved, "W {w} shown without a reload (was {before})");
    let same_page = b
        .client()
        .execute("return window.msgxNotReloaded === true;", vec![])
        .await
        .expect("script");
    assert_eq!(same_page, serde_json::json!(true), "not reloaded");
    assert_eq!(b.url().await, format!("{base}/"));
}
