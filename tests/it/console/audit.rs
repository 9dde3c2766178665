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

/// A GET with the viewer's bearer token (the pages are for every role).
async fn as_viewer(addr: SocketAddr, path: String) -> Answer {
    let viewer = format!("Bearer {VIEWER_TOKEN}");
    request(addr, "GET", &path, &[("Authorization", &viewer)], "").await
}

/// The `href` of the link `id` in `body`, unescaped.
fn link(body: &str, id: &str) -> String {
    body.split(&format!("id=\"{id}\" href=\""))
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("no link {id}: {body}"))
        .replace("&#38;", "&")
}

/// The rows of the Audit page's table: their `action-<id>` ids in order.
fn audit_rows(body: &str) -> Vec<String> {
    body.split("<tr id=\"action-")
        .skip(1)
        .filter_map(|r| r.split('"').next().map(String::from))
        .collect()
}

/// Records `n` actions by `actor` through the store (the same insert the
/// console and the CLI use), one minute apart from `at`.
async fn record(db: &TestDb, actor: &str, action: &str, n: i64, at: chrono::DateTime<chrono::Utc>) {
    let mut conn = db.pool.acquire().await.expect("connection");
    for i in 0..n {
        msgx::store::pg::operator_action::insert(
            &mut conn,
            &msgx::store::pg::operator_action::NewAction {
                at: at + chrono::Duration::minutes(i),
                actor,
                action,
                target: &format!("msg_event:{}", 1000 + i),
                reason: Some("test"),
                detail: serde_json::json!({ "i": i }),
            },
        )
        .await
        .expect("recorded");
    }
}

#[tokio::test]
async fn the_audit_page_lists_filters_and_pages_the_recorded_actions() {
    let c = Console::start(|_| {}).await;
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-12-01T08:00:00Z")
        .expect("time")
        .to_utc();
    record(&c.db, "alice", "EVENT_RESEND", 55, t0).await;
    record(
        &c.db,
        "bob",
        "EVENT_DISCARD",
        2,
        t0 + chrono::Duration::days(1),
    )
    .await;
    let get = |path: String| as_viewer(c.addr, path);

    // A viewer may read it; the nav links it; newest first, one page.
    let a = get("/audit".into()).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.body.contains("id=\"nav-audit\""), "{}", a.body);
    let rows = audit_rows(&a.body);
    assert_eq!(rows.len(), 50, "{rows:?}");
    let ids: Vec<i64> = rows.iter().map(|r| r.parse().expect("id")).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "{ids:?}");
    assert!(a.body.contains("EVENT_DISCARD"), "bob's are the newest");
    // The next page holds the rest, none twice.
    let next = link(&a.body, "audit-next-page");
    let b = get(next.clone()).await;
    let more = audit_rows(&b.body);
    assert_eq!(more.len(), 7, "{next}: {more:?}");
    assert!(!b.body.contains("audit-next-page"));
    assert!(more.iter().all(|r| !rows.contains(r)));

    // Each filter narrows: user, action, time range, target.
    assert_eq!(
        audit_rows(&get("/audit?user=bob".into()).await.body).len(),
        2
    );
    assert_eq!(
        audit_rows(&get("/audit?action=event_discard".into()).await.body).len(),
        2
    );
    let window = get("/audit?user=alice&from=2026-12-01T08:10&to=2026-12-01T08:15".into()).await;
    assert_eq!(audit_rows(&window.body).len(), 5, "{}", window.body);
    let target = get("/audit?target=msg_event:1054".into()).await;
    assert_eq!(audit_rows(&target.body).len(), 1, "{}", target.body);
    assert!(target.body.contains("msg_event:1054"));
    let none = get("/audit?user=nobody".into()).await;
    assert!(
        none.body.contains("id=\"table-audit-empty\""),
        "{}",
        none.body
    );

    // A bad field is a 400 naming it, with the form shown again.
    let bad = get("/audit?from=yesterday".into()).await;
    assert_eq!(bad.status, 400, "{bad:?}");
    assert!(
        bad.body.contains("id=\"audit-filter-error\"") && bad.body.contains("from:"),
        "{}",
        bad.body
    );
    let long = "x".repeat(500);
    let bad = get(format!("/audit?target={long}")).await;
    assert_eq!(bad.status, 400, "{bad:?}");
}

/// A GTDT group of one gate (a FLOP-GTDT payload).
fn gate(g: &str) -> String {
    format!(
        "<GTDT GTNO=\"1\"><GATE>{g}</GATE><PGOT>01DEC260800</PGOT><PGCT>01DEC260820</PGCT></GTDT>"
    )
}

/// The `<tr id="…">` ids of the flight page's history table, in order.
fn history_rows(body: &str) -> Vec<String> {
    let table = body
        .split("id=\"table-flight-messages\"")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .unwrap_or_else(|| panic!("no history table: {body}"));
    table
        .split("<tr id=\"")
        .skip(1)
        .filter_map(|r| r.split('"').next().map(String::from))
        .collect()
}

/// The history row `id`'s HTML.
fn history_row<'a>(body: &'a str, id: &str) -> &'a str {
    body.split(&format!("<tr id=\"{id}\""))
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or_else(|| panic!("no row {id}: {body}"))
}

/// Issue 37 item 6: the flight page lists every version with the message
/// that made it and its field-level changes, pages them, and says which
/// versions are past the outbox retention.
#[tokio::test]
async fn the_flight_page_lists_every_version_with_its_changes() {
    let c = Console::start(|_| {}).await;
    let schd = c.mailbox.insert(&sis::schd_one_flight(1, 9001)).await;
    let a1 = c
        .mailbox
        .insert(&sis::flop(2, 9001, "GTDT", &gate("A1")))
        .await;
    let b7 = c
        .mailbox
        .insert(&sis::flop(3, 9001, "GTDT", &gate("B7")))
        .await;
    drain(&c.runner).await;
    let get = |path: String| as_viewer(c.addr, path);
    let page = get("/flights/9001".into()).await;
    assert_eq!(page.status, 200, "{page:?}");
    // The milestones (issue 36) stay.
    assert!(page.body.contains("id=\"table-milestones\""));
    let rows = history_rows(&page.body);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows.iter().all(|r| r.starts_with("version-")), "{rows:?}");
    // Newest first: version 3 by the B7 message, a changed gate item.
    let v3 = history_row(&page.body, &rows[0]);
    assert!(v3.contains("<td>3</td>"), "{v3}");
    assert!(v3.contains(&format!("href=\"/messages/{b7}\"")), "{v3}");
    assert!(v3.contains("FLOP-GTDT"), "{v3}");
    assert!(v3.contains("GTDT[0] CHANGED gate: A1 → B7"), "{v3}");
    let v2 = history_row(&page.body, &rows[1]);
    assert!(v2.contains(&format!("href=\"/messages/{a1}\"")), "{v2}");
    assert!(v2.contains("GTDT[0] ADDED: - →"), "{v2}");
    let v1 = history_row(&page.body, &rows[2]);
    assert!(v1.contains(&format!("href=\"/messages/{schd}\"")), "{v1}");
    assert!(v1.contains("CREATE"), "{v1}");
    assert!(v1.contains("FLNO SET: - → YG9001"), "{v1}");

    // Past retention: event-cleanup removes the SENT rows; the versions
    // are still listed, as one range that says so.
    pass_ok(&c.runner, "dispatch-msg").await;
    let retention = c.runner.config.msgx.pipeline.event_retention.chrono();
    c.clock.advance(retention + chrono::Duration::hours(1));
    pass_ok(&c.runner, "event-cleanup").await;
    c.mailbox
        .insert(&sis::flop(4, 9001, "GTDT", &gate("C3")))
        .await;
    drain(&c.runner).await;
    let page = get("/flights/9001".into()).await;
    let rows = history_rows(&page.body);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(history_row(&page.body, &rows[0]).contains("gate: B7 → C3"));
    assert_eq!(rows[1], "versions-gone-1-3");
    assert!(
        history_row(&page.body, &rows[1]).contains("past the outbox retention"),
        "{}",
        page.body
    );

    // Paged: 20 versions per page, the rest behind a link.
    for (i, g) in (5..27).zip(["D1", "D2"].iter().cycle()) {
        c.mailbox
            .insert(&sis::flop(i, 9001, "GTDT", &gate(g)))
            .await;
    }
    drain(&c.runner).await;
    let page = get("/flights/9001".into()).await;
    let first = history_rows(&page.body);
    assert_eq!(first.len(), 20, "{first:?}");
    let next = link(&page.body, "flight-history-next");
    let older = get(next).await;
    let second = history_rows(&older.body);
    assert_eq!(
        second.len(),
        4,
        "versions 6..4 and the gone range: {second:?}"
    );
    assert_eq!(second.last().map(String::as_str), Some("versions-gone-1-3"));
    assert!(second.iter().all(|r| !first.contains(r)));
    let bad = get("/flights/9001?before=x".into()).await;
    assert_eq!(bad.status, 400, "{bad:?}");
}

/// The record and the row are one statement: when the outbox append fails,
/// the action is not recorded either (and the caller's action rolls back).
#[tokio::test]
async fn an_action_is_recorded_only_with_its_audit_record() {
    let db = TestDb::migrated().await;
    db.fail_inserts("msg_event", "outbox down").await;
    let t0 = chrono::DateTime::UNIX_EPOCH;
    let mut conn = db.pool.acquire().await.expect("connection");
    let refused = msgx::store::pg::operator_action::insert(
        &mut conn,
        &msgx::store::pg::operator_action::NewAction {
            at: t0,
            actor: "alice",
            action: "SKIP",
            target: "proc_state:1",
            reason: Some("test"),
            detail: serde_json::json!({}),
        },
    )
    .await;
    assert!(refused.is_err(), "{refused:?}");
    drop(conn);
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM operator_action")
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(rows, 0, "no action row without its audit record");
    db.allow_inserts("msg_event").await;
    record(&db, "alice", "SKIP", 1, t0).await;
    let (actions, records): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM operator_action), \
                (SELECT count(*) FROM msg_event WHERE target = 'KAFKA:audit' AND partition_key = 'alice')",
    )
    .fetch_one(&db.pool)
    .await
    .expect("counts");
    assert_eq!((actions, records), (1, 1));
}
