//! `MessageProcessor.processOne` (design §5.2): one head message to exactly
//! one recorded outcome.
//!
//! 1. read the raw text — missing → DEAD(MALFORMED, raw-missing); read error →
//!    FAILED(INFRA);
//! 2. decode — MALFORMED → DEAD; CODEC_ERROR → FAILED with backoff;
//! 3. bind the identity in one idempotent statement — held by another message
//!    → SKIPPED(duplicate-of:<id>);
//! 4. ignore rules → SKIPPED(ignored:<rule>);
//! 5. dispatch by kind to the processors (a RESP only when it answers an open
//!    request, G-RESP-GUARD); Unsupported → FAILED(UNSUPPORTED).
//!
//! The pump never backfills: terminal states carry the backfill intent.

use super::failure;
use super::identity::{identity_of, ignore_rule};
use super::processors::refdata::RefDataProcessor;
use super::processors::resp::RespProcessor;
use super::processors::{
    AdftProcessor, FdelProcessor, FlightTxnResult, FlopProcessor, ScheduleProcessor,
};
use crate::codec::{self, DecodeError, MsgKind, RefStyp, SchdStyp};
use crate::domain::FlightStateEngine;
use crate::jobs::{JobContext, JobError};
use crate::store::pg::flight::FlightStore;
use crate::store::pg::proc_state::{self, ErrorClass, Head, IdentityBinding};

/// The recorded outcome of one processOne.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessOutcome {
    Succeeded,
    Skipped(String),
    Dead(ErrorClass, String),
    Failed(ErrorClass, String),
    /// Another path already finished the row; nothing changed.
    AlreadyTerminal,
}

impl ProcessOutcome {
    /// Report label (`succeeded`, `skipped`, `dead`, `failed`, `already_terminal`).
    pub fn label(&self) -> &'static str {
        match self {
            ProcessOutcome::Succeeded => "succeeded",
            ProcessOutcome::Skipped(_) => "skipped",
            ProcessOutcome::Dead(..) => "dead",
            ProcessOutcome::Failed(..) => "failed",
            ProcessOutcome::AlreadyTerminal => "already_terminal",
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

/// Coordinates processing of head messages.
pub struct MessageProcessor<'a> {
    pub ctx: &'a JobContext,
    pub engine: FlightStateEngine,
    pub store: FlightStore,
    /// Read-ahead of raw texts: `(first, last, rows)` of the last range read.
    /// Raw messages are immutable (PRE-7), so a copy read a moment earlier is
    /// the message; an ID inside the range with no row is a missing row.
    pub read_ahead: std::sync::Mutex<Option<ReadAhead>>,
}

/// `(first ID, last ID, raw texts by ID)` of one read-ahead range.
pub type ReadAhead = (i64, i64, std::collections::HashMap<i64, Vec<u8>>);

/// How many mailbox rows one read-ahead fetches.
const READ_AHEAD: i64 = 200;

impl MessageProcessor<'_> {
    /// The raw text of `id` (`None` = the row does not exist), reading ahead
    /// up to [`READ_AHEAD`] IDs but never past `w`.
    pub(super) async fn raw(
        &self,
        id: i64,
        w: i64,
    ) -> Result<Option<Vec<u8>>, crate::store::mailbox::MailboxError> {
        if let Ok(guard) = self.read_ahead.lock()
            && let Some((first, last, rows)) = guard.as_ref()
            && (*first..=*last).contains(&id)
        {
            return Ok(rows.get(&id).cloned());
        }
        let last = (id + READ_AHEAD - 1).min(w.max(id));
        let rows: std::collections::HashMap<i64, Vec<u8>> = self
            .ctx
            .mailbox
            .read_raw_range(id, last)
            .await?
            .into_iter()
            .collect();
        let found = rows.get(&id).cloned();
        if let Ok(mut guard) = self.read_ahead.lock() {
            *guard = Some((id, last, rows));
        }
        Ok(found)
    }
}

impl MessageProcessor<'_> {
    /// processOne for `head` (design §5.2).
    pub async fn process_one(&self, head: &Head) -> Result<ProcessOutcome, JobError> {
        let id = head.msg_id;
        let raw = match self.raw(id, head.w).await {
            Ok(Some(raw)) => raw,
            Ok(None) => return self.dead(id, ErrorClass::Malformed, "raw-missing").await,
            Err(e) => {
                return self
                    .fail(
                        id,
                        ErrorClass::Infra,
                        &format!("cannot read raw message: {e}"),
                    )
                    .await;
            }
        };
        let msg = match codec::decode(&raw) {
            Ok(m) => m,
            Err(e @ DecodeError::Malformed { .. }) => {
                return self.dead(id, ErrorClass::Malformed, &e.to_string()).await;
            }
            Err(e @ DecodeError::Codec { .. }) => {
                return self.fail(id, ErrorClass::CodecError, &e.to_string()).await;
            }
        };
        let m = &self.ctx.config.msgx;
        let identity = identity_of(&msg.meta, m.identity.include_day_boundary);
        match proc_state::bind_identity(
            &self.ctx.pg,
            id,
            &identity,
            &msg.meta.msg_type,
            &msg.meta.styp,
        )
        .await?
        {
            IdentityBinding::Ours => {}
            IdentityBinding::DuplicateOf(other) => {
                return self.skip(id, &format!("duplicate-of:{other}")).await;
            }
        }
        if let Some(rule) = ignore_rule(&m.ignore, &msg.meta) {
            return self.skip(id, &format!("ignored:{rule}")).await;
        }
        let result: Result<FlightTxnResult, JobError> = match &msg.kind {
            MsgKind::Schd(s) => match &s.styp {
                SchdStyp::Dnld => {
                    ScheduleProcessor::apply_schedule_records(
                        self.ctx,
                        &self.engine,
                        &self.store,
                        id,
                        &msg,
                        s,
                    )
                    .await
                }
                SchdStyp::Resp => {
                    RespProcessor::apply(self.ctx, &self.engine, &self.store, id, &msg).await
                }
                SchdStyp::Adft => {
                    AdftProcessor::apply(self.ctx, &self.engine, &self.store, id, &msg, s).await
                }
                SchdStyp::Other(o) => {
                    return self
                        .fail(
                            id,
                            ErrorClass::Unsupported,
                            &format!("SCHD subtype {o} is not supported"),
                        )
                        .await;
                }
            },
            MsgKind::Flop(_) => {
                FlopProcessor::apply(self.ctx, &self.engine, &self.store, id, &msg).await
            }
            MsgKind::Fdel(_) => {
                FdelProcessor::apply(self.ctx, &self.engine, &self.store, id, &msg).await
            }
            MsgKind::RefData(r) => match &r.styp {
                RefStyp::Resp => {
                    RespProcessor::apply(self.ctx, &self.engine, &self.store, id, &msg).await
                }
                RefStyp::Other(o) => {
                    return self
                        .fail(
                            id,
                            ErrorClass::Unsupported,
                            &format!("{} subtype {o} is not supported", r.rtype),
                        )
                        .await;
                }
                _ => RefDataProcessor::apply(self.ctx, id, r).await,
            },
            MsgKind::Unsupported(u) => {
                return self
                    .fail(
                        id,
                        ErrorClass::Unsupported,
                        &format!("unsupported: {}", u.reason),
                    )
                    .await;
            }
        };
        // A database error inside the business transaction rolled it back
        // whole (§9.2 "事务执行中"); record the attempt as FAILED(INFRA) so a
        // persistent fault backs off and ends EXHAUSTED instead of looping.
        // If PostgreSQL cannot even record that, the run fails and the row
        // stays PENDING for the next run.
        let result = match result {
            Err(JobError::Db(e)) => {
                return self
                    .fail(
                        id,
                        ErrorClass::Infra,
                        &format!("database error while processing: {e}"),
                    )
                    .await;
            }
            other => other?,
        };
        match result {
            FlightTxnResult::Succeeded { .. } => Ok(ProcessOutcome::Succeeded),
            FlightTxnResult::NoMatch(reason) => self.skip(id, &reason).await,
            FlightTxnResult::Rejected(reason) => self.dead(id, ErrorClass::Protocol, &reason).await,
            FlightTxnResult::AlreadyTerminal(_) => Ok(ProcessOutcome::AlreadyTerminal),
        }
    }

    async fn skip(&self, id: i64, reason: &str) -> Result<ProcessOutcome, JobError> {
        let now = self.ctx.clock.now();
        proc_state::finish_non_business(&self.ctx.pg, id, "SKIPPED", None, reason, now).await?;
        Ok(ProcessOutcome::Skipped(reason.to_string()))
    }

    async fn dead(
        &self,
        id: i64,
        class: ErrorClass,
        reason: &str,
    ) -> Result<ProcessOutcome, JobError> {
        let now = self.ctx.clock.now();
        proc_state::finish_non_business(&self.ctx.pg, id, "DEAD", Some(class), reason, now).await?;
        log_dead(id, class, reason);
        Ok(ProcessOutcome::Dead(class, reason.to_string()))
    }

    /// ProcFailure (§9.1): attempts + 1 and the next attempt time.
    async fn fail(
        &self,
        id: i64,
        class: ErrorClass,
        reason: &str,
    ) -> Result<ProcessOutcome, JobError> {
        let now = self.ctx.clock.now();
        let p = &self.ctx.config.msgx.pipeline;
        // Attempts after this failure = stored + 1; compute its tier from that.
        let stored: i32 = sqlx::query_scalar("SELECT attempts FROM proc_state WHERE msg_id = $1")
            .bind(id)
            .fetch_one(&self.ctx.pg)
            .await?;
        let next = failure::next_attempt_at(stored + 1, p.max_attempts, &p.retry_backoff, now);
        let attempts =
            proc_state::record_failure(&self.ctx.pg, id, class, reason, next, now).await?;
        tracing::warn!(msg_id = id, class = class.as_str(), attempts, %next, reason, "Message failed; will retry");
        Ok(ProcessOutcome::Failed(class, reason.to_string()))
    }
}

/// The WARN every DEAD outcome logs once it is recorded.
pub(super) fn log_dead(id: i64, class: ErrorClass, reason: &str) {
    tracing::warn!(
        msg_id = id,
        class = class.as_str(),
        reason,
        "Message is DEAD: operator action needed"
    );
}
