//! Inbox to state (issue 5; design §4, §5, §7.1): ingest-sweep and
//! pump-drain against a real MariaDB mailbox and a real PostgreSQL, with a
//! manual clock.

use crate::common;

use chrono::Duration;
use common::jobs::{detail, drain, drain_ok, drain_past_backoff, run};
use common::queries::outcomes;
use common::sis::{OWN, flop, fltr, own_files, schd};
use common::*;
use msgx::clock::Clock;
use msgx::scheduler::runner::{JobRunner, RunOptions, RunSummary};
use msgx::store::pg::job_run::Outcome;
use std::path::{Path, PathBuf};

fn own_xml(name: &str) -> String {
    std::fs::read_to_string(Path::new(OWN).join(name)).expect("own fixture")
}

#[tokio::test]
async fn the_projects_own_samples_reach_their_terminal_states() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let files = own_files();
    for f in &files {
        mb.insert(&std::fs::read_to_string(f).unwrap()).await;
    }
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    // 025 (Unsupported) blocks the queue with backoff, then becomes EXHAUSTED.
    drain_past_backoff(&r, &clock).await;
    let got: Vec<(String, String, Option<String>)> = outcomes(&db)
        .await
        .into_iter()
        .zip(files.iter())
        .map(|((_, state, class, _), f)| {
            (
                f.file_name().unwrap().to_string_lossy().into_owned(),
                state,
                class,
            )
        })
        .collect();
    for (file, state, class) in &got {
        let expected: (&str, Option<&str>) = if file.starts_with("017") || file.starts_with("018") {
            ("DEAD", Some("PROTOCOL"))
        } else if file.starts_with("025") {
            ("DEAD", Some("EXHAUSTED"))
        } else if file.starts_with("027") {
            ("DEAD", Some("MALFORMED"))
        } else {
            ("SUCCEEDED", None)
        };
        assert_eq!((state.as_str(), class.as_deref()), expected, "{file}");
    }
    assert_eq!(got.len(), files.len());
    // The state is what the messages say: 9003 deleted, 9001 with its delays.
    let f9003: (String, i64) =
        sqlx::query_as("SELECT state, state_version FROM flight_schd WHERE flid = 9003")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(f9003.0, "DELETED");
    let delays: i64 = sqlx::query_scalar("SELECT count(*) FROM flight_delay WHERE flid = 9001")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert!(delays >= 2, "DELY merged into 9001");
    let gates: i64 = sqlx::query_scalar("SELECT count(*) FROM ref_master WHERE rtype = 'GLST'")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert!(gates >= 2, "reference data stored");
    // Every success wrote its events; every terminal row carries the backfill intent.
    let no_intent: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM proc_state WHERE state IN ('SUCCEEDED','SKIPPED','DEAD') AND backfill_next_at IS NULL",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(no_intent, 0);
    let tombstone: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM msg_event WHERE target = 'KAFKA:schd' AND partition_key = '9003' AND event_type = 'TOMBSTONE' AND payload IS NULL",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(tombstone, 1);
}

#[tokio::test]
async fn fifo_holds_across_a_10000_message_backlog() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let flights: Vec<(i64, &str)> = (1..=50).map(|i| (7000 + i, "01DEC260900")).collect();
    mb.insert(&schd(1, "DNLD", &flights)).await;
    // Bulk insert the backlog in one statement batch: REMC updates cycling over 50 flights.
    {
        use mysql_async::prelude::Queryable;
        let mut conn = mb.pool.get_conn().await.unwrap();
        let rows: Vec<String> = (0..9_999u32)
            .map(|i| {
                flop(
                    10 + i,
                    7001 + i64::from(i % 50),
                    "REMC",
                    &format!("<REMC>r{i}</REMC>"),
                )
            })
            .collect();
        conn.exec_batch(
            "INSERT INTO cminmsgs (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS) VALUES (?, NOW(), 'VALID')",
            rows.iter().map(|x| (x.as_str(),)),
        )
        .await
        .unwrap();
    }
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.pipeline.claim_batch = 2000
    });
    let ingested = run(&r, "ingest-sweep").await;
    assert_eq!(ingested.items, 10_000);
    let pumped = r
        .run(
            "pump-drain",
            &RunOptions {
                until_empty: true,
                max_items: Some(100_000),
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!(pumped.items, 10_000, "{pumped:?}");
    let not_ok: i64 =
        sqlx::query_scalar("SELECT count(*) FROM proc_state WHERE state <> 'SUCCEEDED'")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(not_ok, 0);
    // Events were allocated in message order (EVENT_ID order = MSG_ID order).
    let inversions: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT msg_id, lag(msg_id) OVER (ORDER BY event_id) AS prev \
         FROM msg_event WHERE target = 'KAFKA:msg') t WHERE prev > msg_id",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(inversions, 0, "strict FIFO");
    // Each flight ends with the last remark sent for it.
    let last: (String, i64) =
        sqlx::query_as("SELECT remc, state_version FROM flight_schd WHERE flid = 7050")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(last.0, "r9949", "7050 last got i = 9949 (i % 50 == 49)");
    assert_eq!(
        last.1,
        1 + 199,
        "one version for the SCHD and one per REMC change (199 of them)"
    );
}

#[tokio::test]
async fn duplicates_malformed_and_missing_raw_rows_get_their_outcomes() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schd(1, "DNLD", &[(9001, "01DEC260835")])).await; // 1
    mb.insert(&flop(2, 9001, "APPT", "<APPT>01DEC260830</APPT>"))
        .await; // 2
    mb.insert(&flop(2, 9001, "APPT", "<APPT>01DEC260845</APPT>"))
        .await; // 3: same identity
    mb.insert("<MSG><META><SNDR>AODB</SNDR>").await; // 4: not well-formed
    mb.insert(&flop(5, 9001, "RENO", "<RENO>B1234</RENO>"))
        .await; // 5: raw deleted below
    mb.insert(&flop(6, 4242, "APPT", "<APPT>01DEC260830</APPT>"))
        .await; // 6: unknown flight
    mb.insert(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>7</SEQN><TYPE>LDM</TYPE><STYP>X</STYP></META></MSG>",
    )
    .await; // 7
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    run(&r, "ingest-sweep").await;
    mb.exec("DELETE FROM cminmsgs WHERE CMINMSGS_ID = 5").await;
    run(&r, "pump-drain").await;
    let got = outcomes(&db).await;
    let summary: Vec<(i64, &str, Option<&str>, Option<&str>)> = got
        .iter()
        .map(|(id, s, c, r)| (*id, s.as_str(), c.as_deref(), r.as_deref()))
        .collect();
    assert_eq!(summary[0], (1, "SUCCEEDED", None, None));
    assert_eq!(summary[1], (2, "SUCCEEDED", None, None));
    assert_eq!(summary[2], (3, "SKIPPED", None, Some("duplicate-of:2")));
    assert_eq!((summary[3].1, summary[3].2), ("DEAD", Some("MALFORMED")));
    assert_eq!(
        summary[4],
        (5, "DEAD", Some("MALFORMED"), Some("raw-missing"))
    );
    assert_eq!(
        summary[5],
        (6, "SKIPPED", None, Some("no-match: FLID 4242 is unknown"))
    );
    assert_eq!(summary[6], (7, "SKIPPED", None, Some("ignored:LDM")));
    let appt: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT appt FROM flight_schd WHERE flid = 9001")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        appt.map(|t| t.to_rfc3339()),
        Some("2026-12-01T00:30:00+00:00".into()),
        "the duplicate did not apply"
    );
}

/// Issue 31 item 5: a replay that commits between the pump's read of a
/// FAILED head and its failure write stands. Before, the pump wrote the
/// attempt count it had computed before the replay over it, and the message
/// went DEAD(EXHAUSTED) in the same run although the replay was recorded.
#[tokio::test]
async fn a_replay_between_the_pumps_read_and_its_write_is_kept() {
    use msgx::backfill::replay::{ReplayRequest, ReplayService, Selection};
    let (db, mb) = unsupported_then_ignored().await;
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    // Attempts 1 and 2 of 3 (10 s, then 30 s apart).
    drain(&r).await;
    clock.advance(Duration::seconds(10));
    run(&r, "pump-drain").await;
    clock.advance(Duration::seconds(30));
    let attempts = || async {
        sqlx::query_as::<_, (String, i32)>(
            "SELECT state, attempts FROM proc_state WHERE msg_id = 1",
        )
        .fetch_one(&db.pool)
        .await
        .unwrap()
    };
    assert_eq!(attempts().await, ("FAILED".into(), 2));

    // Attempt 3 (the last) stops between its read and its write; a replay
    // of the message lands there.
    let mut paused = msgx::fault::arm_pause("pump:record-failure");
    let service = ReplayService {
        pool: &db.pool,
        clock: &shared,
        gate_wait: std::time::Duration::from_secs(10),
    };
    let replay = async {
        assert!(paused.reached().await, "the pump reached its failure write");
        let req = ReplayRequest {
            selection: Selection::Ids(vec![1]),
            force: false,
            reason: None,
            actor: "tester".into(),
            dry_run: false,
        };
        let done = service.replay(&req).await.expect("replay");
        assert_eq!(done.rows.len(), 1);
        paused.go_on();
    };
    let (summary, ()) = tokio::join!(run(&r, "pump-drain"), replay);
    assert_eq!(summary.outcome, Outcome::Succeeded, "{summary:?}");
    assert_eq!(detail(&summary, "superseded"), 1, "{summary:?}");
    assert_eq!(detail(&summary, "exhausted"), 0, "{summary:?}");
    // The replayed message was tried again from attempt 1.
    assert_eq!(attempts().await, ("FAILED".into(), 1));
}

/// Issue 31 item 9: a pump run that fails after processing messages counts
/// them in JOB_RUN (it recorded 0).
#[tokio::test]
async fn a_failed_pump_run_counts_the_messages_it_processed_before() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&flop(1, 4242, "PSDT", "<PSDT>A1</PSDT>")).await;
    mb.insert(&flop(2, 4243, "PSDT", "<PSDT>A2</PSDT>")).await;
    mb.insert(&common::sis::unsupported(3)).await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| c.msgx.pipeline.group_commit = 1);
    run(&r, "ingest-sweep").await;
    // Recording the third message's failure fails: the run fails there.
    db.fail_inserts("head_failure", "injected: cannot record")
        .await;
    let s = run(&r, "pump-drain").await;
    assert_eq!(s.outcome, Outcome::Failed, "{s:?}");
    assert!(
        s.error.as_deref().is_some_and(|e| e.contains("injected")),
        "{s:?}"
    );
    assert_eq!(s.items, 2, "{s:?}");
    assert_eq!(detail(&s, "skipped"), 2, "{s:?}");
    let recorded: (i64, String) = sqlx::query_as(
        "SELECT items, outcome FROM job_run WHERE job = 'pump-drain' ORDER BY id DESC LIMIT 1",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(recorded, (2, "FAILED".into()));
}

/// A mailbox with 1: an unsupported message (FLOP ESTT), 2: an ignored one.
async fn unsupported_then_ignored() -> (TestDb, TestMailbox) {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&own_xml("025-FLOP-ESTT-unsupported.xml")).await;
    mb.insert(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>2</SEQN><TYPE>LDM</TYPE><STYP>X</STYP></META></MSG>",
    )
    .await;
    (db, mb)
}

/// Issue 17 item 4: an unsupported head gives up within the default
/// one-minute UNSUPPORTED schedule (3 attempts, 10 s and 30 s apart), not
/// the ~21 minutes one schedule for every class took, and the next message
/// goes through right after.
#[tokio::test]
async fn unsupported_messages_back_off_then_become_exhausted_and_fifo_waits() {
    let (db, mb) = unsupported_then_ignored().await;
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    let started = clock.now();
    drain(&r).await;
    let tiers = [10, 30];
    for (i, wait) in tiers.iter().enumerate() {
        let s = outcomes(&db).await;
        assert_eq!(
            (s[0].1.as_str(), s[0].2.as_deref()),
            ("FAILED", Some("UNSUPPORTED")),
            "after attempt {}",
            i + 1
        );
        assert_eq!(s[1].1, "PENDING", "message 2 waits behind the failed head");
        clock.advance(Duration::seconds(wait - 1));
        assert_eq!(run(&r, "pump-drain").await.items, 0, "not due yet");
        clock.advance(Duration::seconds(1));
        run(&r, "pump-drain").await;
    }
    let s = outcomes(&db).await;
    assert_eq!(
        (s[0].1.as_str(), s[0].2.as_deref()),
        ("DEAD", Some("EXHAUSTED"))
    );
    assert!(
        s[0].3.as_deref().unwrap_or("").contains("unsupported"),
        "LAST_ERROR keeps the reason"
    );
    assert_eq!(s[1].1, "SKIPPED", "the queue moved on");
    assert!(
        clock.now() - started < Duration::minutes(1),
        "within a minute"
    );
    let attempts: i32 = sqlx::query_scalar("SELECT attempts FROM proc_state WHERE msg_id = 1")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(attempts, 3);
}

#[tokio::test]
async fn a_schd_operation_day_conflict_rejects_the_whole_package() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schd(1, "DNLD", &[(9001, "01DEC260835")])).await;
    mb.insert(&schd(
        2,
        "DNLD",
        &[(9002, "01DEC261000"), (9001, "02DEC260835")],
    ))
    .await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain(&r).await;
    let s = outcomes(&db).await;
    assert_eq!(
        (s[1].1.as_str(), s[1].2.as_deref()),
        ("DEAD", Some("PROTOCOL"))
    );
    let flights: Vec<i64> = sqlx::query_scalar("SELECT flid FROM flight_schd ORDER BY flid")
        .fetch_all(&db.pool)
        .await
        .unwrap();
    assert_eq!(flights, vec![9001], "no half package: 9002 was not created");
    let day: chrono::NaiveDate =
        sqlx::query_scalar("SELECT operation_day FROM flight_schd WHERE flid = 9001")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(day.to_string(), "2026-12-01");
}

/// A SCHD package of `styp` carrying these FLTRs (see [`fltr`]).
fn package(seqn: u32, styp: &str, fltrs: &[String]) -> String {
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>20261130200000</DTTM><TYPE>SCHD</TYPE>\
         <STYP>{styp}</STYP></META><SCHD><RECS>{}</RECS>{}</SCHD></MSG>",
        fltrs.len(),
        fltrs.concat()
    )
}

/// Issue 18 (sis-format §2.1, §12.3): SCHD DEL deletes each listed flight as
/// FDEL does, a listed master with its ACTIVE shares, in one transaction;
/// unknown or already deleted FLIDs are an idempotent success; an invalid
/// package is DEAD(PROTOCOL) with nothing deleted. The old code recorded
/// FAILED(UNSUPPORTED) and held the queue.
#[tokio::test]
async fn a_schd_del_deletes_the_listed_flights_and_a_masters_shares() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let d = "01DEC260835";
    let share = "<CSOP>YG</CSOP><CSFT>YG9003</CSFT><MAID>9003</MAID>";
    mb.insert(&package(
        1,
        "DNLD",
        &[
            fltr(9001, d, ""),
            fltr(9002, d, share),
            fltr(9003, d, ""),
            fltr(9004, d, ""),
        ],
    ))
    .await;
    let del = mb
        .insert(&package(
            2,
            "DEL",
            &[fltr(9003, d, ""), fltr(9001, d, ""), fltr(9999, d, "")],
        ))
        .await;
    mb.insert(&package(3, "DEL", &[fltr(9001, d, "")])).await;
    let no_acft = fltr(9004, d, "").replace("<ACFT>733</ACFT>", "");
    let bad = mb
        .insert(&package(4, "DEL", &[fltr(9004, d, ""), no_acft]))
        .await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain(&r).await;
    let s = outcomes(&db).await;
    let got: Vec<(&str, Option<&str>)> = s
        .iter()
        .map(|(_, state, class, _)| (state.as_str(), class.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("SUCCEEDED", None),
            ("SUCCEEDED", None),
            ("SUCCEEDED", None),
            ("DEAD", Some("PROTOCOL"))
        ],
        "{s:?}"
    );
    assert!(
        s[2].3.as_deref().is_some_and(|r| r.contains("no-change")),
        "{s:?}"
    );
    assert!(
        s[3].3.as_deref().is_some_and(|r| r.contains("ACFT")),
        "{s:?}"
    );
    let flights: Vec<(i64, String, i64, Option<i64>)> =
        sqlx::query_as("SELECT flid, state, state_version, maid FROM flight_schd ORDER BY flid")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        flights,
        vec![
            (9001, "DELETED".into(), 2, None),
            (9002, "DELETED".into(), 2, Some(9003)),
            (9003, "DELETED".into(), 2, None),
            (9004, "ACTIVE".into(), 1, None)
        ],
        "the share is deleted with its master, details kept; the invalid package deleted nothing"
    );
    let events: Vec<(String, String, String, Option<Vec<u8>>)> = sqlx::query_as(
        "SELECT partition_key, target, event_type, payload FROM msg_event WHERE msg_id = $1 \
         ORDER BY target, event_id",
    )
    .bind(del)
    .fetch_all(&db.pool)
    .await
    .unwrap();
    let keys: Vec<(&str, &str, &str)> = events
        .iter()
        .map(|(k, t, e, _)| (k.as_str(), t.as_str(), e.as_str()))
        .collect();
    assert_eq!(
        keys,
        vec![
            ("9003", "KAFKA:msg", "UPSERT"),
            ("9001", "KAFKA:msg", "UPSERT"),
            ("9002", "KAFKA:msg", "UPSERT"),
            ("9003", "KAFKA:schd", "TOMBSTONE"),
            ("9001", "KAFKA:schd", "TOMBSTONE"),
            ("9002", "KAFKA:schd", "TOMBSTONE"),
        ]
    );
    for (key, target, _, payload) in &events {
        if target == "KAFKA:msg" {
            let n: serde_json::Value =
                serde_json::from_slice(payload.as_deref().unwrap_or_default()).unwrap();
            assert_eq!(
                (&n["msg_kind"], &n["change"], &n["changed_fields"]),
                (
                    &serde_json::json!("SCHD-DEL"),
                    &serde_json::json!("DELETE"),
                    &serde_json::json!(["STATE"])
                ),
                "{key}"
            );
        }
    }
    let after: i64 = sqlx::query_scalar("SELECT count(*) FROM msg_event WHERE msg_id > $1")
        .bind(del)
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(
        after, 0,
        "no event for the no-change or the rejected package ({bad})"
    );
}

/// Issue 18 (sis-format §2.1): a SCHD cannot clear or omit a mandatory field;
/// the package is DEAD(PROTOCOL) and the stored value stays. The old code
/// cleared ACFT and created a flight without FLNO.
#[tokio::test]
async fn a_schd_cannot_clear_or_omit_a_mandatory_field() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let d = "01DEC260835";
    mb.insert(&package(1, "DNLD", &[fltr(9001, d, "")])).await;
    let clear = fltr(9001, d, "").replace("<ACFT>733</ACFT>", "<ACFT></ACFT>");
    mb.insert(&package(2, "DNLD", &[clear])).await;
    let no_flno = fltr(9002, d, "").replace("<FLNO>YG9002</FLNO>", "");
    mb.insert(&package(3, "DNLD", &[no_flno])).await;
    let adft_clear = fltr(9001, d, "").replace("<ACFT>733</ACFT>", "<ACFT/>");
    mb.insert(&package(4, "ADFT", &[adft_clear])).await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain(&r).await;
    let s = outcomes(&db).await;
    for (i, field) in [(1, "ACFT"), (2, "FLNO"), (3, "ACFT")] {
        assert_eq!(
            (s[i].1.as_str(), s[i].2.as_deref()),
            ("DEAD", Some("PROTOCOL")),
            "{s:?}"
        );
        assert!(
            s[i].3.as_deref().is_some_and(|r| r.contains(field)),
            "{s:?}"
        );
    }
    let flights: Vec<(i64, Option<String>, i64)> =
        sqlx::query_as("SELECT flid, acft, state_version FROM flight_schd ORDER BY flid")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(flights, vec![(9001, Some("733".into()), 1)]);
}

#[tokio::test]
async fn a_postgres_failure_mid_transaction_leaves_nothing_half_written() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schd(1, "DNLD", &[(9001, "01DEC260835")])).await;
    mb.insert(&flop(
        2,
        9001,
        "DELY",
        "<DELY CODE=\"93\" STRT=\"01DEC260835\" DURA=\"0045\">late</DELY>",
    ))
    .await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain(&r).await;
    // Make the outbox fail after the flight rows are written.
    db.fail_inserts("msg_event", "disk full (test)").await;
    mb.insert(&flop(
        3,
        9001,
        "DELY",
        "<DELY CODE=\"81\" STRT=\"01DEC260835\" DURA=\"0100\">crew</DELY>",
    ))
    .await;
    run(&r, "ingest-sweep").await;
    let before: (i64, i64) = sqlx::query_as(
        "SELECT state_version, (SELECT count(*) FROM flight_delay WHERE flid = 9001) FROM flight_schd WHERE flid = 9001",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    let pumped = run(&r, "pump-drain").await;
    assert_eq!(
        pumped.details.get("failed").and_then(|v| v.as_u64()),
        Some(1),
        "{pumped:?}"
    );
    let after: (i64, i64) = sqlx::query_as(
        "SELECT state_version, (SELECT count(*) FROM flight_delay WHERE flid = 9001) FROM flight_schd WHERE flid = 9001",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        before, after,
        "flight rows rolled back with the outbox failure"
    );
    let s = outcomes(&db).await;
    assert_eq!(
        (s[2].1.as_str(), s[2].2.as_deref()),
        ("FAILED", Some("INFRA"))
    );
}

#[tokio::test]
async fn rows_registered_beyond_w_wait_until_w_catches_up() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schd(1, "DNLD", &[(9001, "01DEC260835")])).await; // 1
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    drain(&r).await;
    mb.insert(&flop(2, 9001, "RENO", "<RENO>B1</RENO>")).await; // 2 (not ingested yet)
    let id3 = mb.insert(&flop(3, 9001, "RENO", "<RENO>B3</RENO>")).await; // 3
    // The compat entry registers 3 directly, beyond W = 1 (§4.4).
    sqlx::query(
        "INSERT INTO proc_state (msg_id, state, enqueued_at, updated_at, source) VALUES ($1, 'PENDING', $2, $2, 'compat')",
    )
    .bind(id3)
    .bind(shared.now())
    .execute(&db.pool)
    .await
    .unwrap();
    let s = run(&r, "pump-drain").await;
    assert_eq!(s.items, 0, "the head (3) is beyond W: not taken");
    assert_eq!(
        s.details
            .get("waiting_for_watermark")
            .and_then(|v| v.as_u64()),
        Some(1)
    );
    drain(&r).await;
    let reno: String = sqlx::query_scalar("SELECT reno FROM flight_schd WHERE flid = 9001")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(reno, "B3", "2 then 3, in ID order");
}

#[tokio::test]
async fn schedule_resp_without_an_open_request_is_skipped() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schd(1, "RESP", &[(9001, "01DEC260835")])).await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain(&r).await;
    let s = outcomes(&db).await;
    assert_eq!(
        (s[0].1.as_str(), s[0].3.as_deref()),
        ("SKIPPED", Some("resp-unmatched:no-open-request"))
    );
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM flight_schd")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(n, 0, "the snapshot was not applied (G-RESP-GUARD)");
}

#[tokio::test]
async fn a_snapshot_writes_a_snap_log_entry_after_commit() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schd(
        1,
        "DNLD",
        &[(9001, "01DEC260835"), (9002, "01DEC261135")],
    ))
    .await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain(&r).await;
    let log: (
        String,
        i32,
        String,
        Option<chrono::DateTime<chrono::Utc>>,
        Option<chrono::DateTime<chrono::Utc>>,
    ) = sqlx::query_as("SELECT styp, flights, outcome, scope_start, scope_end FROM schd_snap_log")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(
        (log.0.as_str(), log.1, log.2.as_str()),
        ("DNLD", 2, "SUCCEEDED")
    );
    assert_eq!(
        log.3.map(|t| t.to_rfc3339()),
        Some("2026-12-01T00:35:00+00:00".into())
    );
    assert_eq!(
        log.4.map(|t| t.to_rfc3339()),
        Some("2026-12-01T03:35:00+00:00".into())
    );
}

/// The outcome design §5.2 gives each real sample, loaded in file-name order
/// (../shared/fixtures/sis/README.md): duplicates by identity, no-match for
/// FLOPs on flights the samples never create, RESP without a request,
/// ignore rules, the one malformed file, the AIRC snapshot with wrong RECS,
/// and the seasonal schedules (SCHS-01's LH724 ends before it starts; a SCHS
/// RESP answers no request because none can be sent, so it is applied).
fn expected_for_real_sample(file: &str) -> (&'static str, Option<&'static str>, &'static str) {
    let stem = file.trim_end_matches(".xml");
    let parts: Vec<&str> = stem.split('-').collect();
    let (src, n, typ, styp) = (parts[0], parts[1], parts[2], parts[3]);
    match (src, n, typ, styp) {
        ("ABNR", "03", _, _) => (
            "DEAD",
            Some("MALFORMED"),
            "MALFORMED at MSG: trailing content",
        ),
        ("AIRC", "01", _, _) => ("DEAD", Some("PROTOCOL"), "AIRC snapshot: RECS 1 differs"),
        ("REGN", _, _, _) => ("SKIPPED", None, "ignored:REGN"),
        ("SCHD", "01", _, _) => ("SUCCEEDED", None, ""),
        ("SCHS", "01", _, _) => (
            "DEAD",
            Some("PROTOCOL"),
            "SCHS FLTR #1 (LH LH724 D): STDT 2021-11-14 is after EDDT 2021-03-14",
        ),
        ("SCHS", _, _, _) => ("SUCCEEDED", None, "season Winter 2020-09-10..2021-06-10"),
        ("SCHD", _, _, _) => ("SKIPPED", None, "duplicate-of:"),
        ("FDEL", _, _, _) => ("SUCCEEDED", None, "no-change: FLID 15 does not exist"),
        (_, "02", "FLOP", _) => ("SKIPPED", None, "duplicate-of:"),
        (_, _, "FLOP", _) => ("SKIPPED", None, "no-match: FLID"),
        (_, _, _, "RESP") => ("SKIPPED", None, "resp-unmatched:no-open-request"),
        _ => ("SUCCEEDED", None, ""),
    }
}

/// Every real sample through ingest, pump and backfill against a mailbox
/// whose tables are spelled `spelling`, with `tables` as the configured
/// inbox/outbox names (`None` = the default config; issue 16, item 1).
async fn real_samples_end_to_end(spelling: Spelling, tables: Option<(&str, &str)>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/sis");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    let (db, mb) = (
        TestDb::migrated().await,
        TestMailbox::with_spelling(spelling).await,
    );
    for f in &files {
        mb.insert(&std::fs::read_to_string(f).unwrap()).await;
    }
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        if let Some((inbox, outbox)) = tables {
            c.msgx.mailbox.inbox_table = inbox.into();
            c.msgx.mailbox.outbox_table = outbox.into();
        }
    });
    drain(&r).await;
    let got = outcomes(&db).await;
    assert_eq!(
        got.len(),
        files.len(),
        "every sample has exactly one record"
    );
    for ((_, state, class, reason), f) in got.iter().zip(&files) {
        let name = f.file_name().unwrap().to_string_lossy();
        let (want_state, want_class, want_reason) = expected_for_real_sample(&name);
        assert_eq!(
            (state.as_str(), class.as_deref()),
            (want_state, want_class),
            "{name}: {reason:?}"
        );
        assert!(
            reason.as_deref().unwrap_or("").starts_with(want_reason),
            "{name}: {reason:?}"
        );
    }
    // SCHD-01 created FLIDs 15 and 16 with their events; nothing else touched flights.
    let flights: Vec<(i64, i64)> =
        sqlx::query_as("SELECT flid, state_version FROM flight_schd ORDER BY flid")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(flights, vec![(15, 1), (16, 1)]);
    // The write path too: every terminal row gets its processing mark (§6).
    run(&r, "backfill-scan").await;
    use mysql_async::prelude::Queryable;
    let mut conn = mb.pool.get_conn().await.unwrap();
    let marked: Option<i64> = conn
        .query_first(format!(
            "SELECT COUNT(*) FROM {} WHERE CMINMSGS_DATE_PROCESSED IS NOT NULL",
            mb.inbox
        ))
        .await
        .unwrap();
    assert_eq!(marked, Some(files.len() as i64), "every row marked");
}

#[tokio::test]
async fn every_real_sample_reaches_the_terminal_state_the_design_gives_it() {
    // The predecessor's DDL (`cminmsgs`) and the default config.
    real_samples_end_to_end(Spelling::Lower, None).await;
}

#[tokio::test]
async fn upper_case_mailbox_tables_work_with_the_default_config() {
    real_samples_end_to_end(Spelling::Upper, None).await;
}

#[tokio::test]
async fn upper_case_table_names_in_the_config_find_the_predecessors_tables() {
    real_samples_end_to_end(Spelling::Lower, Some(("CMINMSGS", "COUTMSGS"))).await;
}

/// Identity binding and attempts: (MSG_ID, IDENTITY_KEY, TYPE, STYP, attempts).
type Binding = (i64, Option<String>, Option<String>, Option<String>, i32);

/// Everything the group-commit equivalence tests compare.
#[derive(Debug, PartialEq)]
struct FinalState {
    outcomes: Vec<(i64, String, Option<String>, Option<String>)>,
    bindings: Vec<Binding>,
    flights: Vec<serde_json::Value>,
    /// Every detail table, row by row.
    details: Vec<serde_json::Value>,
    /// The outbox in EVENT_ID order, without the EVENT_ID values themselves
    /// and with only whether a row has a trace context (its trace-id is
    /// random per message, so differs between two databases).
    events: Vec<serde_json::Value>,
}

/// One backlog through ingest-sweep and pump-drain with `group-commit =
/// group`; `pg_sql` runs on PostgreSQL and `mailbox_sql` on the mailbox
/// after ingest (faults), `tweak` changes the config.
async fn final_state(
    backlog: &[String],
    group: u32,
    tweak: impl Fn(&mut msgx::config::Config),
    pg_sql: &str,
    mailbox_sql: &str,
) -> (FinalState, RunSummary) {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let mut mcfg = db.config().msgx.mailbox;
    mcfg.url = mb.url.clone();
    let mailbox = msgx::store::mailbox::Mailbox::new(&mcfg).unwrap();
    for chunk in backlog.chunks(300) {
        mailbox.insert_many(chunk).await.unwrap();
    }
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.pipeline.group_commit = group;
        tweak(c);
    });
    run(&r, "ingest-sweep").await;
    if !pg_sql.is_empty() {
        sqlx::raw_sql(sqlx::AssertSqlSafe(pg_sql))
            .execute(&db.pool)
            .await
            .unwrap();
    }
    if !mailbox_sql.is_empty() {
        mb.exec(mailbox_sql).await;
    }
    let s = r
        .run(
            "pump-drain",
            &RunOptions {
                until_empty: true,
                max_items: Some(100_000),
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
    let rows = |sql: &'static str| {
        let pool = db.pool.clone();
        async move {
            sqlx::query_scalar::<_, serde_json::Value>(sql)
                .fetch_all(&pool)
                .await
                .unwrap()
        }
    };
    let mut details = Vec::new();
    for table in [
        "flight_route_point",
        "flight_stand",
        "flight_gate",
        "flight_counter",
        "flight_carousel",
        "flight_chute",
        "flight_chock",
        "flight_airbridge",
        "flight_delay",
        "flight_service",
        "flight_vip",
        "flight_door",
        "flight_tractor",
        "flight_push",
    ] {
        details.push(
            sqlx::query_scalar::<_, serde_json::Value>(sqlx::AssertSqlSafe(format!(
                "SELECT COALESCE(jsonb_agg(to_jsonb(t) ORDER BY to_jsonb(t)::text), '[]') FROM {table} t"
            )))
            .fetch_one(&db.pool)
            .await
            .unwrap(),
        );
    }
    let state = FinalState {
        outcomes: outcomes(&db).await,
        bindings: sqlx::query_as(
            "SELECT msg_id, identity_key, msg_type, msg_styp, attempts FROM proc_state ORDER BY msg_id",
        )
        .fetch_all(&db.pool)
        .await
        .unwrap(),
        flights: rows("SELECT to_jsonb(f) FROM flight_schd f ORDER BY flid").await,
        details,
        events: rows(
            "SELECT to_jsonb(e) - 'event_id' - 'traceparent' \
                    || jsonb_build_object('traced', e.traceparent IS NOT NULL) \
             FROM msg_event e ORDER BY event_id",
        )
        .await,
    };
    (state, s)
}

/// Group commit changes nothing but speed (issue 11 item 4): the same
/// backlog — SCHD packages, a FLOP mix with FDELs, business duplicates and
/// malformed messages — gives identical outcomes, flights and outbox rows
/// with grouping off (1) and on (50).
#[tokio::test]
async fn group_commit_gives_the_same_final_state_as_one_message_per_transaction() {
    use msgx::commands::generate::{Spec, messages};
    let spec = Spec {
        messages: 1500,
        flights: 120,
        seed: 21,
        duplicates: 0.03,
        malformed: 0.02,
        holes: 0,
        first_seqn: 1,
        package_flights: 100,
        rich: false,
    };
    let backlog: Vec<String> = messages(&spec).into_iter().flatten().collect();
    let (a, sa) = final_state(&backlog, 1, |_| {}, "", "").await;
    let (b, sb) = final_state(&backlog, 50, |_| {}, "", "").await;
    assert_eq!(sa.items as usize, backlog.len(), "{sa:?}");
    assert_eq!(sb.items as usize, backlog.len(), "{sb:?}");
    let grouped = |s: &RunSummary| {
        s.details
            .get("grouped")
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    };
    assert_eq!(grouped(&sa), 0);
    assert!(grouped(&sb) > 1400, "{sb:?}");
    assert!(!sb.details.contains_key("group_rolled_back"), "{sb:?}");
    assert_eq!(a.outcomes, b.outcomes, "same outcome for every message");
    assert_eq!(a.bindings, b.bindings, "same identity bindings");
    assert_eq!(a.flights, b.flights, "same flight rows");
    assert_eq!(a.details, b.details, "same detail rows");
    assert_eq!(a.events.len(), b.events.len());
    assert_eq!(a.events, b.events, "same outbox rows in the same order");
    assert!(
        a.outcomes.iter().any(|r| r.1 == "DEAD")
            && a.outcomes
                .iter()
                .any(|r| r.3.as_deref().unwrap_or("").starts_with("duplicate-of"))
    );
}

/// The hand-made backlog of the edge-case equivalence tests (mailbox IDs
/// in the comments): a master (3) with two shares (2, 4) and a plain flight
/// with a non-canonical decimal (9001, LBWT `.5`: PostgreSQL reads it back
/// as `0.5`); then the same flights touched several times within one group,
/// a duplicate inside the group, a malformed message, an ignored subtype, a
/// no-match, an unknown FDEL, the master deleted with its cascade, FLOPs
/// after that, a SCHD in the middle (ends a group; moves share 9004 to
/// master 9005) and FLOPs on the new master and its shares behind it.
fn edge_backlog() -> Vec<String> {
    let share = |maid: i64| format!("<CSOP>YG</CSOP><CSFT>YG{maid}</CSFT><MAID>{maid}</MAID>");
    let pkg = |seqn: u32, fltrs: &[String]| {
        format!(
            "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>20261130200000</DTTM><TYPE>SCHD</TYPE>\
             <STYP>DNLD</STYP></META><SCHD><RECS>{}</RECS>{}</SCHD></MSG>",
            fltrs.len(),
            fltrs.concat()
        )
    };
    let gate = |g: &str| {
        format!(
            "<GTDT GTNO=\"1\"><GATE>{g}</GATE><PGOT>01DEC260800</PGOT><PGCT>01DEC260820</PGCT></GTDT>"
        )
    };
    let dely =
        |code: u32| format!("<DELY CODE=\"{code}\" STRT=\"01DEC260900\" DURA=\"0015\">late</DELY>");
    vec![
        pkg(
            1,
            &[
                fltr(9001, "01DEC260835", "<LBNO>3</LBNO><LBWT>.5</LBWT>"),
                fltr(9002, "01DEC260935", &share(9003)),
                fltr(9003, "01DEC260935", ""),
                fltr(9004, "01DEC260935", &share(9003)),
                fltr(9005, "01DEC261035", ""),
            ],
        ), // 1
        flop(2, 9001, "RENO", "<RENO>B1</RENO>"),  // 2
        flop(3, 9001, "GTDT", &gate("G1")),        // 3
        flop(4, 9001, "GTDT", &gate("G1")),        // 4: no change
        flop(5, 9001, "DELY", &dely(81)),          // 5
        flop(6, 9003, "STND", "<STND>501</STND>"), // 6
        flop(7, 9002, "STND", "<STND>502</STND>"), // 7
        flop(8, 9003, "RENO", "<RENO>B3</RENO>"),  // 8
        flop(3, 9001, "GTDT", &gate("G9")),        // 9: duplicate of 3
        flop(9, 9004, "RENO", "<RENO>B4</RENO>"),  // 10
        flop(10, 9005, "RENO", "<RENO>B5</RENO>"), // 11
        "<MSG><META><SNDR>AODB</SNDR><SEQN>11</SEQN>".to_string(), // 12: malformed
        flop(12, 9001, "REMC", "<REMC>ignored</REMC>"), // 13: ignored
        flop(13, 7777, "RENO", "<RENO>B0</RENO>"), // 14: no-match, unknown
        flop(14, 7777, "FDEL", "<FDEL/>"),         // 15: unknown FDEL, no change
        flop(15, 9003, "FDEL", "<FDEL/>"),         // 16: master deleted, cascade
        flop(16, 9002, "RENO", "<RENO>B2</RENO>"), // 17
        flop(17, 9003, "RENO", "<RENO>B7</RENO>"), // 18: no-match, deleted
        flop(18, 9003, "FDEL", "<FDEL/>"),         // 19: already deleted
        flop(24, 9001, "RENO", "<RENO>B9</RENO>"), // 20: raw text removed in a test
        pkg(
            19,
            &[
                fltr(9004, "01DEC260935", &share(9005)),
                fltr(9005, "01DEC261035", ""),
                fltr(9006, "01DEC261135", &share(9005)),
            ],
        ), // 21
        flop(20, 9005, "DELY", &dely(82)),         // 22
        flop(21, 9006, "RENO", "<RENO>B6</RENO>"), // 23
        flop(25, 9004, "STND", "<STND>504</STND>"), // 24
        flop(22, 9005, "DELY", &dely(83)),         // 25
        flop(22, 9005, "DELY", &dely(83)),         // 26: duplicate of 25
        flop(26, 9005, "FDEL", "<FDEL/>"),         // 27: cascade to 9004, 9006
        flop(23, 9001, "RENO", "<RENO>B8</RENO>"), // 28
    ]
}

/// The edge cases of [`edge_backlog`] give the same final state with
/// grouping off and on (issue 11 item 4), also with the group limit at 3
/// (many group boundaries) and with a missing raw text inside a group.
#[tokio::test]
async fn group_commit_equivalence_covers_the_edge_cases() {
    let backlog = edge_backlog();
    let ignore = |c: &mut msgx::config::Config| c.msgx.ignore = vec!["FLOP-REMC".into()];
    let gone = "DELETE FROM cminmsgs WHERE CMINMSGS_ID = 20";
    let (a, sa) = final_state(&backlog, 1, ignore, "", gone).await;
    assert_eq!(sa.items as usize, backlog.len(), "{sa:?}");
    let reason = |id: i64| {
        let o = &a.outcomes[usize::try_from(id - 1).unwrap()];
        format!("{} {}", o.1, o.3.as_deref().unwrap_or(""))
    };
    for (id, want) in [
        (4, "SUCCEEDED no-change"),
        (9, "SKIPPED duplicate-of:3"),
        (12, "DEAD"),
        (13, "SKIPPED ignored:FLOP-REMC"),
        (14, "SKIPPED no-match"),
        (15, "SUCCEEDED no-change"),
        (16, "SUCCEEDED"),
        (18, "SKIPPED no-match"),
        (20, "DEAD raw-missing"),
        (26, "SKIPPED duplicate-of:25"),
        (27, "SUCCEEDED"),
    ] {
        assert!(reason(id).starts_with(want), "{id}: {}", reason(id));
    }
    for group in [50, 3] {
        let (b, sb) = final_state(&backlog, group, ignore, "", gone).await;
        let grouped = sb
            .details
            .get("grouped")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        assert!(grouped >= 15, "group {group}: {sb:?}");
        assert!(
            !sb.details.contains_key("group_rolled_back"),
            "no group needed the one-by-one fallback: {sb:?}"
        );
        assert_eq!(a, b, "group {group}");
    }
}

/// The pump keeps the flights a group read or wrote for later groups
/// (issue 20, `pipeline/flight_cache.rs`), checked against the stored row's
/// version: a flight another writer changed between two runs of the same pump
/// (same `updated_at`, so only the row version tells) is read again, never
/// decided on from the copy the first run kept; an unchanged one is taken from
/// the cache and gives the same result.
#[tokio::test]
async fn a_flight_changed_outside_the_pump_is_read_again_not_taken_from_its_cache() {
    use common::sis::schd_dnld;
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.pipeline.group_commit = 50;
    });
    mb.insert(&schd_dnld(
        1,
        &[fltr(9001, "01DEC260835", ""), fltr(9002, "01DEC260935", "")],
    ))
    .await;
    mb.insert(&flop(2, 9001, "RENO", "<RENO>B1</RENO>")).await;
    mb.insert(&flop(3, 9002, "RENO", "<RENO>B2</RENO>")).await;
    let s = drain_ok(&r).await;
    assert_eq!(detail(&s, "grouped"), 2, "{s:?}");
    // Another writer: the row changes, its updated_at does not.
    sqlx::query("UPDATE flight_schd SET remc = 'set outside' WHERE flid = 9001")
        .execute(&db.pool)
        .await
        .unwrap();
    mb.insert(&flop(4, 9001, "STND", "<STND>501</STND>")).await;
    mb.insert(&flop(5, 9002, "STND", "<STND>502</STND>")).await;
    let s = drain_ok(&r).await;
    assert_eq!(detail(&s, "grouped"), 2, "{s:?}");
    type Row = (i64, Option<String>, Option<String>, Option<String>);
    let rows: Vec<Row> =
        sqlx::query_as("SELECT flid, reno, stnd, remc FROM flight_schd ORDER BY flid")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        rows,
        vec![
            (
                9001,
                Some("B1".into()),
                Some("501".into()),
                Some("set outside".into())
            ),
            (9002, Some("B2".into()), Some("502".into()), None),
        ]
    );
    // The schd state published for 9001 is the stored one, REMC included.
    let payload: String = sqlx::query_scalar(
        "SELECT convert_from(payload, 'UTF8') FROM msg_event \
         WHERE target = 'KAFKA:schd' AND partition_key = '9001' ORDER BY event_id DESC LIMIT 1",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert!(payload.contains("set outside"), "{payload}");
}

/// The detail lists are part of the version the flight cache checks (issue 31
/// item 6, migration 0013): an operator's correction of detail rows on a
/// session of their own between two groups (an UPDATE of a gate and of a
/// delay, a delay DELETEd and another INSERTed) is what the next group
/// decides on and publishes, and a DELY merged into the list keeps it (the
/// cached list would have been written back). msgx's own writes (the SCHD,
/// the groups) leave `content_version` as it is, so they cost no extra write.
#[tokio::test]
async fn a_detail_row_changed_outside_the_pump_is_read_again_and_kept() {
    use common::sis::schd_dnld;
    use sqlx::Connection as _;
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.pipeline.group_commit = 50;
    });
    let gate = |g: &str| format!("<GTDT GTNO=\"1\"><GATE>{g}</GATE></GTDT>");
    let dely = |code: u32, text: &str| {
        format!("<DELY CODE=\"{code}\" STRT=\"01DEC260900\" DURA=\"0015\">{text}</DELY>")
    };
    mb.insert(&schd_dnld(
        1,
        &[
            fltr(
                9001,
                "01DEC260835",
                &format!("{}{}", gate("sent-gate"), dely(81, "sent-81")),
            ),
            fltr(9002, "01DEC260935", &dely(82, "sent-82")),
        ],
    ))
    .await;
    // A group reads both flights: the pump caches them.
    mb.insert(&flop(2, 9001, "RENO", "<RENO>B1</RENO>")).await;
    mb.insert(&flop(3, 9002, "RENO", "<RENO>B2</RENO>")).await;
    let s = drain_ok(&r).await;
    assert_eq!(detail(&s, "grouped"), 2, "{s:?}");
    let mut operator = sqlx::PgConnection::connect(&db.url).await.unwrap();
    for sql in [
        "UPDATE flight_gate SET gate = 'fixed-gate' WHERE flid = 9001",
        "UPDATE flight_delay SET comment = 'fixed-81' WHERE flid = 9001",
        "DELETE FROM flight_delay WHERE flid = 9002",
        "INSERT INTO flight_delay (flid, ordinal, code, comment) VALUES (9002, 1, '85', 'added-85')",
    ] {
        sqlx::query(sql).execute(&mut operator).await.unwrap();
    }
    mb.insert(&flop(4, 9001, "DELY", &dely(83, "sent-83")))
        .await;
    mb.insert(&flop(5, 9002, "DELY", &dely(84, "sent-84")))
        .await;
    let s = drain_ok(&r).await;
    assert_eq!(detail(&s, "grouped"), 2, "{s:?}");
    // Published: the schd state of each flight carries the operator's rows.
    for (flid, present, absent) in [
        (
            9001,
            &["fixed-gate", "fixed-81", "sent-83"][..],
            &["sent-gate", "sent-81"][..],
        ),
        (9002, &["added-85", "sent-84"][..], &["sent-82"][..]),
    ] {
        let payload: String = sqlx::query_scalar(
            "SELECT convert_from(payload, 'UTF8') FROM msg_event \
             WHERE target = 'KAFKA:schd' AND partition_key = $1::text",
        )
        .bind(flid)
        .fetch_one(&db.pool)
        .await
        .unwrap();
        for p in present {
            assert!(payload.contains(*p), "{flid} publishes {p}: {payload}");
        }
        for a in absent {
            assert!(!payload.contains(*a), "{flid} no longer has {a}: {payload}");
        }
    }
    // Kept: the DELY merged into the corrected lists, nothing written back.
    let gates: Vec<(i64, String)> =
        sqlx::query_as("SELECT flid, gate FROM flight_gate ORDER BY flid, ordinal")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(gates, vec![(9001, "fixed-gate".into())]);
    let delays: Vec<(i64, String, String)> =
        sqlx::query_as("SELECT flid, code, comment FROM flight_delay ORDER BY flid, ordinal")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    let want = [
        (9001, "81", "fixed-81"),
        (9001, "83", "sent-83"),
        (9002, "85", "added-85"),
        (9002, "84", "sent-84"),
    ];
    assert_eq!(
        delays,
        want.map(|(f, c, t)| (f, c.to_string(), t.to_string()))
    );
    // Only the operator's statements moved the version: 2 for 9001 (two
    // UPDATEs), 2 for 9002 (a DELETE, an INSERT); the pump's writes none.
    let versions: Vec<(i64, i64)> =
        sqlx::query_as("SELECT flid, content_version FROM flight_schd ORDER BY flid")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(versions, vec![(9001, 2), (9002, 2)]);
}

/// A database failure in the middle of a group (the outbox insert of
/// message 10 fails): grouping on and off record the same outcomes — the
/// messages before it finished, it FAILED(INFRA), everything behind it waits.
#[tokio::test]
async fn a_failure_in_the_middle_of_a_group_leaves_the_same_state() {
    let backlog = edge_backlog();
    let boom = "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           IF NEW.msg_id = 10 THEN RAISE EXCEPTION 'disk full (test)' USING ERRCODE = 'disk_full'; END IF; RETURN NEW; END $$; \
         CREATE TRIGGER boom BEFORE INSERT ON msg_event FOR EACH ROW EXECUTE FUNCTION boom();";
    let (a, _) = final_state(&backlog, 1, |_| {}, boom, "").await;
    let (b, sb) = final_state(&backlog, 50, |_| {}, boom, "").await;
    assert!(sb.details.contains_key("group_rolled_back"), "{sb:?}");
    assert_eq!(a, b);
    let failed: Vec<_> = b.outcomes.iter().filter(|o| o.1 == "FAILED").collect();
    assert_eq!(failed.len(), 1, "{:#?}", b.outcomes);
    assert_eq!((failed[0].0, failed[0].2.as_deref()), (10, Some("INFRA")));
    let after: Vec<_> = b.outcomes.iter().filter(|o| o.0 > failed[0].0).collect();
    assert!(
        !after.is_empty() && after.iter().all(|o| o.1 == "PENDING"),
        "{after:?}"
    );
    assert!(
        b.outcomes
            .iter()
            .filter(|o| o.0 < failed[0].0)
            .all(|o| o.1 != "PENDING"),
        "{sb:?}"
    );
}

/// A failure inside a group rolls the group back; one message per
/// transaction then records it on the message that caused it, and FIFO holds.
#[tokio::test]
async fn a_failure_inside_a_group_is_recorded_on_its_own_message() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schd(
        1,
        "DNLD",
        &[(9001, "01DEC260835"), (9002, "01DEC260935")],
    ))
    .await; // 1
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain(&r).await;
    sqlx::raw_sql(
        "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           IF NEW.partition_key = '9002' THEN RAISE EXCEPTION 'disk full for 9002 (test)' USING ERRCODE = 'disk_full'; END IF; RETURN NEW; END $$; \
         CREATE TRIGGER boom BEFORE INSERT ON msg_event FOR EACH ROW EXECUTE FUNCTION boom();",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    mb.insert(&flop(2, 9001, "RENO", "<RENO>B1</RENO>")).await; // 2
    mb.insert(&flop(3, 9002, "RENO", "<RENO>B2</RENO>")).await; // 3: fails
    mb.insert(&flop(4, 9001, "RENO", "<RENO>B4</RENO>")).await; // 4: must wait
    run(&r, "ingest-sweep").await;
    run(&r, "pump-drain").await;
    let s = outcomes(&db).await;
    let got: Vec<(&str, Option<&str>)> = s.iter().map(|x| (x.1.as_str(), x.2.as_deref())).collect();
    assert_eq!(
        got,
        vec![
            ("SUCCEEDED", None),
            ("SUCCEEDED", None),
            ("FAILED", Some("INFRA")),
            ("PENDING", None)
        ]
    );
    let reno: String = sqlx::query_scalar("SELECT reno FROM flight_schd WHERE flid = 9001")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(
        reno, "B1",
        "message 4 did not overtake the failed message 3"
    );
}

/// `(state, error_class, attempts, next attempt − last update)` of one row.
async fn failure_of(db: &TestDb, id: i64) -> (String, Option<String>, i32, Option<Duration>) {
    let (state, class, attempts, next, updated): (
        String,
        Option<String>,
        i32,
        Option<chrono::DateTime<chrono::Utc>>,
        chrono::DateTime<chrono::Utc>,
    ) = sqlx::query_as(
        "SELECT state, error_class, attempts, next_attempt_at, updated_at FROM proc_state WHERE msg_id = $1",
    )
    .bind(id)
    .fetch_one(&db.pool)
    .await
    .unwrap();
    (state, class, attempts, next.map(|n| n - updated))
}

/// Message 1 failed once with a fast-schedule class (CODEC_ERROR or
/// UNSUPPORTED, default 10 s then 30 s): pumping at each tier makes it
/// DEAD(EXHAUSTED), and the ignored message 2 behind it SKIPPED.
async fn gives_up_and_the_queue_moves_on(
    db: &TestDb,
    r: &JobRunner,
    clock: &msgx::clock::ManualClock,
) {
    for tier in [10, 30] {
        clock.advance(Duration::seconds(tier));
        run(r, "pump-drain").await;
    }
    let s = outcomes(db).await;
    assert_eq!(
        (s[0].1.as_str(), s[0].2.as_deref()),
        ("DEAD", Some("EXHAUSTED"))
    );
    assert_eq!(s[1].1, "SKIPPED", "the queue moved on");
}

/// Issue 17 item 4: a mailbox outage far longer than the old ~21-minute
/// schedule leaves the head FAILED(INFRA), backing off at most 1 minute,
/// never DEAD(EXHAUSTED). Once the mailbox is back, the head's real failure
/// (UNSUPPORTED) gets its own full schedule, then the queue moves on.
#[tokio::test]
async fn an_infra_outage_never_exhausts_the_head() {
    let (db, mb) = unsupported_then_ignored().await;
    let (clock, shared) = manual_clock();
    let (up, _s1) = runner(&db, Some(&mb), shared.clone(), |_| {});
    run(&up, "ingest-sweep").await;
    // The mailbox becomes unreachable: a closed port.
    let (down, _s2) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.mailbox.url = "mysql://msgx:msgx@127.0.0.1:1/nowhere".into();
    });
    for minute in 0..40 {
        let s = run(&down, "pump-drain").await;
        assert_eq!(
            s.outcome,
            Outcome::Succeeded,
            "the failure is the message's: {s:?}"
        );
        let (state, class, attempts, wait) = failure_of(&db, 1).await;
        assert_eq!(
            (state.as_str(), class.as_deref()),
            ("FAILED", Some("INFRA")),
            "minute {minute}"
        );
        assert!(
            wait.is_some_and(|w| w <= Duration::minutes(1)),
            "capped: {wait:?}"
        );
        assert_eq!(attempts, minute + 1);
        assert_eq!(outcomes(&db).await[1].1, "PENDING", "message 2 waits");
        clock.advance(Duration::minutes(1));
    }
    let dead: i64 = sqlx::query_scalar("SELECT count(*) FROM proc_state WHERE state = 'DEAD'")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(
        dead, 0,
        "40 simulated minutes of outage turned nothing DEAD"
    );

    // Back up: the head's own class starts its schedule at attempt 1.
    run(&up, "pump-drain").await;
    let (state, class, attempts, wait) = failure_of(&db, 1).await;
    assert_eq!(
        (state.as_str(), class.as_deref(), attempts),
        ("FAILED", Some("UNSUPPORTED"), 1)
    );
    assert_eq!(wait, Some(Duration::seconds(10)));
    gives_up_and_the_queue_moves_on(&db, &up, &clock).await;
}

/// Issue 20 item 5: a head FAILED(INFRA) because the mailbox could not be
/// read is retried as soon as ingest has read the mailbox again (W moved),
/// not after its 5 s / 15 s / 1 min tier; while W stands still it waits, so
/// the pump does not hammer a mailbox that is down.
#[tokio::test]
async fn an_infra_head_is_retried_once_ingest_has_read_the_mailbox_again() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schd(1, "DNLD", &[(9001, "01DEC260835")])).await;
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    run(&r, "ingest-sweep").await;
    // The pump cannot read the raw text: the table is away.
    mb.exec("RENAME TABLE cminmsgs TO cminmsgs_away").await;
    run(&r, "pump-drain").await;
    let (state, class, attempts, wait) = failure_of(&db, 1).await;
    assert_eq!(
        (state.as_str(), class.as_deref(), attempts),
        ("FAILED", Some("INFRA"), 1)
    );
    assert_eq!(wait, Some(Duration::seconds(5)), "the first INFRA tier");
    // W has not moved: the head waits its tier.
    clock.advance(Duration::seconds(1));
    let s = run(&r, "pump-drain").await;
    assert_eq!(detail(&s, "waiting_for_retry"), 1, "{s:?}");
    assert_eq!(failure_of(&db, 1).await.2, 1, "not retried");
    // The mailbox is back and ingest reads a new row: W moves.
    mb.exec("RENAME TABLE cminmsgs_away TO cminmsgs").await;
    mb.insert(&schd(2, "DNLD", &[(9002, "01DEC260935")])).await;
    run(&r, "ingest-sweep").await;
    // One second later, well inside the 5 s tier, the head is retried.
    clock.advance(Duration::seconds(1));
    let s = run(&r, "pump-drain").await;
    assert_eq!(detail(&s, "retried_early"), 1, "{s:?}");
    let states: Vec<String> = outcomes(&db).await.into_iter().map(|o| o.1).collect();
    assert_eq!(states, ["SUCCEEDED", "SUCCEEDED"]);
}

/// Issue 17 item 5: a raw text over `msgx.pipeline.max-message-bytes` is
/// DEAD(MALFORMED, too-large:<bytes>) without being decoded; the queue goes
/// on. Rows on both sides of it, across read-ahead ranges cut by a small
/// byte budget, are processed as usual.
#[tokio::test]
async fn an_oversized_message_is_dead_too_large_and_the_read_ahead_stays_in_its_budget() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schd(1, "DNLD", &[(9001, "01DEC260835")])).await; // 1
    let padded = |seqn: u32, pad: usize| {
        flop(
            seqn,
            9001,
            "REMC",
            &format!("<REMC>r{seqn}</REMC><!--{}-->", "x".repeat(pad)),
        )
    };
    for seqn in 2..=6 {
        mb.insert(&padded(seqn, 3_000)).await; // 2..=6, ~3.3 KB each
    }
    let big = padded(7, 20_000);
    mb.insert(&big).await; // 7: over the limit
    for seqn in 8..=10 {
        mb.insert(&padded(seqn, 3_000)).await; // 8..=10
    }
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.pipeline.max_message_bytes = 10_000;
        c.msgx.pipeline.read_ahead_bytes = 8_000; // about two rows per range
    });
    drain(&r).await;
    let s = outcomes(&db).await;
    assert_eq!(s.len(), 10);
    for (id, state, class, reason) in &s {
        if *id == 7 {
            assert_eq!(
                (state.as_str(), class.as_deref(), reason.clone()),
                (
                    "DEAD",
                    Some("MALFORMED"),
                    Some(format!("too-large:{}", big.len()))
                )
            );
        } else {
            assert_eq!(
                (state.as_str(), class.as_deref()),
                ("SUCCEEDED", None),
                "{id}"
            );
        }
    }
    let remark: Option<String> =
        sqlx::query_scalar("SELECT remc FROM flight_schd WHERE flid = 9001")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        remark.as_deref(),
        Some("r10"),
        "every message applied, in order"
    );
}

/// Issue 17 item 5: a panic inside the decoder (a test-only hook, compiled
/// into debug builds only) is a recorded CODEC_ERROR naming the panic, never
/// a crashed run; it gives up on the CODEC_ERROR schedule and the queue goes
/// on.
#[tokio::test]
async fn a_decoder_panic_is_a_recorded_codec_error() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let poisoned = format!(
        "{}{}",
        flop(1, 9001, "REMC", "<REMC>x</REMC>"),
        msgx::pipeline::process_one::DECODE_PANIC_MARKER
    );
    mb.insert(&poisoned).await; // 1
    mb.insert(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>2</SEQN><TYPE>LDM</TYPE><STYP>X</STYP></META></MSG>",
    )
    .await; // 2
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    run(&r, "ingest-sweep").await;
    let s = run(&r, "pump-drain").await;
    assert_eq!(s.outcome, Outcome::Succeeded, "{s:?}");
    let row = &outcomes(&db).await[0];
    assert_eq!(
        (row.1.as_str(), row.2.as_deref()),
        ("FAILED", Some("CODEC_ERROR"))
    );
    assert!(
        row.3
            .as_deref()
            .unwrap_or("")
            .contains("the decoder panicked: decode fault injected"),
        "{row:?}"
    );
    gives_up_and_the_queue_moves_on(&db, &r, &clock).await;
}

/// Issue 17 item 5: LAST_ERROR is cut to 512 characters with a marker. A
/// decode error quotes the refused value; a 1 MiB FLID once gave a LAST_ERROR
/// of the same size.
#[tokio::test]
async fn a_huge_error_text_is_cut_to_512_characters() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let huge = format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><DTTM>20261201080000</DTTM><TYPE>FLOP</TYPE>\
         <STYP>APPT</STYP></META><FLOP><FLID>{}</FLID><APPT>01DEC260830</APPT></FLOP></MSG>",
        "9".repeat(1 << 20)
    );
    mb.insert(&huge).await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain(&r).await;
    let (state, error): (String, String) =
        sqlx::query_as("SELECT state, last_error FROM proc_state WHERE msg_id = 1")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(state, "DEAD");
    assert_eq!(
        error.chars().count(),
        msgx::error_text::MAX_CHARS,
        "{}",
        error.len()
    );
    assert!(error.starts_with("MALFORMED at MSG/FLOP/FLID"), "{error}");
    assert!(
        error.ends_with(" chars]") && error.contains("… [cut, "),
        "{error}"
    );
}

/// The outbox rows of each FLID (`partition_key`), each list in EVENT_ID
/// order: what a schedule decided in slices must keep (the order between
/// different flights is not promised).
fn events_by_flid(
    events: &[serde_json::Value],
) -> std::collections::BTreeMap<String, Vec<serde_json::Value>> {
    let mut out: std::collections::BTreeMap<String, Vec<serde_json::Value>> = Default::default();
    for e in events {
        let key = e["partition_key"].as_str().unwrap_or_default().to_string();
        out.entry(key).or_default().push(e.clone());
    }
    out
}

/// Large schedules in slices (issue 17 item 5, `msgx.schd.apply-slice`):
/// the same backlog decided with slices of 2 and 7 FLTRs and whole gives
/// the same outcomes, flights, detail rows and, per flight, the same outbox
/// rows — codeshare masters and shares across slices (edge backlog), rich
/// generated packages of 40 flights, and two rejected packages: an
/// operation-day conflict in the last FLTR and bad FDIV codes in two FLTRs
/// that different slices decide (the reason names the first in package
/// order, as the whole package would).
#[tokio::test]
async fn a_schedule_decided_in_slices_gives_the_same_final_state() {
    use msgx::commands::generate::{Spec, messages};
    let spec = Spec {
        messages: 120,
        flights: 80,
        seed: 9,
        duplicates: 0.0,
        malformed: 0.0,
        holes: 0,
        first_seqn: 100,
        package_flights: 40,
        rich: true,
    };
    let share = |maid: i64| format!("<CSOP>YG</CSOP><CSFT>YG{maid}</CSFT><MAID>{maid}</MAID>");
    let bad = |code: &str| format!("<FDIV DDES=\"PEK\" DDIR=\"{code}\">fog</FDIV>");
    let pkg = |seqn: u32, fltrs: &[String]| {
        format!(
            "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>20261130200000</DTTM><TYPE>SCHD</TYPE>\
             <STYP>DNLD</STYP></META><SCHD><RECS>{}</RECS>{}</SCHD></MSG>",
            fltrs.len(),
            fltrs.concat()
        )
    };
    let mut backlog = edge_backlog();
    backlog.extend(messages(&spec).into_iter().flatten());
    backlog.push(pkg(
        90,
        &[
            fltr(9101, "01DEC260835", &share(9104)),
            fltr(9102, "01DEC260835", &bad("X")),
            fltr(9103, "01DEC260835", ""),
            fltr(9104, "01DEC260835", &bad("Y")),
        ],
    ));
    backlog.push(pkg(
        91,
        &[
            fltr(9001, "01DEC260835", ""),
            fltr(9111, "01DEC260835", ""),
            fltr(9112, "01DEC260835", ""),
            fltr(9005, "02DEC260835", ""),
        ],
    ));
    let ignore = |c: &mut msgx::config::Config| c.msgx.ignore = vec!["FLOP-REMC".into()];
    let (a, sa) = final_state(&backlog, 1, ignore, "", "").await;
    assert_eq!(sa.items as usize, backlog.len(), "{sa:?}");
    let n = backlog.len();
    let last = |k: usize| &a.outcomes[n - k];
    assert_eq!(last(2).1, "DEAD", "{:?}", last(2));
    // FLTR 2's code, not FLTR 4's (which the first slice decides).
    assert!(
        last(2).3.as_deref().unwrap_or("").contains("\"X\""),
        "{:?}",
        last(2)
    );
    assert_eq!(last(1).1, "DEAD", "{:?}", last(1));
    assert!(
        last(1).3.as_deref().unwrap_or("").contains("9005"),
        "{:?}",
        last(1)
    );
    for slice in [2, 7] {
        let (b, _) = final_state(
            &backlog,
            1,
            |c| {
                ignore(c);
                c.msgx.schd.apply_slice = slice;
            },
            "",
            "",
        )
        .await;
        assert_eq!(a.outcomes, b.outcomes, "slice {slice}: outcomes");
        assert_eq!(a.bindings, b.bindings, "slice {slice}: bindings");
        assert_eq!(a.flights, b.flights, "slice {slice}: flight rows");
        assert_eq!(a.details, b.details, "slice {slice}: detail rows");
        assert_eq!(
            events_by_flid(&a.events),
            events_by_flid(&b.events),
            "slice {slice}: outbox rows per flight"
        );
    }
}

/// Issue 20, item 2 (idle PostgreSQL load ≤ 10 statements/s in total): an
/// idle run of each job the daemon polls costs at most one PostgreSQL
/// statement once the job object exists (the daemon keeps its jobs for its
/// lifetime; the pump checks the identity algorithm on its first run only),
/// and an idle backfill-scan never touches the mailbox (here unreachable).
/// Counted inside the job's passes, on a database with delivered history.
#[tokio::test]
async fn idle_runs_of_the_polled_jobs_cost_one_statement_each() {
    use msgx::jobs::{JobContext, RunBounds};
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let kafka = mock_kafka(1);
    let bootstrap = kafka.bootstrap_servers();
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        fast_kafka(c, &bootstrap)
    });
    mb.insert(&schd(1, "DNLD", &[(9001, "01DEC260835")])).await;
    drain(&r).await;
    for job in ["dispatch-msg", "schd-flush", "backfill-scan"] {
        assert!(run(&r, job).await.items > 0, "{job} had work");
    }
    clock.advance(Duration::minutes(1));

    let mut config = (*r.config).clone();
    config.msgx.mailbox.url = "mysql://msgx:msgx@127.0.0.1:1/unreachable".into();
    let (_stop_tx, shutdown) = tokio::sync::watch::channel(false);
    let ctx = JobContext {
        pg: db.pool.clone(),
        mailbox: msgx::store::mailbox::Mailbox::new(&config.msgx.mailbox).expect("mailbox url"),
        clock: shared,
        guard: msgx::instance_lock::LockGuard::unlocked(),
        shutdown,
        dry_run: false,
        kafka: Default::default(),
        handoff: Default::default(),
    };
    let bounds = RunBounds {
        max_items: 1000,
        time_budget: std::time::Duration::from_secs(30),
        batch: 500,
    };
    let jobs = msgx::scheduler::registry::Jobs::default();
    let (statements, _guard) = record_statements();
    for name in [
        "pump-drain",
        "dispatch-msg",
        "schd-flush",
        "season-flush",
        "backfill-scan",
    ] {
        let job = jobs
            .get(name, &config)
            .expect("builds")
            .expect("implemented");
        let mut per_run = Vec::new();
        for _ in 0..3 {
            let passes = job
                .run_passes(name, &ctx, &bounds, &RunOptions::default())
                .await;
            assert!(passes.failure.is_none(), "{name}: {:?}", passes.failure);
            assert_eq!(passes.items, 0, "{name} is idle");
            per_run.push(statements.take());
        }
        let first = if name == "pump-drain" { 2 } else { 1 };
        assert!(per_run[0].len() <= first, "{name}, first run: {per_run:?}");
        for later in &per_run[1..] {
            assert_eq!(later.len(), 1, "{name}, an idle run: {per_run:?}");
        }
    }
}

/// Issue 38 item 2: each commit that leaves work for the next stage is
/// handed over at once — every ingest round that enqueued rows and every
/// group or message the pump committed — so the daemon starts the next
/// stage inside the run instead of at its end. Here the handoff counts:
/// five rounds of two rows, then the ten messages malformed and each
/// decided alone (a group of them is one commit; here a malformed message
/// ends up in the group too, so the count is the pump's commits).
#[tokio::test]
async fn ingest_and_the_pump_hand_over_each_commit() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    for _ in 0..10 {
        mb.insert("<MSG><META>").await;
    }
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| c.msgx.pipeline.claim_batch = 2);
    let counted = |n: &std::sync::Arc<std::sync::atomic::AtomicU64>| {
        let n = n.clone();
        msgx::jobs::Handoff::new(move || {
            n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
    };
    let ingest = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let opts = RunOptions {
        handoff: counted(&ingest),
        ..Default::default()
    };
    let s = r
        .run("ingest-sweep", &opts, None)
        .await
        .expect("ingest runs");
    assert_eq!(s.items, 10);
    assert!(opts.handoff.used());
    assert_eq!(
        ingest.load(std::sync::atomic::Ordering::SeqCst),
        5,
        "one per round"
    );

    let pump = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let opts = RunOptions {
        handoff: counted(&pump),
        ..Default::default()
    };
    let s = r.run("pump-drain", &opts, None).await.expect("pump runs");
    assert_eq!(s.items, 10, "{s:?}");
    let commits = pump.load(std::sync::atomic::Ordering::SeqCst);
    assert!(commits >= 1, "the pump's commits handed over");
    // Without a handoff (msgx run), nothing is told and nothing breaks.
    assert!(!msgx::jobs::Handoff::default().used());
}
