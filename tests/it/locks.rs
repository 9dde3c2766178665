//! One active instance (issue 2, item 6) against a real PostgreSQL: the
//! instance lock, per-job locks, and one JOB_RUN row per run.

use crate::common;

use common::*;
use msgx::instance_lock::{AdvisoryLock, LockKey};

async fn job_runs(db: &TestDb) -> Vec<(String, String, String)> {
    sqlx::query_as("SELECT job, trigger, outcome FROM job_run ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_pipeline_job_is_refused_while_an_instance_is_active() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let held = AdvisoryLock::try_acquire(&db.url, LockKey::instance(), "msgx daemon test-holder")
        .await
        .unwrap()
        .expect("lock is free");
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let out = msgx(cfg.path(), &["run", "ingest-sweep"]);
    assert_eq!(code(&out), 4, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("test-holder"), "names the holder: {err}");
    assert_eq!(
        job_runs(&db).await,
        vec![("ingest-sweep".into(), "cli".into(), "SKIPPED_LOCKED".into())]
    );

    held.release().await;
    let out = msgx(cfg.path(), &["run", "ingest-sweep"]);
    assert_eq!(
        code(&out),
        0,
        "free lock: the run goes ahead: {}",
        text(&out)
    );
}

#[tokio::test]
async fn a_second_run_of_the_same_maintenance_job_is_refused() {
    let db = TestDb::migrated().await;
    let held = AdvisoryLock::try_acquire(
        &db.url,
        LockKey::job("snaplog-purge"),
        "msgx cli snaplog-purge other",
    )
    .await
    .unwrap()
    .expect("lock is free");
    let cfg = db.config_file();
    let out = msgx(cfg.path(), &["run", "snaplog-purge"]);
    assert_eq!(code(&out), 4, "{}", text(&out));
    // A different maintenance job is not blocked by it.
    let out = msgx(cfg.path(), &["run", "retention"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    held.release().await;
    let out = msgx(cfg.path(), &["run", "snaplog-purge"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let outcomes: Vec<String> = job_runs(&db)
        .await
        .into_iter()
        .map(|r| format!("{}:{}", r.0, r.2))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            "snaplog-purge:SKIPPED_LOCKED",
            "retention:SUCCEEDED",
            "snaplog-purge:SUCCEEDED"
        ]
    );
}

#[tokio::test]
async fn a_maintenance_job_runs_beside_an_active_instance() {
    let db = TestDb::migrated().await;
    let _held = AdvisoryLock::try_acquire(&db.url, LockKey::instance(), "msgx daemon active")
        .await
        .unwrap()
        .expect("lock is free");
    let cfg = db.config_file();
    let out = msgx(cfg.path(), &["run", "retention", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let summary: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(summary["outcome"], "SUCCEEDED");
}

#[tokio::test]
async fn every_run_writes_exactly_one_job_run_row() {
    let db = TestDb::migrated().await;
    let cfg = db.config_file();
    for job in [
        "retention",
        "snaplog-purge",
        "event-cleanup",
        "request-expiry",
        "retention",
    ] {
        let out = msgx(cfg.path(), &["run", job]);
        assert_eq!(code(&out), 0, "{job}: {}", text(&out));
    }
    let rows = job_runs(&db).await;
    assert_eq!(rows.len(), 5, "{rows:?}");
    assert!(
        rows.iter().all(|r| r.1 == "cli" && r.2 == "SUCCEEDED"),
        "{rows:?}"
    );
    let unfinished: i64 =
        sqlx::query_scalar("SELECT count(*) FROM job_run WHERE finished_at IS NULL")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(unfinished, 0);
}

#[tokio::test]
async fn unknown_job_is_a_usage_error() {
    let db = TestDb::migrated().await;
    let cfg = db.config_file();
    let out = msgx(cfg.path(), &["run", "no-such-job"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
}

#[tokio::test]
async fn a_lost_lock_session_is_detected() {
    let db = TestDb::migrated().await;
    let lock = AdvisoryLock::try_acquire(&db.url, LockKey::instance(), "msgx daemon victim")
        .await
        .unwrap()
        .expect("lock is free");
    let guard = lock.guard();
    let fence = lock.fence();
    assert!(lock.check().await && guard.is_active());
    assert!(
        fence.verify(&db.pool).await.unwrap(),
        "the fence sees the holder"
    );
    sqlx::query("SELECT pg_terminate_backend($1)")
        .bind(lock.pid())
        .execute(&db.pool)
        .await
        .unwrap();
    wait_until(
        "the backend to go",
        std::time::Duration::from_secs(5),
        || async { !fence.verify(&db.pool).await.unwrap_or(true) },
    )
    .await;
    assert!(!lock.check().await, "check fails once the session is gone");
    assert!(!guard.is_active(), "the guard turns lost");
    // The lock is free for another instance at once.
    let next = AdvisoryLock::try_acquire(&db.url, LockKey::instance(), "msgx daemon next")
        .await
        .unwrap();
    assert!(next.is_some());
}
