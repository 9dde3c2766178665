//! PROC_STATE_HST and the archive of settled terminal rows (design §9.3,
//! G-PROC-HST, G-HST-RETENTION): the candidate predicate, the
//! copy, the ARCHIVED dedup shadow left in PROC_STATE (INV-9), and the
//! retention sweeps of both. maintenance/archive_proc_state.rs runs them.

use super::sweep::SweepSql;
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

/// The candidate predicate (§9.3), `$1` = now − archive.after, `$2` = now −
/// R_keep (an abandoned row stays on the abandoned list that long).
const CANDIDATE: &str = "state IN ('SUCCEEDED', 'SKIPPED', 'DEAD') AND state <> 'ARCHIVED' \
     AND (backfill_at IS NOT NULL \
          OR (backfill_abandoned_at IS NOT NULL AND backfill_reconciled_at IS NOT NULL \
              AND backfill_abandoned_at < $2)) \
     AND updated_at < $1";

/// Shadow rows whose archive copy is older than the dedup memory.
pub const SHADOW_PURGE: SweepSql = SweepSql {
    count: "SELECT count(*) FROM proc_state p WHERE p.state = 'ARCHIVED' AND EXISTS \
            (SELECT 1 FROM proc_state_hst h WHERE h.msg_id = p.msg_id AND h.archived_at < $1)",
    apply: "DELETE FROM proc_state WHERE msg_id IN (SELECT p.msg_id FROM proc_state p \
            WHERE p.state = 'ARCHIVED' AND EXISTS (SELECT 1 FROM proc_state_hst h \
            WHERE h.msg_id = p.msg_id AND h.archived_at < $1) ORDER BY p.msg_id LIMIT $2) \
            AND state = 'ARCHIVED' AND $3::timestamptz IS NOT NULL",
};

/// Archived copies past their own retention (G-HST-RETENTION), except the
/// abandoned-backfill evidence ([`ABANDONED_PURGE`]).
pub const RETENTION_PURGE: SweepSql = SweepSql {
    count: "SELECT count(*) FROM proc_state_hst \
            WHERE archived_at < $1 AND backfill_abandoned_at IS NULL",
    apply: "DELETE FROM proc_state_hst WHERE msg_id IN (SELECT msg_id FROM proc_state_hst \
            WHERE archived_at < $1 AND backfill_abandoned_at IS NULL \
            ORDER BY archived_at LIMIT $2) AND $3::timestamptz IS NOT NULL",
};

/// Archived abandoned rows (C-8 evidence), `$1` = the later of the two
/// cutoffs: hst-retention past the archive and R_keep past the abandonment
/// (§9.3 time order 3).
pub const ABANDONED_PURGE: SweepSql = SweepSql {
    count: "SELECT count(*) FROM proc_state_hst \
            WHERE archived_at < $1 AND backfill_abandoned_at < $1",
    apply: "DELETE FROM proc_state_hst WHERE msg_id IN (SELECT msg_id FROM proc_state_hst \
            WHERE archived_at < $1 AND backfill_abandoned_at < $1 \
            ORDER BY archived_at LIMIT $2) AND $3::timestamptz IS NOT NULL",
};

/// The two cutoffs of the candidate predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveCutoffs {
    /// now − `msgx.archive.after`: the row's UPDATED_AT lies before it.
    pub settled_before: DateTime<Utc>,
    /// now − R_keep: a reconciled abandoned row was abandoned before it.
    pub listed_until: DateTime<Utc>,
}

/// The rows that are candidates now (a dry run reports this).
pub async fn candidates_count(pool: &PgPool, c: ArchiveCutoffs) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM proc_state WHERE {CANDIDATE}"
    )))
    .bind(c.settled_before)
    .bind(c.listed_until)
    .fetch_one(pool)
    .await
}

/// Locks at most `limit` candidates that still satisfy the whole predicate
/// (`FOR UPDATE SKIP LOCKED`: a row a replay holds is left for later), in
/// MSG_ID order.
pub async fn candidates_lock(
    conn: &mut PgConnection,
    c: ArchiveCutoffs,
    limit: i64,
) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT msg_id FROM proc_state WHERE {CANDIDATE} ORDER BY msg_id LIMIT $3 FOR UPDATE SKIP LOCKED"
    )))
    .bind(c.settled_before)
    .bind(c.listed_until)
    .bind(limit)
    .fetch_all(conn)
    .await
}

/// Copies the rows `ids` to PROC_STATE_HST, archived at `now` (a copy left
/// by an earlier attempt is refreshed). Returns the rows copied.
pub async fn copy(
    conn: &mut PgConnection,
    ids: &[i64],
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    // By column name: migration 0011 added TRACEPARENT to both tables after
    // PROC_STATE_HST's ARCHIVED_AT, so the column orders differ.
    let columns = super::proc_state::COLUMNS;
    Ok(sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO proc_state_hst ({columns}, archived_at) \
         SELECT {columns}, $2 FROM proc_state p WHERE p.msg_id = ANY($1) \
         ON CONFLICT (msg_id) DO UPDATE SET archived_at = EXCLUDED.archived_at"
    )))
    .bind(ids)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected())
}

/// Turns the terminal rows `ids` into ARCHIVED shadows that keep only
/// MSG_ID and IDENTITY_KEY (INV-9). Returns the rows changed.
pub async fn shadows_make(conn: &mut PgConnection, ids: &[i64]) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(
        "UPDATE proc_state SET state = 'ARCHIVED', msg_type = NULL, msg_styp = NULL, attempts = 0, \
           next_attempt_at = NULL, error_class = NULL, last_error = NULL, outcome_reason = NULL, \
           received_at = NULL, enqueued_at = NULL, updated_at = NULL, finished_at = NULL, \
           backfill_next_at = NULL, backfill_at = NULL, backfill_attempts = 0, backfill_last_error = NULL, \
           backfill_abandoned_at = NULL, backfill_abandoned_reason = NULL, backfill_reconciled_at = NULL, \
           backfill_reconciled_note = NULL, traceparent = NULL, backfill_failing_since = NULL \
         WHERE msg_id = ANY($1) AND state IN ('SUCCEEDED', 'SKIPPED', 'DEAD')",
    )
    .bind(ids)
    .execute(conn)
    .await?
    .rows_affected())
}
