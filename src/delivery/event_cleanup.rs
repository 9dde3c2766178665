//! `event-cleanup` (design §8.3): SENT outbox rows past
//! `msgx.pipeline.event-retention`, judged by SENT_AT only. KAFKA:msg DEAD
//! rows stay as the DLQ until an operator resolves them.

use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{Job, JobContext, JobError, RunBounds, RunReport};

const SENT_EVENTS: Sweep = Sweep {
    label: "events_deleted",
    count_sql: "SELECT count(*) FROM msg_event WHERE status = 'SENT' AND sent_at < $1",
    apply_sql: "DELETE FROM msg_event WHERE event_id IN (SELECT event_id FROM msg_event \
                WHERE status = 'SENT' AND sent_at < $1 ORDER BY sent_at LIMIT $2) \
                AND status = 'SENT' AND $3::timestamptz IS NOT NULL",
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
