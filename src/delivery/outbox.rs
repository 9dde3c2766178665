//! The part both delivery jobs share (design §8.1, §8.2): the bounded round
//! loop, and the "wave" — send a set of rows (at most one per FLID), wait for
//! every delivery report, then in one fenced transaction mark the confirmed
//! rows SENT and record each failure by the [`RetryPolicy`].
//!
//! A round reads its rows once (the batch is frozen at read time) and acts
//! only on those rows; rows committed meanwhile wait for the next round.
//!
//! **Per-FLID order across rounds (§8.1).** No event of a
//! FLID may go out while an earlier event of it is still PENDING, whatever
//! happened to that earlier one (SENT, backing off, DEAD, in doubt). Inside a
//! round the dispatcher's per-FLID queues guarantee it. Across rounds the
//! loop keeps `after`, the EVENT_ID up to which everything read so far is
//! settled, and reads only above it: a round moves `after` to its last row
//! only when it left nothing unsent, otherwise to just before its first
//! unsent row (a failed head, a follower paused behind it). So a row at or
//! below `after` is SENT, DEAD, or backing off past the run's start — and the
//! read leaves out every row behind a backing-off one — while the followers
//! of a head that turned DEAD lie above `after` and are read again, earliest
//! first. (Reading strictly after the last row, as before, let round 2 send
//! A3 while A2 waited, untouched, behind a DEAD A1.) A new run starts at 0.
//! The cost is re-reading at most the rows after a round's first unsent one.

use super::retry::RetryPolicy;
use crate::domain::delivery::FailureClass;
use crate::jobs::{JobConfigError, JobContext, JobError, RunBounds, RunReport, job_counts};
use crate::kafka::producer::{DeliveryProducer, Outgoing, SendError, Topic, classify};
use crate::store::pg::msg_event::{self, PendingEvent};
use crate::telemetry::event_span;
use chrono::{DateTime, Utc};
use rdkafka::error::RDKafkaErrorCode;
use std::sync::Arc;

/// The settings a delivery job uses.
#[derive(Debug, Clone)]
pub struct DeliveryConfig {
    /// Rows per round (`msgx.dispatch.batch`, `msgx.schd.flush-limit`,
    /// `msgx.season.flush-limit`).
    pub round_size: u64,
    /// The failure rules (`msgx.dispatch.*`).
    pub retry: RetryPolicy,
    /// The producer's settings (`msgx.kafka`).
    pub kafka: crate::config::Kafka,
}

impl DeliveryConfig {
    /// The settings of a job whose round is `round_size` rows, from `config`.
    pub fn from_config(config: &crate::config::Config, round_size: u32) -> Self {
        Self {
            round_size: u64::from(round_size),
            retry: RetryPolicy::from_config(config),
            kafka: config.msgx.kafka.clone(),
        }
    }

    /// The constructors' check: `key` names the round size's setting.
    pub fn validate(&self, key: &'static str) -> Result<(), JobConfigError> {
        JobConfigError::at_least_one(key, self.round_size)
    }
}

job_counts! {
    /// What a delivery run did (`dispatch-msg`, `schd-flush`, `season-flush`).
    pub struct DeliveryCounts {
        /// `--dry-run`: the rows due.
        due,
        sent,
        /// Sent, but replaced by a newer version meanwhile (§8.2).
        superseded,
        /// Rows behind a failed head, left for a later round (§8.1).
        paused,
        failed_message_specific,
        failed_transient,
        failed_in_doubt,
        dead,
    }
}

/// A delivery run's report.
pub type DeliveryReport = RunReport<DeliveryCounts>;

/// How a round ended, for the loop's decision to go on.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RoundEnd {
    /// Records the broker confirmed in this round.
    pub confirmed: u64,
    /// Failures that were not the record's own fault (transient or in doubt).
    pub broker_failures: u64,
    /// The producer hit a fatal error: drop it, stop the run.
    pub fatal: bool,
    /// Stopped early (deadline, shutdown): rows of the batch were left unsent.
    pub cut_short: bool,
    /// The lowest EVENT_ID of the batch that this round did not send (failed,
    /// or left behind a failed head); the next round reads from it again.
    pub first_unsent: Option<i64>,
}

impl RoundEnd {
    /// Notes that `event_id` of the batch was not sent.
    pub fn unsent(&mut self, event_id: i64) {
        self.first_unsent = Some(self.first_unsent.map_or(event_id, |f| f.min(event_id)));
    }
}

/// Runs rounds of `job` until the batch comes back short, the item bound, the
/// time budget, or a round in which the broker confirmed nothing and failed
/// (a broker outage: waiting out every next head's message timeout in the
/// same run would only delay the run's end).
///
/// "Due" is judged at the run's start for every round, so a row failing in
/// this run (it backs off past that instant) is not read again in the run.
/// Each round reads after the settled prefix (module docs): a row a round did
/// not return was not eligible at that instant (SENT, DEAD, backing off, or
/// behind a backing-off head) and stays so for the rest of the run; rows
/// committed later get higher EVENT_IDs. Skipping the settled prefix keeps
/// each read from filtering past the rows earlier rounds already sent
/// (docs/BENCHMARKS.md).
pub(crate) async fn run_rounds(
    job: &super::Delivery,
    ctx: &JobContext,
    bounds: &RunBounds,
) -> Result<DeliveryReport, JobError> {
    let run_start = ctx.clock.now();
    let deadline = bounds.deadline(run_start);
    let config = job.config();
    let policy = &config.retry;
    let round_size = config.round_size.max(1);
    let mut report = DeliveryReport::default();
    let mut read = 0u64;
    let mut after = 0i64;
    let mut producer: Option<Arc<DeliveryProducer>> = None;
    loop {
        if read >= bounds.max_items || !ctx.may_continue(deadline)? {
            report.more = true;
            break;
        }
        let limit = round_size.min(bounds.max_items - read);
        let rows = job
            .fetch(
                ctx,
                run_start,
                after,
                i64::try_from(limit).unwrap_or(i64::MAX),
            )
            .await?;
        let n = rows.len() as u64;
        let last = rows.last().map_or(after, |r| r.event_id);
        read += n;
        if ctx.dry_run {
            report.items += n;
            report.details.due.add(n);
            report.more = n == limit;
            break;
        }
        if rows.is_empty() {
            report.more = false;
            break;
        }
        let p = match &producer {
            Some(p) => p.clone(),
            None => {
                let p = ctx
                    .kafka
                    .get(&config.kafka)
                    .map_err(|e| JobError::Other(e.to_string()))?;
                producer = Some(p.clone());
                p
            }
        };
        let wave = WaveSender {
            ctx,
            producer: &p,
            policy,
            deadline,
        };
        let end = job.deliver(&wave, rows, &mut report.details).await?;
        // Only the settled prefix is skipped from now on (module docs).
        after = end.first_unsent.map_or(last, |id| id - 1);
        report.items += end.confirmed;
        if end.fatal {
            ctx.kafka.discard(&p);
            tracing::warn!(job = job.name(), error = ?p.fatal_error(), "Kafka producer fatal error; it is recreated on the next run");
            report.more = true;
            break;
        }
        if end.cut_short || (end.confirmed == 0 && end.broker_failures > 0) {
            report.more = true;
            break;
        }
        report.more = n == limit;
        // A short round that left rows unsent reads once more: a DEAD head's
        // followers may go out now (the read returns nothing otherwise).
        if !report.more && end.first_unsent.is_none() {
            break;
        }
    }
    Ok(report)
}

/// Sends waves for one round.
pub(crate) struct WaveSender<'a> {
    pub ctx: &'a JobContext,
    pub producer: &'a Arc<DeliveryProducer>,
    pub policy: &'a RetryPolicy,
    pub deadline: DateTime<Utc>,
}

/// Per-row result of a wave, in the order of the rows given.
pub(crate) struct WaveOutcome {
    /// True where the broker confirmed the record.
    pub confirmed: Vec<bool>,
    pub broker_failures: u64,
    pub fatal: bool,
}

impl WaveSender<'_> {
    /// Whether another wave may start (lock held, no shutdown, in budget).
    pub fn may_continue(&self) -> Result<bool, JobError> {
        self.ctx.may_continue(self.deadline)
    }

    /// Sends `rows` (at most one per FLID), waits for every delivery report,
    /// then marks and records in one fenced transaction.
    pub async fn send(
        &self,
        topic: Topic,
        rows: &[&PendingEvent],
        report: &mut DeliveryCounts,
    ) -> Result<WaveOutcome, JobError> {
        // Each record carries its message's trace, read
        // from the row, so a redelivery carries the same one; its span puts
        // the trace-id on this row's log lines and, when exporting, covers
        // the send up to the SENT mark.
        let traces: Vec<Option<String>> = rows
            .iter()
            .map(|r| r.trace().map(|t| t.to_string()))
            .collect();
        let spans: Vec<tracing::Span> = rows
            .iter()
            .map(|r| event_span(r.event_id, &r.partition_key, r.trace().as_ref()))
            .collect();
        let records: Vec<Outgoing<'_>> = rows
            .iter()
            .zip(&traces)
            .map(|(r, trace)| Outgoing {
                topic,
                key: &r.partition_key,
                payload: r.payload.as_deref(),
                event_type: &r.event_type,
                state_version: r.state_version,
                event_id: r.event_id,
                traceparent: trace.as_deref(),
            })
            .collect();
        let results = self.producer.send_all(&records).await;
        let now = self.ctx.clock.now();

        let mut confirmed = Vec::with_capacity(rows.len());
        let mut failures: Vec<(&PendingEvent, &tracing::Span, SendError, FailureClass)> =
            Vec::new();
        let mut fatal = false;
        let latency =
            metrics::histogram!("msgx_outbox_delivery_latency_seconds", "target" => topic.target());
        for ((row, span), result) in rows.iter().zip(&spans).zip(results) {
            match result {
                Ok(()) => {
                    // Commit → broker ack (docs/metrics.md).
                    latency.record(crate::clock::seconds_between(row.created_at, now));
                    confirmed.push(true)
                }
                Err(e) => {
                    confirmed.push(false);
                    fatal |= e.code() == Some(RDKafkaErrorCode::Fatal);
                    let class = classify(&e);
                    failures.push((row, span, e, class));
                }
            }
        }
        fatal |= self.producer.fatal_error().is_some();

        let mut tx = self.ctx.pg.begin().await?;
        self.ctx.fence(&mut tx).await?;
        let sent = rows.iter().zip(&confirmed).filter(|(_, ok)| **ok);
        // The KAFKA:msg rows this wave moved to SENT, for the end-to-end
        // latency once the mark is committed.
        let mut sent_msgs = Vec::new();
        match topic {
            Topic::Msg | Topic::Audit => {
                let ids: Vec<i64> = sent.map(|(r, _)| r.event_id).collect();
                sent_msgs = msg_event::mark_msg_sent(&mut tx, &ids, now).await?;
                report.sent.add(sent_msgs.len() as u64);
            }
            Topic::Schd | Topic::Season => {
                let pairs: Vec<(i64, i64)> =
                    sent.map(|(r, _)| (r.event_id, r.state_version)).collect();
                let target = match topic {
                    Topic::Season => crate::domain::EventTarget::KafkaSeason,
                    _ => crate::domain::EventTarget::KafkaSchd,
                };
                let marked = msg_event::mark_latest_sent(&mut tx, target, &pairs, now).await?;
                report.sent.add(marked.len() as u64);
                // Sent, but a newer version replaced the row meanwhile (§8.2):
                // it stays PENDING and goes out in the next round.
                report.superseded.add((pairs.len() - marked.len()) as u64);
            }
        }
        let mut broker_failures = 0;
        for (row, span, err, class) in &failures {
            let update = self
                .policy
                .on_failure(row.attempts, row.first_failure_at, *class, now);
            let error = format!("{}: {err}", class.as_str());
            msg_event::record_failure(&mut tx, row.event_id, row.state_version, &update, &error)
                .await?;
            match class {
                FailureClass::MessageSpecific => &mut report.failed_message_specific,
                FailureClass::Transient => &mut report.failed_transient,
                FailureClass::InDoubt => &mut report.failed_in_doubt,
            }
            .add(1);
            if *class != FailureClass::MessageSpecific {
                broker_failures += 1;
            }
            if update.dead {
                report.dead.add(1);
            }
            // The event span names the row (event_id, flid, trace_id).
            span.in_scope(|| {
                if update.dead {
                    tracing::error!(error_class = class.as_str(), attempts = update.attempts, error = %error, "Outbox event is DEAD (kept as the DLQ)");
                } else {
                    tracing::debug!(attempts = update.attempts, counted = update.counted, next_attempt_at = ?update.next_attempt_at, error = %error, "Outbox event not delivered; backing off");
                }
            });
        }
        tx.commit().await?;
        super::latency::record(&sent_msgs, now);
        if let Some((row, _, err, class)) = failures.first() {
            tracing::warn!(failed = failures.len(), of = rows.len(), first_event_id = row.event_id, first_class = ?class, first_error = %err, "Outbox events not delivered; their FLIDs back off");
        }
        Ok(WaveOutcome {
            confirmed,
            broker_failures,
            fatal,
        })
    }
}
