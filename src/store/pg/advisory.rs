//! PostgreSQL advisory locks (design §4.5, PRE-5): the
//! statements behind the instance and job locks (instance_lock.rs) and the
//! MessageLifecycleGate (backfill/gate.rs). Only this database's holders
//! count: advisory locks are per database.

use sqlx::{Executor, PgConnection, Postgres, Row};

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

/// True when backend `pid` holds the session lock `key` right now.
pub async fn lock_held<'e, E>(executor: E, key: LockKey, pid: i32) -> Result<bool, sqlx::Error>
where
    E: Executor<'e, Database = Postgres>,
{
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
         AND classid = $1::int::oid AND objid = $2::int::oid AND objsubid = 2 \
         AND pid = $3 AND granted)",
    )
    .bind(key.namespace)
    .bind(key.id)
    .bind(pid)
    .fetch_one(executor)
    .await
}

/// Names the session (`application_name`, shown to other holders' callers).
pub async fn session_name_set(conn: &mut PgConnection, name: &str) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT set_config('application_name', $1, false)")
        .bind(name)
        .execute(conn)
        .await?;
    Ok(())
}

/// What one try for a session lock answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TryLock {
    /// The lock is now held by this session.
    pub got: bool,
    /// This session's backend pid.
    pub pid: i32,
}

/// Tries once to take the session lock `key` on `conn`.
pub async fn lock_try(conn: &mut PgConnection, key: LockKey) -> Result<TryLock, sqlx::Error> {
    let row = sqlx::query("SELECT pg_try_advisory_lock($1, $2) AS got, pg_backend_pid() AS pid")
        .bind(key.namespace)
        .bind(key.id)
        .fetch_one(conn)
        .await?;
    Ok(TryLock {
        got: row.try_get("got")?,
        pid: row.try_get("pid")?,
    })
}

/// Releases the session lock `key` held on `conn`.
pub async fn lock_release(conn: &mut PgConnection, key: LockKey) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_advisory_unlock($1, $2)")
        .bind(key.namespace)
        .bind(key.id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Who holds `key` now, if anyone.
pub async fn holder_find<'e, E>(executor: E, key: LockKey) -> Result<Option<Holder>, sqlx::Error>
where
    E: Executor<'e, Database = Postgres>,
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

/// Sets `lock_timeout` for the rest of the open transaction on `conn`.
pub async fn lock_timeout_set(conn: &mut PgConnection, millis: u64) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT set_config('lock_timeout', $1, true)")
        .bind(format!("{millis}ms"))
        .execute(conn)
        .await?;
    Ok(())
}

/// Takes the transaction-level lock `key` on `conn`, waiting at most the
/// transaction's `lock_timeout` (past it: SQLSTATE 55P03).
pub async fn xact_lock_take(conn: &mut PgConnection, key: LockKey) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
        .bind(key.namespace)
        .bind(key.id)
        .execute(conn)
        .await?;
    Ok(())
}

/// True when some session of this database is waiting for `key` right now.
pub async fn waiter_exists<'e, E>(executor: E, key: LockKey) -> Result<bool, sqlx::Error>
where
    E: Executor<'e, Database = Postgres>,
{
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
         AND classid = $1::int::oid AND objid = $2::int::oid AND objsubid = 2 AND NOT granted \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))",
    )
    .bind(key.namespace)
    .bind(key.id)
    .fetch_one(executor)
    .await
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
