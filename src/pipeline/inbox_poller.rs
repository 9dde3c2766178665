//! `ingest-sweep` = InboxPoller (design §4.1, §4.3): reads mailbox rows
//! `ID > W` in ascending order, claim-batch rows at a time, enqueues the
//! contiguous prefix as PENDING and advances W — insertIfAbsent and the cursor
//! write in one PostgreSQL transaction. The hole rule is
//! [`watermark::plan_round_with`](crate::domain::watermark::plan_round_with).
//!
//! A mailbox that cannot be read is an infrastructure failure: the run fails
//! with the reason, the cursor is untouched, and nothing is taken as "no new
//! messages". Released holes are recorded in INBOX_HOLE with the rule that
//! released them; a row that later appears inside a released hole (a late
//! commit) is recorded in INBOX_LATE_ROW and logged as an error — never
//! skipped silently.
//!
//! A poll is cheap: one statement on the mailbox when
//! idle, none on PostgreSQL. Under the instance lock only this process moves
//! W (§4.5), so the poller — one object for the daemon's lifetime
//! (`scheduler::registry::Jobs`) — keeps W and HOLE_SINCE in memory after the
//! first read and after each commit, per lock session, and drops them on
//! any error or when the transaction's `load_for_update` disagrees. A round
//! that changes nothing opens no transaction. `msgx run ingest-sweep` is a
//! fresh process and reads PostgreSQL.
//!
//! Transaction evidence (`msgx.pipeline.hole-evidence`):
//! while a hole is open, each round first reads the mailbox server's open
//! transactions, then fetches, then plans with what it read — in that
//! order, so that a transaction committing between the two is seen by the
//! fetch. The hole's sighting is the server time of the fetch that first
//! saw it, kept in memory (a restart sights it again, later: the safe
//! side). Without the PROCESS privilege the time rule alone applies; the
//! poller remembers that and asks again every [`EVIDENCE_RECHECK`].
//!
//! Evidence only where it is valid (`domain::evidence`): the evidence read also says which server answered
//! and whether it is read-only; that server's role (Galera, replication
//! sources) is read in the same transaction when the poller has not read it
//! within [`ROLE_RECHECK`] — so two more statements at most once a minute,
//! and only while a hole is open: the idle poll is unchanged. On a server
//! that is not the ID-allocating primary, or when the fetch was answered
//! by another server than the evidence (a splitting proxy), the hole ages
//! by the time rule, no evidence is read until the next check, and the
//! state is logged on each change and exported as
//! `msgx_ingest_hole_evidence{state}`.
//!
//! The late-row re-check queries the shared mailbox, so it is rationed:
//! each hole at most once per
//! `msgx.pipeline.late-row-recheck` (INBOX_HOLE.CHECKED_AT), and the poller
//! asks PostgreSQL for due holes only when the oldest check it knows of is
//! due, at the latest once per interval. It runs after the enqueue
//! transactions committed, so a failing check is logged and counted
//! (`msgx_ingest_late_row_check_failures_total`) but never fails the run:
//! the rows it enqueued stand.

use crate::config::{Config, CutoverWatermark};
use crate::domain::evidence::{EvidenceState, ServerRole};
use crate::domain::watermark::{
    self, Cleared, Cursor, ReleaseReason, Sighting, no_live_writer, plan_round_with,
};
use crate::jobs::{
    Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use crate::store::pg::inbox;
use chrono::{DateTime, NaiveDateTime, SubsecRound, TimeZone, Utc};
use std::time::{Duration, Instant};

/// The settings `ingest-sweep` uses.
#[derive(Debug, Clone)]
pub struct InboxPollerConfig {
    /// `msgx.pipeline.claim-batch`: mailbox rows per round.
    pub claim_batch: u32,
    /// `msgx.pipeline.max-commit-delay`: how long a hole holds W.
    pub max_commit_delay: chrono::Duration,
    /// `msgx.pipeline.hole-evidence`: release on transaction evidence.
    pub hole_evidence: bool,
    /// `msgx.pipeline.cutover-watermark` (§4.3), when set.
    pub cutover: Option<CutoverWatermark>,
    /// `msgx.airport.timezone`: mailbox times are airport local time.
    pub timezone: chrono_tz::Tz,
    /// `msgx.mailbox.raw-retention`: released holes re-checked this long.
    pub raw_retention: chrono::Duration,
    /// `msgx.pipeline.late-row-recheck`: each hole at most this often.
    pub late_row_recheck: chrono::Duration,
    /// `msgx.mailbox.shadow`: the marks are another system's.
    pub shadow: bool,
}

impl JobSettings for InboxPollerConfig {
    fn from_config(config: &Config) -> Self {
        let p = &config.msgx.pipeline;
        Self {
            claim_batch: p.claim_batch,
            max_commit_delay: p.max_commit_delay.chrono(),
            hole_evidence: p.hole_evidence,
            cutover: p.cutover(),
            timezone: config.msgx.airport.tz(),
            raw_retention: config.msgx.mailbox.raw_retention.chrono(),
            late_row_recheck: p.late_row_recheck.chrono(),
            shadow: config.msgx.mailbox.shadow,
        }
    }
}

job_counts! {
    /// What an `ingest-sweep` run did.
    pub struct IngestCounts {
        enqueued,
        holes_released,
        /// Of those, released on transaction evidence.
        holes_released_on_evidence,
        held_by_hole,
        /// Reads of the mailbox server's open transactions.
        hole_evidence_reads,
        /// Of those, answered from InnoDB's older cached copy: no evidence.
        hole_evidence_stale,
        late_rows,
        late_row_holes_checked,
        late_row_check_failures,
        /// IDs of released holes below a marked row, enqueued as purged
        /// ([`crate::domain::watermark::purged_after_mark`]).
        purged_after_mark,
    }
}

/// The ingest job.
pub struct InboxPoller {
    config: InboxPollerConfig,
    /// What it keeps between runs; one run at a time holds it.
    state: tokio::sync::Mutex<PollState>,
}

impl InboxPoller {
    pub fn new(config: InboxPollerConfig) -> Result<Self, JobConfigError> {
        JobConfigError::at_least_one("msgx.pipeline.claim-batch", u64::from(config.claim_batch))?;
        Ok(Self {
            config,
            state: tokio::sync::Mutex::default(),
        })
    }
}

/// How many due released holes one run re-checks for late commits at most.
const LATE_ROW_HOLES_CHECKED: i64 = 100;

/// Without the PROCESS privilege (or after a failed read) evidence is asked
/// for again this often, not on every poll.
pub const EVIDENCE_RECHECK: chrono::Duration = chrono::Duration::minutes(10);

/// How long the mailbox server's role (Galera, replication sources) read
/// with the evidence is trusted for that server (`@@server_id`) before it
/// is read again; `@@read_only` is read with every evidence read. A role
/// that invalidates evidence also stops evidence reads this long.
pub const ROLE_RECHECK: chrono::Duration = chrono::Duration::minutes(1);

/// At most one read of INNODB_TRX per this much real time: InnoDB refills
/// its copy only after 100 ms without readers (trx0i_s.cc), so reading more
/// often would keep our own reads stale. Real time, not the injected clock:
/// the limit is the server's.
const EVIDENCE_MIN_INTERVAL: Duration = Duration::from_millis(150);

/// Whether transaction evidence can be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum EvidenceAccess {
    #[default]
    Unknown,
    Granted,
    /// Refused (no PROCESS privilege): ask again at `retry_at`.
    Denied {
        retry_at: DateTime<Utc>,
    },
}

/// The poller's memory between runs.
#[derive(Debug, Default)]
struct PollState {
    /// The lock session the cached facts were read under (`Fence::parts`):
    /// another session may have held the lock and moved W in between.
    fence: Option<(i32, i32, i32)>,
    /// W and HOLE_SINCE as last read from or committed to PostgreSQL.
    cursor: Option<Cursor>,
    /// Cutover seeding was checked (it reads PostgreSQL).
    seed_checked: bool,
    /// The hole at W+1, as first seen on the mailbox server's clock.
    sighting: Option<Sighting>,
    evidence: EvidenceAccess,
    /// The role of the server that last answered an evidence read, and when
    /// it was read.
    role: Option<(ServerRole, DateTime<Utc>)>,
    /// A fetch answered by another server than the evidence: no evidence
    /// is read before this time.
    split_until: Option<DateTime<Utc>>,
    /// What `msgx_ingest_hole_evidence` says.
    evidence_state: EvidenceState,
    last_evidence_read: Option<Instant>,
    /// When a failed evidence read (not a refusal) was last logged.
    evidence_failure_logged: Option<DateTime<Utc>>,
    /// When a released hole is next due for its late-row check (known
    /// holes); `None` = ask PostgreSQL now.
    late_rows_due: Option<DateTime<Utc>>,
}

impl PollState {
    /// Forgets what PostgreSQL said (another lock session, another writer).
    /// The sighting stays: it is a fact of the mailbox, tied to its W.
    fn forget(&mut self) {
        self.cursor = None;
        self.seed_checked = false;
        self.late_rows_due = None;
    }

    /// True when evidence may be read now (enabled, not refused, not on a
    /// server found invalid within [`ROLE_RECHECK`], not read within
    /// [`EVIDENCE_MIN_INTERVAL`]).
    fn evidence_ready(&self, cfg: &InboxPollerConfig, now: DateTime<Utc>) -> bool {
        cfg.hole_evidence
            && !matches!(self.evidence, EvidenceAccess::Denied { retry_at } if now < retry_at)
            && !self
                .role
                .as_ref()
                .is_some_and(|(r, at)| now - *at < ROLE_RECHECK && !r.state().is_valid())
            && self.split_until.is_none_or(|t| now >= t)
            && self
                .last_evidence_read
                .is_none_or(|t| t.elapsed() >= EVIDENCE_MIN_INTERVAL)
    }

    /// Records and exports whether evidence is valid; logs a change into a
    /// server role that invalidates it (WARN) and back to valid (INFO). The
    /// missing PROCESS privilege is logged where it is found.
    fn publish(&mut self, new: EvidenceState) {
        let old = self.evidence_state;
        if new == old {
            return;
        }
        self.evidence_state = new;
        for s in EvidenceState::ALL {
            metrics::gauge!("msgx_ingest_hole_evidence", "state" => s.as_str()).set(if s == new {
                1.0
            } else {
                0.0
            });
        }
        match new {
            EvidenceState::Valid
                if !matches!(
                    old,
                    EvidenceState::Unknown | EvidenceState::NoPrivilege | EvidenceState::Disabled
                ) =>
            {
                tracing::info!("Transaction evidence for holes is valid again")
            }
            EvidenceState::ReadOnly
            | EvidenceState::Replica
            | EvidenceState::Galera
            | EvidenceState::Unverified
            | EvidenceState::Split => tracing::warn!(
                state = new.as_str(),
                "No transaction evidence for holes: {}",
                new.explain()
            ),
            _ => {}
        }
    }
}

/// An evidence read on a server where it is valid: which server answered,
/// and the hole it clears, if it does.
#[derive(Debug, Clone, Copy)]
struct Evidence {
    server_id: i64,
    cleared: Option<Cleared>,
}

/// The cursor as PostgreSQL stores it (microseconds), so that a cached copy
/// compares equal to what `load_for_update` reads back.
fn stored(c: Cursor) -> Cursor {
    Cursor {
        w: c.w,
        hole_since: c.hole_since.map(|t| t.trunc_subsecs(6)),
    }
}

#[async_trait::async_trait]
impl Job for InboxPoller {
    type Details = IngestCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<IngestCounts>, JobError> {
        let mut state = self.state.lock().await;
        let fence = ctx.guard.fence().map(|f| f.parts());
        if state.fence != fence {
            state.forget();
            state.fence = fence;
        }
        let mut report = RunReport::<IngestCounts>::default();
        match self.sweep(&mut state, ctx, bounds, &mut report).await {
            Ok(()) => Ok(report),
            Err(e) => {
                state.forget();
                state.sighting = None;
                // What the run enqueued before it failed still counts.
                Err(report.failed_with(e))
            }
        }
    }
}

impl InboxPoller {
    async fn sweep(
        &self,
        state: &mut PollState,
        ctx: &JobContext,
        bounds: &RunBounds,
        report: &mut RunReport<IngestCounts>,
    ) -> Result<(), JobError> {
        let cfg = &self.config;
        let start = ctx.clock.now();
        let deadline = bounds.deadline(start);
        if !state.seed_checked {
            seed_if_configured(cfg, ctx).await?;
            state.seed_checked = true;
        }
        if !cfg.hole_evidence {
            state.publish(EvidenceState::Disabled);
        }
        let claim = cfg.claim_batch;
        let delay = cfg.max_commit_delay;
        loop {
            if report.items >= bounds.max_items || !ctx.may_continue(deadline)? {
                report.more = true;
                break;
            }
            let current = match state.cursor {
                Some(c) => c,
                None => {
                    let c = stored(inbox::load(&ctx.pg).await?.cursor);
                    state.cursor = Some(c);
                    c
                }
            };
            // Evidence before the fetch: a holder that
            // commits in between is then seen by the fetch, never released.
            let evidence = read_evidence(cfg, state, ctx, current, report).await;
            // Mailbox unreadable → Err: the cursor is not touched (§4.1 step 1).
            let batch = ctx.mailbox.fetch_after(current.w, claim).await?;
            let rows = &batch.rows;
            let now = ctx.clock.now();
            // Evidence counts only for rows of the server it was read on.
            let cleared = match evidence {
                Some(ev) if batch.server_id == Some(ev.server_id) => {
                    state.publish(EvidenceState::Valid);
                    ev.cleared
                }
                Some(_) if batch.server_id.is_some() => {
                    state.publish(EvidenceState::Split);
                    state.split_until = Some(now + ROLE_RECHECK);
                    None
                }
                _ => None,
            };
            let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
            let plan = plan_round_with(current, &ids, now, delay, cleared);
            // A hole below a row msgx had marked is purged rows: enqueued
            // (the pump records them raw-missing), not recorded as a hole.
            let purged = plan.released.filter(|h| {
                let next_marked = rows
                    .iter()
                    .find(|r| r.id > h.last_id)
                    .is_some_and(|r| r.marked);
                watermark::purged_after_mark(h, next_marked, cfg.shadow)
            });
            let mut inserted = 0;
            if plan.take > 0 || plan.released.is_some() || plan.next != current {
                let mut tx = ctx.pg.begin().await?;
                ctx.fence(&mut tx).await?;
                let db = stored(inbox::load_for_update(&mut tx).await?.cursor);
                if db != current {
                    // Someone else moved W (cannot happen under the instance
                    // lock); re-read rather than enqueue against a stale W.
                    tx.rollback().await?;
                    state.forget();
                    continue;
                }
                let taken = &rows[..plan.take];
                let received: Vec<Option<DateTime<Utc>>> = taken
                    .iter()
                    .map(|r| r.received_at.and_then(|t| to_utc(cfg, t)))
                    .collect();
                let mut taken_ids: Vec<i64> = taken.iter().map(|r| r.id).collect();
                let mut received = received;
                if let Some(h) = purged {
                    let gap: Vec<i64> = (h.first_id..=h.last_id).collect();
                    received.splice(0..0, gap.iter().map(|_| None));
                    taken_ids.splice(0..0, gap);
                }
                inserted = inbox::enqueue(&mut tx, &taken_ids, &received, now).await?;
                if let (Some(hole), None) = (plan.released, purged) {
                    inbox::record_hole(&mut tx, hole, now).await?;
                }
                if plan.next != current {
                    inbox::save(&mut tx, plan.next, now).await?;
                }
                tx.commit().await?;
                state.cursor = Some(stored(plan.next));
                if inserted > 0 {
                    ctx.handoff.committed();
                }
            }
            // The sighting of the hole W now waits at: kept while it is the
            // same hole, else taken from this fetch.
            let sighted_now = match (plan.holding, rows.get(plan.take), batch.server_micros) {
                (true, Some(after), Some(at)) => match state.sighting {
                    Some(s) if s.w == plan.next.w && after.id <= s.next_id => false,
                    _ => {
                        state.sighting = Some(Sighting {
                            w: plan.next.w,
                            next_id: after.id,
                            at_micros: at,
                        });
                        true
                    }
                },
                _ => {
                    state.sighting = None;
                    false
                }
            };
            report.items += inserted;
            report.details.enqueued.add(inserted);
            // W, the open hole, released holes and late rows are database
            // state: `/metrics` reads them (crate::prometheus::refresh).
            metrics::counter!("msgx_ingest_enqueued_total").increment(inserted);
            if let Some(h) = purged {
                let n = u64::try_from(h.last_id - h.first_id + 1).unwrap_or(0);
                report.details.purged_after_mark.add(n);
                tracing::error!(
                    first_id = h.first_id,
                    last_id = h.last_id,
                    "Rows missing below a row msgx had already marked: msgx's record was rolled \
                     back (a restore or failover) and the mailbox owner purged these after their \
                     mark; enqueued, they end DEAD(MALFORMED, raw-missing)"
                );
            } else if let Some(hole) = plan.released {
                report.details.holes_released.add(1);
                match hole.reason {
                    ReleaseReason::NoLiveTransaction => {
                        report.details.holes_released_on_evidence.add(1);
                        tracing::warn!(
                            first_id = hole.first_id,
                            last_id = hole.last_id,
                            first_seen = %hole.first_seen,
                            reason = hole.reason.as_str(),
                            "Permanent hole released: no transaction that could still fill it \
                             is open on the mailbox server; those IDs are skipped"
                        );
                    }
                    ReleaseReason::MaxCommitDelay => tracing::warn!(
                        first_id = hole.first_id,
                        last_id = hole.last_id,
                        first_seen = %hole.first_seen,
                        reason = hole.reason.as_str(),
                        "Permanent hole released after max-commit-delay; those IDs are skipped"
                    ),
                }
            }
            if plan.holding && plan.take == 0 {
                report.details.held_by_hole.add(1);
            }
            let caught_up = plan.take == rows.len() && rows.len() < claim as usize;
            if caught_up || rows.is_empty() {
                break;
            }
            // A hole seen for the first time may be released on evidence
            // at once: one more round, if evidence can be read now.
            if plan.holding && !(sighted_now && state.evidence_ready(cfg, ctx.clock.now())) {
                break;
            }
        }
        late_rows_if_due(cfg, state, ctx, report).await;
        Ok(())
    }
}

/// Reads transaction evidence for the sighted hole at W+1 when it is
/// enabled and due; `Some` when it was read on a server where it is valid,
/// with the hole cleared if it is. Never fails the run: a
/// refused read (no PROCESS privilege) leaves the time rule, logged once
/// and asked again after [`EVIDENCE_RECHECK`]; any other failure (the
/// mailbox is down, and the fetch fails too) costs only this round, logged
/// at most once per [`EVIDENCE_RECHECK`].
async fn read_evidence(
    cfg: &InboxPollerConfig,
    state: &mut PollState,
    ctx: &JobContext,
    current: Cursor,
    report: &mut RunReport<IngestCounts>,
) -> Option<Evidence> {
    let sighting = state.sighting.filter(|s| s.w == current.w)?;
    let now = ctx.clock.now();
    if !state.evidence_ready(cfg, now) {
        return None;
    }
    state.last_evidence_read = Some(Instant::now());
    report.details.hole_evidence_reads.add(1);
    let known = state
        .role
        .as_ref()
        .filter(|(_, at)| now - *at < ROLE_RECHECK)
        .map(|(r, _)| r.server_id);
    match ctx.mailbox.transaction_evidence(known).await {
        Ok(read) => {
            if matches!(state.evidence, EvidenceAccess::Denied { .. }) {
                tracing::info!("Transaction evidence for holes is available again");
            }
            state.evidence = EvidenceAccess::Granted;
            if !read.snapshot.fresh {
                report.details.hole_evidence_stale.add(1);
            }
            if let Some(role) = read.role {
                state.role = Some((role, now));
            }
            // The role is the answering server's: read now, or known for it.
            let role_state = match &mut state.role {
                Some((role, _)) if role.server_id == read.server_id => {
                    role.read_only = read.read_only;
                    role.state()
                }
                _ => EvidenceState::Unknown,
            };
            if !role_state.is_valid() {
                state.publish(role_state);
                return None;
            }
            Some(Evidence {
                server_id: read.server_id,
                cleared: no_live_writer(&sighting, &read.snapshot).then(|| sighting.cleared()),
            })
        }
        Err(e) if e.is_access_denied() => {
            if !matches!(state.evidence, EvidenceAccess::Denied { .. }) {
                tracing::warn!(
                    error = %crate::error_text::cut(&e.to_string()),
                    "No transaction evidence for holes (the mailbox user lacks the PROCESS \
                     privilege): each hole waits msgx.pipeline.max-commit-delay; asked again \
                     every 10 minutes (docs/operations.md, mailbox grants)"
                );
            }
            state.evidence = EvidenceAccess::Denied {
                retry_at: now + EVIDENCE_RECHECK,
            };
            state.publish(EvidenceState::NoPrivilege);
            None
        }
        Err(e) => {
            if state
                .evidence_failure_logged
                .is_none_or(|t| now - t >= EVIDENCE_RECHECK)
            {
                state.evidence_failure_logged = Some(now);
                tracing::warn!(
                    error = %crate::error_text::cut(&e.to_string()),
                    "No transaction evidence for holes this round (reading it failed): the \
                     time rule applies"
                );
            }
            None
        }
    }
}

/// The late-row check when a known hole is due (or at the latest once per
/// `msgx.pipeline.late-row-recheck`, which also finds holes this process
/// did not release); logged and counted when it fails.
async fn late_rows_if_due(
    cfg: &InboxPollerConfig,
    state: &mut PollState,
    ctx: &JobContext,
    report: &mut RunReport<IngestCounts>,
) {
    let now = ctx.clock.now();
    if state.late_rows_due.is_some_and(|due| now < due) {
        return;
    }
    match detect_late_rows(cfg, ctx).await {
        Ok(check) => {
            report.details.late_rows.add(check.found);
            report.details.late_row_holes_checked.add(check.holes);
            state.late_rows_due = check.next_due;
        }
        Err(e) => {
            metrics::counter!("msgx_ingest_late_row_check_failures_total").increment(1);
            report.details.late_row_check_failures.add(1);
            tracing::warn!(
                error = %crate::error_text::cut(&e.to_string()),
                "Late-row check failed; the rows enqueued stand, the holes are checked again \
                 after msgx.pipeline.late-row-recheck"
            );
            state.late_rows_due = Some(now + cfg.late_row_recheck);
        }
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
    /// When the next hole is due (at the latest one interval from now);
    /// `None` when more are due at once (the limit was reached).
    next_due: Option<DateTime<Utc>>,
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
    let latest = now + cfg.late_row_recheck;
    check.next_due = if due.len() as i64 >= LATE_ROW_HOLES_CHECKED {
        None
    } else {
        Some(
            inbox::oldest_hole_check(&ctx.pg, since)
                .await?
                .map_or(latest, |oldest| (oldest + cfg.late_row_recheck).min(latest)),
        )
    };
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
