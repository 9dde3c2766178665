//! `schd-flush`: publishes the latest full state per flight to the schd
//! topic (design §8.2, §12.4).
//!
//! KAFKA:schd keeps one outbox row per FLID; the processors upsert it
//! only-forward (STATE_VERSION ≥ the stored one) and give it a new EVENT_ID
//! (its write generation) each time, so ten updates between two flushes
//! leave one row: one message with the last version (conflation).
//!
//! A round takes up to `msgx.schd.flush-limit` due rows (one per FLID, so one
//! wave), sends UPSERT rows with their payload and TOMBSTONE rows with a null
//! value, key = FLID, and marks with the generation and version it read
//! (`WHERE event_id = <read> AND state_version = <read>`): a row replaced
//! while the record was in flight is not marked and goes out next round
//! (counted as `superseded`). Failures follow [`super::retry`].

use super::outbox::{DeliveryConfig, DeliveryCounts, OutboxJob, RoundEnd, WaveSender};
use crate::jobs::{JobConfigError, JobContext, JobError};
use crate::kafka::producer::Topic;
use crate::store::pg::msg_event::{self, PendingEvent};
use chrono::{DateTime, Utc};

/// The `schd-flush` job.
pub struct SchdFlush {
    config: DeliveryConfig,
}

impl SchdFlush {
    /// The round is `msgx.schd.flush-limit` rows.
    pub fn new(config: DeliveryConfig) -> Result<Self, JobConfigError> {
        config.validate("msgx.schd.flush-limit")?;
        Ok(Self { config })
    }
}

#[async_trait::async_trait]
impl OutboxJob for SchdFlush {
    fn name(&self) -> &'static str {
        "schd-flush"
    }

    fn config(&self) -> &DeliveryConfig {
        &self.config
    }

    async fn fetch(
        &self,
        ctx: &JobContext,
        now: DateTime<Utc>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<PendingEvent>, sqlx::Error> {
        msg_event::fetch_due_schd(&ctx.pg, now, after, limit).await
    }

    async fn deliver(
        &self,
        wave: &WaveSender<'_>,
        rows: Vec<PendingEvent>,
        report: &mut DeliveryCounts,
    ) -> Result<RoundEnd, JobError> {
        deliver_latest(wave, Topic::Schd, rows, report).await
    }
}

/// One round of a one-row-per-key target (KAFKA:schd, KAFKA:season): every
/// row is the latest of its key, so the whole batch is one wave.
pub(crate) async fn deliver_latest(
    wave: &WaveSender<'_>,
    topic: Topic,
    rows: Vec<PendingEvent>,
    report: &mut DeliveryCounts,
) -> Result<RoundEnd, JobError> {
    let refs: Vec<&PendingEvent> = rows.iter().collect();
    let outcome = wave.send(topic, &refs, report).await?;
    let mut end = RoundEnd {
        confirmed: outcome.confirmed.iter().filter(|ok| **ok).count() as u64,
        broker_failures: outcome.broker_failures,
        fatal: outcome.fatal,
        ..RoundEnd::default()
    };
    for (row, _) in rows.iter().zip(&outcome.confirmed).filter(|(_, ok)| !**ok) {
        end.unsent(row.event_id);
    }
    Ok(end)
}
