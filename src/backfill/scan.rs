//! `backfill-scan` (design §6): writes the processing mark back to the
//! mailbox for terminal messages, so the mailbox owner may purge (C-8).
//!
//! Each round selects `msgx.pipeline.backfill-batch` rows with the exact
//! §6.1 predicate and order ([`crate::store::pg::backfill::due`]), repeated
//! within the run's bounds. Each round is then handled inside one
//! [`MessageLifecycleGate`](super::gate) transaction: re-check its rows under
//! `FOR UPDATE`, write their marks in one statement
//! (`UPDATE … SET mark = ? WHERE ID IN (…) AND mark IS NULL`), and
//! record one of the four §6.2 outcomes per row:
//!
//! | mailbox answer | PROC_STATE |
//! |---|---|
//! | 1 row written | BACKFILL_AT |
//! | 0 rows, row exists (already marked) | BACKFILL_AT; the existing mark is kept |
//! | 0 rows, row missing | abandoned at once, `MISSING_ROW`, alert |
//! | row failure (a server error answering this row; a refused batch is retried row by row to find it) | attempts + 1, backoff by `backfill-backoff` (last tier repeats); abandoned `TRANSIENT_DEADLINE` (alert) only by the rule below |
//! | mailbox unreachable (refused, reset, timeout, pool) | the probed row: attempts + 1, due again at the next scan; abandoned `TRANSIENT_DEADLINE` only by the rule below; the run stops and FAILS |
//!
//! An unreachable mailbox is an outage of the mailbox, not a failure of each
//! row: the run stops at the first such failure, so the
//! mailbox sees one probe per scan during an outage, the rows not tried are
//! neither charged nor abandoned (past R or not), and the
//! probed row is not pushed into a backoff tier. Once the mailbox answers
//! again, the next scan writes every outstanding mark (the old rule backed
//! off every due row, and the soak waited ~100 s for the marks after a 60 s
//! MariaDB outage).
//!
//! **`TRANSIENT_DEADLINE`** (§6.2, §6.3: a transient failure that persisted
//! until R; [`abandons_at_deadline`]): a row is abandoned
//! only when **its own** failure streak began before its deadline
//! `ENQUEUED_AT + R` and its attempt still fails at or after the deadline,
//! for either transient kind. The streak's start is BACKFILL_FAILING_SINCE
//! (migration 0014): set by the first failed attempt, kept while the row
//! keeps failing, cleared by a confirmed mark, a reopen or a replay. A row
//! whose first failed attempt is at or past its deadline — never tried
//! before R (the scan did not run, or every probe of an outage went to other
//! rows), or reopened — is never abandoned by transient failures: past R it
//! is due at every scan (§6.3 point 1) until it is written, and
//! `backfill-max-attempts` still alerts. So a long outage past R abandons
//! only the rows that were already failing before their R, never one per
//! probe.
//!
//! `backfill-max-attempts` only raises an alert (§6.3); abandonment never
//! sets BACKFILL_AT (§6.2). A mailbox that cannot be reached is always a
//! failure, never "row missing": only a reachable mailbox that answers
//! "no such row" abandons with `MISSING_ROW`.
//!
//! The mark is two single writes across databases (§5.3): mailbox first,
//! then PROC_STATE. A crash between them leaves the intent, and the next
//! scan finds "already marked" — idempotent (§9.2).
//!
//! Shadow mode (`msgx.mailbox.shadow`): nothing is written; the run reports
//! how many rows are due and leaves every intent pending.

use super::gate::{self, GateError};
use crate::config::{Config, Dur};
use crate::jobs::{
    Count, Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use crate::store::mailbox::{MailboxError, MarkOutcome};
use crate::store::pg::backfill::{self as store, AbandonReason};
use chrono::{DateTime, NaiveDateTime, Timelike, Utc};

/// The settings `backfill-scan` uses.
#[derive(Debug, Clone)]
pub struct BackfillScanConfig {
    /// `msgx.pipeline.backfill-batch`: rows per round.
    pub batch: u32,
    /// `msgx.pipeline.backfill-backoff`: the tiers, the last repeating.
    pub backoff: Vec<Dur>,
    /// `msgx.pipeline.backfill-deadline` (R, §6.3).
    pub deadline: chrono::Duration,
    /// `msgx.pipeline.backfill-max-attempts`: the alert (§6.3).
    pub max_attempts: u32,
    /// How long a row waits for the MessageLifecycleGate (from
    /// `msgx.mailbox.timeout`).
    pub gate_wait: std::time::Duration,
    /// `msgx.airport.timezone`: the mark is local time.
    pub timezone: chrono_tz::Tz,
    /// `msgx.mailbox.shadow`: write nothing.
    pub shadow: bool,
}

impl JobSettings for BackfillScanConfig {
    fn from_config(config: &Config) -> Self {
        let p = &config.msgx.pipeline;
        Self {
            batch: p.backfill_batch,
            backoff: p.backfill_backoff.clone(),
            deadline: p.backfill_deadline.chrono(),
            max_attempts: p.backfill_max_attempts,
            gate_wait: gate::default_wait(config.msgx.mailbox.timeout.std()),
            timezone: config.msgx.airport.tz(),
            shadow: config.msgx.mailbox.shadow,
        }
    }
}

job_counts! {
    /// What a `backfill-scan` run did: per row outcome ([`RowOutcome`]),
    /// and in shadow mode or with `--dry-run` the rows due.
    pub struct BackfillCounts {
        written,
        already_marked,
        abandoned_missing_row,
        abandoned_transient_deadline,
        retrying,
        changed_meanwhile,
        shadow_not_written,
        due,
    }
}

impl BackfillCounts {
    /// The count of `outcome` (named by [`RowOutcome::label`]).
    pub fn of(&mut self, outcome: RowOutcome) -> &mut Count {
        match outcome {
            RowOutcome::Written => &mut self.written,
            RowOutcome::AlreadyMarked => &mut self.already_marked,
            RowOutcome::Abandoned(AbandonReason::MissingRow) => &mut self.abandoned_missing_row,
            RowOutcome::Abandoned(AbandonReason::TransientDeadline) => {
                &mut self.abandoned_transient_deadline
            }
            RowOutcome::Retrying => &mut self.retrying,
            RowOutcome::Changed => &mut self.changed_meanwhile,
        }
    }
}

/// The backfill-scan job.
pub struct BackfillScan {
    config: BackfillScanConfig,
}

impl BackfillScan {
    pub fn new(config: BackfillScanConfig) -> Result<Self, JobConfigError> {
        JobConfigError::at_least_one("msgx.pipeline.backfill-batch", u64::from(config.batch))?;
        Ok(Self { config })
    }
}

/// What happened to one selected row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOutcome {
    /// 1 row written.
    Written,
    /// 0 rows, the row exists: confirmed without overwriting.
    AlreadyMarked,
    /// Abandoned (MISSING_ROW or TRANSIENT_DEADLINE).
    Abandoned(AbandonReason),
    /// A failure before R: backoff.
    Retrying,
    /// The row no longer owed a mark when re-checked under the gate (a
    /// replay moved it back to PENDING, or it was confirmed meanwhile).
    Changed,
}

impl RowOutcome {
    /// The report count name.
    pub fn label(self) -> &'static str {
        match self {
            RowOutcome::Written => "written",
            RowOutcome::AlreadyMarked => "already_marked",
            RowOutcome::Abandoned(AbandonReason::MissingRow) => "abandoned_missing_row",
            RowOutcome::Abandoned(AbandonReason::TransientDeadline) => {
                "abandoned_transient_deadline"
            }
            RowOutcome::Retrying => "retrying",
            RowOutcome::Changed => "changed_meanwhile",
        }
    }
}

/// The backoff after the `attempt`-th failure (1-based): the tiers of
/// `msgx.pipeline.backfill-backoff` in order, the last one repeating.
pub fn backoff_for(tiers: &[Dur], attempt: i32) -> chrono::Duration {
    let i = usize::try_from(attempt.max(1) - 1).unwrap_or(0);
    tiers
        .get(i)
        .or_else(|| tiers.last())
        .map(|d| d.chrono())
        .unwrap_or_else(chrono::Duration::zero)
}

/// The mark value: `now` as the airport's local wall time, whole seconds —
/// the predecessor wrote a local DATETIME.
pub fn mark_value(now: DateTime<Utc>, tz: chrono_tz::Tz) -> NaiveDateTime {
    let local = now.with_timezone(&tz).naive_local();
    local.with_nanosecond(0).unwrap_or(local)
}

/// Whether a transient failure of a row's own attempt at `now` abandons it
/// `TRANSIENT_DEADLINE` (§6.2, §6.3: the failure persisted until R): only
/// when its failure streak began before its deadline
/// `ENQUEUED_AT + R` and it still fails at or after the deadline.
/// `failing_since` is BACKFILL_FAILING_SINCE before this failure; `None`
/// means this failure starts the streak, at `now`. A streak that began at or
/// after the deadline (a row never tried before R, or reopened) does not
/// abandon: the row is tried at every scan until it is written (§6.3 point
/// 1). A row without ENQUEUED_AT (impossible for live rows, see the schema's
/// CHECK) has no deadline.
pub fn abandons_at_deadline(
    enqueued_at: Option<DateTime<Utc>>,
    r: chrono::Duration,
    failing_since: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> bool {
    let Some(deadline) = enqueued_at.map(|t| t + r) else {
        return false;
    };
    failing_since.unwrap_or(now) < deadline && now >= deadline
}

/// Whether `e` says the mailbox cannot be reached at all, rather than that it
/// refused this row: a broken or refused connection, the
/// pool, I/O (mysql_async's own "connection is broken" test,
/// [`mysql_async::Error::is_fatal`]), `msgx.mailbox.timeout`, or a server that
/// refuses sessions (1040 too many connections, 1053 shutting down, 1927
/// connection killed). A server's answer to this row's UPDATE — a trigger, a
/// privilege, a lock wait (`StatementTimeout`) — is a row failure and walks
/// the backoff tiers; so is a missing table or column (a site problem).
pub fn unreachable(e: &MailboxError) -> bool {
    match e {
        MailboxError::Timeout(_) => true,
        MailboxError::Db(mysql_async::Error::Server(se)) => [1040, 1053, 1927].contains(&se.code),
        MailboxError::Db(db) => db.is_fatal(),
        MailboxError::Url(_)
        | MailboxError::Tls(_)
        | MailboxError::StatementTimeout { .. }
        | MailboxError::Shadow
        | MailboxError::Schema(_) => false,
    }
}

/// What [`BackfillScan::mark_round`] did to a row, and whether the mailbox turned out
/// unreachable (the run then stops).
struct Marked {
    outcome: RowOutcome,
    outage: Option<MailboxError>,
}

impl From<RowOutcome> for Marked {
    fn from(outcome: RowOutcome) -> Self {
        Marked {
            outcome,
            outage: None,
        }
    }
}

/// The marks counter, for the outcomes that confirm a mark.
fn count_mark(outcome: RowOutcome) {
    if let RowOutcome::Written | RowOutcome::AlreadyMarked = outcome {
        metrics::counter!("msgx_backfill_marks_total", "outcome" => outcome.label()).increment(1);
    }
}

fn gate_error(e: GateError) -> JobError {
    match e {
        GateError::Db(e) => JobError::Db(e),
        busy @ GateError::Busy { .. } => JobError::Other(busy.to_string()),
    }
}

fn alert_abandoned(msg_id: i64, reason: AbandonReason, error: &str) {
    metrics::counter!("msgx_backfill_abandoned_total", "reason" => reason.as_str()).increment(1);
    tracing::error!(
        msg_id,
        reason = reason.as_str(),
        error,
        "Backfill abandoned: the mailbox mark is NOT written; the row needs reconciliation \
         (`msgx backfill abandoned`, then `reopen` or `reconcile`)"
    );
}

impl BackfillScan {
    /// A round's rows in one gate transaction and one mailbox statement
    /// (per row, each mark was a gate transaction and a mailbox commit of its
    /// own, ≈ 4.5 ms, and the scan fell behind a 1,000 msg/s burst). The gate
    /// is still held for one bounded mailbox call. The §6.2 outcomes stay per
    /// row: a reachable mailbox that refuses the statement for several rows
    /// may be refusing one of them, so the answer is `None` and the caller
    /// tries each row alone (a refusal of one row is that row's failure); an
    /// unreachable one is an outage, charged to the round's first row (the
    /// probe) and ending the run, the others not tried.
    async fn mark_round(
        &self,
        ctx: &JobContext,
        ids: &[i64],
    ) -> Result<Option<Vec<Marked>>, JobError> {
        let p = &self.config;
        let mut tx = gate::enter(&ctx.pg, p.gate_wait)
            .await
            .map_err(gate_error)?;
        ctx.fence(&mut tx).await?;
        let rows = store::lock_unconfirmed(&mut tx, ids).await?;
        let changed = ids.iter().filter(|id| !rows.contains_key(id)).count();
        let mut out: Vec<Marked> = (0..changed).map(|_| RowOutcome::Changed.into()).collect();
        // The round's order (fairness, §6.1), for the probe of an outage.
        let Some(&probe) = ids.iter().find(|id| rows.contains_key(id)) else {
            tx.rollback().await?;
            return Ok(Some(out));
        };
        let locked: Vec<i64> = rows.keys().copied().collect();
        let now = ctx.clock.now();
        let answer = ctx
            .mailbox
            .mark_processed(&locked, mark_value(now, p.timezone))
            .await;
        match answer {
            Ok(answers) => {
                let confirmed: Vec<i64> = answers
                    .iter()
                    .filter(|(_, o)| matches!(o, MarkOutcome::Written | MarkOutcome::AlreadyMarked))
                    .map(|(id, _)| *id)
                    .collect();
                store::confirm(&mut tx, &confirmed, now).await?;
                for (id, outcome) in answers {
                    out.push(
                        self.record(&mut tx, id, rows[&id], Ok(outcome), now)
                            .await?,
                    );
                }
                tx.commit().await?;
                for m in &out {
                    count_mark(m.outcome);
                }
                Ok(Some(out))
            }
            Err(MailboxError::Shadow) => {
                // Shadow mode is checked before any row is taken; reaching
                // this means the config and the handle disagree.
                tx.rollback().await?;
                Err(MailboxError::Shadow.into())
            }
            Err(e) if locked.len() > 1 && !unreachable(&e) => {
                tx.rollback().await?;
                tracing::debug!(error = %e, rows = locked.len(), "Batch mark refused; marking each row alone");
                Ok(None)
            }
            Err(e) => {
                let marked = self
                    .record(&mut tx, probe, rows[&probe], Err(e), now)
                    .await?;
                tx.commit().await?;
                out.push(marked);
                Ok(Some(out))
            }
        }
    }

    /// [`BackfillScan::mark_round`], and when the mailbox refused the round
    /// as a whole, each of its rows alone until one finds an outage.
    async fn mark_rows(&self, ctx: &JobContext, ids: &[i64]) -> Result<Vec<Marked>, JobError> {
        if let Some(out) = self.mark_round(ctx, ids).await? {
            return Ok(out);
        }
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let one = self.mark_round(ctx, &[id]).await?.unwrap_or_default();
            let stop = one.iter().any(|m| m.outage.is_some());
            out.extend(one);
            if stop {
                break;
            }
        }
        Ok(out)
    }

    /// Records what the mailbox answered for one locked row (the §6.2 table
    /// in the module docs), inside the gate transaction `tx`; a written or
    /// already-marked row is confirmed by the caller.
    async fn record(
        &self,
        tx: &mut sqlx::PgConnection,
        msg_id: i64,
        row: store::Unconfirmed,
        answer: Result<MarkOutcome, MailboxError>,
        now: DateTime<Utc>,
    ) -> Result<Marked, JobError> {
        let p = &self.config;
        let mut outage = None;
        let outcome = match answer {
            // Confirmed by the caller, one statement for the round.
            Ok(MarkOutcome::Written) => RowOutcome::Written,
            Ok(MarkOutcome::AlreadyMarked) => {
                tracing::info!(msg_id, "Mailbox row was already marked; kept its mark");
                RowOutcome::AlreadyMarked
            }
            Ok(MarkOutcome::Missing) => {
                let error = "the mailbox row does not exist (deleted after enqueue)";
                store::abandon(tx, msg_id, AbandonReason::MissingRow, error, now).await?;
                alert_abandoned(msg_id, AbandonReason::MissingRow, error);
                RowOutcome::Abandoned(AbandonReason::MissingRow)
            }
            Err(e) => {
                let down = unreachable(&e);
                let error = if down {
                    format!("mailbox unreachable: {e}")
                } else {
                    e.to_string()
                };
                metrics::counter!("msgx_backfill_failures_total").increment(1);
                if down {
                    outage = Some(e);
                }
                if abandons_at_deadline(row.enqueued_at, p.deadline, row.failing_since, now) {
                    let reason = AbandonReason::TransientDeadline;
                    store::abandon(tx, msg_id, reason, &error, now).await?;
                    alert_abandoned(msg_id, reason, &error);
                    RowOutcome::Abandoned(reason)
                } else {
                    // Unreachable: due again at the next scan, the outage's
                    // one probe; a row failure backs off.
                    // Past R the row is due at every scan anyway (§6.1).
                    let next = if down {
                        now
                    } else {
                        now + backoff_for(&p.backoff, row.attempts + 1)
                    };
                    let attempts = store::record_transient(tx, msg_id, &error, next, now).await?;
                    let max = i32::try_from(p.max_attempts).unwrap_or(i32::MAX);
                    if attempts == max {
                        metrics::counter!("msgx_backfill_max_attempts_reached_total").increment(1);
                        tracing::warn!(
                            msg_id,
                            attempts,
                            error,
                            "Backfill has failed backfill-max-attempts times; still retrying \
                             (abandoned only if the failures began before R and last until it)"
                        );
                    } else {
                        tracing::debug!(msg_id, attempts, %next, error, "Backfill failed; backing off");
                    }
                    RowOutcome::Retrying
                }
            }
        };
        Ok(Marked { outcome, outage })
    }

    /// The end of a run that found the mailbox unreachable: the rows not
    /// tried are neither charged nor abandoned, whether or not they are past
    /// R (§6.2, §6.3: a row is abandoned `TRANSIENT_DEADLINE` only when its
    /// own failures began before its R and last until it, never after one
    /// failed probe of a row that had no attempt of its own). They are due at
    /// the next scan. The run FAILS with the mailbox error, as ingest-sweep
    /// does when it cannot read the mailbox.
    fn stop_on_outage(
        report: RunReport<BackfillCounts>,
        e: MailboxError,
    ) -> Result<RunReport<BackfillCounts>, JobError> {
        tracing::warn!(
            error = %e,
            written = report.details.written.get(),
            abandoned_at_r = report.details.abandoned_transient_deadline.get(),
            "Backfill stopped: the mailbox is unreachable; the remaining marks are tried at the next scan"
        );
        // The marks written before the outage still count.
        Err(report.failed_with(JobError::Mailbox(e)))
    }
}

#[async_trait::async_trait]
impl Job for BackfillScan {
    type Details = BackfillCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<BackfillCounts>, JobError> {
        let p = &self.config;
        let r = p.deadline;
        let start = ctx.clock.now();
        let deadline = bounds.deadline(start);
        let mut report = RunReport::<BackfillCounts>::default();

        if p.shadow || ctx.mailbox.is_shadow() {
            let due = store::count_due(&ctx.pg, start, start - r).await?;
            report
                .details
                .shadow_not_written
                .add(u64::try_from(due).unwrap_or(0));
            tracing::info!(
                due,
                "Shadow mode: no mailbox marks are written; backfill intents stay pending"
            );
            return Ok(report);
        }
        if ctx.dry_run {
            let due =
                u64::try_from(store::count_due(&ctx.pg, start, start - r).await?).unwrap_or(0);
            report.items = due.min(bounds.max_items);
            report.more = due > report.items;
            report.details.due.add(report.items);
            return Ok(report);
        }

        let batch = u64::from(p.batch.max(1));
        loop {
            if report.items >= bounds.max_items || !ctx.may_continue(deadline)? {
                report.more = true;
                break;
            }
            let now = ctx.clock.now();
            let limit = batch.min(bounds.max_items - report.items);
            let ids = store::due(
                &ctx.pg,
                now,
                now - r,
                i64::try_from(limit).unwrap_or(i64::MAX),
            )
            .await?;
            if ids.is_empty() {
                break;
            }
            let mut outage = None;
            for marked in self.mark_rows(ctx, &ids).await? {
                report.items += 1;
                report.details.of(marked.outcome).add(1);
                outage = outage.or(marked.outage);
            }
            if let Some(e) = outage {
                return Self::stop_on_outage(report, e);
            }
            if (ids.len() as u64) < limit {
                break;
            }
        }
        let failed = report.details.retrying.get();
        if failed > 0 {
            tracing::warn!(
                rows = failed,
                "Backfill could not write marks (the mailbox refused them); backing off"
            );
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_outcome_is_counted_under_its_label() {
        for outcome in [
            RowOutcome::Written,
            RowOutcome::AlreadyMarked,
            RowOutcome::Abandoned(AbandonReason::MissingRow),
            RowOutcome::Abandoned(AbandonReason::TransientDeadline),
            RowOutcome::Retrying,
            RowOutcome::Changed,
        ] {
            let mut report = RunReport::<BackfillCounts>::default();
            report.details.of(outcome).add(1);
            let keys: Vec<String> = report.rendered().keys().cloned().collect();
            assert_eq!(keys, vec![outcome.label().to_string()]);
        }
    }
    use chrono::TimeZone;

    fn tiers() -> Vec<Dur> {
        vec![Dur::secs(30), Dur::mins(2), Dur::mins(10)]
    }

    #[test]
    fn backoff_walks_the_tiers_and_repeats_the_last() {
        assert_eq!(backoff_for(&tiers(), 1), chrono::Duration::seconds(30));
        assert_eq!(backoff_for(&tiers(), 2), chrono::Duration::minutes(2));
        assert_eq!(backoff_for(&tiers(), 3), chrono::Duration::minutes(10));
        assert_eq!(backoff_for(&tiers(), 4), chrono::Duration::minutes(10));
        assert_eq!(backoff_for(&tiers(), 400), chrono::Duration::minutes(10));
        assert_eq!(backoff_for(&tiers(), 0), chrono::Duration::seconds(30));
    }

    #[test]
    fn the_mark_is_local_airport_time_in_whole_seconds() {
        let now = Utc
            .with_ymd_and_hms(2026, 12, 1, 20, 30, 15)
            .single()
            .expect("valid")
            + chrono::Duration::milliseconds(750);
        let mark = mark_value(now, chrono_tz::Asia::Shanghai);
        assert_eq!(mark.to_string(), "2026-12-02 04:30:15");
    }

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0)
            .single()
            .expect("valid")
    }

    const R: chrono::Duration = chrono::Duration::hours(24);
    const S: chrono::Duration = chrono::Duration::seconds(1);

    #[test]
    fn a_streak_that_began_before_the_deadline_abandons_at_and_after_it() {
        let (t0, deadline) = (t0(), t0() + R);
        for began in [t0, deadline - S] {
            assert!(abandons_at_deadline(Some(t0), R, Some(began), deadline));
            assert!(abandons_at_deadline(Some(t0), R, Some(began), deadline + R));
            // Before the deadline a failure only backs off, however long it lasts.
            assert!(!abandons_at_deadline(
                Some(t0),
                R,
                Some(began),
                deadline - S
            ));
        }
    }

    #[test]
    fn a_first_failure_never_abandons_before_or_after_the_deadline() {
        let (t0, deadline) = (t0(), t0() + R);
        for now in [t0, deadline - S, deadline, deadline + S, deadline + R * 10] {
            assert!(!abandons_at_deadline(Some(t0), R, None, now), "{now}");
        }
    }

    #[test]
    fn a_streak_that_began_at_or_past_the_deadline_never_abandons() {
        let (t0, deadline) = (t0(), t0() + R);
        for began in [deadline, deadline + S, deadline + R] {
            for now in [began, began + S, began + R * 10] {
                assert!(
                    !abandons_at_deadline(Some(t0), R, Some(began), now),
                    "began {began}, now {now}"
                );
            }
        }
    }

    #[test]
    fn a_row_without_enqueued_at_has_no_deadline() {
        let t0 = t0();
        assert!(!abandons_at_deadline(None, R, Some(t0), t0 + R * 10));
        assert!(!abandons_at_deadline(None, R, None, t0 + R * 10));
    }
}
