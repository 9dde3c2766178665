//! `retention`: closed REQ_TRACK rows past `msgx.request.retention`
//! (G-REQ-TRACK-RETENTION) and JOB_RUN rows past `msgx.job-run.retention`.

use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{Job, JobContext, JobError, RunBounds, RunReport};

const CLOSED_REQUESTS: Sweep = Sweep {
    label: "req_track_deleted",
    count_sql: "SELECT count(*) FROM req_track WHERE state IN ('DONE', 'EXPIRED') AND closed_at < $1",
    apply_sql: "DELETE FROM req_track WHERE id IN (SELECT id FROM req_track \
                WHERE state IN ('DONE', 'EXPIRED') AND closed_at < $1 ORDER BY closed_at LIMIT $2) \
                AND $3::timestamptz IS NOT NULL",
};

const JOB_RUNS: Sweep = Sweep {
    label: "job_run_deleted",
    count_sql: "SELECT count(*) FROM job_run WHERE started_at < $1 AND outcome <> 'RUNNING'",
    apply_sql: "DELETE FROM job_run WHERE id IN (SELECT id FROM job_run \
                WHERE started_at < $1 AND outcome <> 'RUNNING' ORDER BY started_at LIMIT $2) \
                AND $3::timestamptz IS NOT NULL",
};

/// The retention job.
pub struct Retention;

#[async_trait::async_trait]
impl Job for Retention {
    async fn run_once(&self, ctx: &JobContext, bounds: &RunBounds) -> Result<RunReport, JobError> {
        let now = ctx.clock.now();
        let deadline = bounds.deadline(now);
        let m = &ctx.config.msgx;
        let mut report = RunReport::default();
        run_sweep(
            ctx,
            bounds,
            deadline,
            &CLOSED_REQUESTS,
            now - m.request.retention.chrono(),
            &mut report,
        )
        .await?;
        run_sweep(
            ctx,
            bounds,
            deadline,
            &JOB_RUNS,
            now - m.job_run.retention.chrono(),
            &mut report,
        )
        .await?;
        Ok(report)
    }
}
