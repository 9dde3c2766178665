//! The chaos drain's checks as the binary runs them for scripts/chaos.sh
//! (`msgx dev drained`, `snapshot`, `compare-runs`; docs/RESILIENCE.md): a
//! small backlog driven to drained by the real jobs against PostgreSQL,
//! MariaDB and librdkafka's mock cluster, its snapshot compared with itself,
//! with a run that re-sent every msg event (allowed) and with runs that
//! differ (refused, the difference named). Then the soak's and the
//! independent broker's checks (`msgx dev caught-up`, `verify`,
//! `broker-verify`) on a drained backlog, and on one with a DEAD outbox
//! event.

use crate::common;

use common::jobs::run_ok;
use common::sis::{flop, schd};
use common::*;
use std::path::Path;
use std::process::Output;

/// `msgx --config <config> dev <args…>`.
fn dev(config: &Path, args: &[&str]) -> Output {
    msgx(config, &[&["dev"][..], args].concat())
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `compare: {…}` line of `compare-runs`.
fn summary(out: &Output) -> serde_json::Value {
    let text = stdout(out);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("compare: "))
        .unwrap_or_else(|| panic!("no compare line:\n{}", common::text(out)));
    serde_json::from_str(line).expect("the compare line is JSON")
}

/// Compares two snapshot files.
fn compare(config: &Path, clean: &Path, chaos: &Path) -> Output {
    let (a, b) = (clean.to_string_lossy(), chaos.to_string_lossy());
    dev(config, &["compare-runs", &a, &b])
}

/// A database pair, the mock cluster, the jobs' runner and the `msgx`
/// config file for them, with a schedule of two flights and one FLOP of the
/// first already in the mailbox.
struct Run {
    db: TestDb,
    mb: TestMailbox,
    _kafka: rdkafka::mocking::MockCluster<'static, rdkafka::producer::DefaultProducerContext>,
    r: msgx::scheduler::runner::JobRunner,
    _stop: tokio::sync::watch::Sender<bool>,
    cfg: tempfile::NamedTempFile,
    dir: tempfile::TempDir,
}

impl Run {
    async fn start() -> Run {
        let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
        let kafka = mock_kafka(1);
        let bootstrap = kafka.bootstrap_servers();
        let (_clock, shared) = manual_clock();
        let (r, stop) = runner(&db, Some(&mb), shared, |c| fast_kafka(c, &bootstrap));
        let cfg = db.config_file_with(|c| {
            c.msgx.mailbox.url = mb.url.clone();
            fast_kafka(c, &bootstrap);
        });
        mb.insert(&schd(
            1,
            "DNLD",
            &[(9001, "01DEC260835"), (9002, "01DEC260900")],
        ))
        .await;
        mb.insert(&flop(2, 9001, "APPT", "<APPT>01DEC260830</APPT>"))
            .await;
        Run {
            db,
            mb,
            _kafka: kafka,
            r,
            _stop: stop,
            cfg,
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }
}

/// Takes a snapshot into `dir/name`; returns its path.
fn snapshot(config: &Path, dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let out = dev(config, &["snapshot", "--out", &path.to_string_lossy()]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    path
}

#[tokio::test]
async fn a_drained_run_equals_itself_and_every_difference_fails_the_comparison() {
    let Run {
        db,
        mb,
        _kafka,
        r,
        _stop,
        cfg,
        dir,
    } = Run::start().await;
    mb.insert(&flop(2, 9001, "APPT", "<APPT>01DEC260845</APPT>"))
        .await; // the same identity: SKIPPED
    mb.insert("<MSG><META><SNDR>AODB</SNDR>").await; // DEAD(MALFORMED)
    mb.insert(&flop(4, 9002, "RENO", "<RENO>B1234</RENO>"))
        .await;
    mb.insert(&flop(5, 9002, "FDEL", "<FDEL/>")).await; // a schd tombstone

    // Nothing read yet, then processed but neither delivered nor marked.
    let out = dev(cfg.path(), &["drained"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert_eq!(
        stdout(&out),
        "W 0 < last mailbox ID 6; 0 PROC_STATE rows for 6 mailbox rows\n"
    );
    run_ok(&r, "ingest-sweep").await;
    run_ok(&r, "pump-drain").await;
    let out = dev(cfg.path(), &["drained"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let left = stdout(&out);
    assert!(
        left.contains("outbox events PENDING") && left.contains("6 backfill marks outstanding"),
        "{left}"
    );
    for job in ["dispatch-msg", "schd-flush", "backfill-scan"] {
        run_ok(&r, job).await;
    }
    let out = dev(cfg.path(), &["drained"]);
    assert_eq!(
        (code(&out), stdout(&out)),
        (0, "drained\n".into()),
        "{}",
        text(&out)
    );

    // Two snapshots of one run agree.
    let clean = snapshot(cfg.path(), dir.path(), "clean.json");
    let again = snapshot(cfg.path(), dir.path(), "again.json");
    let out = compare(cfg.path(), &clean, &again);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let s = summary(&out);
    assert_eq!(s["differences"], 0, "{s}");
    assert_eq!(s["messages"], 6, "{s}");
    assert_eq!(s["flights"], 2, "{s}");
    assert_eq!(
        s["outcomes"],
        serde_json::json!({"DEAD": 1, "SKIPPED": 1, "SUCCEEDED": 4}),
        "{s}"
    );
    let events = s["msg_events"].as_u64().expect("a count");
    assert!(events > 0, "{s}");
    assert_eq!(s["msg_records_chaos"], events, "{s}");
    assert_eq!(
        (s["duplicates_clean"].clone(), s["duplicates_chaos"].clone()),
        (0.into(), 0.into())
    );

    // Each flight's last msg event sent again (its SENT mark lost with a
    // killed process): a duplicate of the same version with the same
    // content is allowed.
    sqlx::query(
        "UPDATE msg_event SET status = 'PENDING', sent_at = NULL \
         WHERE target = 'KAFKA:msg' AND (partition_key, state_version) IN \
           (SELECT partition_key, max(state_version) FROM msg_event \
             WHERE target = 'KAFKA:msg' GROUP BY partition_key)",
    )
    .execute(&db.pool)
    .await
    .expect("back to PENDING");
    run_ok(&r, "dispatch-msg").await;
    let resent = snapshot(cfg.path(), dir.path(), "resent.json");
    let out = compare(cfg.path(), &clean, &resent);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let s = summary(&out);
    assert_eq!(s["duplicates_chaos"], 2, "one per flight: {s}");
    assert_eq!(s["msg_records_chaos"], events + 2, "{s}");
    assert_eq!(s["msg_events"], events, "{s}");

    // A different outcome in one snapshot.
    let mut changed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&clean).expect("read")).expect("JSON");
    assert_eq!(changed["proc_state"][1]["state"], "SUCCEEDED");
    changed["proc_state"][1]["state"] = "SKIPPED".into();
    let outcome = dir.path().join("outcome.json");
    std::fs::write(&outcome, changed.to_string()).expect("write");
    let out = compare(cfg.path(), &clean, &outcome);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert_eq!(summary(&out)["differences"], 1);
    assert!(
        stdout(&out).starts_with("DIFF PROC_STATE 2: clean={"),
        "{}",
        text(&out)
    );

    // The purging run's report: equal runs pass; the changed outcome is not
    // explained by the purge, unless message 2 is named raw-missing.
    let (c, o) = (clean.to_string_lossy(), outcome.to_string_lossy());
    let out = dev(cfg.path(), &["purge-report", &c, &c]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = dev(cfg.path(), &["purge-report", &c, &o, "--holes", "2-3"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        stdout(&out).starts_with("DIFF PROC_STATE 2: clean={"),
        "{}",
        text(&out)
    );
    let report = |out: &Output| -> serde_json::Value {
        let text = stdout(out);
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("purge: "))
            .unwrap_or_else(|| panic!("no purge line:\n{}", common::text(out)));
        serde_json::from_str(line).expect("the purge line is JSON")
    };
    assert_eq!(report(&out)["other_proc_state_differences"], 1);
    let out = dev(
        cfg.path(),
        &[
            "purge-report",
            &c,
            &o,
            "--raw-missing",
            "2,9",
            "--holes",
            "",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(report(&out)["raw_missing_ids"], serde_json::json!([2]));
    let out = dev(cfg.path(), &["purge-report", &c, &o, "--holes", "3"]);
    assert_ne!(code(&out), 0, "{}", text(&out));
    assert!(
        text(&out).contains("not a hole FIRST-LAST"),
        "{}",
        text(&out)
    );

    // A flight row changed in the database.
    sqlx::query("UPDATE flight_schd SET remc = 'changed by hand' WHERE flid = 9001")
        .execute(&db.pool)
        .await
        .expect("update");
    let flight = snapshot(cfg.path(), dir.path(), "flight.json");
    let out = compare(cfg.path(), &clean, &flight);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert_eq!(summary(&out)["differences"], 1);
    let diff = stdout(&out);
    assert!(
        diff.starts_with("DIFF flight_schd [9001]: ") && diff.contains("changed by hand"),
        "{diff}"
    );

    // Every msg event sent again: each flight's versions go back to 1.
    sqlx::query(
        "UPDATE msg_event SET status = 'PENDING', sent_at = NULL WHERE target = 'KAFKA:msg'",
    )
    .execute(&db.pool)
    .await
    .expect("back to PENDING");
    run_ok(&r, "dispatch-msg").await;
    let backwards = snapshot(cfg.path(), dir.path(), "backwards.json");
    let out = compare(cfg.path(), &flight, &backwards);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let diff = stdout(&out);
    assert!(
        diff.starts_with("DIFF msg (chaos): FLID ") && diff.contains(": version 1 after "),
        "{diff}"
    );
    assert_eq!(
        summary(&out)["msg_events"],
        events,
        "no event missing or extra"
    );
    // After a PostgreSQL rollback they are allowed: each version going back
    // is one already on the topic with the same content.
    let (f, b) = (flight.to_string_lossy(), backwards.to_string_lossy());
    let out = dev(cfg.path(), &["compare-runs", &f, &b, "--after-rollback"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let s = summary(&out);
    assert_eq!(s["differences"], 0, "{s}");
    assert!(s["rollback_resends"].as_u64() > Some(0), "{s}");

    // A file that is not a snapshot.
    let out = compare(cfg.path(), &clean, &dir.path().join("missing.json"));
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("missing.json"),
        "{}",
        text(&out)
    );
}

/// The `NAME: {…}` line of `verify` or `broker-verify`.
fn verdict(out: &Output, name: &str) -> serde_json::Value {
    let text = stdout(out);
    let prefix = format!("{name}: ");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {name} line:\n{}", common::text(out)));
    serde_json::from_str(line).expect("the summary line is JSON")
}

#[tokio::test]
async fn the_soak_checks_pass_a_drained_backlog_and_name_a_dead_event() {
    let Run {
        db,
        mb,
        _kafka,
        r,
        _stop,
        cfg,
        dir,
    } = Run::start().await;
    mb.insert("<MSG><META><SNDR>AODB</SNDR>").await; // DEAD(MALFORMED): not fatal
    mb.insert(&flop(4, 9002, "FDEL", "<FDEL/>")).await; // a schd tombstone

    // Nothing processed yet: still waiting, not fatal.
    let out = dev(cfg.path(), &["caught-up", "--upto", "4"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert_eq!(
        stdout(&out),
        "4 of 4 messages not yet processed and marked; 4 mailbox marks missing\n"
    );
    for job in [
        "ingest-sweep",
        "pump-drain",
        "dispatch-msg",
        "schd-flush",
        "backfill-scan",
    ] {
        run_ok(&r, job).await;
    }
    let out = dev(cfg.path(), &["caught-up", "--upto", "4"]);
    assert_eq!(
        (code(&out), stdout(&out)),
        (0, "caught up to ID 4\n".into()),
        "{}",
        text(&out)
    );

    // The soak's final check, with a W log that only went forwards.
    let w_log = dir.path().join("w.log");
    std::fs::write(&w_log, "1.0 0\n1.5 2\n2.0 4\n").expect("write");
    let w_arg = w_log.to_string_lossy().into_owned();
    let out = dev(cfg.path(), &["verify", "--w-log", &w_arg]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let s = verdict(&out, "verify");
    assert_eq!(s["failures"], 0, "{s}");
    assert_eq!(s["mailbox_rows"], 4, "{s}");
    assert_eq!(s["w_samples"], 3, "{s}");
    assert_eq!(s["duplicates"], 0, "{s}");
    let events = s["msg_events"].as_u64().expect("a count");
    assert!(events > 0, "{s}");
    assert_eq!(s["msg_records"], events, "{s}");

    // The broker check: exactly the outbox on both topics.
    let out = dev(cfg.path(), &["broker-verify"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let s = verdict(&out, "broker-verify");
    assert_eq!(s["failures"], 0, "{s}");
    assert_eq!(
        (s["flids"].clone(), s["schd_flights"].clone()),
        (2.into(), 2.into()),
        "{s}"
    );
    assert_eq!(s["schd_tombstones"], 1, "{s}");
    assert_eq!(s["msg_events"], events, "{s}");

    // W moved backwards in the log.
    std::fs::write(&w_log, "1.0 4\n1.5 3\n").expect("write");
    let out = dev(cfg.path(), &["verify", "--w-log", &w_arg]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        stdout(&out).starts_with("FAIL W moved backwards at 1.5: 4 → 3\nverify: "),
        "{}",
        text(&out)
    );

    // A DEAD outbox event: fatal for caught-up, a failure for both checks.
    sqlx::query(
        "UPDATE msg_event SET status = 'DEAD' \
         WHERE event_id = (SELECT min(event_id) FROM msg_event WHERE target = 'KAFKA:msg')",
    )
    .execute(&db.pool)
    .await
    .expect("an event DEAD");
    let out = dev(cfg.path(), &["verify"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        stdout(&out).contains("FAIL 1 DEAD outbox events\n"),
        "{}",
        text(&out)
    );
    assert_eq!(verdict(&out, "verify")["failures"], 1);
    let out = dev(cfg.path(), &["caught-up", "--upto", "4"]);
    assert_eq!(
        (code(&out), stdout(&out)),
        (3, "FATAL 1 DEAD outbox events\n".into()),
        "{}",
        text(&out)
    );
    let out = dev(cfg.path(), &["broker-verify"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        stdout(&out).contains("FAIL 1 DEAD outbox events\n"),
        "{}",
        text(&out)
    );
}
