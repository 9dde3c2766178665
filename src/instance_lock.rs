//! Single active instance (design §4.5, PRE-5).
//!
//! A dedicated, unpooled PostgreSQL session holds a session-level advisory
//! lock. The *instance lock* is taken by the daemon and by `msgx run` of a
//! pipeline job; a maintenance job takes a *job lock* of its own, so a
//! cron-window run may go beside the daemon but never beside another run of
//! the same job.
//!
//! Losing the lock session (a network cut, `pg_terminate_backend`, a database
//! restart) releases the lock at once on the server. The holder finds out by
//! re-checking its session every `msgx.daemon.lock-check-interval`; a
//! [`LockGuard`] flips to lost, so jobs stop before their next write. For a
//! hard fence, a job can also call [`Fence::verify`] inside its own
//! transaction: it proves, on the server, that the holder's session still has
//! the lock at that moment. Together these keep two active writers apart.
//!
//! With a host list (or `target_session_attrs`) in `msgx.postgres.url`, the
//! lock session is opened on a host that takes writes, and each check also
//! requires that server to still be one: a primary turned read-only or
//! demoted loses the lock, so the instance stops as on any lost lock instead
//! of holding it on a server its pool has left.

use crate::store::pg::advisory;
use crate::store::pg::hosts::TargetSessionAttrs;
// The key and holder types and the statements live in the store; `holder`
// answers who holds a key now, in this database.
pub use crate::store::pg::advisory::{Holder, LockKey, holder_find as holder};
use sqlx::{Connection, Executor, PgConnection};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::{Mutex, watch};

/// Errors of the lock session.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot open the lock session: {0}")]
    Connect(crate::store::pg::StoreError),
    #[error("lock session query failed: {0}")]
    Query(#[from] sqlx::Error),
}

/// The proof that a lock is still held, checkable inside any transaction.
#[derive(Debug, Clone, Copy)]
pub struct Fence {
    key: LockKey,
    pid: i32,
}

impl Fence {
    /// `(namespace, id, holder pid)`, for checks folded into other statements.
    pub fn parts(&self) -> (i32, i32, i32) {
        (self.key.namespace, self.key.id, self.pid)
    }

    /// True when the holder's session still holds the lock right now.
    pub async fn verify<'e, E>(&self, executor: E) -> Result<bool, sqlx::Error>
    where
        E: Executor<'e, Database = sqlx::Postgres>,
    {
        advisory::lock_held(executor, self.key, self.pid).await
    }
}

/// A held advisory lock on its own session.
pub struct AdvisoryLock {
    key: LockKey,
    conn: Arc<Mutex<PgConnection>>,
    pid: i32,
    /// The kind of server the session must stay on (`None`: a single host
    /// without `target_session_attrs`, not checked).
    server: Option<TargetSessionAttrs>,
    lost_tx: watch::Sender<bool>,
    released: AtomicBool,
}

impl std::fmt::Debug for AdvisoryLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdvisoryLock")
            .field("key", &self.key)
            .field("pid", &self.pid)
            .finish()
    }
}

impl AdvisoryLock {
    /// Tries once. `Ok(None)` means another session holds it.
    pub async fn try_acquire(
        url: &str,
        key: LockKey,
        application_name: &str,
    ) -> Result<Option<AdvisoryLock>, LockError> {
        // The pool's options (TLS included): one place builds them.
        let mut conn = crate::store::pg::connect_session(url)
            .await
            .map_err(LockError::Connect)?;
        advisory::session_name_set(&mut conn, application_name).await?;
        let server = crate::store::pg::writer_targets(url)
            .ok()
            .filter(|t| t.checked())
            .map(|t| t.attrs());
        let advisory::TryLock { got, pid } = advisory::lock_try(&mut conn, key).await?;
        if !got {
            let _ = conn.close().await;
            return Ok(None);
        }
        let (lost_tx, _) = watch::channel(false);
        Ok(Some(AdvisoryLock {
            key,
            conn: Arc::new(Mutex::new(conn)),
            pid,
            server,
            lost_tx,
            released: AtomicBool::new(false),
        }))
    }

    /// The backend pid of the lock session.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The key.
    pub fn key(&self) -> LockKey {
        self.key
    }

    /// A fence for in-transaction checks.
    pub fn fence(&self) -> Fence {
        Fence {
            key: self.key,
            pid: self.pid,
        }
    }

    /// A guard that turns lost when a check fails.
    pub fn guard(&self) -> LockGuard {
        LockGuard {
            lost: self.lost_tx.subscribe(),
            fence: Some(self.fence()),
        }
    }

    /// Re-checks the session: it must answer, still hold the lock and, when
    /// the URL names the kind of server, still be on one. On any failure the
    /// lock is marked lost (for good).
    pub async fn check(&self) -> bool {
        if *self.lost_tx.borrow() {
            return false;
        }
        let ok = {
            let mut conn = self.conn.lock().await;
            let fence = self.fence();
            let checks = async {
                if !fence.verify(&mut *conn).await? {
                    return Ok(false);
                }
                match self.server {
                    Some(want) => {
                        let role = crate::store::pg::ha::role(&mut conn).await?;
                        if !want.accepts(role) {
                            tracing::error!(
                                %role,
                                wanted = %want,
                                "The lock session's server no longer takes writes"
                            );
                        }
                        Ok(want.accepts(role))
                    }
                    None => Ok::<_, sqlx::Error>(true),
                }
            };
            matches!(
                tokio::time::timeout(Duration::from_secs(10), checks).await,
                Ok(Ok(true))
            )
        };
        if !ok {
            self.lost_tx.send_replace(true);
        }
        ok
    }

    /// Runs [`check`](Self::check) every `every` until the lock is lost or
    /// released. Spawn it beside the holder.
    pub async fn watch(self: Arc<Self>, every: Duration) {
        loop {
            tokio::time::sleep(every).await;
            if self.released.load(Ordering::SeqCst) {
                return;
            }
            if !self.check().await {
                tracing::error!(
                    lock = self.key.name,
                    pid = self.pid,
                    "Lock session lost: stopping all writes"
                );
                return;
            }
        }
    }

    /// True once a check failed.
    pub fn is_lost(&self) -> bool {
        *self.lost_tx.borrow()
    }

    /// Releases the lock and closes the session.
    pub async fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
        let mut conn = self.conn.lock().await;
        let _ = advisory::lock_release(&mut conn, self.key).await;
    }
}

/// What a running job consults before each write: the lock it runs under
/// (lost = stop) and the process's shutdown request (stop between batches).
#[derive(Debug, Clone)]
pub struct LockGuard {
    lost: watch::Receiver<bool>,
    fence: Option<Fence>,
}

impl LockGuard {
    /// A guard that is never lost, for code paths that hold no lock
    /// (read-only commands, unit tests of pure parts).
    pub fn unlocked() -> Self {
        let (_tx, rx) = watch::channel(false);
        LockGuard {
            lost: rx,
            fence: None,
        }
    }

    /// True while the lock is held (as far as the last check knows).
    pub fn is_active(&self) -> bool {
        !*self.lost.borrow()
    }

    /// The fence, when running under a lock.
    pub fn fence(&self) -> Option<Fence> {
        self.fence
    }
}
