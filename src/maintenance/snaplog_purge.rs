//! `snaplog-purge` (design §9.3): SCHD_SNAP_LOG rows past
//! `msgx.snaplog.retention`, selected by (SCOPE_END, RECV_AT). The log is
//! append-only and rebuildable, so time alone is enough evidence here.

use crate::config::Config;
use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{
    Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use crate::store::pg::snap_log;

const SNAP_LOG: Sweep = Sweep {
    label: "snap_log_deleted",
    sql: snap_log::RETENTION_PURGE,
};

/// The settings `snaplog-purge` uses.
#[derive(Debug, Clone)]
pub struct SnaplogPurgeConfig {
    /// `msgx.snaplog.retention`.
    pub retention: chrono::Duration,
}

impl JobSettings for SnaplogPurgeConfig {
    fn from_config(config: &Config) -> Self {
        Self {
            retention: config.msgx.snaplog.retention.chrono(),
        }
    }
}

job_counts! {
    /// What a `snaplog-purge` run did.
    pub struct SnaplogPurgeCounts { snap_log_deleted }
}

/// The snap-log purge job.
pub struct SnaplogPurge {
    config: SnaplogPurgeConfig,
}

impl SnaplogPurge {
    pub fn new(config: SnaplogPurgeConfig) -> Result<Self, JobConfigError> {
        Ok(Self { config })
    }
}

#[async_trait::async_trait]
impl Job for SnaplogPurge {
    type Details = SnaplogPurgeCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<SnaplogPurgeCounts>, JobError> {
        let now = ctx.clock.now();
        let mut report = RunReport::<SnaplogPurgeCounts>::default();
        let cutoff = now - self.config.retention;
        let deleted = run_sweep(
            ctx,
            bounds,
            bounds.deadline(now),
            &SNAP_LOG,
            cutoff,
            &mut report,
        )
        .await?;
        report.details.snap_log_deleted.add(deleted);
        Ok(report)
    }
}
