//! Operability (issue 10) against real PostgreSQL and MariaDB: the
//! `/metrics` endpoint exposes every metric docs/metrics.md documents and its
//! values move; `/healthz` and `/readyz` answer apart (lock lost, PostgreSQL
//! unreachable, watermark stalled); the daemon serves them; `flight show`,
//! `msg show` and `holes` on fixture data; the systemd units verify.

use crate::common;

use chrono::Duration;
use common::jobs::{drain_past_backoff, run};
use common::metric_value as value;
use common::sis::{OWN, own_files};
use common::*;
use msgx::clock::SharedClock;
use msgx::http::ops::{Heartbeat, JobsSlot, LockSlot, OpsState, router};
use msgx::instance_lock::{AdvisoryLock, LockKey};
use msgx::jobs::supervision::JobWatch;
use msgx::scheduler::runner::{JobRunner, RunOptions};
use sqlx::Connection;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The recorder is process-wide: tests that read metric values take turns
/// (only matters when tests share a process, as under `cargo test`).
static SCRAPES: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Ops {
    addr: SocketAddr,
    heartbeat: Arc<Heartbeat>,
    lock: LockSlot,
    jobs: JobsSlot,
}

/// Serves the ops router for `db` and `mailbox_url` on a free port.
async fn serve_ops(db: &TestDb, mailbox_url: &str, clock: SharedClock) -> Ops {
    let mut cfg = db.config();
    cfg.msgx.mailbox.url = mailbox_url.to_string();
    cfg.msgx.http.probe_timeout = "2s".parse().unwrap();
    let heartbeat = Arc::new(Heartbeat::default());
    let lock = LockSlot::default();
    let jobs = JobsSlot::default();
    let state = OpsState {
        pg: db.pool.clone(),
        mailbox: msgx::store::mailbox::Mailbox::new(&cfg.msgx.mailbox).unwrap(),
        clock,
        config: Arc::new(cfg),
        heartbeat: heartbeat.clone(),
        lock: lock.clone(),
        jobs: jobs.clone(),
        console: Default::default(),
        metrics: msgx::prometheus::install().expect("recorder installs"),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router(state)).await;
    });
    Ops {
        addr,
        heartbeat,
        lock,
        jobs,
    }
}

async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    http(addr, "GET", path, "").await
}

async fn get_json(addr: SocketAddr, path: &str) -> (u16, serde_json::Value) {
    let (status, body) = get(addr, path).await;
    let v = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
    (status, v)
}

/// `(name, type)` of every metric docs/metrics.md documents.
/// docs/metrics.md's rows: (name, kind, description).
fn documented_rows() -> Vec<(String, String, String)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/metrics.md"))
        .expect("docs/metrics.md");
    doc.lines()
        .filter(|l| l.starts_with("| `msgx_"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let text = cells.get(4).copied().unwrap_or_default().to_string();
            (
                cells[1].trim_matches('`').to_string(),
                cells[2].to_string(),
                text,
            )
        })
        .collect()
}

async fn load_own(mb: &TestMailbox) -> Vec<(i64, PathBuf)> {
    let mut out = Vec::new();
    for f in own_files() {
        out.push((mb.insert(&std::fs::read_to_string(&f).unwrap()).await, f));
    }
    out
}

/// Runs `job` under an instance lock the test already holds.
async fn run_under(r: &JobRunner, job: &str, lock: Option<&AdvisoryLock>) {
    let opts = RunOptions {
        until_empty: true,
        ..Default::default()
    };
    let guard = lock.map(AdvisoryLock::guard);
    r.run(job, &opts, guard.as_ref()).await.expect("job runs");
}

#[tokio::test]
async fn the_endpoint_exposes_every_documented_metric_and_the_backlog_drains() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let ids = load_own(&mb).await;
    let (clock, shared) = manual_clock();
    let ops = serve_ops(&db, &mb.url, shared.clone()).await;
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    let _turn = SCRAPES.lock().await;

    run(&r, "ingest-sweep").await;
    clock.advance(Duration::seconds(90));
    let (status, page) = get(ops.addr, "/metrics").await;
    assert_eq!(status, 200);
    // A metric documented as "Absent when …" (the console's, in a process
    // serving none) is the one exception; tests/it/console.rs covers it.
    let always = documented_rows()
        .into_iter()
        .filter(|(_, _, text)| !text.contains("Absent when"));
    for (name, kind, _) in always {
        assert!(
            page.contains(&format!("# TYPE {name} {kind}")),
            "{name} ({kind}) is documented but not exposed:\n{page}"
        );
    }
    let build = msgx::build_info::get();
    assert_eq!(
        value(
            &page,
            "msgx_build_info",
            &[
                ("version", build.version),
                ("commit", build.commit),
                ("rustc", build.rustc),
                ("librdkafka", &build.librdkafka),
            ]
        ),
        Some(1.0),
        "{page}"
    );
    let pending = ids.len() as f64;
    assert_eq!(
        value(&page, "msgx_pipeline_messages", &[("state", "PENDING")]),
        Some(pending)
    );
    assert_eq!(
        value(
            &page,
            "msgx_pipeline_backlog_oldest_unprocessed_seconds",
            &[]
        ),
        Some(90.0)
    );
    assert_eq!(
        value(&page, "msgx_ingest_watermark_lag_ids", &[]),
        Some(0.0)
    );
    assert_eq!(value(&page, "msgx_collector_success", &[]), Some(1.0));
    let succeeded_before = value(
        &page,
        "msgx_pipeline_messages_processed_total",
        &[("outcome", "succeeded")],
    )
    .unwrap_or(0.0);

    drain_past_backoff(&r, &clock).await;
    let (_, page) = get(ops.addr, "/metrics").await;
    assert_eq!(
        value(
            &page,
            "msgx_pipeline_backlog_oldest_unprocessed_seconds",
            &[]
        ),
        Some(0.0),
        "after a drain the backlog age is 0"
    );
    assert_eq!(
        value(&page, "msgx_pipeline_messages", &[("state", "PENDING")]),
        Some(0.0)
    );
    assert!(value(&page, "msgx_pipeline_messages", &[("state", "SUCCEEDED")]).unwrap_or(0.0) > 0.0);
    assert!(
        value(
            &page,
            "msgx_pipeline_messages_processed_total",
            &[("outcome", "succeeded")]
        )
        .unwrap_or(0.0)
            > succeeded_before
    );
    for (outcome, class) in [
        ("dead", "EXHAUSTED"),
        ("dead", "MALFORMED"),
        ("failed", "UNSUPPORTED"),
    ] {
        assert!(
            value(
                &page,
                "msgx_pipeline_messages_processed_total",
                &[("outcome", outcome), ("error_class", class)]
            )
            .unwrap_or(0.0)
                >= 1.0,
            "{outcome}/{class} counted"
        );
    }
    assert!(
        value(
            &page,
            "msgx_pipeline_processing_duration_seconds_count",
            &[]
        )
        .unwrap_or(0.0)
            >= pending - 1.0
    );
    // Events wait in the outbox (no Kafka here): their age moves with the clock.
    assert!(
        value(
            &page,
            "msgx_outbox_events",
            &[("target", "KAFKA:msg"), ("status", "PENDING")]
        )
        .unwrap_or(0.0)
            > 0.0
    );
    assert!(
        value(
            &page,
            "msgx_outbox_oldest_unsent_seconds",
            &[("target", "KAFKA:msg")]
        )
        .unwrap_or(0.0)
            > 0.0
    );
    // The last success per job comes from JOB_RUN.
    assert!(
        value(
            &page,
            "msgx_job_last_success_timestamp_seconds",
            &[("job", "pump-drain")]
        )
        .unwrap_or(0.0)
            > 0.0
    );
    assert_eq!(value(&page, "msgx_instance_lock_held", &[]), Some(0.0));
}

#[tokio::test]
async fn healthz_follows_the_heartbeat_through_the_clock() {
    let db = TestDb::migrated().await;
    let mb = TestMailbox::new().await;
    let (clock, shared) = manual_clock();
    let ops = serve_ops(&db, &mb.url, shared.clone()).await;
    let (status, body) = get_json(ops.addr, "/healthz").await;
    assert_eq!(
        (status, &body["alive"]),
        (503, &serde_json::json!(false)),
        "no beat yet"
    );
    ops.heartbeat.beat(shared.now());
    clock.advance(Duration::seconds(15));
    let (status, body) = get_json(ops.addr, "/healthz").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["heartbeat_age_seconds"], 15);
    clock.advance(Duration::seconds(1));
    let (status, body) = get_json(ops.addr, "/healthz").await;
    assert_eq!(status, 503, "older than msgx.http.health-max-age: {body}");
    ops.heartbeat.beat(shared.now());
    assert_eq!(get(ops.addr, "/healthz").await.0, 200);
}

async fn take_lock(db: &TestDb, ops: &Ops) -> Arc<AdvisoryLock> {
    let lock = AdvisoryLock::try_acquire(&db.url, LockKey::instance(), "msgx daemon ops-test")
        .await
        .unwrap()
        .expect("lock is free");
    let lock = Arc::new(lock);
    ops.lock.set(lock.clone()).expect("slot empty");
    lock
}

#[tokio::test]
async fn readyz_turns_unready_when_the_lock_is_lost() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let ops = serve_ops(&db, &mb.url, shared).await;
    let (status, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        body["checks"]["instance_lock"]["ok"], false,
        "standby: {body}"
    );
    assert_eq!(body["checks"]["postgres"]["ok"], true, "{body}");

    let lock = take_lock(&db, &ops).await;
    let (status, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(status, 200, "lock held, nothing to read: {body}");

    sqlx::query("SELECT pg_terminate_backend($1)")
        .bind(lock.pid())
        .execute(&db.pool)
        .await
        .unwrap();
    wait_until(
        "readyz to notice the lost lock",
        std::time::Duration::from_secs(10),
        || async { get(ops.addr, "/readyz").await.0 == 503 },
    )
    .await;
    let (_, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(body["checks"]["instance_lock"]["ok"], false, "{body}");
    assert!(
        body["checks"]["instance_lock"]["detail"]
            .as_str()
            .unwrap_or("")
            .starts_with("lost"),
        "{body}"
    );
    let _turn = SCRAPES.lock().await;
    let (_, page) = get(ops.addr, "/metrics").await;
    assert_eq!(value(&page, "msgx_instance_lock_held", &[]), Some(0.0));
}

#[tokio::test]
async fn readyz_turns_unready_when_postgresql_is_unreachable() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let ops = serve_ops(&db, &mb.url, shared).await;
    let _lock = take_lock(&db, &ops).await;
    assert_eq!(get(ops.addr, "/readyz").await.0, 200);

    // Close the database to new sessions and end the existing ones (this
    // test's own database; the server keeps running for everyone else).
    let mut admin = sqlx::PgConnection::connect(&pg_admin_url()).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE \"{}\" ALLOW_CONNECTIONS false",
        db.name
    )))
    .execute(&mut admin)
    .await
    .unwrap();
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(&db.name)
        .execute(&mut admin)
        .await
        .unwrap();
    let (status, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["checks"]["postgres"]["ok"], false, "{body}");
    assert_eq!(body["checks"]["mailbox"]["ok"], true, "{body}");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE \"{}\" ALLOW_CONNECTIONS true",
        db.name
    )))
    .execute(&mut admin)
    .await
    .unwrap();
}

#[tokio::test]
async fn readyz_reports_a_stalled_watermark_until_ingest_moves_it() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let ops = serve_ops(&db, &mb.url, shared.clone()).await;
    let lock = take_lock(&db, &ops).await;
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    for f in own_files().iter().take(3) {
        mb.insert(&std::fs::read_to_string(f).unwrap()).await;
    }
    let (status, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(status, 503, "rows wait and W never moved: {body}");
    assert_eq!(body["checks"]["watermark"]["ok"], false, "{body}");

    run_under(&r, "ingest-sweep", Some(&lock)).await;
    assert_eq!(get(ops.addr, "/readyz").await.0, 200);
    mb.insert(&std::fs::read_to_string(&own_files()[3]).unwrap())
        .await;
    clock.advance(Duration::minutes(2));
    assert_eq!(
        get(ops.addr, "/readyz").await.0,
        200,
        "W moved within msgx.http.watermark-stall"
    );
    clock.advance(Duration::seconds(1));
    let (status, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body["checks"]["watermark"]["detail"]
            .as_str()
            .unwrap_or("")
            .contains("1 row(s)"),
        "{body}"
    );
    run_under(&r, "ingest-sweep", Some(&lock)).await;
    assert_eq!(get(ops.addr, "/readyz").await.0, 200);
}

#[tokio::test]
async fn readyz_names_a_job_that_has_not_completed_a_run_within_its_schedule() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let ops = serve_ops(&db, &mb.url, shared.clone()).await;
    let _lock = take_lock(&db, &ops).await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let watch = Arc::new(JobWatch::new(
        shared.now(),
        Duration::seconds(60),
        Duration::milliseconds(250),
        [
            ("pump-drain", "*/1 * * * * *", Duration::seconds(20)),
            ("retention", "0 30 19 * * *", Duration::seconds(120)),
        ],
    ));
    ops.jobs.set(watch.clone()).expect("slot empty");
    let (status, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checks"]["jobs"]["ok"], true, "{body}");

    // Runs that fail (as a panicking one is recorded) never complete: after
    // the next tick + the budget + the margin, /readyz names the job.
    watch.started("pump-drain", shared.now());
    watch.finished(
        "pump-drain",
        shared.now(),
        Some("FAILED: the job panicked: boom".into()),
    );
    clock.advance(Duration::seconds(82));
    let (status, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    let detail = body["checks"]["jobs"]["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("pump-drain") && detail.contains("boom"),
        "{body}"
    );
    assert!(
        !detail.contains("retention"),
        "a nightly job is not due yet: {body}"
    );

    // A real run that completes makes it ready again.
    let s = r
        .run("pump-drain", &RunOptions::default(), Some(&_lock.guard()))
        .await
        .unwrap();
    watch.finished("pump-drain", shared.now(), s.error.clone());
    let (status, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(status, 200, "{body}");
}

/// Issue 17 item 4: a head held by an outage (the pump's mailbox
/// unreachable) shows in `msgx_pipeline_head_blocked_seconds` from its
/// first failure, and turns `/readyz` unready (check `head`) once it has
/// failed for `msgx.pipeline.head-blocked-alert` (5m); both clear when the
/// head is processed.
#[tokio::test]
async fn readyz_and_the_gauge_show_a_head_blocked_by_an_outage() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><TYPE>LDM</TYPE><STYP>X</STYP></META></MSG>",
    )
    .await;
    let (clock, shared) = manual_clock();
    let ops = serve_ops(&db, &mb.url, shared.clone()).await;
    let lock = take_lock(&db, &ops).await;
    let (up, _s1) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let (down, _s2) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.mailbox.url = "mysql://msgx:msgx@127.0.0.1:1/nowhere".into();
    });
    let _turn = SCRAPES.lock().await;
    let blocked = |page: &str| value(page, "msgx_pipeline_head_blocked_seconds", &[]);
    run_under(&up, "ingest-sweep", Some(&lock)).await;
    assert_eq!(
        blocked(&get(ops.addr, "/metrics").await.1),
        Some(0.0),
        "PENDING is not failing"
    );

    for minute in 1..=5 {
        run_under(&down, "pump-drain", Some(&lock)).await;
        clock.advance(Duration::minutes(1));
        let seconds = f64::from(minute * 60);
        assert_eq!(blocked(&get(ops.addr, "/metrics").await.1), Some(seconds));
        let (status, body) = get_json(ops.addr, "/readyz").await;
        let ready = minute < 5;
        assert_eq!(
            status,
            if ready { 200 } else { 503 },
            "{minute} min: {body}"
        );
        assert_eq!(body["checks"]["head"]["ok"], ready, "{minute} min: {body}");
    }
    let (_, body) = get_json(ops.addr, "/readyz").await;
    let detail = body["checks"]["head"]["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("head 1")
            && detail.contains("INFRA")
            && detail.contains("cannot read raw message"),
        "{body}"
    );
    assert_eq!(
        body["checks"]["mailbox"]["ok"], true,
        "only the head fails: {body}"
    );

    // The mailbox is back: the head is processed and both clear.
    run_under(&up, "pump-drain", Some(&lock)).await;
    assert_eq!(blocked(&get(ops.addr, "/metrics").await.1), Some(0.0));
    let (status, body) = get_json(ops.addr, "/readyz").await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn the_daemon_serves_the_endpoints_and_a_standby_is_alive_but_not_ready() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    load_own(&mb).await;
    let profile = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    std::fs::write(
        profile.path(),
        "description = \"test\"\n[jobs]\ningest-sweep = \"* * * * * *\"\npump-drain = \"* * * * * *\"\n",
    )
    .unwrap();
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.daemon.schedule = profile.path().display().to_string();
        c.msgx.http.metrics_listen = Some("127.0.0.1:0".into());
        c.msgx.ignore.push("FLOP-ESTT".into()); // so the queue drains without waiting out backoffs
    });
    let active = Daemon::spawn(cfg.path(), &[]);
    let limit = std::time::Duration::from_secs(30);
    wait_until("the ops address in the log", limit, || async {
        active.ops_address().is_some()
    })
    .await;
    let addr = active.ops_address().expect("logged");
    wait_until("readyz 200", limit, || async {
        get(addr, "/readyz").await.0 == 200
    })
    .await;
    assert_eq!(get(addr, "/healthz").await.0, 200);
    wait_until("the backlog to drain", limit, || async {
        let page = get(addr, "/metrics").await.1;
        value(&page, "msgx_pipeline_messages", &[("state", "PENDING")]) == Some(0.0)
            && value(
                &page,
                "msgx_pipeline_backlog_oldest_unprocessed_seconds",
                &[],
            ) == Some(0.0)
    })
    .await;
    let page = get(addr, "/metrics").await.1;
    assert_eq!(
        value(&page, "msgx_instance_lock_held", &[]),
        Some(1.0),
        "{page}"
    );
    assert!(
        value(
            &page,
            "msgx_job_runs_total",
            &[("job", "pump-drain"), ("outcome", "SUCCEEDED")]
        )
        .unwrap_or(0.0)
            >= 1.0
    );
    assert!(value(&page, "msgx_scheduler_heartbeat_timestamp_seconds", &[]).unwrap_or(0.0) > 0.0);

    let standby = Daemon::spawn(cfg.path(), &["--standby"]);
    wait_until("the standby's ops address", limit, || async {
        standby.ops_address().is_some()
    })
    .await;
    let saddr = standby.ops_address().expect("logged");
    assert_ne!(saddr, addr);
    wait_until("the standby's healthz", limit, || async {
        get(saddr, "/healthz").await.0 == 200
    })
    .await;
    let (status, body) = get_json(saddr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["checks"]["instance_lock"]["ok"], false, "{body}");
    let page = get(saddr, "/metrics").await.1;
    assert_eq!(value(&page, "msgx_instance_lock_held", &[]), Some(0.0));
}

/// Issue 32 item 3 (H3): `msgx msg show` prints the console's bounded view
/// of a large message (the first 256 KiB of the raw XML, the first 200
/// records decoded) and says it is cut; `--full` prints all of it.
#[tokio::test]
async fn msg_show_is_bounded_unless_full() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let xml = common::sis::large_schd(4_000);
    let id = mb.insert(&xml).await.to_string();
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let flights = |v: &serde_json::Value| {
        v["decoded"]["message"]["kind"]["flights"]
            .as_array()
            .map_or(0, Vec::len)
    };

    let out = msgx(cfg.path(), &["msg", "show", &id, "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(out.stdout.len() < 1 << 20, "{} bytes", out.stdout.len());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&v["cut"], &v["raw_cut"]), (&true.into(), &true.into()));
    assert_eq!(v["raw_bytes"], xml.len());
    let raw = v["raw"].as_str().expect("the raw text's start");
    assert!(
        raw.len() <= 256 << 10 && raw.len() > 250 << 10,
        "{}",
        raw.len()
    );
    assert!(xml.starts_with(raw));
    assert_eq!(
        v["records"],
        serde_json::json!({"first": 0, "shown": 200, "total": 4000})
    );
    assert_eq!(flights(&v), 200);

    let out = msgx(cfg.path(), &["msg", "show", &id, "--json", "--full"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&v["cut"], &v["raw_cut"]), (&false.into(), &false.into()));
    assert_eq!(v["raw"], xml.as_str());
    assert_eq!(flights(&v), 4000);

    let out = msgx(cfg.path(), &["msg", "show", &id]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.len() < 1 << 20, "{} bytes", shown.len());
    assert!(
        shown.contains("4000 (records 1–200 shown)") && shown.contains("FLTR 200: FLID 100199"),
        "{}",
        &shown[..2000]
    );
    assert!(!shown.contains("FLTR 201:"));
    assert!(
        shown.contains(&format!(" of {} bytes):\n<?xml", xml.len()))
            && shown.contains("--full shows the whole message"),
        "{}",
        &shown[..2000]
    );
    let out = msgx(cfg.path(), &["msg", "show", &id, "--full"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains(&xml) && shown.contains("FLTR 4000: FLID 103999"));
    assert!(!shown.contains("cut:"));
}

#[tokio::test]
async fn flight_show_and_msg_show_explain_fixture_data() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let ids = load_own(&mb).await;
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain_past_backoff(&r, &clock).await;
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let id_of = |name: &str| {
        ids.iter()
            .find(|(_, f)| {
                f.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(name))
            })
            .map(|(id, _)| *id)
            .expect("fixture")
    };

    // flight show: the schd projection and the messages that changed it.
    let out = msgx(cfg.path(), &["flight", "show", "9001", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let state = &v["state"];
    assert_eq!(state["flid"], 9001);
    assert_eq!(state["state"], "ACTIVE");
    let schd: Vec<u8> = sqlx::query_scalar(
        "SELECT payload FROM msg_event WHERE target = 'KAFKA:schd' AND partition_key = '9001'",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    let schd: serde_json::Value = serde_json::from_slice(&schd).unwrap();
    assert_eq!(state, &schd, "the same JSON as the KAFKA:schd projection");
    let msgs = v["messages"].as_array().expect("messages");
    let versions: Vec<i64> = msgs
        .iter()
        .map(|m| m["state_version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions.first().copied(), state["state_version"].as_i64());
    assert!(
        versions.windows(2).all(|w| w[0] > w[1]),
        "newest first: {versions:?}"
    );
    let last = msgs.last().unwrap();
    assert_eq!(last["msg_id"], id_of("003"), "created by the SCHD DNLD");
    assert_eq!(last["kind"], "SCHD-DNLD");
    assert_eq!(last["outcome"], "SUCCEEDED");
    assert!(
        msgs.iter()
            .any(|m| m["msg_id"] == id_of("014") && m["kind"] == "FLOP-CTOT"),
        "{msgs:?}"
    );
    // The A-CDM milestones (issue 36 item 2): CTOT set by a FLOP-CTOT.
    let ctot = &state["milestones"]["CTOT"];
    assert_eq!(
        (&ctot["type"], &ctot["source"]),
        (&serde_json::json!("CAL"), &serde_json::json!("CTOT"))
    );
    assert_eq!(ctot["time"], state["ctot"]);
    assert!(
        msgs.iter()
            .any(|m| m["msg_id"] == ctot["msg_id"] && m["kind"] == "FLOP-CTOT"),
        "{ctot} {msgs:?}"
    );
    let out = msgx(cfg.path(), &["flight", "show", "9001"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("FLOP-CTOT"));
    let line = shown
        .lines()
        .find(|l| l.trim_start().starts_with("CTOT "))
        .unwrap_or_else(|| panic!("no CTOT milestone line: {shown}"));
    assert!(
        line.contains("CAL") && line.contains(&ctot["msg_id"].to_string()),
        "{line}"
    );
    let out = msgx(cfg.path(), &["flight", "show", "4242"]);
    assert_eq!(code(&out), 1, "{}", text(&out));

    // msg show: the record, the raw XML and its decoding.
    let malformed = id_of("027");
    let out = msgx(
        cfg.path(),
        &["msg", "show", &malformed.to_string(), "--json"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["record"]["state"], "DEAD");
    assert_eq!(v["record"]["error_class"], "MALFORMED");
    assert_eq!(v["mailbox"], "present");
    let file =
        std::fs::read_to_string(Path::new(OWN).join("027-FLOP-DELY-bad-duration.xml")).unwrap();
    assert_eq!(v["raw"], file.as_str());
    assert!(v["decoded"]["error"].is_object(), "{v}");
    let ctot = id_of("014");
    let out = msgx(cfg.path(), &["msg", "show", &ctot.to_string(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["record"]["state"], "SUCCEEDED");
    assert_eq!(v["decoded"]["message"]["meta"]["styp"], "CTOT", "{v}");
    assert_eq!(v["flights"][0]["flid"], "9001");
    // Purged from the mailbox: the record stays, the raw text is gone.
    mb.exec(&format!("DELETE FROM cminmsgs WHERE CMINMSGS_ID = {ctot}"))
        .await;
    let out = msgx(cfg.path(), &["msg", "show", &ctot.to_string()]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("purged") && shown.contains("SUCCEEDED"),
        "{shown}"
    );
    let out = msgx(cfg.path(), &["msg", "show", "999999"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
}

#[tokio::test]
async fn holes_lists_the_open_and_released_holes_and_late_rows() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let files = own_files();
    let xml = |i: usize| std::fs::read_to_string(&files[i]).unwrap();
    let (clock, shared) = manual_clock();
    // The time rule (tests/it/hole_evidence.rs releases on evidence): the hole
    // stays open until max-commit-delay.
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.pipeline.hole_evidence = false
    });
    mb.insert(&xml(0)).await;
    let lost = mb.insert_rolled_back(&xml(1)).await;
    mb.insert(&xml(2)).await;
    run(&r, "ingest-sweep").await;
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let out = msgx(cfg.path(), &["holes", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["open"]["at_id"], lost, "{v}");
    assert_eq!(v["released"], serde_json::json!([]));

    clock.advance(Duration::minutes(1));
    run(&r, "ingest-sweep").await;
    let out = msgx(cfg.path(), &["holes", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["open"].is_null(), "{v}");
    assert_eq!(v["released"][0]["first_id"], lost, "{v}");
    assert_eq!(v["released"][0]["reason"], "max-commit-delay", "{v}");
    // A late commit inside the released hole.
    mb.exec(&format!(
        "INSERT INTO cminmsgs (CMINMSGS_ID, CMINMSGS_CLOB_MSG, CMINMSGS_STATUS) VALUES ({lost}, 'x', 'VALID')"
    ))
    .await;
    // Re-checked once msgx.pipeline.late-row-recheck has passed since the release.
    clock.advance(Duration::minutes(1));
    run(&r, "ingest-sweep").await;
    let out = msgx(cfg.path(), &["holes"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains(&format!("ID {lost}")), "{shown}");
    assert!(shown.contains("(max-commit-delay)"), "{shown}");
    assert!(shown.contains("not enqueued"), "{shown}");
}

#[test]
fn the_systemd_units_verify() {
    let Ok(probe) = std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output()
    else {
        println!("SKIPPED: systemd-analyze is not installed; the units were not verified");
        return;
    };
    assert!(probe.status.success());
    let dir = tempfile::tempdir().unwrap();
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let mut units = Vec::new();
    for entry in std::fs::read_dir(&deploy).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "service") {
            // The units name the installed binary; verify against the built one.
            let text = std::fs::read_to_string(&path)
                .unwrap()
                .replace("/usr/local/bin/msgx", &msgx_bin().display().to_string());
            let copy = dir.path().join(path.file_name().unwrap());
            std::fs::write(&copy, text).unwrap();
            units.push(copy);
        }
    }
    assert!(units.len() >= 2, "msgx.service and the standby variant");
    let out = std::process::Command::new("systemd-analyze")
        .arg("verify")
        .args(&units)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}", text(&out));
    let ours: Vec<&str> = stderr.lines().filter(|l| l.contains("msgx")).collect();
    assert!(ours.is_empty(), "warnings about our units: {ours:?}");
}

#[test]
fn the_crontab_and_its_daemon_schedule_fit_together() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let profile = msgx::jobs::profile::Profile::resolve(
        &root.join("schedule-pipeline.toml").display().to_string(),
    )
    .expect("profile loads");
    assert_eq!(profile.problems(), Vec::<String>::new());
    // The pipeline runs as in the full daemon schedule: polled, and chained
    // (before issue 20 this file had no [then] table, so each hop waited a tick).
    let daemon = msgx::jobs::profile::Profile::resolve("daemon").expect("daemon profile");
    assert_eq!(profile.then, daemon.then);
    for job in ["ingest-sweep", "pump-drain", "dispatch-msg"] {
        assert_eq!(profile.jobs.get(job), daemon.jobs.get(job), "{job}");
    }
    let cron = std::fs::read_to_string(root.join("msgx.cron")).unwrap();
    let jobs: Vec<&str> = cron
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split("msgx run ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    assert_eq!(
        jobs,
        ["archive-proc-state", "flight-history-clean", "retention"]
    );
    for job in jobs {
        assert!(msgx::jobs::manifest::find(job).is_some(), "{job} exists");
        assert!(
            !profile.jobs.contains_key(job),
            "{job} runs from cron, so the daemon's schedule leaves it out"
        );
    }
}

/// Every series of `name` on the page: (labels, value).
fn series<'p>(page: &'p str, name: &str) -> Vec<(&'p str, f64)> {
    page.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(name)?.strip_prefix('{')?;
            let (labels, v) = rest.rsplit_once("} ")?;
            Some((labels, v.parse().ok()?))
        })
        .collect()
}

/// Issue 18 item 4: the unknown elements the codec keeps are counted per
/// TYPE-STYP and name with bounded labels (a FAILED message's retries do not
/// count again), logged once per name per run, and listed by `msg show`.
/// On the code before, none of it existed (no metric, no log line, `msg show`
/// printed only the FLOP-level NOTE and had no `unknown_elements`).
#[tokio::test]
async fn unknown_elements_are_counted_logged_once_per_name_and_listed() {
    use msgx::pipeline::unknown::MAX_SERIES;
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let with_zzzz = |xml: String| xml.replace("</FLTR>", "<ZZZZ>x</ZZZZ></FLTR>");
    let schd = with_zzzz(common::sis::schd_one_flight(700_001, 9003));
    mb.insert(&schd).await;
    // An unsupported SCHD subtype fails on its first attempt and is retried.
    let failing = with_zzzz(common::sis::schd_one_flight(700_002, 9004))
        .replace("<STYP>DNLD</STYP>", "<STYP>XXXX</STYP>");
    let failing_id = mb.insert(&failing).await;
    let gtdt =
        std::fs::read_to_string(Path::new(OWN).join("026-FLOP-GTDT-unknown-element.xml")).unwrap();
    let gtdt_id = mb.insert(&gtdt).await;
    mb.insert(&gtdt.replace("<SEQN>500026</SEQN>", "<SEQN>700003</SEQN>"))
        .await;
    // A hostile sender: 300 distinct names and one too long to be a label.
    let hostile: String = (1..=300).map(|i| format!("<Q{i:03}>1</Q{i:03}>")).collect();
    let hostile = gtdt
        .replace("<SEQN>500026</SEQN>", "<SEQN>700004</SEQN>")
        .replace(
            "<NOTE>sent by a newer AODB</NOTE>",
            &format!("{hostile}<ABCDEFGHIJKLMNOPQRSTUVWXYZ>1</ABCDEFGHIJKLMNOPQRSTUVWXYZ>"),
        );
    mb.insert(&hostile).await;

    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    let _turn = SCRAPES.lock().await;
    let metrics = msgx::prometheus::install().expect("recorder");
    let name = "msgx_codec_unknown_elements_total";
    let count = |page: &str, kind: &str, n: &str| {
        value(page, name, &[("kind", kind), ("name", n)]).unwrap_or(0.0)
    };
    let before = metrics.render();
    let total = |page: &str| series(page, name).iter().map(|(_, v)| v).sum::<f64>();
    let (logs, _guard) = capture_logs();
    drain_past_backoff(&r, &clock).await;
    let after = metrics.render();

    let attempts: i32 = sqlx::query_scalar("SELECT attempts FROM proc_state WHERE msg_id = $1")
        .bind(failing_id)
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert!(
        attempts >= 2,
        "the unsupported SCHD was retried: {attempts}"
    );
    for (kind, n, delta) in [
        ("SCHD-DNLD", "ZZZZ", 1.0),
        ("SCHD-_other", "ZZZZ", 1.0),
        // The hostile message keeps the sample's GTXX.
        ("FLOP-GTDT", "GTXX", 3.0),
        ("FLOP-GTDT", "NOTE", 2.0),
    ] {
        assert_eq!(
            count(&after, kind, n) - count(&before, kind, n),
            delta,
            "{kind} {n}"
        );
    }
    assert_eq!(
        total(&after) - total(&before),
        1.0 + 1.0 + 3.0 + 2.0 + 301.0
    );
    let lines = series(&after, name);
    assert!(
        lines.len() <= MAX_SERIES + 2,
        "the label set is bounded: {} series",
        lines.len()
    );
    assert!(
        count(&after, "FLOP-GTDT", "_other") >= 300.0 + 1.0 - MAX_SERIES as f64,
        "the names past the cap and the overlong one: {lines:?}"
    );

    let logs = logs.text();
    let logged = |n: &str| {
        logs.lines()
            .filter(|l| l.contains("Unknown element kept") && l.contains(&format!("name={n} ")))
            .count()
    };
    assert_eq!(
        logged("ZZZZ"),
        1,
        "two messages, one run, one line:\n{logs}"
    );
    assert_eq!(logged("GTXX"), 1, "{logs}");
    assert_eq!(logged("NOTE"), 1, "{logs}");
    assert_eq!(
        logs.lines()
            .filter(|l| l.contains("More unknown element names in this run"))
            .count(),
        1,
        "{logs}"
    );
    assert!(
        logs.lines()
            .filter(|l| l.contains("Unknown element kept"))
            .count()
            <= 3 * 100,
        "at most 100 names per run"
    );

    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let out = msgx(cfg.path(), &["msg", "show", &gtdt_id.to_string(), "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = v["unknown_elements"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|u| u["path"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(paths, ["MSG/FLOP/NOTE", "MSG/FLOP/GTDT/GTXX"]);
    let out = msgx(cfg.path(), &["msg", "show", &gtdt_id.to_string()]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("unknown elements (2; kept, not applied)")
            && shown.contains("MSG/FLOP/GTDT/GTXX: <GTXX>bus gate</GTXX>"),
        "{shown}"
    );
}
