//! `retention`: closed REQ_TRACK rows past `msgx.request.retention`
//! (G-REQ-TRACK-RETENTION), JOB_RUN rows past `msgx.job-run.retention` and
//! COMPAT_REQUEST records past `msgx.http.compat-record-retention` (those a
//! mailbox row still needs for its identity stay).

use crate::config::Config;
use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{
    Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use crate::store::pg::{compat_request, job_run, req_track};

const CLOSED_REQUESTS: Sweep = Sweep {
    label: "req_track_deleted",
    sql: req_track::CLOSED_PURGE,
};

const COMPAT_REQUESTS: Sweep = Sweep {
    label: "compat_request_deleted",
    sql: compat_request::RETENTION_PURGE,
};

const JOB_RUNS: Sweep = Sweep {
    label: "job_run_deleted",
    sql: job_run::RETENTION_PURGE,
};

/// The settings `retention` uses.
#[derive(Debug, Clone)]
pub struct RetentionConfig {
    /// `msgx.request.retention`: closed REQ_TRACK rows.
    pub requests: chrono::Duration,
    /// `msgx.job-run.retention`: JOB_RUN rows.
    pub job_runs: chrono::Duration,
    /// `msgx.http.compat-record-retention`: COMPAT_REQUEST records.
    pub compat_requests: chrono::Duration,
}

impl JobSettings for RetentionConfig {
    fn from_config(config: &Config) -> Self {
        Self {
            requests: config.msgx.request.retention.chrono(),
            job_runs: config.msgx.job_run.retention.chrono(),
            compat_requests: config.msgx.http.compat_record_retention.chrono(),
        }
    }
}

job_counts! {
    /// What a `retention` run did.
    pub struct RetentionCounts { req_track_deleted, job_run_deleted, compat_request_deleted }
}

/// The retention job.
pub struct Retention {
    config: RetentionConfig,
}

impl Retention {
    pub fn new(config: RetentionConfig) -> Result<Self, JobConfigError> {
        Ok(Self { config })
    }
}

#[async_trait::async_trait]
impl Job for Retention {
    type Details = RetentionCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<RetentionCounts>, JobError> {
        let now = ctx.clock.now();
        let deadline = bounds.deadline(now);
        let c = &self.config;
        let mut report = RunReport::<RetentionCounts>::default();
        let n = run_sweep(
            ctx,
            bounds,
            deadline,
            &CLOSED_REQUESTS,
            now - c.requests,
            &mut report,
        )
        .await?;
        report.details.req_track_deleted.add(n);
        let n = run_sweep(
            ctx,
            bounds,
            deadline,
            &JOB_RUNS,
            now - c.job_runs,
            &mut report,
        )
        .await?;
        report.details.job_run_deleted.add(n);
        let n = run_sweep(
            ctx,
            bounds,
            deadline,
            &COMPAT_REQUESTS,
            now - c.compat_requests,
            &mut report,
        )
        .await?;
        report.details.compat_request_deleted.add(n);
        Ok(report)
    }
}
