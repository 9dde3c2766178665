//! `flight-history-clean` (design §12.5, §12.3, §9.3; D1, INV-18): finished
//! flights leave the current state, after their complete state has been
//! written to the flight history store.
//!
//! Candidate: its operation day ended more than `msgx.flight-history.min-age`
//! ago (the day ends at the next `msgx.airport.day-cutover`, airport time),
//! and it is DELETED or had no update for `msgx.flight-history.quiet-period`.
//! A flight without an operation day has no such evidence and is never
//! cleaned (D1: evidence missing → delete nothing).
//!
//! One flight per transaction, holding PIPELINE_LOCK (INV-18; the pump waits
//! at most one flight): re-check the candidate at its STATE_VERSION, and for a
//! flight never FDEL'd ask the engine for its lifecycle delete
//! ([`FlightStateEngine::lifecycle_delete`]): exactly what an FDEL would
//! emit — the tombstone (KAFKA:msg + KAFKA:schd) and the
//! master/share cascade of §12.3 — then write the complete state to
//! FLIGHT_HISTORY, and only then delete the current state. A flight already
//! DELETED gets no second tombstone. If any step fails, the transaction rolls
//! back and nothing is deleted. Notifications say `msg_kind =
//! "LIFECYCLE-CLEAN"` and `msg_id = 0` (no message caused them).

use crate::config::Config;
use crate::domain::DomainConfig;
use crate::domain::{ApplyContext, Decision, FlightSet, FlightStateEngine};
use crate::jobs::batch::{Sweep, run_retention_sweep};
use crate::jobs::domain_config;
use crate::jobs::{
    Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use crate::store::pg::flight::FlightStore;
use crate::store::pg::{flight_history, msg_event, proc_state};
use chrono::{DateTime, NaiveDate, Utc};

const HISTORY: Sweep = Sweep {
    label: "history_purged",
    sql: flight_history::RETENTION_PURGE,
};

/// The settings `flight-history-clean` uses.
#[derive(Debug, Clone)]
pub struct FlightHistoryCleanConfig {
    /// `msgx.flight-history.min-age`, after the operation day ended.
    pub min_age: chrono::Duration,
    /// `msgx.flight-history.quiet-period`: no update for this long.
    pub quiet_period: chrono::Duration,
    /// `msgx.flight-history.hst-retention`: FLIGHT_HISTORY rows.
    pub hst_retention: chrono::Duration,
    /// The engine's view (airport zone and day cutover, §11.2), for the FDEL
    /// decision and the operation day.
    pub domain: DomainConfig,
}

impl JobSettings for FlightHistoryCleanConfig {
    fn from_config(config: &Config) -> Self {
        let fh = &config.msgx.flight_history;
        Self {
            min_age: fh.min_age.chrono(),
            quiet_period: fh.quiet_period.chrono(),
            hst_retention: fh.hst_retention.chrono(),
            domain: domain_config(config),
        }
    }
}

impl FlightHistoryCleanConfig {
    /// The latest operation day that ended at least `min_age` before `now`.
    pub fn last_finished_day(&self, now: DateTime<Utc>) -> NaiveDate {
        let local = (now - self.min_age)
            .with_timezone(&self.domain.timezone)
            .naive_local();
        let since_cutover = self
            .domain
            .day_cutover
            .signed_duration_since(chrono::NaiveTime::MIN);
        // Day D runs from D@cutover to (D+1)@cutover; it has ended when that is past.
        (local - since_cutover).date() - chrono::Duration::days(1)
    }
}

job_counts! {
    /// What a `flight-history-clean` run did.
    pub struct FlightHistoryCleanCounts { flights_cleaned, tombstones, history_purged }
}

/// The job.
pub struct FlightHistoryClean {
    config: FlightHistoryCleanConfig,
}

impl FlightHistoryClean {
    pub fn new(config: FlightHistoryCleanConfig) -> Result<Self, JobConfigError> {
        Ok(Self { config })
    }
}

#[async_trait::async_trait]
impl Job for FlightHistoryClean {
    type Details = FlightHistoryCleanCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<FlightHistoryCleanCounts>, JobError> {
        let now = ctx.clock.now();
        let deadline = bounds.deadline(now);
        let fh = &self.config;
        let day = fh.last_finished_day(now);
        let quiet = now - fh.quiet_period;
        let mut report = RunReport::<FlightHistoryCleanCounts>::default();
        let dc = fh.domain.clone();
        let store = FlightStore::new(&dc);
        let engine = FlightStateEngine::new(dc);
        let mut seen_flids = std::collections::HashSet::new();
        loop {
            let left = bounds.max_items.saturating_sub(report.items);
            if left == 0 || !ctx.may_continue(deadline)? {
                report.more = true;
                break;
            }
            let limit = u64::from(bounds.batch.max(1)).min(left);
            let batch: Vec<(i64, i64)> = flight_history::clean_candidates(
                &ctx.pg,
                day,
                quiet,
                i64::try_from(limit).unwrap_or(i64::MAX),
            )
            .await?
            .into_iter()
            .map(|c| (c.flid, c.state_version))
            .collect();
            if ctx.dry_run {
                report.items += batch.len() as u64;
                report.details.flights_cleaned.add(batch.len() as u64);
                report.more = batch.len() as u64 == limit;
                break;
            }
            let fresh: Vec<(i64, i64)> = batch
                .into_iter()
                .filter(|(f, _)| seen_flids.insert(*f))
                .collect();
            if fresh.is_empty() {
                break;
            }
            for (flid, version) in &fresh {
                let tombstoned =
                    clean_one(ctx, &engine, &store, *flid, *version, day, quiet, now).await?;
                report.items += 1;
                report.details.flights_cleaned.add(1);
                if tombstoned {
                    report.details.tombstones.add(1);
                }
            }
            if (fresh.len() as u64) < limit {
                break;
            }
        }
        let purged = run_retention_sweep(
            ctx,
            bounds,
            deadline,
            &HISTORY,
            now - fh.hst_retention,
            &mut report,
        )
        .await?;
        report.details.history_purged.add(purged);
        if report.items > 0 {
            tracing::info!(items = report.items, details = ?report.rendered(), "Flight history clean run");
        }
        Ok(report)
    }
}

/// Cleans one flight in one transaction; returns whether a tombstone was
/// emitted. A flight that no longer qualifies (changed meanwhile) is left.
#[allow(clippy::too_many_arguments)]
async fn clean_one(
    ctx: &JobContext,
    engine: &FlightStateEngine,
    store: &FlightStore,
    flid: i64,
    version: i64,
    day: NaiveDate,
    quiet: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, JobError> {
    let mut tx = ctx.pg.begin().await?;
    proc_state::take_pipeline_lock(&mut tx).await?;
    ctx.fence(&mut tx).await?;
    let mut set = FlightSet::new();
    for f in store.load_with_children(&mut tx, &[flid]).await? {
        set.insert(f);
    }
    let Some(current) = set.get(flid).cloned() else {
        tx.rollback().await?;
        return Ok(false);
    };
    let still = current.state_version == version
        && current.operation_day.is_some_and(|d| d <= day)
        && (!current.is_active() || current.updated_at < quiet);
    if !still {
        tx.rollback().await?;
        return Ok(false);
    }
    let mut tombstoned = false;
    if current.is_active() {
        if let Some(master) = current.master_id().filter(|m| *m != flid) {
            for f in store.load_with_children(&mut tx, &[master]).await? {
                if !set.contains(f.flid) {
                    set.insert(f);
                }
            }
        }
        match engine.lifecycle_delete(&ApplyContext { msg_id: 0, now }, flid, &set) {
            Decision::Applied { writes, events } => {
                for next in writes.iter().filter(|w| w.flid != flid) {
                    store.write(&mut tx, set.get(next.flid), next).await?;
                }
                msg_event::append(&mut tx, &events, None, now).await?;
                tombstoned = true;
            }
            other => {
                tx.rollback().await?;
                return Err(JobError::Other(format!(
                    "lifecycle delete of FLID {flid} was not applied: {other:?}"
                )));
            }
        }
    }
    let snapshot = store.snapshot_json(&current);
    flight_history::insert(&mut tx, &current, &snapshot, now).await?;
    if store.delete(&mut tx, flid, version).await? != 1 {
        tx.rollback().await?;
        return Ok(false);
    }
    tx.commit().await?;
    Ok(tombstoned)
}
