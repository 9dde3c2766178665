//! The one bounded-batch loop every purge and retention job uses (River's
//! `runOnce`: a LIMITed statement repeated until a short batch, the item
//! bound, the time budget, shutdown or lock loss).

use super::{Details, JobContext, JobError, RunBounds, RunReport};
use crate::store::pg::sweep::SweepSql;
use chrono::{DateTime, Utc};

/// One statement family (rows older than a cutoff) and the count it reports.
pub struct Sweep {
    /// Its name in the log, e.g. `job_run_deleted` (the report's count of
    /// the same name is the caller's: the returned rows).
    pub label: &'static str,
    /// The statements, kept in the store beside their table.
    pub sql: SweepSql,
}

/// Runs `sweep` for rows older than `cutoff` within the run's bounds (the
/// item bound less what `report` already holds), adding to the report's
/// items; returns the rows it changed (with `--dry-run`, would change).
pub async fn run_sweep<D: Details>(
    ctx: &JobContext,
    bounds: &RunBounds,
    deadline: DateTime<Utc>,
    sweep: &Sweep,
    cutoff: DateTime<Utc>,
    report: &mut RunReport<D>,
) -> Result<u64, JobError> {
    let budget_left = bounds.max_items.saturating_sub(report.items);
    if ctx.dry_run {
        let n = sweep.sql.count(&ctx.pg, cutoff).await?;
        let n = u64::try_from(n).unwrap_or(0);
        let take = n.min(budget_left);
        report.items += take;
        report.more |= n > take;
        return Ok(take);
    }
    let mut done = 0u64;
    loop {
        if done >= budget_left {
            report.more = true;
            break;
        }
        if !ctx.may_continue(deadline)? {
            report.more = true;
            break;
        }
        let limit = u64::from(bounds.batch.max(1)).min(budget_left - done);
        let affected = sweep
            .sql
            .apply(
                &ctx.pg,
                cutoff,
                i64::try_from(limit).unwrap_or(i64::MAX),
                ctx.clock.now(),
            )
            .await?;
        done += affected;
        if affected < limit {
            break;
        }
    }
    report.items += done;
    if done > 0 {
        tracing::info!(job_step = sweep.label, rows = done, %cutoff, "Swept rows");
    }
    Ok(done)
}

/// A retention sweep that follows a job's main work (archive, history clean):
/// it gets its own full item bound instead of what the main work left.
pub async fn run_retention_sweep<D: Details>(
    ctx: &JobContext,
    bounds: &RunBounds,
    deadline: DateTime<Utc>,
    sweep: &Sweep,
    cutoff: DateTime<Utc>,
    report: &mut RunReport<D>,
) -> Result<u64, JobError> {
    let own = RunBounds {
        max_items: bounds.max_items.saturating_add(report.items),
        ..bounds.clone()
    };
    run_sweep(ctx, &own, deadline, sweep, cutoff, report).await
}
