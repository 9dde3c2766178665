//! `retention`: closed REQ_TRACK rows past `msgx.request.retention`
//! (G-REQ-TRACK-RETENTION) and JOB_RUN rows past `msgx.job-run.retention`.

use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{Job, JobContext, JobError, RunBounds, RunReport};
use crate::store::pg::{job_run, req_track};

const CLOSED_REQUESTS: Sweep = Sweep {
    label: "req_track_deleted",
    sql: req_track::CLOSED_PURGE,
};

const JOB_RUNS: Sweep = Sweep {
    label: "job_run_deleted",
    sql: job_run::RETENTION_PURGE,
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
