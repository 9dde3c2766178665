//! The console's Flights search: FLIGHT_SCHD rows by FLID, by
//! FLNO (with or without the airline code) and by operation day.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use sqlx::PgPool;

/// One flight in the result list.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct FlightHit {
    pub flid: i64,
    pub state: String,
    pub alcd: Option<String>,
    pub flno: Option<String>,
    pub mvin: Option<String>,
    pub operation_day: Option<NaiveDate>,
    pub sodt: Option<DateTime<Utc>>,
    pub state_version: i64,
    pub last_msg_id: Option<i64>,
    pub updated_at: DateTime<Utc>,
}

/// At most `limit` flights matching every given criterion, by FLID. `flno`
/// matches FLNO alone or ALCD‖FLNO, case-insensitive (`123`, `CA123`).
pub async fn search(
    pool: &PgPool,
    flid: Option<i64>,
    flno: Option<&str>,
    day: Option<NaiveDate>,
    limit: i64,
) -> Result<Vec<FlightHit>, sqlx::Error> {
    sqlx::query_as(
        "SELECT flid, state, alcd, flno, mvin, operation_day, sodt, state_version, last_msg_id, \
                updated_at \
         FROM flight_schd \
         WHERE ($1::bigint IS NULL OR flid = $1) \
           AND ($2::text IS NULL OR upper(flno) = upper($2) \
                OR upper(COALESCE(alcd, '') || flno) = upper($2)) \
           AND ($3::date IS NULL OR operation_day = $3) \
         ORDER BY flid LIMIT $4",
    )
    .bind(flid)
    .bind(flno)
    .bind(day)
    .bind(limit)
    .fetch_all(pool)
    .await
}
