//! The identity algorithm is recorded at first start (issue 17 item 6,
//! design §2): `msgx.identity.include-day-boundary` is written to
//! MSGX_SETTING by the first daemon start or pump-drain run, and a later
//! start with another value is refused — the daemon exits 2, a pump-drain
//! run is recorded FAILED, `msgx doctor` fails its check — with the way out
//! in the message. Real PostgreSQL and MariaDB.

use crate::common;

use common::*;
use msgx::instance_lock::{self, LockKey};
use msgx::scheduler::runner::RunOptions;
use std::time::Duration;

const FLOP: &str = "<MSG><META><SNDR>AODB</SNDR><SEQN>7</SEQN><DTTM>20261201080000</DTTM>\
<TYPE>FLOP</TYPE><STYP>REMC</STYP></META><FLOP><FLID>9</FLID><FFID>X</FFID><REMC>x</REMC></FLOP></MSG>";

async fn recorded(db: &TestDb) -> Option<(String, String)> {
    sqlx::query_as(
        "SELECT value, recorded_by FROM msgx_setting WHERE key = 'identity.include-day-boundary'",
    )
    .fetch_optional(&db.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn the_first_pump_run_records_it_and_a_changed_value_fails_the_run() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    assert_eq!(recorded(&db).await, None, "nothing before the first start");
    mb.insert(FLOP).await;
    let once = RunOptions::default();
    r.run("ingest-sweep", &once, None).await.unwrap();
    assert_eq!(recorded(&db).await, None, "ingest binds no identity");

    // The same config on another pump run keeps working; a changed one does not.
    let changed = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.identity.include_day_boundary = true;
    });
    let first = r.run("pump-drain", &once, None).await.unwrap();
    assert_eq!(first.error, None);
    assert_eq!(
        recorded(&db).await,
        Some(("false".into(), "pump-drain".into()))
    );
    mb.insert(&FLOP.replace("<SEQN>7", "<SEQN>8")).await;
    r.run("ingest-sweep", &once, None).await.unwrap();
    let out = msgx(changed.path(), &["run", "pump-drain"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let error: Option<String> = sqlx::query_scalar(
        "SELECT error FROM job_run WHERE job = 'pump-drain' AND outcome = 'FAILED'",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    let error = error.unwrap_or_default();
    assert!(
        error.contains("include-day-boundary is true in the configuration")
            && error.contains("recorded false (pump-drain")
            && error.contains("new, empty state database"),
        "{error}"
    );
    let (state, identity): (String, Option<String>) =
        sqlx::query_as("SELECT state, identity_key FROM proc_state WHERE msg_id = 2")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        (state.as_str(), identity),
        ("PENDING", None),
        "no identity was bound with the changed algorithm"
    );
    assert_eq!(
        recorded(&db).await.map(|r| r.0),
        Some("false".into()),
        "the record stays"
    );
}

#[tokio::test]
async fn the_first_daemon_start_records_it_and_a_changed_daemon_refuses_to_start() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.identity.include_day_boundary = true;
    });
    let mut first = Daemon::spawn(cfg.path(), &["--schedule", "maintenance-window"]);
    wait_until(
        "the daemon to become active",
        Duration::from_secs(20),
        || async {
            recorded(&db).await.is_some()
                && instance_lock::holder(&db.pool, LockKey::instance())
                    .await
                    .unwrap()
                    .is_some()
        },
    )
    .await;
    first.terminate();
    assert_eq!(first.wait_exit(Duration::from_secs(20)).await, 0);
    let (value, by) = recorded(&db).await.unwrap();
    assert_eq!(value, "true");
    assert!(by.starts_with("daemon "), "{by}");

    let kafka = mock_kafka(1);
    let changed = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        fast_kafka(c, &kafka.bootstrap_servers());
    });
    let mut second = Daemon::spawn(changed.path(), &["--schedule", "maintenance-window"]);
    assert_eq!(
        second.wait_exit(Duration::from_secs(20)).await,
        2,
        "{}",
        second.output()
    );
    let out = second.output();
    assert!(
        out.contains("include-day-boundary is false in the configuration")
            && out.contains("recorded true (daemon ")
            && out.contains("`msgx migrate`"),
        "{out}"
    );

    // The doctor shows it, without recording anything itself.
    let doctor = msgx(changed.path(), &["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == "postgres.identity"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(check["status"], "fail", "{report}");
    assert!(
        check["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("recorded true"),
        "{check}"
    );
    assert_eq!(report["ok"], false);
}

#[tokio::test]
async fn an_upgraded_database_takes_the_algorithm_from_its_stored_identities() {
    for (key, expected) in [
        ("AODB|FLOP|REMC|7|20261201", Some("true")),
        ("AODB|FLOP|REMC|7", Some("false")),
    ] {
        let db = TestDb::empty().await;
        msgx::store::pg::MIGRATOR.run_to(4, &db.pool).await.unwrap();
        sqlx::query(
            "INSERT INTO proc_state (msg_id, state, identity_key, enqueued_at, updated_at) \
             VALUES (1, 'SUCCEEDED', $1, now(), now())",
        )
        .bind(key)
        .execute(&db.pool)
        .await
        .unwrap();
        msgx::store::pg::migrate(&db.pool).await.unwrap();
        let got = recorded(&db).await;
        assert_eq!(got.as_ref().map(|r| r.0.as_str()), expected, "{key}");
        assert!(
            got.is_some_and(|r| r.1.starts_with("migration 0007")),
            "{key}"
        );
    }
    // A database without identities records nothing at migration.
    let db = TestDb::migrated().await;
    assert_eq!(recorded(&db).await, None);
}
