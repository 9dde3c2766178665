//! `MessageLifecycleGate` (design §9.1, §5.3): replay and backfill exclude
//! each other.
//!
//! Why: the scan must never write the mailbox mark of a message that a
//! replay has just put back to PENDING — the mark lets the mailbox owner
//! purge the raw text (C-8) that the replayed message is about to be read
//! from again. And a replay must not reset a row between the scan's mark
//! and its BACKFILL_AT record.
//!
//! How: replay runs as a CLI process, backfill inside the daemon (or a
//! `msgx run`), so an in-process mutex cannot work. The gate is a
//! **transaction-level PostgreSQL advisory lock** on one dedicated key
//! (namespace "ms", id = the stable hash of `message-lifecycle-gate`, see
//! [`key`]):
//!
//! - the replay transaction takes it before it locks and updates its rows;
//! - the scan takes it in a short transaction around **each round's**
//!   re-check + mailbox mark (one statement for the round) + PROC_STATE
//!   record, and re-checks the rows under `FOR UPDATE` after taking it (a row
//!   that a replay moved is skipped).
//!
//! The lock ends with the transaction (commit, rollback, or a lost session),
//! so a crash never leaves it held. Each hold spans one bounded mailbox call
//! (`msgx.mailbox.timeout`; the round's marks are one call), so a replay
//! waits at most that long even when the mailbox hangs. Waiting is
//! bounded by `lock_timeout`; past it the caller gets [`GateError::Busy`].

use crate::instance_lock::{self, LockKey};
use crate::store::pg::advisory;
use sqlx::{PgPool, Postgres, Transaction};
use std::time::Duration;

/// The gate's advisory lock key. Distinct from the instance lock and from
/// every job lock (unit-tested).
pub fn key() -> LockKey {
    LockKey::job("message-lifecycle-gate")
}

/// How long a gate user waits for the other side: one mailbox call (the
/// longest the scan holds the gate) twice over, plus slack.
pub fn default_wait(mailbox_timeout: Duration) -> Duration {
    mailbox_timeout * 2 + Duration::from_secs(5)
}

/// Why the gate could not be entered.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error(
        "the message lifecycle gate is held by {holder} (replay and backfill exclude each other); \
         gave up after {waited:?}, try again"
    )]
    Busy { holder: String, waited: Duration },
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
}

/// Begins a transaction that holds the gate until it ends, waiting at most
/// `wait` for the other side. `lock_timeout` stays set for the transaction,
/// so the row locks taken inside it are bounded too.
pub async fn enter(
    pool: &PgPool,
    wait: Duration,
) -> Result<Transaction<'static, Postgres>, GateError> {
    let mut tx = pool.begin().await?;
    let millis = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
    advisory::lock_timeout_set(&mut tx, millis).await?;
    let k = key();
    let locked = advisory::xact_lock_take(&mut tx, k).await;
    match locked {
        Ok(_) => Ok(tx),
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("55P03") => {
            drop(tx);
            let holder = instance_lock::holder(pool, k)
                .await?
                .map(|h| h.to_string())
                .unwrap_or_else(|| "another session".into());
            Err(GateError::Busy {
                holder,
                waited: wait,
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// True when some session is waiting for the gate right now (tests and
/// diagnostics: proves that a caller is blocked on it).
pub async fn has_waiter(pool: &PgPool) -> Result<bool, sqlx::Error> {
    advisory::waiter_exists(pool, key()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_key_is_its_own() {
        let gate = key();
        assert_ne!(gate.id, LockKey::instance().id);
        let manifests = crate::jobs::manifest::all().expect("manifests load");
        assert!(!manifests.is_empty());
        for m in manifests {
            let name: &'static str = Box::leak(m.name.into_boxed_str());
            assert_ne!(gate.id, LockKey::job(name).id, "{name}");
        }
    }

    #[test]
    fn waits_for_one_mailbox_call_twice_over() {
        assert_eq!(
            default_wait(Duration::from_secs(10)),
            Duration::from_secs(25)
        );
    }
}
