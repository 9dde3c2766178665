//! The live view's endpoint (docs/console.md "Live view"): `GET
//! /live/overview` and `GET /live/messages/{id}` answer a stream of
//! server-sent events, `change` when what the page shows has changed; the
//! page's script (`assets/live.js`) then fetches the page again and swaps
//! its `data-live` fragments. The pages stay whole without it.
//!
//! A stream is bounded: a signed-in user (a session or a token; not the
//! anonymous viewer) holds at most `msgx.console.live.connections-per-user`
//! at once (429 beyond), and each ends after `max-lifetime` (the browser
//! reconnects through the session check) or when the console stops. It is
//! one of the listener's connections like any other (`msgx.http`
//! limits), and it holds no PostgreSQL session: it only listens to the
//! shared [`LiveFeed`]. Its times (keep-alive, lifetime) are read on the
//! injected Clock at every poll of the feed.

use super::live::{Change, LiveFeed, LiveSlot, Signal};
use super::state::{ConsoleState, Principal};
use crate::clock::SharedClock;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::broadcast;

/// How long a browser waits before reconnecting a stream that ended.
const RETRY: std::time::Duration = std::time::Duration::from_secs(3);

/// The page a stream serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    Overview,
    Message(i64),
}

impl Watch {
    fn cares(self, c: &Change) -> bool {
        match self {
            Watch::Overview => c.overview,
            Watch::Message(id) => c.messages.contains(id),
        }
    }

    /// The stream a page of this kind opens, at the feed's `version` (the
    /// `data-live-src` of the page); `None` when the visitor cannot open one
    /// (the anonymous viewer).
    pub fn source(self, s: &ConsoleState, who: &Principal) -> Option<String> {
        user_key(who)?;
        let v = s.live.feed.version();
        Some(match self {
            Watch::Overview => format!("/live/overview?v={v}"),
            Watch::Message(id) => format!("/live/messages/{id}?v={v}"),
        })
    }
}

/// The key a user's streams are counted under: sessions by login name,
/// tokens by token name (a token and a user of the same name do not share).
fn user_key(who: &Principal) -> Option<String> {
    match who {
        Principal::Anonymous => None,
        Principal::Session { user, .. } => Some(format!("user:{user}")),
        Principal::Token { name, .. } => Some(format!("token:{name}")),
    }
}

/// `?v=`: the feed version the page was rendered at.
#[derive(Debug, Deserialize)]
pub struct LiveQuery {
    v: Option<u64>,
}

pub async fn overview(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    Query(q): Query<LiveQuery>,
) -> Response {
    open(&s, &who, Watch::Overview, q.v)
}

pub async fn message(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    Path(msg_id): Path<i64>,
    Query(q): Query<LiveQuery>,
) -> Response {
    open(&s, &who, Watch::Message(msg_id), q.v)
}

fn open(s: &ConsoleState, who: &Principal, watch: Watch, rendered: Option<u64>) -> Response {
    let limit = s.config.msgx.console.live.connections_per_user;
    let Some(user) = user_key(who) else {
        return (
            StatusCode::FORBIDDEN,
            "the live view needs a signed-in user (reload the page for the latest)",
        )
            .into_response();
    };
    let Some(slot) = s.live.clients.enter(user, limit) else {
        metrics::counter!("msgx_console_live_refused_total").increment(1);
        tracing::debug!(
            user = %crate::log_text::for_log(who.name()),
            limit,
            "Console live view: stream refused, the user holds msgx.console.live.connections-per-user"
        );
        let mut r = (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "this user already holds {limit} live streams \
                 (msgx.console.live.connections-per-user); reload the page for the latest"
            ),
        )
            .into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
        return r;
    };
    let live = &s.config.msgx.console.live;
    let now = s.clock.now();
    let stream = Stream {
        rx: s.live.feed.subscribe(),
        feed: s.live.feed.clone(),
        _slot: slot,
        watch,
        clock: s.clock.clone(),
        opened: now,
        last_write: now,
        keep_alive: live.keep_alive.chrono(),
        lifetime: live.max_lifetime.chrono(),
        // A page rendered at another version may have missed a change.
        owed: rendered.is_some_and(|v| v != s.live.feed.version()),
        greeted: false,
    };
    let events = futures_util::stream::unfold(stream, |mut st| async move {
        st.next().await.map(|e| (Ok::<Event, Infallible>(e), st))
    });
    let mut r = Sse::new(events).into_response();
    // Proxies that buffer (nginx) would hold the events back.
    r.headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// One open stream.
struct Stream {
    rx: broadcast::Receiver<Signal>,
    feed: Arc<LiveFeed>,
    _slot: LiveSlot,
    watch: Watch,
    clock: SharedClock,
    opened: DateTime<Utc>,
    last_write: DateTime<Utc>,
    keep_alive: chrono::Duration,
    lifetime: chrono::Duration,
    /// A change is due at once.
    owed: bool,
    greeted: bool,
}

impl Stream {
    /// The next event, or `None` to end the stream.
    async fn next(&mut self) -> Option<Event> {
        if !self.greeted {
            self.greeted = true;
            return Some(Event::default().retry(RETRY).comment("msgx live"));
        }
        loop {
            if std::mem::take(&mut self.owed) {
                return Some(self.write(change(self.feed.version())));
            }
            let signal = tokio::select! {
                s = self.rx.recv() => s,
                _ = self.feed.stopped() => return None,
            };
            match signal {
                Ok(Signal::Change(c)) if self.watch.cares(&c) => {
                    return Some(self.write(change(c.version)));
                }
                Ok(_) => {}
                // Fell behind: whatever it missed may have concerned it.
                Err(broadcast::error::RecvError::Lagged(_)) => self.owed = true,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
            let now = self.clock.now();
            if now - self.opened >= self.lifetime {
                return None;
            }
            if now - self.last_write >= self.keep_alive {
                return Some(self.write(Event::default().comment("keep-alive")));
            }
        }
    }

    fn write(&mut self, e: Event) -> Event {
        self.last_write = self.clock.now();
        e
    }
}

fn change(version: u64) -> Event {
    Event::default()
        .event("change")
        .data(format!("{{\"version\":{version}}}"))
}
