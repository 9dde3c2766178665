//! Kafka delivery (issue 6; design §8.1–§8.3) against librdkafka's in-process
//! mock cluster and a real PostgreSQL. Scenarios are set up by inserting
//! MSG_EVENT rows directly; time moves only through the manual clock. The
//! only real waiting is librdkafka's own (`message.timeout.ms` = 2 s here).

use crate::common;

use common::jobs::{detail, pass_ok, run_ok};
use common::*;
use msgx::clock::Clock;
use msgx::clock::ManualClock;
use msgx::commands::tail::TailRecord;
use msgx::config::Config;
use msgx::domain::events::{DomainEvent, Provenance, WriteFacts, events_for};
use msgx::domain::{FlightState, FlightStatus};
use msgx::scheduler::runner::{JobRunner, RunOptions};
use msgx::store::pg::msg_event;
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{DefaultProducerContext, Producer};
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};
use std::collections::BTreeMap;
use std::time::Duration;

const MSG: &str = "msg";
const SCHD: &str = "schd";

fn kafka_runner(
    db: &TestDb,
    cluster: &MockCluster<'static, DefaultProducerContext>,
    clock: msgx::clock::SharedClock,
    tweak: impl FnOnce(&mut Config),
) -> (JobRunner, tokio::sync::watch::Sender<bool>) {
    let bootstrap = cluster.bootstrap_servers();
    runner(db, None, clock, |c| {
        fast_kafka(c, &bootstrap);
        tweak(c);
    })
}

/// A record above 10,000 bytes is refused before sending (MSG_SIZE_TOO_LARGE,
/// message-specific): a head that fails on its own.
fn refuse_large_records(c: &mut Config) {
    c.msgx
        .kafka
        .properties
        .insert("message.max.bytes".into(), "10000".into());
}

/// A KAFKA:msg value as the processors build it (`events_for`): a change
/// notification of `flid` at `version`, so what the tests deliver is a
/// record of the consumer contract (schemas/).
fn notification_bytes(flid: i64, version: i64) -> Vec<u8> {
    let mut state = FlightState::new(flid, clock_now());
    state.state_version = version;
    state.last_msg_id = version;
    let facts = WriteFacts::of_write(
        None,
        &state,
        None,
        None,
        vec!["GTDT".into()],
        Provenance::internal("FLOP-GTDT"),
    );
    let [msg, _] = events_for(&state, None, facts);
    msg.to_bytes().expect("a notification has a value")
}

/// A KAFKA:msg row as the processors write it; returns its EVENT_ID.
async fn insert_msg(db: &TestDb, clock: &ManualClock, flid: i64, version: i64) -> i64 {
    insert_msg_payload(db, clock, flid, version, notification_bytes(flid, version)).await
}

async fn insert_msg_payload(
    db: &TestDb,
    clock: &ManualClock,
    flid: i64,
    version: i64,
    body: Vec<u8>,
) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO msg_event (target, partition_key, event_type, state_version, payload, created_at) \
         VALUES ('KAFKA:msg', $1, 'UPSERT', $2, $3, $4) RETURNING event_id",
    )
    .bind(flid.to_string())
    .bind(version)
    .bind(body)
    .bind(clock.now())
    .fetch_one(&db.pool)
    .await
    .expect("insert msg event")
}

/// The KAFKA:schd event of flight `flid` at `version` as the processors build
/// it (`events_for`): its full-state projection, or a tombstone when
/// `deleted`.
fn schd_event(flid: i64, version: i64, deleted: bool) -> DomainEvent {
    let mut state = FlightState::new(flid, clock_now());
    state.state_version = version;
    state.last_msg_id = version;
    if deleted {
        state.state = FlightStatus::Deleted;
    }
    let facts = WriteFacts::of_write(
        None,
        &state,
        None,
        None,
        vec![],
        Provenance::internal("FLOP-GTDT"),
    );
    let [_, schd] = events_for(&state, None, facts);
    schd
}

/// Stores `events` through the processors' own append (`msg_event::append`:
/// KAFKA:msg appended, KAFKA:schd upserted only-forward, §8.2) in `conn`'s
/// transaction.
async fn append_in(conn: &mut sqlx::PgConnection, events: &[DomainEvent], msg_id: i64) {
    msg_event::append(conn, events, Some(msg_id), clock_now())
        .await
        .expect("append through the processors' path");
}

/// A processor's KAFKA:schd write of `flid` at `version`, in `conn`'s transaction.
async fn upsert_schd_in(conn: &mut sqlx::PgConnection, flid: i64, version: i64, deleted: bool) {
    append_in(conn, &[schd_event(flid, version, deleted)], version).await;
}

/// The test clock's start: the write time of the helpers' events.
fn clock_now() -> chrono::DateTime<chrono::Utc> {
    manual_clock().0.now()
}

/// [`upsert_schd_in`] in a transaction of its own.
async fn upsert_schd(db: &TestDb, flid: i64, version: i64, deleted: bool) {
    let mut tx = db.pool.begin().await.expect("tx");
    upsert_schd_in(&mut tx, flid, version, deleted).await;
    tx.commit().await.expect("commit");
}

/// The Kafka value of [`schd_event`] (`None` for a tombstone).
fn schd_bytes(flid: i64, version: i64) -> Option<Vec<u8>> {
    schd_event(flid, version, false).to_bytes()
}

#[derive(Debug, sqlx::FromRow)]
struct Row {
    event_id: i64,
    status: String,
    attempts: i32,
    state_version: i64,
    next_attempt_at: Option<chrono::DateTime<chrono::Utc>>,
    first_failure_at: Option<chrono::DateTime<chrono::Utc>>,
    sent_at: Option<chrono::DateTime<chrono::Utc>>,
    last_error: Option<String>,
}

async fn row(db: &TestDb, event_id: i64) -> Row {
    sqlx::query_as(
        "SELECT event_id, status, attempts, state_version, next_attempt_at, first_failure_at, sent_at, last_error \
         FROM msg_event WHERE event_id = $1",
    )
    .bind(event_id)
    .fetch_one(&db.pool)
    .await
    .expect("row")
}

async fn schd_row(db: &TestDb, flid: i64) -> Row {
    sqlx::query_as(
        "SELECT event_id, status, attempts, state_version, next_attempt_at, first_failure_at, sent_at, last_error \
         FROM msg_event WHERE target = 'KAFKA:schd' AND partition_key = $1",
    )
    .bind(flid.to_string())
    .fetch_one(&db.pool)
    .await
    .expect("schd row")
}

async fn statuses(db: &TestDb) -> BTreeMap<String, i64> {
    sqlx::query_as::<_, (String, i64)>("SELECT status, count(*) FROM msg_event GROUP BY status")
        .fetch_all(&db.pool)
        .await
        .expect("statuses")
        .into_iter()
        .collect()
}

/// Records per key, in partition (= delivery) order.
fn by_key(records: &[TailRecord]) -> BTreeMap<String, Vec<&TailRecord>> {
    let mut sorted: Vec<&TailRecord> = records.iter().collect();
    sorted.sort_by_key(|r| (r.partition, r.offset));
    let mut map: BTreeMap<String, Vec<&TailRecord>> = BTreeMap::new();
    for r in sorted {
        map.entry(r.key.clone().unwrap_or_default())
            .or_default()
            .push(r);
    }
    map
}

fn event_ids(records: &[&TailRecord]) -> Vec<i64> {
    records
        .iter()
        .filter_map(|r| r.header_i64("event-id"))
        .collect()
}

#[tokio::test]
async fn per_flid_order_holds_while_another_flids_head_fails() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(1);
    let (clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |c| {
        refuse_large_records(c);
        c.msgx.dispatch.max_attempts = 2;
    });
    let big = insert_msg_payload(&db, &clock, 100, 1, vec![b'x'; 20_000]).await;
    let b1 = insert_msg(&db, &clock, 200, 1).await;
    let a2 = insert_msg(&db, &clock, 100, 2).await;
    let b2 = insert_msg(&db, &clock, 200, 2).await;
    let b3 = insert_msg(&db, &clock, 200, 3).await;

    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(s.items, 3, "{s:?}");
    assert_eq!(detail(&s, "failed_message_specific"), 1);
    assert_eq!(detail(&s, "paused"), 1);
    let head = row(&db, big).await;
    assert_eq!((head.status.as_str(), head.attempts), ("PENDING", 1));
    assert!(
        head.last_error
            .as_deref()
            .unwrap_or("")
            .contains("MessageSizeTooLarge"),
        "{head:?}"
    );
    assert!(head.next_attempt_at.is_some());
    let later = row(&db, a2).await;
    assert_eq!((later.status.as_str(), later.attempts), ("PENDING", 0));
    assert_eq!(later.next_attempt_at, None, "the paused row is untouched");
    for id in [b1, b2, b3] {
        let sent = row(&db, id).await;
        assert_eq!(sent.status, "SENT");
        assert!(sent.sent_at.is_some());
    }

    // The head is backing off: its FLID stays paused in the next run too.
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(s.items, 0, "{s:?}");
    assert_eq!(row(&db, a2).await.status, "PENDING");

    // Second failure reaches max-attempts: DEAD (the DLQ); the FLID resumes
    // in the same run (the next round reads it again from A2).
    clock.advance(chrono::Duration::seconds(11));
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(detail(&s, "dead"), 1, "{s:?}");
    assert_eq!(row(&db, big).await.status, "DEAD");
    assert_eq!(s.items, 1, "{s:?}");
    assert_eq!(row(&db, a2).await.status, "SENT");

    let records = consume(&kafka, MSG).await;
    let keys = by_key(&records);
    assert_eq!(event_ids(&keys["200"]), vec![b1, b2, b3]);
    assert_eq!(event_ids(&keys["100"]), vec![a2]);
    let first = keys["200"][0];
    assert_eq!(
        first.headers.get("event-type").map(String::as_str),
        Some("UPSERT")
    );
    assert_eq!(first.header_i64("state-version"), Some(1));
    assert_eq!(
        first.value.as_deref().map(str::as_bytes),
        Some(&notification_bytes(200, 1)[..])
    );
}

#[tokio::test]
async fn broker_down_longer_than_a_run_loses_nothing_and_keeps_order() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(1);
    let (clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |c| {
        c.msgx.dispatch.max_attempts = 1;
        c.msgx.dispatch.transient_deadline = "1m".parse().expect("duration");
    });
    let mut ids: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for v in 1..=4 {
        for flid in [31, 32, 33] {
            ids.entry(flid)
                .or_default()
                .push(insert_msg(&db, &clock, flid, v).await);
        }
    }
    kafka.broker_down(-1).expect("broker down");

    // The whole run sees the outage: every head times out (in doubt), nothing
    // is marked, nothing is counted inside the transient deadline.
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(s.items, 0, "{s:?}");
    assert_eq!(detail(&s, "failed_in_doubt"), 3, "{s:?}");
    assert_eq!(detail(&s, "paused"), 9);
    assert_eq!(
        statuses(&db).await,
        BTreeMap::from([("PENDING".into(), 12)])
    );
    let head = row(&db, ids[&31][0]).await;
    assert_eq!(head.attempts, 0);
    assert!(head.first_failure_at.is_some() && head.next_attempt_at.is_some());

    // Past the transient deadline it counts, but a possibly-persisted record
    // never becomes DEAD (max-attempts = 1 here).
    clock.advance(chrono::Duration::minutes(2));
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(detail(&s, "failed_in_doubt"), 3, "{s:?}");
    assert_eq!(detail(&s, "dead"), 0);
    let head = row(&db, ids[&31][0]).await;
    assert_eq!((head.status.as_str(), head.attempts), ("PENDING", 1));

    kafka.broker_up(-1).expect("broker up");
    clock.advance(chrono::Duration::minutes(2));
    let s = r
        .run(
            "dispatch-msg",
            &RunOptions {
                until_empty: true,
                ..Default::default()
            },
            None,
        )
        .await
        .expect("runs");
    assert_eq!(s.items, 12, "{s:?}");
    assert_eq!(statuses(&db).await, BTreeMap::from([("SENT".into(), 12)]));

    let records = consume(&kafka, MSG).await;
    let keys = by_key(&records);
    for (flid, expected) in &ids {
        assert_eq!(
            &event_ids(&keys[&flid.to_string()]),
            expected,
            "FLID {flid}"
        );
    }
}

#[tokio::test]
async fn produce_request_errors_transient_and_message_specific() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(1);
    let (clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |c| {
        c.msgx.dispatch.max_attempts = 50;
        // A topic marked unauthorised recovers at the next metadata refresh.
        c.msgx
            .kafka
            .properties
            .insert("topic.metadata.refresh.interval.ms".into(), "200".into());
    });

    // Transient, retried inside librdkafka: delivered in the same run, in order.
    kafka.request_errors(
        RDKafkaApiKey::Produce,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS; 3],
    );
    let a1 = insert_msg(&db, &clock, 41, 1).await;
    let a2 = insert_msg(&db, &clock, 41, 2).await;
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(s.items, 2, "{s:?}");
    assert_eq!(row(&db, a1).await.attempts, 0);

    // Transient beyond message.timeout.ms: uncounted, PENDING, then delivered.
    kafka.request_errors(
        RDKafkaApiKey::Produce,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS; 500],
    );
    let a3 = insert_msg(&db, &clock, 41, 3).await;
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(s.items, 0, "{s:?}");
    let failed = row(&db, a3).await;
    assert_eq!(
        (failed.status.as_str(), failed.attempts),
        ("PENDING", 0),
        "{failed:?}"
    );
    assert!(failed.next_attempt_at.is_some());
    kafka.clear_request_errors(RDKafkaApiKey::Produce);
    clock.advance(chrono::Duration::seconds(11));
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(s.items, 1, "{s:?}");

    // Message-specific (topic authorization): counted against the record.
    kafka.request_errors(
        RDKafkaApiKey::Produce,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED],
    );
    let c1 = insert_msg(&db, &clock, 42, 1).await;
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(detail(&s, "failed_message_specific"), 1, "{s:?}");
    let failed = row(&db, c1).await;
    assert_eq!((failed.status.as_str(), failed.attempts), ("PENDING", 1));
    assert!(
        failed
            .last_error
            .as_deref()
            .unwrap_or("")
            .contains("TopicAuthorizationFailed"),
        "{failed:?}"
    );
    // Its FLID stays paused; another FLID is tried on its own. librdkafka marks
    // the whole topic unauthorised until its next metadata refresh, so FLID
    // 43 may fail too — then with its own counted attempt, never waiting for 42.
    let c2 = insert_msg(&db, &clock, 42, 2).await;
    let d1 = insert_msg(&db, &clock, 43, 1).await;
    let s = pass_ok(&r, "dispatch-msg").await;
    let other = row(&db, d1).await;
    assert!(
        other.status == "SENT" || (other.status == "PENDING" && other.attempts == 1),
        "{other:?} {s:?}"
    );
    let paused = row(&db, c2).await;
    assert_eq!((paused.status.as_str(), paused.attempts), ("PENDING", 0));
    assert_eq!(paused.next_attempt_at, None);
    // Once librdkafka refreshed the topic's metadata, everything goes out.
    wait_until(
        "the topic to accept records again",
        Duration::from_secs(15),
        || async {
            clock.advance(chrono::Duration::minutes(2));
            pass_ok(&r, "dispatch-msg").await;
            statuses(&db).await.keys().all(|s| s == "SENT")
        },
    )
    .await;

    let records = consume(&kafka, MSG).await;
    let keys = by_key(&records);
    let a = event_ids(&keys["41"]);
    let mut dedup = a.clone();
    dedup.dedup();
    assert_eq!(dedup, vec![a1, a2, a3], "at least once, in order: {a:?}");
    assert_eq!(event_ids(&keys["42"]), vec![c1, c2]);
    assert_eq!(event_ids(&keys["43"]), vec![d1]);
}

#[tokio::test]
async fn schd_conflation_sends_only_the_last_version() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(1);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |_| {});
    for v in 1..=10 {
        upsert_schd(&db, 15, v, false).await;
    }
    // A late, older version is refused by the only-forward rule.
    upsert_schd(&db, 15, 7, false).await;
    upsert_schd(&db, 16, 1, false).await;

    let s = pass_ok(&r, "schd-flush").await;
    assert_eq!(s.items, 2, "{s:?}");
    assert_eq!(schd_row(&db, 15).await.status, "SENT");

    let records = consume(&kafka, SCHD).await;
    let keys = by_key(&records);
    let f15 = &keys["15"];
    assert_eq!(f15.len(), 1, "{f15:?}");
    assert_eq!(f15[0].header_i64("state-version"), Some(10));
    assert_eq!(
        f15[0].value.as_deref().map(str::as_bytes),
        schd_bytes(15, 10).as_deref()
    );
    assert_eq!(keys["16"].len(), 1);
}

#[tokio::test]
async fn schd_version_written_during_a_flush_is_not_marked_sent() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(1);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |_| {});
    upsert_schd(&db, 15, 1, false).await;
    let read = schd_row(&db, 15).await;

    // A processor writes version 2 while the flush runs: its transaction holds
    // the row, so the flush reads version 1 (MVCC) and sends it; its mark
    // skips the held row rather than waiting for it (issue 20: waiting
    // deadlocked with the pump under a burst), so version 1 is not marked
    // SENT, and after the commit the row is the new generation, PENDING.
    let mut processor = db.pool.begin().await.expect("tx");
    upsert_schd_in(&mut processor, 15, 2, false).await;
    let s = pass_ok(&r, "schd-flush").await;
    processor.commit().await.expect("commit");
    assert_eq!(detail(&s, "superseded"), 1, "{s:?}");
    assert_eq!(detail(&s, "sent"), 0, "{s:?}");
    let now = schd_row(&db, 15).await;
    assert_eq!((now.status.as_str(), now.state_version), ("PENDING", 2));
    assert_ne!(now.event_id, read.event_id, "a new generation");

    let s = pass_ok(&r, "schd-flush").await;
    assert_eq!(detail(&s, "sent"), 1, "{s:?}");
    assert_eq!(schd_row(&db, 15).await.status, "SENT");
    let records = consume(&kafka, SCHD).await;
    let versions: Vec<i64> = by_key(&records)["15"]
        .iter()
        .filter_map(|r| r.header_i64("state-version"))
        .collect();
    assert_eq!(versions, vec![1, 2]);
}

#[tokio::test]
async fn tombstone_after_fdel_is_a_null_value() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(1);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |_| {});
    upsert_schd(&db, 16, 1, false).await;
    assert_eq!(pass_ok(&r, "schd-flush").await.items, 1);
    // FDEL: the flight is DELETED at version 2; the projection is a tombstone.
    upsert_schd(&db, 16, 2, true).await;
    assert_eq!(pass_ok(&r, "schd-flush").await.items, 1);
    assert_eq!(schd_row(&db, 16).await.status, "SENT");

    let records = consume(&kafka, SCHD).await;
    let f16 = &by_key(&records)["16"];
    assert_eq!(f16.len(), 2);
    assert!(f16[0].value.is_some());
    assert_eq!(f16[1].value, None, "a tombstone has a null value");
    assert_eq!(
        f16[1].headers.get("event-type").map(String::as_str),
        Some("TOMBSTONE")
    );
    assert_eq!(f16[1].header_i64("state-version"), Some(2));
}

#[tokio::test]
async fn at_least_once_under_faults_and_versions_never_go_backwards() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(3);
    let (clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |c| {
        c.msgx.dispatch.batch = 7;
        c.msgx.schd.flush_limit = 3;
    });
    let flids = [51, 52, 53, 54, 55];
    let mut msg_ids = Vec::new();
    let mut version: BTreeMap<i64, i64> = BTreeMap::new();
    let mut write = async |clock: &ManualClock, rounds: usize, msg_ids: &mut Vec<i64>| {
        for _ in 0..rounds {
            for flid in flids {
                let v = version.entry(flid).or_insert(0);
                *v += 1;
                msg_ids.push(insert_msg(&db, clock, flid, *v).await);
                upsert_schd(&db, flid, *v, false).await;
            }
        }
    };

    // Phase 1: dropped connections and refused requests on Produce.
    write(&clock, 3, &mut msg_ids).await;
    kafka.request_errors(
        RDKafkaApiKey::Produce,
        &[
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__TRANSPORT,
            RDKafkaRespErr::RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__TRANSPORT,
            RDKafkaRespErr::RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__TRANSPORT,
        ],
    );
    pass_ok(&r, "dispatch-msg").await;
    pass_ok(&r, "schd-flush").await;

    // Phase 2: more writes, then the brokers go away for a whole run of each job.
    write(&clock, 2, &mut msg_ids).await;
    kafka.broker_down(-1).expect("down");
    let d = pass_ok(&r, "dispatch-msg").await;
    let f = pass_ok(&r, "schd-flush").await;
    assert!(
        detail(&d, "failed_in_doubt") > 0,
        "the outage was seen: {d:?}"
    );
    assert!(
        detail(&f, "failed_in_doubt") > 0,
        "the outage was seen: {f:?}"
    );
    write(&clock, 1, &mut msg_ids).await;
    kafka.broker_up(-1).expect("up");

    // Drain: every run after a backoff; bounded.
    let mut runs = 0;
    while statuses(&db).await.keys().any(|s| s != "SENT") {
        runs += 1;
        assert!(
            runs <= 10,
            "not drained after 10 rounds: {:?}",
            statuses(&db).await
        );
        clock.advance(chrono::Duration::minutes(1));
        pass_ok(&r, "dispatch-msg").await;
        pass_ok(&r, "schd-flush").await;
    }

    let msg = consume(&kafka, MSG).await;
    let seen: std::collections::BTreeSet<i64> = msg
        .iter()
        .filter_map(|r| r.header_i64("event-id"))
        .collect();
    for id in &msg_ids {
        assert!(seen.contains(id), "event {id} never delivered");
    }
    for (topic, records) in [(MSG, msg.clone()), (SCHD, consume(&kafka, SCHD).await)] {
        for (key, recs) in by_key(&records) {
            let versions: Vec<i64> = recs
                .iter()
                .filter_map(|r| r.header_i64("state-version"))
                .collect();
            assert!(
                versions.windows(2).all(|w| w[0] <= w[1]),
                "{topic} FLID {key} went backwards: {versions:?}"
            );
            let flid: i64 = key.parse().expect("numeric key");
            assert_eq!(
                versions.last(),
                version.get(&flid),
                "{topic} FLID {key} ends at its last version"
            );
        }
    }
}

#[tokio::test]
async fn a_fatal_producer_error_recreates_the_producer() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(1);
    let (clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |_| {});
    insert_msg(&db, &clock, 61, 1).await;
    assert_eq!(pass_ok(&r, "dispatch-msg").await.items, 1);

    let first = r.kafka.get(&r.config.msgx.kafka).expect("producer");
    let reason = std::ffi::CString::new("injected by the test").expect("c string");
    // SAFETY: a live producer handle and a NUL-terminated reason.
    unsafe {
        rdkafka::bindings::rd_kafka_test_fatal_error(
            first.inner().client().native_ptr(),
            RDKafkaRespErr::RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
            reason.as_ptr(),
        );
    }
    assert!(first.fatal_error().is_some());

    let e2 = insert_msg(&db, &clock, 61, 2).await;
    assert_eq!(pass_ok(&r, "dispatch-msg").await.items, 1);
    assert_eq!(row(&db, e2).await.status, "SENT");
    let second = r.kafka.get(&r.config.msgx.kafka).expect("producer");
    assert!(!std::sync::Arc::ptr_eq(&first, &second), "a new producer");
}

#[tokio::test]
async fn dry_run_reports_due_events_and_sends_nothing() {
    let db = TestDb::migrated().await;
    let (clock, shared) = manual_clock();
    // No broker at all: a dry run must not need one.
    let (r, _stop) = runner(&db, None, shared, |c| {
        c.msgx.kafka.brokers = "127.0.0.1:1".into()
    });
    for v in 1..=3 {
        insert_msg(&db, &clock, 71, v).await;
    }
    let s = r
        .run(
            "dispatch-msg",
            &RunOptions {
                dry_run: true,
                ..Default::default()
            },
            None,
        )
        .await
        .expect("runs");
    assert_eq!((s.items, detail(&s, "due")), (3, 3), "{s:?}");
    assert_eq!(statuses(&db).await, BTreeMap::from([("PENDING".into(), 3)]));
}

/// The recorder is process-wide: tests that read metric values take turns
/// (only matters when tests share a process, as under `cargo test`).
static METRICS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The end-to-end latency histograms and the skew counter, as a scrape shows them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Latency {
    end_to_end: (f64, f64),
    mailbox: (f64, f64),
    skew_msgx: f64,
    skew_external: f64,
}

impl Latency {
    fn scrape() -> Latency {
        let page = msgx::prometheus::install().expect("recorder").render();
        let v =
            |name: &str, labels: &[(&str, &str)]| metric_value(&page, name, labels).unwrap_or(0.0);
        let ext = [("clock", "external")];
        Latency {
            end_to_end: (
                v("msgx_pipeline_end_to_end_seconds_count", &[]),
                v("msgx_pipeline_end_to_end_seconds_sum", &[]),
            ),
            mailbox: (
                v("msgx_pipeline_mailbox_to_kafka_seconds_count", &ext),
                v("msgx_pipeline_mailbox_to_kafka_seconds_sum", &ext),
            ),
            skew_msgx: v(
                "msgx_pipeline_latency_clock_skew_total",
                &[("clock", "msgx")],
            ),
            skew_external: v("msgx_pipeline_latency_clock_skew_total", &ext),
        }
    }

    /// What happened since `before`.
    fn since(self, before: Latency) -> Latency {
        let d = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0, a.1 - b.1);
        Latency {
            end_to_end: d(self.end_to_end, before.end_to_end),
            mailbox: d(self.mailbox, before.mailbox),
            skew_msgx: self.skew_msgx - before.skew_msgx,
            skew_external: self.skew_external - before.skew_external,
        }
    }
}

/// Issue 20, item 3: per KAFKA:msg event, once, when it is marked SENT:
/// ENQUEUED_AT → SENT_AT on the injected clock (not the event's commit, not
/// a failed attempt), and the mailbox's RECEIVED_AT (airport local time)
/// → SENT_AT with a clock ahead of msgx's counted as skew and recorded as 0.
#[tokio::test]
async fn end_to_end_latency_is_one_observation_per_sent_event_from_enqueue_and_from_the_mailbox() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let kafka = mock_kafka(1);
    let (clock, shared) = manual_clock();
    let bootstrap = kafka.bootstrap_servers();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| fast_kafka(c, &bootstrap));
    let t0 = clock.now();
    // Message A (two flights, two events) received 10 s before the enqueue;
    // message B (one event) stamped an hour ahead: the AODB's clock is fast.
    let a = mb
        .insert(&common::sis::schd(
            1,
            "DNLD",
            &[(9001, "01DEC260835"), (9002, "01DEC260900")],
        ))
        .await;
    let b = mb
        .insert(&common::sis::flop(
            2,
            9001,
            "APPT",
            "<APPT>01DEC260830</APPT>",
        ))
        .await;
    let tz = r.config.msgx.airport.tz();
    for (id, at) in [
        (a, t0 - chrono::Duration::seconds(10)),
        (b, t0 + chrono::Duration::hours(1)),
    ] {
        let local = at.with_timezone(&tz).format("%Y-%m-%d %H:%M:%S");
        mb.exec(&format!(
            "UPDATE {} SET CMINMSGS_DATE_RECEIVED = '{local}' WHERE CMINMSGS_ID = {id}",
            mb.inbox
        ))
        .await;
    }
    let _turn = METRICS.lock().await;
    let start = Latency::scrape();

    pass_ok(&r, "ingest-sweep").await; // ENQUEUED_AT = t0
    clock.advance(chrono::Duration::seconds(2));
    pass_ok(&r, "pump-drain").await; // the events' commit: t0 + 2 s
    let events: i64 =
        sqlx::query_scalar("SELECT count(*) FROM msg_event WHERE target = 'KAFKA:msg'")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(events, 3, "two SCHD flights and one FLOP");

    // A failed attempt is no observation.
    kafka.broker_down(-1).expect("broker down");
    clock.advance(chrono::Duration::seconds(1));
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!((s.items, detail(&s, "failed_in_doubt")), (0, 2), "{s:?}");
    assert_eq!(Latency::scrape().since(start).end_to_end, (0.0, 0.0));

    // The retry that succeeds measures from the enqueue: 123 s per event.
    kafka.broker_up(-1).expect("broker up");
    clock.advance(chrono::Duration::minutes(2));
    let s = run_ok(&r, "dispatch-msg").await;
    assert_eq!(s.items, 3, "{s:?}");
    let sent_at: Vec<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT DISTINCT sent_at FROM msg_event WHERE target = 'KAFKA:msg'")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(sent_at, vec![t0 + chrono::Duration::seconds(123)]);
    let got = Latency::scrape().since(start);
    assert_eq!(
        got,
        Latency {
            end_to_end: (3.0, 3.0 * 123.0),
            // A: 133 s for each of its two events; B: skewed, recorded as 0.
            mailbox: (3.0, 2.0 * 133.0),
            skew_msgx: 0.0,
            skew_external: 1.0,
        }
    );

    // Nothing is counted twice: later runs find nothing to mark.
    clock.advance(chrono::Duration::minutes(1));
    assert_eq!(pass_ok(&r, "dispatch-msg").await.items, 0);
    assert_eq!(Latency::scrape().since(start), got);
}

/// Issue 17, item 2: head A1 turns DEAD in round 1 with A2 in the same
/// batch; round 2 must not send A3 while A2 still waits. (Before the fix the
/// next round read after A2 and sent A3 first: FLID 100 went A3, A2.)
#[tokio::test]
async fn a_dead_head_does_not_let_a_later_round_overtake_its_follower() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(1);
    let (clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |c| {
        refuse_large_records(c);
        c.msgx.dispatch.max_attempts = 1;
        c.msgx.dispatch.retry_backoff = Vec::new();
        c.msgx.dispatch.batch = 2;
    });
    let a1 = insert_msg_payload(&db, &clock, 100, 1, vec![b'x'; 20_000]).await;
    let a2 = insert_msg(&db, &clock, 100, 2).await;
    let a3 = insert_msg(&db, &clock, 100, 3).await;

    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!((detail(&s, "dead"), detail(&s, "paused")), (1, 1), "{s:?}");
    let dead = row(&db, a1).await;
    assert_eq!(dead.status, "DEAD");
    assert!(
        dead.last_error
            .as_deref()
            .is_some_and(|e| e.starts_with("MESSAGE_SPECIFIC: ")),
        "{dead:?}"
    );
    for id in [a2, a3] {
        assert_eq!(row(&db, id).await.status, "SENT", "event {id}: {s:?}");
    }
    assert_eq!(s.items, 2, "both followers in the same run: {s:?}");
    let records = consume(&kafka, MSG).await;
    assert_eq!(event_ids(&by_key(&records)["100"]), vec![a2, a3]);
}

/// Issue 17, item 3: a record that is always in doubt is re-sent until
/// `in-doubt-deadline` after its first failure (never DEAD by its count),
/// then DEAD with class IN_DOUBT: in the DLQ listing, in the outbox gauge
/// behind the DEAD alert, and resendable.
#[tokio::test]
async fn in_doubt_failures_end_dead_in_doubt_at_their_deadline_and_can_be_resent() {
    let db = TestDb::migrated().await;
    let kafka = mock_kafka(1);
    let (clock, shared) = manual_clock();
    let (r, _stop) = kafka_runner(&db, &kafka, shared, |c| {
        c.msgx.dispatch.max_attempts = 2;
        c.msgx.dispatch.retry_backoff = vec!["10s".parse().expect("duration")];
        c.msgx.dispatch.transient_deadline = "10m".parse().expect("duration");
        c.msgx.dispatch.in_doubt_deadline = "30m".parse().expect("duration");
    });
    let e1 = insert_msg(&db, &clock, 300, 1).await;
    let e2 = insert_msg(&db, &clock, 300, 2).await;
    // NETWORK_EXCEPTION: a permanent error for librdkafka that msgx cannot
    // rule out as persisted (in doubt); it surfaces at once.
    let in_doubt = || {
        kafka.request_errors(
            RDKafkaApiKey::Produce,
            &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION],
        )
    };

    in_doubt();
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(detail(&s, "failed_in_doubt"), 1, "{s:?}");
    let head = row(&db, e1).await;
    assert_eq!((head.status.as_str(), head.attempts), ("PENDING", 0));
    assert_eq!(error_class(&db, e1).await.as_deref(), Some("IN_DOUBT"));
    assert!(
        head.last_error
            .as_deref()
            .is_some_and(|e| e.starts_with("IN_DOUBT: ")),
        "{head:?}"
    );

    // Past the transient deadline it counts — beyond max-attempts (2) — but
    // stays PENDING until its own deadline.
    for minutes in [15, 10] {
        clock.advance(chrono::Duration::minutes(minutes));
        in_doubt();
        let s = pass_ok(&r, "dispatch-msg").await;
        assert_eq!(detail(&s, "failed_in_doubt"), 1, "{s:?}");
        assert_eq!(detail(&s, "dead"), 0, "{s:?}");
    }
    let head = row(&db, e1).await;
    assert_eq!((head.status.as_str(), head.attempts), ("PENDING", 2));
    assert_eq!(row(&db, e2).await.status, "PENDING", "its FLID waits");

    // 30 min after the first failure: DEAD(IN_DOUBT), and its FLID goes on.
    clock.advance(chrono::Duration::minutes(6));
    in_doubt();
    let s = pass_ok(&r, "dispatch-msg").await;
    assert_eq!(detail(&s, "dead"), 1, "{s:?}");
    let head = row(&db, e1).await;
    assert_eq!((head.status.as_str(), head.next_attempt_at), ("DEAD", None));
    assert_eq!(error_class(&db, e1).await.as_deref(), Some("IN_DOUBT"));
    pass_ok(&r, "dispatch-msg").await;
    assert_eq!(row(&db, e2).await.status, "SENT");

    let cfg = db.config_file();
    let out = msgx(cfg.path(), &["events", "dead", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["event_id"], e1);
    assert_eq!(listed[0]["error_class"], "IN_DOUBT");
    let out = msgx(cfg.path(), &["events", "dead"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" IN_DOUBT "),
        "{}",
        text(&out)
    );
    let facts = msgx::status::pg_facts(&db.pool, clock.now(), &r.config)
        .await
        .expect("facts");
    assert_eq!(
        facts.outbox["KAFKA:msg"].get("DEAD"),
        Some(&1),
        "msgx_outbox_events{{status=\"DEAD\"}} counts it: {:?}",
        facts.outbox
    );

    let out = msgx(
        cfg.path(),
        &[
            "events",
            "resend",
            &e1.to_string(),
            "--reason",
            "broker fixed",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(
        error_class(&db, e1).await,
        None,
        "a resend clears the class"
    );
    pass_ok(&r, "dispatch-msg").await;
    assert_eq!(row(&db, e1).await.status, "SENT");
    let records = consume(&kafka, MSG).await;
    // Resending restores delivery, not the order (docs/delivery.md).
    assert_eq!(event_ids(&by_key(&records)["300"]), vec![e2, e1]);
}

async fn error_class(db: &TestDb, event_id: i64) -> Option<String> {
    sqlx::query_scalar("SELECT error_class FROM msg_event WHERE event_id = $1")
        .bind(event_id)
        .fetch_one(&db.pool)
        .await
        .expect("error class")
}

/// EVENT_TYPE and PAYLOAD of a row.
async fn stored_value(db: &TestDb, event_id: i64) -> (String, Option<Vec<u8>>) {
    sqlx::query_as("SELECT event_type, payload FROM msg_event WHERE event_id = $1")
        .bind(event_id)
        .fetch_one(&db.pool)
        .await
        .expect("stored value")
}

/// Issue 17 item 6: the processors' only-forward KAFKA:schd upsert (§8.2),
/// through `msg_event::append` / `append_many` in a transaction: one row per
/// FLID; a lower version never replaces a higher one; an equal or higher one
/// does, with a fresh EVENT_ID (the write generation), reset to PENDING with
/// its failure record cleared.
#[tokio::test]
async fn schd_upsert_through_append_is_only_forward_and_starts_a_fresh_generation() {
    let db = TestDb::migrated().await;
    upsert_schd(&db, 21, 5, false).await;
    let v5 = schd_row(&db, 21).await;
    assert_eq!((v5.state_version, v5.status.as_str()), (5, "PENDING"));

    // Lower: refused, the row is untouched (same generation, same value).
    upsert_schd(&db, 21, 4, true).await;
    let now = schd_row(&db, 21).await;
    assert_eq!((now.event_id, now.state_version), (v5.event_id, 5));
    assert_eq!(
        stored_value(&db, v5.event_id).await,
        ("UPSERT".into(), schd_bytes(21, 5))
    );

    // Equal and higher: replace, fresh generation, PENDING, failure cleared.
    let mut previous = v5.event_id;
    for (version, deleted) in [(5, false), (6, true)] {
        sqlx::query(
            "UPDATE msg_event SET status = 'DEAD', attempts = 3, first_failure_at = now(), \
                    last_error = 'MESSAGE_SPECIFIC: x', error_class = 'MESSAGE_SPECIFIC' \
             WHERE target = 'KAFKA:schd' AND partition_key = '21'",
        )
        .execute(&db.pool)
        .await
        .expect("fail the row");
        upsert_schd(&db, 21, version, deleted).await;
        let now = schd_row(&db, 21).await;
        assert!(now.event_id > previous, "a fresh EVENT_ID: {now:?}");
        assert_eq!(now.state_version, version);
        assert_eq!(
            (now.status.as_str(), now.attempts, now.last_error.as_deref()),
            ("PENDING", 0, None)
        );
        assert_eq!((now.first_failure_at, now.sent_at), (None, None));
        assert_eq!(error_class(&db, now.event_id).await, None);
        previous = now.event_id;
    }
    assert_eq!(
        stored_value(&db, previous).await,
        ("TOMBSTONE".into(), None)
    );

    // The group commit's append_many: several messages writing one FLID in
    // one statement leave the row one-by-one processing would (the last with
    // the highest version), and never go back below the stored one.
    let (e7, e9, e8) = (
        [schd_event(21, 7, false)],
        [schd_event(21, 9, false)],
        [schd_event(21, 8, false)],
    );
    let batch: [(Option<i64>, &[DomainEvent]); 3] =
        [(Some(7), &e7), (Some(9), &e9), (Some(8), &e8)];
    let mut tx = db.pool.begin().await.expect("tx");
    msg_event::append_many(&mut tx, &batch, clock_now())
        .await
        .expect("append_many");
    let stale = [schd_event(21, 3, false)];
    msg_event::append_many(&mut tx, &[(Some(3), &stale[..])], clock_now())
        .await
        .expect("append_many");
    tx.commit().await.expect("commit");
    let now = schd_row(&db, 21).await;
    assert_eq!((now.state_version, now.status.as_str()), (9, "PENDING"));
    assert!(now.event_id > previous);
    let rows: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM msg_event WHERE target = 'KAFKA:schd' AND partition_key = '21'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("count");
    assert_eq!(rows, 1, "one row per FLID");
}

// ------------------------------------------- per-FLID order, property test --

/// One fault on the mock cluster's Produce error stack: the next Produce
/// request fails with it. Each code is reported to msgx at once (librdkafka
/// treats it as permanent), so a case needs no real waiting.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// THROTTLING_QUOTA_EXCEEDED: certainly not written.
    Transient,
    /// NETWORK_EXCEPTION: possibly written.
    InDoubt,
    /// INVALID_RECORD: the broker refused this record.
    MessageSpecific,
    /// OUT_OF_ORDER_SEQUENCE_NUMBER on the head request: the idempotent
    /// producer's fatal sequence desynchronisation; the run stops and the
    /// next one recreates the producer.
    Fatal,
}

impl Fault {
    fn code(self) -> RDKafkaRespErr {
        match self {
            Fault::Transient => RDKafkaRespErr::RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED,
            Fault::InDoubt => RDKafkaRespErr::RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION,
            Fault::MessageSpecific => RDKafkaRespErr::RD_KAFKA_RESP_ERR_INVALID_RECORD,
            Fault::Fatal => RDKafkaRespErr::RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
        }
    }
}

/// One run of `dispatch-msg`: events committed before it (FLID indexes),
/// the faults it meets, and how far the clock moves first.
#[derive(Debug, Clone)]
struct Step {
    commits: Vec<usize>,
    faults: Vec<Fault>,
    advance_minutes: i64,
}

#[derive(Debug, Clone)]
struct Plan {
    /// Which runner: 0 = max-attempts 1 (a message-specific failure is DEAD
    /// at once), 1 = max-attempts 2 (it backs off first).
    runner: usize,
    initial: Vec<usize>,
    steps: Vec<Step>,
}

fn plans() -> impl proptest::strategy::Strategy<Value = Plan> {
    use proptest::collection::vec;
    use proptest::prelude::*;
    let fault = prop_oneof![
        3 => Just(Fault::Transient),
        3 => Just(Fault::InDoubt),
        3 => Just(Fault::MessageSpecific),
        1 => Just(Fault::Fatal),
    ];
    // 1 min passes the 10 s backoff; 25 and 45 min pass the transient (20 m)
    // and in-doubt (40 m) deadlines of the runner below.
    let advance = prop_oneof![Just(0i64), Just(1), Just(12), Just(25), Just(45)];
    let step = (vec(0..3usize, 0..5), vec(fault, 0..8), advance).prop_map(
        |(commits, faults, advance_minutes)| Step {
            commits,
            faults,
            advance_minutes,
        },
    );
    (0..2usize, vec(0..3usize, 4..12), vec(step, 2..5)).prop_map(|(runner, initial, steps)| Plan {
        runner,
        initial,
        steps,
    })
}

/// What the property cases share: one database, one mock cluster, runners
/// sharing one producer (cases use FLIDs of their own).
struct OrderBench {
    db: TestDb,
    kafka: MockCluster<'static, DefaultProducerContext>,
    clock: ManualClock,
    /// max-attempts 1 and 2.
    runners: Vec<JobRunner>,
    _stops: Vec<tokio::sync::watch::Sender<bool>>,
    cases: std::sync::atomic::AtomicI64,
}

/// SENT KAFKA:msg rows of `flids` that have an earlier PENDING row of their
/// FLID: a later event went out while an earlier one still waited.
async fn overtaking(db: &TestDb, flids: &[String]) -> Vec<(String, i64, i64)> {
    sqlx::query_as(
        "SELECT s.partition_key, p.event_id, s.event_id FROM msg_event s \
         JOIN msg_event p ON p.partition_key = s.partition_key AND p.event_id < s.event_id \
         WHERE s.target = 'KAFKA:msg' AND p.target = 'KAFKA:msg' \
           AND s.status = 'SENT' AND p.status = 'PENDING' AND s.partition_key = ANY($1)",
    )
    .bind(flids)
    .fetch_all(&db.pool)
    .await
    .expect("overtaking rows")
}

/// Runs `plan`, then runs without faults until nothing is PENDING, and checks
/// per-FLID order after every run in the outbox (no SENT row behind a PENDING
/// one of its FLID: a failed earlier event is DEAD or still waits, never
/// overtaken) and at the end on the topic (each FLID's EVENT_IDs never go
/// down; every SENT row is there). The mock cluster persists nothing for a
/// failed request, so an in-doubt record is never a hidden copy here.
async fn order_case(
    bench: &OrderBench,
    plan: Plan,
) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::prop_assert;
    let case = bench
        .cases
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let flid = |i: usize| 1_000 * (case + 1) + i as i64;
    let flids: Vec<String> = (0..3).map(|i| flid(i).to_string()).collect();
    let mut versions = [0i64; 3];
    let mut events: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut commit = async |ids: &[usize], events: &mut BTreeMap<String, Vec<i64>>| {
        for &i in ids {
            versions[i] += 1;
            let id = insert_msg(&bench.db, &bench.clock, flid(i), versions[i]).await;
            events.entry(flid(i).to_string()).or_default().push(id);
        }
    };
    let kafka = &bench.kafka;
    kafka.clear_request_errors(RDKafkaApiKey::Produce);
    commit(&plan.initial, &mut events).await;
    let drain = (0..12).map(|_| Step {
        commits: Vec::new(),
        faults: Vec::new(),
        advance_minutes: 1,
    });
    for (n, step) in plan.steps.iter().cloned().chain(drain).enumerate() {
        commit(&step.commits, &mut events).await;
        kafka.clear_request_errors(RDKafkaApiKey::Produce);
        let codes: Vec<RDKafkaRespErr> = step.faults.iter().map(|f| f.code()).collect();
        kafka.request_errors(RDKafkaApiKey::Produce, &codes);
        bench
            .clock
            .advance(chrono::Duration::minutes(step.advance_minutes));
        let s = pass_ok(&bench.runners[plan.runner], "dispatch-msg").await;
        let bad = overtaking(&bench.db, &flids).await;
        prop_assert!(
            bad.is_empty(),
            "run {n}: sent while an earlier event of its FLID was PENDING (flid, pending, sent): {bad:?}; {s:?}"
        );
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM msg_event WHERE status = 'PENDING' AND partition_key = ANY($1)",
        )
        .bind(&flids)
        .fetch_one(&bench.db.pool)
        .await
        .expect("pending");
        if n >= plan.steps.len() && open == 0 {
            break;
        }
    }
    let sent: Vec<(String, i64)> = sqlx::query_as(
        "SELECT partition_key, event_id FROM msg_event \
         WHERE partition_key = ANY($1) AND status <> 'DEAD' ORDER BY event_id",
    )
    .bind(&flids)
    .fetch_all(&bench.db.pool)
    .await
    .expect("statuses");
    let still: Vec<i64> = sqlx::query_scalar(
        "SELECT event_id FROM msg_event WHERE status = 'PENDING' AND partition_key = ANY($1)",
    )
    .bind(&flids)
    .fetch_all(&bench.db.pool)
    .await
    .expect("pending");
    prop_assert!(still.is_empty(), "not drained: {still:?}");

    let records = consume(kafka, MSG).await;
    let keys = by_key(&records);
    for f in &flids {
        let on_topic = keys.get(f).map(|r| event_ids(r)).unwrap_or_default();
        prop_assert!(
            on_topic.windows(2).all(|w| w[0] <= w[1]),
            "FLID {f}: the topic has a later event before an earlier one: {on_topic:?} (events {:?})",
            events.get(f)
        );
        let known = events.get(f).cloned().unwrap_or_default();
        prop_assert!(
            on_topic.iter().all(|id| known.contains(id)),
            "FLID {f}: {on_topic:?}"
        );
        for (_, id) in sent.iter().filter(|(k, _)| k == f) {
            prop_assert!(
                on_topic.contains(id),
                "FLID {f}: SENT event {id} not on the topic"
            );
        }
    }
    Ok(())
}

/// Issue 17, item 2: whatever happens to a head (SENT, backing off, DEAD,
/// in doubt, a fatal producer error), no event of a FLID goes out while an
/// earlier one of it is PENDING — within a run, across rounds (batch 3) and
/// across runs — and the topic holds each FLID's events in order
/// (at-least-once duplicates allowed).
#[test]
fn per_flid_order_holds_under_random_faults_rounds_and_runs() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let bench = rt.block_on(async {
        let db = TestDb::migrated().await;
        let kafka = mock_kafka(1);
        let (clock, shared) = manual_clock();
        let (mut runners, mut stops): (Vec<JobRunner>, _) = (Vec::new(), Vec::new());
        for max_attempts in [1, 2] {
            let (mut runner, stop) = kafka_runner(&db, &kafka, shared.clone(), |c| {
                c.msgx.dispatch.batch = 3;
                c.msgx.dispatch.max_attempts = max_attempts;
                c.msgx.dispatch.retry_backoff =
                    vec!["10s".parse().expect("duration"); max_attempts as usize - 1];
                c.msgx.dispatch.transient_deadline = "20m".parse().expect("duration");
                c.msgx.dispatch.in_doubt_deadline = "40m".parse().expect("duration");
            });
            // One producer for both, as the jobs of one process share it.
            if let Some(first) = runners.first() {
                runner.kafka = first.kafka.clone();
            }
            runners.push(runner);
            stops.push(stop);
        }
        OrderBench {
            db,
            kafka,
            clock,
            runners,
            _stops: stops,
            cases: Default::default(),
        }
    });
    let mut cases = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 12,
        max_shrink_iters: 24,
        failure_persistence: None,
        ..Default::default()
    });
    let result = cases.run(&plans(), |plan| rt.block_on(order_case(&bench, plan)));
    if let Err(e) = result {
        panic!("{e}");
    }
}

// ------------------------------------------------------------ the binary --

/// A DEAD KAFKA:msg row as a failed dispatch leaves it.
async fn insert_dead(db: &TestDb, flid: i64, version: i64) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO msg_event (target, partition_key, event_type, state_version, payload, status, \
                                attempts, first_failure_at, last_error, created_at) \
         VALUES ('KAFKA:msg', $1, 'UPSERT', $2, $3, 'DEAD', 10, now(), \
                 'MessageSpecific: MessageSizeTooLarge', now()) RETURNING event_id",
    )
    .bind(flid.to_string())
    .bind(version)
    .bind(notification_bytes(flid, version))
    .fetch_one(&db.pool)
    .await
    .expect("insert dead event")
}

#[derive(Debug, sqlx::FromRow)]
struct Action {
    actor: String,
    action: String,
    target: String,
    reason: Option<String>,
    detail: serde_json::Value,
}

async fn actions(db: &TestDb) -> Vec<Action> {
    sqlx::query_as("SELECT actor, action, target, reason, detail FROM operator_action ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .expect("operator actions")
}

#[tokio::test]
async fn events_commands_list_resend_and_discard_dead_rows_and_record_them() {
    let db = TestDb::migrated().await;
    let (clock, _) = manual_clock();
    let a = insert_dead(&db, 81, 1).await;
    let b = insert_dead(&db, 82, 1).await;
    let c = insert_dead(&db, 83, 1).await;
    let pending = insert_msg(&db, &clock, 84, 1).await;
    let cfg = db.config_file();

    let out = msgx(cfg.path(), &["events", "dead", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    let ids: Vec<i64> = listed
        .iter()
        .filter_map(|e| e["event_id"].as_i64())
        .collect();
    assert_eq!(ids, vec![a, b, c]);
    assert_eq!(
        listed[0]["last_error"],
        "MessageSpecific: MessageSizeTooLarge"
    );
    assert_eq!(listed[0]["payload_bytes"], notification_bytes(81, 1).len());

    let out = msgx(
        cfg.path(),
        &[
            "events",
            "resend",
            &a.to_string(),
            "--reason",
            "limit raised",
            "--actor",
            "alice",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let resent = row(&db, a).await;
    assert_eq!((resent.status.as_str(), resent.attempts), ("PENDING", 0));
    assert_eq!((resent.last_error, resent.next_attempt_at), (None, None));

    let out = msgx(cfg.path(), &["events", "discard", &b.to_string()]);
    assert_eq!(code(&out), 2, "--reason is required: {}", text(&out));
    let out = msgx(
        cfg.path(),
        &[
            "events",
            "discard",
            &b.to_string(),
            "--reason",
            "superseded by v2",
            "--actor",
            "bob",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let gone: i64 = sqlx::query_scalar("SELECT count(*) FROM msg_event WHERE event_id = $1")
        .bind(b)
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(gone, 0);

    // Not DEAD: refused, nothing changed, nothing recorded.
    let out = msgx(cfg.path(), &["events", "resend", &pending.to_string()]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(text(&out).contains("not a DEAD event"), "{}", text(&out));

    let recorded = actions(&db).await;
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    assert_eq!(
        (
            recorded[0].actor.as_str(),
            recorded[0].action.as_str(),
            recorded[0].reason.as_deref()
        ),
        ("alice", "EVENT_RESEND", Some("limit raised"))
    );
    assert_eq!(recorded[0].target, format!("msg_event:{a}"));
    assert_eq!(
        (
            recorded[1].actor.as_str(),
            recorded[1].action.as_str(),
            recorded[1].reason.as_deref()
        ),
        ("bob", "EVENT_DISCARD", Some("superseded by v2"))
    );
    assert_eq!(recorded[1].detail["partition_key"], "82");
    assert_eq!(
        recorded[1].detail["payload"].as_str().map(str::as_bytes),
        Some(&notification_bytes(82, 1)[..]),
        "a discarded row keeps its payload in the record"
    );

    let out = msgx(cfg.path(), &["events", "dead"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    let first_column: Vec<String> = shown
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    assert_eq!(first_column, vec![c.to_string()], "{shown}");
}

/// `msgx dev-kafka`, stopped with SIGTERM when dropped if still running.
struct DevKafka {
    child: std::process::Child,
    bootstrap: String,
}

impl DevKafka {
    fn start() -> DevKafka {
        use std::io::BufRead;
        let mut child = std::process::Command::new(msgx_bin())
            .args(["dev-kafka", "--brokers", "1"])
            .env_remove("MSGX_CONFIG")
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start dev-kafka");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("bootstrap line");
        let bootstrap = line
            .trim()
            .strip_prefix("bootstrap=")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        DevKafka { child, bootstrap }
    }

    fn signal(&self, sig: &str) {
        let ok = std::process::Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill {sig}");
    }
}

impl Drop for DevKafka {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.signal("-TERM");
            let _ = self.child.wait();
        }
    }
}

#[tokio::test]
async fn dev_kafka_serves_dispatch_and_tail_and_obeys_signals() {
    let db = TestDb::migrated().await;
    let (clock, _) = manual_clock();
    let kafka = DevKafka::start();
    let cfg = db.config_file_with(|c| {
        fast_kafka(c, &kafka.bootstrap);
        c.msgx.dispatch.retry_backoff = vec!["100ms".parse().expect("duration"); 9];
    });
    let e1 = insert_msg(&db, &clock, 91, 1).await;
    let e2 = insert_msg(&db, &clock, 91, 2).await;
    upsert_schd(&db, 91, 2, true).await;

    for job in ["dispatch-msg", "schd-flush"] {
        let out = msgx(cfg.path(), &["run", job]);
        assert_eq!(code(&out), 0, "{}", text(&out));
    }
    assert_eq!(statuses(&db).await, BTreeMap::from([("SENT".into(), 3)]));

    let out = msgx(
        cfg.path(),
        &["tail", "msg", "--from-beginning", "--max", "2", "--json"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let records: Vec<TailRecord> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON line"))
        .map(|v| TailRecord {
            topic: v["topic"].as_str().unwrap_or_default().into(),
            partition: v["partition"].as_i64().unwrap_or(-1) as i32,
            offset: v["offset"].as_i64().unwrap_or(-1),
            key: v["key"].as_str().map(String::from),
            headers: serde_json::from_value(v["headers"].clone()).expect("headers"),
            value: v["value"].as_str().map(String::from),
        })
        .collect();
    assert_eq!(event_ids(&records.iter().collect::<Vec<_>>()), vec![e1, e2]);
    let out = msgx(cfg.path(), &["tail", "schd", "--from-beginning"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("key=91")
            && shown.contains("event-type=TOMBSTONE")
            && shown.contains("value=null"),
        "{shown}"
    );

    // SIGUSR1: every broker down — the record times out and stays PENDING.
    kafka.signal("-USR1");
    let e3 = insert_msg(&db, &clock, 91, 3).await;
    let out = msgx(cfg.path(), &["run", "dispatch-msg", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(summary["details"]["failed_in_doubt"], 1, "{summary}");
    assert_eq!(row(&db, e3).await.status, "PENDING");

    // SIGUSR2: back up — the next runs deliver it (after the first backoff tier).
    kafka.signal("-USR2");
    wait_until(
        "delivery after SIGUSR2",
        Duration::from_secs(20),
        || async {
            msgx(cfg.path(), &["run", "dispatch-msg"]);
            row(&db, e3).await.status == "SENT"
        },
    )
    .await;

    let mut kafka = kafka;
    kafka.signal("-TERM");
    let status = kafka.child.wait().expect("dev-kafka exits");
    assert_eq!(status.code(), Some(0));
}

/// Issue 20 (burst catch-up): the pump's KAFKA:schd upsert and the schd
/// SENT mark deadlocked under a 1,000 msg/s burst (each took the rows in its
/// own order; PostgreSQL aborted one after `deadlock_timeout`, a pump group
/// rolled back). The mark now skips a row a pump transaction holds instead
/// of waiting for it: it returns at once with the other rows marked, and the
/// held row, replaced by the newer version, stays PENDING. Times out on the
/// old statement (it waited for the pump's commit).
#[tokio::test]
async fn the_schd_sent_mark_never_waits_for_a_pump_transaction() {
    use msgx::domain::events::EventTarget;
    let db = TestDb::migrated().await;
    upsert_schd(&db, 10, 1, false).await;
    upsert_schd(&db, 20, 1, false).await;
    let (r10, r20) = (schd_row(&db, 10).await, schd_row(&db, 20).await);
    // A pump transaction replacing key 10 with version 2, not committed yet.
    let mut pump = db.pool.begin().await.expect("tx");
    upsert_schd_in(&mut pump, 10, 2, false).await;
    let mut tx = db.pool.begin().await.expect("tx");
    let sent = [
        (r20.event_id, r20.state_version),
        (r10.event_id, r10.state_version),
    ];
    let marked = tokio::time::timeout(
        Duration::from_secs(5),
        msg_event::mark_latest_sent(&mut tx, EventTarget::KafkaSchd, &sent, clock_now()),
    )
    .await
    .expect("the mark does not wait for the pump's transaction")
    .expect("mark");
    assert_eq!(marked, vec![r20.event_id], "the held row is skipped");
    tx.commit().await.expect("commit");
    pump.commit().await.expect("the pump commits");
    let (now10, now20) = (schd_row(&db, 10).await, schd_row(&db, 20).await);
    assert_eq!((now10.status.as_str(), now10.state_version), ("PENDING", 2));
    assert_eq!(now20.status, "SENT");
}

/// Issue 38 item 5: dispatch-msg's read of its due rows walks only PENDING
/// rows, however many were sent before. It walked the primary key and
/// filtered every SENT row (3–5 ms a run at 4,000 rows, a third of a
/// message's time from the pump's commit to its ack) until migration 0029
/// gave it an index of exactly its rows. Statistics as a delivered feed
/// leaves them: taken while the rows were PENDING.
#[tokio::test]
async fn the_dispatch_read_walks_only_pending_rows_however_many_were_sent() {
    let db = TestDb::migrated().await;
    sqlx::raw_sql(
        "INSERT INTO msg_event (target, partition_key, event_type, state_version, msg_id, payload, created_at) \
         SELECT 'KAFKA:msg', (i % 500)::text, 'UPSERT', i, i, '\\x7b7d', now() \
         FROM generate_series(1, 4000) i; \
         ANALYZE msg_event; \
         UPDATE msg_event SET status = 'SENT', sent_at = now()",
    )
    .execute(&db.pool)
    .await
    .expect("sent rows");
    // msgx's own session settings.
    let pool = msgx::store::pg::connect(&db.config().msgx.postgres)
        .await
        .expect("pool");
    let plan: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {}",
        msg_event::DUE_MSG_SQL
    )))
    .bind(chrono::Utc::now())
    .bind(500_i64)
    .bind(0_i64)
    .fetch_all(&pool)
    .await
    .expect("plan");
    let plan = plan.join("\n");
    assert!(plan.contains("msg_event_dispatch_idx"), "{plan}");
    assert!(!plan.contains("Rows Removed by Filter"), "{plan}");
}
