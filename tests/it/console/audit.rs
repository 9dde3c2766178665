//! The audit trail as events and the Audit page (issue 37 item 3): real
//! actions — one through the console over HTTP, one by the CLI binary — are
//! read back from librdkafka's mock cluster as CloudEvents on the `audit`
//! topic, each validated against `schemas/audit-*.schema.json`
//! (`common::consume` checks every record it reads).

use super::*;
use common::consume;

/// A W3C `traceparent` the test sends with the console request.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[tokio::test]
async fn a_console_action_and_a_cli_action_are_cloud_events_on_the_audit_topic() {
    let c = Console::start(|_| {}).await;
    let f = c.fill().await;

    // A console action: resend a DEAD event, with the caller's trace.
    let bearer = format!("Bearer {OPERATOR_TOKEN}");
    let e = f.dead_event.to_string();
    let body = form(&[("step", "apply"), ("ids", &e), ("reason", "broker fixed")]);
    let a = request(
        c.addr,
        "POST",
        "/actions/event-resend",
        &[("Authorization", &bearer), ("traceparent", TRACEPARENT)],
        &body,
    )
    .await;
    assert_eq!(a.status, 200, "{a:?}");

    // A CLI action: revoke a user's sessions.
    let cfg = c.db.config_file();
    let out = msgx(
        cfg.path(),
        &[
            "console", "revoke", "victor", "--reason", "left", "--actor", "carol",
        ],
    );
    assert_eq!(common::code(&out), 0, "{}", common::text(&out));

    // Recorded and queued in the outbox together.
    let queued: Vec<(String, String)> = sqlx::query_as(
        "SELECT partition_key, status FROM msg_event WHERE target = 'KAFKA:audit' ORDER BY event_id",
    )
    .fetch_all(&c.db.pool)
    .await
    .expect("audit rows");
    assert_eq!(
        queued,
        [
            ("ops-script".to_string(), "PENDING".to_string()),
            ("carol".to_string(), "PENDING".to_string())
        ]
    );

    // The same Dispatcher sends them, with the resent notification.
    pass_ok(&c.runner, "dispatch-msg").await;
    let records = consume(&c.kafka, "audit").await;
    assert_eq!(records.len(), 2, "{records:?}");
    let mut by_user: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    for r in &records {
        let v: serde_json::Value =
            serde_json::from_str(r.value.as_deref().expect("a value")).expect("JSON");
        by_user.insert(r.key.clone().expect("a key"), v);
    }
    let console = &by_user["ops-script"];
    assert_eq!(console["specversion"], "1.0");
    assert_eq!(console["type"], "io.msgx.operator-action.event-resend");
    assert_eq!(console["subject"], format!("msg_event:{e}"));
    assert_eq!(console["data"]["role"], "operator");
    assert_eq!(console["data"]["reason"], "broker fixed");
    assert_eq!(console["data"]["result"], "applied");
    assert_eq!(
        console["data"]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736",
        "the request's trace"
    );
    let cli = &by_user["carol"];
    assert_eq!(cli["type"], "io.msgx.operator-action.session-revoke");
    assert_eq!(cli["data"]["role"], "cli");
    assert_eq!(
        cli["data"]["targets"],
        serde_json::json!(["console_user:victor"])
    );
    assert!(cli["data"]["trace_id"].is_string(), "{cli}");
    // The record's `traceparent` header is the request's trace too.
    let console_record = records
        .iter()
        .find(|r| r.key.as_deref() == Some("ops-script"))
        .expect("console record");
    assert_eq!(
        console_record
            .headers
            .get("traceparent")
            .map(String::as_str),
        Some(TRACEPARENT)
    );
    // SENT like any KAFKA:msg row; counted under its own target label.
    let sent: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM msg_event WHERE target = 'KAFKA:audit' AND status = 'SENT'",
    )
    .fetch_one(&c.db.pool)
    .await
    .expect("count");
    assert_eq!(sent, 2);
}
