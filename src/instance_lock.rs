//! Single active instance (design §4.5, PRE-5; issue 2, item 6).
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

use sqlx::{Connection, Executor, PgConnection, Row};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::{Mutex, watch};

/// First key of every msgx advisory lock ("ms").
const NAMESPACE: i32 = 0x6D73;
/// Second key of the instance lock.
const INSTANCE: i32 = 1;

/// A two-part advisory lock key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockKey {
    pub namespace: i32,
    pub id: i32,
    /// Human name, for messages.
    pub name: &'static str,
}

impl LockKey {
    /// The instance lock.
    pub fn instance() -> Self {
        LockKey {
            namespace: NAMESPACE,
            id: INSTANCE,
            name: "instance",
        }
    }
    /// The lock of one maintenance job, from a stable hash of its name.
    pub fn job(name: &'static str) -> Self {
        // FNV-1a, kept positive and away from the instance id.
        let mut h: u32 = 0x811c_9dc5;
        for b in name.bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        let id = i32::try_from(h & 0x3fff_ffff).unwrap_or(2).max(2);
        LockKey {
            namespace: NAMESPACE,
            id,
            name,
        }
    }
}

/// Errors of the lock session.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot open the lock session: {0}")]
    Connect(crate::store::pg::StoreError),
    #[error("lock session query failed: {0}")]
    Query(#[from] sqlx::Error),
}

/// Who holds a lock, as PostgreSQL sees it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Holder {
    pub pid: i32,
    pub application_name: String,
    pub client_addr: Option<String>,
    pub backend_start: Option<chrono::DateTime<chrono::Utc>>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (pid {}", self.application_name, self.pid)?;
        if let Some(at) = self.backend_start {
            write!(f, ", since {}", at.format("%Y-%m-%d %H:%M:%S UTC"))?;
        }
        write!(f, ")")
    }
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
        sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
             AND classid = $1::int::oid AND objid = $2::int::oid AND objsubid = 2 \
             AND pid = $3 AND granted)",
        )
        .bind(self.key.namespace)
        .bind(self.key.id)
        .bind(self.pid)
        .fetch_one(executor)
        .await
    }
}

/// A held advisory lock on its own session.
pub struct AdvisoryLock {
    key: LockKey,
    conn: Arc<Mutex<PgConnection>>,
    pid: i32,
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
        sqlx::query("SELECT set_config('application_name', $1, false)")
            .bind(application_name)
            .execute(&mut conn)
            .await?;
        let row =
            sqlx::query("SELECT pg_try_advisory_lock($1, $2) AS got, pg_backend_pid() AS pid")
                .bind(key.namespace)
                .bind(key.id)
                .fetch_one(&mut conn)
                .await?;
        let got: bool = row.try_get("got")?;
        let pid: i32 = row.try_get("pid")?;
        if !got {
            let _ = conn.close().await;
            return Ok(None);
        }
        let (lost_tx, _) = watch::channel(false);
        Ok(Some(AdvisoryLock {
            key,
            conn: Arc::new(Mutex::new(conn)),
            pid,
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

    /// Re-checks the session: it must answer and still hold the lock. On any
    /// failure the lock is marked lost (for good).
    pub async fn check(&self) -> bool {
        if *self.lost_tx.borrow() {
            return false;
        }
        let ok = {
            let mut conn = self.conn.lock().await;
            let fence = self.fence();
            matches!(
                tokio::time::timeout(Duration::from_secs(10), fence.verify(&mut *conn)).await,
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
        let _ = sqlx::query("SELECT pg_advisory_unlock($1, $2)")
            .bind(self.key.namespace)
            .bind(self.key.id)
            .execute(&mut *conn)
            .await;
    }
}

/// Who holds `key` now, if anyone. Advisory locks are per database, so only
/// this database's holders count.
pub async fn holder<'e, E>(executor: E, key: LockKey) -> Result<Option<Holder>, sqlx::Error>
where
    E: Executor<'e, Database = sqlx::Postgres>,
{
    let row = sqlx::query(
        "SELECT a.pid, COALESCE(a.application_name, '') AS app, a.client_addr::text AS addr, \
                a.backend_start \
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
         WHERE l.locktype = 'advisory' AND l.classid = $1::int::oid AND l.objid = $2::int::oid \
           AND l.objsubid = 2 AND l.granted \
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         LIMIT 1",
    )
    .bind(key.namespace)
    .bind(key.id)
    .fetch_optional(executor)
    .await?;
    row.map(|r| {
        Ok(Holder {
            pid: r.try_get("pid")?,
            application_name: r.try_get("app")?,
            client_addr: r.try_get("addr")?,
            backend_start: r.try_get("backend_start")?,
        })
    })
    .transpose()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_keys_are_stable_and_distinct_from_the_instance() {
        let a = LockKey::job("archive-proc-state");
        assert_eq!(a, LockKey::job("archive-proc-state"));
        assert_ne!(a.id, LockKey::instance().id);
        assert_ne!(a.id, LockKey::job("snaplog-purge").id);
        assert!(a.id >= 2);
    }
}
