//! Issue 20 items 2 and 5 against a private MariaDB (`servers::quiet_mariadb`:
//! only the test holding it talks to it, so the server's global counters and
//! its list of open transactions are this test's own) and the real
//! PostgreSQL, with a manual clock:
//! - an idle `ingest-sweep` poll is exactly one statement on the mailbox;
//! - a hole is released on transaction evidence (`no-live-transaction`) as
//!   soon as no transaction that could fill it is open, and never while one
//!   is; without the PROCESS privilege the time rule alone applies and
//!   `msgx doctor` says so;
//! - evidence is used only on the server that allocates the IDs (issue 31
//!   item 7), against a private primary and its replica
//!   (`servers::replica_pair`): read through the replica, a hole whose
//!   writer is open on the primary ages by the time rule, and doctor,
//!   status and the metric say why.

use crate::common;

use chrono::Duration;
use common::jobs::detail;
use common::servers::{QuietMariaDb, ReplicaPair, Side, quiet_mariadb, replica_pair};
use common::*;
use msgx::clock::ManualClock;
use msgx::scheduler::runner::{JobRunner, RunOptions, RunSummary};
use msgx::store::pg::job_run::Outcome;
use mysql_async::prelude::Queryable;
use std::collections::BTreeMap;

const XML: &str =
    "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><TYPE>LDM</TYPE><STYP>UPD</STYP></META></MSG>";

/// The quiet server's admin URL as the user `msgx` (every privilege).
fn admin_url(q: &QuietMariaDb) -> String {
    format!("mysql://msgx:msgx@127.0.0.1:{}", q.port)
}

async fn ingest(r: &JobRunner) -> RunSummary {
    let s = r
        .run("ingest-sweep", &RunOptions::default(), None)
        .await
        .expect("ingest runs");
    assert_eq!(s.outcome, Outcome::Succeeded, "{s:?}");
    s
}

async fn cursor_w(db: &TestDb) -> i64 {
    sqlx::query_scalar("SELECT w FROM inbox_cursor")
        .fetch_one(&db.pool)
        .await
        .unwrap()
}

async fn enqueued(db: &TestDb) -> Vec<i64> {
    sqlx::query_scalar("SELECT msg_id FROM proc_state ORDER BY msg_id")
        .fetch_all(&db.pool)
        .await
        .unwrap()
}

async fn holes(db: &TestDb) -> Vec<(i64, i64, String)> {
    sqlx::query_as("SELECT first_id, last_id, reason FROM inbox_hole ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .unwrap()
}

/// The server's global counters that an ingest poll can move.
async fn counters(conn: &mut mysql_async::Conn) -> BTreeMap<String, i64> {
    let rows: Vec<(String, String)> = conn
        .query(
            "SHOW GLOBAL STATUS WHERE Variable_name = 'Questions' OR Variable_name LIKE 'Com\\_%'",
        )
        .await
        .unwrap();
    rows.into_iter()
        .map(|(k, v)| (k, v.parse().unwrap_or(-1)))
        .collect()
}

/// How far `counter` moved (0 when it is not in `delta`).
fn moved(delta: &BTreeMap<String, i64>, counter: &str) -> i64 {
    delta.get(counter).copied().unwrap_or(0)
}

/// How each counter moved between two reads (the ones that did not move
/// left out, so a failure names every kind of statement that ran).
fn delta(before: &BTreeMap<String, i64>, after: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, d)| *d != 0)
        .collect()
}

/// What `n` idle ingest runs cost the mailbox server, after two warm-up
/// runs (the first resolves the table and enqueues, the second is idle).
/// The read of the counters is one statement itself.
async fn idle_cost(db: &TestDb, mb_url: &str, q: &QuietMariaDb, n: i64) -> BTreeMap<String, i64> {
    let (_clock, shared) = manual_clock();
    let url = mb_url.to_string();
    let (r, _stop) = runner(db, None, shared, |c| c.msgx.mailbox.url = url);
    ingest(&r).await;
    ingest(&r).await;
    let mut probe = mysql_async::Conn::from_url(admin_url(q)).await.unwrap();
    let before = counters(&mut probe).await;
    for _ in 0..n {
        let s = ingest(&r).await;
        assert_eq!(s.items, 0, "idle: {s:?}");
    }
    let after = counters(&mut probe).await;
    let _ = probe.disconnect().await;
    delta(&before, &after)
}

/// Issue 20 item 2: an idle poll is one EXECUTE of the cached fetch, nothing
/// else — no COM_RESET_CONNECTION with its SET and PREPARE — and it fails
/// on the old pool setting (`reset_connection=true`, mysql_async's default).
#[tokio::test]
async fn an_idle_poll_is_one_statement_on_the_mailbox() {
    let q = quiet_mariadb();
    let db = TestDb::migrated().await;
    let mb = TestMailbox::on_server(&admin_url(&q)).await;
    for _ in 0..3 {
        mb.insert(XML).await;
    }
    // The test's own pool resets returned connections in the background
    // (mysql_async's default): close it before counting.
    mb.pool.clone().disconnect().await.unwrap();
    const N: i64 = 20;
    let cost = idle_cost(&db, &mb.url, &q, N).await;
    // Every command the server counted (`Com_*`; an executed prepared
    // SELECT counts in both `Com_stmt_execute` and `Com_select`, so the
    // latter is left out): the polls' executes of the cached fetch and the
    // one counter read, nothing else. (`Questions` is not used: it also
    // moved by one, without any `Com_*` counter, in about one run of three.)
    let commands: i64 = cost
        .iter()
        .filter(|(k, _)| k.starts_with("Com_") && *k != "Com_select")
        .map(|(_, v)| v)
        .sum();
    assert_eq!(
        (
            commands,
            moved(&cost, "Com_stmt_execute"),
            moved(&cost, "Com_stmt_prepare"),
            moved(&cost, "Com_set_option")
        ),
        (N + 1, N, 0, 0),
        "{N} idle polls + the counter read: {cost:?}"
    );
    // The old setting: every return to the pool reset the session, so each
    // poll ran the setup SET and prepared the fetch again (the reset of the
    // last poll's connection, its SET, may still be under way when counted).
    let old = idle_cost(&db, &format!("{}?reset_connection=true", mb.url), &q, N).await;
    assert_eq!(moved(&old, "Com_stmt_prepare"), N, "{old:?}");
    assert!(
        moved(&old, "Questions") >= 3 * N - 1 && moved(&old, "Com_set_option") >= N - 1,
        "SET + PREPARE + EXECUTE per poll: {old:?}"
    );
}

/// `msgx doctor --json`'s `mailbox.hole-evidence` check (status, detail)
/// with the test's config adjusted by `tweak` (a mock Kafka answers).
fn doctor_evidence(db: &TestDb, tweak: &dyn Fn(&mut msgx::config::Config)) -> (String, String) {
    let kafka = mock_kafka(1);
    let cfg = db.config_file_with(|c| {
        fast_kafka(c, &kafka.bootstrap_servers());
        tweak(c);
    });
    let out = msgx(cfg.path(), &["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    report["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == "mailbox.hole-evidence"))
        .map(|c| (c["status"].to_string(), c["detail"].to_string()))
        .unwrap_or_else(|| ("absent".into(), text(&out)))
}

/// `msgx status --json`'s `hole_evidence` (the whole object) with the
/// mailbox at `url`.
fn status_evidence(db: &TestDb, url: &str) -> serde_json::Value {
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = url.to_string());
    let out = msgx(cfg.path(), &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    match status.get("hole_evidence") {
        Some(v) => v.clone(),
        None => serde_json::Value::String(text(&out)),
    }
}

/// The value of `msgx_ingest_hole_evidence{state="…"}` on this process's
/// metrics page (`None` when absent).
fn evidence_metric(page: &str, state: &str) -> Option<f64> {
    let series = format!("msgx_ingest_hole_evidence{{state=\"{state}\"}} ");
    page.lines()
        .find_map(|l| l.strip_prefix(series.as_str()))
        .and_then(|v| v.trim().parse().ok())
}

/// A transaction on its own connection that inserts into the mailbox and
/// stays open: its auto-increment ID is allocated, not committed.
struct Holder {
    conn: mysql_async::Conn,
    id: i64,
}

impl Holder {
    async fn open(mb: &TestMailbox) -> Holder {
        let mut conn = mb.pool.get_conn().await.unwrap();
        conn.query_drop("START TRANSACTION").await.unwrap();
        conn.exec_drop(
            "INSERT INTO cminmsgs (CMINMSGS_CLOB_MSG, CMINMSGS_STATUS) VALUES (?, 'VALID')",
            (XML,),
        )
        .await
        .unwrap();
        let id = conn.last_insert_id().unwrap() as i64;
        Holder { conn, id }
    }

    async fn end(mut self, commit: bool) {
        let sql = if commit { "COMMIT" } else { "ROLLBACK" };
        self.conn.query_drop(sql).await.unwrap();
    }
}

/// Row 1, then a holder that takes ID 2 and stays open, then row 3
/// committed: the hole at 2 is sighted by the first poll, which reads the
/// evidence at once (one more round) and keeps the hole.
async fn hole_held_open(
    db: &TestDb,
    mb: &TestMailbox,
) -> (
    Holder,
    JobRunner,
    tokio::sync::watch::Sender<bool>,
    ManualClock,
) {
    mb.insert(XML).await; // 1
    let holder = Holder::open(mb).await; // 2, open
    assert_eq!(holder.id, 2);
    mb.insert(XML).await; // 3
    let (clock, shared) = manual_clock();
    let (r, stop) = runner(db, Some(mb), shared, |_| {});
    let s = ingest(&r).await;
    assert_eq!(s.items, 1, "only row 1: {s:?}");
    assert_eq!(
        detail(&s, "hole_evidence_reads"),
        1,
        "a new hole's evidence is read at once: {s:?}"
    );
    assert_eq!(detail(&s, "holes_released"), 0, "{s:?}");
    (holder, r, stop, clock)
}

/// Polls (the manual clock stands still) until one poll has read the
/// evidence fresh; asserts every poll until then held the hole. Real time
/// passes only because InnoDB refreshes its transaction list after 100 ms
/// without readers and the poller reads it at most every 150 ms: a bounded
/// wait for the server, not for msgx's clock.
async fn poll_until_fresh_evidence(r: &JobRunner) -> RunSummary {
    let last = std::sync::Mutex::new(None);
    wait_until(
        "a poll with a fresh evidence read",
        std::time::Duration::from_secs(10),
        || async {
            let s = ingest(r).await;
            let fresh =
                detail(&s, "hole_evidence_reads") == 1 && detail(&s, "hole_evidence_stale") == 0;
            let done = fresh || detail(&s, "holes_released") > 0;
            *last.lock().unwrap() = Some(s);
            done
        },
    )
    .await;
    last.into_inner().unwrap().expect("polled")
}

/// (1) A transaction holds ID 2 open while row 3 commits: the hole is never
/// released on evidence — not on fresh reads while it is open, not after
/// the clock passes most of max-commit-delay — and the late commit then
/// takes its place in order.
#[tokio::test]
async fn an_open_transaction_across_a_hole_keeps_it() {
    let q = quiet_mariadb();
    let db = TestDb::migrated().await;
    let mb = TestMailbox::on_server(&admin_url(&q)).await;
    let (holder, r, _stop, clock) = hole_held_open(&db, &mb).await;
    for step in 1..=3 {
        clock.advance(Duration::seconds(9)); // 27 s < max-commit-delay 30 s
        let s = poll_until_fresh_evidence(&r).await;
        assert_eq!(
            (detail(&s, "holes_released"), s.items),
            (0, 0),
            "step {step}: the holder is open: {s:?}"
        );
        assert_eq!(cursor_w(&db).await, 1);
    }
    assert!(holes(&db).await.is_empty());
    holder.end(true).await;
    let s = ingest(&r).await;
    assert_eq!(s.items, 2, "{s:?}");
    assert_eq!(
        enqueued(&db).await,
        vec![1, 2, 3],
        "the late commit keeps its place"
    );
    assert!(holes(&db).await.is_empty());
}

/// (2) The same, but the holder rolls back: the first poll that reads the
/// evidence after it releases the hole, `no-live-transaction`, long before
/// max-commit-delay (the manual clock stands at 10 s).
#[tokio::test]
async fn a_rolled_back_holder_is_released_by_the_next_evidence_read() {
    let q = quiet_mariadb();
    let db = TestDb::migrated().await;
    let mb = TestMailbox::on_server(&admin_url(&q)).await;
    let (holder, r, _stop, clock) = hole_held_open(&db, &mb).await;
    clock.advance(Duration::seconds(5));
    let s = poll_until_fresh_evidence(&r).await;
    assert_eq!(detail(&s, "holes_released"), 0, "still open: {s:?}");
    holder.end(false).await;
    clock.advance(Duration::seconds(5));
    let s = poll_until_fresh_evidence(&r).await;
    assert_eq!(
        (
            detail(&s, "hole_evidence_reads"),
            detail(&s, "holes_released_on_evidence"),
            s.items
        ),
        (1, 1, 1),
        "released by that very poll: {s:?}"
    );
    assert_eq!(
        holes(&db).await,
        vec![(2, 2, "no-live-transaction".to_string())]
    );
    assert_eq!(enqueued(&db).await, vec![1, 3]);
    assert_eq!(cursor_w(&db).await, 3);
}

/// A rolled-back insert (the soak's failed feed inserts) is released by the
/// poll that first sees it: the evidence read follows the sighting at once.
#[tokio::test]
async fn a_rolled_back_insert_is_released_by_the_poll_that_sees_it() {
    let q = quiet_mariadb();
    let db = TestDb::migrated().await;
    let mb = TestMailbox::on_server(&admin_url(&q)).await;
    mb.insert(XML).await; // 1
    mb.insert_rolled_back(XML).await; // 2
    mb.insert(XML).await; // 3
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    let mut s = ingest(&r).await;
    if detail(&s, "hole_evidence_stale") == 1 {
        // The test before this one read the list less than 100 ms ago:
        // the first fresh read decides.
        s = poll_until_fresh_evidence(&r).await;
    }
    assert_eq!(
        (
            detail(&s, "hole_evidence_reads"),
            detail(&s, "holes_released_on_evidence")
        ),
        (1, 1),
        "{s:?}"
    );
    assert_eq!(enqueued(&db).await, vec![1, 3]);
    assert_eq!(
        holes(&db).await,
        vec![(2, 2, "no-live-transaction".to_string())]
    );
    let status = msgx(
        db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone())
            .path(),
        &["status"],
    );
    let shown = text(&status);
    assert!(
        shown.contains("holes released:  1 (1 no-live-transaction)"),
        "{shown}"
    );
}

/// (3) A mailbox user without PROCESS: the server refuses the evidence read
/// (1227), the poller says so once, asks again only every 10 minutes, and
/// the time rule alone releases the hole; `msgx doctor` warns.
#[tokio::test]
async fn without_process_the_time_rule_alone_applies_and_doctor_warns() {
    let q = quiet_mariadb();
    let db = TestDb::migrated().await;
    let mb = TestMailbox::on_server(&admin_url(&q)).await;
    let user = unique_name("noproc");
    q.admin(&format!(
        "CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'; \
         GRANT SELECT, INSERT, UPDATE ON `{}`.* TO '{user}'@'%';",
        mb.name
    ));
    let url = q.url(&user, "pw", &mb.name);
    mb.insert(XML).await; // 1
    mb.insert_rolled_back(XML).await; // 2
    mb.insert(XML).await; // 3
    let (clock, shared) = manual_clock();
    let (logs, _guard) = capture_logs();
    let mb_url = url.clone();
    let (r, _stop) = runner(&db, None, shared, |c| {
        c.msgx.mailbox.url = mb_url;
        c.msgx.pipeline.max_commit_delay = "1h".parse().expect("duration");
    });
    let s = ingest(&r).await;
    assert_eq!(
        (
            s.items,
            detail(&s, "hole_evidence_reads"),
            detail(&s, "holes_released")
        ),
        (1, 1, 0),
        "{s:?}"
    );
    for (minutes, reads) in [(5, 0), (5, 1), (5, 0)] {
        clock.advance(Duration::minutes(minutes));
        let s = ingest(&r).await;
        assert_eq!(
            (
                detail(&s, "hole_evidence_reads"),
                detail(&s, "holes_released")
            ),
            (reads, 0),
            "asked again after 10 minutes only: {s:?}"
        );
    }
    clock.advance(Duration::minutes(45)); // 60 min: max-commit-delay
    let s = ingest(&r).await;
    assert_eq!(detail(&s, "holes_released"), 1, "{s:?}");
    assert_eq!(
        holes(&db).await,
        vec![(2, 2, "max-commit-delay".to_string())]
    );
    let warned = logs
        .text()
        .matches("No transaction evidence for holes")
        .count();
    assert_eq!(warned, 1, "logged once: {}", logs.text());
    assert!(logs.text().contains("PROCESS"), "{}", logs.text());

    let doctor = |tweak: &dyn Fn(&mut msgx::config::Config)| {
        doctor_evidence(&db, &|c| {
            c.msgx.mailbox.url = url.clone();
            tweak(c);
        })
    };
    let (status, detail_text) = doctor(&|_| {});
    assert_eq!(status, "\"warn\"", "{detail_text}");
    assert!(
        detail_text.contains("no PROCESS privilege"),
        "{detail_text}"
    );
    let (status, detail_text) =
        doctor(&|c| c.msgx.mailbox.url = format!("{}/{}", admin_url(&q), mb.name));
    assert_eq!(status, "\"ok\"", "{detail_text}");
    let (status, detail_text) = doctor(&|c| c.msgx.pipeline.hole_evidence = false);
    assert_eq!(status, "\"warn\"", "{detail_text}");
    assert!(
        detail_text.contains("hole-evidence = false"),
        "{detail_text}"
    );
    q.admin(&format!("DROP USER '{user}'@'%'"));
}

/// A mailbox on the pair's primary; the replica has applied its DDL.
async fn mailbox_on_primary(pair: &ReplicaPair) -> TestMailbox {
    let mb = TestMailbox::on_server(&pair.admin_url(Side::Primary)).await;
    pair.sync();
    mb
}

/// Issue 31 item 7: read through a replica, the open transactions are not
/// the writers' (a writer holding an ID open on the primary is invisible
/// there), so evidence is not used: the hole ages by the time rule, the
/// late commit arrives in order, and doctor, status and the metric say
/// "replica". On the old code the replica's empty list released the hole
/// at once and the late row was never processed.
#[tokio::test]
async fn on_a_replica_holes_age_by_time_not_on_evidence() {
    let pair = replica_pair();
    let metrics = msgx::prometheus::install().expect("recorder");
    let db = TestDb::migrated().await;
    let mb = mailbox_on_primary(&pair).await;
    mb.insert(XML).await; // 1
    let holder = Holder::open(&mb).await; // 2, open on the primary
    assert_eq!(holder.id, 2);
    mb.insert(XML).await; // 3
    pair.sync();
    let replica_url = pair.url(Side::Replica, "msgx", "msgx", &mb.name);
    let (clock, shared) = manual_clock();
    let url = replica_url.clone();
    let (r, _stop) = runner(&db, None, shared, |c| c.msgx.mailbox.url = url);
    let s = ingest(&r).await;
    assert_eq!(
        (s.items, detail(&s, "holes_released")),
        (1, 0),
        "the replica shows no open writer, but it does not allocate the IDs: {s:?}"
    );
    for step in 1..=3 {
        clock.advance(Duration::seconds(9)); // 27 s < max-commit-delay 30 s
        for _ in 0..3 {
            let s = ingest(&r).await;
            assert_eq!(
                (detail(&s, "holes_released"), s.items),
                (0, 0),
                "step {step}: held while the writer is open on the primary: {s:?}"
            );
        }
    }
    assert_eq!(cursor_w(&db).await, 1);
    let page = metrics.render();
    assert_eq!(evidence_metric(&page, "replica"), Some(1.0), "{page}");
    assert_eq!(evidence_metric(&page, "valid"), Some(0.0), "{page}");
    let status = status_evidence(&db, &replica_url);
    assert_eq!(
        (status["state"].as_str(), status["valid"].as_bool()),
        (Some("replica"), Some(false)),
        "{status}"
    );
    let (verdict, why) = doctor_evidence(&db, &|c| c.msgx.mailbox.url = replica_url.clone());
    assert_eq!(verdict, "\"warn\"", "{why}");
    assert!(why.contains("replica"), "{why}");

    // The writer commits on the primary: its row takes its place in order.
    holder.end(true).await;
    pair.sync();
    let s = ingest(&r).await;
    assert_eq!(s.items, 2, "{s:?}");
    assert_eq!(enqueued(&db).await, vec![1, 2, 3]);
    assert!(holes(&db).await.is_empty());

    // A hole nobody fills (an insert rolled back on the primary) is
    // released by the time rule only, at max-commit-delay.
    mb.insert_rolled_back(XML).await; // 4
    mb.insert(XML).await; // 5
    pair.sync();
    let s = ingest(&r).await;
    assert_eq!((s.items, detail(&s, "holes_released")), (0, 0), "{s:?}");
    clock.advance(Duration::seconds(29));
    let s = ingest(&r).await;
    assert_eq!(detail(&s, "holes_released"), 0, "{s:?}");
    clock.advance(Duration::seconds(1));
    let s = ingest(&r).await;
    assert_eq!((s.items, detail(&s, "holes_released")), (1, 1), "{s:?}");
    assert_eq!(
        holes(&db).await,
        vec![(4, 4, "max-commit-delay".to_string())]
    );
    assert_eq!(enqueued(&db).await, vec![1, 2, 3, 5]);
}

/// On the pair's primary (binary log on, replicas attached) evidence is
/// valid as before: a rolled-back insert is released at once
/// (`no-live-transaction`) and doctor, status and the metric say "valid".
/// A user that holds PROCESS but may not read the replication status
/// (SLAVE MONITOR) cannot tell a primary from a replica: not valid, and
/// doctor says which privilege is missing.
#[tokio::test]
async fn on_the_primary_evidence_is_valid_and_unverifiable_without_slave_monitor() {
    let pair = replica_pair();
    let metrics = msgx::prometheus::install().expect("recorder");
    let db = TestDb::migrated().await;
    let mb = mailbox_on_primary(&pair).await;
    mb.insert(XML).await; // 1
    mb.insert_rolled_back(XML).await; // 2
    mb.insert(XML).await; // 3
    let primary_url = pair.url(Side::Primary, "msgx", "msgx", &mb.name);
    let (_clock, shared) = manual_clock();
    let url = primary_url.clone();
    let (r, _stop) = runner(&db, None, shared, |c| c.msgx.mailbox.url = url);
    let s = poll_until_fresh_evidence(&r).await;
    assert_eq!(detail(&s, "holes_released_on_evidence"), 1, "{s:?}");
    assert_eq!(
        holes(&db).await,
        vec![(2, 2, "no-live-transaction".to_string())]
    );
    assert_eq!(enqueued(&db).await, vec![1, 3]);
    let page = metrics.render();
    assert_eq!(evidence_metric(&page, "valid"), Some(1.0), "{page}");
    let status = status_evidence(&db, &primary_url);
    assert_eq!(
        (status["state"].as_str(), status["valid"].as_bool()),
        (Some("valid"), Some(true)),
        "{status}"
    );
    let (verdict, why) = doctor_evidence(&db, &|c| c.msgx.mailbox.url = primary_url.clone());
    assert_eq!(verdict, "\"ok\"", "{why}");

    let user = unique_name("nomon");
    pair.admin(
        Side::Primary,
        &format!(
            "CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'; \
             GRANT SELECT ON `{}`.* TO '{user}'@'%'; GRANT PROCESS ON *.* TO '{user}'@'%';",
            mb.name
        ),
    );
    let limited = pair.url(Side::Primary, &user, "pw", &mb.name);
    let status = status_evidence(&db, &limited);
    assert_eq!(
        (status["state"].as_str(), status["valid"].as_bool()),
        (Some("unverified"), Some(false)),
        "{status}"
    );
    let (verdict, why) = doctor_evidence(&db, &|c| c.msgx.mailbox.url = limited.clone());
    assert_eq!(verdict, "\"warn\"", "{why}");
    assert!(why.contains("SLAVE MONITOR"), "{why}");
    pair.admin(Side::Primary, &format!("DROP USER '{user}'@'%'"));
    pair.sync();
}
