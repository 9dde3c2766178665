//! The opening of a processor transaction's critical section (design §5.3,
//! INV-18): one statement takes PIPELINE_LOCK, locks the message rows and
//! proves the run's lock session still holds the instance lock (the fence).
//! Every pipeline write transaction starts here, so a run that lost its lock
//! never writes.

use crate::domain::ProcState;
use crate::jobs::{JobContext, JobError};

/// Opens the critical section for one message: its row's state, or `None`
/// when the row does not exist. Lock lost → [`JobError::LockLost`].
pub async fn open_processing(
    ctx: &JobContext,
    conn: &mut sqlx::PgConnection,
    msg_id: i64,
) -> Result<Option<ProcState>, JobError> {
    Ok(open_group(ctx, conn, &[msg_id])
        .await?
        .into_iter()
        .next()
        .map(|(_, state)| state))
}

/// [`open_processing`] for a group commit: every row of `msg_ids` locked in
/// the same statement; `(MSG_ID, state)` of those that exist, in MSG_ID
/// order.
pub async fn open_group(
    ctx: &JobContext,
    conn: &mut sqlx::PgConnection,
    msg_ids: &[i64],
) -> Result<Vec<(i64, ProcState)>, JobError> {
    if !ctx.guard.is_active() {
        return Err(JobError::LockLost);
    }
    let fence = ctx.guard.fence().map(|f| f.parts());
    let rows = crate::store::pg::proc_state::open_group(conn, msg_ids, fence).await?;
    if rows.iter().any(|r| !r.fenced) {
        return Err(JobError::LockLost);
    }
    Ok(rows.into_iter().map(|r| (r.msg_id, r.state)).collect())
}
