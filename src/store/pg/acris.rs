//! The reads of the ACRIS flight API (docs/acris.md): which flights a
//! window, a flight number or a page selects, when the selection last
//! changed, and the master/share links behind `codeShares`. Complete states
//! are loaded through [`FlightStore::load`], the one reader of stored flights.
//!
//! A window selects by movement (MVIN) and by the scheduled (SODT) or the
//! estimated (ESTT) time at the home airport (RAML: "search in the scheduled
//! and expected … time"); migration 0024 indexes both per movement.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::PgPool;

use super::flight::FlightStore;
use crate::domain::FlightState;

/// The movement a list route selects (MVIN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Movement {
    Arrival,
    Departure,
}

impl Movement {
    /// Its MVIN code.
    pub fn mvin(self) -> &'static str {
        match self {
            Movement::Arrival => "A",
            Movement::Departure => "D",
        }
    }
}

/// One list request: the window `[from, to)`, only flights updated after
/// `updated_after` when given, and a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowQuery {
    pub movement: Movement,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub updated_after: Option<DateTime<Utc>>,
    pub offset: i64,
    pub limit: i64,
}

/// What a window holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowPage {
    /// The newest `updated_at` of every flight in the window, ACTIVE or
    /// DELETED (a deletion changes the selection too); `None`: empty window.
    pub last_modified: Option<DateTime<Utc>>,
    /// The page's ACTIVE flights, by SODT then FLID.
    pub flids: Vec<i64>,
}

/// The window's last change and one page of its ACTIVE flights, in one
/// statement.
pub async fn window(pool: &PgPool, q: &WindowQuery) -> Result<WindowPage, sqlx::Error> {
    let row: (Option<DateTime<Utc>>, Option<Vec<i64>>) = sqlx::query_as(
        "WITH w AS ( \
             SELECT flid, state, sodt, updated_at FROM flight_schd \
             WHERE mvin = $1 AND sodt >= $2 AND sodt < $3 \
             UNION \
             SELECT flid, state, sodt, updated_at FROM flight_schd \
             WHERE mvin = $1 AND estt >= $2 AND estt < $3), \
         page AS ( \
             SELECT flid, sodt FROM w \
             WHERE state = 'ACTIVE' AND ($4::timestamptz IS NULL OR updated_at > $4) \
             ORDER BY sodt, flid OFFSET $5 LIMIT $6) \
         SELECT (SELECT max(updated_at) FROM w), \
                (SELECT array_agg(flid ORDER BY sodt, flid) FROM page)",
    )
    .bind(q.movement.mvin())
    .bind(q.from)
    .bind(q.to)
    .bind(q.updated_after)
    .bind(q.offset)
    .bind(q.limit)
    .fetch_one(pool)
    .await?;
    Ok(WindowPage {
        last_modified: row.0,
        flids: row.1.unwrap_or_default(),
    })
}

/// The ACTIVE flights of operation day `day` whose FLNO starts with
/// `airline` (case-insensitive), by FLID: the candidates of a
/// `flightDetails` request (the caller matches the number exactly).
pub async fn day_candidates(
    pool: &PgPool,
    day: NaiveDate,
    airline: &str,
) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT flid FROM flight_schd \
         WHERE operation_day = $1 AND state = 'ACTIVE' \
           AND upper(flno) LIKE upper($2) || '%' \
         ORDER BY flid",
    )
    .bind(day)
    .bind(airline.replace(['%', '_', '\\'], ""))
    .fetch_all(pool)
    .await
}

/// The complete states of `flids` (ACTIVE only), in the order given.
pub async fn load(
    pool: &PgPool,
    store: &FlightStore,
    flids: &[i64],
) -> Result<Vec<FlightState>, sqlx::Error> {
    if flids.is_empty() {
        return Ok(Vec::new());
    }
    let mut conn = pool.acquire().await?;
    let mut states = store.load(&mut conn, flids).await?;
    states.retain(FlightState::is_active);
    states.sort_by_key(|s| flids.iter().position(|f| *f == s.flid));
    Ok(states)
}

/// What `codeShares` needs of one flight.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct LinkRow {
    pub flid: i64,
    pub maid: Option<i64>,
    pub alcd: Option<String>,
    pub flno: Option<String>,
}

/// The ACTIVE flights among `masters` and the ACTIVE flights whose MAID is
/// one of them: every master and share a page's code shares are made of.
pub async fn links(pool: &PgPool, masters: &[i64]) -> Result<Vec<LinkRow>, sqlx::Error> {
    if masters.is_empty() {
        return Ok(Vec::new());
    }
    sqlx::query_as(
        "SELECT flid, maid, alcd, flno FROM flight_schd \
         WHERE state = 'ACTIVE' AND (flid = ANY($1) OR maid = ANY($1)) ORDER BY flid",
    )
    .bind(masters)
    .fetch_all(pool)
    .await
}
