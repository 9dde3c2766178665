//! `archive-proc-state` (design §9.3, G-PROC-HST, G-HST-RETENTION): settled
//! terminal PROC_STATE rows move to PROC_STATE_HST; the main table keeps an
//! ARCHIVED dedup shadow row (MSG_ID and IDENTITY_KEY only), so a late
//! duplicate is still `duplicate-of` (INV-9).
//!
//! Time is only necessary; the evidence is what makes a row a candidate:
//! terminal **and** backfill settled (BACKFILL_AT set, or abandoned and
//! reconciled by an operator) **and** `msgx.archive.after` past UPDATED_AT.
//! An abandoned row that is not reconciled is never archived (C-8).
//!
//! §9.3 time order 3 (C-16): the abandoned-backfill list (`msgx backfill
//! abandoned`, read from PROC_STATE) is the owner's evidence for purging
//! rows that carry no mark, so it stays queryable for at least R_keep
//! (`msgx.mailbox.raw-retention`): a reconciled abandoned row is archived only
//! once it was abandoned more than R_keep ago, and its PROC_STATE_HST copy
//! is purged no earlier than R_keep after that either, whatever
//! `msgx.archive.hst-retention` says (`config check` also refuses an
//! hst-retention below R_keep or below the dedup memory).
//!
//! Each bounded batch is one transaction that never takes PIPELINE_LOCK (the
//! pump must not wait): it locks the candidates still in the state seen at
//! selection (`FOR UPDATE SKIP LOCKED`, re-checking the whole predicate),
//! copies exactly those to PROC_STATE_HST, then turns exactly those into
//! shadow rows. A replay that moved a row back to PENDING first makes the
//! predicate fail for it, so the row is skipped; a replay that comes after
//! finds an ARCHIVED row and leaves it. Either way there is no partial copy.
//!
//! Then shadow rows past `msgx.archive.dedup-memory` and PROC_STATE_HST rows
//! past `msgx.archive.hst-retention` are removed.

use crate::config::Config;
use crate::jobs::batch::{Sweep, run_retention_sweep};
use crate::jobs::{
    Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use crate::store::pg::proc_state_hst::{self as hst, ArchiveCutoffs};
use chrono::{DateTime, Utc};

const SHADOWS: Sweep = Sweep {
    label: "shadows_removed",
    sql: hst::SHADOW_PURGE,
};

const HST: Sweep = Sweep {
    label: "hst_purged",
    sql: hst::RETENTION_PURGE,
};

const HST_ABANDONED: Sweep = Sweep {
    label: "hst_purged",
    sql: hst::ABANDONED_PURGE,
};

/// The settings `archive-proc-state` uses.
#[derive(Debug, Clone)]
pub struct ArchiveConfig {
    /// `msgx.archive.after`, past UPDATED_AT.
    pub after: chrono::Duration,
    /// `msgx.mailbox.raw-retention` (R_keep): how long an abandoned row stays
    /// on the abandoned list first.
    pub raw_retention: chrono::Duration,
    /// `msgx.archive.dedup-memory`: shadow rows.
    pub dedup_memory: chrono::Duration,
    /// `msgx.archive.hst-retention`: PROC_STATE_HST rows.
    pub hst_retention: chrono::Duration,
}

impl JobSettings for ArchiveConfig {
    fn from_config(config: &Config) -> Self {
        let a = &config.msgx.archive;
        Self {
            after: a.after.chrono(),
            raw_retention: config.msgx.mailbox.raw_retention.chrono(),
            dedup_memory: a.dedup_memory.chrono(),
            hst_retention: a.hst_retention.chrono(),
        }
    }
}

job_counts! {
    /// What an `archive-proc-state` run did.
    pub struct ArchiveCounts { archived, shadows_removed, hst_purged }
}

/// The archive job.
pub struct ArchiveProcState {
    config: ArchiveConfig,
}

impl ArchiveProcState {
    pub fn new(config: ArchiveConfig) -> Result<Self, JobConfigError> {
        Ok(Self { config })
    }
}

#[async_trait::async_trait]
impl Job for ArchiveProcState {
    type Details = ArchiveCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<ArchiveCounts>, JobError> {
        let now = ctx.clock.now();
        let deadline = bounds.deadline(now);
        let a = &self.config;
        let listed_until = now - a.raw_retention;
        let cutoffs = ArchiveCutoffs {
            settled_before: now - a.after,
            listed_until,
        };
        let mut report = RunReport::<ArchiveCounts>::default();
        if ctx.dry_run {
            let n = hst::candidates_count(&ctx.pg, cutoffs).await?;
            let n = u64::try_from(n).unwrap_or(0);
            let take = n.min(bounds.max_items);
            report.items += take;
            report.more |= n > take;
            report.details.archived.add(take);
        } else {
            loop {
                let left = bounds.max_items.saturating_sub(report.items);
                if left == 0 || !ctx.may_continue(deadline)? {
                    report.more = true;
                    break;
                }
                let limit = u64::from(bounds.batch.max(1)).min(left);
                let moved = archive_batch(ctx, cutoffs, limit, now).await?;
                report.items += moved;
                report.details.archived.add(moved);
                if moved < limit {
                    break;
                }
            }
        }
        let removed = run_retention_sweep(
            ctx,
            bounds,
            deadline,
            &SHADOWS,
            now - a.dedup_memory,
            &mut report,
        )
        .await?;
        report.details.shadows_removed.add(removed);
        let hst_cutoff = now - a.hst_retention;
        let purged =
            run_retention_sweep(ctx, bounds, deadline, &HST, hst_cutoff, &mut report).await?;
        report.details.hst_purged.add(purged);
        let purged = run_retention_sweep(
            ctx,
            bounds,
            deadline,
            &HST_ABANDONED,
            hst_cutoff.min(listed_until),
            &mut report,
        )
        .await?;
        report.details.hst_purged.add(purged);
        if report.items > 0 {
            tracing::info!(items = report.items, details = ?report.rendered(), "Archive run");
        }
        Ok(report)
    }
}

/// One batch in one transaction (no PIPELINE_LOCK): lock the rows that still
/// satisfy the predicate, copy them, shadow them. Returns the rows moved.
async fn archive_batch(
    ctx: &JobContext,
    cutoffs: ArchiveCutoffs,
    limit: u64,
    now: DateTime<Utc>,
) -> Result<u64, JobError> {
    let mut tx = ctx.pg.begin().await?;
    ctx.fence(&mut tx).await?;
    let ids =
        hst::candidates_lock(&mut tx, cutoffs, i64::try_from(limit).unwrap_or(i64::MAX)).await?;
    if ids.is_empty() {
        tx.rollback().await?;
        return Ok(0);
    }
    let copied = hst::copy(&mut tx, &ids, now).await?;
    let shadowed = hst::shadows_make(&mut tx, &ids).await?;
    if copied != shadowed || shadowed != ids.len() as u64 {
        // Cannot happen with the rows locked; refuse rather than leave a partial copy.
        tx.rollback().await?;
        return Err(JobError::Other(format!(
            "archive batch inconsistent (locked {}, copied {copied}, shadowed {shadowed}); rolled back",
            ids.len()
        )));
    }
    tx.commit().await?;
    Ok(shadowed)
}
