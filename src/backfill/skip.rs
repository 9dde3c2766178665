//! `SkipService` (design §5.4, C-27): backlog rows an operator has decided
//! not to process are set SKIPPED with a recorded reason, and then backfill
//! like any terminal row. There is no bulk DELETE.
//!
//! - Only PENDING and FAILED rows move; rows in any other state (terminal,
//!   ARCHIVED) and IDs without a row are reported and left alone.
//! - One transaction: lock the rows, record `SKIP` in BACKFILL_ACTION (the
//!   message-lifecycle audit that replay and reopen use), then one UPDATE
//!   ([`proc_state::skip`]) that sets SKIPPED, `OUTCOME_REASON =
//!   operator-skip #<action>: <reason>` and the backfill intent, so the next
//!   scan writes the mailbox mark (§5.3: terminal state and intent together).
//! - No lifecycle gate: skip touches only unfinished rows, which the scan
//!   never marks, and the row locks order it against replay and the pump
//!   (whose writes all require PENDING/FAILED, so a skipped row is left as
//!   it is by a processor that comes second).
//! - A skipped head no longer holds the queue: the pump goes on with the
//!   next message. The skipped message itself is never applied.

use super::id_ranges;
use crate::domain::ProcState;
use crate::store::pg::backfill as audit;
use crate::store::pg::proc_state::{self, ReplayRow};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use std::collections::BTreeMap;

/// Printed before every skip.
pub const SKIP_WARNING: &str = "WARNING (§5.4): a skipped message is never processed; the \
flights it would have changed keep their current state, and its mailbox mark is written as for \
any finished message.";

/// Which rows to skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IdRange {
    pub first: i64,
    pub last: i64,
}

impl std::str::FromStr for IdRange {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{s:?} is not a range A-B of MSG_IDs with A ≤ B");
        let (a, b) = s.trim().split_once('-').ok_or_else(bad)?;
        let first: i64 = a.trim().parse().map_err(|_| bad())?;
        let last: i64 = b.trim().parse().map_err(|_| bad())?;
        if first > last || first < 0 {
            return Err(bad());
        }
        Ok(IdRange { first, last })
    }
}

/// Which rows to skip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Ids(Vec<i64>),
    Range(IdRange),
}

/// A skip request.
#[derive(Debug, Clone)]
pub struct SkipRequest {
    pub selection: Selection,
    /// Why (required; recorded with the action and in OUTCOME_REASON).
    pub reason: String,
    /// Who (recorded).
    pub actor: String,
    /// Report only; change and record nothing.
    pub dry_run: bool,
}

/// A row left alone, and the state that kept it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftAlone {
    pub msg_id: i64,
    pub state: ProcState,
}

/// What a skip did (or, dry, would do).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SkipOutcome {
    /// The rows skipped, as they were before.
    pub skipped: Vec<ReplayRow>,
    /// By IDs: the requested rows in another state.
    pub left_alone: Vec<LeftAlone>,
    /// By range: rows of the range in another state, by state.
    pub left_alone_by_state: BTreeMap<String, i64>,
    /// By IDs: requested IDs with no PROC_STATE row.
    pub not_found: Vec<i64>,
    /// By range: IDs of the range with no PROC_STATE row (not yet enqueued,
    /// or holes); processed normally if they are enqueued later.
    pub not_found_in_range: i64,
    pub dry_run: bool,
    /// The BACKFILL_ACTION row, when something changed.
    pub action_id: Option<i64>,
}

/// Why a skip did not happen.
#[derive(Debug, thiserror::Error)]
pub enum SkipError {
    #[error("--reason is required and may not be empty (it is recorded with the action)")]
    NoReason,
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
    #[error("skip changed {changed} row(s) but {expected} were locked; rolled back")]
    Mismatch { expected: usize, changed: u64 },
}

/// Skips backlog rows (design §5.4).
pub struct SkipService<'a> {
    pub pool: &'a PgPool,
    pub now: DateTime<Utc>,
}

impl SkipService<'_> {
    /// Locks, plans, applies (unless dry or empty) and records, in one
    /// transaction.
    pub async fn skip(&self, req: &SkipRequest) -> Result<SkipOutcome, SkipError> {
        if req.reason.trim().is_empty() {
            return Err(SkipError::NoReason);
        }
        let mut tx = self.pool.begin().await?;
        let outcome = apply_in(&mut tx, req, self.now).await;
        match &outcome {
            Ok(o) if !o.dry_run && !o.skipped.is_empty() => tx.commit().await?,
            _ => tx.rollback().await?,
        }
        outcome
    }
}

/// The skip inside an open transaction; does not commit.
pub async fn apply_in(
    conn: &mut PgConnection,
    req: &SkipRequest,
    now: DateTime<Utc>,
) -> Result<SkipOutcome, SkipError> {
    let mut outcome = SkipOutcome {
        dry_run: req.dry_run,
        ..SkipOutcome::default()
    };
    match &req.selection {
        Selection::Ids(ids) => {
            let rows = proc_state::lock_for_replay(conn, ids).await?;
            outcome.not_found = super::not_found(ids, rows.iter().map(|r| r.msg_id));
            outcome.not_found.sort_unstable();
            outcome.not_found.dedup();
            let (skip, keep): (Vec<ReplayRow>, Vec<ReplayRow>) =
                rows.into_iter().partition(|r| r.state.is_unfinished());
            outcome.skipped = skip;
            outcome.left_alone = keep
                .into_iter()
                .map(|r| LeftAlone {
                    msg_id: r.msg_id,
                    state: r.state,
                })
                .collect();
        }
        Selection::Range(r) => {
            outcome.skipped = proc_state::lock_unfinished_between(conn, r.first, r.last).await?;
            let mut rows = 0;
            for (state, n) in proc_state::count_states_between(conn, r.first, r.last).await? {
                rows += n;
                if !state.is_unfinished() {
                    outcome
                        .left_alone_by_state
                        .insert(state.as_str().to_string(), n);
                }
            }
            outcome.not_found_in_range = (r.last - r.first + 1).saturating_sub(rows);
        }
    }
    if req.dry_run || outcome.skipped.is_empty() {
        return Ok(outcome);
    }
    let ids: Vec<i64> = outcome.skipped.iter().map(|r| r.msg_id).collect();
    let action_id =
        audit::record_action(conn, now, &req.actor, "SKIP", &ids, Some(&req.reason)).await?;
    let reason = format!("operator-skip #{action_id}: {}", req.reason.trim());
    let changed = proc_state::skip(conn, &ids, &reason, now).await?;
    if changed != ids.len() as u64 {
        return Err(SkipError::Mismatch {
            expected: ids.len(),
            changed,
        });
    }
    outcome.action_id = Some(action_id);
    tracing::warn!(
        count = ids.len(),
        action_id,
        actor = %req.actor,
        ids = %id_ranges(&ids),
        "Skipped backlog messages (never processed; backfilled as SKIPPED)"
    );
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_two_ids_in_order() {
        assert_eq!(
            "10-12".parse::<IdRange>(),
            Ok(IdRange {
                first: 10,
                last: 12
            })
        );
        assert_eq!(
            " 7 - 7 ".parse::<IdRange>(),
            Ok(IdRange { first: 7, last: 7 })
        );
        for bad in ["12-10", "10", "a-b", "-3-4", "1-"] {
            assert!(bad.parse::<IdRange>().is_err(), "{bad}");
        }
    }
}
