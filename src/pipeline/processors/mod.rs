//! The transactional processors (design §2, §5.3, §7.1): each coordinates
//! one message's transaction and calls the pure domain; none touches Kafka.

pub mod flight_txn;
pub mod refdata;
pub mod resp;
pub mod season;

use crate::codec::{DecodedMessage, Schd};
use crate::domain::{FlightStateEngine, ProcState};
use crate::jobs::{JobContext, JobError};
use crate::store::pg::flight::FlightStore;
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

/// SCHD DNLD/RESP: the schedule snapshot (`applyScheduleRecords`, §7.1, §12.1).
/// Whole-package validation and the operation-day check are the engine's; the
/// snap-log entry is appended after the commit (§7.1 step 4), also for an
/// already-succeeded replay (step 1: idempotent success, trace only).
pub struct ScheduleProcessor;

impl ScheduleProcessor {
    pub async fn apply_schedule_records(
        ctx: &JobContext,
        engine: &FlightStateEngine,
        store: &FlightStore,
        settings: &ProcessorSettings,
        msg_id: i64,
        msg: &DecodedMessage,
        schd: &Schd,
    ) -> Result<FlightTxnResult, JobError> {
        let result = flight_txn::apply(ctx, engine, store, settings, msg_id, msg).await?;
        trace(ctx, engine, msg_id, &msg.meta.styp, schd, &result).await;
        Ok(result)
    }
}

/// SCHD ADFT: set-only single-flight upserts (§12.3), same transaction shape.
pub struct AdftProcessor;

impl AdftProcessor {
    pub async fn apply(
        ctx: &JobContext,
        engine: &FlightStateEngine,
        store: &FlightStore,
        settings: &ProcessorSettings,
        msg_id: i64,
        msg: &DecodedMessage,
        schd: &Schd,
    ) -> Result<FlightTxnResult, JobError> {
        let result = flight_txn::apply(ctx, engine, store, settings, msg_id, msg).await?;
        trace(ctx, engine, msg_id, "ADFT", schd, &result).await;
        Ok(result)
    }
}

/// SCHD DEL: each listed flight deleted with FDEL's semantics and the
/// master/share cascade (sis-format §2.1, §12.3), the whole package in the
/// one PIPELINE_LOCK transaction; traced like every schedule (issue 18).
pub struct ScheduleDeleteProcessor;

impl ScheduleDeleteProcessor {
    pub async fn apply(
        ctx: &JobContext,
        engine: &FlightStateEngine,
        store: &FlightStore,
        settings: &ProcessorSettings,
        msg_id: i64,
        msg: &DecodedMessage,
        schd: &Schd,
    ) -> Result<FlightTxnResult, JobError> {
        let result = flight_txn::apply(ctx, engine, store, settings, msg_id, msg).await?;
        trace(ctx, engine, msg_id, "DEL", schd, &result).await;
        Ok(result)
    }
}

/// FLOP: one subtype's change to one flight (§12.2, INV-20).
pub struct FlopProcessor;

impl FlopProcessor {
    pub async fn apply(
        ctx: &JobContext,
        engine: &FlightStateEngine,
        store: &FlightStore,
        settings: &ProcessorSettings,
        msg_id: i64,
        msg: &DecodedMessage,
    ) -> Result<FlightTxnResult, JobError> {
        flight_txn::apply(ctx, engine, store, settings, msg_id, msg).await
    }
}

/// FDEL: ACTIVE → DELETED with the master/share cascade (§12.3).
pub struct FdelProcessor;

impl FdelProcessor {
    pub async fn apply(
        ctx: &JobContext,
        engine: &FlightStateEngine,
        store: &FlightStore,
        settings: &ProcessorSettings,
        msg_id: i64,
        msg: &DecodedMessage,
    ) -> Result<FlightTxnResult, JobError> {
        flight_txn::apply(ctx, engine, store, settings, msg_id, msg).await
    }
}

/// Appends the schedule trace: scope = earliest..latest SODT of the package.
async fn trace(
    ctx: &JobContext,
    engine: &FlightStateEngine,
    msg_id: i64,
    styp: &str,
    schd: &Schd,
    result: &FlightTxnResult,
) {
    let sodts: Vec<chrono::DateTime<chrono::Utc>> = schd
        .flights
        .iter()
        .filter_map(|f| match f.scalar(crate::codec::ScalarTag::SODT) {
            crate::codec::Field::Value(crate::codec::ScalarValue::Time(t)) => {
                Some(engine.config().local_time(*t).with_timezone(&chrono::Utc))
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
    snap_log::append(&ctx.pg, &entry, ctx.clock.now()).await;
}
