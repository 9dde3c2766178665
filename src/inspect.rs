//! The read model behind `msgx msg show`, `msgx flight show` and `msgx
//! holes`, and the console's pages of the same things (issue 21): each
//! reads its stores once and returns data; the CLI renders it as text or
//! JSON, the console as HTML. One implementation, two views.

use crate::codec::{self, DecodeError, DecodedMessage};
use crate::config::Config;
use crate::domain::{mafl, schd_projection};
use crate::jobs::domain_config;
use crate::store::mailbox::Mailbox;
use crate::store::pg::flight::FlightStore;
use crate::store::pg::inbox::{self, LateRow, ReleasedHoleRow};
use crate::store::pg::msg_event::{self, FlightChange};
use crate::store::pg::proc_state::{self, MessageRecord};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;

/// What the mailbox holds for one message.
#[derive(Debug, Clone)]
pub enum Raw {
    Present(Vec<u8>),
    /// The mailbox row no longer exists (the owner purged it, C-7).
    Purged,
    /// The mailbox could not be read (the error text).
    Unreadable(String),
}

/// One message: its PROC_STATE record, the flights it wrote, and its raw
/// text decoded.
#[derive(Debug)]
pub struct MessageView {
    /// `None`: not enqueued yet (beyond W) or a late row.
    pub record: Option<MessageRecord>,
    /// (FLID, state version) of each KAFKA:msg event it produced, in write order.
    pub flights: Vec<(String, i64)>,
    pub raw: Raw,
    /// The decoding of `raw` when present.
    pub decoded: Option<Result<DecodedMessage, DecodeError>>,
}

/// Reads one message; `None` when it is neither in PROC_STATE nor in the mailbox.
pub async fn message(
    pool: &PgPool,
    mailbox: &Mailbox,
    msg_id: i64,
) -> Result<Option<MessageView>, sqlx::Error> {
    let record = proc_state::record(pool, msg_id).await?;
    let flights = msg_event::flights_of_message(pool, msg_id).await?;
    let raw = match mailbox.read_raw(msg_id).await {
        Ok(Some(bytes)) => Raw::Present(bytes),
        Ok(None) => Raw::Purged,
        Err(e) => Raw::Unreadable(e.to_string()),
    };
    if record.is_none() && matches!(raw, Raw::Purged) {
        return Ok(None);
    }
    let decoded = match &raw {
        Raw::Present(bytes) => Some(codec::decode(bytes)),
        _ => None,
    };
    Ok(Some(MessageView {
        record,
        flights,
        raw,
        decoded,
    }))
}

/// One flight: its current state as the KAFKA:schd projection (MAFL, the
/// codeshare links, included) and the messages that changed it.
#[derive(Debug)]
pub struct FlightView {
    pub flid: i64,
    /// The projection's JSON.
    pub state: Value,
    pub state_version: i64,
    pub last_msg_id: i64,
    /// Newest first, at most the requested number.
    pub changes: Vec<FlightChange>,
}

/// Reads one flight; `None` when it is not in the current state (never
/// created, or moved to the history store).
pub async fn flight(
    pool: &PgPool,
    config: &Config,
    flid: i64,
    limit: i64,
) -> Result<Option<FlightView>, sqlx::Error> {
    let store = FlightStore::new(&domain_config(config));
    let mut conn = pool.acquire().await?;
    let flights = store.load_with_children(&mut conn, &[flid]).await?;
    drop(conn);
    let Some(current) = flights.iter().find(|f| f.flid == flid) else {
        return Ok(None);
    };
    let shares = mafl::derive(current, flights.iter());
    let state = schd_projection(current, shares.as_deref()).to_json();
    let changes = msg_event::flight_changes(pool, flid, limit).await?;
    Ok(Some(FlightView {
        flid,
        state,
        state_version: current.state_version,
        last_msg_id: current.last_msg_id,
        changes,
    }))
}

/// The hole W waits at now.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OpenHole {
    pub at_id: i64,
    pub since: DateTime<Utc>,
    pub open_seconds: i64,
}

/// The watermark, its open hole, the released holes and the late rows.
#[derive(Debug)]
pub struct HolesView {
    pub w: i64,
    pub open: Option<OpenHole>,
    pub released: Vec<ReleasedHoleRow>,
    pub late: Vec<LateRow>,
}

/// Reads the holes as of `now` (newest first, at most `limit` of each list).
pub async fn holes(
    pool: &PgPool,
    now: DateTime<Utc>,
    limit: i64,
) -> Result<HolesView, sqlx::Error> {
    let cursor = inbox::load(pool).await?;
    let released = inbox::released_holes(pool, limit).await?;
    let late = inbox::late_rows(pool, limit).await?;
    let w = cursor.cursor.w;
    let open = cursor.cursor.hole_since.map(|since| OpenHole {
        at_id: w + 1,
        since,
        open_seconds: (now - since).num_seconds().max(0),
    });
    Ok(HolesView {
        w,
        open,
        released,
        late,
    })
}
