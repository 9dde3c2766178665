//! `event-cleanup` (design §8.3): SENT outbox rows past
//! `msgx.pipeline.event-retention`, judged by SENT_AT only. KAFKA:msg DEAD
//! rows stay as the DLQ until an operator resolves them.

use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{Job, JobContext, JobError, RunBounds, RunReport};
use crate::store::pg::msg_event;

const SENT_EVENTS: Sweep = Sweep {
    label: "events_deleted",
    sql: msg_event::SENT_PURGE,
};

/// The event cleanup job.
pub struct EventCleanup;

#[async_trait::async_trait]
impl Job for EventCleanup {
    async fn run_once(&self, ctx: &JobContext, bounds: &RunBounds) -> Result<RunReport, JobError> {
        let now = ctx.clock.now();
        let mut report = RunReport::default();
        let cutoff = now - ctx.config.msgx.pipeline.event_retention.chrono();
        run_sweep(
            ctx,
            bounds,
            bounds.deadline(now),
            &SENT_EVENTS,
            cutoff,
            &mut report,
        )
        .await?;
        Ok(report)
    }
}
