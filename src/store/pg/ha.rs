//! Connecting through a host list ([`super::hosts`]): a connector that tries
//! each host in order and checks what the server is, and the hooks that keep
//! a pool on a suitable server across a failover.
//!
//! A pool connects to one host at a time (sqlx's pool has one set of
//! options). [`Failover`] chose it and re-points the pool
//! (`Pool::set_connect_options`) when that host stops being suitable:
//! - every new session is checked after connecting; one on an unsuitable
//!   server is refused (the pool retries) and the host list is resolved again;
//! - a session taken from the pool is pinged as sqlx would, and its server
//!   re-checked instead once `msgx.postgres.recheck-interval` has passed
//!   since the last check or after a connection or read-only error
//!   ([`note_error`]); a failed check discards it and resolves again;
//! - once re-pointed, sessions opened before are discarded as they come out
//!   of the pool, so none stays on the old server.
//!
//! A pool stays on the host it chose while it is suitable, even when a host
//! earlier in the list becomes suitable again: a primary that was failed over
//! and came back does not take msgx's writes back.

use super::hosts::{ServerRole, TargetSessionAttrs};
use sqlx::pool::PoolConnectionMetadata;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// What the server of `conn` is.
pub async fn role(conn: &mut PgConnection) -> Result<ServerRole, sqlx::Error> {
    let (in_recovery, read_only): (bool, bool) = sqlx::query_as(
        "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'",
    )
    .fetch_one(conn)
    .await?;
    Ok(ServerRole {
        in_recovery,
        read_only,
    })
}

/// One host of the list: its name for messages and its connect options.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub options: PgConnectOptions,
}

impl Target {
    /// `host:port` (`[addr]:port` for IPv6, the socket path for a socket).
    pub fn new(options: PgConnectOptions) -> Target {
        let name = match options.get_socket() {
            Some(path) => path.display().to_string(),
            None if options.get_host().contains(':') => {
                format!("[{}]:{}", options.get_host(), options.get_port())
            }
            None => format!("{}:{}", options.get_host(), options.get_port()),
        };
        Target { name, options }
    }
}

/// The hosts of a URL with the kind of server wanted and the bound on each
/// connect.
#[derive(Debug, Clone)]
pub struct Targets {
    hosts: Vec<Target>,
    attrs: TargetSessionAttrs,
    checked: bool,
    connect_timeout: Option<Duration>,
}

/// How one host was passed over.
#[derive(Debug)]
pub enum Passed {
    /// Connecting (or the check query) failed.
    Failed(sqlx::Error),
    /// The server is not of the kind wanted.
    Unsuitable(ServerRole),
}

/// A session on the host the connector chose.
#[derive(Debug)]
pub struct Chosen {
    pub conn: PgConnection,
    /// Its position in the host list.
    pub index: usize,
}

impl Targets {
    /// `attrs` as given in the URL; absent, a list wants `read-write` and a
    /// single host anything (no check, as before host lists).
    pub fn new(
        hosts: Vec<Target>,
        attrs: Option<TargetSessionAttrs>,
        connect_timeout: Option<Duration>,
    ) -> Targets {
        let many = hosts.len() > 1;
        let attrs = attrs.unwrap_or(if many {
            TargetSessionAttrs::ReadWrite
        } else {
            TargetSessionAttrs::Any
        });
        Targets {
            hosts,
            checked: many || attrs != TargetSessionAttrs::Any,
            attrs,
            connect_timeout,
        }
    }

    pub fn hosts(&self) -> &[Target] {
        &self.hosts
    }

    /// The kind of server wanted.
    pub fn attrs(&self) -> TargetSessionAttrs {
        self.attrs
    }

    /// Whether sessions are placed and checked here: a host list, or one
    /// host with a `target_session_attrs` other than `any`. Otherwise the
    /// driver connects as it always did.
    pub fn checked(&self) -> bool {
        self.checked
    }

    /// Each host's options through `f` (the pool's startup parameters).
    pub fn map_options(mut self, f: impl Fn(PgConnectOptions) -> PgConnectOptions) -> Targets {
        for t in &mut self.hosts {
            t.options = f(t.options.clone());
        }
        self
    }

    /// Tries each host in list order, each within `connect_timeout`, and
    /// returns a session on the first one of the kind wanted (with
    /// `prefer-standby`: the first standby, else the first host that
    /// answers). Otherwise every host with why it was passed over.
    pub async fn connect(&self) -> Result<Chosen, Vec<(String, Passed)>> {
        let passes: &[TargetSessionAttrs] = match self.attrs {
            TargetSessionAttrs::PreferStandby => {
                &[TargetSessionAttrs::Standby, TargetSessionAttrs::Any]
            }
            _ => std::slice::from_ref(&self.attrs),
        };
        let mut passed: Vec<(String, Passed)> = Vec::new();
        for &want in passes {
            for (index, t) in self.hosts.iter().enumerate() {
                // A host that failed to connect is not tried again on the
                // second pass.
                if passed
                    .iter()
                    .any(|(n, p)| *n == t.name && matches!(p, Passed::Failed(_)))
                {
                    continue;
                }
                match self.try_host(t, want).await {
                    Ok(conn) => return Ok(Chosen { conn, index }),
                    Err(why) => passed.push((t.name.clone(), why)),
                }
            }
        }
        Err(passed)
    }

    /// What each host is, in list order: connects to every host (each
    /// within `connect_timeout`, else `bound`) and asks (for `msgx doctor`).
    pub async fn survey(&self, bound: Duration) -> Vec<(String, Result<ServerRole, sqlx::Error>)> {
        let limit = self.connect_timeout.unwrap_or(bound);
        let mut out = Vec::with_capacity(self.hosts.len());
        for t in &self.hosts {
            let asked = async {
                let mut conn = t.options.connect().await?;
                let r = role(&mut conn).await;
                let _ = conn.close().await;
                r
            };
            let r = tokio::time::timeout(limit, asked)
                .await
                .unwrap_or_else(|_| {
                    Err(sqlx::Error::Io(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no answer within {limit:?}"),
                    )))
                });
            out.push((t.name.clone(), r));
        }
        out
    }

    async fn try_host(&self, t: &Target, want: TargetSessionAttrs) -> Result<PgConnection, Passed> {
        let connecting = t.options.connect();
        let mut conn = match self.connect_timeout {
            Some(limit) => tokio::time::timeout(limit, connecting)
                .await
                .unwrap_or_else(|_| {
                    Err(sqlx::Error::Io(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no answer within connect_timeout ({}s)", limit.as_secs()),
                    )))
                }),
            None => connecting.await,
        }
        .map_err(Passed::Failed)?;
        super::nodelay::set_on_all_tcp_sockets();
        if want == TargetSessionAttrs::Any {
            return Ok(conn);
        }
        match role(&mut conn).await {
            Ok(r) if want.accepts(r) => Ok(conn),
            Ok(r) => {
                let _ = conn.close().await;
                Err(Passed::Unsuitable(r))
            }
            Err(e) => Err(Passed::Failed(e)),
        }
    }
}

/// Connection and read-only errors seen by the process ([`note_error`]).
static ERRORS: AtomicU64 = AtomicU64::new(0);
/// Wakes every [`Failover`] on such an error.
static ERROR_SEEN: Notify = Notify::const_new();

/// Records `e` if it says the server is gone or no longer writable (a lost
/// connection, a pool timeout, SQLSTATE 25006 `read_only_sql_transaction`,
/// class 08, 57P01–57P03): each failover pool then re-checks its server
/// before the next session leaves it, instead of waiting for the recheck
/// interval. Cheap; call it where a statement's error is handled.
pub fn note_error(e: &sqlx::Error) {
    let gone = match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::Protocol(_) => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|c| {
            c == "25006" || c.starts_with("08") || matches!(&*c, "57P01" | "57P02" | "57P03")
        }),
        _ => false,
    };
    if gone {
        ERRORS.fetch_add(1, Ordering::Relaxed);
        ERROR_SEEN.notify_waiters();
    }
}

/// Keeps one pool on a suitable host of its list (see the module docs).
#[derive(Debug)]
pub struct Failover {
    targets: Targets,
    recheck: Duration,
    /// The host the pool connects to now.
    current: AtomicUsize,
    /// When the pool was last pointed at another host: older sessions go.
    pointed_at: Mutex<Instant>,
    /// When a session's server was last checked.
    checked_at: Mutex<Instant>,
    /// [`ERRORS`] as of the last check.
    errors_seen: AtomicU64,
    /// The pool's host must be chosen again.
    unresolved: AtomicBool,
    wake: Notify,
}

impl Failover {
    /// For a pool pointed at host `current` of `targets`, re-checking a
    /// pooled session's server every `recheck`.
    pub fn new(targets: Targets, current: usize, recheck: Duration) -> Arc<Failover> {
        Arc::new(Failover {
            targets,
            recheck,
            current: AtomicUsize::new(current),
            pointed_at: Mutex::new(Instant::now()),
            checked_at: Mutex::new(Instant::now()),
            errors_seen: AtomicU64::new(ERRORS.load(Ordering::Relaxed)),
            unresolved: AtomicBool::new(false),
            wake: Notify::new(),
        })
    }

    /// The options of the host the pool connects to now.
    pub fn current_options(&self) -> PgConnectOptions {
        let i = self.current.load(Ordering::Relaxed);
        self.targets.hosts[i].options.clone()
    }

    /// Whether a session already in use may stay on a server in `role`:
    /// `prefer-standby` keeps whatever the connector fell back to.
    fn keeps(&self, role: ServerRole) -> bool {
        match self.targets.attrs {
            TargetSessionAttrs::PreferStandby => true,
            a => a.accepts(role),
        }
    }

    /// The pool's host failed a check: the watcher chooses again (logged
    /// once per loss, not per session).
    fn lose(&self, why: &str) {
        if !self.unresolved.swap(true, Ordering::SeqCst) {
            tracing::warn!(
                host = %self.targets.hosts[self.current.load(Ordering::Relaxed)].name,
                wanted = %self.targets.attrs,
                why,
                "PostgreSQL host no longer suitable: choosing again from msgx.postgres.url"
            );
        }
        self.wake.notify_one();
    }

    fn checked_now(&self) {
        if let Ok(mut at) = self.checked_at.lock() {
            *at = Instant::now();
        }
    }

    /// `base` with the checks of the module docs (and the TCP_NODELAY of
    /// every new session). sqlx's own ping before each acquire is replaced
    /// by the check's, so a session costs one round trip, as before.
    pub fn pool_options(self: &Arc<Self>, base: PgPoolOptions) -> PgPoolOptions {
        let on_connect = Arc::clone(self);
        let on_acquire = Arc::clone(self);
        base.test_before_acquire(false)
            .after_connect(move |conn, _meta| {
                let f = Arc::clone(&on_connect);
                Box::pin(async move {
                    super::nodelay::set_on_all_tcp_sockets();
                    f.after_connect(conn).await
                })
            })
            .before_acquire(move |conn, meta| {
                let f = Arc::clone(&on_acquire);
                Box::pin(async move { Ok(f.before_acquire(conn, meta).await) })
            })
    }

    async fn after_connect(&self, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        let r = role(conn).await?;
        if self.keeps(r) {
            self.checked_now();
            return Ok(());
        }
        self.lose(&r.to_string());
        Err(sqlx::Error::Configuration(
            format!(
                "the server is {r}; msgx.postgres.url wants {}",
                self.targets.attrs
            )
            .into(),
        ))
    }

    async fn before_acquire(&self, conn: &mut PgConnection, meta: PoolConnectionMetadata) -> bool {
        let since_pointed = self
            .pointed_at
            .lock()
            .map(|at| at.elapsed())
            .unwrap_or_default();
        if meta.age > since_pointed {
            return false;
        }
        let errors = ERRORS.load(Ordering::Relaxed);
        let due = self
            .checked_at
            .lock()
            .map(|at| at.elapsed() >= self.recheck)
            .unwrap_or(true)
            || errors != self.errors_seen.load(Ordering::Relaxed);
        if !due {
            if conn.ping().await.is_ok() {
                return true;
            }
            self.lose("a pooled session no longer answers");
            return false;
        }
        match role(conn).await {
            Ok(r) if self.keeps(r) => {
                self.checked_now();
                self.errors_seen.store(errors, Ordering::Relaxed);
                true
            }
            Ok(r) => {
                self.lose(&r.to_string());
                false
            }
            Err(e) => {
                self.lose(&e.to_string());
                false
            }
        }
    }

    /// Points `pool` at host `index`; sessions on another host go.
    fn point(&self, pool: &PgPool, index: usize) {
        if self.current.swap(index, Ordering::SeqCst) == index {
            return;
        }
        pool.set_connect_options(self.targets.hosts[index].options.clone());
        if let Ok(mut at) = self.pointed_at.lock() {
            *at = Instant::now();
        }
        tracing::warn!(
            host = %self.targets.hosts[index].name,
            "PostgreSQL pool re-pointed"
        );
    }

    /// Whether a new session on the pool's host finds a server it keeps.
    async fn current_still_suitable(&self) -> bool {
        let t = &self.targets.hosts[self.current.load(Ordering::Relaxed)];
        let want = match self.targets.attrs {
            TargetSessionAttrs::PreferStandby => TargetSessionAttrs::Any,
            a => a,
        };
        match self.targets.try_host(t, want).await {
            Ok(conn) => {
                let _ = conn.close().await;
                true
            }
            Err(_) => false,
        }
    }

    /// Marks the pool's host as to be chosen (a pool made before it was).
    pub fn resolve_soon(&self) {
        self.unresolved.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    /// Resolves the host list whenever a check lost the host or an error was
    /// noted, and re-points `pool`; retries with a growing pause (up to the
    /// recheck interval) while no host is suitable. Ends when the pool is
    /// closed; it holds a handle to the pool until then.
    pub async fn watch(self: Arc<Self>, pool: PgPool) {
        let mut seen = ERRORS.load(Ordering::Relaxed);
        loop {
            let noted = ERROR_SEEN.notified();
            tokio::pin!(noted);
            noted.as_mut().enable();
            let now = ERRORS.load(Ordering::Relaxed);
            if now == seen && !self.unresolved.load(Ordering::SeqCst) {
                tokio::select! {
                    _ = pool.close_event() => return,
                    _ = self.wake.notified() => {}
                    _ = noted => {}
                }
            }
            if pool.is_closed() {
                return;
            }
            seen = ERRORS.load(Ordering::Relaxed);
            // After a noted error the pool's own host is asked first: while
            // it is still suitable the pool stays (an earlier host of the
            // list that is writable again does not take it back).
            if !self.unresolved.load(Ordering::SeqCst) && self.current_still_suitable().await {
                self.checked_now();
                continue;
            }
            let mut pause = Duration::from_millis(100);
            loop {
                match self.targets.connect().await {
                    Ok(chosen) => {
                        self.point(&pool, chosen.index);
                        self.checked_now();
                        self.unresolved.store(false, Ordering::SeqCst);
                        let _ = chosen.conn.close().await;
                        break;
                    }
                    Err(passed) => {
                        tracing::warn!(
                            hosts = %describe(&passed),
                            wanted = %self.targets.attrs,
                            "No PostgreSQL host of msgx.postgres.url is suitable; trying again"
                        );
                        self.unresolved.store(true, Ordering::SeqCst);
                        tokio::select! {
                            _ = pool.close_event() => return,
                            _ = tokio::time::sleep(pause) => {}
                        }
                        pause = (pause * 2).min(self.recheck.max(Duration::from_millis(100)));
                    }
                }
            }
        }
    }
}

/// `host: why; host: why` for messages.
pub fn describe(passed: &[(String, Passed)]) -> String {
    passed
        .iter()
        .map(|(host, why)| match why {
            Passed::Failed(e) => format!("{host}: {e}"),
            Passed::Unsuitable(r) => format!("{host}: {r}"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
