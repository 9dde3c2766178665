//! `ingest-sweep` = InboxPoller (design §4.1, §4.3): reads mailbox rows
//! `ID > W` in ascending order, claim-batch rows at a time, enqueues the
//! contiguous prefix as PENDING and advances W — insertIfAbsent and the cursor
//! write in one PostgreSQL transaction. The hole rule is
//! [`watermark::plan_round`](crate::domain::watermark::plan_round).
//!
//! A mailbox that cannot be read is an infrastructure failure: the run fails
//! with the reason, the cursor is untouched, and nothing is taken as "no new
//! messages". Released holes are recorded in INBOX_HOLE; a row that later
//! appears inside a released hole (a late commit) is recorded in
//! INBOX_LATE_ROW and logged as an error — never skipped silently.
//!
//! The late-row re-check queries the shared mailbox, so it is rationed
//! (issue 17 item 7): each hole at most once per
//! `msgx.pipeline.late-row-recheck` (INBOX_HOLE.CHECKED_AT). It runs after
//! the enqueue transactions committed, so a failing check is logged and
//! counted (`msgx_ingest_late_row_check_failures_total`) but never fails the
//! run: the rows it enqueued stand.

use crate::config::{Config, CutoverWatermark};
use crate::domain::watermark::plan_round;
use crate::jobs::{
    Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use crate::store::pg::inbox;
use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};

/// The settings `ingest-sweep` uses.
#[derive(Debug, Clone)]
pub struct InboxPollerConfig {
    /// `msgx.pipeline.claim-batch`: mailbox rows per round.
    pub claim_batch: u32,
    /// `msgx.pipeline.max-commit-delay`: how long a hole holds W.
    pub max_commit_delay: chrono::Duration,
    /// `msgx.pipeline.cutover-watermark` (§4.3), when set.
    pub cutover: Option<CutoverWatermark>,
    /// `msgx.airport.timezone`: mailbox times are airport local time.
    pub timezone: chrono_tz::Tz,
    /// `msgx.mailbox.raw-retention`: released holes re-checked this long.
    pub raw_retention: chrono::Duration,
    /// `msgx.pipeline.late-row-recheck`: each hole at most this often.
    pub late_row_recheck: chrono::Duration,
}

impl JobSettings for InboxPollerConfig {
    fn from_config(config: &Config) -> Self {
        let p = &config.msgx.pipeline;
        Self {
            claim_batch: p.claim_batch,
            max_commit_delay: p.max_commit_delay.chrono(),
            cutover: p.cutover(),
            timezone: config.msgx.airport.tz(),
            raw_retention: config.msgx.mailbox.raw_retention.chrono(),
            late_row_recheck: p.late_row_recheck.chrono(),
        }
    }
}

job_counts! {
    /// What an `ingest-sweep` run did.
    pub struct IngestCounts {
        enqueued,
        holes_released,
        held_by_hole,
        late_rows,
        late_row_holes_checked,
        late_row_check_failures,
    }
}

/// The ingest job.
pub struct InboxPoller {
    config: InboxPollerConfig,
}

impl InboxPoller {
    pub fn new(config: InboxPollerConfig) -> Result<Self, JobConfigError> {
        JobConfigError::at_least_one("msgx.pipeline.claim-batch", u64::from(config.claim_batch))?;
        Ok(Self { config })
    }
}

/// How many due released holes one run re-checks for late commits at most.
const LATE_ROW_HOLES_CHECKED: i64 = 100;

#[async_trait::async_trait]
impl Job for InboxPoller {
    type Details = IngestCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<IngestCounts>, JobError> {
        let cfg = &self.config;
        let start = ctx.clock.now();
        let deadline = bounds.deadline(start);
        let mut report = RunReport::<IngestCounts>::default();
        seed_if_configured(cfg, ctx).await?;
        let claim = cfg.claim_batch;
        let delay = cfg.max_commit_delay;
        loop {
            if report.items >= bounds.max_items || !ctx.may_continue(deadline)? {
                report.more = true;
                break;
            }
            let w = inbox::load(&ctx.pg).await?.cursor.w;
            // Mailbox unreadable → Err: the cursor is not touched (§4.1 step 1).
            let rows = ctx.mailbox.fetch_after(w, claim).await?;
            let now = ctx.clock.now();
            let mut tx = ctx.pg.begin().await?;
            ctx.fence(&mut tx).await?;
            let current = inbox::load_for_update(&mut tx).await?.cursor;
            if current.w != w {
                // Someone else moved W (cannot happen under the instance lock);
                // re-read rather than enqueue against a stale W.
                tx.rollback().await?;
                continue;
            }
            let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
            let plan = plan_round(current, &ids, now, delay);
            let taken = &rows[..plan.take];
            let received: Vec<Option<DateTime<Utc>>> = taken
                .iter()
                .map(|r| r.received_at.and_then(|t| to_utc(cfg, t)))
                .collect();
            let taken_ids: Vec<i64> = taken.iter().map(|r| r.id).collect();
            let inserted = inbox::enqueue(&mut tx, &taken_ids, &received, now).await?;
            if let Some(hole) = plan.released {
                inbox::record_hole(&mut tx, hole, now).await?;
            }
            if plan.next != current {
                inbox::save(&mut tx, plan.next, now).await?;
            }
            tx.commit().await?;
            report.items += inserted;
            report.details.enqueued.add(inserted);
            // W, the open hole, released holes and late rows are database
            // state: `/metrics` reads them (crate::prometheus::refresh).
            metrics::counter!("msgx_ingest_enqueued_total").increment(inserted);
            if let Some(hole) = plan.released {
                report.details.holes_released.add(1);
                tracing::warn!(
                    first_id = hole.first_id,
                    last_id = hole.last_id,
                    first_seen = %hole.first_seen,
                    "Permanent hole released after max-commit-delay; those IDs are skipped"
                );
            }
            if plan.holding && plan.take == 0 {
                report.details.held_by_hole.add(1);
            }
            let caught_up = plan.take == rows.len() && rows.len() < claim as usize;
            if caught_up || plan.holding || rows.is_empty() {
                break;
            }
        }
        match detect_late_rows(cfg, ctx).await {
            Ok(check) => {
                report.details.late_rows.add(check.found);
                report.details.late_row_holes_checked.add(check.holes);
            }
            Err(e) => {
                metrics::counter!("msgx_ingest_late_row_check_failures_total").increment(1);
                report.details.late_row_check_failures.add(1);
                tracing::warn!(
                    error = %crate::error_text::cut(&e.to_string()),
                    "Late-row check failed; the rows enqueued stand, the holes are checked again \
                     after msgx.pipeline.late-row-recheck"
                );
            }
        }
        Ok(report)
    }
}

/// The mailbox stores naive local times; the mailbox owner writes airport
/// local time (sis-format §1.6), so the airport zone converts them.
fn to_utc(cfg: &InboxPollerConfig, t: NaiveDateTime) -> Option<DateTime<Utc>> {
    cfg.timezone
        .from_local_datetime(&t)
        .earliest()
        .map(|d| d.with_timezone(&Utc))
}

/// Cutover seeding (§4.3): only with `msgx.pipeline.cutover-watermark` set,
/// only on a fresh instance; refused (the run fails) on an instance that
/// already has a watermark or processing records.
async fn seed_if_configured(cfg: &InboxPollerConfig, ctx: &JobContext) -> Result<(), JobError> {
    let Some(choice) = cfg.cutover else {
        return Ok(());
    };
    let row = inbox::load(&ctx.pg).await?;
    if row.seeded_at.is_some() {
        return Ok(());
    }
    if row.cursor.w != 0 || inbox::has_proc_state(&ctx.pg).await? {
        return Err(JobError::Other(format!(
            "msgx.pipeline.cutover-watermark is set, but this instance already has a watermark (W = {}) \
             or processing records: seeding is refused; remove the setting",
            row.cursor.w
        )));
    }
    let (min, max) = ctx.mailbox.id_range().await?;
    let w = match choice {
        CutoverWatermark::Min => min.map(|m| m - 1).unwrap_or(0),
        CutoverWatermark::Zero => 0,
        CutoverWatermark::Max => max.unwrap_or(0),
        CutoverWatermark::Id(id) => id,
    };
    let now = ctx.clock.now();
    let mut tx = ctx.pg.begin().await?;
    ctx.fence(&mut tx).await?;
    if !inbox::seed(&mut tx, w, now).await? {
        tx.rollback().await?;
        return Err(JobError::Other(
            "cutover seeding refused: the instance is not fresh".into(),
        ));
    }
    tx.commit().await?;
    tracing::warn!(?choice, w, "Cutover seeding: watermark set");
    Ok(())
}

/// What one late-row check did.
#[derive(Debug, Default)]
struct LateRowCheck {
    /// Holes whose mailbox range was read.
    holes: u64,
    /// Late rows found for the first time.
    found: u64,
}

/// Re-checks the released holes that are due (released within
/// `msgx.mailbox.raw-retention`, not checked within
/// `msgx.pipeline.late-row-recheck`) for rows that committed late. Every hole
/// attempted is marked checked, the failing one too, so a failing check is
/// not repeated against the shared mailbox on every run.
async fn detect_late_rows(
    cfg: &InboxPollerConfig,
    ctx: &JobContext,
) -> Result<LateRowCheck, JobError> {
    let now = ctx.clock.now();
    let since = now - cfg.raw_retention;
    let checked_before = now - cfg.late_row_recheck;
    let due =
        inbox::holes_due_for_check(&ctx.pg, since, checked_before, LATE_ROW_HOLES_CHECKED).await?;
    let mut check = LateRowCheck::default();
    let mut attempted = Vec::with_capacity(due.len());
    let mut failure = None;
    for hole in &due {
        attempted.push(hole.id);
        match check_hole(cfg, ctx, hole, now).await {
            Ok(found) => {
                check.holes += 1;
                check.found += found;
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let marked = if attempted.is_empty() {
        Ok(())
    } else {
        inbox::mark_holes_checked(&ctx.pg, &attempted, now).await
    };
    if let Some(e) = failure {
        return Err(e);
    }
    marked?;
    Ok(check)
}

/// Reads one hole's ID range in the mailbox; records and logs every row
/// found there for the first time. Returns how many were new.
async fn check_hole(
    cfg: &InboxPollerConfig,
    ctx: &JobContext,
    hole: &inbox::HoleRow,
    now: DateTime<Utc>,
) -> Result<u64, JobError> {
    let mut found = 0;
    for row in ctx
        .mailbox
        .rows_between(hole.first_id, hole.last_id)
        .await?
    {
        let received = row.received_at.and_then(|t| to_utc(cfg, t));
        if inbox::record_late_row(&ctx.pg, row.id, hole.id, received, now).await? {
            found += 1;
            tracing::error!(
                msg_id = row.id,
                hole_first = hole.first_id,
                hole_last = hole.last_id,
                "Late row: committed inside a released hole, below the watermark; \
                 it was NOT processed — operator action needed (see docs/operations.md, Late rows)"
            );
        }
    }
    Ok(found)
}
