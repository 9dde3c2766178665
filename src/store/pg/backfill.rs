//! PROC_STATE's backfill columns (design §1.2, §6) and the BACKFILL_ACTION
//! audit table. The scan selects with the exact §6.1 predicate; each outcome
//! of §6.2 is one UPDATE, run by the scan inside the MessageLifecycleGate
//! transaction after re-checking the row under `FOR UPDATE`.

use crate::domain::proc_state::ProcState;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgPool, Row};
use std::collections::BTreeMap;

/// Why automatic backfill stopped for a row (§6.2). Abandonment is not a
/// confirmed mark: BACKFILL_AT stays NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AbandonReason {
    /// 0 rows written and the mailbox row does not exist: a certain
    /// conclusion, abandoned at once (not protected by R).
    MissingRow,
    /// The row's own attempts (timeouts, connection failures, server
    /// errors) failed from before its deadline `ENQUEUED_AT + R` until at or
    /// after it (§6.2, §6.3: the failure persisted until R):
    /// never a row that was not tried, nor one whose failures began past R.
    TransientDeadline,
}

impl AbandonReason {
    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            AbandonReason::MissingRow => "MISSING_ROW",
            AbandonReason::TransientDeadline => "TRANSIENT_DEADLINE",
        }
    }
}

/// The §6.1 scan predicate, `$1` = now, `$2` = now − R. ARCHIVED shadows
/// are excluded explicitly beside the terminal list (§9.3). Matches
/// `proc_state_backfill_idx`.
macro_rules! due_predicate {
    () => {
        "state IN ('SUCCEEDED', 'SKIPPED', 'DEAD') AND state <> 'ARCHIVED' \
         AND backfill_at IS NULL \
         AND backfill_abandoned_at IS NULL \
         AND (backfill_next_at IS NULL OR backfill_next_at <= $1 OR enqueued_at < $2)"
    };
}

/// The columns of [`AbandonedRow`].
macro_rules! abandoned_columns {
    () => {
        "msg_id, state, error_class, received_at, enqueued_at, finished_at, \
         backfill_attempts, backfill_last_error, backfill_abandoned_at, \
         backfill_abandoned_reason, backfill_reconciled_at, backfill_reconciled_note"
    };
}

/// One batch of due rows in fairness order (§6.1): `ORDER BY
/// BACKFILL_ATTEMPTS, MSG_ID LIMIT backfill-batch`.
pub async fn due(
    pool: &PgPool,
    now: DateTime<Utc>,
    overdue_before: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(concat!(
        "SELECT msg_id FROM proc_state WHERE ",
        due_predicate!(),
        " ORDER BY backfill_attempts, msg_id LIMIT $3"
    ))
    .bind(now)
    .bind(overdue_before)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// How many rows the §6.1 predicate selects now (dry run, shadow mode).
pub async fn count_due(
    pool: &PgPool,
    now: DateTime<Utc>,
    overdue_before: DateTime<Utc>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(concat!(
        "SELECT count(*) FROM proc_state WHERE ",
        due_predicate!()
    ))
    .bind(now)
    .bind(overdue_before)
    .fetch_one(pool)
    .await
}

/// A row that still owes its mark, locked for the gated mark+record step.
#[derive(Debug, Clone, Copy)]
pub struct Unconfirmed {
    pub enqueued_at: Option<DateTime<Utc>>,
    pub attempts: i32,
    /// BACKFILL_FAILING_SINCE (migration 0014): the first failed attempt of
    /// the current streak, `None` when the last attempt did not fail.
    pub failing_since: Option<DateTime<Utc>>,
}

/// Inside the gate transaction: locks the rows of `msg_ids` that are still
/// terminal, unconfirmed and not abandoned, in MSG_ID order (one order for
/// every locker of PROC_STATE rows, so two rounds cannot deadlock; one gate
/// transaction per round of marks). A row missing from the answer
/// changed since the round was selected (a replay moved it back to PENDING,
/// another run confirmed it): no mark may be written for it.
pub async fn lock_unconfirmed(
    conn: &mut PgConnection,
    msg_ids: &[i64],
) -> Result<BTreeMap<i64, Unconfirmed>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT msg_id, enqueued_at, backfill_attempts, backfill_failing_since FROM proc_state \
         WHERE msg_id = ANY($1) \
         AND state IN ('SUCCEEDED', 'SKIPPED', 'DEAD') AND state <> 'ARCHIVED' \
         AND backfill_at IS NULL AND backfill_abandoned_at IS NULL ORDER BY msg_id FOR UPDATE",
    )
    .bind(msg_ids)
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok((
                r.try_get("msg_id")?,
                Unconfirmed {
                    enqueued_at: r.try_get("enqueued_at")?,
                    attempts: r.try_get("backfill_attempts")?,
                    failing_since: r.try_get("backfill_failing_since")?,
                },
            ))
        })
        .collect()
}

/// Written, or already marked (§6.2 rows 1–2): BACKFILL_AT = now; the intent
/// is fulfilled (BACKFILL_NEXT_AT cleared) and a failure streak ends
/// (BACKFILL_FAILING_SINCE cleared). UPDATED_AT moves: settling the
/// backfill starts the archive threshold (§9.3). One statement for a
/// round's rows.
pub async fn confirm(
    conn: &mut PgConnection,
    msg_ids: &[i64],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if msg_ids.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE proc_state SET backfill_at = $2, backfill_next_at = NULL, \
         backfill_failing_since = NULL, updated_at = $2 WHERE msg_id = ANY($1)",
    )
    .bind(msg_ids)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// A transient failure that does not abandon the row (§6.2 row 4): one more
/// attempt, the error, the next instant, and BACKFILL_FAILING_SINCE = now
/// unless the row was already failing (the streak's start decides
/// `TRANSIENT_DEADLINE`). Returns the new attempt count.
pub async fn record_transient(
    conn: &mut PgConnection,
    msg_id: i64,
    error: &str,
    next_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<i32, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE proc_state SET backfill_attempts = backfill_attempts + 1, \
         backfill_last_error = $2, backfill_next_at = $3, updated_at = $4, \
         backfill_failing_since = COALESCE(backfill_failing_since, $4) \
         WHERE msg_id = $1 RETURNING backfill_attempts",
    )
    .bind(msg_id)
    .bind(crate::error_text::cut(error).as_ref())
    .bind(next_at)
    .bind(now)
    .fetch_one(conn)
    .await
}

/// Stops automatic retries (§6.2 rows 3–4). Never sets BACKFILL_AT; the
/// intent (BACKFILL_NEXT_AT) stays, because the mark is still owed, and so
/// does BACKFILL_FAILING_SINCE (the streak that reached R, for the
/// reconciliation). Returns the new attempt count.
pub async fn abandon(
    conn: &mut PgConnection,
    msg_id: i64,
    reason: AbandonReason,
    error: &str,
    now: DateTime<Utc>,
) -> Result<i32, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE proc_state SET backfill_attempts = backfill_attempts + 1, \
         backfill_last_error = $3, backfill_abandoned_at = $4, backfill_abandoned_reason = $2, \
         updated_at = $4 WHERE msg_id = $1 RETURNING backfill_attempts",
    )
    .bind(msg_id)
    .bind(reason.as_str())
    .bind(crate::error_text::cut(error).as_ref())
    .bind(now)
    .fetch_one(conn)
    .await
}

/// Backfill counts for `status` and the gauges (design §6).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct BackfillStats {
    /// Terminal rows that still owe their mark and are not abandoned.
    pub pending: i64,
    /// Of those, the rows the scan would select now (§6.1 predicate).
    pub due: i64,
    /// Of those, enqueued more than R ago (`ENQUEUED_AT < now − R`).
    pub overdue: i64,
    /// Of those, at or past `backfill-max-attempts` (alert only, §6.3).
    pub over_max_attempts: i64,
    /// Abandoned rows by reason (MISSING_ROW, TRANSIENT_DEADLINE).
    pub abandoned: BTreeMap<String, i64>,
    /// Abandoned rows not yet reconciled by an operator.
    pub abandoned_unreconciled: i64,
    /// Terminal rows whose mark is confirmed (BACKFILL_AT set).
    pub confirmed: i64,
}

/// Reads [`BackfillStats`] over live terminal rows; ARCHIVED shadows are
/// excluded explicitly (§9.3).
pub async fn stats(
    pool: &PgPool,
    now: DateTime<Utc>,
    overdue_before: DateTime<Utc>,
    max_attempts: i32,
) -> Result<BackfillStats, sqlx::Error> {
    let r = sqlx::query(concat!(
        "SELECT \
           count(*) FILTER (WHERE backfill_at IS NULL AND backfill_abandoned_at IS NULL) AS pending, \
           count(*) FILTER (WHERE ",
        due_predicate!(),
        ") AS due, \
           count(*) FILTER (WHERE backfill_at IS NULL AND backfill_abandoned_at IS NULL \
                            AND enqueued_at < $2) AS overdue, \
           count(*) FILTER (WHERE backfill_at IS NULL AND backfill_abandoned_at IS NULL \
                            AND backfill_attempts >= $3) AS over_max, \
           count(*) FILTER (WHERE backfill_abandoned_at IS NOT NULL \
                            AND backfill_reconciled_at IS NULL) AS unreconciled, \
           count(*) FILTER (WHERE backfill_at IS NOT NULL) AS confirmed \
         FROM proc_state WHERE state IN ('SUCCEEDED', 'SKIPPED', 'DEAD') AND state <> 'ARCHIVED'"
    ))
    .bind(now)
    .bind(overdue_before)
    .bind(max_attempts)
    .fetch_one(pool)
    .await?;
    let mut abandoned = BTreeMap::new();
    for reason in [AbandonReason::MissingRow, AbandonReason::TransientDeadline] {
        abandoned.insert(reason.as_str().to_string(), 0);
    }
    for row in sqlx::query(
        "SELECT backfill_abandoned_reason AS reason, count(*) AS n FROM proc_state \
         WHERE backfill_abandoned_at IS NOT NULL AND state <> 'ARCHIVED' \
         GROUP BY backfill_abandoned_reason",
    )
    .fetch_all(pool)
    .await?
    {
        let reason: Option<String> = row.try_get("reason")?;
        abandoned.insert(
            reason.unwrap_or_else(|| "UNKNOWN".into()),
            row.try_get("n")?,
        );
    }
    Ok(BackfillStats {
        pending: r.try_get("pending")?,
        due: r.try_get("due")?,
        overdue: r.try_get("overdue")?,
        over_max_attempts: r.try_get("over_max")?,
        abandoned,
        abandoned_unreconciled: r.try_get("unreconciled")?,
        confirmed: r.try_get("confirmed")?,
    })
}

/// One abandoned row, for reconciliation (`msgx backfill abandoned`).
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct AbandonedRow {
    pub msg_id: i64,
    #[sqlx(try_from = "String")]
    pub state: ProcState,
    pub error_class: Option<String>,
    pub received_at: Option<DateTime<Utc>>,
    pub enqueued_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub backfill_attempts: i32,
    pub backfill_last_error: Option<String>,
    pub backfill_abandoned_at: Option<DateTime<Utc>>,
    pub backfill_abandoned_reason: Option<String>,
    pub backfill_reconciled_at: Option<DateTime<Utc>>,
    pub backfill_reconciled_note: Option<String>,
}

/// Every abandoned row still in PROC_STATE, by MSG_ID.
pub async fn abandoned(pool: &PgPool) -> Result<Vec<AbandonedRow>, sqlx::Error> {
    sqlx::query_as(concat!(
        "SELECT ",
        abandoned_columns!(),
        " FROM proc_state WHERE backfill_abandoned_at IS NOT NULL AND state <> 'ARCHIVED' \
         ORDER BY msg_id"
    ))
    .fetch_all(pool)
    .await
}

/// The abandoned rows among `ids`, locked (reopen / reconcile).
pub async fn lock_abandoned(
    conn: &mut PgConnection,
    ids: &[i64],
) -> Result<Vec<AbandonedRow>, sqlx::Error> {
    sqlx::query_as(concat!(
        "SELECT ",
        abandoned_columns!(),
        " FROM proc_state WHERE msg_id = ANY($1) AND backfill_abandoned_at IS NOT NULL \
         AND backfill_at IS NULL AND state IN ('SUCCEEDED', 'SKIPPED', 'DEAD') \
         AND state <> 'ARCHIVED' ORDER BY msg_id FOR UPDATE"
    ))
    .bind(ids)
    .fetch_all(conn)
    .await
}

/// Every abandoned row, locked (`reopen --all`).
pub async fn lock_all_abandoned(conn: &mut PgConnection) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT msg_id FROM proc_state WHERE backfill_abandoned_at IS NOT NULL \
         AND backfill_at IS NULL AND state IN ('SUCCEEDED', 'SKIPPED', 'DEAD') \
         AND state <> 'ARCHIVED' ORDER BY msg_id FOR UPDATE",
    )
    .fetch_all(conn)
    .await
}

/// Clears the abandonment (and any reconciliation of it) so the scan retries
/// at once: BACKFILL_NEXT_AT = now. Attempts and the last error stay; the
/// failure streak ends (BACKFILL_FAILING_SINCE cleared), so a reopened row
/// past R is tried at every scan until it is written and is not abandoned
/// `TRANSIENT_DEADLINE` again (its new failures begin past R).
pub async fn reopen(
    conn: &mut PgConnection,
    ids: &[i64],
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(
        "UPDATE proc_state SET backfill_abandoned_at = NULL, backfill_abandoned_reason = NULL, \
         backfill_reconciled_at = NULL, backfill_reconciled_note = NULL, \
         backfill_failing_since = NULL, backfill_next_at = $2, updated_at = $2 \
         WHERE msg_id = ANY($1) AND backfill_abandoned_at IS NOT NULL AND backfill_at IS NULL",
    )
    .bind(ids)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected())
}

/// Records the operator's reconciliation of abandoned, not yet reconciled
/// rows: the abandoned list needs the operator's reconciliation (§6.2), and
/// the archive job requires it (§9.3).
pub async fn reconcile(
    conn: &mut PgConnection,
    ids: &[i64],
    note: Option<&str>,
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(
        "UPDATE proc_state SET backfill_reconciled_at = $2, backfill_reconciled_note = $3, \
         updated_at = $2 \
         WHERE msg_id = ANY($1) AND backfill_abandoned_at IS NOT NULL \
         AND backfill_reconciled_at IS NULL",
    )
    .bind(ids)
    .bind(now)
    .bind(note)
    .execute(conn)
    .await?
    .rows_affected())
}

/// Appends one operator action to BACKFILL_ACTION (TARGET = the MSG_IDs,
/// comma-separated) and, in the same transaction, to OPERATOR_ACTION
/// (target `proc_state:<ids>`), the one audit trail of every operator action
/// (migration 0010). Returns the BACKFILL_ACTION id.
pub async fn record_action(
    conn: &mut PgConnection,
    at: DateTime<Utc>,
    actor: &str,
    action: &str,
    ids: &[i64],
    reason: Option<&str>,
) -> Result<i64, sqlx::Error> {
    let target = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO backfill_action (at, actor, action, target, reason) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(at)
    .bind(actor)
    .bind(action)
    .bind(&target)
    .bind(reason)
    .fetch_one(&mut *conn)
    .await?;
    super::operator_action::insert(
        conn,
        &super::operator_action::NewAction {
            at,
            actor,
            action,
            target: &format!("proc_state:{target}"),
            reason,
            detail: serde_json::json!({ "backfill_action": id, "msg_ids": ids }),
        },
    )
    .await?;
    Ok(id)
}
