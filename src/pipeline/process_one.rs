//! `MessageProcessor.processOne` (design §5.2): one head message to exactly
//! one recorded outcome.
//!
//! 1. read the raw text — missing → DEAD(MALFORMED, raw-missing); read error →
//!    FAILED(INFRA);
//! 2. decode — MALFORMED → DEAD; CODEC_ERROR → FAILED with backoff;
//! 3. bind the identity in one idempotent statement — held by another message
//!    → SKIPPED(duplicate-of:<id>); the statement failing → FAILED with the
//!    class of its SQLSTATE (INFRA or DATA), like a processor's error;
//! 4. ignore rules → SKIPPED(ignored:<rule>);
//! 5. dispatch by kind to the processors (a RESP only when it answers an open
//!    request, G-RESP-GUARD; SCHS, which cannot be requested, always);
//!    Unsupported → FAILED(UNSUPPORTED).
//!
//! The steps are the one decision ladder of [`super::ladder`], which group
//! commit climbs too. The pump never backfills: terminal states carry the
//! backfill intent.

use super::identity::scoped_identity;
pub use super::ladder::Raw;
use super::ladder::{self, Route, Step, Verdict};
use super::processors::ProcessorSettings;
use super::processors::{FlightTxnResult, Processors};
use crate::codec::{self, DecodeError, DecodedMessage};
use crate::config::Config;
use crate::domain::DomainConfig;
use crate::domain::{ErrorClass, FailureScheduler, FlightStateEngine, ProcState};
use crate::jobs::{JobContext, JobError};
use crate::jobs::{JobSettings, domain_config};
use crate::store::pg::flight::FlightStore;
use crate::store::pg::proc_state::{self, Head};

/// The recorded outcome of one processOne.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessOutcome {
    Succeeded,
    Skipped(String),
    Dead(ErrorClass, String),
    Failed(ErrorClass, String),
    /// Another path already finished the row; nothing changed.
    AlreadyTerminal,
    /// The row changed between this attempt's read and its write (a replay
    /// or a skip committed meanwhile): nothing written, the pump reads the
    /// head again.
    Superseded,
}

impl ProcessOutcome {
    /// Report label (`succeeded`, `skipped`, `dead`, `failed`,
    /// `already_terminal`, `superseded`).
    pub fn label(&self) -> &'static str {
        match self {
            ProcessOutcome::Succeeded => "succeeded",
            ProcessOutcome::Skipped(_) => "skipped",
            ProcessOutcome::Dead(..) => "dead",
            ProcessOutcome::Failed(..) => "failed",
            ProcessOutcome::AlreadyTerminal => "already_terminal",
            ProcessOutcome::Superseded => "superseded",
        }
    }

    /// The error class label of the metrics (`none` without one).
    pub fn error_class_label(&self) -> &'static str {
        match self {
            ProcessOutcome::Dead(c, _) | ProcessOutcome::Failed(c, _) => c.as_str(),
            _ => "none",
        }
    }
}

/// The design's MessageProcessor (§5.2): processes head messages, one
/// ([`MessageProcessor::process_one`], processOne) or a group
/// ([`MessageProcessor::process_group`]) per transaction.
#[doc(alias = "processOne")]
pub struct MessageProcessor<'a> {
    pub ctx: &'a JobContext,
    /// The pump's settings.
    pub config: &'a PumpConfig,
    pub engine: FlightStateEngine,
    /// The pump's flight store (a clone: its cache is the pump's, across
    /// runs).
    pub store: FlightStore,
    /// The raw texts read ahead of the head. Raw messages are immutable
    /// (PRE-7), so a copy read a moment earlier is the message; an ID inside
    /// the range with no row is a missing row.
    pub read_ahead: std::sync::Mutex<Option<ReadAhead>>,
    /// The head the group commit decoded and could not take (a SCHD, say),
    /// by MSG_ID: processOne uses it instead of decoding the same immutable
    /// text again (a 20,000-FLTR SCHD was decoded twice).
    pub decoded: std::sync::Mutex<Option<(i64, DecodedMessage)>>,
    /// This run's report of unknown elements (once per name per run).
    pub unknown: super::unknown::UnknownReporter,
}

/// One read-ahead range: every ID in `first..=last` is known, as a text, a
/// size over `msgx.pipeline.max-message-bytes`, or absent (no row).
#[derive(Debug, Default)]
pub struct ReadAhead {
    pub first: i64,
    pub last: i64,
    pub rows: std::collections::HashMap<i64, Raw>,
    /// The lengths already asked for beyond `last`, up to `lengths_last`
    /// (raw texts are immutable, PRE-7): the next range is cut from them
    /// instead of asking again, so the mailbox measures each text once.
    pub lengths: Vec<(i64, u64)>,
    pub lengths_last: i64,
}

/// The settings `pump-drain` (and the MessageProcessor it drives) uses.
#[derive(Debug, Clone)]
pub struct PumpConfig {
    /// The engine's view of the config (§11.2).
    pub domain: DomainConfig,
    /// `msgx.pipeline.retry`: the FailureScheduler over the schedule per
    /// FAILED class (§9.1).
    pub retry: FailureScheduler,
    /// `msgx.identity.include-day-boundary` (§2).
    pub include_day_boundary: bool,
    /// `msgx.pipeline.group-commit`: the group size (1 = off).
    pub group_commit: u32,
    /// `msgx.ignore`: the ignore rules (§2).
    pub ignore: Vec<String>,
    /// `msgx.pipeline.read-ahead-bytes`.
    pub read_ahead_bytes: u64,
    /// `msgx.pipeline.max-message-bytes`.
    pub max_message_bytes: u64,
    /// What the processors use.
    pub processors: ProcessorSettings,
}

impl JobSettings for PumpConfig {
    fn from_config(config: &Config) -> Self {
        let m = &config.msgx;
        Self {
            domain: domain_config(config),
            retry: crate::jobs::failure_scheduler(&m.pipeline.retry),
            include_day_boundary: m.identity.include_day_boundary,
            group_commit: m.pipeline.group_commit,
            ignore: m.ignore.clone(),
            read_ahead_bytes: m.pipeline.read_ahead_bytes,
            max_message_bytes: m.pipeline.max_message_bytes,
            processors: ProcessorSettings::from_config(config),
        }
    }
}

/// How many mailbox rows one read-ahead covers at most (the byte bound is
/// `msgx.pipeline.read-ahead-bytes`).
const READ_AHEAD_ROWS: i64 = 200;

/// Which rows one read-ahead fetches. `lengths` are the
/// `(ID, bytes)` of the rows in `head..=last`, ascending. The head is always
/// taken (unless too large); later rows while their sum stays within
/// `budget`; a row over `max_message` is never fetched and does not count.
/// Returns the last ID the read-ahead covers and the too-large rows in it.
pub fn plan_read_ahead(
    head: i64,
    last: i64,
    lengths: &[(i64, u64)],
    budget: u64,
    max_message: u64,
) -> (i64, Vec<(i64, u64)>) {
    let mut total: u64 = 0;
    let mut too_large = Vec::new();
    for &(id, bytes) in lengths {
        if bytes > max_message {
            too_large.push((id, bytes));
            continue;
        }
        if id != head && total.saturating_add(bytes) > budget {
            return (id - 1, too_large);
        }
        total = total.saturating_add(bytes);
    }
    (last, too_large)
}

impl MessageProcessor<'_> {
    /// The raw message `id` (`None` = the row does not exist), reading ahead
    /// up to [`READ_AHEAD_ROWS`] IDs and `msgx.pipeline.read-ahead-bytes`,
    /// never past `w`. Lengths are asked first (`LENGTH()`), so the pump
    /// never holds more than the byte budget (plus the head) and never reads
    /// a text over `msgx.pipeline.max-message-bytes`.
    pub(super) async fn raw(
        &self,
        id: i64,
        w: i64,
    ) -> Result<Option<Raw>, crate::store::mailbox::MailboxError> {
        let known = {
            let mut guard = self.read_ahead.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(r) = guard.as_ref()
                && (r.first..=r.last).contains(&id)
            {
                return Ok(r.rows.get(&id).cloned());
            }
            // Drop the old texts before reading the next: one budget at a
            // time. Lengths measured beyond them carry over.
            guard
                .take()
                .filter(|r| id > r.last && id <= r.lengths_last)
                .map(|r| (r.lengths, r.lengths_last))
        };
        let p = self.config;
        let mailbox = &self.ctx.mailbox;
        let (mut lengths, lengths_last) = match known {
            Some(known) => known,
            None => {
                let last = (id + READ_AHEAD_ROWS - 1).min(w.max(id));
                (mailbox.raw_lengths(id, last).await?, last)
            }
        };
        lengths.retain(|(i, _)| *i >= id);
        let (last, too_large) = plan_read_ahead(
            id,
            lengths_last,
            &lengths,
            p.read_ahead_bytes,
            p.max_message_bytes,
        );
        lengths.retain(|(i, _)| *i > last);
        let mut rows: std::collections::HashMap<i64, Raw> = too_large
            .into_iter()
            .map(|(i, bytes)| (i, Raw::TooLarge(bytes)))
            .collect();
        for (i, text) in mailbox
            .read_raw_range(id, last, p.max_message_bytes)
            .await?
        {
            rows.insert(i, Raw::Text(std::sync::Arc::new(text)));
        }
        let found = rows.get(&id).cloned();
        let mut guard = self.read_ahead.lock().unwrap_or_else(|e| e.into_inner());
        *guard = Some(ReadAhead {
            first: id,
            last,
            rows,
            lengths,
            lengths_last,
        });
        Ok(found)
    }
}

/// Decodes off the async worker threads: a large SCHD
/// takes seconds of CPU, which on a worker would stall the HTTP endpoints
/// and the lock keep-alive. A panic inside the decoder becomes a
/// CODEC_ERROR naming it (a codec fix, then a replay, is the remedy), never
/// a crashed run. `Err` only when the runtime shuts down meanwhile.
pub(super) async fn decode_off_thread(
    raw: std::sync::Arc<Vec<u8>>,
) -> Result<Result<DecodedMessage, DecodeError>, JobError> {
    let task = tokio::task::spawn_blocking(move || {
        #[cfg(debug_assertions)]
        if memchr::memmem::find(&raw, DECODE_PANIC_MARKER.as_bytes()).is_some() {
            panic!("decode fault injected by the test hook");
        }
        codec::decode(&raw)
    });
    match task.await {
        Ok(decoded) => Ok(decoded),
        Err(e) if e.is_panic() => {
            let panic = e.into_panic();
            let text = crate::jobs::passes::panic_message(panic.as_ref());
            Ok(Err(DecodeError::codec(
                "MSG",
                format!("the decoder panicked: {text}"),
            )))
        }
        Err(e) => Err(JobError::Other(format!("decode task did not finish: {e}"))),
    }
}

/// Test-only fault hook, compiled into debug builds only: decoding a text
/// that contains this marker panics, so tests can prove that a decoder
/// panic is a recorded failure.
#[cfg(debug_assertions)]
pub const DECODE_PANIC_MARKER: &str = "<!-- msgx test hook: panic in decode -->";

impl MessageProcessor<'_> {
    /// processOne for `head` (design §5.2): the ladder's steps 1–2 here,
    /// 3–5 in [`Self::process_decoded`].
    #[doc(alias = "processOne")]
    pub async fn process_one(&self, head: &Head) -> Result<ProcessOutcome, JobError> {
        let id = head.msg_id;
        let stashed = {
            let mut guard = self.decoded.lock().unwrap_or_else(|e| e.into_inner());
            match guard.take() {
                Some((i, msg)) if i == id => Some(msg),
                _ => None,
            }
        };
        if let Some(msg) = stashed {
            return self.process_reported(head, &msg).await;
        }
        let raw = match ladder::read(self.raw(id, head.w).await) {
            Ok(raw) => raw,
            Err(verdict) => return self.record(head, verdict).await,
        };
        let msg = match ladder::decoded(decode_off_thread(raw).await?) {
            Ok(msg) => msg,
            Err(verdict) => return self.record(head, verdict).await,
        };
        self.process_reported(head, &msg).await
    }

    /// [`Self::process_decoded`], then the report of the message's unknown
    /// elements once its first attempt is recorded (pipeline/unknown.rs):
    /// a FAILED head's retries do not count them again.
    async fn process_reported(
        &self,
        head: &Head,
        msg: &DecodedMessage,
    ) -> Result<ProcessOutcome, JobError> {
        let outcome = self.process_decoded(head, msg).await?;
        let recorded = !matches!(
            outcome,
            ProcessOutcome::AlreadyTerminal | ProcessOutcome::Superseded
        );
        if head.state == ProcState::Pending && recorded {
            self.unknown.report(head.msg_id, msg);
        }
        Ok(outcome)
    }

    /// processOne from step 3 on, for a decoded `msg` (design §5.2): the
    /// identity bound in one idempotent statement, then the ladder.
    async fn process_decoded(
        &self,
        head: &Head,
        msg: &DecodedMessage,
    ) -> Result<ProcessOutcome, JobError> {
        let id = head.msg_id;
        let c = self.config;
        let identity = scoped_identity(
            &msg.meta,
            c.include_day_boundary,
            head.compat_principal.as_deref(),
        );
        // Any failure of the binding statement is the message's attempt,
        // recorded like a processor's: a failed run would leave
        // the head PENDING with no attempt and no head-blocked signal.
        let bound = proc_state::bind_identity(
            &self.ctx.pg,
            id,
            &identity,
            &msg.meta.msg_type,
            &msg.meta.styp,
        )
        .await;
        let binding = match bound {
            Ok(binding) => binding,
            Err(e) => {
                return self
                    .record(head, db_verdict("binding the identity", &e))
                    .await;
            }
        };
        let route = match ladder::decide(&binding, &c.ignore, msg) {
            Step::Ends(verdict) => return self.record(head, verdict).await,
            Step::Dispatch(route) => route,
        };
        let p = Processors {
            ctx: self.ctx,
            engine: &self.engine,
            store: &self.store,
            settings: &c.processors,
        };
        let result: Result<FlightTxnResult, JobError> = match route {
            Route::Schedule(s) | Route::Adft(s) | Route::ScheduleDelete(s) => {
                p.schedule(id, msg, s).await
            }
            Route::Resp => p.resp(id, msg).await,
            Route::Flop | Route::Fdel => p.flight(id, msg).await,
            Route::RefData(r) => p.refdata(id, r).await,
            // DNLD and RESP alike (SCHS cannot be requested; processors/season.rs).
            Route::Season(s) => p.season(id, s).await,
        };
        // A database error inside the business transaction rolled it back
        // whole (§9.2: a transaction in progress is redone); record the attempt as FAILED with the
        // class its SQLSTATE gives (ladder::database_failure): an outage
        // (INFRA) is waited out, a data error (DATA) ends EXHAUSTED. If
        // PostgreSQL cannot even record that, the run fails and the row
        // stays PENDING for the next run.
        let result = match result {
            Err(JobError::Db(e)) => return self.record(head, db_verdict("processing", &e)).await,
            other => other?,
        };
        match result {
            FlightTxnResult::Succeeded { .. } => Ok(ProcessOutcome::Succeeded),
            FlightTxnResult::NoMatch(reason) => self.skip(head, &reason).await,
            FlightTxnResult::Rejected(reason) => {
                self.dead(head, ErrorClass::Protocol, &reason).await
            }
            FlightTxnResult::AlreadyTerminal(_) => Ok(ProcessOutcome::AlreadyTerminal),
        }
    }

    /// Records where the ladder ended, in one statement.
    async fn record(&self, head: &Head, verdict: Verdict) -> Result<ProcessOutcome, JobError> {
        match verdict {
            Verdict::Dead(class, reason) => self.dead(head, class, &reason).await,
            Verdict::Failed(class, reason) => self.fail(head, class, &reason).await,
            Verdict::Skipped(reason) => self.skip(head, &reason).await,
        }
    }

    /// SKIPPED, unless the row changed since `head` was read
    /// ([`ProcessOutcome::Superseded`]).
    async fn skip(&self, head: &Head, reason: &str) -> Result<ProcessOutcome, JobError> {
        let now = self.ctx.clock.now();
        let id = head.msg_id;
        let read = head.as_read();
        let skipped = ProcState::Skipped;
        if !proc_state::finish_non_business(&self.ctx.pg, id, read, skipped, None, reason, now)
            .await?
        {
            return Ok(ProcessOutcome::Superseded);
        }
        Ok(ProcessOutcome::Skipped(reason.to_string()))
    }

    /// DEAD, unless the row changed since `head` was read
    /// ([`ProcessOutcome::Superseded`]).
    async fn dead(
        &self,
        head: &Head,
        class: ErrorClass,
        reason: &str,
    ) -> Result<ProcessOutcome, JobError> {
        let now = self.ctx.clock.now();
        let id = head.msg_id;
        let read = head.as_read();
        let dead = ProcState::Dead;
        if !proc_state::finish_non_business(&self.ctx.pg, id, read, dead, Some(class), reason, now)
            .await?
        {
            return Ok(ProcessOutcome::Superseded);
        }
        log_dead(id, class, reason);
        Ok(ProcessOutcome::Dead(class, reason.to_string()))
    }

    /// ProcFailure (§9.1): the attempt count and next attempt time from the
    /// class's schedule (`msgx.pipeline.retry.<class>`, the domain's FailureScheduler), computed
    /// from the head as this tick read it (one instance processes, under
    /// the instance lock), and written only while the row is still as read:
    /// a replay that committed meanwhile stands ([`ProcessOutcome::Superseded`]).
    async fn fail(
        &self,
        head: &Head,
        class: ErrorClass,
        reason: &str,
    ) -> Result<ProcessOutcome, JobError> {
        let now = self.ctx.clock.now();
        let attempts = FailureScheduler::attempts_after(head.attempts, head.error_class, class);
        let next = self.config.retry.next_attempt_at(class, attempts, now);
        let recorded = proc_state::Failure {
            class,
            reason,
            attempts,
            next_attempt_at: next,
            first: head.state != ProcState::Failed,
            read: head.as_read(),
        };
        // Between the read and the write: where a test lands a replay.
        crate::fault::pause("pump", "record-failure").await;
        if !proc_state::record_failure(&self.ctx.pg, head.msg_id, &recorded, now).await? {
            return Ok(ProcessOutcome::Superseded);
        }
        let reason = crate::error_text::cut(reason);
        // msg_id and trace_id come from the pump's message span.
        tracing::warn!(class = class.as_str(), attempts, %next, reason = %reason, "Message failed; will retry");
        Ok(ProcessOutcome::Failed(class, reason.into_owned()))
    }
}

/// [`ladder::database_failure`] for a PostgreSQL error `e` of the message's
/// own statement (its SQLSTATE, and the timeout setting a timeout names).
fn db_verdict(during: &str, e: &sqlx::Error) -> Verdict {
    crate::store::pg::ha::note_error(e);
    let text = format!("{e}{}", crate::store::pg::timeout_note(e));
    ladder::database_failure(during, crate::store::pg::sqlstate(e).as_deref(), &text)
}

/// The WARN every DEAD outcome logs once it is recorded (the reason cut,
/// crate::error_text).
pub(super) fn log_dead(id: i64, class: ErrorClass, reason: &str) {
    tracing::warn!(
        msg_id = id,
        class = class.as_str(),
        reason = %crate::error_text::cut(reason),
        "Message is DEAD: operator action needed"
    );
}

#[cfg(test)]
mod tests {
    use super::plan_read_ahead;
    use proptest::prelude::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_budget_cuts_the_range_but_the_head_is_always_read() {
        // 40 rows of 4 MiB (once 296 MB RSS): an 8 MiB budget takes two.
        let rows: Vec<(i64, u64)> = (1..=40).map(|id| (id, 4 * MIB)).collect();
        assert_eq!(
            plan_read_ahead(1, 40, &rows, 8 * MIB, 16 * MIB),
            (2, vec![])
        );
        // A head larger than the budget is still read, alone.
        let rows = [(5, 12 * MIB), (6, 10)];
        assert_eq!(plan_read_ahead(5, 6, &rows, 8 * MIB, 16 * MIB), (5, vec![]));
        // Small rows: the whole range, IDs without a row included.
        let rows = [(1, 10), (3, 10)];
        assert_eq!(plan_read_ahead(1, 4, &rows, 8 * MIB, 16 * MIB), (4, vec![]));
    }

    #[test]
    fn a_row_over_the_message_limit_is_never_read_and_costs_nothing() {
        let rows = [(1, 100), (2, 40 * MIB), (3, 100)];
        assert_eq!(
            plan_read_ahead(1, 3, &rows, 8 * MIB, 16 * MIB),
            (3, vec![(2, 40 * MIB)])
        );
        assert_eq!(
            plan_read_ahead(2, 3, &rows[1..], 8 * MIB, 16 * MIB),
            (3, vec![(2, 40 * MIB)])
        );
    }

    proptest! {
        /// The texts fetched (rows within the range, not too large) never
        /// exceed the budget unless the head alone does; the head is always
        /// covered; every too-large row in the range is reported.
        #[test]
        fn never_more_than_the_budget_plus_the_head(
            sizes in proptest::collection::vec(proptest::option::of(0u64..6_000), 1..60),
            budget in 1u64..20_000,
            max in 1u64..8_000,
        ) {
            let rows: Vec<(i64, u64)> = sizes.iter().enumerate()
                .filter_map(|(i, s)| s.map(|s| (i as i64 + 1, s))).collect();
            let last = sizes.len() as i64;
            let (cut, too_large) = plan_read_ahead(1, last, &rows, budget, max);
            prop_assert!((1..=last).contains(&cut));
            let fetched: Vec<&(i64, u64)> = rows.iter().filter(|(id, s)| *id <= cut && *s <= max).collect();
            let total: u64 = fetched.iter().map(|(_, s)| s).sum();
            let head = rows.iter().find(|(id, s)| *id == 1 && *s <= max).map_or(0, |(_, s)| *s);
            prop_assert!(total <= budget.max(head));
            let expected: Vec<(i64, u64)> = rows.iter().filter(|(id, s)| *id <= cut && *s > max).copied().collect();
            prop_assert_eq!(too_large, expected);
        }
    }
}
