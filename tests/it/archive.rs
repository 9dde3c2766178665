//! archive-proc-state (design §9.3, issue 8 item 1) against real MariaDB and
//! PostgreSQL with a manual clock: terminal rows from the real pipeline,
//! marked by the real backfill scan, then archived.

use crate::common;

use chrono::Duration;
use common::jobs::{drain, run, run_dry};
use common::queries::states_with_identity;
use common::sis::flop;
use common::*;
use msgx::scheduler::runner::{JobRunner, RunSummary};

/// Three messages (unknown flights → SKIPPED), marked by backfill.
async fn three_marked(db: &TestDb, mb: &TestMailbox, r: &JobRunner) {
    for i in 1..=3 {
        mb.insert(&flop(i, 4000 + i64::from(i), "REMC", "<REMC>x</REMC>"))
            .await;
    }
    drain(r).await;
    let marked = run(r, "backfill-scan").await;
    assert_eq!(marked.items, 3, "{marked:?}");
    let terminal: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM proc_state WHERE state = 'SKIPPED' AND backfill_at IS NOT NULL",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(terminal, 3);
}

#[tokio::test]
async fn settled_terminal_rows_become_shadows_with_a_full_copy_in_hst() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    three_marked(&db, &mb, &r).await;
    // An abandoned, unreconciled row is never archived; a reconciled one is,
    // once it has been on the abandoned list for R_keep (7 d; §9.3 (3)).
    sqlx::query("UPDATE proc_state SET backfill_at = NULL, backfill_abandoned_at = updated_at, backfill_abandoned_reason = 'MISSING_ROW' WHERE msg_id IN (2, 3)")
        .execute(&db.pool)
        .await
        .unwrap();
    sqlx::query("UPDATE proc_state SET backfill_reconciled_at = updated_at WHERE msg_id = 3")
        .execute(&db.pool)
        .await
        .unwrap();

    assert_eq!(
        run(&r, "archive-proc-state").await.items,
        0,
        "too recent: time is necessary"
    );
    clock.advance(Duration::days(3) + Duration::seconds(1));
    let dry = run_dry(&r, "archive-proc-state").await;
    assert_eq!(dry.items, 1);
    assert_eq!(
        states_with_identity(&db)
            .await
            .iter()
            .filter(|s| s.1 == "ARCHIVED")
            .count(),
        0,
        "--dry-run changes nothing"
    );

    let s = run(&r, "archive-proc-state").await;
    assert_eq!(
        s.details.get("archived").and_then(|v| v.as_u64()),
        Some(1),
        "{s:?}"
    );
    assert_eq!(
        states_with_identity(&db).await[2].1,
        "SKIPPED",
        "reconciled, but abandoned less than R_keep ago: still on the abandoned list"
    );
    clock.advance(Duration::days(4));
    let s = run(&r, "archive-proc-state").await;
    assert_eq!(
        s.details.get("archived").and_then(|v| v.as_u64()),
        Some(1),
        "{s:?}"
    );
    let st = states_with_identity(&db).await;
    assert_eq!(st[0].1, "ARCHIVED");
    assert_eq!(
        st[1].1, "SKIPPED",
        "abandoned but not reconciled: evidence missing, kept"
    );
    assert_eq!(st[2].1, "ARCHIVED");
    assert!(st[0].2.is_some(), "the shadow keeps IDENTITY_KEY");
    let shadow: (
        Option<String>,
        Option<chrono::DateTime<chrono::Utc>>,
        Option<chrono::DateTime<chrono::Utc>>,
    ) = sqlx::query_as(
        "SELECT outcome_reason, enqueued_at, backfill_at FROM proc_state WHERE msg_id = 1",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        shadow,
        (None, None, None),
        "only MSG_ID and IDENTITY_KEY stay"
    );
    let copy: (
        String,
        Option<String>,
        Option<chrono::DateTime<chrono::Utc>>,
    ) = sqlx::query_as(
        "SELECT state, outcome_reason, backfill_at FROM proc_state_hst WHERE msg_id = 1",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(copy.0, "SKIPPED");
    assert!(copy.1.unwrap_or_default().starts_with("no-match"));
    assert!(copy.2.is_some());

    // Head selection, backlog and the backfill scan ignore shadow rows.
    assert!(
        msgx::store::pg::proc_state::head(&db.pool)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(run(&r, "backfill-scan").await.items, 0);
    let out = msgx(
        db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone())
            .path(),
        &["status", "--json"],
    );
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    assert_eq!(
        status["oldest_unprocessed_seconds"],
        serde_json::Value::Null
    );
}

#[tokio::test]
async fn a_duplicate_after_archiving_is_still_skipped_as_duplicate() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    three_marked(&db, &mb, &r).await;
    clock.advance(Duration::days(4));
    assert_eq!(
        run(&r, "archive-proc-state")
            .await
            .details
            .get("archived")
            .and_then(|v| v.as_u64()),
        Some(3)
    );
    mb.insert(&flop(2, 4002, "REMC", "<REMC>x</REMC>")).await; // same identity as message 2
    drain(&r).await;
    let reason: String =
        sqlx::query_scalar("SELECT outcome_reason FROM proc_state WHERE msg_id = 4")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(reason, "duplicate-of:2", "INV-9 across archiving");
}

#[tokio::test]
async fn archive_racing_a_replay_leaves_no_partial_copy() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    three_marked(&db, &mb, &r).await;
    sqlx::query("UPDATE proc_state SET state = 'DEAD', error_class = 'EXHAUSTED' WHERE msg_id = 2")
        .execute(&db.pool)
        .await
        .unwrap();
    clock.advance(Duration::days(4));
    // A replay holds row 2 (its UPDATE not yet committed) while the archive runs.
    let mut replay = db.pool.begin().await.unwrap();
    sqlx::query("UPDATE proc_state SET state = 'PENDING', attempts = 0, error_class = NULL WHERE msg_id = 2 AND state = 'DEAD'")
        .execute(&mut *replay)
        .await
        .unwrap();
    let s = run(&r, "archive-proc-state").await;
    assert_eq!(
        s.details.get("archived").and_then(|v| v.as_u64()),
        Some(2),
        "row 2 is skipped, not waited for"
    );
    replay.commit().await.unwrap();
    let again = run(&r, "archive-proc-state").await;
    assert_eq!(
        again.details.get("archived").and_then(|v| v.as_u64()),
        Some(0),
        "PENDING is no candidate"
    );
    let st = states_with_identity(&db).await;
    assert_eq!(st[1].1, "PENDING", "the replayed row stays in PROC_STATE");
    let copies: Vec<i64> = sqlx::query_scalar("SELECT msg_id FROM proc_state_hst ORDER BY msg_id")
        .fetch_all(&db.pool)
        .await
        .unwrap();
    assert_eq!(copies, vec![1, 3], "no copy of the replayed row");
}

#[tokio::test]
async fn shadows_and_history_rows_expire_by_their_own_retention() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    three_marked(&db, &mb, &r).await;
    clock.advance(Duration::days(4));
    run(&r, "archive-proc-state").await;
    clock.advance(Duration::days(29));
    let s = run(&r, "archive-proc-state").await;
    assert_eq!(
        s.details.get("shadows_removed").and_then(|v| v.as_u64()),
        Some(0),
        "dedup memory is 30 d"
    );
    clock.advance(Duration::days(2));
    let s = run(&r, "archive-proc-state").await;
    assert_eq!(
        s.details.get("shadows_removed").and_then(|v| v.as_u64()),
        Some(3)
    );
    assert_eq!(states_with_identity(&db).await.len(), 0);
    clock.advance(Duration::days(150));
    let s = run(&r, "archive-proc-state").await;
    assert_eq!(
        s.details.get("hst_purged").and_then(|v| v.as_u64()),
        Some(3),
        "hst retention 180 d"
    );
}

#[tokio::test]
async fn the_abandoned_list_stays_queryable_for_r_keep_and_so_does_its_archived_copy() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    // hst-retention 1 d is below R_keep (7 d): `config check` refuses it, and
    // the job still keeps the abandoned-backfill evidence (§9.3 (3)).
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        c.msgx.archive.hst_retention = "1d".parse().unwrap();
    });
    three_marked(&db, &mb, &r).await;
    sqlx::query(
        "UPDATE proc_state SET backfill_at = NULL, backfill_abandoned_at = $1, \
         backfill_abandoned_reason = 'MISSING_ROW' WHERE msg_id = 2",
    )
    .bind(shared.now())
    .execute(&db.pool)
    .await
    .unwrap();
    let reconciled =
        msgx::backfill::ops::reconcile(&db.pool, shared.now(), &[2], Some("owner ok"), "test")
            .await
            .unwrap();
    assert_eq!(reconciled.changed, vec![2]);
    let listed = |pool: sqlx::PgPool| async move {
        msgx::backfill::ops::abandoned(&pool)
            .await
            .unwrap()
            .iter()
            .map(|a| a.msg_id)
            .collect::<Vec<_>>()
    };
    let archived = |s: &RunSummary| s.details.get("archived").and_then(|v| v.as_u64());

    clock.advance(Duration::days(7) - Duration::seconds(1));
    assert_eq!(archived(&run(&r, "archive-proc-state").await), Some(2));
    assert_eq!(
        listed(db.pool.clone()).await,
        vec![2],
        "reconciled and past archive.after, but abandoned less than R_keep ago"
    );
    clock.advance(Duration::seconds(2));
    assert_eq!(archived(&run(&r, "archive-proc-state").await), Some(1));
    assert!(listed(db.pool.clone()).await.is_empty());
    let copy: (String, Option<String>) = sqlx::query_as(
        "SELECT state, backfill_abandoned_reason FROM proc_state_hst WHERE msg_id = 2",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(copy, ("SKIPPED".into(), Some("MISSING_ROW".into())));

    // One day on, the other copies are past hst-retention; the evidence is not.
    clock.advance(Duration::days(1) + Duration::seconds(1));
    let s = run(&r, "archive-proc-state").await;
    assert_eq!(
        s.details.get("hst_purged").and_then(|v| v.as_u64()),
        Some(2)
    );
    let left: Vec<i64> = sqlx::query_scalar("SELECT msg_id FROM proc_state_hst")
        .fetch_all(&db.pool)
        .await
        .unwrap();
    assert_eq!(left, vec![2], "abandoned evidence outlives hst-retention");
    clock.advance(Duration::days(7));
    let s = run(&r, "archive-proc-state").await;
    assert_eq!(
        s.details.get("hst_purged").and_then(|v| v.as_u64()),
        Some(1),
        "and goes once R_keep has passed"
    );
}

#[tokio::test]
async fn archived_shadows_are_never_the_head_the_backlog_or_backfill_work() {
    let db = TestDb::migrated().await;
    let (_clock, shared) = manual_clock();
    let now = shared.now();
    // Shadow rows below and above a PENDING row: every column a live row
    // would be selected by (no mark, no abandonment, no backoff) is NULL.
    sqlx::query(
        "INSERT INTO proc_state (msg_id, state, identity_key) \
         VALUES (1, 'ARCHIVED', 'AODB|FLOP|REMC|1'), (3, 'ARCHIVED', 'AODB|FLOP|REMC|3')",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO proc_state (msg_id, state, enqueued_at, updated_at) VALUES (2, 'PENDING', $1, $1)",
    )
    .bind(now - Duration::minutes(5))
    .execute(&db.pool)
    .await
    .unwrap();
    sqlx::query("UPDATE inbox_cursor SET w = 3")
        .execute(&db.pool)
        .await
        .unwrap();
    use msgx::store::pg::{backfill, proc_state};
    let head = proc_state::head(&db.pool).await.unwrap().expect("a head");
    assert_eq!(head.msg_id, 2);
    let unfinished: Vec<i64> = proc_state::unfinished(&db.pool, 10)
        .await
        .unwrap()
        .iter()
        .map(|h| h.msg_id)
        .collect();
    assert_eq!(unfinished, vec![2]);
    let r = now - Duration::hours(24);
    assert!(
        backfill::due(&db.pool, now, r, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(backfill::count_due(&db.pool, now, r).await.unwrap(), 0);
    let stats = backfill::stats(&db.pool, now, r, 20).await.unwrap();
    assert_eq!((stats.pending, stats.due, stats.confirmed), (0, 0, 0));
    let facts = msgx::status::pg_facts(&db.pool, now, &db.config())
        .await
        .unwrap();
    assert_eq!(facts.oldest_unprocessed_seconds, Some(300));
    assert_eq!(facts.proc_state.get("ARCHIVED"), Some(&2));
}
