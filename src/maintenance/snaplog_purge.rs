//! `snaplog-purge` (design §9.3 "留痕清理"): SCHD_SNAP_LOG rows past
//! `msgx.snaplog.retention`, selected by (SCOPE_END, RECV_AT). The log is
//! append-only and rebuildable, so time alone is enough evidence here.

use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{Job, JobContext, JobError, RunBounds, RunReport};

const SNAP_LOG: Sweep = Sweep {
    label: "snap_log_deleted",
    count_sql: "SELECT count(*) FROM schd_snap_log \
                WHERE (scope_end IS NULL OR scope_end < $1) AND recv_at < $1",
    apply_sql: "DELETE FROM schd_snap_log WHERE id IN (SELECT id FROM schd_snap_log \
                WHERE (scope_end IS NULL OR scope_end < $1) AND recv_at < $1 \
                ORDER BY scope_end NULLS FIRST, recv_at LIMIT $2) AND $3::timestamptz IS NOT NULL",
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
