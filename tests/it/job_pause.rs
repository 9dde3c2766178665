//! Jobs under the operator's control (issue 37 item 4), against the real
//! PostgreSQL and real `msgx` processes: `msgx jobs pause|resume` is audited
//! and shown, `msgx run` refuses a paused job (exit 7) unless `--force`, the
//! daemon skips its scheduled starts (SKIPPED_PAUSED) and so does a standby
//! that takes over after a `kill -9` of the active daemon; `/metrics` and
//! `/readyz` show the pause. (Processes cannot share a manual clock, so the
//! daemon tests wait for observable states with a bounded poll.)

use crate::common;

use common::*;
use std::io::Write;
use std::time::Duration;

/// A config whose daemon runs `retention` and `snaplog-purge` every second,
/// with the ops endpoints on a free port.
fn every_second(db: &TestDb) -> (tempfile::NamedTempFile, tempfile::NamedTempFile) {
    let mut profile = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    profile
        .write_all(b"[jobs]\nretention = \"* * * * * *\"\nsnaplog-purge = \"* * * * * *\"\n")
        .unwrap();
    let path = profile.path().display().to_string();
    let cfg = db.config_file_with(|c| {
        c.msgx.daemon.schedule = path;
        c.msgx.daemon.shutdown_timeout = "5s".parse().unwrap();
        c.msgx.http.metrics_listen = Some("127.0.0.1:0".into());
    });
    (cfg, profile)
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs of `job` with `outcome` by the daemon process `pid`.
async fn runs(db: &TestDb, job: &str, outcome: &str, pid: u32) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM job_run WHERE job = $1 AND outcome = $2 AND trigger = 'daemon' \
         AND instance LIKE $3",
    )
    .bind(job)
    .bind(outcome)
    .bind(format!("%:{pid}"))
    .fetch_one(&db.pool)
    .await
    .unwrap()
}

/// Waits until the daemon `pid` recorded at least `n` runs of `job` with `outcome`.
async fn wait_runs(db: &TestDb, (job, outcome): (&str, &str), pid: u32, n: i64) {
    let what = format!("{n} {outcome} run(s) of {job} by {pid}");
    wait_until(&what, Duration::from_secs(30), || async {
        runs(db, job, outcome, pid).await >= n
    })
    .await;
}

/// `msgx jobs pause|resume retention --reason R --actor A`, which must
/// succeed; its output.
fn change_retention(cfg: &std::path::Path, verb: &str, reason: &str, actor: &str) -> String {
    let out = msgx(
        cfg,
        &[
            "jobs",
            verb,
            "retention",
            "--reason",
            reason,
            "--actor",
            actor,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    text(&out)
}

async fn actions(db: &TestDb) -> Vec<(String, String, String, Option<String>)> {
    sqlx::query_as("SELECT action, target, actor, reason FROM operator_action ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_paused_job_is_refused_by_msgx_run_unless_forced_and_runs_again_when_resumed() {
    let db = TestDb::migrated().await;
    let cfg = db.config_file_with(|_| {});
    let cfg = cfg.path();

    let out = msgx(cfg, &["jobs", "pause", "no-such-job", "--reason", "x"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("unknown job \"no-such-job\"")
            && text(&out).contains("flight-history-clean"),
        "names the jobs: {}",
        text(&out)
    );
    let out = msgx(cfg, &["jobs", "pause", "retention", "--reason", "   "]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("a reason is required"),
        "{}",
        text(&out)
    );
    let out = msgx(cfg, &["jobs", "pause", "retention"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--reason is mandatory: {}",
        text(&out)
    );
    assert!(actions(&db).await.is_empty(), "a refusal changes nothing");

    let out = change_retention(cfg, "pause", "incident 42", "alice");
    assert!(out.contains("retention paused"), "{out}");
    // Pausing again changes nothing and keeps the first pause.
    let out = msgx(
        cfg,
        &[
            "jobs",
            "pause",
            "retention",
            "--reason",
            "again",
            "--actor",
            "bob",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["change"]["result"], "unchanged", "{json}");
    assert_eq!(json["change"]["pause"]["paused_by"], "alice", "{json}");

    let list = msgx(cfg, &["jobs"]);
    let listing = text(&list);
    let line = listing
        .lines()
        .position(|l| l.starts_with("retention "))
        .expect("a retention line");
    let lines: Vec<&str> = listing.lines().collect();
    assert!(lines[line].contains("paused"), "{listing}");
    assert!(
        lines[line + 1].contains("paused by alice since")
            && lines[line + 1].contains("incident 42"),
        "{listing}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&msgx(cfg, &["jobs", "--json"]).stdout).expect("json");
    let row = |name: &str| {
        json.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(row("retention")["paused"]["reason"], "incident 42");
    assert!(row("snaplog-purge")["paused"].is_null());

    let out = msgx(cfg, &["run", "retention"]);
    assert_eq!(
        out.status.code(),
        Some(7),
        "a distinct exit code: {}",
        text(&out)
    );
    assert!(
        text(&out).contains("retention is paused by alice") && text(&out).contains("--force"),
        "{}",
        text(&out)
    );
    let refused: i64 = sqlx::query_scalar("SELECT count(*) FROM job_run WHERE job = 'retention'")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(refused, 0, "a refused `msgx run` is no run");
    let out = msgx(cfg, &["run", "retention", "--dry-run"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a dry run may look: {}",
        text(&out)
    );
    let out = msgx(cfg, &["run", "retention", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = msgx(cfg, &["run", "snaplog-purge"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "another job is not paused: {}",
        text(&out)
    );

    let out = change_retention(cfg, "resume", "incident over", "bob");
    assert!(out.contains("resumed (it was paused by alice"), "{out}");
    let out = msgx(cfg, &["run", "retention"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = msgx(cfg, &["jobs", "resume", "retention", "--reason", "twice"]);
    assert!(text(&out).contains("not paused"), "{}", text(&out));

    assert_eq!(
        actions(&db).await,
        vec![
            (
                "JOB_PAUSE".into(),
                "job:retention".into(),
                "alice".into(),
                Some("incident 42".into())
            ),
            (
                "JOB_RESUME".into(),
                "job:retention".into(),
                "bob".into(),
                Some("incident over".into())
            ),
        ],
        "each change audited once, unchanged ones not at all"
    );
}

/// The HA test: pause a job, `kill -9` the active daemon; the
/// standby takes over and does not run the paused job (its starts are
/// SKIPPED_PAUSED) while it runs the others; `/metrics` and `/readyz` show
/// the pause and the standby is ready; resume, it runs.
#[tokio::test]
async fn a_standby_that_takes_over_after_kill_9_honours_the_pause_and_runs_the_job_once_resumed() {
    let db = TestDb::migrated().await;
    let (cfg, _profile) = every_second(&db);
    let active = Daemon::spawn(cfg.path(), &[]);
    let active_pid = active.pid();
    wait_runs(&db, ("retention", "SUCCEEDED"), active_pid, 1).await;
    let standby = Daemon::spawn(cfg.path(), &["--standby"]);
    let standby_pid = standby.pid();
    wait_until("the standby stands by", Duration::from_secs(15), || async {
        standby.output().contains("Standing by")
    })
    .await;

    change_retention(cfg.path(), "pause", "mailbox owner migrates", "alice");
    // The active daemon honours it at its next tick.
    wait_runs(&db, ("retention", "SKIPPED_PAUSED"), active_pid, 1).await;
    let skipped: (String,) = sqlx::query_as(
        "SELECT error FROM job_run WHERE outcome = 'SKIPPED_PAUSED' ORDER BY id LIMIT 1",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert!(
        skipped.0.contains("paused by alice") && skipped.0.contains("mailbox owner migrates"),
        "{skipped:?}"
    );

    let killed = std::process::Command::new("kill")
        .arg("-KILL")
        .arg(active_pid.to_string())
        .status()
        .unwrap();
    assert!(killed.success());
    drop(active);
    // The standby takes over: it runs snaplog-purge and skips retention.
    wait_runs(&db, ("snaplog-purge", "SUCCEEDED"), standby_pid, 2).await;
    wait_runs(&db, ("retention", "SKIPPED_PAUSED"), standby_pid, 2).await;
    assert_eq!(
        runs(&db, "retention", "SUCCEEDED", standby_pid).await,
        0,
        "the new active daemon never ran the paused job: {}",
        standby.output()
    );

    let addr = standby
        .ops_address()
        .unwrap_or_else(|| panic!("ops endpoints logged: {}", standby.output()));
    let (_, metrics) = http(addr, "GET", "/metrics", "").await;
    assert!(
        metrics.contains("msgx_job_paused{job=\"retention\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("msgx_job_paused{job=\"snaplog-purge\"} 0"),
        "{metrics}"
    );
    let (status, ready) = http(addr, "GET", "/readyz", "").await;
    let ready_json: serde_json::Value = serde_json::from_str(&ready).expect("json");
    let paused = ready_json["checks"]["paused_jobs"]["detail"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        paused.contains("retention paused by alice") && paused.contains("mailbox owner migrates"),
        "{ready}"
    );
    assert!(
        !ready_json["degraded"]
            .as_array()
            .is_some_and(|d| d.iter().any(|c| c == "jobs" || c == "paused_jobs")),
        "a pause is not unready: {ready}"
    );
    assert_eq!(
        ready_json["checks"]["jobs"]["ok"], true,
        "a paused job is not overdue ({status}): {ready}"
    );

    change_retention(cfg.path(), "resume", "migration done", "bob");
    wait_runs(&db, ("retention", "SUCCEEDED"), standby_pid, 1).await;
    let (_, metrics) = http(addr, "GET", "/metrics", "").await;
    assert!(
        metrics.contains("msgx_job_paused{job=\"retention\"} 0"),
        "{metrics}"
    );
    standby.terminate();
}

/// Issue 38: starts that find a daemon's pause board stale at the same
/// moment (the cron jobs of one tick) read JOB_PAUSE once; the others wait
/// for that read. Before, each read it: with dispatch-msg on the one-second
/// tick beside pump-drain and schd-flush, 2.7 of an idle daemon's ~6
/// PostgreSQL statements a second.
#[tokio::test]
async fn starts_that_find_the_pause_board_stale_together_read_it_once() {
    let db = TestDb::migrated().await;
    let (_clock, shared) = manual_clock();
    let (mut r, _stop) = runner(&db, None, shared, |_| {});
    r.trigger = msgx::scheduler::runner::Trigger::Daemon;
    let (statements, _guard) = record_statements();
    let opts = msgx::scheduler::runner::RunOptions::default();
    let (a, b, c) = tokio::join!(
        r.run("request-expiry", &opts, None),
        r.run("event-cleanup", &opts, None),
        r.run("snaplog-purge", &opts, None)
    );
    for run in [a, b, c] {
        run.expect("runs");
    }
    let reads = statements
        .take()
        .into_iter()
        .filter(|s| s.starts_with("SELECT job, paused_by, paused_at"))
        .count();
    assert_eq!(reads, 1, "one read of JOB_PAUSE for three starts");
}
