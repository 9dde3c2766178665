//! `snaplog-purge` (design §9.3 "留痕清理"): SCHD_SNAP_LOG rows past
//! `msgx.snaplog.retention`, selected by (SCOPE_END, RECV_AT). The log is
//! append-only and rebuildable, so time alone is enough evidence here.

use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{Job, JobContext, JobError, RunBounds, RunReport};
use crate::store::pg::snap_log;

const SNAP_LOG: Sweep = Sweep {
    label: "snap_log_deleted",
    sql: snap_log::RETENTION_PURGE,
};

/// The snap-log purge job.
pub struct SnaplogPurge;

#[async_trait::async_trait]
impl Job for SnaplogPurge {
    async fn run_once(&self, ctx: &JobContext, bounds: &RunBounds) -> Result<RunReport, JobError> {
        let now = ctx.clock.now();
        let mut report = RunReport::default();
        let cutoff = now - ctx.config.msgx.snaplog.retention.chrono();
        run_sweep(
            ctx,
            bounds,
            bounds.deadline(now),
            &SNAP_LOG,
            cutoff,
            &mut report,
        )
        .await?;
        Ok(report)
    }
}
