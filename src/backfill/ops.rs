//! Operator commands on abandoned backfills (design §6.2, §6.3: recovery by
//! hand stays possible, §9.3): list them, `reopen` them so the scan retries,
//! or `reconcile` them (the operator confirmed the row with the mailbox owner;
//! the archive job needs that before it may archive an abandoned row). All or
//! nothing: if any requested message is refused, nothing changes. Each change
//! is one transaction with its BACKFILL_ACTION row.

use super::Refusal;
use crate::store::pg::backfill::{self as store, AbandonedRow};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;

/// Which abandoned rows to reopen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Ids(Vec<i64>),
    /// Every abandoned row.
    All,
}

/// Why an operator command did not change anything.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error("refused; nothing was changed")]
    Refused(Vec<Refusal>),
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
}

/// What an operator command changed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OpsOutcome {
    /// The messages changed.
    pub changed: Vec<i64>,
    /// Requested messages left as they were (already reconciled).
    pub unchanged: Vec<i64>,
    /// The BACKFILL_ACTION row, when something changed.
    pub action_id: Option<i64>,
}

fn not_abandoned(ids: &[i64], rows: &[AbandonedRow]) -> Vec<Refusal> {
    super::not_found(ids, rows.iter().map(|r| r.msg_id))
        .into_iter()
        .map(|msg_id| Refusal {
            msg_id,
            why: "not an abandoned backfill (see `msgx backfill abandoned`)".into(),
            forceable: false,
        })
        .collect()
}

/// The abandoned list (`msgx backfill abandoned`).
pub async fn abandoned(pool: &PgPool) -> Result<Vec<AbandonedRow>, OpsError> {
    Ok(store::abandoned(pool).await?)
}

/// Clears the abandonment of the target rows (and any reconciliation of
/// it), so the next scan retries them at once. A row past R gets one
/// attempt per scan again; a failure abandons it again at once, so reopen
/// after the mailbox is healthy. Recorded as `BACKFILL_REOPEN`.
pub async fn reopen(
    pool: &PgPool,
    now: DateTime<Utc>,
    target: &Target,
    reason: Option<&str>,
    actor: &str,
) -> Result<OpsOutcome, OpsError> {
    let mut tx = pool.begin().await?;
    let ids = match target {
        Target::Ids(ids) => {
            let rows = store::lock_abandoned(&mut tx, ids).await?;
            let refused = not_abandoned(ids, &rows);
            if !refused.is_empty() {
                return Err(OpsError::Refused(refused));
            }
            rows.into_iter().map(|r| r.msg_id).collect::<Vec<_>>()
        }
        Target::All => store::lock_all_abandoned(&mut tx).await?,
    };
    if ids.is_empty() {
        return Ok(OpsOutcome::default());
    }
    store::reopen(&mut tx, &ids, now).await?;
    let action_id =
        store::record_action(&mut tx, now, actor, "BACKFILL_REOPEN", &ids, reason).await?;
    tx.commit().await?;
    tracing::warn!(count = ids.len(), %actor, "Reopened abandoned backfills");
    Ok(OpsOutcome {
        changed: ids,
        unchanged: Vec::new(),
        action_id: Some(action_id),
    })
}

/// Records BACKFILL_RECONCILED_AT (and the note) for abandoned rows not yet
/// reconciled; already reconciled rows stay as they were. Recorded as
/// `BACKFILL_RECONCILE` with the note as the reason.
pub async fn reconcile(
    pool: &PgPool,
    now: DateTime<Utc>,
    ids: &[i64],
    note: Option<&str>,
    actor: &str,
) -> Result<OpsOutcome, OpsError> {
    let mut tx = pool.begin().await?;
    let rows = store::lock_abandoned(&mut tx, ids).await?;
    let refused = not_abandoned(ids, &rows);
    if !refused.is_empty() {
        return Err(OpsError::Refused(refused));
    }
    let (done, open): (Vec<AbandonedRow>, Vec<AbandonedRow>) = rows
        .into_iter()
        .partition(|r| r.backfill_reconciled_at.is_some());
    let changed: Vec<i64> = open.iter().map(|r| r.msg_id).collect();
    let unchanged: Vec<i64> = done.iter().map(|r| r.msg_id).collect();
    if changed.is_empty() {
        return Ok(OpsOutcome {
            changed,
            unchanged,
            action_id: None,
        });
    }
    store::reconcile(&mut tx, &changed, note, now).await?;
    let action_id =
        store::record_action(&mut tx, now, actor, "BACKFILL_RECONCILE", &changed, note).await?;
    tx.commit().await?;
    tracing::info!(count = changed.len(), %actor, "Reconciled abandoned backfills");
    Ok(OpsOutcome {
        changed,
        unchanged,
        action_id: Some(action_id),
    })
}
