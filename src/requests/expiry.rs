//! `request-expiry` (design §7.2): SENT requests older than
//! `msgx.request.expiry` become EXPIRED; a late RESP then never changes them.

use crate::jobs::{Job, JobContext, JobError, RunBounds, RunReport};
use crate::maintenance::batch::{Sweep, run_sweep};

const OVERDUE: Sweep = Sweep {
    label: "requests_expired",
    count_sql: "SELECT count(*) FROM req_track WHERE state = 'SENT' AND sent_at < $1",
    apply_sql: "UPDATE req_track SET state = 'EXPIRED', closed_at = $3 WHERE id IN \
                (SELECT id FROM req_track WHERE state = 'SENT' AND sent_at < $1 ORDER BY id LIMIT $2) \
                AND state = 'SENT'",
};

/// The request expiry job.
pub struct RequestExpiry;

#[async_trait::async_trait]
impl Job for RequestExpiry {
    async fn run_once(&self, ctx: &JobContext, bounds: &RunBounds) -> Result<RunReport, JobError> {
        let now = ctx.clock.now();
        let mut report = RunReport::default();
        let cutoff = now - ctx.config.msgx.request.expiry.chrono();
        run_sweep(
            ctx,
            bounds,
            bounds.deadline(now),
            &OVERDUE,
            cutoff,
            &mut report,
        )
        .await?;
        Ok(report)
    }
}
