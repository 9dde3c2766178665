//! `msgx tail <topic>`: a small consumer that shows what the delivery jobs
//! published: partition, offset, key, headers, and the
//! value or `null` for a tombstone.
//!
//! It assigns every partition directly (no group join: infra notes, a group
//! join costs ≈ 3 s) and commits nothing. Without `--follow` it stops once
//! every partition is at its end, or after `--idle` without any message.

use crate::config;
use crate::exit::Exit;
use crate::kafka::{self, KafkaClientError, KafkaContext, Role};
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// How to read.
#[derive(Debug, Clone)]
pub struct TailOptions {
    /// Start at the earliest offset (else only new messages).
    pub from_beginning: bool,
    /// Stop after this many messages.
    pub max: Option<u64>,
    /// Keep waiting for new messages at the end of the topic.
    pub follow: bool,
    /// Without `follow`: stop after this long without any message or event.
    pub idle: Duration,
}

/// One consumed record.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TailRecord {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<String>,
    pub headers: BTreeMap<String, String>,
    /// `None` = a null value (tombstone).
    pub value: Option<String>,
}

impl TailRecord {
    /// A header parsed as an integer (`state-version`, `event-id`).
    pub fn header_i64(&self, name: &str) -> Option<i64> {
        self.headers.get(name).and_then(|v| v.parse().ok())
    }

    /// One line for people.
    pub fn to_line(&self) -> String {
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!(
            "{}:{} key={} {} value={}",
            self.partition,
            self.offset,
            self.key.as_deref().unwrap_or("null"),
            headers.join(" "),
            self.value.as_deref().unwrap_or("null")
        )
    }
}

/// Why tailing failed.
#[derive(Debug, thiserror::Error)]
pub enum TailError {
    #[error(transparent)]
    Client(#[from] KafkaClientError),
    #[error("Kafka: {0}")]
    Kafka(#[from] KafkaError),
    #[error("topic {0:?} has no partitions (does it exist?)")]
    NoPartitions(String),
    #[error("the partition lookup did not finish: {0}")]
    Lookup(String),
}

/// Reads `topic` by `opts`, calling `each` per record; returns the count.
pub async fn tail(
    cfg: &config::Kafka,
    topic: &str,
    opts: &TailOptions,
    mut each: impl FnMut(&TailRecord),
) -> Result<u64, TailError> {
    // Partitions through the metadata client (same settings), which reports
    // a TLS/SASL failure as such; then the consumer.
    let (lookup, name) = (cfg.clone(), topic.to_string());
    let partitions = tokio::task::spawn_blocking(move || {
        kafka::MetadataClient::create(&lookup)?.partitions(&name, lookup.call_timeout.std())
    })
    .await
    .map_err(|e| TailError::Lookup(e.to_string()))??
    .ok_or_else(|| TailError::NoPartitions(topic.to_string()))?;
    let consumer: StreamConsumer<KafkaContext> = kafka::client_config(cfg, Role::Tail)?
        .create_with_context(KafkaContext::new(Role::Tail))
        .map_err(|e| kafka::create_error(Role::Tail, &e))?;
    let start = if opts.from_beginning {
        Offset::Beginning
    } else {
        Offset::End
    };
    let mut tpl = TopicPartitionList::new();
    for p in &partitions {
        tpl.add_partition_offset(topic, *p, start)?;
    }
    consumer.assign(&tpl)?;

    let mut at_end: BTreeSet<i32> = BTreeSet::new();
    let mut count = 0u64;
    loop {
        if opts.max.is_some_and(|m| count >= m) {
            break;
        }
        if !opts.follow && at_end.len() == partitions.len() {
            break;
        }
        let next = if opts.follow {
            Ok(consumer.recv().await)
        } else {
            tokio::time::timeout(opts.idle, consumer.recv()).await
        };
        match next {
            Err(_idle) => break,
            Ok(Err(KafkaError::PartitionEOF(p))) => {
                at_end.insert(p);
            }
            Ok(Err(e)) => return Err(e.into()),
            Ok(Ok(m)) => {
                at_end.remove(&m.partition());
                let headers = m
                    .headers()
                    .map(|h| {
                        h.iter()
                            .map(|h| {
                                (
                                    h.key.to_string(),
                                    h.value
                                        .map(|v| String::from_utf8_lossy(v).into_owned())
                                        .unwrap_or_default(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let record = TailRecord {
                    topic: m.topic().to_string(),
                    partition: m.partition(),
                    offset: m.offset(),
                    key: m.key().map(|k| String::from_utf8_lossy(k).into_owned()),
                    headers,
                    value: m.payload().map(|v| String::from_utf8_lossy(v).into_owned()),
                };
                each(&record);
                count += 1;
            }
        }
    }
    Ok(count)
}

/// `msgx tail`: prints records (one line or one JSON object each); exit 0,
/// or 1 on a Kafka error.
pub async fn run(cfg: &config::Kafka, topic: &str, opts: &TailOptions, json: bool) -> Exit {
    let printed = tail(cfg, topic, opts, |r| {
        if json {
            println!("{}", serde_json::to_string(r).unwrap_or_default());
        } else {
            println!("{}", r.to_line());
        }
    });
    let result = tokio::select! {
        r = printed => r,
        _ = tokio::signal::ctrl_c() => return Exit::Ok,
    };
    match result {
        Ok(n) => {
            eprintln!("{n} message(s) from {topic}");
            Exit::Ok
        }
        Err(e) => {
            eprintln!("msgx tail: {e}");
            Exit::Failure
        }
    }
}
