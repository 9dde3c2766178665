//! The small maintenance jobs implemented with the skeleton (event-cleanup,
//! snaplog-purge, request-expiry, retention), run in-process through the one
//! JobRunner path with a manual clock against a real PostgreSQL.

use crate::common;

use chrono::Duration;
use common::queries::count;
use common::*;
use msgx::scheduler::runner::RunOptions;
use msgx::store::pg::job_run::Outcome;

#[tokio::test]
async fn retention_deletes_old_job_runs_in_bounded_batches() {
    let db = TestDb::migrated().await;
    let (clock, shared) = manual_clock();
    let now = shared.now();
    // Manifest batch for retention is 2000: insert batch + 1 old rows, plus fresh ones.
    sqlx::query(
        "INSERT INTO job_run (job, trigger, instance, started_at, finished_at, outcome) \
         SELECT 'x', 'cli', 't', $1, $1, 'SUCCEEDED' FROM generate_series(1, 2001)",
    )
    .bind(now - Duration::days(31))
    .execute(&db.pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO job_run (job, trigger, instance, started_at, finished_at, outcome) \
         SELECT 'x', 'cli', 't', $1, $1, 'SUCCEEDED' FROM generate_series(1, 5)",
    )
    .bind(now - Duration::days(29))
    .execute(&db.pool)
    .await
    .unwrap();
    let (r, _stop) = runner(&db, None, shared.clone(), |_| {});

    let dry = r
        .run(
            "retention",
            &RunOptions {
                dry_run: true,
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!(dry.items, 2001);
    assert_eq!(
        count(&db, "SELECT count(*) FROM job_run WHERE job = 'x'").await,
        2006,
        "dry run changes nothing"
    );

    let bounded = r
        .run(
            "retention",
            &RunOptions {
                max_items: Some(1500),
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!((bounded.items, bounded.more), (1500, true));
    let rest = r
        .run("retention", &RunOptions::default(), None)
        .await
        .unwrap();
    assert_eq!((rest.items, rest.more), (501, false));
    assert_eq!(
        count(&db, "SELECT count(*) FROM job_run WHERE job = 'x'").await,
        5,
        "recent rows stay"
    );

    // Time moves on: the remaining rows age out too.
    clock.advance(Duration::days(2));
    let later = r
        .run("retention", &RunOptions::default(), None)
        .await
        .unwrap();
    assert!(later.items >= 5, "{later:?}");
    assert_eq!(
        count(&db, "SELECT count(*) FROM job_run WHERE job = 'x'").await,
        0
    );
}

#[tokio::test]
async fn event_cleanup_deletes_only_sent_events_past_retention() {
    let db = TestDb::migrated().await;
    let (_clock, shared) = manual_clock();
    let now = shared.now();
    let insert = "INSERT INTO msg_event (target, partition_key, event_type, state_version, status, created_at, sent_at) \
                  VALUES ('KAFKA:msg', $1, 'UPSERT', 1, $2, $3, $4)";
    for (key, status, sent) in [
        ("1", "SENT", Some(now - Duration::days(8))),
        ("2", "SENT", Some(now - Duration::days(6))),
        ("3", "DEAD", None),
        ("4", "PENDING", None),
    ] {
        sqlx::query(insert)
            .bind(key)
            .bind(status)
            .bind(now - Duration::days(9))
            .bind(sent)
            .execute(&db.pool)
            .await
            .unwrap();
    }
    let (r, _stop) = runner(&db, None, shared, |_| {});
    let s = r
        .run("event-cleanup", &RunOptions::default(), None)
        .await
        .unwrap();
    assert_eq!((s.outcome, s.items), (Outcome::Succeeded, 1));
    let left: Vec<String> =
        sqlx::query_scalar("SELECT partition_key FROM msg_event ORDER BY partition_key")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        left,
        vec!["2", "3", "4"],
        "DEAD stays as the DLQ, PENDING and recent SENT stay"
    );
}

#[tokio::test]
async fn request_expiry_expires_only_overdue_sent_requests() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let now = shared.now();
    let insert = "INSERT INTO req_track (req_type, operation_day, sender, state, seqn, routing_id, request_xml, created_at, sent_at) \
                  VALUES ($1, NULL, 'VIEW', $2, '000001', 'VIEWRQRD', '<MSG/>', $3, $3)";
    sqlx::query(insert)
        .bind("RQRD:GLST")
        .bind("SENT")
        .bind(now - Duration::minutes(11))
        .execute(&db.pool)
        .await
        .unwrap();
    sqlx::query(insert)
        .bind("RQRD:SLST")
        .bind("SENT")
        .bind(now - Duration::minutes(9))
        .execute(&db.pool)
        .await
        .unwrap();
    // A young PENDING row without a COUTMSGS row: compensation leaves it
    // (its writer may be running; tests/it/requests.rs covers compensation).
    sqlx::query(insert)
        .bind("RQRD:TLST")
        .bind("PENDING")
        .bind(now - Duration::minutes(1))
        .execute(&db.pool)
        .await
        .unwrap();
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let s = r
        .run("request-expiry", &RunOptions::default(), None)
        .await
        .unwrap();
    assert_eq!(s.items, 1);
    let states: Vec<(String, String, Option<chrono::DateTime<chrono::Utc>>)> =
        sqlx::query_as("SELECT req_type, state, closed_at FROM req_track ORDER BY req_type")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(states[0], ("RQRD:GLST".into(), "EXPIRED".into(), Some(now)));
    assert_eq!(states[1].1, "SENT");
    assert_eq!(states[2].1, "PENDING");
}

#[tokio::test]
async fn snaplog_purge_uses_scope_end_and_receive_time() {
    let db = TestDb::migrated().await;
    let (_clock, shared) = manual_clock();
    let now = shared.now();
    let insert = "INSERT INTO schd_snap_log (msg_id, styp, recv_at, scope_end, outcome) VALUES ($1, 'DNLD', $2, $3, 'SUCCEEDED')";
    for (id, recv_days, scope_days) in [
        (1_i64, 40, Some(35)),
        (2, 40, Some(-2)),
        (3, 10, Some(35)),
        (4, 40, None),
    ] {
        sqlx::query(insert)
            .bind(id)
            .bind(now - Duration::days(recv_days))
            .bind(scope_days.map(|d| now - Duration::days(d)))
            .execute(&db.pool)
            .await
            .unwrap();
    }
    let (r, _stop) = runner(&db, None, shared, |_| {});
    let s = r
        .run("snaplog-purge", &RunOptions::default(), None)
        .await
        .unwrap();
    assert_eq!(s.items, 2);
    let left: Vec<i64> = sqlx::query_scalar("SELECT msg_id FROM schd_snap_log ORDER BY msg_id")
        .fetch_all(&db.pool)
        .await
        .unwrap();
    assert_eq!(
        left,
        vec![2, 3],
        "a scope still open or a recent receipt keeps the row"
    );
}

#[tokio::test]
async fn a_run_stops_before_writing_once_shutdown_is_requested() {
    let db = TestDb::migrated().await;
    let (_clock, shared) = manual_clock();
    sqlx::query(
        "INSERT INTO job_run (job, trigger, instance, started_at, finished_at, outcome) \
         SELECT 'x', 'cli', 't', $1, $1, 'SUCCEEDED' FROM generate_series(1, 10)",
    )
    .bind(shared.now() - Duration::days(60))
    .execute(&db.pool)
    .await
    .unwrap();
    let (r, stop) = runner(&db, None, shared, |_| {});
    stop.send(true).unwrap();
    let s = r
        .run("retention", &RunOptions::default(), None)
        .await
        .unwrap();
    assert_eq!((s.items, s.more), (0, true));
    assert_eq!(
        count(&db, "SELECT count(*) FROM job_run WHERE job = 'x'").await,
        10
    );
}
