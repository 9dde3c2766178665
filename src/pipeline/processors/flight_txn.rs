//! The one transactional path every flight processor shares (design §5.3,
//! §7.1, §12 first paragraph): in one PostgreSQL transaction holding
//! PIPELINE_LOCK — read the current complete state of the flights the message
//! touches (the engine's two-query loading protocol), call the pure
//! [`FlightStateEngine`], write the flight rows (details delete-then-insert,
//! INV-14), append the outbox rows, and write SUCCEEDED with the backfill
//! intent. All or nothing. A no-match or a PROTOCOL rejection writes nothing
//! here: the caller records SKIPPED / DEAD as a single UPDATE (§5.3).

use std::collections::HashMap;

use super::{Processors, open, succeeded};
use crate::codec::{DecodedMessage, MsgKind, SchdStyp};
use crate::domain::slices::{self, StoredLink};
use crate::domain::{ApplyContext, Decision, FlightSet, FlightStateEngine};
use crate::jobs::JobError;
use crate::store::pg::flight::{FlightLink, FlightStore};
use crate::store::pg::msg_event;

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
    AlreadyTerminal(crate::domain::ProcState),
}

/// The body of the transaction on `conn` (an open transaction the caller
/// commits on `Succeeded`: [`Processors::flight`]). On `NoMatch`, `Rejected` and
/// `AlreadyTerminal` nothing was written by this call.
pub async fn apply_in(
    p: &Processors<'_>,
    conn: &mut sqlx::PgConnection,
    msg_id: i64,
    msg: &DecodedMessage,
) -> Result<FlightTxnResult, JobError> {
    let (engine, store) = (p.engine, p.store);
    let now = p.ctx.clock.now();
    if let Some(done) = open(p.ctx, &mut *conn, msg_id).await? {
        return Ok(done);
    }
    if let Some(max) = sliced(p.settings.apply_slice, msg) {
        return apply_in_slices(p, conn, msg_id, msg, max).await;
    }
    let set = load(engine, store, &mut *conn, msg).await?;
    let decision = engine.decide(&ApplyContext { msg_id, now }, msg, &set);
    match decision {
        Decision::Applied { writes, events } => {
            write(store, &mut *conn, &set, &writes, &events, msg_id, now).await?;
            succeeded(conn, msg_id, None, now).await?;
            Ok(FlightTxnResult::Succeeded {
                flights_written: writes.len(),
                events: events.len(),
                note: None,
            })
        }
        Decision::NoChange { reason } => {
            let note = format!("no-change: {reason}");
            succeeded(conn, msg_id, Some(&note), now).await?;
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

/// The engine's two-query loading protocol, folded: the named flights come
/// with their ACTIVE children (every named FLID is a possible master); only
/// masters outside that set need a second round trip. Named FLIDs without a
/// current state get their retired version from the history store.
async fn load(
    engine: &FlightStateEngine,
    store: &FlightStore,
    conn: &mut sqlx::PgConnection,
    msg: &DecodedMessage,
) -> Result<FlightSet, JobError> {
    let mut set = FlightSet::new();
    let named = engine.flids_to_load(msg);
    for f in store.load_with_children(&mut *conn, &named).await? {
        set.insert(f);
    }
    let extra: Vec<i64> = engine
        .masters_to_load(msg, &set)
        .into_iter()
        .filter(|m| named.binary_search(m).is_err())
        .collect();
    for f in store.load_with_children(&mut *conn, &extra).await? {
        if !set.contains(f.flid) {
            set.insert(f);
        }
    }
    // A named FLID with no current state may have been cleaned to history:
    // its re-creation continues that version line.
    let absent: Vec<i64> = named
        .iter()
        .copied()
        .filter(|f| !set.contains(*f))
        .collect();
    for (flid, version) in store.retired_versions(&mut *conn, &absent).await? {
        set.set_retired_version(flid, version);
    }
    Ok(set)
}

/// Writes an applied decision: the flights set-based, as the group path
/// writes (a 20,000-flight SCHD in 40 statement pairs, not 20,000), then the outbox rows.
async fn write(
    store: &FlightStore,
    conn: &mut sqlx::PgConnection,
    set: &FlightSet,
    writes: &[crate::domain::FlightState],
    events: &[crate::domain::DomainEvent],
    msg_id: i64,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), JobError> {
    for chunk in writes.chunks(WRITE_CHUNK) {
        let pairs: Vec<_> = chunk.iter().map(|n| (set.get(n.flid), n)).collect();
        store.write_many(&mut *conn, &pairs).await?;
    }
    msg_event::append(&mut *conn, events, Some(msg_id), now).await?;
    Ok(())
}

/// `Some(msgx.schd.apply-slice)` when `msg` is a SCHD DNLD/RESP with more
/// FLTRs than that: it is decided in slices ([`apply_in_slices`]).
fn sliced(max: usize, msg: &DecodedMessage) -> Option<usize> {
    match &msg.kind {
        MsgKind::Schd(s)
            if matches!(s.styp, SchdStyp::Dnld | SchdStyp::Resp) && s.flights.len() > max =>
        {
            Some(max)
        }
        _ => None,
    }
}

/// A large SCHD DNLD/RESP in slices (`domain::slices`):
/// the light links of the whole package (the loading protocol without the
/// content), whole-package validation against the stored operation days,
/// then per slice the loading protocol, the engine and the writes, inside a
/// savepoint of the one transaction. The flights, versions and events are
/// those of the whole package decided at once; only the order of events of
/// different flights differs. A rejection rolls the savepoint back, so
/// nothing is written, and names the reason the whole package would.
async fn apply_in_slices(
    p: &Processors<'_>,
    conn: &mut sqlx::PgConnection,
    msg_id: i64,
    msg: &DecodedMessage,
    max: usize,
) -> Result<FlightTxnResult, JobError> {
    let (engine, store) = (p.engine, p.store);
    let now = p.ctx.clock.now();
    let MsgKind::Schd(schd) = &msg.kind else {
        return Err(JobError::Other("apply_in_slices: not a SCHD".into()));
    };
    let named = engine.flids_to_load(msg);
    let mut links: HashMap<i64, FlightLink> = HashMap::new();
    for l in store.load_links(&mut *conn, &named).await? {
        links.insert(l.flid, l);
    }
    let extra: Vec<i64> = engine
        .masters_to_load_by(msg, &|f| {
            links.get(&f).and_then(|l| l.maid).filter(|m| *m != f)
        })
        .into_iter()
        .filter(|m| named.binary_search(m).is_err())
        .collect();
    for l in store.load_links(&mut *conn, &extra).await? {
        links.entry(l.flid).or_insert(l);
    }
    let day = |f: i64| links.get(&f).and_then(|l| l.operation_day);
    if let Err(reason) = engine.check_schedule(msg, &day) {
        return Ok(FlightTxnResult::Rejected(reason.to_string()));
    }
    let stored: Vec<StoredLink> = links
        .values()
        .map(|l| StoredLink {
            flid: l.flid,
            maid: l.maid,
        })
        .collect();
    drop(links);
    let slices = slices::schedule_slices(schd, &stored, max);
    drop(stored);

    let mut savepoint = sqlx::Connection::begin(&mut *conn).await?;
    let (mut flights_written, mut events_written) = (0, 0);
    for indices in &slices {
        let Some(slice) = slices::slice_message(msg, indices) else {
            continue;
        };
        let set = load(engine, store, &mut savepoint, &slice).await?;
        match engine.decide(&ApplyContext { msg_id, now }, &slice, &set) {
            Decision::Applied { writes, events } => {
                write(store, &mut savepoint, &set, &writes, &events, msg_id, now).await?;
                flights_written += writes.len();
                events_written += events.len();
            }
            Decision::NoChange { .. } => {}
            Decision::Rejected { reason } => {
                savepoint.rollback().await?;
                let reason = engine.schedule_rejection(msg, now).unwrap_or(reason);
                return Ok(FlightTxnResult::Rejected(reason.to_string()));
            }
            Decision::NoMatch { reason } => {
                savepoint.rollback().await?;
                return Ok(FlightTxnResult::NoMatch(reason.to_string()));
            }
        }
    }
    savepoint.commit().await?;
    let note = (flights_written == 0)
        .then(|| format!("no-change: {}", crate::domain::NoChangeReason::Unchanged));
    succeeded(conn, msg_id, note.as_deref(), now).await?;
    Ok(FlightTxnResult::Succeeded {
        flights_written,
        events: events_written,
        note,
    })
}
