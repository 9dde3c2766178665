//! SCHD_SNAP_LOG: an append-only trace of schedule processing, written after
//! the business commit (§7.1 step 4); losing one entry in a crash is accepted
//! (§9.2), so failures here are logged, never propagated.

use super::sweep::SweepSql;
use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// One trace entry.
#[derive(Debug, Clone)]
pub struct SnapEntry<'a> {
    pub msg_id: i64,
    pub styp: &'a str,
    pub scope_start: Option<DateTime<Utc>>,
    pub scope_end: Option<DateTime<Utc>>,
    pub flights: i32,
    pub outcome: &'a str,
    pub note: Option<&'a str>,
}

/// Appends; logs and swallows a failure (the trace is not part of the state).
pub async fn append(pool: &PgPool, e: &SnapEntry<'_>, now: DateTime<Utc>) {
    let r = sqlx::query(
        "INSERT INTO schd_snap_log (msg_id, styp, recv_at, scope_start, scope_end, flights, outcome, note) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(e.msg_id)
    .bind(e.styp)
    .bind(now)
    .bind(e.scope_start)
    .bind(e.scope_end)
    .bind(e.flights)
    .bind(e.outcome)
    .bind(e.note)
    .execute(pool)
    .await;
    if let Err(err) = r {
        tracing::warn!(msg_id = e.msg_id, error = %err, "Could not append to SCHD_SNAP_LOG (trace only)");
    }
}

/// Trace entries past `msgx.snaplog.retention`, by `(SCOPE_END, RECV_AT)` (§9.3).
pub const RETENTION_PURGE: SweepSql = SweepSql {
    count: "SELECT count(*) FROM schd_snap_log \
            WHERE (scope_end IS NULL OR scope_end < $1) AND recv_at < $1",
    apply: "DELETE FROM schd_snap_log WHERE id IN (SELECT id FROM schd_snap_log \
            WHERE (scope_end IS NULL OR scope_end < $1) AND recv_at < $1 \
            ORDER BY scope_end NULLS FIRST, recv_at LIMIT $2) AND $3::timestamptz IS NOT NULL",
};
