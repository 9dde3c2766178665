//! The scheduler daemon as a real process against a real PostgreSQL: it runs
//! its schedule and records every run, refuses a second active instance,
//! hands over to a hot standby when its lock session dies, and stops cleanly
//! on SIGTERM. (Processes cannot share a manual clock, so these tests wait for
//! observable states with a bounded poll; no logic under test sleeps.)

use crate::common;

use common::*;
use msgx::instance_lock::{self, LockKey};
use std::io::Write;
use std::time::Duration;

/// A config whose schedule runs `retention` and `snaplog-purge` every second.
fn daemon_config(db: &TestDb) -> (tempfile::NamedTempFile, tempfile::NamedTempFile) {
    profile_config(
        db,
        "description = \"test\"\n[jobs]\nretention = \"* * * * * *\"\nsnaplog-purge = \"* * * * * *\"\n",
        |_| {},
    )
}

/// A config whose schedule profile is `profile` (TOML), 5 s shutdown, then `tweak`.
fn profile_config(
    db: &TestDb,
    profile: &str,
    tweak: impl FnOnce(&mut msgx::config::Config),
) -> (tempfile::NamedTempFile, tempfile::NamedTempFile) {
    let mut file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    file.write_all(profile.as_bytes()).unwrap();
    let path = file.path().display().to_string();
    let cfg = db.config_file_with(|c| {
        c.msgx.daemon.schedule = path;
        c.msgx.daemon.shutdown_timeout = "5s".parse().unwrap();
        tweak(c);
    });
    (cfg, file)
}

/// `n` malformed mailbox rows in one statement (each ends DEAD at once).
async fn malformed_rows(mb: &TestMailbox, n: u32) {
    mb.exec(&format!(
        "INSERT INTO cminmsgs (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS) \
         SELECT '<MSG><META>', NOW(), 'VALID' FROM seq_1_to_{n}"
    ))
    .await;
}

/// A profile of `ingest-sweep` at `ingest` chaining `pump-drain`, whose own
/// cron never fires during a test (1 January only).
fn ingest_then_pump(ingest: &str) -> String {
    format!(
        "[jobs]\ningest-sweep = \"{ingest}\"\npump-drain = \"0 0 0 1 1 *\"\n\
         [then]\ningest-sweep = [\"pump-drain\"]\n"
    )
}

/// SIGTERM to `d`: it exits 0 and leaves the instance lock free.
async fn stops_cleanly_on_sigterm(db: &TestDb, d: &mut Daemon) {
    d.terminate();
    assert_eq!(
        d.wait_exit(Duration::from_secs(20)).await,
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
}

async fn daemon_runs(db: &TestDb, instance_pid: u32) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM job_run WHERE trigger = 'daemon' AND instance LIKE $1")
        .bind(format!("%:{instance_pid}"))
        .fetch_one(&db.pool)
        .await
        .unwrap()
}

/// A SIGTERM that arrives while the daemon is still starting (here: its
/// mailbox probe waits on a server that accepts and never answers) is kept
/// and honoured once it can stop: exit 0, the lock not left taken. Before
/// the handler was installed first thing, SIGTERM's default action killed
/// the process in that window (no exit code).
#[tokio::test]
async fn a_sigterm_while_the_daemon_starts_stops_it_cleanly() {
    let db = TestDb::migrated().await;
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = silent.local_addr().expect("addr").port();
    let (accepted_tx, mut accepted) = tokio::sync::mpsc::unbounded_channel();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
            let _ = accepted_tx.send(());
        }
    });
    let (cfg, _profile) = profile_config(&db, "[jobs]\nretention = \"0 0 0 1 1 *\"\n", |c| {
        c.msgx.mailbox.url = format!("mysql://msgx:msgx@127.0.0.1:{port}/x");
        c.msgx.mailbox.timeout = "3s".parse().expect("duration");
    });
    let mut d = Daemon::spawn(cfg.path(), &[]);
    tokio::time::timeout(Duration::from_secs(20), accepted.recv())
        .await
        .expect("the daemon probes the mailbox at start")
        .expect("a connection");
    stops_cleanly_on_sigterm(&db, &mut d).await;
    holder.abort();
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

    stops_cleanly_on_sigterm(&db, &mut d).await;
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

/// `[then]` (issue 11, end-to-end latency): pump-drain's own cron never fires
/// during the test (1 January only), so the message is processed only because
/// the ingest run that enqueued it started pump-drain at once.
#[tokio::test]
async fn a_then_chain_starts_the_next_job_when_the_first_handled_items() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let mut profile = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    profile
        .write_all(
            b"[jobs]\ningest-sweep = \"* * * * * *\"\npump-drain = \"0 0 0 1 1 *\"\n\
              [then]\ningest-sweep = [\"pump-drain\"]\n",
        )
        .unwrap();
    let path = profile.path().display().to_string();
    let cfg = db.config_file_with(|c| {
        c.msgx.daemon.schedule = path;
        c.msgx.daemon.shutdown_timeout = "5s".parse().unwrap();
        c.msgx.mailbox.url = mb.url.clone();
    });
    let _d = Daemon::spawn(cfg.path(), &[]);
    let id = mb.insert("<MSG><META><SNDR>AODB</SNDR>").await;
    let pump_runs = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM job_run WHERE job = 'pump-drain' AND trigger = 'daemon' AND items > 0",
        )
        .fetch_one(&db.pool)
        .await
        .unwrap()
    };
    wait_until(
        "the chained pump-drain to finish the message and record its run",
        Duration::from_secs(20),
        || async {
            common::queries::state_of(&db, id).await.as_deref() == Some("DEAD")
                && pump_runs().await > 0
        },
    )
    .await;
    assert_eq!(
        pump_runs().await,
        1,
        "one chained pump-drain run handled the message"
    );
}

/// Issue 20: a pipeline run that stopped at its bound with work left runs
/// again at once. pump-drain's own cron never fires during the test; one
/// ingest run enqueues 2,500 messages and starts it once through `[then]`; its
/// first run stops at the manifest's 2,000 and the rest are processed only
/// because the run reported more work (before, they waited for the next tick:
/// up to a second of an idle pump per 2,000 messages of a backlog).
#[tokio::test]
async fn a_pipeline_run_that_stopped_at_its_bound_runs_again_at_once() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    malformed_rows(&mb, 2500).await;
    let (cfg, _profile) = profile_config(&db, &ingest_then_pump("* * * * * *"), |c| {
        c.msgx.mailbox.url = mb.url.clone()
    });
    let _d = Daemon::spawn(cfg.path(), &[]);
    let dead = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM proc_state WHERE state = 'DEAD'")
            .fetch_one(&db.pool)
            .await
            .unwrap()
    };
    wait_until(
        "all 2,500 messages processed",
        Duration::from_secs(60),
        || async { dead().await == 2500 },
    )
    .await;
    let runs: Vec<i64> = sqlx::query_scalar(
        "SELECT items FROM job_run WHERE job = 'pump-drain' AND trigger = 'daemon' ORDER BY id",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(runs, [2000, 500], "the bounded run, then at once the rest");
}

/// Issue 17, item 1: a panic inside a job run is recorded FAILED with the
/// panic message, counted, and the next tick runs the job again (before, the
/// running flag stayed set and every later tick was skipped).
#[tokio::test]
async fn a_panicking_run_is_recorded_failed_and_the_next_tick_runs_again() {
    let db = TestDb::migrated().await;
    let (cfg, _profile) = profile_config(&db, "[jobs]\nretention = \"* * * * * *\"\n", |c| {
        c.msgx.http.metrics_listen = Some("127.0.0.1:0".into());
    });
    let mut d = Daemon::spawn_with_env(cfg.path(), &[], &[("MSGX_FAULT", "panic:job:retention:2")]);
    let runs = |outcome: &'static str| {
        let pool = db.pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM job_run WHERE job = 'retention' AND trigger = 'daemon' AND outcome = $1",
            )
            .bind(outcome)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    wait_until(
        "two panicking runs, then succeeding ones",
        Duration::from_secs(30),
        || async { runs("SUCCEEDED").await >= 2 },
    )
    .await;
    assert_eq!(runs("FAILED").await, 2, "{}", d.output());
    let errors: Vec<String> = sqlx::query_scalar(
        "SELECT error FROM job_run WHERE job = 'retention' AND outcome = 'FAILED' ORDER BY id",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    for e in &errors {
        assert!(
            e.contains("panicked") && e.contains("injected fault at job:retention"),
            "{e}"
        );
    }
    let addr = d
        .ops_address()
        .unwrap_or_else(|| panic!("ops endpoints logged: {}", d.output()));
    let (_, page) = http(addr, "GET", "/metrics", "").await;
    assert!(
        page.lines()
            .any(|l| l.starts_with("msgx_job_panics_total{job=\"retention\"} 2")),
        "{page}"
    );
    assert!(d.output().contains("Job run panicked"), "{}", d.output());
    d.terminate();
    assert_eq!(
        d.wait_exit(Duration::from_secs(15)).await,
        0,
        "{}",
        d.output()
    );
}

/// Issue 16, item 7: the daemon's log files are 0640 and rotated files
/// beyond `msgx.log.retention` days are deleted.
#[tokio::test]
async fn log_files_are_private_and_old_ones_are_pruned() {
    use std::os::unix::fs::PermissionsExt;
    let db = TestDb::migrated().await;
    let logs = tempfile::tempdir().unwrap();
    for day in 1..=9 {
        let old = logs.path().join(format!("msgx.log.2026-01-0{day}"));
        std::fs::write(&old, "old\n").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::write(logs.path().join("unrelated.txt"), "keep").unwrap();
    let (_, profile) = daemon_config(&db);
    let dir = logs.path().display().to_string();
    let path = profile.path().display().to_string();
    let cfg = db.config_file_with(|c| {
        c.msgx.daemon.schedule = path;
        c.msgx.log.dir = dir;
        c.msgx.log.retention = "3d".parse().unwrap();
    });
    let d = Daemon::spawn(cfg.path(), &[]);
    let today = logs.path().join(format!(
        "msgx.log.{}",
        chrono::Utc::now().format("%Y-%m-%d")
    ));
    wait_until(
        "today's log file has lines",
        Duration::from_secs(20),
        || async { std::fs::metadata(&today).is_ok_and(|m| m.len() > 0) },
    )
    .await;
    drop(d);
    let mut names: Vec<String> = std::fs::read_dir(logs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    let kept: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("msgx.log."))
        .collect();
    assert_eq!(
        kept.len(),
        3,
        "today's and the two newest old files: {names:?}"
    );
    assert!(names.contains(&"unrelated.txt".to_string()), "{names:?}");
    for n in kept {
        let mode = std::fs::metadata(logs.path().join(n))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640, "{n}");
    }
}

/// The value of the `msgx_job_idle_runs_total` series of `job` on a
/// `/metrics` page (0 when absent).
fn idle_runs(page: &str, job: &str) -> f64 {
    let prefix = format!("msgx_job_idle_runs_total{{job=\"{job}\"}} ");
    page.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Issue 20, item 1: a `"poll"` job runs on the adaptive poll loop. Its
/// idle runs are counted in `msgx_job_idle_runs_total`, not written to
/// JOB_RUN; a run that read a row is written once, finished, and starts the
/// chain (pump-drain's own cron never fires during the test).
#[tokio::test]
async fn a_polled_ingest_counts_idle_runs_and_records_only_runs_that_did_something() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (cfg, _profile) = profile_config(&db, &ingest_then_pump("poll"), |c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.http.metrics_listen = Some("127.0.0.1:0".into());
    });
    let mut d = Daemon::spawn(cfg.path(), &[]);
    wait_until("the ops endpoints", Duration::from_secs(20), || async {
        d.ops_address().is_some()
    })
    .await;
    let addr = d
        .ops_address()
        .unwrap_or_else(|| panic!("ops endpoints logged: {}", d.output()));
    wait_until("idle polls counted", Duration::from_secs(20), || async {
        let (_, page) = http(addr, "GET", "/metrics", "").await;
        idle_runs(&page, "ingest-sweep") >= 3.0
    })
    .await;
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM job_run WHERE job = 'ingest-sweep'")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(rows, 0, "idle polls are not written to job_run");

    let id = mb.insert("<MSG><META><SNDR>AODB</SNDR>").await;
    wait_until(
        "the polled row processed through the chain",
        Duration::from_secs(20),
        || async { common::queries::state_of(&db, id).await.as_deref() == Some("DEAD") },
    )
    .await;
    wait_until("the pump run recorded", Duration::from_secs(20), || async {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM job_run WHERE job = 'pump-drain'")
            .fetch_one(&db.pool)
            .await
            .unwrap();
        n == 1
    })
    .await;
    let runs: Vec<(String, i64, Option<chrono::DateTime<chrono::Utc>>)> = sqlx::query_as(
        "SELECT outcome, items, finished_at FROM job_run WHERE job = 'ingest-sweep' ORDER BY id",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(runs.len(), 1, "one ingest run did something: {runs:?}");
    assert_eq!(runs[0].0, "SUCCEEDED");
    assert_eq!(runs[0].1, 1);
    assert!(runs[0].2.is_some(), "written finished");
    let (_, page) = http(addr, "GET", "/metrics", "").await;
    assert!(
        page.lines().any(|l| l.starts_with("msgx_job_last_success_timestamp_seconds{job=\"ingest-sweep\"}")),
        "{page}"
    );
    d.terminate();
    assert_eq!(
        d.wait_exit(Duration::from_secs(15)).await,
        0,
        "{}",
        d.output()
    );
}

/// Issue 38 item 2: ingest hands each committed round to the pump at once,
/// inside its run. With one row per round, one ingest run over 60 rows is 60
/// transactions; the pump (whose own cron never fires) starts while that
/// run is still going. Before, `[then]` started it only when the run had
/// ended and written its JOB_RUN row.
#[tokio::test]
async fn ingest_hands_each_commit_to_the_pump_before_its_run_ends() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    malformed_rows(&mb, 60).await;
    let (cfg, _profile) = profile_config(&db, &ingest_then_pump("poll"), |c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.pipeline.claim_batch = 1;
    });
    let _d = Daemon::spawn(cfg.path(), &[]);
    let first = |job: &'static str| {
        let pool = db.pool.clone();
        async move {
            sqlx::query_as::<_, (chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>, i64)>(
                "SELECT started_at, finished_at, items FROM job_run WHERE job = $1 ORDER BY id LIMIT 1",
            )
            .bind(job)
            .fetch_optional(&pool)
            .await
            .unwrap()
        }
    };
    wait_until(
        "both jobs' first runs recorded",
        Duration::from_secs(60),
        || async { first("ingest-sweep").await.is_some() && first("pump-drain").await.is_some() },
    )
    .await;
    let (Some(ingest), Some(pump)) = (first("ingest-sweep").await, first("pump-drain").await)
    else {
        unreachable!("waited for both")
    };
    assert_eq!(ingest.2, 60, "one ingest run took every row, one per round");
    assert!(
        pump.0 < ingest.1,
        "the pump started at {} while the ingest run that ended at {} was still going",
        pump.0,
        ingest.1
    );
}
