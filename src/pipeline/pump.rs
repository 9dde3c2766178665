//! `pump-drain` = Pump.tick (design §5.1), repeated within the run's bounds.
//!
//! Each tick looks only at the head — the smallest unfinished message:
//! none → the run ends (the schedule is the poll interval); head beyond W →
//! not taken (only the compat entry registers such rows; taking it would pass
//! smaller IDs not yet enqueued), one throttled WARN per value of W; FAILED at
//! its class's attempt limit → DEAD(EXHAUSTED) in one UPDATE (INFRA has none:
//! an outage is waited out); FAILED not yet due → the run
//! ends and later messages wait (strict FIFO, no time-based poison pill);
//! otherwise processOne.
//!
//! One exception to "not yet due": a FAILED(INFRA) head
//! this pump recorded is retried at once, once per failure, when W has moved
//! since: ingest has read the mailbox and written PostgreSQL after the
//! failure, so the outage is over and the head need not wait out its tier
//! (5 s, 15 s, then 1 min). During an outage W stands still, so nothing is
//! retried early.

use super::group::GroupResult;
use super::process_one::{MessageProcessor, ProcessOutcome};
use crate::clock::seconds_between;
use crate::domain::{ErrorClass, FlightStateEngine, ProcState};
use crate::jobs::{
    Count, Job, JobConfigError, JobContext, JobError, RunBounds, RunReport, job_counts,
};
use crate::store::pg::flight::FlightStore;
use crate::store::pg::proc_state;
use crate::store::pg::statistics::GrowthAnalyzer;
use crate::telemetry::message_span;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use tracing::Instrument;

/// Counts one processed message (docs/metrics.md).
fn count_processed(outcome: &'static str, error_class: &'static str) {
    metrics::counter!("msgx_pipeline_messages_processed_total", "outcome" => outcome, "error_class" => error_class)
        .increment(1);
}

pub use super::process_one::PumpConfig;

job_counts! {
    /// What a `pump-drain` run did: the head conditions of §5.1, and per
    /// processed message its outcome ([`ProcessOutcome::label`]).
    pub struct PumpCounts {
        waiting_for_watermark,
        exhausted,
        waiting_for_retry,
        retried_early,
        grouped,
        group_rolled_back,
        succeeded,
        skipped,
        dead,
        failed,
        already_terminal,
        superseded,
    }
}

impl PumpCounts {
    /// The count of `outcome` (named by its label).
    pub fn of(&mut self, outcome: &ProcessOutcome) -> &mut Count {
        match outcome {
            ProcessOutcome::Succeeded => &mut self.succeeded,
            ProcessOutcome::Skipped(_) => &mut self.skipped,
            ProcessOutcome::Dead(..) => &mut self.dead,
            ProcessOutcome::Failed(..) => &mut self.failed,
            ProcessOutcome::AlreadyTerminal => &mut self.already_terminal,
            ProcessOutcome::Superseded => &mut self.superseded,
        }
    }
}

/// The pump job.
pub struct Pump {
    config: PumpConfig,
    /// The W value last warned about (one WARN per W, §5.1 step 2): job
    /// state, kept across the runs of one runner (scheduler/registry.rs).
    warned_beyond_w: AtomicI64,
    /// The identity algorithm was found recorded as configured (§2): checked
    /// once per job object, i.e. once per daemon or `msgx run` process, so an
    /// idle run is the head query alone. The record is
    /// written once and never changed by msgx, so it cannot go stale.
    identity_checked: AtomicBool,
    /// The FAILED(INFRA) head this pump last recorded and W then: job state like `warned_beyond_w`, so a head failed by an
    /// earlier process waits its tier as before.
    infra_head: std::sync::Mutex<Option<InfraHead>>,
    /// The flight store, whose read-through cache keeps the states the
    /// group commit read or wrote ([`crate::store::pg::flight::cache`]): job
    /// state, so a daemon's runs share it.
    store: FlightStore,
    /// Analyzes the tables the pump's writes grew
    /// ([`crate::store::pg::statistics`]): job state, so its cadence spans
    /// a daemon's runs.
    statistics: GrowthAnalyzer,
}

/// A FAILED(INFRA) head as this pump recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct InfraHead {
    msg_id: i64,
    /// W read with the head when it failed.
    w: i64,
    /// The failure was itself an early retry: the next one waits its tier,
    /// so a fault that is not an outage is retried early at most once per
    /// tier, never at the poll rate.
    early: bool,
}

impl InfraHead {
    /// Whether `head`, not yet due, is retried now: it is the head this pump
    /// failed with INFRA, W has moved since, and that failure was not already
    /// an early retry.
    fn outage_over(this: Option<InfraHead>, head: &proc_state::Head) -> bool {
        this.is_some_and(|h| {
            h.msg_id == head.msg_id
                && !h.early
                && head.w > h.w
                && head.error_class == Some(ErrorClass::Infra)
        })
    }
}

impl Pump {
    pub fn new(config: PumpConfig) -> Result<Self, JobConfigError> {
        JobConfigError::at_least_one("msgx.pipeline.group-commit", u64::from(config.group_commit))?;
        Ok(Self {
            warned_beyond_w: AtomicI64::new(-1),
            identity_checked: AtomicBool::new(false),
            infra_head: std::sync::Mutex::new(None),
            store: FlightStore::new(&config.domain),
            statistics: GrowthAnalyzer::default(),
            config,
        })
    }
}

impl Pump {
    /// What follows each processed group or message: the statistics check,
    /// when `msgx.postgres.analyze-grown-tables` is on.
    async fn after_writes(&self, ctx: &JobContext) {
        if self.config.analyze_grown_tables {
            self.statistics.after_writes(&ctx.pg, ctx.clock.now()).await;
        }
    }

    fn last_infra_head(&self) -> Option<InfraHead> {
        self.infra_head.lock().map(|g| *g).unwrap_or(None)
    }

    fn remember_infra_head(&self, head: &proc_state::Head, outcome: &ProcessOutcome, early: bool) {
        let next = match outcome {
            ProcessOutcome::Failed(ErrorClass::Infra, _) => Some(InfraHead {
                msg_id: head.msg_id,
                w: head.w,
                early,
            }),
            _ => None,
        };
        if let Ok(mut g) = self.infra_head.lock() {
            *g = next;
        }
    }
}

#[async_trait::async_trait]
impl Job for Pump {
    type Details = PumpCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<PumpCounts>, JobError> {
        let c = &self.config;
        let dc = c.domain.clone();
        let processor = MessageProcessor {
            ctx,
            config: c,
            store: self.store.clone(),
            engine: FlightStateEngine::new(dc),
            read_ahead: std::sync::Mutex::new(None),
            decoded: std::sync::Mutex::new(None),
            unknown: Default::default(),
        };
        let mut report = RunReport::<PumpCounts>::default();
        // §2: identities are bound only with the algorithm this database
        // recorded at its first start (a mismatch fails the run, naming it,
        // and is checked again on the next run).
        if !self.identity_checked.load(Ordering::Acquire) {
            super::identity::ensure_recorded(
                &ctx.pg,
                c.include_day_boundary,
                ctx.clock.now(),
                "pump-drain",
            )
            .await
            .map_err(|e| JobError::Other(e.to_string()))?;
            self.identity_checked.store(true, Ordering::Release);
        }
        // A failure ends the run with what it did so far in its report, so
        // JOB_RUN counts the messages processed before it.
        match self.drain(ctx, bounds, &processor, &mut report).await {
            Ok(()) => Ok(report),
            Err(e) => Err(report.failed_with(e)),
        }
    }
}

impl Pump {
    /// Pump.tick repeated within the run's bounds (§5.1), counting into
    /// `report`.
    async fn drain(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
        processor: &MessageProcessor<'_>,
        report: &mut RunReport<PumpCounts>,
    ) -> Result<(), JobError> {
        let deadline = bounds.deadline(ctx.clock.now());
        let c = &self.config;
        let retry = &c.retry;
        // After a rolled-back group, its messages go one per transaction, so
        // the one that fails is recorded on its own (and the rest not retried
        // as a group over and over).
        let mut single_until = i64::MIN;
        loop {
            if report.items >= bounds.max_items || !ctx.may_continue(deadline)? {
                report.more = true;
                break;
            }
            // The head and, for group commit, the rows behind it (one statement).
            let group = c.group_commit;
            let room = bounds.max_items.saturating_sub(report.items).max(1);
            let fetch = i64::try_from(room.min(u64::from(group.max(1)))).unwrap_or(1);
            let heads = proc_state::unfinished(&ctx.pg, fetch).await?;
            let Some(head) = heads.first() else {
                break;
            };
            let w = head.w;
            if head.msg_id > w {
                if self.warned_beyond_w.swap(w, Ordering::Relaxed) != w {
                    tracing::warn!(
                        head = head.msg_id,
                        w,
                        "Head is beyond the watermark; waiting for ingest to catch up"
                    );
                }
                report.details.waiting_for_watermark.add(1);
                break;
            }
            let now = ctx.clock.now();
            // The head's span: its msg_id and trace_id on every line about it.
            let span = message_span(head.msg_id, head.trace.as_ref());
            if retry.exhausted(head.state, head.error_class, head.attempts) {
                // Only the FAILED row as read: a replay since stands.
                if proc_state::mark_exhausted(&ctx.pg, head.msg_id, head.attempts, now).await? {
                    count_processed("dead", ErrorClass::Exhausted.as_str());
                    span.in_scope(|| {
                        tracing::warn!(attempts = head.attempts, "Message DEAD(EXHAUSTED)")
                    });
                    report.items += 1;
                    report.details.exhausted.add(1);
                }
                continue;
            }
            let mut early = false;
            if head.state == ProcState::Failed && head.next_attempt_at.is_some_and(|t| t > now) {
                if InfraHead::outage_over(self.last_infra_head(), head) {
                    early = true;
                    report.details.retried_early.add(1);
                    span.in_scope(|| {
                        tracing::info!(
                            w = head.w,
                            "Ingest has read the mailbox since the head's INFRA failure; retrying it now"
                        )
                    });
                } else {
                    report.details.waiting_for_retry.add(1);
                    report.more = true;
                    break;
                }
            }
            if group > 1 && head.state == ProcState::Pending && head.msg_id > single_until {
                let members: Vec<_> = heads
                    .iter()
                    .take_while(|h| h.msg_id <= w)
                    .cloned()
                    .collect();
                let started = ctx.clock.now();
                match processor.process_group(&members).await? {
                    GroupResult::Done(outcomes) => {
                        ctx.handoff.committed();
                        report.items += outcomes.len() as u64;
                        report.details.grouped.add(outcomes.len() as u64);
                        let per_message = seconds_between(started, ctx.clock.now())
                            / outcomes.len().max(1) as f64;
                        for o in &outcomes {
                            report.details.of(o).add(1);
                            count_processed(o.label(), o.error_class_label());
                            metrics::histogram!("msgx_pipeline_processing_duration_seconds")
                                .record(per_message);
                        }
                        self.after_writes(ctx).await;
                        continue;
                    }
                    GroupResult::RolledBack { last } => {
                        report.details.group_rolled_back.add(1);
                        single_until = last;
                    }
                    GroupResult::NotFormed => {}
                }
            }
            let started = ctx.clock.now();
            let outcome = processor.process_one(head).instrument(span).await?;
            ctx.handoff.committed();
            self.remember_infra_head(head, &outcome, early);
            metrics::histogram!("msgx_pipeline_processing_duration_seconds")
                .record(seconds_between(started, ctx.clock.now()));
            report.items += 1;
            report.details.of(&outcome).add(1);
            count_processed(outcome.label(), outcome.error_class_label());
            self.after_writes(ctx).await;
            if let ProcessOutcome::Failed(..) = outcome {
                // The head now waits for its backoff; later messages wait too.
                continue;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_infra_head_is_retried_early_once_per_failure_when_w_has_moved() {
        let head = |msg_id, w, class| proc_state::Head {
            msg_id,
            state: ProcState::Failed,
            attempts: 1,
            next_attempt_at: None,
            error_class: Some(class),
            identity_key: None,
            w,
            trace: None,
            compat_principal: None,
        };
        let failed = |early| InfraHead {
            msg_id: 7,
            w: 7,
            early,
        };
        let over = InfraHead::outage_over;
        assert!(over(Some(failed(false)), &head(7, 8, ErrorClass::Infra)));
        assert!(
            !over(Some(failed(false)), &head(7, 7, ErrorClass::Infra)),
            "W still"
        );
        assert!(
            !over(Some(failed(true)), &head(7, 9, ErrorClass::Infra)),
            "once per tier"
        );
        assert!(
            !over(Some(failed(false)), &head(8, 9, ErrorClass::Infra)),
            "another head"
        );
        assert!(!over(
            Some(failed(false)),
            &head(7, 9, ErrorClass::Unsupported)
        ));
        assert!(
            !over(None, &head(7, 9, ErrorClass::Infra)),
            "failed elsewhere"
        );
    }

    #[test]
    fn each_outcome_is_counted_under_its_label() {
        for outcome in [
            ProcessOutcome::Succeeded,
            ProcessOutcome::Skipped("x".into()),
            ProcessOutcome::Dead(ErrorClass::Malformed, "x".into()),
            ProcessOutcome::Failed(ErrorClass::Infra, "x".into()),
            ProcessOutcome::AlreadyTerminal,
            ProcessOutcome::Superseded,
        ] {
            let mut report = RunReport::<PumpCounts>::default();
            report.details.of(&outcome).add(1);
            let keys: Vec<String> = report.rendered().keys().cloned().collect();
            assert_eq!(keys, vec![outcome.label().to_string()]);
        }
    }
}
