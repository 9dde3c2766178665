//! The one transactional path every flight processor shares (design §5.3,
//! §7.1, §12 first paragraph): in one PostgreSQL transaction holding
//! PIPELINE_LOCK — read the current complete state of the flights the message
//! touches (the engine's two-query loading protocol), call the pure
//! [`FlightStateEngine`], write the flight rows (details delete-then-insert,
//! INV-14), append the outbox rows, and write SUCCEEDED with the backfill
//! intent. All or nothing. A no-match or a PROTOCOL rejection writes nothing
//! here: the caller records SKIPPED / DEAD as a single UPDATE (§5.3).

use crate::codec::DecodedMessage;
use crate::domain::{ApplyContext, Decision, FlightSet, FlightStateEngine};
use crate::jobs::{JobContext, JobError};
use crate::store::pg::flight::FlightStore;
use crate::store::pg::{msg_event, proc_state};

/// Flights per `write_many` statement pair: large enough that a large
/// schedule costs few round trips, small enough that one statement's JSON
/// stays a few MB.
const WRITE_CHUNK: usize = 500;

/// What the transaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlightTxnResult {
    /// Committed: flights written (may be none for a no-op) and SUCCEEDED.
    Succeeded {
        flights_written: usize,
        events: usize,
        note: Option<String>,
    },
    /// Rolled back: the caller records SKIPPED with this reason.
    NoMatch(String),
    /// Rolled back: the caller records DEAD(PROTOCOL) with this reason.
    Rejected(String),
    /// The row was already terminal (e.g. processed before a crash after
    /// commit): nothing written (§7.1 step 1).
    AlreadyTerminal(String),
}

/// Runs the transaction for one decoded message: BEGIN, [`apply_in`],
/// COMMIT when something was written, else ROLLBACK.
pub async fn apply(
    ctx: &JobContext,
    engine: &FlightStateEngine,
    store: &FlightStore,
    msg_id: i64,
    msg: &DecodedMessage,
) -> Result<FlightTxnResult, JobError> {
    let mut tx = ctx.pg.begin().await?;
    let result = apply_in(ctx, engine, store, &mut tx, msg_id, msg).await?;
    match result {
        FlightTxnResult::Succeeded { .. } => tx.commit().await?,
        _ => tx.rollback().await?,
    }
    Ok(result)
}

/// The body of the transaction on `conn` (an open transaction the caller
/// commits): used alone by [`apply`] and, for several consecutive messages in
/// one transaction, by the pump's group commit. On `NoMatch`, `Rejected` and
/// `AlreadyTerminal` nothing was written by this call.
pub async fn apply_in(
    ctx: &JobContext,
    engine: &FlightStateEngine,
    store: &FlightStore,
    conn: &mut sqlx::PgConnection,
    msg_id: i64,
    msg: &DecodedMessage,
) -> Result<FlightTxnResult, JobError> {
    let now = ctx.clock.now();
    match ctx.open_processing(&mut *conn, msg_id).await? {
        Some(s) if s == "PENDING" || s == "FAILED" => {}
        Some(s) => return Ok(FlightTxnResult::AlreadyTerminal(s)),
        None => {
            return Err(JobError::Other(format!(
                "PROC_STATE row {msg_id} vanished during processing"
            )));
        }
    }

    // The engine's two-query loading protocol, folded: the named flights
    // come with their ACTIVE children (every named FLID is a possible
    // master); only masters outside that set need a second round trip.
    let mut set = FlightSet::new();
    let named = engine.flids_to_load(msg);
    for f in store.load_with_children(&mut *conn, &named).await? {
        set.insert(f);
    }
    let extra: Vec<i64> = engine
        .masters_to_load(msg, &set)
        .into_iter()
        .filter(|m| !named.contains(m))
        .collect();
    for f in store.load_with_children(&mut *conn, &extra).await? {
        if !set.contains(f.flid) {
            set.insert(f);
        }
    }
    // A named FLID with no current state may have been cleaned to history:
    // its re-creation continues that version line (issue 18).
    let absent: Vec<i64> = named
        .iter()
        .copied()
        .filter(|f| !set.contains(*f))
        .collect();
    for (flid, version) in store.retired_versions(&mut *conn, &absent).await? {
        set.set_retired_version(flid, version);
    }
    let decision = engine.decide(&ApplyContext { msg_id, now }, msg, &set);
    match decision {
        Decision::Applied { writes, events } => {
            // Set-based, as the group path writes (issue 17, item 5): a
            // 20,000-flight SCHD in 40 statement pairs, not 20,000.
            for chunk in writes.chunks(WRITE_CHUNK) {
                let pairs: Vec<_> = chunk.iter().map(|n| (set.get(n.flid), n)).collect();
                store.write_many(&mut *conn, &pairs).await?;
            }
            msg_event::append(&mut *conn, &events, Some(msg_id), now).await?;
            if !proc_state::mark_succeeded(&mut *conn, msg_id, None, now).await? {
                return Err(JobError::Other(format!(
                    "message {msg_id} changed state during processing"
                )));
            }
            Ok(FlightTxnResult::Succeeded {
                flights_written: writes.len(),
                events: events.len(),
                note: None,
            })
        }
        Decision::NoChange { reason } => {
            let note = format!("no-change: {reason}");
            if !proc_state::mark_succeeded(&mut *conn, msg_id, Some(&note), now).await? {
                return Err(JobError::Other(format!(
                    "message {msg_id} changed state during processing"
                )));
            }
            Ok(FlightTxnResult::Succeeded {
                flights_written: 0,
                events: 0,
                note: Some(note),
            })
        }
        Decision::NoMatch { reason } => Ok(FlightTxnResult::NoMatch(reason.to_string())),
        Decision::Rejected { reason } => Ok(FlightTxnResult::Rejected(reason.to_string())),
    }
}
