//! The live view's change source (docs/console.md "Live view"): one
//! poller per console, whatever the number of viewers, asks PostgreSQL what
//! changed every `msgx.console.live.poll-interval` and broadcasts it to the
//! open streams ([`super::live_stream`]). It runs only while a stream is
//! open and takes a pooled connection for each poll only, so no viewer holds
//! a PostgreSQL session. The writers are not touched: no trigger or NOTIFY
//! on the pipeline's path.
//!
//! What changed is decided by [`Tracker`] (pure): the PROC_STATE rows
//! written since the last poll (by `updated_at`, told apart by their row
//! version, so a clock that did not move hides no change), and a
//! fingerprint of the rest of the Overview. A row written with an
//! `updated_at` older than one already seen (a writer whose clock is behind)
//! is not noticed until something newer is written; the page is then as
//! fresh as a reload at that moment.

use crate::store::pg::live_changes::{self, ChangedRow};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// Changed PROC_STATE rows one poll reads at most; beyond it every message
/// page counts as changed ([`Messages::All`]).
pub const ROWS_PER_POLL: usize = 500;
/// Signals a stream may fall behind by before it is told "everything
/// changed" instead.
const CHANNEL_CAPACITY: usize = 64;

/// Which messages changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Messages {
    /// These, and no other.
    Ids(BTreeSet<i64>),
    /// Too many to list, or unknown (the first poll, a stream that fell behind).
    All,
}

impl Messages {
    pub fn contains(&self, msg_id: i64) -> bool {
        match self {
            Messages::Ids(ids) => ids.contains(&msg_id),
            Messages::All => true,
        }
    }
    fn is_empty(&self) -> bool {
        matches!(self, Messages::Ids(ids) if ids.is_empty())
    }
}

/// One poll's news.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The feed's version after this change ([`LiveFeed::version`]).
    pub version: u64,
    /// Something the Overview shows changed.
    pub overview: bool,
    pub messages: Messages,
}

/// What the poller broadcasts after every poll.
#[derive(Debug, Clone)]
pub enum Signal {
    /// A poll found nothing new (streams use it to check their clocks).
    Tick,
    Change(Arc<Change>),
}

/// What one poll read.
#[derive(Debug, Clone, Default)]
pub struct Poll {
    /// [`live_changes::rows_since`] at [`Tracker::since`], newest first.
    pub rows: Vec<ChangedRow>,
    pub fingerprint: String,
}

/// What a poll found, before it is numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub overview: bool,
    pub messages: Messages,
}

/// Turns consecutive polls into changes. It keeps the newest `updated_at`
/// seen (the next poll reads from there, inclusive) and the row versions
/// seen at exactly that instant, so a row is reported once per write.
#[derive(Debug, Default)]
pub struct Tracker {
    since: Option<DateTime<Utc>>,
    at_since: BTreeSet<(i64, i64)>,
    fingerprint: Option<String>,
}

impl Tracker {
    /// Where the next poll reads from; `None` before the first
    /// ([`live_changes::latest_update`] gives it).
    pub fn since(&self) -> Option<DateTime<Utc>> {
        self.since
    }

    /// Starts where PROC_STATE stands now (`None`: an empty table).
    pub fn start_at(&mut self, latest: Option<DateTime<Utc>>) {
        self.since = Some(latest.unwrap_or(DateTime::<Utc>::MIN_UTC));
    }

    /// The news of `poll` (read with `limit` rows at most). The first poll
    /// reports everything as changed: nothing was watched before it.
    pub fn observe(&mut self, poll: Poll, limit: usize) -> Found {
        let first = self.fingerprint.is_none();
        let overview_moved = self.fingerprint.as_deref() != Some(poll.fingerprint.as_str());
        self.fingerprint = Some(poll.fingerprint);
        let full = poll.rows.len() >= limit;
        let seen = |r: &ChangedRow| {
            Some(r.updated_at) == self.since && self.at_since.contains(&(r.msg_id, r.xmin))
        };
        let ids: BTreeSet<i64> = poll
            .rows
            .iter()
            .filter(|r| !seen(r))
            .map(|r| r.msg_id)
            .collect();
        if let Some(newest) = poll.rows.first().map(|r| r.updated_at) {
            self.since = Some(newest.max(self.since.unwrap_or(newest)));
            self.at_since = poll
                .rows
                .iter()
                .filter(|r| Some(r.updated_at) == self.since)
                .map(|r| (r.msg_id, r.xmin))
                .collect();
        }
        let messages = if first || full {
            Messages::All
        } else {
            Messages::Ids(ids)
        };
        Found {
            overview: first || overview_moved || !messages.is_empty(),
            messages,
        }
    }
}

/// The console's one change source, shared by every live stream.
pub struct LiveFeed {
    pg: PgPool,
    interval: Duration,
    tx: broadcast::Sender<Signal>,
    /// Whether the poller runs; decided under this lock both when a stream
    /// subscribes and when the poller finds nobody left, so it never stops
    /// while a stream waits for it.
    running: Mutex<bool>,
    version: AtomicU64,
    /// The console's stop signal (set when it starts serving).
    stop: OnceLock<watch::Receiver<bool>>,
}

impl LiveFeed {
    pub fn new(pg: PgPool, interval: Duration) -> Arc<LiveFeed> {
        let (tx, _) = broadcast::channel(CHANNEL_CAPACITY);
        Arc::new(LiveFeed {
            pg,
            interval,
            tx,
            running: Mutex::new(false),
            version: AtomicU64::new(0),
            stop: OnceLock::new(),
        })
    }

    /// The number of changes seen so far; a page carries the version it was
    /// rendered at, and a stream opened for it at another version sends a
    /// change at once (what happened between the two is not known).
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Streams end when `stop` turns true (the console stops serving).
    pub fn stop_on(&self, stop: watch::Receiver<bool>) {
        let _ = self.stop.set(stop);
    }

    /// Resolves when the console stops; never, before it serves.
    pub async fn stopped(&self) {
        match self.stop.get() {
            Some(stop) => crate::http::listener::stopped(stop.clone()).await,
            None => std::future::pending().await,
        }
    }

    /// A receiver of every poll's [`Signal`]; starts the poller if it is not
    /// running.
    pub fn subscribe(self: &Arc<Self>) -> broadcast::Receiver<Signal> {
        let rx = self.tx.subscribe();
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if !*running {
            *running = true;
            tokio::spawn(poll_loop(self.clone()));
        }
        rx
    }
}

/// Polls until no stream is left.
async fn poll_loop(feed: Arc<LiveFeed>) {
    let mut every = tokio::time::interval(feed.interval);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut tracker = Tracker::default();
    let mut failing = false;
    loop {
        every.tick().await;
        {
            let mut running = feed.running.lock().unwrap_or_else(|e| e.into_inner());
            if feed.tx.receiver_count() == 0 {
                *running = false;
                return;
            }
        }
        let signal = match poll(&feed.pg, &mut tracker).await {
            Ok(found) => {
                if failing {
                    tracing::info!("Console live view: PostgreSQL answers again");
                    failing = false;
                }
                if found.overview || !found.messages.is_empty() {
                    let version = feed.version.fetch_add(1, Ordering::AcqRel) + 1;
                    Signal::Change(Arc::new(Change {
                        version,
                        overview: found.overview,
                        messages: found.messages,
                    }))
                } else {
                    Signal::Tick
                }
            }
            Err(e) => {
                if !failing {
                    tracing::warn!(error = %e, "Console live view: cannot read what changed; pages stay as rendered until PostgreSQL answers");
                    failing = true;
                }
                Signal::Tick
            }
        };
        // No receiver left is found at the next tick.
        let _ = feed.tx.send(signal);
    }
}

async fn poll(pg: &PgPool, tracker: &mut Tracker) -> Result<Found, sqlx::Error> {
    if tracker.since().is_none() {
        tracker.start_at(live_changes::latest_update(pg).await?);
    }
    let since = tracker.since().unwrap_or(DateTime::<Utc>::MIN_UTC);
    let limit = i64::try_from(ROWS_PER_POLL).unwrap_or(i64::MAX);
    let rows = live_changes::rows_since(pg, since, limit).await?;
    let fingerprint = live_changes::overview_fingerprint(pg).await?;
    Ok(tracker.observe(Poll { rows, fingerprint }, ROWS_PER_POLL))
}

/// The open streams per user, and the gauge of all of them.
#[derive(Debug, Default)]
pub struct LiveClients {
    open: Mutex<HashMap<String, u32>>,
}

impl LiveClients {
    /// A slot for one more stream of `user`, or `None` when it holds `limit`.
    pub fn enter(self: &Arc<Self>, user: String, limit: u32) -> Option<LiveSlot> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(user.clone()).or_insert(0);
        if *n >= limit {
            return None;
        }
        *n += 1;
        metrics::gauge!("msgx_console_live_clients").increment(1.0);
        Some(LiveSlot {
            clients: self.clone(),
            user,
        })
    }

    /// Streams `user` holds open.
    pub fn open_of(&self, user: &str) -> u32 {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.get(user).copied().unwrap_or(0)
    }
}

/// One open stream; given back when dropped (the stream ended, or its
/// client went away and a write failed).
#[derive(Debug)]
pub struct LiveSlot {
    clients: Arc<LiveClients>,
    user: String,
}

impl Drop for LiveSlot {
    fn drop(&mut self) {
        let mut open = self.clients.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.user) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.user);
            }
        }
        metrics::gauge!("msgx_console_live_clients").decrement(1.0);
    }
}

/// What the live view needs beside the console's state.
#[derive(Clone)]
pub struct Live {
    pub feed: Arc<LiveFeed>,
    pub clients: Arc<LiveClients>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + s, 0)
            .single()
            .expect("valid")
    }

    fn row(msg_id: i64, s: i64, xmin: i64) -> ChangedRow {
        ChangedRow {
            msg_id,
            updated_at: at(s),
            xmin,
        }
    }

    fn poll(rows: Vec<ChangedRow>, fingerprint: &str) -> Poll {
        Poll {
            rows,
            fingerprint: fingerprint.into(),
        }
    }

    fn ids(list: &[i64]) -> Messages {
        Messages::Ids(list.iter().copied().collect())
    }

    fn started() -> Tracker {
        let mut t = Tracker::default();
        t.start_at(Some(at(0)));
        let first = t.observe(poll(vec![row(1, 0, 100)], "a"), 10);
        assert_eq!(
            first,
            Found {
                overview: true,
                messages: Messages::All
            },
            "the first poll reports everything"
        );
        t
    }

    #[test]
    fn a_row_already_seen_is_not_reported_again() {
        let mut t = started();
        let again = t.observe(poll(vec![row(1, 0, 100)], "a"), 10);
        assert_eq!(
            again,
            Found {
                overview: false,
                messages: ids(&[])
            }
        );
    }

    #[test]
    fn a_second_write_at_the_same_instant_is_told_apart_by_its_row_version() {
        let mut t = started();
        let found = t.observe(poll(vec![row(2, 0, 101), row(1, 0, 102)], "a"), 10);
        assert_eq!(found.messages, ids(&[1, 2]));
        assert!(found.overview, "a message change is an Overview change");
        let quiet = t.observe(poll(vec![row(2, 0, 101), row(1, 0, 102)], "a"), 10);
        assert_eq!(quiet.messages, ids(&[]));
    }

    #[test]
    fn newer_writes_move_the_mark_and_are_reported_once() {
        let mut t = started();
        let found = t.observe(poll(vec![row(7, 5, 200), row(1, 0, 100)], "a"), 10);
        assert_eq!(found.messages, ids(&[7]));
        assert_eq!(t.since(), Some(at(5)));
        let quiet = t.observe(poll(vec![row(7, 5, 200)], "a"), 10);
        assert_eq!(quiet.messages, ids(&[]));
    }

    #[test]
    fn a_full_poll_reports_every_message() {
        let mut t = started();
        let rows: Vec<_> = (10..20).rev().map(|i| row(i, i, 300 + i)).collect();
        assert_eq!(t.observe(poll(rows, "a"), 10).messages, Messages::All);
    }

    #[test]
    fn a_changed_fingerprint_is_an_overview_change_without_messages() {
        let mut t = started();
        let found = t.observe(poll(vec![row(1, 0, 100)], "b"), 10);
        assert_eq!(
            found,
            Found {
                overview: true,
                messages: ids(&[])
            }
        );
        assert!(!found.messages.contains(1));
        assert!(Messages::All.contains(1));
    }
}
