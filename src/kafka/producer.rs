//! The Kafka producer of the delivery jobs (design §8.1, §8.2), and the one
//! error classifier both jobs use.
//!
//! - `enable.idempotence=true`, `acks=all`: a broker retry never duplicates or
//!   reorders within a partition (the partition is chosen by the key = FLID).
//! - `message.timeout.ms` = `msgx.kafka.message-timeout`: the upper bound on a
//!   delivery report; `reconnect.backoff.max.ms` = `msgx.kafka.reconnect-backoff-max`
//!   (infra notes: a low value makes recovery after an outage fast).
//! - Every send waits for its delivery report, bounded by the message timeout
//!   plus `msgx.kafka.call-timeout`; a report that never arrives counts as
//!   [`FailureClass::InDoubt`].
//! - After a fatal error (`rd_kafka_fatal_error`) the [`SharedProducer`] hands
//!   out a new producer on the next call.
//!
//! Headers on every record: `event-type` (`UPSERT`/`TOMBSTONE`),
//! `state-version` and `event-id`, all as decimal/ASCII text; and
//! `traceparent` (W3C Trace Context) when the row's message has one.

use crate::config;
use crate::domain::delivery::FailureClass;
use crate::kafka::{self, KafkaClientError, KafkaContext, Role};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why a producer could not be created.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ProducerError(#[from] pub KafkaClientError);

/// Which configured topic a record goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// `msgx.kafka.topic-msg` (KAFKA:msg, §8.1).
    Msg,
    /// `msgx.kafka.topic-schd` (KAFKA:schd, §8.2).
    Schd,
    /// `msgx.kafka.topic-season` (KAFKA:season, the SCHS series; docs/season.md).
    Season,
    /// `msgx.kafka.topic-audit` (KAFKA:audit, the operator actions as
    /// CloudEvents, delivered by the Dispatcher beside KAFKA:msg).
    Audit,
}

impl Topic {
    /// The outbox target (`MSG_EVENT.TARGET`) this topic delivers.
    pub fn target(self) -> &'static str {
        match self {
            Topic::Msg => crate::domain::EventTarget::KafkaMsg.as_str(),
            Topic::Schd => crate::domain::EventTarget::KafkaSchd.as_str(),
            Topic::Season => crate::domain::EventTarget::KafkaSeason.as_str(),
            Topic::Audit => crate::domain::EventTarget::KafkaAudit.as_str(),
        }
    }
}

/// One outbox row to send.
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    pub topic: Topic,
    /// MSG_EVENT.PARTITION_KEY: the FLID, or the series key for `season`.
    pub key: &'a str,
    /// `None` sends a null value (a tombstone).
    pub payload: Option<&'a [u8]>,
    pub event_type: &'a str,
    pub state_version: i64,
    pub event_id: i64,
    /// The message's W3C `traceparent`, sent as the header of that name;
    /// `None` sends no such header (rows from before migration 0011).
    pub traceparent: Option<&'a str>,
}

/// Why one record was not confirmed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SendError {
    #[error("{0}")]
    Kafka(#[from] KafkaError),
    /// Not delivered while the producer's TLS/SASL with a broker failed: the
    /// outbox row then says why (e.g. "certificate verify failed"), not only
    /// that the message timed out.
    #[error("{error}; Kafka TLS/SASL failure: {security}")]
    Security { error: KafkaError, security: String },
    #[error("the producer was dropped before the delivery report arrived")]
    ReportLost,
    #[error("no delivery report within {0:?}")]
    ReportTimeout(Duration),
}

impl SendError {
    /// The librdkafka/broker error code, when there is one.
    pub fn code(&self) -> Option<RDKafkaErrorCode> {
        match self {
            SendError::Kafka(e) | SendError::Security { error: e, .. } => e.rdkafka_error_code(),
            _ => None,
        }
    }
}

/// Classifies a send failure: the one place that decides.
pub fn classify(err: &SendError) -> FailureClass {
    match err.code() {
        Some(code) => classify_code(code),
        None => FailureClass::InDoubt,
    }
}

/// Classifies a librdkafka/broker error code. Unknown codes are
/// [`FailureClass::InDoubt`]: the safe side (never skipped).
pub fn classify_code(code: RDKafkaErrorCode) -> FailureClass {
    use RDKafkaErrorCode as C;
    match code {
        // Definitive rejections of this record.
        C::MessageSizeTooLarge
        | C::InvalidMessageSize
        | C::InvalidMessage
        | C::MessageBatchTooLarge
        | C::InvalidRecord
        | C::InvalidTimestamp
        | C::InvalidTopic
        | C::TopicAuthorizationFailed
        | C::PolicyViolation
        | C::UnsupportedForMessageFormat
        | C::BadMessage
        | C::BadCompression
        | C::KeySerialization
        | C::ValueSerialization => FailureClass::MessageSpecific,
        // Refused before anything was written: safe to retry, nothing in the topic.
        C::QueueFull
        | C::PurgeQueue
        | C::AllBrokersDown
        | C::UnknownTopic
        | C::UnknownPartition
        | C::UnknownTopicOrPartition
        | C::LeaderNotAvailable
        | C::NotLeaderForPartition
        | C::BrokerNotAvailable
        | C::ReplicaNotAvailable
        | C::NotEnoughReplicas
        | C::Resolve
        | C::ClusterAuthorizationFailed
        | C::Authentication
        | C::SaslAuthenticationFailed
        | C::ThrottlingQuotaExceeded
        | C::KafkaStorageError
        | C::InvalidRequiredAcks => FailureClass::Transient,
        // Possibly persisted, or nobody knows.
        _ => FailureClass::InDoubt,
    }
}

/// A producer for the delivery jobs, with its topics.
pub struct DeliveryProducer {
    inner: FutureProducer<KafkaContext>,
    context: KafkaContext,
    config: config::Kafka,
}

impl DeliveryProducer {
    /// Creates a producer from `msgx.kafka` (does not connect yet).
    pub fn create(cfg: &config::Kafka) -> Result<Self, ProducerError> {
        let context = KafkaContext::new(Role::Producer);
        let inner = kafka::client_config(cfg, Role::Producer)?
            .create_with_context(context.clone())
            .map_err(|e| kafka::create_error(Role::Producer, &e))?;
        Ok(Self {
            inner,
            context,
            config: cfg.clone(),
        })
    }

    /// The underlying rdkafka producer (tests inject faults through it).
    pub fn inner(&self) -> &FutureProducer<KafkaContext> {
        &self.inner
    }

    /// The last broker failure librdkafka reported (connect, TLS, SASL).
    pub fn last_broker_failure(&self) -> Option<String> {
        self.context.last_failure()
    }

    /// The fatal error that makes this producer unusable, if any.
    pub fn fatal_error(&self) -> Option<String> {
        self.inner
            .client()
            .fatal_error()
            .map(|(code, reason)| format!("{code:?}: {reason}"))
    }

    fn topic(&self, t: Topic) -> &str {
        match t {
            Topic::Msg => &self.config.topic_msg,
            Topic::Schd => &self.config.topic_schd,
            Topic::Season => &self.config.topic_season,
            Topic::Audit => &self.config.topic_audit,
        }
    }

    /// A delivery failure, with the producer's TLS/SASL failure when it had
    /// one (a record is never rejected for its content by that).
    fn explained(&self, error: KafkaError) -> SendError {
        let plain = SendError::Kafka(error);
        if classify(&plain) == FailureClass::MessageSpecific {
            return plain;
        }
        match (plain, self.context.security_failure()) {
            (SendError::Kafka(error), Some(security)) => SendError::Security { error, security },
            (plain, _) => plain,
        }
    }

    /// Enqueues every record, then waits for every delivery report; returns
    /// one result per record, in order. Records of one key must not be in the
    /// same call if their relative order matters after a failure: callers
    /// send at most one record per FLID per call (the §8.1 "wave").
    pub async fn send_all(&self, records: &[Outgoing<'_>]) -> Vec<Result<(), SendError>> {
        let mut pending = Vec::with_capacity(records.len());
        for r in records {
            let headers = OwnedHeaders::new_with_capacity(4)
                .insert(Header {
                    key: "event-type",
                    value: Some(r.event_type),
                })
                .insert(Header {
                    key: "state-version",
                    value: Some(&r.state_version.to_string()),
                })
                .insert(Header {
                    key: "event-id",
                    value: Some(&r.event_id.to_string()),
                });
            let headers = match r.traceparent {
                Some(t) => headers.insert(Header {
                    key: "traceparent",
                    value: Some(t),
                }),
                None => headers,
            };
            let mut record = FutureRecord::<str, [u8]>::to(self.topic(r.topic))
                .key(r.key)
                .headers(headers);
            if let Some(p) = r.payload {
                record = record.payload(p);
            }
            pending.push(
                self.inner
                    .send_result(record)
                    .map_err(|(e, _)| SendError::Kafka(e)),
            );
        }
        let bound = self.config.message_timeout.std() + self.config.call_timeout.std();
        let deadline = tokio::time::Instant::now() + bound;
        let mut out = Vec::with_capacity(pending.len());
        for p in pending {
            out.push(match p {
                Err(e) => Err(e),
                Ok(fut) => match tokio::time::timeout_at(deadline, fut).await {
                    Ok(Ok(Ok(_delivery))) => Ok(()),
                    Ok(Ok(Err((e, _msg)))) => Err(self.explained(e)),
                    Ok(Err(_canceled)) => Err(SendError::ReportLost),
                    Err(_elapsed) => Err(SendError::ReportTimeout(bound)),
                },
            });
        }
        out
    }
}

/// The producer shared by the delivery jobs of one process, created lazily
/// from the job's `msgx.kafka` and replaced after a fatal error. Cheap to
/// clone; clones share the producer.
#[derive(Clone, Default)]
pub struct SharedProducer {
    slot: Arc<Mutex<Option<Arc<DeliveryProducer>>>>,
}

impl SharedProducer {
    /// The current producer, or a new one when there is none, when the config
    /// changed, or when the current one has a fatal error.
    pub fn get(&self, cfg: &config::Kafka) -> Result<Arc<DeliveryProducer>, ProducerError> {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = slot.as_ref() {
            match p.fatal_error() {
                None if p.config == *cfg => return Ok(p.clone()),
                None => {}
                Some(fatal) => {
                    tracing::warn!(error = %fatal, "Kafka producer had a fatal error; recreating it")
                }
            }
        }
        let fresh = Arc::new(DeliveryProducer::create(cfg)?);
        *slot = Some(fresh.clone());
        Ok(fresh)
    }

    /// Drops `used` from the slot (if it is still the current one), so the
    /// next [`SharedProducer::get`] creates a new producer.
    pub fn discard(&self, used: &Arc<DeliveryProducer>) {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_some_and(|p| Arc::ptr_eq(p, used)) {
            *slot = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_specific_errors_are_rejections_of_the_record() {
        for code in [
            RDKafkaErrorCode::MessageSizeTooLarge,
            RDKafkaErrorCode::TopicAuthorizationFailed,
            RDKafkaErrorCode::InvalidTopic,
            RDKafkaErrorCode::InvalidRecord,
            RDKafkaErrorCode::MessageBatchTooLarge,
        ] {
            assert_eq!(
                classify_code(code),
                FailureClass::MessageSpecific,
                "{code:?}"
            );
        }
    }

    #[test]
    fn refusals_before_writing_are_transient() {
        for code in [
            RDKafkaErrorCode::QueueFull,
            RDKafkaErrorCode::NotEnoughReplicas,
            RDKafkaErrorCode::LeaderNotAvailable,
            RDKafkaErrorCode::NotLeaderForPartition,
            RDKafkaErrorCode::UnknownTopicOrPartition,
            RDKafkaErrorCode::PurgeQueue,
        ] {
            assert_eq!(classify_code(code), FailureClass::Transient, "{code:?}");
        }
    }

    #[test]
    fn possibly_persisted_and_unknown_errors_are_in_doubt() {
        for code in [
            RDKafkaErrorCode::MessageTimedOut,
            RDKafkaErrorCode::RequestTimedOut,
            RDKafkaErrorCode::BrokerTransportFailure,
            RDKafkaErrorCode::NotEnoughReplicasAfterAppend,
            RDKafkaErrorCode::PurgeInflight,
            RDKafkaErrorCode::NetworkException,
            RDKafkaErrorCode::Fatal,
            RDKafkaErrorCode::OutOfOrderSequenceNumber,
            RDKafkaErrorCode::Unknown,
        ] {
            assert_eq!(classify_code(code), FailureClass::InDoubt, "{code:?}");
        }
        assert_eq!(classify(&SendError::ReportLost), FailureClass::InDoubt);
        assert_eq!(
            classify(&SendError::ReportTimeout(Duration::from_secs(1))),
            FailureClass::InDoubt
        );
        assert_eq!(
            classify(&SendError::Kafka(KafkaError::MessageProduction(
                RDKafkaErrorCode::MessageSizeTooLarge
            ))),
            FailureClass::MessageSpecific
        );
    }

    #[test]
    fn shared_producer_is_reused_and_replaced_after_discard() {
        let shared = SharedProducer::default();
        let cfg = config::Kafka::default();
        let a = shared.get(&cfg).expect("producer");
        let b = shared.get(&cfg).expect("producer");
        assert!(Arc::ptr_eq(&a, &b));
        shared.discard(&a);
        let c = shared.get(&cfg).expect("producer");
        assert!(!Arc::ptr_eq(&a, &c));
        let mut other = cfg.clone();
        other.brokers = "127.0.0.1:1".into();
        let d = shared.get(&other).expect("producer");
        assert!(!Arc::ptr_eq(&c, &d));
    }
}
