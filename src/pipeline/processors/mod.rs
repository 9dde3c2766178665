//! The transactional processors (design §2, §5.3, §7.1): each coordinates
//! one message's transaction and calls the pure domain; none touches Kafka.
//! Each is a method of [`Processors`], the handles they share.

pub mod flight_txn;
pub mod refdata;
pub mod resp;
pub mod season;

use crate::codec::{DecodedMessage, Schd};
use crate::domain::{FlightStateEngine, ProcState};
use crate::jobs::{JobContext, JobError};
use crate::pipeline::pipeline_lock::open_processing;
use crate::store::pg::flight::FlightStore;
use crate::store::pg::proc_state;
use crate::store::pg::snap_log::{self, SnapEntry};
pub use flight_txn::FlightTxnResult;

/// The pump's settings the processors use (part of `PumpConfig`).
#[derive(Debug, Clone, Copy)]
pub struct ProcessorSettings {
    /// `msgx.schd.apply-slice`: a larger SCHD DNLD/RESP is decided in slices.
    pub apply_slice: usize,
    /// `msgx.season.keep`: seasons kept per SNAM.
    pub season_keep: usize,
    /// `msgx.request.clock-skew`: the RESP match's tolerance (C-23).
    pub clock_skew: chrono::Duration,
}

impl ProcessorSettings {
    pub fn from_config(config: &crate::config::Config) -> Self {
        let m = &config.msgx;
        Self {
            apply_slice: usize::try_from(m.schd.apply_slice).unwrap_or(usize::MAX),
            season_keep: usize::try_from(m.season.keep).unwrap_or(usize::MAX),
            clock_skew: m.request.clock_skew.chrono(),
        }
    }
}

/// The handles every processor uses (the transaction seam of design §5.3):
/// the run's context, the engine, the flight store and the pump's
/// settings. Built once per message by processOne; each processor is a
/// method, so a processor's signature names only its message.
#[derive(Clone, Copy)]
pub struct Processors<'a> {
    pub ctx: &'a JobContext,
    pub engine: &'a FlightStateEngine,
    pub store: &'a FlightStore,
    pub settings: &'a ProcessorSettings,
}

impl Processors<'_> {
    /// The ScheduleProcessor (`applyScheduleRecords`, §7.1, §12.1) for SCHD
    /// DNLD/RESP (the snapshot), and in the same transaction shape the
    /// AdftProcessor (set-only upserts, §12.3) and the ScheduleDeleteProcessor
    /// (each listed flight deleted with FDEL's semantics and the master/share
    /// cascade, the whole package in one transaction). Whole-package
    /// validation and the operation-day check are the engine's; the snap-log
    /// entry is appended after the commit (§7.1 step 4), also for an
    /// already-succeeded replay (step 1: idempotent success, trace only).
    #[doc(alias = "ScheduleProcessor")]
    #[doc(alias = "AdftProcessor")]
    #[doc(alias = "ScheduleDeleteProcessor")]
    pub async fn schedule(
        &self,
        msg_id: i64,
        msg: &DecodedMessage,
        schd: &Schd,
    ) -> Result<FlightTxnResult, JobError> {
        let result = self.flight(msg_id, msg).await?;
        trace(self, msg_id, &msg.meta.styp, schd, &result).await;
        Ok(result)
    }

    /// The FlopProcessor (one subtype's change to one flight, §12.2, INV-20)
    /// and the FdelProcessor (ACTIVE → DELETED with the master/share
    /// cascade, §12.3): the one flight transaction ([`flight_txn`]).
    #[doc(alias = "FlopProcessor")]
    #[doc(alias = "FdelProcessor")]
    pub async fn flight(
        &self,
        msg_id: i64,
        msg: &DecodedMessage,
    ) -> Result<FlightTxnResult, JobError> {
        let mut tx = self.ctx.pg.begin().await?;
        let result = flight_txn::apply_in(self, &mut tx, msg_id, msg).await?;
        settle(tx, &result).await?;
        Ok(result)
    }
}

/// Ends a processor's own transaction: COMMIT when it wrote (`Succeeded`),
/// else ROLLBACK (nothing of a no-match, a rejection or an already
/// terminal row is kept; the caller records SKIPPED / DEAD, §5.3).
pub(crate) async fn settle(
    tx: sqlx::Transaction<'_, sqlx::Postgres>,
    result: &FlightTxnResult,
) -> Result<(), sqlx::Error> {
    match result {
        FlightTxnResult::Succeeded { .. } => tx.commit().await,
        _ => tx.rollback().await,
    }
}

/// SUCCEEDED with the backfill intent, in the business transaction.
pub(crate) async fn succeeded(
    conn: &mut sqlx::PgConnection,
    msg_id: i64,
    note: Option<&str>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), JobError> {
    if !proc_state::mark_succeeded(&mut *conn, msg_id, note, now).await? {
        return Err(JobError::Other(format!(
            "message {msg_id} changed state during processing"
        )));
    }
    Ok(())
}

/// Opens the message's critical section in a processor transaction
/// ([`open_processing`]): `None` to go on (the row is unfinished),
/// `Some(AlreadyTerminal)` when it was already processed (§7.1 step 1: a
/// crash after the commit), an error when the row vanished.
pub(crate) async fn open(
    ctx: &JobContext,
    conn: &mut sqlx::PgConnection,
    msg_id: i64,
) -> Result<Option<FlightTxnResult>, JobError> {
    match open_processing(ctx, conn, msg_id).await? {
        Some(s) if s.is_unfinished() => Ok(None),
        Some(s) => Ok(Some(FlightTxnResult::AlreadyTerminal(s))),
        None => Err(JobError::Other(format!(
            "PROC_STATE row {msg_id} vanished during processing"
        ))),
    }
}

/// Appends the schedule trace: scope = earliest..latest SODT of the package.
async fn trace(p: &Processors<'_>, msg_id: i64, styp: &str, schd: &Schd, result: &FlightTxnResult) {
    let sodts: Vec<chrono::DateTime<chrono::Utc>> = schd
        .flights
        .iter()
        .filter_map(|f| match f.scalar(crate::codec::ScalarTag::SODT) {
            crate::codec::Field::Value(crate::codec::ScalarValue::Time(t)) => {
                Some(p.engine.config().local_time(*t).with_timezone(&chrono::Utc))
            }
            _ => None,
        })
        .collect();
    let (outcome, note) = match result {
        FlightTxnResult::Succeeded { note, .. } => (ProcState::Succeeded.as_str(), note.clone()),
        FlightTxnResult::NoMatch(r) => (ProcState::Skipped.as_str(), Some(r.clone())),
        FlightTxnResult::Rejected(r) => (ProcState::Dead.as_str(), Some(r.clone())),
        FlightTxnResult::AlreadyTerminal(s) => {
            ("REPLAYED", Some(format!("already {s}: nothing written")))
        }
    };
    let entry = SnapEntry {
        msg_id,
        styp,
        scope_start: sodts.iter().min().copied(),
        scope_end: sodts.iter().max().copied(),
        flights: i32::try_from(schd.flights.len()).unwrap_or(i32::MAX),
        outcome,
        note: note.as_deref(),
    };
    snap_log::append(&p.ctx.pg, &entry, p.ctx.clock.now()).await;
}
