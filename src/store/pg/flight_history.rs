//! FLIGHT_HISTORY and the flight-history clean's reads (design §12.5, §9.3;
//! D1, INV-18): which current flights are candidates, the complete state
//! written before a flight is deleted, and the history's own retention
//! (G-FLIGHT-HIST-RETENTION).

use super::sweep::SweepSql;
use crate::domain::FlightState;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{PgConnection, PgPool};

/// History rows past `msgx.flight-history.hst-retention`.
pub const RETENTION_PURGE: SweepSql = SweepSql {
    count: "SELECT count(*) FROM flight_history WHERE archived_at < $1",
    apply: "DELETE FROM flight_history WHERE id IN (SELECT id FROM flight_history \
            WHERE archived_at < $1 ORDER BY archived_at LIMIT $2) AND $3::timestamptz IS NOT NULL",
};

/// A current flight the clean may remove, at the version it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct CleanCandidate {
    pub flid: i64,
    pub state_version: i64,
}

/// Flights whose operation day is `day` or earlier and that are DELETED or
/// were not updated since `quiet`, oldest day first, at most `limit`. A
/// flight without an operation day is never a candidate (D1).
pub async fn clean_candidates(
    pool: &PgPool,
    day: NaiveDate,
    quiet: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<CleanCandidate>, sqlx::Error> {
    sqlx::query_as(
        "SELECT flid, state_version FROM flight_schd \
         WHERE operation_day IS NOT NULL AND operation_day <= $1 \
           AND (state = 'DELETED' OR updated_at < $2) \
         ORDER BY operation_day, flid LIMIT $3",
    )
    .bind(day)
    .bind(quiet)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// Writes the complete state of `flight` (`snapshot`, its stored document)
/// to the history, inside the clean's transaction, before the delete.
pub async fn insert(
    conn: &mut PgConnection,
    flight: &FlightState,
    snapshot: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO flight_history (flid, state, state_version, operation_day, snapshot, archived_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(flight.flid)
    .bind(if flight.is_active() { "ACTIVE" } else { "DELETED" })
    .bind(flight.state_version)
    .bind(flight.operation_day)
    .bind(snapshot)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}
