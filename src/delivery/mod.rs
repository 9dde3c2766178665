//! Event delivery (design §8).

pub mod dead_letters;
pub mod dispatcher;
pub mod event_cleanup;
pub mod latency;
mod outbox;
pub mod retry;
pub mod schd_flush;

pub use outbox::{DeliveryConfig, DeliveryCounts, DeliveryReport};

use crate::domain::EventTarget;
use crate::jobs::{Job, JobConfigError, JobContext, JobError, RunBounds};
use crate::kafka::producer::Topic;
use crate::store::pg::msg_event::{self, PendingEvent};
use chrono::{DateTime, Utc};
use outbox::{RoundEnd, WaveSender};

/// The outbox a delivery job sends. Every feed runs the same rounds
/// ([`outbox`]: frozen batches, SENT after the broker's report, failures by
/// [`retry`]); they differ in what a round reads and how it sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// `dispatch-msg`: the Dispatcher of KAFKA:msg events, per FLID in
    /// order (design §8.1, [`dispatcher`]).
    #[doc(alias = "Dispatcher")]
    Msg,
    /// `schd-flush`: the latest full state per flight to the compacted
    /// `schd` topic (design §8.2, §12.4, [`schd_flush`]).
    Schd,
    /// `season-flush`: publishes the seasonal schedule's series to the compacted
    /// `season` topic (`msgx.kafka.topic-season`; docs/season.md).
    ///
    /// The same mechanism and guarantees as `schd-flush` (design §8.2): one
    /// KAFKA:season outbox row per record key (`SNAM|ALCD|FLNO|MVIN|STDT`),
    /// replaced only forward in STATE_VERSION (the season revision) with a new
    /// EVENT_ID per write; a round sends the due rows (UPSERT with the series
    /// JSON, TOMBSTONE with a null value) and marks each with the generation and
    /// revision it read, so a row replaced in flight goes out again next round.
    /// Failures follow [`super::retry`].
    Season,
}

impl Feed {
    /// The job's name (JOB_RUN, metrics, logs).
    pub const fn job(self) -> &'static str {
        match self {
            Feed::Msg => "dispatch-msg",
            Feed::Schd => "schd-flush",
            Feed::Season => "season-flush",
        }
    }

    /// The key of the round size.
    pub const fn round_key(self) -> &'static str {
        match self {
            Feed::Msg => "msgx.dispatch.batch",
            Feed::Schd => "msgx.schd.flush-limit",
            Feed::Season => "msgx.season.flush-limit",
        }
    }
}

/// A delivery job: one [`Feed`] with its settings.
pub struct Delivery {
    feed: Feed,
    config: DeliveryConfig,
}

impl Delivery {
    /// The round is `feed.round_key()` rows.
    pub fn new(feed: Feed, config: DeliveryConfig) -> Result<Self, JobConfigError> {
        config.validate(feed.round_key())?;
        Ok(Self { feed, config })
    }

    pub(crate) fn name(&self) -> &'static str {
        self.feed.job()
    }

    pub(crate) fn config(&self) -> &DeliveryConfig {
        &self.config
    }

    /// Reads a round's rows (the frozen batch): due at `now`, EVENT_ID >
    /// `after`, in EVENT_ID order.
    pub(crate) async fn fetch(
        &self,
        ctx: &JobContext,
        now: DateTime<Utc>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<PendingEvent>, sqlx::Error> {
        match self.feed {
            Feed::Msg => msg_event::fetch_due_msg(&ctx.pg, now, after, limit).await,
            Feed::Schd => msg_event::fetch_due_schd(&ctx.pg, now, after, limit).await,
            Feed::Season => {
                msg_event::fetch_due_latest(&ctx.pg, EventTarget::KafkaSeason, now, after, limit)
                    .await
            }
        }
    }

    /// Delivers the frozen batch.
    pub(crate) async fn deliver(
        &self,
        wave: &WaveSender<'_>,
        rows: Vec<PendingEvent>,
        report: &mut DeliveryCounts,
    ) -> Result<RoundEnd, JobError> {
        match self.feed {
            Feed::Msg => dispatcher::deliver(wave, rows, report).await,
            Feed::Schd => schd_flush::deliver_latest(wave, Topic::Schd, rows, report).await,
            Feed::Season => schd_flush::deliver_latest(wave, Topic::Season, rows, report).await,
        }
    }
}

#[async_trait::async_trait]
impl Job for Delivery {
    type Details = DeliveryCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<DeliveryReport, JobError> {
        outbox::run_rounds(self, ctx, bounds).await
    }
}
