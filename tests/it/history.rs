//! flight-history-clean (design §12.5, §12.3; issue 8 item 2) against real
//! MariaDB and PostgreSQL with a manual clock.

use crate::common;

use chrono::Duration;
use common::jobs::{drain, run, run_dry};
use common::queries::flights;
use common::sis::{flop, fltr, schd_dnld};
use common::*;
use msgx::scheduler::runner::JobRunner;
use msgx::store::pg::job_run::Outcome;

/// 9001 plain (then FDEL'd), 9003 a master, 9002 its share; all on 1 Dec 2026.
async fn setup(db: &TestDb, mb: &TestMailbox, r: &JobRunner) {
    mb.insert(&schd_dnld(
        1,
        &[
            fltr(9001, "01DEC260835", ""),
            fltr(
                9002,
                "01DEC260935",
                "<CSOP>YG</CSOP><CSFT>YG9003</CSFT><MAID>9003</MAID>",
            ),
            fltr(9003, "01DEC260935", ""),
        ],
    ))
    .await;
    mb.insert(&flop(2, 9001, "FDEL", "<FDEL/>")).await;
    drain(r).await;
    let f = flights(db).await;
    assert_eq!(
        f.iter().map(|x| x.1.as_str()).collect::<Vec<_>>(),
        vec!["DELETED", "ACTIVE", "ACTIVE"]
    );
}

#[tokio::test]
async fn finished_flights_move_to_history_with_tombstones_only_where_not_fdeled() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock(); // 2026-12-01T08:00Z
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    setup(&db, &mb, &r).await;
    let msg_9001_before: i64 =
        sqlx::query_scalar("SELECT count(*) FROM msg_event WHERE partition_key = '9001'")
            .fetch_one(&db.pool)
            .await
            .unwrap();

    // The day ends 2026-12-02 00:00 Asia/Shanghai = 12-01T16:00Z; min-age 3 d.
    clock.advance(Duration::days(3) + Duration::hours(7)); // 12-04T15:00Z: one hour short
    assert_eq!(
        run(&r, "flight-history-clean").await.items,
        0,
        "min-age not reached"
    );
    clock.advance(Duration::hours(2));
    let dry = run_dry(&r, "flight-history-clean").await;
    assert_eq!(dry.items, 3);
    assert_eq!(flights(&db).await.len(), 3, "--dry-run changes nothing");

    let s = run(&r, "flight-history-clean").await;
    assert_eq!(s.outcome, Outcome::Succeeded, "{s:?}");
    // 9001 (DELETED) and the share 9002 go; cleaning the share recomputed the
    // master's MAFL, an update, so 9003 waits for its own quiet period.
    let left = flights(&db).await;
    assert_eq!(left.iter().map(|x| x.0).collect::<Vec<_>>(), vec![9003]);
    assert_eq!(left[0].2, 2, "master bumped by the MAFL change (§11.4)");
    let hist: Vec<(i64, String)> =
        sqlx::query_as("SELECT flid, state FROM flight_history ORDER BY flid")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        hist,
        vec![(9001, "DELETED".into()), (9002, "ACTIVE".into())]
    );
    let snap: serde_json::Value =
        sqlx::query_scalar("SELECT snapshot FROM flight_history WHERE flid = 9002")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(snap["maid"], 9003, "the complete state went to history");
    let msg_9001_after: i64 =
        sqlx::query_scalar("SELECT count(*) FROM msg_event WHERE partition_key = '9001'")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        msg_9001_before, msg_9001_after,
        "no second tombstone for a flight already FDEL'd"
    );
    let lifecycle: Vec<(String, String)> = sqlx::query_as(
        "SELECT target, event_type FROM msg_event WHERE partition_key = '9002' AND msg_id IS NULL ORDER BY event_id",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        lifecycle,
        vec![
            ("KAFKA:msg".into(), "UPSERT".into()),
            ("KAFKA:schd".into(), "TOMBSTONE".into())
        ]
    );
    let note: Vec<u8> = sqlx::query_scalar(
        "SELECT payload FROM msg_event WHERE partition_key = '9002' AND target = 'KAFKA:msg' AND msg_id IS NULL",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert!(String::from_utf8_lossy(&note).contains("LIFECYCLE-CLEAN"));
    let master_note: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM msg_event WHERE partition_key = '9003' AND target = 'KAFKA:msg' AND msg_id IS NULL",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        master_note, 1,
        "the master is notified of its share's removal (§12.3)"
    );

    clock.advance(Duration::hours(49));
    run(&r, "flight-history-clean").await;
    assert!(
        flights(&db).await.is_empty(),
        "after its quiet period the master goes too"
    );
    clock.advance(Duration::days(401));
    let purge = run(&r, "flight-history-clean").await;
    assert_eq!(
        purge.details.get("history_purged").and_then(|v| v.as_u64()),
        Some(3)
    );
}

#[tokio::test]
async fn a_failing_history_write_deletes_nothing() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    setup(&db, &mb, &r).await;
    sqlx::raw_sql(
        "CREATE FUNCTION nohist() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'history store full (test)'; END $$; \
         CREATE TRIGGER nohist BEFORE INSERT ON flight_history FOR EACH ROW EXECUTE FUNCTION nohist();",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    let events_before: i64 = sqlx::query_scalar("SELECT count(*) FROM msg_event")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    clock.advance(Duration::days(5));
    let s = run(&r, "flight-history-clean").await;
    assert_eq!(s.outcome, Outcome::Failed, "{s:?}");
    assert_eq!(flights(&db).await.len(), 3, "zero rows deleted");
    let events_after: i64 = sqlx::query_scalar("SELECT count(*) FROM msg_event")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(
        events_before, events_after,
        "no tombstone without the history write"
    );
}

#[tokio::test]
async fn the_pump_keeps_processing_in_order_while_history_clean_runs() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| c.msgx.pipeline.group_commit = 1);
    let old: Vec<String> = (0..200)
        .map(|i| fltr(10_000 + i, "01DEC260835", ""))
        .collect();
    let live: Vec<String> = (0..20)
        .map(|i| fltr(20_000 + i, "20DEC260835", ""))
        .collect();
    mb.insert(&schd_dnld(1, &old)).await;
    mb.insert(&schd_dnld(2, &live)).await;
    drain(&r).await;
    clock.advance(Duration::days(5));
    for i in 0..400u32 {
        mb.insert(&flop(
            10 + i,
            20_000 + i64::from(i % 20),
            "REMC",
            &format!("<REMC>r{i}</REMC>"),
        ))
        .await;
    }
    run(&r, "ingest-sweep").await;
    let (pumped, cleaned) = tokio::join!(run(&r, "pump-drain"), run(&r, "flight-history-clean"));
    assert_eq!(pumped.items, 400, "{pumped:?}");
    assert_eq!(cleaned.items, 200, "{cleaned:?}");
    let inversions: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT msg_id, lag(msg_id) OVER (ORDER BY event_id) AS prev \
         FROM msg_event WHERE target = 'KAFKA:msg' AND msg_id IS NOT NULL) t WHERE prev > msg_id",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        inversions, 0,
        "FIFO holds while the clean interleaves (INV-18)"
    );
    let remc: String = sqlx::query_scalar("SELECT remc FROM flight_schd WHERE flid = 20019")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(remc, "r399");
}

/// Issue 18: a FLID that flight-history-clean removed and a schedule then
/// re-creates continues its STATE_VERSION line from the history store, so
/// the outbox's only-forward schd row (and every consumer's version guard)
/// takes the new state. Both kinds: 9001 cleaned ACTIVE (its lifecycle
/// tombstone took version 2), 9002 FDEL'd first (tombstone at version 2).
/// The old code re-created both at version 1, below their tombstones.
#[tokio::test]
async fn a_flight_re_created_after_history_clean_continues_its_version() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    let pkg = |seqn| {
        schd_dnld(
            seqn,
            &[fltr(9001, "01DEC260835", ""), fltr(9002, "01DEC260935", "")],
        )
    };
    mb.insert(&pkg(1)).await;
    mb.insert(&flop(2, 9002, "FDEL", "<FDEL/>")).await;
    drain(&r).await;
    clock.advance(Duration::days(5));
    run(&r, "flight-history-clean").await;
    assert!(flights(&db).await.is_empty(), "both moved to history");

    mb.insert(&pkg(3)).await;
    drain(&r).await;
    assert_eq!(
        flights(&db).await,
        vec![(9001, "ACTIVE".into(), 3), (9002, "ACTIVE".into(), 3)],
        "re-created above the last published version (2)"
    );
    let schd_rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT partition_key, event_type, state_version FROM msg_event \
         WHERE target = 'KAFKA:schd' ORDER BY partition_key",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        schd_rows,
        vec![
            ("9001".into(), "UPSERT".into(), 3),
            ("9002".into(), "UPSERT".into(), 3)
        ],
        "the new state replaced the tombstones"
    );
}
