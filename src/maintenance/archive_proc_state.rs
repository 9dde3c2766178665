//! `archive-proc-state` (design §9.3 "处理终态归档", G-PROC-HST,
//! G-HST-RETENTION): settled terminal PROC_STATE rows move to
//! PROC_STATE_HST; the main table keeps an ARCHIVED dedup shadow row
//! (MSG_ID and IDENTITY_KEY only), so a late duplicate is still
//! `duplicate-of` (INV-9).
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

use super::batch::{Sweep, run_retention_sweep};
use crate::config::Config;
use crate::jobs::{
    Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use chrono::{DateTime, Utc};

/// The candidate predicate (§9.3), `$1` = now − archive.after, `$2` = now −
/// R_keep (an abandoned row stays on the abandoned list that long).
const CANDIDATE: &str = "state IN ('SUCCEEDED', 'SKIPPED', 'DEAD') AND state <> 'ARCHIVED' \
     AND (backfill_at IS NOT NULL \
          OR (backfill_abandoned_at IS NOT NULL AND backfill_reconciled_at IS NOT NULL \
              AND backfill_abandoned_at < $2)) \
     AND updated_at < $1";

/// Shadow rows whose archive copy is older than the dedup memory.
const SHADOWS: Sweep = Sweep {
    label: "shadows_removed",
    count_sql: "SELECT count(*) FROM proc_state p WHERE p.state = 'ARCHIVED' AND EXISTS \
                (SELECT 1 FROM proc_state_hst h WHERE h.msg_id = p.msg_id AND h.archived_at < $1)",
    apply_sql: "DELETE FROM proc_state WHERE msg_id IN (SELECT p.msg_id FROM proc_state p \
                WHERE p.state = 'ARCHIVED' AND EXISTS (SELECT 1 FROM proc_state_hst h \
                WHERE h.msg_id = p.msg_id AND h.archived_at < $1) ORDER BY p.msg_id LIMIT $2) \
                AND state = 'ARCHIVED' AND $3::timestamptz IS NOT NULL",
};

/// Archived copies past their own retention (G-HST-RETENTION), except the
/// abandoned-backfill evidence ([`HST_ABANDONED`]).
const HST: Sweep = Sweep {
    label: "hst_purged",
    count_sql: "SELECT count(*) FROM proc_state_hst \
                WHERE archived_at < $1 AND backfill_abandoned_at IS NULL",
    apply_sql: "DELETE FROM proc_state_hst WHERE msg_id IN (SELECT msg_id FROM proc_state_hst \
                WHERE archived_at < $1 AND backfill_abandoned_at IS NULL \
                ORDER BY archived_at LIMIT $2) AND $3::timestamptz IS NOT NULL",
};

/// Archived abandoned rows (C-8 evidence), `$1` = the later of the two
/// cutoffs: hst-retention past the archive and R_keep past the abandonment
/// (§9.3 time order 3).
const HST_ABANDONED: Sweep = Sweep {
    label: "hst_purged",
    count_sql: "SELECT count(*) FROM proc_state_hst \
                WHERE archived_at < $1 AND backfill_abandoned_at < $1",
    apply_sql: "DELETE FROM proc_state_hst WHERE msg_id IN (SELECT msg_id FROM proc_state_hst \
                WHERE archived_at < $1 AND backfill_abandoned_at < $1 \
                ORDER BY archived_at LIMIT $2) AND $3::timestamptz IS NOT NULL",
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
        let cutoff = now - a.after;
        let listed_until = now - a.raw_retention;
        let mut report = RunReport::<ArchiveCounts>::default();
        if ctx.dry_run {
            let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT count(*) FROM proc_state WHERE {CANDIDATE}"
            )))
            .bind(cutoff)
            .bind(listed_until)
            .fetch_one(&ctx.pg)
            .await?;
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
                let moved = archive_batch(ctx, (cutoff, listed_until), limit, now).await?;
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
/// satisfy the predicate (`cutoffs` = its `$1`, `$2`), copy them, shadow
/// them. Returns the rows moved.
async fn archive_batch(
    ctx: &JobContext,
    cutoffs: (DateTime<Utc>, DateTime<Utc>),
    limit: u64,
    now: DateTime<Utc>,
) -> Result<u64, JobError> {
    let mut tx = ctx.pg.begin().await?;
    ctx.fence(&mut tx).await?;
    let ids: Vec<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT msg_id FROM proc_state WHERE {CANDIDATE} ORDER BY msg_id LIMIT $3 FOR UPDATE SKIP LOCKED"
    )))
    .bind(cutoffs.0)
    .bind(cutoffs.1)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *tx)
    .await?;
    if ids.is_empty() {
        tx.rollback().await?;
        return Ok(0);
    }
    let copied = sqlx::query(
        "INSERT INTO proc_state_hst SELECT p.*, $2 FROM proc_state p WHERE p.msg_id = ANY($1) \
         ON CONFLICT (msg_id) DO UPDATE SET archived_at = EXCLUDED.archived_at",
    )
    .bind(&ids)
    .bind(now)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    let shadowed = sqlx::query(
        "UPDATE proc_state SET state = 'ARCHIVED', msg_type = NULL, msg_styp = NULL, attempts = 0, \
           next_attempt_at = NULL, error_class = NULL, last_error = NULL, outcome_reason = NULL, \
           received_at = NULL, enqueued_at = NULL, updated_at = NULL, finished_at = NULL, \
           backfill_next_at = NULL, backfill_at = NULL, backfill_attempts = 0, backfill_last_error = NULL, \
           backfill_abandoned_at = NULL, backfill_abandoned_reason = NULL, backfill_reconciled_at = NULL, \
           backfill_reconciled_note = NULL \
         WHERE msg_id = ANY($1) AND state IN ('SUCCEEDED', 'SKIPPED', 'DEAD')",
    )
    .bind(&ids)
    .execute(&mut *tx)
    .await?
    .rows_affected();
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
