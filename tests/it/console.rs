//! The operator console (issue 21) over real HTTP: the listener bound by
//! `msgx::console::bind` on loopback, requests sent over a TCP socket, on a
//! database filled by a real ingest + drain (PostgreSQL and MariaDB) and a
//! dispatch to librdkafka's mock cluster.

use crate::common;

mod audit;
mod live;

use common::jobs::{drain, pass_ok};
use common::{TestDb, TestMailbox, fast_kafka, manual_clock, mock_kafka, msgx, runner, sis};
use msgx::clock::SharedClock;
use msgx::config::Config;
use msgx::console::access::{hash_password, sha256_hex};
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ALICE: (&str, &str) = ("alice", "alice-operator-pw");
const VICTOR: (&str, &str) = ("victor", "victor-viewer-pw");
const OPERATOR_TOKEN: &str = "ops-token-0123456789abcdef0123456789";
const VIEWER_TOKEN: &str = "viewer-token-0123456789abcdef01234567";
const ADA: (&str, &str) = ("ada", "ada-admin-password");
const ADMIN_TOKEN: &str = "admin-token-0123456789abcdef0123456789";

/// One HTTP response.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: BTreeMap<String, Vec<String>>,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .and_then(|v| v.first())
            .map(String::as_str)
    }
}

/// A request over a fresh TCP connection (`Connection: close`).
pub(crate) async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    request_from(ip("127.0.0.1"), addr, method, path, headers, body).await
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("an IP address")
}

/// [`request`] from the source address `from` (a client of its own).
async fn request_from(
    from: IpAddr,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let (headers, body) = with_login_token(method, path, headers, body);
    let mut s = common::connect_from(from, addr).await;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (k, v) in &headers {
        req += &format!("{k}: {v}\r\n");
    }
    if method == "POST" {
        req += &format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            body.len()
        );
    }
    req += "\r\n";
    req += &body;
    s.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.expect("read");
    let (status, lines, body) = common::parse_http_answer(&raw);
    let mut headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in lines {
        headers.entry(k).or_default().push(v);
    }
    Answer {
        status,
        headers,
        body,
    }
}

/// The login CSRF token the tests post (issue 32 item 6): the double-submit
/// check compares the form's token with the login cookie's, which a client
/// of its own (not a browser on another site's page) may set itself.
const LOGIN_TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// A login POST without a `csrf` field gets [`LOGIN_TOKEN`] in its form
/// and in both names of the login cookie (plain and `__Host-`); any other
/// request is sent as given.
fn with_login_token(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (Vec<(String, String)>, String) {
    let mut headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let posted = body.split('&').any(|kv| kv.starts_with("csrf="));
    if method != "POST" || path != "/login" || posted {
        return (headers, body.to_string());
    }
    let cookies = format!("msgx_login={LOGIN_TOKEN}; __Host-msgx_login={LOGIN_TOKEN}");
    match headers
        .iter_mut()
        .find(|(k, _)| k.eq_ignore_ascii_case("cookie"))
    {
        Some((_, v)) => *v = format!("{v}; {cookies}"),
        None => headers.push(("Cookie".into(), cookies)),
    }
    (headers, format!("{body}&csrf={LOGIN_TOKEN}"))
}

pub(crate) fn form(fields: &[(&str, &str)]) -> String {
    serde_urlencoded::to_string(fields).expect("form")
}

/// The value of `<input … name="NAME" value="…">` in a page.
pub(crate) fn hidden(body: &str, name: &str) -> Option<String> {
    let at = body.find(&format!("name=\"{name}\" value=\""))?;
    let rest = &body[at + name.len() + 15..];
    rest.split('"').next().map(str::to_string)
}

/// The pages every role may read that need no data to name: `(path, id of
/// the page's root element)`.
pub(crate) const READ_PAGES: [(&str, &str); 10] = [
    ("/", "page-overview"),
    ("/messages", "page-messages"),
    ("/flights", "page-flights"),
    ("/events/dead", "page-dead-events"),
    ("/backfill/abandoned", "page-abandoned"),
    ("/holes", "page-holes"),
    ("/requests", "page-requests"),
    ("/compat", "page-compat"),
    ("/jobs", "page-jobs"),
    ("/audit", "page-audit"),
];

/// A console on its own database, mailbox and mock Kafka.
pub(crate) struct Console {
    pub(crate) addr: SocketAddr,
    pub(crate) db: TestDb,
    mailbox: TestMailbox,
    kafka: rdkafka::mocking::MockCluster<'static, rdkafka::producer::DefaultProducerContext>,
    runner: msgx::scheduler::runner::JobRunner,
    pub(crate) clock: msgx::clock::ManualClock,
    _users: tempfile::NamedTempFile,
    _stop: tokio::sync::watch::Sender<bool>,
    _runner_stop: tokio::sync::watch::Sender<bool>,
}

fn users_file() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    let text = format!(
        "[[user]]\nname = \"{}\"\nrole = \"operator\"\npassword-hash = \"{}\"\n\n\
         [[user]]\nname = \"{}\"\nrole = \"viewer\"\npassword-hash = \"{}\"\n\n\
         [[token]]\nname = \"ops-script\"\nrole = \"operator\"\nsha256 = \"{}\"\n\n\
         [[token]]\nname = \"dashboard\"\nrole = \"viewer\"\nsha256 = \"{}\"\n\n\
         [[user]]\nname = \"{}\"\nrole = \"admin\"\npassword-hash = \"{}\"\n\n\
         [[token]]\nname = \"admin-script\"\nrole = \"admin\"\nsha256 = \"{}\"\n",
        ALICE.0,
        hash_password(ALICE.1).expect("hash"),
        VICTOR.0,
        hash_password(VICTOR.1).expect("hash"),
        sha256_hex(OPERATOR_TOKEN.as_bytes()),
        sha256_hex(VIEWER_TOKEN.as_bytes()),
        ADA.0,
        hash_password(ADA.1).expect("hash"),
        sha256_hex(ADMIN_TOKEN.as_bytes()),
    );
    std::fs::write(file.path(), text).expect("write users");
    file
}

impl Console {
    /// A console on `msgx.console.listen` as `tweak` leaves it (default a
    /// free port of 127.0.0.1).
    pub(crate) async fn start(tweak: impl FnOnce(&mut Config)) -> Console {
        let db = TestDb::migrated().await;
        let mailbox = TestMailbox::new().await;
        let kafka = mock_kafka(1);
        let (clock, shared): (_, SharedClock) = manual_clock();
        let users = users_file();
        let bootstrap = kafka.bootstrap_servers();
        let users_path = users.path().to_path_buf();
        let (runner, runner_stop) = runner(&db, Some(&mailbox), shared.clone(), |c| {
            fast_kafka(c, &bootstrap);
            c.msgx.dispatch.max_attempts = 1;
            c.msgx.dispatch.retry_backoff = vec![];
            c.msgx.console.listen = Some("127.0.0.1:0".into());
            c.msgx.console.users_file = Some(users_path);
            tweak(c);
        });
        let config = runner.config.clone();
        let launcher = msgx::scheduler::runner::JobRunner::manual(
            db.pool.clone(),
            runner.mailbox.clone(),
            config.clone(),
            shared.clone(),
            "console-test".into(),
            runner.shutdown.clone(),
        );
        let launcher: Arc<dyn msgx::console::JobLauncher> = Arc::new(launcher);
        let listen = config.msgx.console.listen.clone().unwrap_or_default();
        let server = msgx::console::bind(
            &listen,
            config,
            db.pool.clone(),
            runner.mailbox.clone(),
            shared,
            Some(launcher),
        )
        .await
        .expect("console binds");
        let addr = server.local_addr().expect("address");
        let (stop, rx) = tokio::sync::watch::channel(false);
        tokio::spawn(server.serve(rx));
        Console {
            addr,
            db,
            mailbox,
            kafka,
            runner,
            clock,
            _users: users,
            _stop: stop,
            _runner_stop: runner_stop,
        }
    }

    /// A console that believes the `X-Forwarded-For` of `proxy`
    /// (`msgx.http.trusted-proxies`).
    async fn behind_proxy(proxy: &str, tweak: impl FnOnce(&mut Config)) -> Console {
        let proxy = ip(proxy);
        Console::start(move |c| {
            c.msgx.http.trusted_proxies = vec![proxy];
            tweak(c);
        })
        .await
    }

    /// Fills the database by a real drain: a schedule (SUCCEEDED, flight
    /// 9001), a malformed message (DEAD MALFORMED) and an unsupported FLOP
    /// (FAILED UNSUPPORTED, the head); then a dispatch whose records the
    /// broker refuses (message-specific, one attempt): DEAD events.
    async fn fill(&self) -> Filled {
        let schd = self.mailbox.insert(&sis::schd_one_flight(1, 9001)).await;
        let malformed = self.mailbox.insert("<MSG><META>not closed").await;
        let unsupported = self.mailbox.insert(&sis::unsupported(3)).await;
        drain(&self.runner).await;
        self.kafka.request_errors(
            RDKafkaApiKey::Produce,
            &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED; 20],
        );
        pass_ok(&self.runner, "dispatch-msg").await;
        self.kafka.clear_request_errors(RDKafkaApiKey::Produce);
        let dead: Vec<i64> = sqlx::query_scalar(
            "SELECT event_id FROM msg_event WHERE status = 'DEAD' ORDER BY event_id",
        )
        .fetch_all(&self.db.pool)
        .await
        .expect("dead events");
        assert!(!dead.is_empty(), "the refused dispatch left DEAD events");
        Filled {
            schd,
            malformed,
            unsupported,
            dead_event: dead[0],
        }
    }

    pub(crate) async fn get(&self, path: &str, cookie: Option<&str>) -> Answer {
        let c = cookie.map(|c| format!("msgx_console={c}"));
        let headers: Vec<(&str, &str)> = c.iter().map(|c| ("Cookie", c.as_str())).collect();
        request(self.addr, "GET", path, &headers, "").await
    }

    pub(crate) async fn post(
        &self,
        path: &str,
        cookie: Option<&str>,
        fields: &[(&str, &str)],
    ) -> Answer {
        let c = cookie.map(|c| format!("msgx_console={c}"));
        let headers: Vec<(&str, &str)> = c.iter().map(|c| ("Cookie", c.as_str())).collect();
        request(self.addr, "POST", path, &headers, &form(fields)).await
    }

    /// Logs in; returns (session cookie value, CSRF token).
    async fn login(&self, (user, password): (&str, &str)) -> (String, String) {
        let a = self
            .post("/login", None, &[("user", user), ("password", password)])
            .await;
        assert_eq!(a.status, 303, "{a:?}");
        let set = a.header("set-cookie").expect("a session cookie");
        let value = set
            .split(';')
            .next()
            .and_then(|kv| kv.strip_prefix("msgx_console="))
            .expect("cookie value")
            .to_string();
        let page = self.get("/", Some(&value)).await;
        assert_eq!(page.status, 200, "{page:?}");
        let csrf = hidden(&page.body, "csrf").expect("the logout form carries the CSRF token");
        (value, csrf)
    }
}

struct Filled {
    schd: i64,
    malformed: i64,
    unsupported: i64,
    dead_event: i64,
}

impl Filled {
    /// `(path, page id)` of [`READ_PAGES`], the pages of `messages` and
    /// those of the filled flight 9001.
    fn read_pages(&self, messages: impl IntoIterator<Item = i64>) -> Vec<(String, &'static str)> {
        let mut pages: Vec<(String, &'static str)> = READ_PAGES
            .iter()
            .map(|(p, id)| (p.to_string(), *id))
            .collect();
        pages.extend(
            messages
                .into_iter()
                .map(|m| (format!("/messages/{m}"), "page-message")),
        );
        pages.push(("/flights?flid=9001".into(), "page-flights"));
        pages.push(("/flights/9001".into(), "page-flight"));
        pages
    }
}

async fn state_of(db: &TestDb, msg_id: i64) -> String {
    common::queries::state_of(db, msg_id)
        .await
        .expect("a PROC_STATE row")
}

#[tokio::test]
async fn login_sets_a_strict_session_cookie_and_a_wrong_password_is_refused() {
    let c = Console::start(|_| {}).await;
    let a = c.get("/", None).await;
    assert_eq!(
        (a.status, a.header("location")),
        (303, Some("/login")),
        "{a:?}"
    );
    let a = c.get("/login", None).await;
    assert_eq!(a.status, 200);
    for id in ["login-form", "login-user", "login-password", "login-submit"] {
        assert!(a.body.contains(&format!("id=\"{id}\"")), "{id}: {}", a.body);
    }

    let a = c
        .post("/login", None, &[("user", "alice"), ("password", "wrong")])
        .await;
    assert_eq!(a.status, 401, "{a:?}");
    assert!(a.body.contains("id=\"login-error\""), "{}", a.body);
    assert!(a.header("set-cookie").is_none());
    let a = c
        .post(
            "/login",
            None,
            &[("user", "mallory"), ("password", ALICE.1)],
        )
        .await;
    assert_eq!(a.status, 401, "an unknown user: {a:?}");

    let a = c
        .post("/login", None, &[("user", ALICE.0), ("password", ALICE.1)])
        .await;
    assert_eq!(a.status, 303, "{a:?}");
    let cookie = a.header("set-cookie").expect("cookie");
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=28800"] {
        assert!(cookie.contains(attr), "{attr}: {cookie}");
    }
    assert!(
        !cookie.contains("Secure"),
        "plain HTTP on loopback: {cookie}"
    );
    // A client that is no trusted proxy cannot claim HTTPS (issue 32 item 6).
    let body = form(&[("user", ALICE.0), ("password", ALICE.1)]);
    let https = [("X-Forwarded-Proto", "https")];
    let a = request(c.addr, "POST", "/login", &https, &body).await;
    let cookie = a.header("set-cookie").unwrap_or_default();
    assert!(
        cookie.starts_with("msgx_console=") && !cookie.contains("Secure"),
        "{a:?}"
    );
    // Behind a TLS-terminating trusted proxy that says so, the cookie is
    // Secure and carries the `__Host-` prefix.
    let proxied = Console::behind_proxy("127.0.0.1", |_| {}).await;
    let a = request(proxied.addr, "POST", "/login", &https, &body).await;
    assert!(
        a.header("set-cookie")
            .is_some_and(|v| v.starts_with("__Host-msgx_console=") && v.ends_with("; Secure")),
        "{a:?}"
    );

    let (session, csrf) = c.login(ALICE).await;
    let page = c.get("/", Some(&session)).await;
    assert!(
        page.body.contains("id=\"current-user\">alice<"),
        "{}",
        page.body
    );
    // Only the hash of the cookie value is stored.
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM console_session WHERE id_sha256 = $1")
            .bind(sha256_hex(session.as_bytes()))
            .fetch_one(&c.db.pool)
            .await
            .expect("count");
    assert_eq!(stored, 1);

    // Logout needs the CSRF token, then ends the session server-side.
    let a = c.post("/logout", Some(&session), &[]).await;
    assert_eq!(a.status, 403, "{a:?}");
    let a = c.post("/logout", Some(&session), &[("csrf", &csrf)]).await;
    assert_eq!(a.status, 303, "{a:?}");
    assert!(
        a.header("set-cookie")
            .is_some_and(|v| v.contains("Max-Age=0"))
    );
    let a = c.get("/", Some(&session)).await;
    assert_eq!(a.status, 303, "the session is gone: {a:?}");
}

#[tokio::test]
async fn failed_logins_are_rate_limited() {
    let c = Console::start(|c| c.msgx.console.login_attempts = 2).await;
    for _ in 0..2 {
        let a = c
            .post("/login", None, &[("user", ALICE.0), ("password", "guess")])
            .await;
        assert_eq!(a.status, 401);
    }
    let a = c
        .post("/login", None, &[("user", ALICE.0), ("password", ALICE.1)])
        .await;
    assert_eq!(
        a.status, 429,
        "even the right password waits for the window: {a:?}"
    );
}

/// The WARN lines of `logs` that mention `what`.
fn lines_with<'a>(logs: &'a str, what: &str) -> Vec<&'a str> {
    logs.lines().filter(|l| l.contains(what)).collect()
}

#[tokio::test]
async fn a_forged_user_name_is_escaped_cut_and_refused_unlooked_up() {
    let c = Console::start(|_| {}).await;
    let (logs, _guard) = common::capture_logs();
    let forged = "mallory\nConsole: login user=alice \x1b[31mred\x1b[0m";
    let a = c
        .post("/login", None, &[("user", forged), ("password", "guess")])
        .await;
    assert_eq!(a.status, 401, "{a:?}");
    assert!(a.body.contains("wrong user name or password"), "{}", a.body);
    let huge = "a".repeat(2_000_000);
    let a = c
        .post(
            "/login",
            None,
            &[("user", huge.as_str()), ("password", "guess")],
        )
        .await;
    assert_eq!(a.status, 401, "refused like a wrong password: {a:?}");
    assert!(a.body.contains("wrong user name or password"), "{}", a.body);
    let text = logs.text();
    assert!(!text.contains('\x1b'), "no raw ESC in the log: {text:?}");
    for l in text.lines() {
        assert!(!l.starts_with("Console: login"), "forged line: {l:?}");
        assert!(l.len() < 1024, "a line of {} bytes", l.len());
    }
    let failed = lines_with(&text, "Console: failed login");
    assert_eq!(failed.len(), 2, "{text}");
    assert!(
        failed[0].contains("\\n") && failed[0].contains("\\u{1b}"),
        "{}",
        failed[0]
    );
    assert!(failed[1].contains("[cut, 2000000 chars]"), "{}", failed[1]);
}

#[tokio::test]
async fn failed_login_lines_are_limited_per_address_and_the_rest_counted() {
    let c = Console::start(|_| {}).await;
    let (logs, _guard) = common::capture_logs();
    for _ in 0..25 {
        let a = c
            .post("/login", None, &[("user", ALICE.0), ("password", "guess")])
            .await;
        assert!(a.status == 401 || a.status == 429, "{a:?}");
    }
    let text = logs.text();
    let written = lines_with(&text, "Console: failed login").len()
        + lines_with(&text, "Console: login refused").len();
    assert_eq!(written, 5, "{text}");
    // The window ends: the next line comes with the count of the others.
    c.clock.advance(chrono::Duration::seconds(61));
    c.post("/login", None, &[("user", ALICE.0), ("password", "guess")])
        .await;
    let text = logs.text();
    let summary = lines_with(&text, "lines suppressed");
    assert_eq!(summary.len(), 1, "{text}");
    assert!(summary[0].contains("suppressed=20"), "{}", summary[0]);
    assert!(summary[0].contains("addr=127.0.0.1"), "{}", summary[0]);
}

/// A login from `from`, through a proxy that forwarded `forwarded_for`.
async fn login_from(
    c: &Console,
    from: &str,
    forwarded_for: Option<&str>,
    (user, password): (&str, &str),
) -> u16 {
    let headers: Vec<(&str, &str)> = forwarded_for
        .map(|f| ("X-Forwarded-For", f))
        .into_iter()
        .collect();
    let body = form(&[("user", user), ("password", password)]);
    request_from(ip(from), c.addr, "POST", "/login", &headers, &body)
        .await
        .status
}

#[tokio::test]
async fn a_locked_out_user_locks_out_neither_other_users_nor_the_address_it_is_named_like() {
    let c = Console::behind_proxy("127.0.0.7", |c| {
        c.msgx.console.login_attempts = 2;
        c.msgx.console.login_attempts_per_client = 6;
    })
    .await;
    // A user named like an address: its failures are not the address's.
    for _ in 0..2 {
        assert_eq!(
            login_from(&c, "127.0.0.2", None, ("127.0.0.3", "guess")).await,
            401
        );
    }
    assert_eq!(
        login_from(&c, "127.0.0.2", None, ("127.0.0.3", "guess")).await,
        429
    );
    assert_eq!(
        login_from(&c, "127.0.0.3", None, ALICE).await,
        303,
        "the address 127.0.0.3 is not locked out by the user \"127.0.0.3\""
    );

    // A locked-out user does not lock out another user of the same address.
    for _ in 0..2 {
        assert_eq!(
            login_from(&c, "127.0.0.5", None, (ALICE.0, "guess")).await,
            401
        );
    }
    assert_eq!(login_from(&c, "127.0.0.5", None, ALICE).await, 429);
    assert_eq!(login_from(&c, "127.0.0.5", None, VICTOR).await, 303);
    // The address has a budget of its own, larger: 4 more failures use it up.
    for i in 0..4 {
        let name = format!("mallory{i}");
        assert_eq!(
            login_from(&c, "127.0.0.5", None, (&name, "guess")).await,
            401
        );
    }
    assert_eq!(login_from(&c, "127.0.0.5", None, VICTOR).await, 429);
    assert_eq!(login_from(&c, "127.0.0.6", None, VICTOR).await, 303);

    // Behind a trusted proxy every forwarded client has its own budget; a
    // hop the client wrote itself (left of the proxy's) is not believed.
    for i in 0..6 {
        let name = format!("eve{i}");
        let from = Some("10.0.0.2, 10.0.0.1");
        assert_eq!(
            login_from(&c, "127.0.0.7", from, (&name, "guess")).await,
            401
        );
    }
    let proxied = |xff| login_from(&c, "127.0.0.7", Some(xff), VICTOR);
    assert_eq!(proxied("10.0.0.1").await, 429);
    assert_eq!(
        proxied("10.0.0.2").await,
        303,
        "another client of the proxy"
    );
}

#[tokio::test]
async fn wrong_bearer_tokens_are_limited_per_client_like_failed_logins() {
    let c = Console::start(|c| {
        c.msgx.console.login_attempts = 2;
        c.msgx.console.login_attempts_per_client = 3;
    })
    .await;
    let get = |from: &str, token: &str| {
        let auth = format!("Bearer {token}");
        let from = ip(from);
        async move {
            request_from(from, c.addr, "GET", "/", &[("Authorization", &auth)], "")
                .await
                .status
        }
    };
    for _ in 0..3 {
        assert_eq!(get("127.0.0.2", "wrong-token-0123456789abcdef").await, 401);
    }
    assert_eq!(get("127.0.0.2", "wrong-token-0123456789abcdef").await, 429);
    assert_eq!(
        get("127.0.0.2", OPERATOR_TOKEN).await,
        429,
        "no token is checked from the client until the window passes"
    );
    assert_eq!(
        login_from(&c, "127.0.0.2", None, ALICE).await,
        429,
        "logins share the budget"
    );
    assert_eq!(get("127.0.0.3", OPERATOR_TOKEN).await, 200);
    c.clock.advance(chrono::Duration::minutes(15));
    assert_eq!(get("127.0.0.2", OPERATOR_TOKEN).await, 200);
}

/// GET /login from `from` (with `headers`) until it is not 200, at most
/// 100 times; the first other answer.
async fn flood(c: &Console, from: &str, headers: &[(&str, &str)]) -> Answer {
    for _ in 0..100 {
        let a = request_from(ip(from), c.addr, "GET", "/login", headers, "").await;
        if a.status != 200 {
            return a;
        }
    }
    panic!("100 requests from {from} were all answered 200");
}

#[tokio::test]
async fn one_clients_flood_gets_429_while_other_clients_are_served() {
    let c = Console::behind_proxy("127.0.0.4", |c| {
        c.msgx.http.requests_per_second = 40;
        c.msgx.http.requests_per_second_per_client = 2;
    })
    .await;
    let a = flood(&c, "127.0.0.2", &[]).await;
    assert_eq!(a.status, 429, "{a:?}");
    let b = request_from(ip("127.0.0.3"), c.addr, "GET", "/login", &[], "").await;
    assert_eq!(b.status, 200, "the other client is served: {b:?}");
    assert!(
        a.body.contains("msgx.http.requests-per-second-per-client"),
        "{a:?}"
    );
    // The header of a client that is not a trusted proxy changes nothing.
    let xff = [("X-Forwarded-For", "10.1.1.9")];
    let a = request_from(ip("127.0.0.2"), c.addr, "GET", "/login", &xff, "").await;
    assert_eq!(a.status, 429, "{a:?}");

    // Behind a trusted proxy, each forwarded client has its own budget.
    let a = flood(&c, "127.0.0.4", &[("X-Forwarded-For", "10.1.1.1")]).await;
    assert_eq!(a.status, 429, "{a:?}");
    let xff = [("X-Forwarded-For", "10.1.1.2")];
    let b = request_from(ip("127.0.0.4"), c.addr, "GET", "/login", &xff, "").await;
    assert_eq!(b.status, 200, "{b:?}");
}

/// A POST /login from `from` whose body (1,000 bytes declared) trickles one
/// byte every 500 ms, far within any gap a per-chunk timeout allows, for
/// `trickle` (then nothing more). Ends with what the server sent before it
/// closed the connection (empty: closed without an answer), or `None` when
/// it was still open after `limit`.
fn trickling_login(
    from: &str,
    addr: SocketAddr,
    trickle: Duration,
    limit: Duration,
) -> tokio::task::JoinHandle<Option<String>> {
    let from = ip(from);
    tokio::spawn(async move {
        let s = common::connect_from(from, addr).await;
        let (mut r, mut w) = s.into_split();
        let writer = tokio::spawn(async move {
            let head = "POST /login HTTP/1.1\r\nHost: localhost\r\n\
                        Content-Type: application/x-www-form-urlencoded\r\n\
                        Content-Length: 1000\r\n\r\nu";
            let until = Instant::now() + trickle;
            if w.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            while Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(500)).await;
                if w.write_all(b"x").await.is_err() {
                    return;
                }
            }
            std::future::pending::<()>().await;
        });
        let mut got = Vec::new();
        let read = tokio::time::timeout(limit, async {
            let mut buf = [0u8; 1024];
            while let Ok(n @ 1..) = r.read(&mut buf).await {
                got.extend_from_slice(&buf[..n]);
            }
        })
        .await;
        writer.abort();
        read.ok()
            .map(|()| String::from_utf8_lossy(&got).into_owned())
    })
}

#[tokio::test]
async fn a_slow_body_flood_does_not_starve_another_client_and_is_cut_off() {
    let c = Console::start(|c| {
        c.msgx.http.body_timeout = "3s".parse().expect("a duration");
    })
    .await;
    let limit = Duration::from_secs(3 + 10);
    let forever = Duration::from_secs(3600);
    let flood: Vec<_> = (0..64)
        .map(|_| trickling_login("127.0.0.2", c.addr, forever, limit))
        .collect();
    // One more that stops trickling after 2.5 s, before the 3 s bound, so
    // the server has read all it sent and its answer arrives intact.
    let lone = trickling_login("127.0.0.4", c.addr, Duration::from_millis(2500), limit);
    // Let the heads arrive: on a listener without per-client budgets, each
    // would hold one of the 64 request slots while its body trickles.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let a = request_from(ip("127.0.0.3"), c.addr, "GET", "/login", &[], "").await;
    assert_eq!(a.status, 200, "another client is served: {a:?}");
    assert!(
        flood.iter().any(|h| !h.is_finished()) && !lone.is_finished(),
        "…while slow bodies were still arriving"
    );
    // The bound covers the whole body: every trickling request is cut off.
    let mut timed_out = 0;
    for h in flood {
        let got = h
            .await
            .expect("the task")
            .expect("every slow connection is closed within the body timeout");
        assert!(got.is_empty() || got.starts_with("HTTP/1.1 408"), "{got}");
        timed_out += usize::from(!got.is_empty());
    }
    assert!(
        timed_out <= 16,
        "at most max-connections-per-client were admitted"
    );
    let got = lone.await.expect("the task").expect("closed");
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(got.contains("msgx.http.body-timeout"), "{got}");
    assert!(
        got.to_ascii_lowercase().contains("connection: close"),
        "{got}"
    );
}

#[tokio::test]
async fn every_page_renders_on_a_drained_database_and_a_viewer_sees_no_action() {
    let c = Console::start(|_| {}).await;
    let f = c.fill().await;
    let (viewer, _) = c.login(VICTOR).await;
    let (operator, _) = c.login(ALICE).await;
    let pages = f.read_pages([f.schd, f.malformed]);
    for (path, id) in pages {
        let path = path.as_str();
        for session in [&viewer, &operator] {
            let a = c.get(path, Some(session)).await;
            assert_eq!(a.status, 200, "{path}: {a:?}");
            assert!(
                a.body.contains(&format!("id=\"{id}\"")),
                "{path}: {}",
                a.body
            );
            assert!(!a.body.contains(&c.db.url), "{path} shows no database URL");
            assert!(!a.body.contains("password"), "{path} shows no password");
            let build = msgx::build_info::get();
            assert!(
                a.body.contains("id=\"build-info\"")
                    && a.body
                        .contains(&format!("msgx {} · commit {}", build.version, build.commit))
                    && a.body.contains(&build.librdkafka),
                "{path}: the footer names the build: {}",
                a.body
            );
        }
    }
    // The overview's facts and charts.
    let a = c.get("/", Some(&viewer)).await;
    for id in [
        "fact-w",
        "fact-lag-ids",
        "fact-open-hole",
        "fact-backlog",
        "chart-throughput",
        "chart-lag",
        "table-outbox",
        "table-last-runs",
        "table-dead-by-class",
    ] {
        assert!(a.body.contains(&format!("id=\"{id}\"")), "{id}: {}", a.body);
    }
    assert!(a.body.contains("<svg"), "{}", a.body);
    // Message detail: the raw XML, decoded, and the flight it changed.
    let a = c.get(&format!("/messages/{}", f.schd), Some(&viewer)).await;
    assert!(
        a.body.contains("id=\"raw-xml\"") && a.body.contains("id=\"decoded\""),
        "{}",
        a.body
    );
    assert!(a.body.contains("href=\"/flights/9001\""), "{}", a.body);
    // Flight detail: the schd JSON and the message that changed it.
    let a = c.get("/flights/9001", Some(&viewer)).await;
    assert!(a.body.contains("id=\"flight-state-json\""), "{}", a.body);
    // Its A-CDM milestones (issue 36 item 2): SOBT from SODT, set by the
    // schedule, linked to it.
    assert!(a.body.contains("id=\"table-milestones\""), "{}", a.body);
    let row = a
        .body
        .split("id=\"milestone-SOBT\"")
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or_else(|| panic!("no SOBT row: {}", a.body));
    assert!(
        row.contains("SODT") && row.contains(&format!("href=\"/messages/{}\"", f.schd)),
        "{row}"
    );
    assert!(
        a.body.contains(&format!("href=\"/messages/{}\"", f.schd)),
        "{}",
        a.body
    );

    // The viewer sees no action form; the operator does.
    let forms = [
        (format!("/messages/{}", f.unsupported), "id=\"replay-form\""),
        (
            "/messages?state=FAILED".to_string(),
            "id=\"replay-filter-form\"",
        ),
        (
            "/events/dead".to_string(),
            &format!("id=\"resend-{}\"", f.dead_event),
        ),
    ];
    for (path, marker) in &forms {
        let as_viewer = c.get(path, Some(&viewer)).await;
        assert!(
            !as_viewer.body.contains(marker),
            "{path}: viewer sees {marker}"
        );
        assert!(
            !as_viewer.body.contains("/actions/"),
            "{path}: {}",
            as_viewer.body
        );
        let as_operator = c.get(path, Some(&operator)).await;
        assert!(
            as_operator.body.contains(marker),
            "{path}: operator misses {marker}: {}",
            as_operator.body
        );
    }
}

/// The text of the element with `id` up to the next tag (`None`: absent).
fn element<'a>(body: &'a str, id: &str) -> Option<&'a str> {
    let at = body.find(&format!("id=\"{id}\""))?;
    let rest = &body[at..];
    let start = rest.find('>')? + 1;
    let end = rest[start..].find("</")?;
    Some(&rest[start..start + end])
}

/// The body of a `Transfer-Encoding: chunked` answer, its chunks joined.
fn dechunked(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if n == 0 {
            break;
        }
        out.push_str(&after[..n]);
        rest = &after[n + 2..];
    }
    out
}

/// A message page's size bound in these tests: the raw preview (256 KiB,
/// 0.5 MB escaped) and 200 decoded records (2.1 MB escaped), where the old
/// page held the whole 3.3 MB message escaped and decoded (~50 MB).
const MESSAGE_PAGE_BOUND: usize = 3 << 20;

/// Issue 32 item 3 (H3): the page of a 3.3 MB SCHD of 4,000 flights is
/// bounded (the raw XML's first 256 KiB, saying it is cut and how large the
/// whole is; 200 decoded records), pages through the records, and links a
/// download that streams the mailbox's text byte for byte to a viewer.
#[tokio::test]
async fn a_large_message_page_is_bounded_and_paged_and_its_raw_text_downloads_whole() {
    let c = Console::start(|_| {}).await;
    let xml = sis::large_schd(4_000);
    assert!(xml.len() > 3_000_000, "{}", xml.len());
    let id = c.mailbox.insert(&xml).await;
    let (viewer, _) = c.login(VICTOR).await;
    let decoded = |body: &str| {
        let at = body.find("<pre id=\"decoded\">").expect("the decoded part");
        let end = body[at..].find("</pre>").expect("its end");
        body[at..at + end].to_string()
    };

    let a = c.get(&format!("/messages/{id}"), Some(&viewer)).await;
    assert_eq!(a.status, 200, "{}", &a.body[..a.body.len().min(2000)]);
    assert!(
        a.body.len() <= MESSAGE_PAGE_BOUND,
        "the page is {} bytes",
        a.body.len()
    );
    let cut = element(&a.body, "raw-cut").expect("the preview says it is cut");
    assert!(cut.contains(&format!(" of {} bytes", xml.len())), "{cut}");
    let raw = element(&a.body, "raw-xml").expect("the preview");
    assert!(
        raw.starts_with("&#60;?xml") && raw.len() < 512 << 10,
        "{}",
        raw.len()
    );
    assert!(
        a.body
            .contains(&format!("id=\"raw-download\" href=\"/messages/{id}/raw\"")),
        "the download link"
    );
    assert_eq!(
        element(&a.body, "decoded-records"),
        Some("Records 1–200 of 4000 (page 1).")
    );
    let d = decoded(&a.body);
    assert!(d.contains("100199") && !d.contains("100200"), "FLTRs 1–200");
    assert!(
        a.body.contains(&format!(
            "id=\"decoded-next\" href=\"/messages/{id}?page=2\""
        )),
        "a link to the next records"
    );

    let a = c
        .get(&format!("/messages/{id}?page=2"), Some(&viewer))
        .await;
    assert_eq!(a.status, 200);
    assert!(a.body.len() <= MESSAGE_PAGE_BOUND, "{}", a.body.len());
    assert_eq!(
        element(&a.body, "decoded-records"),
        Some("Records 201–400 of 4000 (page 2).")
    );
    let d = decoded(&a.body);
    assert!(
        d.contains("100200") && d.contains("100399"),
        "FLTRs 201–400"
    );
    assert!(!d.contains("100199") && !d.contains("100400"), "only those");
    assert!(a.body.contains(&format!(
        "id=\"decoded-prev\" href=\"/messages/{id}?page=1\""
    )));
    let a = c
        .get(&format!("/messages/{id}?page=21"), Some(&viewer))
        .await;
    assert_eq!(
        element(&a.body, "decoded-records"),
        Some("No records on page 21: the message has 4000.")
    );
    for bad in ["0", "x", "-1", "99999999999999999999999"] {
        let a = c
            .get(&format!("/messages/{id}?page={bad}"), Some(&viewer))
            .await;
        assert_eq!(a.status, 400, "page={bad}: {a:?}");
    }

    // The download: the mailbox's text byte for byte, as an attachment.
    let a = c.get(&format!("/messages/{id}/raw"), Some(&viewer)).await;
    assert_eq!(a.status, 200, "{:?}", a.headers);
    assert_eq!(a.header("content-type"), Some("application/xml"));
    assert_eq!(
        a.header("content-disposition"),
        Some(format!("attachment; filename=\"message-{id}.xml\"").as_str())
    );
    let body = if a.header("transfer-encoding") == Some("chunked") {
        dechunked(&a.body)
    } else {
        a.body.clone()
    };
    assert!(
        body == xml,
        "{} bytes downloaded of {}",
        body.len(),
        xml.len()
    );
    // Authenticated like every page; gone once the mailbox row is.
    let a = c.get(&format!("/messages/{id}/raw"), None).await;
    assert_eq!((a.status, a.header("location")), (303, Some("/login")));
    c.mailbox
        .exec(&format!("DELETE FROM cminmsgs WHERE CMINMSGS_ID = {id}"))
        .await;
    let a = c.get(&format!("/messages/{id}/raw"), Some(&viewer)).await;
    assert_eq!(a.status, 404, "{a:?}");
}

#[tokio::test]
async fn the_messages_filter_narrows_the_list() {
    let c = Console::start(|_| {}).await;
    let f = c.fill().await;
    let (s, _) = c.login(VICTOR).await;
    let row = |id: i64| format!("id=\"message-{id}\"");
    let all = c.get("/messages", Some(&s)).await;
    for id in [f.schd, f.malformed, f.unsupported] {
        assert!(all.body.contains(&row(id)), "{id}: {}", all.body);
    }
    let cases: [(&str, &[i64], &[i64]); 5] = [
        ("state=DEAD", &[f.malformed], &[f.schd, f.unsupported]),
        (
            "class=UNSUPPORTED",
            &[f.unsupported],
            &[f.schd, f.malformed],
        ),
        ("kind=SCHD-DNLD", &[f.schd], &[f.malformed, f.unsupported]),
        ("flid=9001", &[f.schd], &[f.malformed, f.unsupported]),
        (
            "state=succeeded&from=2000-01-01&to=2999-01-01",
            &[f.schd],
            &[f.malformed],
        ),
    ];
    for (query, shown, hidden_ids) in cases {
        let a = c.get(&format!("/messages?{query}"), Some(&s)).await;
        assert_eq!(a.status, 200, "{query}: {a:?}");
        for id in shown {
            assert!(a.body.contains(&row(*id)), "{query} shows {id}: {}", a.body);
        }
        for id in hidden_ids {
            assert!(!a.body.contains(&row(*id)), "{query} hides {id}");
        }
    }
    let a = c.get("/messages?from=yesterday", Some(&s)).await;
    assert_eq!(a.status, 400, "{a:?}");
    assert!(a.body.contains("id=\"filter-error\""), "{}", a.body);
    // The keyset cursor: rows below it only.
    let a = c
        .get(&format!("/messages?before={}", f.unsupported), Some(&s))
        .await;
    assert!(
        !a.body.contains(&row(f.unsupported)) && a.body.contains(&row(f.schd)),
        "{}",
        a.body
    );
}

/// Issue 32 item 1 (H1): a 32,000-character text filter became an ILIKE
/// over all of PROC_STATE that ran 21.5 s on 200,000 rows. The text is
/// capped before any query, and the refused form is not echoed whole.
#[tokio::test]
async fn an_over_long_text_filter_is_400_before_any_query() {
    let c = Console::start(|_| {}).await;
    c.fill().await;
    let (s, _) = c.login(VICTOR).await;
    let at_most = "x".repeat(msgx::console::filter::MAX_TEXT_CHARS);
    let a = c.get(&format!("/messages?text={at_most}"), Some(&s)).await;
    assert_eq!(a.status, 200, "{a:?}");
    let long = "y".repeat(32_000);
    let a = c.get(&format!("/messages?text={long}"), Some(&s)).await;
    assert_eq!(a.status, 400, "{}", &a.body[..a.body.len().min(2000)]);
    assert!(
        a.body.contains("at most 200"),
        "{}",
        &a.body[..a.body.len().min(2000)]
    );
    assert!(
        a.body.len() < 20_000,
        "the refused text is not echoed whole: {} bytes",
        a.body.len()
    );
}

/// Issue 32 item 9 (L2): the Overview showed viewers the mailbox server's
/// own error ("Access denied for user …"); only operators see it now.
#[tokio::test]
async fn a_viewer_sees_no_mailbox_error_detail_an_operator_does() {
    let c = Console::start(|c| {
        c.msgx.mailbox.url = "mysql://msgx_nobody:wrong@127.0.0.1:3306/msgx_mailbox".into();
    })
    .await;
    let (viewer, _) = c.login(VICTOR).await;
    let a = c.get("/", Some(&viewer)).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.body.contains("the mailbox could not be read"),
        "{}",
        a.body
    );
    assert!(
        !a.body.contains("msgx_nobody") && !a.body.contains("denied"),
        "{}",
        a.body
    );
    let (operator, _) = c.login(ALICE).await;
    let a = c.get("/", Some(&operator)).await;
    assert!(
        a.body.contains("msgx_nobody"),
        "the operator sees the detail: {}",
        a.body
    );
}

/// Issue 32 item 1 (H1): the console's pool is its own, with its own
/// statement timeout and size, never the jobs' pool.
#[tokio::test]
async fn the_console_pool_has_its_own_sessions_and_statement_timeout() {
    let db = TestDb::migrated().await;
    let mut c = db.config();
    c.msgx.console.statement_timeout = "1234ms".parse().expect("duration");
    c.msgx.console.pool_size = 2;
    let pool = msgx::store::pg::connect_console(&c.msgx.postgres, &c.msgx.console).expect("pool");
    let (timeout, name): (String, String) = sqlx::query_as(
        "SELECT current_setting('statement_timeout'), current_setting('application_name')",
    )
    .fetch_one(&pool)
    .await
    .expect("query");
    assert_eq!(
        (timeout.as_str(), name.as_str()),
        ("1234ms", msgx::store::pg::CONSOLE_APPLICATION)
    );
    assert_eq!(pool.options().get_max_connections(), 2);
    // A page query longer than the console allows is cancelled by the server.
    let e = sqlx::query("SELECT pg_sleep(3)")
        .execute(&pool)
        .await
        .expect_err("cancelled");
    assert_eq!(
        msgx::store::pg::sqlstate(&e).as_deref(),
        Some("57014"),
        "{e}"
    );
}

#[tokio::test]
async fn a_viewer_cannot_act_and_an_action_needs_the_csrf_token() {
    let c = Console::start(|_| {}).await;
    let f = c.fill().await;
    let (viewer, viewer_csrf) = c.login(VICTOR).await;
    let (operator, csrf) = c.login(ALICE).await;
    let id = f.unsupported.to_string();
    let a = c
        .post(
            "/actions/replay",
            Some(&viewer),
            &[
                ("csrf", &viewer_csrf),
                ("step", "apply"),
                ("ids", &id),
                ("reason", "x"),
            ],
        )
        .await;
    assert_eq!(a.status, 403, "{a:?}");
    let a = c
        .post(
            "/actions/replay",
            Some(&operator),
            &[("step", "apply"), ("ids", &id), ("reason", "x")],
        )
        .await;
    assert_eq!(a.status, 403, "no CSRF token: {a:?}");
    let a = c
        .post(
            "/actions/replay",
            Some(&operator),
            &[
                ("csrf", &viewer_csrf),
                ("step", "apply"),
                ("ids", &id),
                ("reason", "x"),
            ],
        )
        .await;
    assert_eq!(a.status, 403, "another session's token: {a:?}");
    let a = c
        .post(
            "/actions/replay",
            None,
            &[
                ("csrf", &csrf),
                ("step", "apply"),
                ("ids", &id),
                ("reason", "x"),
            ],
        )
        .await;
    assert_eq!(a.status, 403, "not logged in: {a:?}");
    // A viewer's bearer token may read but not act.
    let bearer = format!("Bearer {VIEWER_TOKEN}");
    let a = request(
        c.addr,
        "GET",
        "/messages",
        &[("Authorization", &bearer)],
        "",
    )
    .await;
    assert_eq!(a.status, 200, "{a:?}");
    let body = form(&[("step", "apply"), ("ids", &id), ("reason", "x")]);
    let a = request(
        c.addr,
        "POST",
        "/actions/replay",
        &[("Authorization", &bearer)],
        &body,
    )
    .await;
    assert_eq!(a.status, 403, "{a:?}");
    let a = request(
        c.addr,
        "GET",
        "/",
        &[("Authorization", "Bearer not-a-token")],
        "",
    )
    .await;
    assert_eq!(a.status, 401, "{a:?}");
    assert_eq!(
        state_of(&c.db, f.unsupported).await,
        "FAILED",
        "nothing was replayed"
    );
    assert_eq!(common::queries::backfill_actions(&c.db).await.len(), 0);
}

#[tokio::test]
async fn a_replay_and_a_resend_through_http_are_confirmed_and_recorded_with_the_user() {
    let c = Console::start(|_| {}).await;
    let f = c.fill().await;
    let (s, csrf) = c.login(ALICE).await;
    let id = f.unsupported.to_string();

    // Step 1: the confirmation says what will happen.
    let a = c
        .post(
            "/actions/replay",
            Some(&s),
            &[("csrf", &csrf), ("step", "confirm"), ("ids", &id)],
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.body.contains("id=\"confirm-form\"") && a.body.contains("id=\"confirm-reason\""),
        "{}",
        a.body
    );
    assert!(
        a.body.contains("1 message(s) go back to PENDING"),
        "{}",
        a.body
    );
    assert_eq!(
        state_of(&c.db, f.unsupported).await,
        "FAILED",
        "confirming changes nothing"
    );
    // Without a reason the confirmation comes back.
    let a = c
        .post(
            "/actions/replay",
            Some(&s),
            &[
                ("csrf", &csrf),
                ("step", "apply"),
                ("ids", &id),
                ("reason", " "),
            ],
        )
        .await;
    assert!(a.body.contains("id=\"confirm-error\""), "{}", a.body);
    assert_eq!(state_of(&c.db, f.unsupported).await, "FAILED");
    // Step 2: applied, as `msgx replay` does, with alice as the actor.
    let a = c
        .post(
            "/actions/replay",
            Some(&s),
            &[
                ("csrf", &csrf),
                ("step", "apply"),
                ("ids", &id),
                ("reason", "codec fixed"),
            ],
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.body.contains("id=\"result\" class=\"ok\""), "{}", a.body);
    assert_eq!(state_of(&c.db, f.unsupported).await, "PENDING");
    let recorded = common::queries::backfill_actions(&c.db).await;
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(
        (
            recorded[0].0.as_str(),
            recorded[0].1.as_str(),
            recorded[0].2.as_str(),
            recorded[0].3.as_deref()
        ),
        ("alice", "REPLAY", id.as_str(), Some("codec fixed"))
    );
    // MALFORMED replays only when forced.
    let m = f.malformed.to_string();
    let a = c
        .post(
            "/actions/replay",
            Some(&s),
            &[("csrf", &csrf), ("step", "confirm"), ("ids", &m)],
        )
        .await;
    assert!(
        a.body.contains("replays only with --force") && a.body.contains("id=\"confirm-force\""),
        "{}",
        a.body
    );

    // Resend a DEAD event: recorded in operator_action with alice.
    let e = f.dead_event.to_string();
    let a = c
        .post(
            "/actions/event-resend",
            Some(&s),
            &[("csrf", &csrf), ("step", "confirm"), ("ids", &e)],
        )
        .await;
    assert!(a.body.contains("id=\"confirm-form\""), "{}", a.body);
    let a = c
        .post(
            "/actions/event-resend",
            Some(&s),
            &[
                ("csrf", &csrf),
                ("step", "apply"),
                ("ids", &e),
                ("reason", "ACL fixed"),
            ],
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let status: String = sqlx::query_scalar("SELECT status FROM msg_event WHERE event_id = $1")
        .bind(f.dead_event)
        .fetch_one(&c.db.pool)
        .await
        .expect("event");
    assert_eq!(status, "PENDING");
    let (actor, action, target, reason): (String, String, String, Option<String>) = sqlx::query_as(
        "SELECT actor, action, target, reason FROM operator_action \
             WHERE action = 'EVENT_RESEND' ORDER BY id",
    )
    .fetch_one(&c.db.pool)
    .await
    .expect("operator_action");
    assert_eq!(
        (actor.as_str(), action.as_str(), target, reason.as_deref()),
        (
            "alice",
            "EVENT_RESEND",
            format!("msg_event:{e}"),
            Some("ACL fixed")
        )
    );
    // The replay is in the same audit trail, with the user.
    let replay: (String, String, Option<String>) =
        sqlx::query_as("SELECT actor, target, reason FROM operator_action WHERE action = 'REPLAY'")
            .fetch_one(&c.db.pool)
            .await
            .expect("the replay in operator_action");
    assert_eq!(
        (replay.0.as_str(), replay.1, replay.2.as_deref()),
        ("alice", format!("proc_state:{id}"), Some("codec fixed"))
    );
}

#[tokio::test]
async fn replay_all_matching_shows_the_count_and_refuses_a_changed_set() {
    let c = Console::start(|_| {}).await;
    let f = c.fill().await;
    let (s, csrf) = c.login(ALICE).await;
    let filter = [
        ("csrf", csrf.as_str()),
        ("class", "UNSUPPORTED"),
        ("state", "FAILED"),
    ];
    let mut confirm = filter.to_vec();
    confirm.push(("step", "confirm"));
    let a = c.post("/actions/replay-filter", Some(&s), &confirm).await;
    assert!(a.body.contains("id=\"confirm-count\">1<"), "{}", a.body);
    assert_eq!(hidden(&a.body, "expected").as_deref(), Some("1"));
    let mut stale = filter.to_vec();
    stale.extend([("step", "apply"), ("reason", "bulk"), ("expected", "5")]);
    let a = c.post("/actions/replay-filter", Some(&s), &stale).await;
    assert!(a.body.contains("changed from 5 to 1"), "{}", a.body);
    assert_eq!(state_of(&c.db, f.unsupported).await, "FAILED");
    let mut apply = filter.to_vec();
    apply.extend([("step", "apply"), ("reason", "bulk"), ("expected", "1")]);
    let a = c.post("/actions/replay-filter", Some(&s), &apply).await;
    assert!(a.body.contains("replayed 1 message(s)"), "{}", a.body);
    assert_eq!(state_of(&c.db, f.unsupported).await, "PENDING");
}

/// A confirmation POST of `action` with `ids` by the bearer `token`.
async fn confirm_as(c: &Console, token: &str, action: &str, ids: &str) -> Answer {
    let bearer = format!("Bearer {token}");
    let body = form(&[("step", "confirm"), ("ids", ids), ("job", "retention")]);
    let path = format!("/actions/{action}");
    request(c.addr, "POST", &path, &[("Authorization", &bearer)], &body).await
}

/// An applying POST of `action` (`step=apply`, `ids`, `reason`) by the
/// bearer `token`.
async fn apply_as(c: &Console, token: &str, action: &str, ids: &str, reason: &str) -> Answer {
    let bearer = format!("Bearer {token}");
    let body = form(&[("step", "apply"), ("ids", ids), ("reason", reason)]);
    let path = format!("/actions/{action}");
    request(c.addr, "POST", &path, &[("Authorization", &bearer)], &body).await
}

/// Issue 37 item 2: a viewer, an operator and an admin each tried on each
/// action class over HTTP (bearer tokens: the refusal is JSON naming the
/// missing right); more than 100 items need the `bulk` right.
#[tokio::test]
async fn each_role_is_refused_exactly_the_actions_it_has_no_right_to() {
    let c = Console::start(|_| {}).await;
    let (logs, _guard) = common::capture_logs();
    let many = (1..=101)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    // (action, ids, its right, operator may, admin may); a viewer may none.
    // An operator refused on more than 100 ids lacks `bulk`.
    let table = [
        ("replay", "1", "replay", true, true),
        ("skip", "1", "skip", true, true),
        ("event-resend", "1", "resend", true, true),
        ("event-discard", "1", "discard", true, true),
        ("backfill-reopen", "1", "reopen", true, true),
        ("backfill-reconcile", "1", "reconcile", true, true),
        ("request", "", "request", true, true),
        ("job-run", "", "run-job", true, true),
        ("republish", "1", "republish", false, true),
        ("replay", many.as_str(), "replay", false, true),
        ("skip", many.as_str(), "skip", false, true),
    ];
    for (action, ids, right, operator, admin) in table {
        for (token, role, may) in [
            (VIEWER_TOKEN, "viewer", false),
            (OPERATOR_TOKEN, "operator", operator),
            (ADMIN_TOKEN, "admin", admin),
        ] {
            let a = confirm_as(&c, token, action, ids).await;
            let what = format!("{role} on {action} ({} ids): {a:?}", ids.split(',').count());
            if may {
                assert_ne!(a.status, 403, "{what}");
                continue;
            }
            assert_eq!(a.status, 403, "{what}");
            assert_eq!(a.header("content-type"), Some("application/json"), "{what}");
            let body: serde_json::Value = serde_json::from_str(&a.body).expect("JSON");
            let bulk = role != "viewer" && ids.split(',').count() > 100;
            let missing = if bulk { "bulk" } else { right };
            assert_eq!(body["missing_right"], missing, "{what}");
            assert_eq!(body["role"], role, "{what}");
        }
    }
    let text = logs.text();
    let refused = lines_with(&text, "Console: action refused, missing right");
    assert_eq!(refused.len(), 11 + 3, "each refusal is logged: {text}");
    assert!(
        refused
            .iter()
            .any(|l| l.contains("user=dashboard") && l.contains("role=\"viewer\"")),
        "{text}"
    );
}

/// `[msgx.console.rights]` widens a role (viewers may send upstream
/// requests) and tightens one (operators may no longer skip); the pages
/// offer the forms accordingly.
#[tokio::test]
async fn the_rights_config_widens_and_tightens_a_role() {
    use msgx::config::Right;
    let c = Console::start(|c| {
        c.msgx.console.rights.viewer = Some(vec![Right::Request]);
        c.msgx.console.rights.operator = Some(vec![Right::Replay, Right::Resend]);
    })
    .await;
    let a = confirm_as(&c, VIEWER_TOKEN, "request", "").await;
    assert_ne!(a.status, 403, "widened: {a:?}");
    let a = confirm_as(&c, VIEWER_TOKEN, "replay", "1").await;
    assert_eq!(a.status, 403, "{a:?}");
    let a = confirm_as(&c, OPERATOR_TOKEN, "skip", "1").await;
    assert_eq!(a.status, 403, "tightened: {a:?}");
    assert!(a.body.contains("\"missing_right\":\"skip\""), "{}", a.body);
    let a = confirm_as(&c, OPERATOR_TOKEN, "replay", "1").await;
    assert_ne!(a.status, 403, "kept: {a:?}");
    let (viewer, _) = c.login(VICTOR).await;
    let page = c.get("/requests", Some(&viewer)).await;
    assert!(page.body.contains("id=\"request-form\""), "{}", page.body);
}

#[tokio::test]
async fn an_operator_token_acts_without_a_csrf_token() {
    let c = Console::start(|_| {}).await;
    let f = c.fill().await;
    let e = f.dead_event.to_string();
    let a = apply_as(&c, OPERATOR_TOKEN, "event-discard", &e, "script").await;
    assert_eq!(a.status, 200, "{a:?}");
    let actor: String =
        sqlx::query_scalar("SELECT actor FROM operator_action WHERE action = 'EVENT_DISCARD'")
            .fetch_one(&c.db.pool)
            .await
            .expect("recorded");
    assert_eq!(actor, "ops-script");
}

#[tokio::test]
async fn run_now_runs_the_job_as_msgx_run_does() {
    let c = Console::start(|_| {}).await;
    c.mailbox.insert(&sis::schd_one_flight(1, 9001)).await;
    let (viewer, _) = c.login(VICTOR).await;
    let a = c.get("/jobs", Some(&viewer)).await;
    assert!(
        a.body.contains("id=\"table-jobs\"") && !a.body.contains("run-now-"),
        "{}",
        a.body
    );
    let (s, csrf) = c.login(ALICE).await;
    let a = c.get("/jobs", Some(&s)).await;
    assert!(a.body.contains("id=\"run-now-ingest-sweep\""), "{}", a.body);
    let confirm = [
        ("csrf", csrf.as_str()),
        ("step", "confirm"),
        ("job", "ingest-sweep"),
    ];
    let a = c.post("/actions/job-run", Some(&s), &confirm).await;
    assert!(a.body.contains("id=\"confirm-form\""), "{}", a.body);
    let apply = [
        ("csrf", csrf.as_str()),
        ("step", "apply"),
        ("job", "ingest-sweep"),
        ("reason", "catch up"),
    ];
    let a = c.post("/actions/job-run", Some(&s), &apply).await;
    assert!(
        a.body
            .contains("ingest-sweep: Succeeded, handled 1 item(s)"),
        "{}",
        a.body
    );
    let (trigger, instance): (String, String) =
        sqlx::query_as("SELECT trigger, instance FROM job_run WHERE job = 'ingest-sweep'")
            .fetch_one(&c.db.pool)
            .await
            .expect("a JOB_RUN row");
    assert_eq!(
        (trigger.as_str(), instance.as_str()),
        ("cli", "console-test")
    );
}

#[tokio::test]
async fn an_upstream_request_is_confirmed_then_sent_and_tracked() {
    let c = Console::start(|_| {}).await;
    let (s, csrf) = c.login(ALICE).await;
    let a = c.get("/requests", Some(&s)).await;
    assert!(a.body.contains("id=\"request-form\""), "{}", a.body);
    let confirm = [
        ("csrf", csrf.as_str()),
        ("step", "confirm"),
        ("rtype", "glst"),
    ];
    let a = c.post("/actions/request", Some(&s), &confirm).await;
    assert!(
        a.body.contains("RQRD:GLST") && a.body.contains("id=\"confirm-form\""),
        "{}",
        a.body
    );
    let apply = [
        ("csrf", csrf.as_str()),
        ("step", "apply"),
        ("rtype", "GLST"),
        ("reason", "gates changed"),
    ];
    let a = c.post("/actions/request", Some(&s), &apply).await;
    assert!(a.body.contains("id=\"result\" class=\"ok\""), "{}", a.body);
    let (req_type, state): (String, String) =
        sqlx::query_as("SELECT req_type, state FROM req_track")
            .fetch_one(&c.db.pool)
            .await
            .expect("tracked");
    assert_eq!((req_type.as_str(), state.as_str()), ("RQRD:GLST", "SENT"));
    let a = c.get("/requests", Some(&s)).await;
    assert!(a.body.contains("RQRD:GLST"), "{}", a.body);
    let (actor, target, reason): (String, String, Option<String>) = sqlx::query_as(
        "SELECT actor, target, reason FROM operator_action WHERE action = 'REQUEST_SEND'",
    )
    .fetch_one(&c.db.pool)
    .await
    .expect("the request in operator_action");
    assert_eq!(actor, "alice");
    assert!(target.starts_with("req_track:"), "{target}");
    assert_eq!(reason.as_deref(), Some("gates changed"));
}

#[tokio::test]
async fn paging_by_state_reads_an_index_on_a_large_proc_state() {
    let db = TestDb::migrated().await;
    sqlx::query(
        "INSERT INTO proc_state (msg_id, state, msg_type, msg_styp, enqueued_at, updated_at, error_class) \
         SELECT g, CASE WHEN g % 100 = 0 THEN 'DEAD' ELSE 'SUCCEEDED' END, 'FLOP', 'APPT', now(), now(), \
                CASE WHEN g % 100 = 0 THEN 'MALFORMED' END \
         FROM generate_series(1, 200000) g",
    )
    .execute(&db.pool)
    .await
    .expect("rows");
    sqlx::query("ANALYZE proc_state")
        .execute(&db.pool)
        .await
        .expect("analyze");
    let q = msgx::store::pg::message_search::MessageQuery {
        state: Some(msgx::domain::ProcState::Dead),
        ..Default::default()
    };
    let plan = msgx::store::pg::message_search::page_plan(&db.pool, &q, Some(150_000), 50)
        .await
        .expect("plan")
        .join("\n");
    assert!(plan.contains("proc_state_state_msg_idx"), "{plan}");
    assert!(!plan.contains("Seq Scan"), "{plan}");
    let rows = msgx::store::pg::message_search::page(&db.pool, &q, Some(150_000), 50)
        .await
        .expect("page");
    assert_eq!(rows.first().map(|r| r.msg_id), Some(149_900));
    assert_eq!(rows.len(), 50);
    // Issue 32 item 1: a reason text reads the trigram indexes (migration 0017).
    let q = msgx::store::pg::message_search::MessageQuery {
        text: Some("no flight 4711 in the season".into()),
        ..Default::default()
    };
    let plan = msgx::store::pg::message_search::page_plan(&db.pool, &q, None, 50)
        .await
        .expect("plan")
        .join("\n");
    assert!(plan.contains("proc_state_last_error_trgm_idx"), "{plan}");
    assert!(
        plan.contains("proc_state_outcome_reason_trgm_idx"),
        "{plan}"
    );
}

#[tokio::test]
async fn a_non_loopback_console_without_users_refuses_to_start() {
    let db = TestDb::migrated().await;
    let cfg = db.config_file_with(|c| c.msgx.console.listen = Some("0.0.0.0:0".into()));
    let out = msgx(cfg.path(), &["console"]);
    assert_eq!(common::code(&out), 2, "{}", common::text(&out));
    assert!(
        common::text(&out).contains("msgx.console.users-file"),
        "{}",
        common::text(&out)
    );
    // The check holds in the library too (a caller that skipped validation).
    let config = Arc::new(db.config());
    let mailbox = msgx::store::mailbox::Mailbox::new(&config.msgx.mailbox).expect("mailbox");
    let (_, clock) = manual_clock();
    let refused =
        msgx::console::bind("0.0.0.0:0", config, db.pool.clone(), mailbox, clock, None).await;
    assert!(matches!(
        refused,
        Err(msgx::console::ConsoleError::NoUsers(_))
    ));
}

/// The address the daemon logged for its console (it binds port 0), once
/// it listens.
async fn daemon_console(d: &common::Daemon) -> SocketAddr {
    let address = || {
        let log = d.output();
        let line = log
            .lines()
            .find(|l| l.contains("Operator console listening"))?
            .to_string();
        let at = line.find("listen=")? + "listen=".len();
        line[at..]
            .split_whitespace()
            .next()?
            .parse::<SocketAddr>()
            .ok()
    };
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        if let Some(addr) = address() {
            return addr;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the daemon logged no console address; its log:\n{}",
        d.output()
    )
}

#[tokio::test]
async fn the_daemon_serves_the_console_when_listen_is_set() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.console.listen = Some("127.0.0.1:0".into());
        c.msgx.console.anonymous_viewer = true;
    });
    let d = common::Daemon::spawn(cfg.path(), &[]);
    let addr = daemon_console(&d).await;
    // No users file on loopback, asked for by name (anonymous-viewer): an
    // anonymous viewer, every page, no action.
    let a = request(addr, "GET", "/", &[], "").await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.body
            .contains("id=\"current-role\" class=\"role\">viewer<"),
        "{}",
        a.body
    );
    let a = request(
        addr,
        "POST",
        "/actions/replay",
        &[],
        "step=apply&ids=1&reason=x",
    )
    .await;
    assert_eq!(a.status, 403, "{a:?}");
    // Issue 32 item 1 (H1): the pages used the console's own pool, not the
    // jobs' (a viewer's costly query could starve the pipeline).
    let console_sessions: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
    )
    .bind(msgx::store::pg::CONSOLE_APPLICATION)
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert!(
        console_sessions >= 1,
        "no '{}' session",
        msgx::store::pg::CONSOLE_APPLICATION
    );
    d.terminate();
}

/// `msgx console hash-password` with `input` on standard input.
fn hash_password_of(input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(common::msgx_bin())
        .args(["console", "hash-password"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    child.wait_with_output().expect("output")
}

#[tokio::test]
async fn hash_password_prints_an_argon2_hash_of_standard_input() {
    let out = hash_password_of("s3cret pass for the console\n");
    assert!(out.status.success());
    let hash = String::from_utf8(out.stdout).expect("utf8");
    let hash = hash.trim();
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    let file = tempfile::NamedTempFile::new().expect("tmp");
    std::fs::write(
        file.path(),
        format!("[[user]]\nname = \"a\"\nrole = \"viewer\"\npassword-hash = \"{hash}\"\n"),
    )
    .expect("write");
    let users = msgx::console::access::Users::load(file.path()).expect("loads");
    assert!(
        users
            .verify_password("a", "s3cret pass for the console")
            .is_some()
    );
}

// ------------------------------------------------------------ in a browser --

/// Issue 21 item 4: the console in headless Chromium (tests/it/common/browser.rs)
/// on a database filled by a real drain: every page loads after a login
/// through the form; a viewer is shown no action and is refused one even with
/// its own CSRF token; an operator's action without the token is refused; a
/// filter narrows the messages; a replay and a resend done by clicking
/// through the confirmation are applied and recorded with the user.
#[tokio::test]
async fn in_a_browser_an_operator_filters_replays_and_resends_and_a_viewer_cannot() {
    let Some(b) = common::browser::Browser::start().await else {
        return;
    };
    let c = Console::start(|_| {}).await;
    let f = c.fill().await;
    let base = format!("http://{}", c.addr);
    let log_in = |(user, password): (&'static str, &'static str)| {
        let b = &b;
        let base = base.clone();
        async move {
            b.clear_cookies().await;
            b.goto(&format!("{base}/login")).await;
            b.fill("login-user", user).await;
            b.fill("login-password", password).await;
            b.click("login-submit").await;
            b.wait_for("#page-overview").await;
            assert!(
                b.cookie("msgx_console").await.is_some(),
                "{user} has a session"
            );
        }
    };
    // A page asked for without a session shows the login form.
    b.goto(&format!("{base}/messages")).await;
    b.wait_for("#page-login").await;

    // The viewer: every page, no action, and an action posted anyway is refused.
    log_in(VICTOR).await;
    for (path, id) in f.read_pages([f.unsupported]) {
        b.goto(&format!("{base}{path}")).await;
        b.wait_for(&format!("#{id}")).await;
    }
    b.goto(&format!("{base}/messages/{}", f.unsupported)).await;
    b.wait_for("#page-message").await;
    // Its trace context, as its Kafka records and log lines carry it.
    let trace: Option<String> =
        sqlx::query_scalar("SELECT traceparent FROM proc_state WHERE msg_id = $1")
            .bind(f.unsupported)
            .fetch_one(&c.db.pool)
            .await
            .expect("proc_state");
    let trace = trace.expect("ingest gave the message a trace context");
    assert!(
        b.text_of("#fact-traceparent").await.contains(&trace),
        "the detail shows {trace}"
    );
    let none = std::time::Duration::from_millis(300);
    assert!(
        b.wait_for_within("#replay-form", none).await.is_none(),
        "a viewer is shown no replay form"
    );
    let viewer_csrf = b.csrf().await;
    assert!(!viewer_csrf.is_empty(), "the logout form carries the token");
    let id = f.unsupported.to_string();
    b.post_form(
        "/actions/replay",
        &[
            ("csrf", &viewer_csrf),
            ("step", "apply"),
            ("ids", &id),
            ("reason", "viewer tries"),
        ],
    )
    .await;
    assert_eq!(
        b.text_of("#missing-right").await,
        "replay",
        "a viewer's action is refused, naming the right"
    );
    assert_eq!(state_of(&c.db, f.unsupported).await, "FAILED");

    // The operator.
    log_in(ALICE).await;
    // An action without the CSRF token is refused.
    b.goto(&format!("{base}/messages/{}", f.unsupported)).await;
    b.wait_for("#replay-form").await;
    b.post_form(
        "/actions/replay",
        &[("step", "apply"), ("ids", &id), ("reason", "no token")],
    )
    .await;
    assert!(b.text_of("body").await.contains("refused"));
    assert_eq!(state_of(&c.db, f.unsupported).await, "FAILED");

    // A filter: DEAD messages only.
    b.goto(&format!("{base}/messages")).await;
    b.wait_for("#filter-form").await;
    b.client()
        .find(fantoccini::Locator::Id("filter-state"))
        .await
        .expect("the state filter")
        .select_by_value("DEAD")
        .await
        .expect("choose DEAD");
    b.click("filter-submit").await;
    b.wait_for_url(|u| u.contains("state=DEAD")).await;
    b.wait_for(&format!("#message-{}", f.malformed)).await;
    for other in [f.schd, f.unsupported] {
        assert!(
            b.wait_for_within(&format!("#message-{other}"), none)
                .await
                .is_none(),
            "message {other} is not DEAD"
        );
    }

    // Replay through the confirmation page.
    b.goto(&format!("{base}/messages/{}", f.unsupported)).await;
    b.click("replay-submit").await;
    b.wait_for("#page-confirm").await;
    assert_eq!(state_of(&c.db, f.unsupported).await, "FAILED", "not yet");
    b.fill("confirm-reason", "codec fixed").await;
    b.click("confirm-submit").await;
    b.wait_for("#result.ok").await;
    assert_eq!(state_of(&c.db, f.unsupported).await, "PENDING");
    let recorded = common::queries::backfill_actions(&c.db).await;
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(
        (
            recorded[0].0.as_str(),
            recorded[0].1.as_str(),
            recorded[0].3.as_deref()
        ),
        ("alice", "REPLAY", Some("codec fixed"))
    );

    // Resend a DEAD event from the Outbox DLQ page.
    let e = f.dead_event;
    b.goto(&format!("{base}/events/dead")).await;
    b.click(&format!("resend-{e}-submit")).await;
    b.wait_for("#page-confirm").await;
    b.fill("confirm-reason", "ACL fixed").await;
    b.click("confirm-submit").await;
    b.wait_for("#result.ok").await;
    let status: String = sqlx::query_scalar("SELECT status FROM msg_event WHERE event_id = $1")
        .bind(e)
        .fetch_one(&c.db.pool)
        .await
        .expect("event");
    assert_eq!(status, "PENDING");
    let (actor, action, reason): (String, String, Option<String>) = sqlx::query_as(
        "SELECT actor, action, reason FROM operator_action WHERE target = $1 ORDER BY id DESC",
    )
    .bind(format!("msg_event:{e}"))
    .fetch_one(&c.db.pool)
    .await
    .expect("operator_action");
    assert_eq!(
        (actor.as_str(), action.as_str(), reason.as_deref()),
        ("alice", "EVENT_RESEND", Some("ACL fixed"))
    );
}

/// Issue 32 item 1 (H1), the acceptance: ten concurrent worst-case reason-text
/// searches (200 characters whose every prefix matches) on 200,000 PROC_STATE
/// rows while the daemon drains 500 messages. The searches are served by
/// the trigram indexes (migration 0017) within the console's bounds; none
/// fails a pipeline run, `/readyz` stays 200, and an over-long text is 400.
/// Before the indexes each search matched every row's text character by
/// character (1.6 s alone on an idle machine): four of them filled the
/// console's pool and the rest answered 503.
#[tokio::test]
async fn worst_case_text_searches_while_the_daemon_drains_stop_nothing() {
    let (db, mb, kafka) = (
        TestDb::migrated().await,
        TestMailbox::new().await,
        mock_kafka(1),
    );
    sqlx::query(
        "INSERT INTO proc_state (msg_id, state, msg_type, msg_styp, error_class, attempts, \
                last_error, enqueued_at, updated_at, finished_at, backfill_at) \
         SELECT 10000000 + g, 'DEAD', 'FLOP', 'APPT', 'EXHAUSTED', 3, \
                'SQLSTATE 22001: value too long for type character varying(16): ' \
                || repeat('a', 150) || g, now(), now(), now(), now() \
         FROM generate_series(1, 200000) g",
    )
    .execute(&db.pool)
    .await
    .expect("rows");
    sqlx::query("ANALYZE proc_state")
        .execute(&db.pool)
        .await
        .expect("analyze");
    let users = users_file();
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        fast_kafka(c, &kafka.bootstrap_servers());
        c.msgx.console.listen = Some("127.0.0.1:0".into());
        c.msgx.console.users_file = Some(users.path().to_path_buf());
        c.msgx.http.metrics_listen = Some("127.0.0.1:0".into());
    });
    let d = common::Daemon::spawn(cfg.path(), &[]);
    let console = daemon_console(&d).await;
    common::wait_until(
        "the ops endpoints",
        std::time::Duration::from_secs(20),
        || async { d.ops_address().is_some() },
    )
    .await;
    let ops = d.ops_address().expect("ops address");
    // A first message moves W, so readiness judges a running feed.
    let first = mb.insert(&sis::schd_one_flight(1, 700_000)).await;
    common::wait_until(
        "the daemon to be ready",
        std::time::Duration::from_secs(30),
        || async {
            common::queries::state_of(&db, first).await.as_deref() == Some("SUCCEEDED")
                && common::http(ops, "GET", "/readyz", "").await.0 == 200
        },
    )
    .await;

    let messages: Vec<String> = (2..=501)
        .map(|i| {
            let xml = sis::schd_one_flight(i, 700_000 + i64::from(i));
            assert!(!xml.contains('\''), "{xml}");
            format!("('{xml}', NOW(), 'VALID')")
        })
        .collect();
    mb.exec(&format!(
        "INSERT INTO cminmsgs (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS) VALUES {}",
        messages.join(",")
    ))
    .await;

    let bearer = format!("Bearer {VIEWER_TOKEN}");
    let worst = format!("/messages?text={}b", "a".repeat(199));
    let mut searches = tokio::task::JoinSet::new();
    for _ in 0..10 {
        let (path, auth) = (worst.clone(), bearer.clone());
        searches.spawn(async move {
            request(
                console,
                "GET",
                &path,
                &[("Authorization", auth.as_str())],
                "",
            )
            .await
        });
    }
    let over_long = format!("/messages?text={}", "a".repeat(201));
    let refused = request(
        console,
        "GET",
        &over_long,
        &[("Authorization", &bearer)],
        "",
    )
    .await;
    assert_eq!(refused.status, 400, "{refused:?}");
    let mut ready = Vec::new();
    while !searches.is_empty() {
        ready.push(common::http(ops, "GET", "/readyz", "").await);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        if let Some(done) = searches.try_join_next() {
            let a = done.expect("search task");
            assert_eq!(
                a.status,
                200,
                "a search was not served within the console's bounds: {}",
                a.body.chars().take(2000).collect::<String>()
            );
            assert!(
                a.body.contains("no message matches the filter"),
                "{}",
                a.body
            );
        }
    }
    for (status, body) in &ready {
        assert_eq!(*status, 200, "/readyz during the searches: {body}");
    }

    common::wait_until(
        "the 501 messages drained",
        std::time::Duration::from_secs(120),
        || async {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM proc_state WHERE state = 'SUCCEEDED' AND msg_id <= 501",
            )
            .fetch_one(&db.pool)
            .await
            .unwrap()
                == 501
        },
    )
    .await;
    let failed: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT job, error FROM job_run WHERE outcome IN ('FAILED', 'ABORTED')")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert!(failed.is_empty(), "failed runs: {failed:?}");
    d.terminate();
}

/// Issue 32 item 3 in a browser: a viewer opens the page of a large message
/// and sees a cut preview and a download link; the browser fetches the whole
/// text through the link with its session, and the next records link pages.
#[tokio::test]
async fn in_a_browser_a_large_message_shows_a_cut_preview_and_downloads_whole() {
    let Some(b) = common::browser::Browser::start().await else {
        return;
    };
    let c = Console::start(|_| {}).await;
    let xml = sis::large_schd(1_000);
    let id = c.mailbox.insert(&xml).await;
    let base = format!("http://{}", c.addr);
    b.goto(&format!("{base}/login")).await;
    b.fill("login-user", VICTOR.0).await;
    b.fill("login-password", VICTOR.1).await;
    b.click("login-submit").await;
    b.wait_for("#page-overview").await;

    b.goto(&format!("{base}/messages/{id}")).await;
    let cut = b.text_of("#raw-cut").await;
    assert!(cut.contains(&format!(" of {} bytes", xml.len())), "{cut}");
    let link = b.wait_for("#raw-download").await;
    let href = link.attr("href").await.expect("the link's href");
    assert_eq!(
        href.as_deref(),
        Some(format!("/messages/{id}/raw").as_str())
    );
    let fetch = "return fetch(arguments[0]).then(r => r.text().then(t => \
                 [r.status, r.headers.get('content-disposition'), t]));";
    let got = b
        .client()
        .execute(fetch, vec![href.unwrap_or_default().into()])
        .await
        .expect("fetch the download");
    assert_eq!(got[0], 200, "{}", got[0]);
    assert_eq!(got[1], format!("attachment; filename=\"message-{id}.xml\""));
    assert!(got[2] == xml.as_str(), "the whole text, byte for byte");
    assert_eq!(
        b.text_of("#decoded-records").await,
        "Records 1–200 of 1000 (page 1)."
    );
    b.click("decoded-next").await;
    b.wait_for_url(|u| u.ends_with("?page=2")).await;
    assert_eq!(
        b.text_of("#decoded-records").await,
        "Records 201–400 of 1000 (page 2)."
    );
}

/// Issue 32 item 6 in a browser: the login form carries its CSRF token,
/// equal to its cookie; a form posted once that cookie is gone (expired, or
/// a page of another site posting it) is refused with "log in again" and a
/// fresh form, which then logs in; the pages (the bounded message page
/// among them) reach the browser with the security headers.
#[tokio::test]
async fn in_a_browser_the_login_form_carries_its_token_and_pages_their_security_headers() {
    let Some(b) = common::browser::Browser::start().await else {
        return;
    };
    let c = Console::start(|_| {}).await;
    let id = c.mailbox.insert(&sis::large_schd(300)).await;
    let base = format!("http://{}", c.addr);
    b.goto(&format!("{base}/login")).await;
    let token = b
        .client()
        .execute(
            "return document.querySelector('#login-form input[name=csrf]').value;",
            vec![],
        )
        .await
        .expect("read the form's token");
    let token = token.as_str().unwrap_or_default().to_string();
    assert_eq!(token.len(), 64, "{token}");
    let cookie = b.cookie("msgx_login").await.expect("the form's cookie");
    assert_eq!(cookie.value(), token);

    b.clear_cookies().await;
    b.fill("login-user", VICTOR.0).await;
    b.fill("login-password", VICTOR.1).await;
    b.click("login-submit").await;
    let error = b.text_of("#login-error").await;
    assert!(error.contains("log in again"), "{error}");
    assert!(b.cookie("msgx_console").await.is_none(), "no session");
    b.fill("login-user", VICTOR.0).await;
    b.fill("login-password", VICTOR.1).await;
    b.click("login-submit").await;
    b.wait_for("#page-overview").await;

    let fetch = "return fetch(arguments[0]).then(r => [r.status, \
                 r.headers.get('content-security-policy'), r.headers.get('x-content-type-options'), \
                 r.headers.get('referrer-policy'), r.headers.get('cache-control')]);";
    for path in ["/".to_string(), format!("/messages/{id}"), "/login".into()] {
        let got = b
            .client()
            .execute(fetch, vec![path.clone().into()])
            .await
            .expect("fetch");
        assert_eq!(got[0], 200, "{path}: {got}");
        assert_eq!(
            got[1], "default-src 'self'; frame-ancestors 'none'",
            "{path}"
        );
        assert_eq!(got[2], "nosniff", "{path}");
        assert_eq!(got[3], "no-referrer", "{path}");
        assert_eq!(got[4], "no-store", "{path}");
    }
    b.goto(&format!("{base}/messages/{id}")).await;
    b.wait_for("#page-message").await;
}

// ------------------------------------------- browser-facing defaults (32) --

/// A GET of `path` naming `host` in its `Host` header.
async fn get_as_host(addr: SocketAddr, host: &str, path: &str) -> Answer {
    let mut s = common::connect_from(ip("127.0.0.1"), addr).await;
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.expect("read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        headers: BTreeMap::new(),
        body: text,
    }
}

/// Issue 32 item 6 (M4): a page of another site whose name resolves to the
/// console's address (DNS rebinding) is refused before anything runs; the
/// listen address and `localhost` are answered, and a configured host list
/// replaces `localhost`.
#[tokio::test]
async fn the_console_answers_only_to_its_own_host_names() {
    let c = Console::start(|_| {}).await;
    let port = c.addr.port();
    for host in [
        format!("localhost:{port}"),
        "LOCALHOST".to_string(),
        format!("127.0.0.1:{port}"),
    ] {
        let a = get_as_host(c.addr, &host, "/login").await;
        assert_eq!(a.status, 200, "{host}: {}", a.body);
    }
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        "localhost.evil.example".to_string(),
        format!("127.0.0.2:{port}"),
    ] {
        let a = get_as_host(c.addr, &host, "/login").await;
        assert_eq!(a.status, 421, "{host}: {}", a.body);
        assert!(!a.body.contains("login-form"), "{host}: {}", a.body);
    }
    // A raw message is not readable through a rebinding name either.
    let a = get_as_host(c.addr, "evil.example", "/messages/1/raw").await;
    assert_eq!(a.status, 421, "{}", a.body);

    let named = Console::start(|c| {
        c.msgx.console.allowed_hosts = vec!["msgx.airport.example".into()];
    })
    .await;
    let a = get_as_host(named.addr, "msgx.airport.example:443", "/login").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = get_as_host(named.addr, "localhost", "/login").await;
    assert_eq!(a.status, 421, "the configured list replaces localhost");
}

/// Issue 32 item 6 (L1): every answer carries the CSP, nosniff and
/// Referrer-Policy headers, and `Cache-Control: no-store` unless it set its
/// own (the stylesheet).
#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let c = Console::start(|_| {}).await;
    let (session, _) = c.login(ALICE).await;
    let answers = [
        ("/login", c.get("/login", None).await),
        ("/ without session", c.get("/", None).await),
        ("/", c.get("/", Some(&session)).await),
        ("/messages", c.get("/messages", Some(&session)).await),
        ("/nowhere", c.get("/nowhere", Some(&session)).await),
        ("POST /actions", c.post("/actions/replay", None, &[]).await),
        (
            "/assets/console.css",
            c.get("/assets/console.css", None).await,
        ),
    ];
    for (what, a) in &answers {
        assert_eq!(
            a.header("content-security-policy"),
            Some("default-src 'self'; frame-ancestors 'none'"),
            "{what}: {a:?}"
        );
        assert_eq!(
            a.header("x-content-type-options"),
            Some("nosniff"),
            "{what}"
        );
        assert_eq!(a.header("referrer-policy"), Some("no-referrer"), "{what}");
        let cache = a.header("cache-control");
        if *what == "/assets/console.css" {
            assert_eq!(cache, Some("max-age=3600"), "{what}");
        } else {
            assert_eq!(cache, Some("no-store"), "{what}: {a:?}");
        }
    }
}

/// Issue 32 item 6 (L8): the login form carries a CSRF token, equal to its
/// cookie's; a login POST without it, or with another, is refused before
/// the password is looked at (a page of another site cannot log a browser
/// in as its own user). The token of a real form works.
#[tokio::test]
async fn a_login_needs_the_token_of_its_form() {
    let c = Console::start(|_| {}).await;
    let body = form(&[("user", ALICE.0), ("password", ALICE.1)]);
    // No token at all (the old form), and a token without its cookie.
    let none = [("Cookie", "x=1")];
    let with_field = format!("{body}&csrf=guessed");
    for (headers, body) in [(&none[..], body.as_str()), (&[][..], with_field.as_str())] {
        let mut s = common::connect_from(ip("127.0.0.1"), c.addr).await;
        let mut req =
            "POST /login HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n".to_string();
        for (k, v) in headers {
            req += &format!("{k}: {v}\r\n");
        }
        req += &format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await.expect("write");
        let mut raw = String::new();
        s.read_to_string(&mut raw).await.expect("read");
        assert!(raw.starts_with("HTTP/1.1 403"), "{raw}");
        assert!(!raw.contains("msgx_console="), "no session: {raw}");
        assert!(raw.contains("log in again"), "{raw}");
    }
    // A token and a cookie that differ.
    let other = [("Cookie", "msgx_login=one")];
    let a = request(
        c.addr,
        "POST",
        "/login",
        &other,
        &format!("{body}&csrf=two"),
    )
    .await;
    assert_eq!(a.status, 403, "{a:?}");
    // The form's own token and cookie.
    let f = c.get("/login", None).await;
    let token = hidden(&f.body, "csrf").expect("the login form carries a token");
    assert_eq!(token.len(), 64, "{token}");
    let cookie = f
        .headers
        .get("set-cookie")
        .and_then(|v| v.iter().find(|c| c.starts_with("msgx_login=")))
        .expect("the form's cookie")
        .clone();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(attr), "{attr}: {cookie}");
    }
    let pair = cookie.split(';').next().unwrap_or_default().to_string();
    assert_eq!(pair, format!("msgx_login={token}"));
    let a = request(
        c.addr,
        "POST",
        "/login",
        &[("Cookie", pair.as_str())],
        &format!("{body}&csrf={token}"),
    )
    .await;
    assert_eq!(a.status, 303, "{a:?}");
    assert!(
        a.header("set-cookie")
            .is_some_and(|v| v.starts_with("msgx_console="))
    );
}

/// Issue 32 item 6: a console without a users file only when asked for by
/// name (`anonymous-viewer = true`); before, leaving the file out was
/// enough to open every page to every local visitor.
#[tokio::test]
async fn an_anonymous_console_must_be_asked_for() {
    let db = TestDb::migrated().await;
    let mut config = db.config();
    config.msgx.console.listen = Some("127.0.0.1:0".into());
    let (_, clock) = manual_clock();
    let mailbox = msgx::store::mailbox::Mailbox::new(&config.msgx.mailbox).expect("mailbox");
    let bind = |config: Config| {
        msgx::console::bind(
            "127.0.0.1:0",
            Arc::new(config),
            db.pool.clone(),
            mailbox.clone(),
            clock.clone(),
            None,
        )
    };
    let refused = bind(config.clone()).await;
    assert!(
        matches!(refused, Err(msgx::console::ConsoleError::NoAnonymous)),
        "{:?}",
        refused.err()
    );
    let cfg = db.config_file_with(|c| c.msgx.console.listen = Some("127.0.0.1:0".into()));
    let out = msgx(cfg.path(), &["config", "check"]);
    assert_eq!(common::code(&out), 2, "{}", common::text(&out));
    assert!(
        common::text(&out).contains("anonymous-viewer"),
        "{}",
        common::text(&out)
    );
    config.msgx.console.anonymous_viewer = true;
    assert!(bind(config).await.is_ok());
}

// ------------------------------------------------ sessions and users (32) --

impl Console {
    /// Another console on the same database (a restart, or a standby) with
    /// the users file `users`.
    async fn restarted(&self, users: &std::path::Path) -> SocketAddr {
        let mut config = (*self.runner.config).clone();
        config.msgx.console.users_file = Some(users.to_path_buf());
        let server = msgx::console::bind(
            "127.0.0.1:0",
            Arc::new(config),
            self.db.pool.clone(),
            self.runner.mailbox.clone(),
            self.runner.clock.clone(),
            None,
        )
        .await
        .expect("console binds");
        let addr = server.local_addr().expect("address");
        let (stop, rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let _keep = stop;
            let _ = server.serve(rx).await;
        });
        addr
    }
}

/// A private users file holding `text`.
fn users_text(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), text).expect("write users");
    file
}

fn user_entry(name: &str, role: &str, password: &str) -> String {
    format!(
        "[[user]]\nname = \"{name}\"\nrole = \"{role}\"\npassword-hash = \"{}\"\n",
        hash_password(password).expect("hash")
    )
}

/// Issue 32 item 7 (M7): a session is bound to its user's entry; a changed
/// password or role ends it (also across a restart, where before it lived
/// on), an unchanged file keeps it.
#[tokio::test]
async fn a_session_ends_when_its_users_password_or_role_changes() {
    let c = Console::start(|_| {}).await;
    let (session, _) = c.login(ALICE).await;
    let cookie = format!("msgx_console={session}");
    let with = [("Cookie", cookie.as_str())];
    let same = c.restarted(c._users.path()).await;
    assert_eq!(
        request(same, "GET", "/", &with, "").await.status,
        200,
        "same file"
    );

    let new_password = users_text(&user_entry(
        ALICE.0,
        "operator",
        "another operator password",
    ));
    let moved = c.restarted(new_password.path()).await;
    let a = request(moved, "GET", "/", &with, "").await;
    assert_eq!(
        (a.status, a.header("location")),
        (303, Some("/login")),
        "{a:?}"
    );
    // Ended for good: the old file does not bring it back.
    assert_eq!(request(same, "GET", "/", &with, "").await.status, 303);

    let (session, _) = c.login(ALICE).await;
    let cookie = format!("msgx_console={session}");
    let with = [("Cookie", cookie.as_str())];
    let mut text = std::fs::read_to_string(c._users.path()).expect("users");
    text = text.replacen("role = \"operator\"", "role = \"viewer\"", 1);
    let demoted = users_text(&text);
    let moved = c.restarted(demoted.path()).await;
    assert_eq!(
        request(moved, "GET", "/", &with, "").await.status,
        303,
        "new role"
    );
}

/// Issue 32 item 7: a session ends after `session-idle-timeout` without a
/// request (each request moves it on), and a user holds at most
/// `sessions-per-user` sessions: a new login ends the oldest.
#[tokio::test]
async fn idle_sessions_end_and_a_user_holds_a_bounded_number() {
    let c = Console::start(|c| {
        c.msgx.console.session_idle_timeout = "30m".parse().expect("duration");
        c.msgx.console.sessions_per_user = 2;
    })
    .await;
    let (busy, _) = c.login(ALICE).await;
    let (idle, _) = c.login(VICTOR).await;
    for _ in 0..3 {
        c.clock.advance(chrono::Duration::minutes(20));
        assert_eq!(c.get("/", Some(&busy)).await.status, 200, "active");
    }
    assert_eq!(c.get("/", Some(&idle)).await.status, 303, "idle for 60 min");

    let mut logins = Vec::new();
    for _ in 0..3 {
        c.clock.advance(chrono::Duration::seconds(1));
        logins.push(c.login(VICTOR).await.0);
    }
    let [first, second, third] = &logins[..] else {
        unreachable!("three logins")
    };
    assert_eq!(
        c.get("/", Some(first)).await.status,
        303,
        "the oldest ended"
    );
    assert_eq!(c.get("/", Some(second)).await.status, 200);
    assert_eq!(c.get("/", Some(third)).await.status, 200);
    let held: i64 = sqlx::query_scalar("SELECT count(*) FROM console_session WHERE user_name = $1")
        .bind(VICTOR.0)
        .fetch_one(&c.db.pool)
        .await
        .expect("count");
    assert_eq!(held, 2);
}

/// Issue 32 item 7: `msgx console revoke USER` ends every session of the
/// user at once, others' stay, and the revocation is recorded.
#[tokio::test]
async fn console_revoke_ends_a_users_sessions_and_is_recorded() {
    let c = Console::start(|_| {}).await;
    let (a1, _) = c.login(ALICE).await;
    let (a2, _) = c.login(ALICE).await;
    let (v, _) = c.login(VICTOR).await;
    let cfg = c.db.config_file_with(|_| {});
    let out = msgx(
        cfg.path(),
        &[
            "console",
            "revoke",
            ALICE.0,
            "--reason",
            "laptop lost",
            "--actor",
            "ops-lead",
            "--json",
        ],
    );
    assert_eq!(common::code(&out), 0, "{}", common::text(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", common::text(&out)));
    assert_eq!(report["sessions_ended"], 2, "{report}");
    assert_eq!(c.get("/", Some(&a1)).await.status, 303);
    assert_eq!(c.get("/", Some(&a2)).await.status, 303);
    assert_eq!(
        c.get("/", Some(&v)).await.status,
        200,
        "another user's session stays"
    );
    let (actor, reason, target): (String, Option<String>, String) = sqlx::query_as(
        "SELECT actor, reason, target FROM operator_action WHERE action = 'SESSION_REVOKE'",
    )
    .fetch_one(&c.db.pool)
    .await
    .expect("recorded");
    assert_eq!(
        (actor.as_str(), reason.as_deref(), target.as_str()),
        ("ops-lead", Some("laptop lost"), "console_user:alice")
    );
}

/// Issue 32 item 7 (L5): `hash-password` refuses a short password and a
/// common one, naming why, and prints no hash.
#[test]
fn hash_password_refuses_short_and_common_passwords() {
    for (password, why) in [("a", "at least 12"), ("Password1234", "common passwords")] {
        let out = hash_password_of(&format!("{password}\n"));
        assert_eq!(out.status.code(), Some(2), "{password}");
        assert!(out.stdout.is_empty(), "no hash for {password}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{password}: {err}");
    }
}

/// Issue 32 item 7 (L4) and item 8 (M8): a users file others may read, or
/// one that does not parse, is refused by `config check` (naming the file,
/// never a line of it) and by the console; the daemon runs its jobs on,
/// says so in the log, in `/readyz` (check `console`, not counted in
/// `ready`) and in `msgx_console_up`. Before, `config check` passed and the
/// daemon exited 2.
#[tokio::test]
async fn a_broken_users_file_fails_config_check_and_never_stops_the_daemon() {
    use std::os::unix::fs::PermissionsExt;
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let readable = users_text(&user_entry("alice", "operator", "alice-operator-pw"));
    std::fs::set_permissions(readable.path(), std::fs::Permissions::from_mode(0o644))
        .expect("chmod");
    let secret_line = "password-hash = \"$argon2id$v=19$leaked-part\" trailing";
    let garbled = users_text(&format!("[[user]]\nname = \"bob\"\n{secret_line}\n"));
    for (file, why) in [(readable.path(), "mode 0644"), (garbled.path(), "line 3")] {
        let cfg = db.config_file_with(|c| {
            c.msgx.console.listen = Some("127.0.0.1:0".into());
            c.msgx.console.users_file = Some(file.to_path_buf());
        });
        let out = msgx(cfg.path(), &["config", "check"]);
        let text = common::text(&out);
        assert_eq!(common::code(&out), 2, "{text}");
        assert!(
            text.contains("msgx.console.users-file") && text.contains(why),
            "{text}"
        );
        assert!(
            !text.contains("leaked-part") && !text.contains("argon2id"),
            "{text}"
        );
    }
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.console.listen = Some("127.0.0.1:0".into());
        c.msgx.console.users_file = Some(readable.path().to_path_buf());
        c.msgx.http.metrics_listen = Some("127.0.0.1:0".into());
    });
    let id = mb.insert(&sis::schd_one_flight(1, 9001)).await;
    let d = common::Daemon::spawn(cfg.path(), &[]);
    let ran = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM proc_state WHERE msg_id = $1")
            .bind(id)
            .fetch_one(&db.pool)
            .await
            .unwrap_or(0)
            > 0
    };
    common::wait_until("the daemon's ingest", Duration::from_secs(30), ran).await;
    let log = d.output();
    assert!(log.contains("Operator console not started"), "{log}");
    let ops = d
        .ops_address()
        .unwrap_or_else(|| panic!("ops endpoints: {log}"));
    let (_, ready) = common::http(ops, "GET", "/readyz", "").await;
    let ready: serde_json::Value =
        serde_json::from_str(&ready).unwrap_or_else(|_| panic!("{ready}"));
    assert_eq!(ready["checks"]["console"]["ok"], false, "{ready}");
    assert!(
        ready["checks"]["console"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("mode 0644")),
        "{ready}"
    );
    let (_, metrics) = common::http(ops, "GET", "/metrics", "").await;
    assert!(
        metrics.lines().any(|l| l == "msgx_console_up 0"),
        "{metrics}"
    );
    d.terminate();
}

/// Issue 32 item 6 (M5): a console on a non-loopback address over plain
/// HTTP, with no TLS-terminating proxy declared, does not start (it did,
/// without a word, sending passwords in the clear).
#[test]
fn a_non_loopback_console_over_plain_http_refuses_to_start() {
    let users = users_file();
    let db_url = "postgres://msgx:msgx@127.0.0.1:5432/none";
    let cfg = tempfile::NamedTempFile::new().expect("tmp");
    std::fs::write(
        cfg.path(),
        format!(
            "[msgx.postgres]\nurl = \"{db_url}\"\n[msgx.console]\nlisten = \"0.0.0.0:0\"\n\
             users-file = \"{}\"\nallowed-hosts = [\"msgx.airport.example\"]\n",
            users.path().display()
        ),
    )
    .expect("config");
    let out = msgx(cfg.path(), &["console"]);
    let text = common::text(&out);
    assert_eq!(common::code(&out), 2, "{text}");
    assert!(
        text.contains("msgx.console.tls-cert") && text.contains("plain HTTP"),
        "{text}"
    );
}

/// Issue 32 item 4: every compat request is visible in the console, with
/// its client, SNDR, body digest, answer and the message it wrote.
#[tokio::test]
async fn the_compat_page_lists_every_compat_request() {
    use msgx::clock::Clock as _;
    use msgx::store::pg::compat_request::{self, NewRequest, Outcome};
    let c = Console::start(|_| {}).await;
    let now = c.clock.now();
    let refused = NewRequest {
        peer: "127.0.0.9:4711".into(),
        detail: Some("invalid bearer token"),
        ..Default::default()
    };
    compat_request::record(&c.db.pool, now, &refused, 401, Outcome::Refused)
        .await
        .expect("record");
    let written = NewRequest {
        peer: "10.1.2.3 via 127.0.0.1:5000".into(),
        principal: Some("aodb-bridge"),
        sndr: Some("AODB"),
        payload_sha256: Some("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
        detail: None,
    };
    let id = compat_request::begin_write(&c.db.pool, now, &written, 4242)
        .await
        .expect("record");
    compat_request::finish(&c.db.pool, id, 200, Outcome::Accepted, None)
        .await
        .expect("finish");
    let (viewer, _) = c.login(VICTOR).await;
    let a = c.get("/compat", Some(&viewer)).await;
    assert_eq!(a.status, 200, "{a:?}");
    for text in [
        "id=\"page-compat\"",
        "id=\"table-compat\"",
        "127.0.0.9:4711",
        "(not authenticated)",
        "invalid bearer token",
        "aodb-bridge",
        "0123456789abcdef…",
        "ACCEPTED",
        "href=\"/messages/4242\"",
    ] {
        assert!(a.body.contains(text), "{text}: {}", a.body);
    }
}

/// Issue 36 item 4: the flight page's "Re-send its records" (and the
/// flights page's for a day) confirms with the count and re-sends REQUEST
/// records, recorded as the admin's; a viewer and an operator get no form
/// (issue 37: republish is an admin's right), and the operator's post
/// anyway is a 403 page naming the right.
#[tokio::test]
async fn an_admin_re_sends_a_flights_records_from_its_page() {
    let c = Console::start(|_| {}).await;
    c.fill().await;
    let (viewer, _) = c.login(VICTOR).await;
    let page = c.get("/flights/9001", Some(&viewer)).await;
    assert!(!page.body.contains("republish-form"), "{}", page.body);
    let (operator, operator_csrf) = c.login(ALICE).await;
    let page = c.get("/flights/9001", Some(&operator)).await;
    assert!(!page.body.contains("republish-form"), "{}", page.body);
    let refused = c
        .post(
            "/actions/republish",
            Some(&operator),
            &[
                ("csrf", operator_csrf.as_str()),
                ("ids", "9001"),
                ("step", "confirm"),
            ],
        )
        .await;
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(
        refused
            .body
            .contains("<code id=\"missing-right\">republish</code>"),
        "{}",
        refused.body
    );
    assert!(
        refused
            .body
            .contains("the operator role lacks the right &#34;republish&#34;"),
        "{}",
        refused.body
    );
    let (s, csrf) = c.login(ADA).await;
    let page = c.get("/flights/9001", Some(&s)).await;
    assert!(page.body.contains("id=\"republish-form\""), "{}", page.body);
    let day: chrono::NaiveDate =
        sqlx::query_scalar("SELECT operation_day FROM flight_schd WHERE flid = 9001")
            .fetch_one(&c.db.pool)
            .await
            .unwrap();
    let list = c.get(&format!("/flights?day={day}"), Some(&s)).await;
    assert!(
        list.body.contains("id=\"republish-day-form\""),
        "{}",
        list.body
    );

    let base = [("csrf", csrf.as_str()), ("ids", "9001")];
    let a = c
        .post(
            "/actions/republish",
            Some(&s),
            &[&base[..], &[("step", "confirm")]].concat(),
        )
        .await;
    assert!(a.body.contains("id=\"confirm-count\">1<"), "{}", a.body);
    let a = c
        .post(
            "/actions/republish",
            Some(&s),
            &[
                &base[..],
                &[
                    ("step", "apply"),
                    ("reason", "FIDS bootstrap"),
                    ("expected", "1"),
                ],
            ]
            .concat(),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.body.contains("re-sent 1 flight(s)"), "{}", a.body);
    let kind: String = sqlx::query_scalar(
        "SELECT convert_from(payload, 'UTF8')::jsonb ->> 'event_kind' FROM msg_event \
         WHERE target = 'KAFKA:msg' AND partition_key = '9001' ORDER BY event_id DESC LIMIT 1",
    )
    .fetch_one(&c.db.pool)
    .await
    .unwrap();
    assert_eq!(kind, "REQUEST");
    let audit: (String, String, Option<String>) = sqlx::query_as(
        "SELECT actor, target, reason FROM operator_action WHERE action = 'EVENT_REPUBLISH'",
    )
    .fetch_one(&c.db.pool)
    .await
    .unwrap();
    assert_eq!(
        (audit.0.as_str(), audit.1.as_str(), audit.2.as_deref()),
        ("ada", "flights:flid=9001", Some("FIDS bootstrap"))
    );
}

/// The text of a page from the element with `id` to the first `end` after it.
fn up_to<'a>(body: &'a str, id: &str, end: &str) -> Option<&'a str> {
    let at = body.find(&format!("id=\"{id}\""))?;
    let rest = &body[at..];
    Some(&rest[..rest.find(end)?])
}

/// Issue 37 item 4: the Jobs page shows each job's schedule, next start and
/// last runs as a sparkline; an operator pauses a job through the
/// confirm-then-apply flow with a mandatory reason (persisted in JOB_PAUSE,
/// audited as JOB_PAUSE with the user), the page then offers resume; a
/// viewer sees neither form and may not post one.
#[tokio::test]
async fn a_job_is_paused_and_resumed_through_the_jobs_page_and_audited() {
    let c = Console::start(|_| {}).await;
    c.mailbox.insert(&sis::schd_one_flight(1, 9001)).await;
    drain(&c.runner).await;
    let (viewer, viewer_csrf) = c.login(VICTOR).await;
    let a = c.get("/jobs", Some(&viewer)).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.body.contains("id=\"spark-ingest-sweep\"") && !a.body.contains("id=\"pause-"),
        "{}",
        a.body
    );
    let a = c
        .post(
            "/actions/job-pause",
            Some(&viewer),
            &[
                ("csrf", &viewer_csrf),
                ("step", "apply"),
                ("job", "retention"),
                ("reason", "x"),
            ],
        )
        .await;
    assert_eq!(a.status, 403, "{a:?}");

    // Pausing is the admin's right (pause-job): an operator sees no form
    // and is refused with the right named.
    let (op, op_csrf) = c.login(ALICE).await;
    let a = c.get("/jobs", Some(&op)).await;
    let row = up_to(&a.body, "job-retention", "</tr>").expect("the retention row");
    assert!(!row.contains("id=\"pause-retention\""), "{row}");
    let a = c
        .post(
            "/actions/job-pause",
            Some(&op),
            &[
                ("csrf", op_csrf.as_str()),
                ("step", "confirm"),
                ("job", "retention"),
            ],
        )
        .await;
    assert!(a.status == 403 && a.body.contains("pause-job"), "{a:?}");

    let (s, csrf) = c.login(ADA).await;
    let a = c.get("/jobs", Some(&s)).await;
    let spark = up_to(&a.body, "spark-ingest-sweep", "</svg>").expect("a sparkline");
    assert!(
        spark.contains("class=\"sparkline\"") && spark.contains("<rect class=\"ok\""),
        "the drained run is drawn: {spark}"
    );
    let row = up_to(&a.body, "job-retention", "</tr>").expect("the retention row");
    assert!(row.contains("id=\"pause-retention\""), "{row}");
    // The next start follows the daemon profile's cron and the console's clock.
    let now = msgx::clock::Clock::now(&c.clock);
    let profile = msgx::jobs::profile::Profile::resolve("daemon").expect("daemon profile");
    let cron = profile
        .jobs
        .get("retention")
        .expect("retention is scheduled");
    let next = msgx::jobs::control::next_fire(cron, now).expect("a cron schedule");
    assert!(
        row.contains(&next.format("%Y-%m-%d %H:%M:%S").to_string()),
        "next start {next}: {row}"
    );

    let confirm = [
        ("csrf", csrf.as_str()),
        ("step", "confirm"),
        ("job", "retention"),
    ];
    let a = c.post("/actions/job-pause", Some(&s), &confirm).await;
    assert!(
        a.body.contains("id=\"confirm-form\"") && a.body.contains("SKIPPED_PAUSED"),
        "{}",
        a.body
    );
    let no_reason = [
        ("csrf", csrf.as_str()),
        ("step", "apply"),
        ("job", "retention"),
        ("reason", " "),
    ];
    let a = c.post("/actions/job-pause", Some(&s), &no_reason).await;
    assert!(a.body.contains("a reason is required"), "{}", a.body);
    let paused: i64 = sqlx::query_scalar("SELECT count(*) FROM job_pause")
        .fetch_one(&c.db.pool)
        .await
        .unwrap();
    assert_eq!(paused, 0, "no reason, no pause");

    let apply = [
        ("csrf", csrf.as_str()),
        ("step", "apply"),
        ("job", "retention"),
        ("reason", "incident 42"),
    ];
    let a = c.post("/actions/job-pause", Some(&s), &apply).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.body
            .contains("retention paused; recorded as operator_action"),
        "{}",
        a.body
    );
    let (by, reason): (String, String) =
        sqlx::query_as("SELECT paused_by, reason FROM job_pause WHERE job = 'retention'")
            .fetch_one(&c.db.pool)
            .await
            .expect("persisted");
    assert_eq!((by.as_str(), reason.as_str()), (ADA.0, "incident 42"));
    let audit: (String, String, String, Option<String>) = sqlx::query_as(
        "SELECT action, target, actor, reason FROM operator_action ORDER BY id DESC LIMIT 1",
    )
    .fetch_one(&c.db.pool)
    .await
    .expect("audited");
    assert_eq!(
        audit,
        (
            "JOB_PAUSE".into(),
            "job:retention".into(),
            ADA.0.into(),
            Some("incident 42".into())
        )
    );

    // "Run now" honours the pause as `msgx run` does.
    let run = [
        ("csrf", csrf.as_str()),
        ("step", "apply"),
        ("job", "retention"),
        ("reason", "try"),
    ];
    let a = c.post("/actions/job-run", Some(&s), &run).await;
    assert!(a.body.contains("retention is paused by"), "{}", a.body);

    let a = c.get("/jobs", Some(&s)).await;
    let row = up_to(&a.body, "job-retention", "</tr>").expect("the retention row");
    assert!(
        row.contains("paused by ada") && row.contains("incident 42"),
        "{row}"
    );
    assert!(
        row.contains("id=\"resume-retention\"") && !row.contains("id=\"pause-retention\""),
        "{row}"
    );
    let resume = [
        ("csrf", csrf.as_str()),
        ("step", "apply"),
        ("job", "retention"),
        ("reason", "over"),
    ];
    let a = c.post("/actions/job-resume", Some(&s), &resume).await;
    assert!(a.body.contains("retention resumed"), "{}", a.body);
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM job_pause")
        .fetch_one(&c.db.pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
}
