//! `ReplayService` (design §9.1; §5.3: a replay is one batch statement): moves
//! FAILED / DEAD messages back to PENDING so the pump processes them again.
//!
//! - Only the whitelist replays: CODEC_ERROR, INFRA, UNSUPPORTED, EXHAUSTED,
//!   DATA.
//!   MALFORMED and PROTOCOL replay only with `force` and a reason, recorded
//!   as `REPLAY_FORCED`. SUCCEEDED / SKIPPED (and PENDING, ARCHIVED) never
//!   replay. The rules are the lifecycle type's
//!   ([`replay_refusal`](crate::domain::proc_state::replay_refusal)).
//! - All or nothing: if any requested message is refused, nothing changes.
//! - One UPDATE ([`proc_state::replay`]) inside the
//!   [`MessageLifecycleGate`](super::gate) transaction, with the audit row.
//!   It resets attempts, the retry instant, the error, outcome and
//!   FINISHED_AT, and every backfill field of the old terminal state: the
//!   next terminal state registers a fresh intent. A mark already written
//!   stays in the mailbox (msgx never clears one); the scan later finds it
//!   "already marked" and confirms without overwriting. IDENTITY_KEY is kept,
//!   so the replayed message is not a duplicate of itself.
//! - Replay does not restore history order ([`ORDERING_WARNING`], CLM-3).

use super::Refusal;
use super::gate::{self, GateError};
use crate::clock::SharedClock;
use crate::domain::ErrorClass;
use crate::domain::proc_state::{class_refusal, replay_refusal, replayable_classes};
use crate::store::pg::backfill as audit;
use crate::store::pg::proc_state::{self, ReplayRow};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use std::time::Duration;

/// The CLM-3 warning, printed before every replay (design §9.1).
pub const ORDERING_WARNING: &str = "WARNING (CLM-3): replay does not restore history order. \
Messages after these ones may already have been processed; the replayed messages will be \
applied on top of that newer state. Evaluate which state they would overwrite and the version \
protection before replaying.";

/// Which messages to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These MSG_IDs.
    Ids(Vec<i64>),
    /// Every FAILED/DEAD message of this class.
    Class(ErrorClass),
}

/// A replay request.
#[derive(Debug, Clone)]
pub struct ReplayRequest {
    pub selection: Selection,
    /// Allow MALFORMED / PROTOCOL (needs `reason`).
    pub force: bool,
    /// Why (required with `force`; recorded).
    pub reason: Option<String>,
    /// Who (recorded).
    pub actor: String,
    /// Report only; change and record nothing.
    pub dry_run: bool,
}

/// What a replay did (or, dry, would do).
#[derive(Debug, Clone, Serialize)]
pub struct ReplayOutcome {
    /// The rows replayed (as they were before).
    pub rows: Vec<ReplayRow>,
    /// True when a MALFORMED / PROTOCOL row was forced.
    pub forced: bool,
    pub dry_run: bool,
    /// Rows whose old mark was already confirmed in the mailbox: the owner
    /// may have purged their raw text (C-7), in which case the replay ends
    /// DEAD(MALFORMED, raw-missing).
    pub already_marked: Vec<i64>,
    /// The BACKFILL_ACTION row, when something changed.
    pub action_id: Option<i64>,
}

/// Why a replay did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("replay refused; nothing was changed")]
    Refused(Vec<Refusal>),
    #[error("--force needs --reason: a forced replay is recorded with its reason")]
    ForceWithoutReason,
    #[error(transparent)]
    Gate(#[from] GateError),
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
    #[error("replay changed {changed} row(s) but {expected} were locked; rolled back")]
    Mismatch { expected: usize, changed: u64 },
}

/// Replays messages (design §9.1).
pub struct ReplayService<'a> {
    pub pool: &'a PgPool,
    pub clock: &'a SharedClock,
    /// How long to wait for the gate (a scan holds it per row).
    pub gate_wait: Duration,
}

impl ReplayService<'_> {
    /// Enters the gate, plans, applies (unless dry or refused), records.
    pub async fn replay(&self, req: &ReplayRequest) -> Result<ReplayOutcome, ReplayError> {
        if req.force && req.reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
            return Err(ReplayError::ForceWithoutReason);
        }
        let mut tx = gate::enter(self.pool, self.gate_wait).await?;
        let outcome = apply_in(&mut tx, req, self.clock.now()).await;
        match &outcome {
            Ok(o) if !o.dry_run && !o.rows.is_empty() => tx.commit().await?,
            _ => tx.rollback().await?,
        }
        outcome
    }
}

/// The replay inside a transaction that already holds the gate (callers:
/// [`ReplayService::replay`]; tests that hold the gate themselves). Does
/// not commit.
pub async fn apply_in(
    conn: &mut PgConnection,
    req: &ReplayRequest,
    now: DateTime<Utc>,
) -> Result<ReplayOutcome, ReplayError> {
    let rows = match &req.selection {
        Selection::Ids(ids) => {
            let rows = proc_state::lock_for_replay(conn, ids).await?;
            let mut refused: Vec<Refusal> = super::not_found(ids, rows.iter().map(|r| r.msg_id))
                .into_iter()
                .map(|msg_id| Refusal {
                    msg_id,
                    why: "no such message in PROC_STATE".into(),
                    forceable: false,
                })
                .collect();
            refused.extend(rows.iter().filter_map(|r| {
                replay_refusal(r.state, r.class(), req.force).map(|refusal| Refusal {
                    msg_id: r.msg_id,
                    why: refusal.why,
                    forceable: refusal.forceable,
                })
            }));
            if !refused.is_empty() {
                refused.sort_by_key(|r| r.msg_id);
                return Err(ReplayError::Refused(refused));
            }
            rows
        }
        Selection::Class(class) => {
            if let Some(refusal) = class_refusal(*class, req.force) {
                return Err(ReplayError::Refused(vec![Refusal {
                    msg_id: 0,
                    why: refusal.why,
                    forceable: refusal.forceable,
                }]));
            }
            proc_state::lock_class_for_replay(conn, *class).await?
        }
    };
    let forced = rows
        .iter()
        .any(|r| r.class().is_some_and(ErrorClass::replays_forced_only));
    let already_marked = rows
        .iter()
        .filter(|r| r.backfill_at.is_some())
        .map(|r| r.msg_id)
        .collect();
    let mut outcome = ReplayOutcome {
        rows,
        forced,
        dry_run: req.dry_run,
        already_marked,
        action_id: None,
    };
    if req.dry_run || outcome.rows.is_empty() {
        return Ok(outcome);
    }
    let ids: Vec<i64> = outcome.rows.iter().map(|r| r.msg_id).collect();
    let changed = proc_state::replay(conn, &ids, &replayable_classes(req.force), now).await?;
    if changed != ids.len() as u64 {
        return Err(ReplayError::Mismatch {
            expected: ids.len(),
            changed,
        });
    }
    let action = if forced { "REPLAY_FORCED" } else { "REPLAY" };
    outcome.action_id = Some(
        audit::record_action(conn, now, &req.actor, action, &ids, req.reason.as_deref()).await?,
    );
    tracing::warn!(
        count = ids.len(),
        forced,
        actor = %req.actor,
        "Replayed messages back to PENDING (history order is not restored, CLM-3)"
    );
    Ok(outcome)
}
