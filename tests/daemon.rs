//! The scheduler daemon as a real process against a real PostgreSQL: it runs
//! its schedule and records every run, refuses a second active instance,
//! hands over to a hot standby when its lock session dies, and stops cleanly
//! on SIGTERM. (Processes cannot share a manual clock, so these tests wait for
//! observable states with a bounded poll; no logic under test sleeps.)

mod common;

use common::*;
use msgx::instance_lock::{self, LockKey};
use std::io::Write;
use std::time::Duration;

/// A config whose schedule runs `retention` and `snaplog-purge` every second.
fn daemon_config(db: &TestDb) -> (tempfile::NamedTempFile, tempfile::NamedTempFile) {
    let mut profile = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    profile
        .write_all(b"description = \"test\"\n[jobs]\nretention = \"* * * * * *\"\nsnaplog-purge = \"* * * * * *\"\n")
        .unwrap();
    let path = profile.path().display().to_string();
    let cfg = db.config_file_with(|c| {
        c.msgx.daemon.schedule = path;
        c.msgx.daemon.shutdown_timeout = "5s".parse().unwrap();
    });
    (cfg, profile)
}

async fn daemon_runs(db: &TestDb, instance_pid: u32) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM job_run WHERE trigger = 'daemon' AND instance LIKE $1")
        .bind(format!("%:{instance_pid}"))
        .fetch_one(&db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_daemon_runs_its_schedule_and_stops_on_sigterm() {
    let db = TestDb::migrated().await;
    let (cfg, _profile) = daemon_config(&db);
    let mut d = Daemon::spawn(cfg.path(), &[]);
    let pid = d.pid();
    wait_until("two daemon runs of each job", Duration::from_secs(20), || async {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM job_run WHERE trigger = 'daemon' AND job = 'retention' AND outcome = 'SUCCEEDED'",
        )
        .fetch_one(&db.pool)
        .await
        .unwrap();
        n >= 2 && daemon_runs(&db, pid).await >= 4
    })
    .await;
    let holder = instance_lock::holder(&db.pool, LockKey::instance())
        .await
        .unwrap()
        .expect("daemon holds the lock");
    assert!(
        holder.application_name.contains(&format!(":{pid}")),
        "{holder:?}"
    );

    d.terminate();
    assert_eq!(
        d.wait_exit(Duration::from_secs(15)).await,
        0,
        "{}",
        d.output()
    );
    assert!(
        instance_lock::holder(&db.pool, LockKey::instance())
            .await
            .unwrap()
            .is_none(),
        "the lock is released on exit"
    );
    let running: i64 = sqlx::query_scalar("SELECT count(*) FROM job_run WHERE outcome = 'RUNNING'")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(running, 0, "the running batch finished before exit");
}

#[tokio::test]
async fn a_second_daemon_without_standby_exits_4() {
    let db = TestDb::migrated().await;
    let (cfg, _profile) = daemon_config(&db);
    let _first = Daemon::spawn(cfg.path(), &[]);
    wait_until(
        "the first daemon to take the lock",
        Duration::from_secs(15),
        || async {
            instance_lock::holder(&db.pool, LockKey::instance())
                .await
                .unwrap()
                .is_some()
        },
    )
    .await;
    let mut second = Daemon::spawn(cfg.path(), &[]);
    assert_eq!(
        second.wait_exit(Duration::from_secs(15)).await,
        4,
        "{}",
        second.output()
    );
    assert!(
        second.output().contains("another instance is active"),
        "{}",
        second.output()
    );
}

#[tokio::test]
async fn a_standby_takes_over_when_the_holders_session_is_terminated() {
    let db = TestDb::migrated().await;
    let (cfg, _profile) = daemon_config(&db);
    let mut active = Daemon::spawn(cfg.path(), &[]);
    let active_pid = active.pid();
    wait_until(
        "the active daemon to run jobs",
        Duration::from_secs(20),
        || async { daemon_runs(&db, active_pid).await >= 1 },
    )
    .await;
    let mut standby = Daemon::spawn(cfg.path(), &["--standby"]);
    let standby_pid = standby.pid();
    wait_until(
        "the standby to announce itself",
        Duration::from_secs(15),
        || async { standby.output().contains("Standing by") },
    )
    .await;
    assert_eq!(
        daemon_runs(&db, standby_pid).await,
        0,
        "a standby runs nothing"
    );

    let holder = instance_lock::holder(&db.pool, LockKey::instance())
        .await
        .unwrap()
        .expect("held");
    sqlx::query("SELECT pg_terminate_backend($1)")
        .bind(holder.pid)
        .execute(&db.pool)
        .await
        .unwrap();

    assert_eq!(
        active.wait_exit(Duration::from_secs(15)).await,
        4,
        "the old holder stops: {}",
        active.output()
    );
    wait_until(
        "the standby to become active and run jobs",
        Duration::from_secs(20),
        || async { daemon_runs(&db, standby_pid).await >= 1 },
    )
    .await;
    let holder = instance_lock::holder(&db.pool, LockKey::instance())
        .await
        .unwrap()
        .expect("held");
    assert!(
        holder.application_name.contains(&format!(":{standby_pid}")),
        "{holder:?}"
    );
    // No run of the old holder started after it lost the lock.
    let old_after: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM job_run o WHERE o.instance LIKE $1 AND o.started_at > \
         (SELECT min(started_at) FROM job_run n WHERE n.instance LIKE $2)",
    )
    .bind(format!("%:{active_pid}"))
    .bind(format!("%:{standby_pid}"))
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(old_after, 0, "never two active writers");

    standby.terminate();
    assert_eq!(
        standby.wait_exit(Duration::from_secs(15)).await,
        0,
        "{}",
        standby.output()
    );
}
