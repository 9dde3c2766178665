//! `season-flush`: publishes the seasonal schedule's series to the compacted
//! `season` topic (`msgx.kafka.topic-season`; docs/season.md).
//!
//! The same mechanism and guarantees as `schd-flush` (design §8.2): one
//! KAFKA:season outbox row per record key (`SNAM|ALCD|FLNO|MVIN|STDT`),
//! replaced only forward in STATE_VERSION (the season revision) with a new
//! EVENT_ID per write; a round sends the due rows (UPSERT with the series
//! JSON, TOMBSTONE with a null value) and marks each with the generation and
//! revision it read, so a row replaced in flight goes out again next round.
//! Failures follow [`super::retry`].

use super::outbox::{DeliveryConfig, DeliveryCounts, OutboxJob, RoundEnd, WaveSender};
use super::schd_flush::deliver_latest;
use crate::domain::EventTarget;
use crate::jobs::{JobConfigError, JobContext, JobError};
use crate::kafka::producer::Topic;
use crate::store::pg::msg_event::{self, PendingEvent};
use chrono::{DateTime, Utc};

/// The `season-flush` job.
pub struct SeasonFlush {
    config: DeliveryConfig,
}

impl SeasonFlush {
    /// The round is `msgx.season.flush-limit` rows.
    pub fn new(config: DeliveryConfig) -> Result<Self, JobConfigError> {
        config.validate("msgx.season.flush-limit")?;
        Ok(Self { config })
    }
}

#[async_trait::async_trait]
impl OutboxJob for SeasonFlush {
    fn name(&self) -> &'static str {
        "season-flush"
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
        msg_event::fetch_due_latest(&ctx.pg, EventTarget::KafkaSeason, now, after, limit).await
    }

    async fn deliver(
        &self,
        wave: &WaveSender<'_>,
        rows: Vec<PendingEvent>,
        report: &mut DeliveryCounts,
    ) -> Result<RoundEnd, JobError> {
        deliver_latest(wave, Topic::Season, rows, report).await
    }
}
