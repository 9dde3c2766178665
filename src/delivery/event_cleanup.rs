//! `event-cleanup` (design §8.3): SENT outbox rows past
//! `msgx.pipeline.event-retention`, judged by SENT_AT only. KAFKA:msg DEAD
//! rows stay as the DLQ until an operator resolves them.

use crate::config::Config;
use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{
    Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use crate::store::pg::msg_event;

const SENT_EVENTS: Sweep = Sweep {
    label: "events_deleted",
    sql: msg_event::SENT_PURGE,
};

/// The settings `event-cleanup` uses.
#[derive(Debug, Clone)]
pub struct EventCleanupConfig {
    /// `msgx.pipeline.event-retention`, after SENT_AT.
    pub retention: chrono::Duration,
}

impl JobSettings for EventCleanupConfig {
    fn from_config(config: &Config) -> Self {
        Self {
            retention: config.msgx.pipeline.event_retention.chrono(),
        }
    }
}

job_counts! {
    /// What an `event-cleanup` run did.
    pub struct EventCleanupCounts { events_deleted }
}

/// The event cleanup job.
pub struct EventCleanup {
    config: EventCleanupConfig,
}

impl EventCleanup {
    pub fn new(config: EventCleanupConfig) -> Result<Self, JobConfigError> {
        Ok(Self { config })
    }
}

#[async_trait::async_trait]
impl Job for EventCleanup {
    type Details = EventCleanupCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<EventCleanupCounts>, JobError> {
        let now = ctx.clock.now();
        let mut report = RunReport::<EventCleanupCounts>::default();
        let cutoff = now - self.config.retention;
        let deleted = run_sweep(
            ctx,
            bounds,
            bounds.deadline(now),
            &SENT_EVENTS,
            cutoff,
            &mut report,
        )
        .await?;
        report.details.events_deleted.add(deleted);
        Ok(report)
    }
}
