//! W3C trace context through the pipeline (issue 21 item 5): a trace per
//! message at ingest, stored in PostgreSQL, carried as the `traceparent`
//! header of the message's `msg` and `schd` records (the same on a
//! redelivery by a new process), and the `trace_id` of the message's log
//! lines. Real MariaDB mailbox, PostgreSQL and librdkafka's mock cluster.

use crate::common;

use common::jobs::{detail, pass_ok, run_ok};
use common::*;
use msgx::commands::tail::TailRecord;
use msgx::telemetry::trace_context::TraceParent;
use std::collections::BTreeMap;

/// The trace context PROC_STATE stored for each message.
async fn stored_traces(db: &TestDb) -> BTreeMap<i64, Option<String>> {
    sqlx::query_as::<_, (i64, Option<String>)>(
        "SELECT msg_id, traceparent FROM proc_state ORDER BY msg_id",
    )
    .fetch_all(&db.pool)
    .await
    .expect("proc_state")
    .into_iter()
    .collect()
}

/// The trace-id of a record's `traceparent` header (`None` without one);
/// panics when the header is not valid W3C Trace Context.
fn header_trace(r: &TailRecord) -> Option<[u8; 16]> {
    r.headers.get("traceparent").map(|t| {
        TraceParent::parse(t)
            .unwrap_or_else(|e| panic!("{t:?}: {e}"))
            .trace_id()
    })
}

/// The message a record is about: `msg_id` of a notification, `last_msg_id`
/// of a projection.
fn msg_of(r: &TailRecord) -> i64 {
    let v: serde_json::Value =
        serde_json::from_str(r.value.as_deref().expect("a value")).expect("JSON");
    v["msg_id"]
        .as_i64()
        .or(v["last_msg_id"].as_i64())
        .expect("msg_id or last_msg_id")
}

/// A GTDT group of one gate.
fn gate(g: &str) -> String {
    format!(
        "<GTDT GTNO=\"1\"><GATE>{g}</GATE><PGOT>01DEC260800</PGOT><PGCT>01DEC260820</PGCT></GTDT>"
    )
}

/// (message, key, header trace-id) of every record, sorted: a topic has
/// three partitions, so reading order is not write order.
fn by_message(records: &[TailRecord]) -> Vec<(i64, String, Option<[u8; 16]>)> {
    let mut v: Vec<_> = records
        .iter()
        .map(|r| {
            (
                msg_of(r),
                r.key.clone().unwrap_or_default(),
                header_trace(r),
            )
        })
        .collect();
    v.sort();
    v
}

fn trace_of(traces: &BTreeMap<i64, Option<String>>, msg_id: i64) -> TraceParent {
    let text = traces[&msg_id].as_deref().expect("the message has a trace");
    TraceParent::parse(text).expect("stored traceparent parses")
}

#[tokio::test]
async fn each_message_has_a_trace_that_its_records_carry_again_on_redelivery() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let kafka = mock_kafka(1);
    let bootstrap = kafka.bootstrap_servers();
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        fast_kafka(c, &bootstrap)
    });
    // A: a schedule of flights 9001 and 9002; B: a gate change of 9001 (the
    // latest message that changed 9001); C: a gate change of 9002 enqueued
    // "before migration 0011" (its trace removed below).
    let a = mb
        .insert(&common::sis::schd(
            1,
            "DNLD",
            &[(9001, "01DEC260835"), (9002, "01DEC260900")],
        ))
        .await;
    let b = mb
        .insert(&common::sis::flop(2, 9001, "GTDT", &gate("G1")))
        .await;
    let c = mb
        .insert(&common::sis::flop(3, 9002, "GTDT", &gate("G2")))
        .await;
    run_ok(&r, "ingest-sweep").await;

    let traces = stored_traces(&db).await;
    assert_eq!(traces.keys().copied().collect::<Vec<_>>(), vec![a, b, c]);
    let (ta, tb) = (trace_of(&traces, a), trace_of(&traces, b));
    assert_ne!(ta.trace_id(), tb.trace_id(), "one trace per message");
    assert_eq!(ta.flags(), 1, "sampled");
    // Re-reading the mailbox keeps the trace a message was given.
    run_ok(&r, "ingest-sweep").await;
    assert_eq!(stored_traces(&db).await, traces);
    sqlx::query("UPDATE proc_state SET traceparent = NULL WHERE msg_id = $1")
        .bind(c)
        .execute(&db.pool)
        .await
        .expect("an old row");

    run_ok(&r, "pump-drain").await;
    run_ok(&r, "dispatch-msg").await;
    run_ok(&r, "schd-flush").await;

    let msgs = consume(&kafka, "msg").await;
    let (a_, b_) = (Some(ta.trace_id()), Some(tb.trace_id()));
    assert_eq!(
        by_message(&msgs),
        vec![
            (a, "9001".into(), a_),
            (a, "9002".into(), a_),
            (b, "9001".into(), b_),
            (c, "9002".into(), None),
        ],
        "each notification carries its message's trace; C's has none"
    );
    // The header is the message's stored context itself.
    let of_b: Vec<&TailRecord> = msgs.iter().filter(|r| msg_of(r) == b).collect();
    assert_eq!(
        of_b[0].headers.get("traceparent").map(String::as_str),
        traces[&b].as_deref()
    );
    let schd = consume(&kafka, "schd").await;
    assert_eq!(
        by_message(&schd),
        vec![
            // 9001 was last changed by B: its one projection has B's trace;
            // 9002 by C, which has none.
            (b, "9001".into(), b_),
            (c, "9002".into(), None),
        ]
    );

    // Redelivery by a new process (a restart: new runner, new producer):
    // B's rows go back to PENDING and out again with the same trace.
    sqlx::query(
        "UPDATE msg_event SET status = 'PENDING', sent_at = NULL \
         WHERE (target = 'KAFKA:msg' AND msg_id = $1) OR (target = 'KAFKA:schd' AND partition_key = '9001')",
    )
    .bind(b)
    .execute(&db.pool)
    .await
    .expect("reset to PENDING");
    let (again, _stop2) = runner(&db, Some(&mb), shared, |c| fast_kafka(c, &bootstrap));
    assert_eq!(pass_ok(&again, "dispatch-msg").await.items, 1);
    assert_eq!(pass_ok(&again, "schd-flush").await.items, 1);
    let msgs_again = consume(&kafka, "msg").await;
    let schd_again = consume(&kafka, "schd").await;
    let of_b_again: Vec<&TailRecord> = msgs_again.iter().filter(|r| msg_of(r) == b).collect();
    let flight_9001: Vec<&TailRecord> = schd_again
        .iter()
        .filter(|r| r.key.as_deref() == Some("9001"))
        .collect();
    for delivered in [of_b_again, flight_9001] {
        assert_eq!(delivered.len(), 2, "first delivery and redelivery");
        assert!(delivered[0].offset < delivered[1].offset);
        assert_eq!(
            delivered[1].headers.get("traceparent"),
            traces[&b].as_ref(),
            "the redelivery carries the same traceparent: {delivered:?}"
        );
        assert_eq!(
            delivered[0].headers.get("traceparent"),
            delivered[1].headers.get("traceparent")
        );
    }
}

/// Every line the pump logs about a message carries its `trace_id` (the
/// message span): a DEAD message alone and two DEAD messages of one group
/// commit, in the text format and in JSON.
#[tokio::test]
async fn the_log_lines_of_a_message_carry_its_trace_id() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    // Not well-formed: DEAD(MALFORMED), logged as a WARN. The first two form
    // a group; the third, after a schedule, goes alone.
    let d1 = mb.insert("<MSG><META>broken").await;
    let d2 = mb.insert("<MSG><META>broken too").await;
    mb.insert(&common::sis::schd_one_flight(7, 9001)).await;
    let d3 = mb.insert("<MSG><META>broken again").await;
    run_ok(&r, "ingest-sweep").await;
    let traces = stored_traces(&db).await;

    let (logs, guard) = capture_logs();
    let s = run_ok(&r, "pump-drain").await;
    drop(guard);
    assert_eq!(detail(&s, "grouped"), 2, "d1 and d2 in one group: {s:?}");
    let text = logs.text();
    for id in [d1, d2, d3] {
        let hex = trace_of(&traces, id).trace_id_hex();
        let line = text
            .lines()
            .find(|l| l.contains(&format!("msg_id={id} ")) && l.contains("DEAD"))
            .unwrap_or_else(|| panic!("no DEAD line for {id} in:\n{text}"));
        assert!(line.contains(&format!("trace_id={hex}")), "{line}");
    }

    // JSON: the span's fields, trace_id among them, on the line.
    let d4 = mb.insert("<MSG><META>broken once more").await;
    run_ok(&r, "ingest-sweep").await;
    let traces = stored_traces(&db).await;
    let logs = Logs::default();
    let writer = logs.clone();
    let json = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::WARN)
        .with_writer(move || writer.clone())
        .finish();
    let guard = tracing::subscriber::set_default(json);
    run_ok(&r, "pump-drain").await;
    drop(guard);
    let hex = trace_of(&traces, d4).trace_id_hex();
    let line: serde_json::Value = logs
        .text()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|v: &serde_json::Value| v["span"]["msg_id"] == d4)
        .unwrap_or_else(|| panic!("no JSON line for {d4}: {}", logs.text()));
    assert_eq!(line["span"]["trace_id"], hex.as_str(), "{line}");
}

/// The delivery's log lines about a record carry its message's `trace_id`
/// (the event span): a projection the broker refuses turns DEAD.
#[tokio::test]
async fn the_delivery_log_lines_of_a_record_carry_its_trace_id() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let kafka = mock_kafka(1);
    let bootstrap = kafka.bootstrap_servers();
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        fast_kafka(c, &bootstrap);
        // A full-state projection is larger than 1000 bytes: refused
        // (message-specific), DEAD at its first failure.
        c.msgx
            .kafka
            .properties
            .insert("message.max.bytes".into(), "1000".into());
        c.msgx.dispatch.max_attempts = 1;
        c.msgx.dispatch.retry_backoff = vec![];
    });
    let id = mb.insert(&common::sis::schd_one_flight(9, 9001)).await;
    run_ok(&r, "ingest-sweep").await;
    run_ok(&r, "pump-drain").await;
    let hex = trace_of(&stored_traces(&db).await, id).trace_id_hex();

    let (logs, guard) = capture_logs();
    let s = pass_ok(&r, "schd-flush").await;
    drop(guard);
    assert_eq!(detail(&s, "dead"), 1, "{s:?}");
    let text = logs.text();
    let line = text
        .lines()
        .find(|l| l.contains("Outbox event is DEAD"))
        .unwrap_or_else(|| panic!("no DEAD line in:\n{text}"));
    assert!(
        line.contains("flid=9001") && line.contains(&format!("trace_id={hex}")),
        "{line}"
    );
}

/// `msgx msg show` prints the message's traceparent (the console shows the
/// same function's output).
#[tokio::test]
async fn msg_show_prints_the_traceparent() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    let id = mb.insert(&common::sis::schd_one_flight(8, 9001)).await;
    run_ok(&r, "ingest-sweep").await;
    let stored = stored_traces(&db).await[&id].clone().expect("a trace");
    let mut out = Vec::new();
    let code =
        msgx::commands::inspect::msg_show(&db.pool, &r.mailbox, id, false, false, &mut out).await;
    assert_eq!(code, msgx::exit::Exit::Ok);
    let text = String::from_utf8(out).expect("utf-8");
    assert!(
        text.contains(&format!("  traceparent {stored}\n")),
        "{text}"
    );
    let mut out = Vec::new();
    msgx::commands::inspect::msg_show(&db.pool, &r.mailbox, id, true, false, &mut out).await;
    let doc: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    assert_eq!(doc["record"]["traceparent"], stored.as_str());
}
