//! ingest-sweep = InboxPoller (design §4.1, §4.3) against a real MariaDB
//! mailbox and a real PostgreSQL, with a manual clock.

use crate::common;

use chrono::Duration;
use common::jobs::detail;
use common::*;
use msgx::scheduler::runner::{JobRunner, RunOptions};
use msgx::store::pg::job_run::Outcome;
use mysql_async::prelude::Queryable;

const XML: &str =
    "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><TYPE>LDM</TYPE><STYP>UPD</STYP></META></MSG>";

async fn ingest(r: &JobRunner) -> msgx::scheduler::runner::RunSummary {
    r.run("ingest-sweep", &RunOptions::default(), None)
        .await
        .expect("ingest runs")
}

async fn cursor(db: &TestDb) -> (i64, Option<chrono::DateTime<chrono::Utc>>) {
    sqlx::query_as("SELECT w, hole_since FROM inbox_cursor")
        .fetch_one(&db.pool)
        .await
        .unwrap()
}

/// `msgx.pipeline.hole-evidence = false`: for the tests of the time rule.
/// The system MariaDB is shared by parallel tests, whose open transactions
/// would otherwise decide when a rolled-back ID is released.
fn time_rule_only(c: &mut msgx::config::Config) {
    c.msgx.pipeline.hole_evidence = false;
}

async fn enqueued(db: &TestDb) -> Vec<i64> {
    sqlx::query_scalar("SELECT msg_id FROM proc_state ORDER BY msg_id")
        .fetch_all(&db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn contiguous_rows_are_enqueued_in_batches_and_w_advances() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    for _ in 0..7 {
        mb.insert(XML).await;
    }
    let (_clock, shared) = manual_clock();
    // claim-batch 3: batch + 1 rows prove several rounds in one run.
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        c.msgx.pipeline.claim_batch = 3
    });
    let s = ingest(&r).await;
    assert_eq!((s.outcome, s.items, s.more), (Outcome::Succeeded, 7, false));
    assert_eq!(cursor(&db).await, (7, None));
    assert_eq!(enqueued(&db).await, (1..=7).collect::<Vec<_>>());
    let row: (
        String,
        chrono::DateTime<chrono::Utc>,
        Option<chrono::DateTime<chrono::Utc>>,
    ) = sqlx::query_as("SELECT state, enqueued_at, received_at FROM proc_state WHERE msg_id = 1")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(row.0, "PENDING");
    assert_eq!(
        row.1,
        shared.now(),
        "ENQUEUED_AT comes from the injected clock"
    );
    assert!(row.2.is_some(), "RECEIVED_AT copied from the mailbox");
    // A second run finds nothing and changes nothing (idempotent).
    let again = ingest(&r).await;
    assert_eq!(again.items, 0);
    assert_eq!(cursor(&db).await.0, 7);
}

#[tokio::test]
async fn max_items_bounds_a_run() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    for _ in 0..5 {
        mb.insert(XML).await;
    }
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| c.msgx.pipeline.claim_batch = 2);
    let s = r
        .run(
            "ingest-sweep",
            &RunOptions {
                max_items: Some(2),
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!((s.items, s.more), (2, true));
    let s = r
        .run(
            "ingest-sweep",
            &RunOptions {
                until_empty: true,
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!((s.items, s.more), (3, false));
}

#[tokio::test]
async fn a_rolled_back_insert_holds_later_rows_until_max_commit_delay_then_is_released() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(XML).await; // 1
    let lost = mb.insert_rolled_back(XML).await; // 2 never commits
    mb.insert(XML).await; // 3
    mb.insert(XML).await; // 4
    assert_eq!(lost, 2);
    let (clock, shared) = manual_clock();
    let t0 = shared.now();
    // The time rule alone (tests/it/hole_evidence.rs has the evidence).
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), time_rule_only);

    let s = ingest(&r).await;
    assert_eq!(s.items, 1, "only the row before the hole");
    assert_eq!(
        cursor(&db).await,
        (1, Some(t0)),
        "the hole at 2 is timed from now"
    );
    assert_eq!(enqueued(&db).await, vec![1]);

    clock.advance(Duration::seconds(29));
    assert_eq!(
        ingest(&r).await.items,
        0,
        "29 s < max-commit-delay: rows 3 and 4 wait"
    );
    assert_eq!(
        cursor(&db).await,
        (1, Some(t0)),
        "HOLE_SINCE keeps the first observation"
    );

    clock.advance(Duration::seconds(1));
    let s = ingest(&r).await;
    assert_eq!(
        s.items, 2,
        "after 30 s the hole is released and 3, 4 follow"
    );
    assert_eq!(cursor(&db).await, (4, None));
    assert_eq!(enqueued(&db).await, vec![1, 3, 4]);
    let hole: (
        i64,
        i64,
        chrono::DateTime<chrono::Utc>,
        chrono::DateTime<chrono::Utc>,
        String,
    ) = sqlx::query_as("SELECT first_id, last_id, first_seen, released_at, reason FROM inbox_hole")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(
        hole,
        (
            2,
            2,
            t0,
            t0 + Duration::seconds(30),
            "max-commit-delay".into()
        )
    );
    assert_eq!(
        s.details.get("holes_released").and_then(|v| v.as_u64()),
        Some(1)
    );
}

#[tokio::test]
async fn a_late_commit_inside_the_window_is_taken_in_order() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(XML).await; // 1
    // Transaction A takes ID 2 but commits late; B takes 3 and commits first.
    let mut a_conn = mb.pool.get_conn().await.unwrap();
    let mut a = a_conn
        .start_transaction(mysql_async::TxOpts::default())
        .await
        .unwrap();
    a.exec_drop(
        "INSERT INTO cminmsgs (CMINMSGS_CLOB_MSG, CMINMSGS_STATUS) VALUES (?, 'VALID')",
        (XML,),
    )
    .await
    .unwrap();
    assert_eq!(a.last_insert_id(), Some(2));
    mb.insert(XML).await; // 3
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    assert_eq!(ingest(&r).await.items, 1);
    assert_eq!(enqueued(&db).await, vec![1]);

    clock.advance(Duration::seconds(10));
    a.commit().await.unwrap();
    assert_eq!(ingest(&r).await.items, 2);
    assert_eq!(
        enqueued(&db).await,
        vec![1, 2, 3],
        "the late commit keeps its place"
    );
    assert_eq!(cursor(&db).await, (3, None));
    let holes: i64 = sqlx::query_scalar("SELECT count(*) FROM inbox_hole")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(holes, 0);
}

#[tokio::test]
async fn hole_since_survives_a_restart() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert_rolled_back(XML).await; // 1
    mb.insert(XML).await; // 2
    let (clock, shared) = manual_clock();
    let t0 = shared.now();
    {
        let (first_process, _stop) = runner(&db, Some(&mb), shared.clone(), time_rule_only);
        assert_eq!(ingest(&first_process).await.items, 0);
    }
    // A new runner (a restarted process) reads the timer from INBOX_CURSOR.
    clock.advance(Duration::seconds(31));
    let (restarted, _stop) = runner(&db, Some(&mb), shared, time_rule_only);
    assert_eq!(cursor(&db).await, (0, Some(t0)));
    assert_eq!(
        ingest(&restarted).await.items,
        1,
        "released 31 s after the first observation"
    );
    assert_eq!(cursor(&db).await, (2, None));
}

#[tokio::test]
async fn a_row_committed_inside_a_released_hole_is_recorded_as_late() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(XML).await; // 1
    let mut a_conn = mb.pool.get_conn().await.unwrap();
    let mut a = a_conn
        .start_transaction(mysql_async::TxOpts::default())
        .await
        .unwrap();
    a.exec_drop(
        "INSERT INTO cminmsgs (CMINMSGS_CLOB_MSG, CMINMSGS_STATUS) VALUES (?, 'VALID')",
        (XML,),
    )
    .await
    .unwrap();
    mb.insert(XML).await; // 3
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    release_hole_at_2(&db, &r, &clock).await;
    a.commit().await.unwrap(); // far too late
    // Issue 17 item 7: the release saw the hole empty, so its first
    // re-check comes one msgx.pipeline.late-row-recheck (1m) later.
    let s = ingest(&r).await;
    assert_eq!(detail(&s, "late_row_holes_checked"), 0, "{s:?}");
    clock.advance(Duration::minutes(1));
    let s = ingest(&r).await;
    assert_eq!(detail(&s, "late_row_holes_checked"), 1, "{s:?}");
    assert_eq!(detail(&s, "late_rows"), 1);
    let late: Vec<i64> = sqlx::query_scalar("SELECT msg_id FROM inbox_late_row")
        .fetch_all(&db.pool)
        .await
        .unwrap();
    assert_eq!(late, vec![2], "reported, not silently skipped");
    clock.advance(Duration::seconds(59));
    let s = ingest(&r).await;
    assert_eq!(
        detail(&s, "late_row_holes_checked"),
        0,
        "within the interval: no query"
    );
    clock.advance(Duration::seconds(1));
    let s = ingest(&r).await;
    assert_eq!(detail(&s, "late_row_holes_checked"), 1, "after it: again");
    assert_eq!(detail(&s, "late_rows"), 0, "reported once");
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let out = msgx(cfg.path(), &["status"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("late rows: 1"),
        "{}",
        text(&out)
    );
}

/// Rows 1 and 3 in the mailbox, 2 missing: two ingest runs max-commit-delay
/// apart release 2 as a permanent hole.
async fn release_hole_at_2(db: &TestDb, r: &JobRunner, clock: &msgx::clock::ManualClock) {
    ingest(r).await;
    clock.advance(Duration::seconds(31));
    ingest(r).await;
    assert_eq!(enqueued(db).await, vec![1, 3], "2 was released as a hole");
}

/// Issue 17 item 7: a late-row check that fails is logged and counted, and
/// the ingest run whose rows were committed still SUCCEEDS; the hole is
/// tried again after the recheck interval, not on every run.
#[tokio::test]
async fn a_failing_late_row_check_never_fails_the_ingest_run() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(XML).await; // 1
    let lost = mb.insert_rolled_back(XML).await; // 2
    mb.insert(XML).await; // 3
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, time_rule_only);
    release_hole_at_2(&db, &r, &clock).await;
    // A late row inside the hole, and recording it fails.
    mb.exec(&format!(
        "INSERT INTO cminmsgs (CMINMSGS_ID, CMINMSGS_CLOB_MSG, CMINMSGS_STATUS) VALUES ({lost}, 'x', 'VALID')"
    ))
    .await;
    db.fail_inserts("inbox_late_row", "late-row store broken (test)")
        .await;
    mb.insert(XML).await; // 4: new work in the same run
    clock.advance(Duration::minutes(1));
    let s = ingest(&r).await;
    assert_eq!(s.outcome, Outcome::Succeeded, "{s:?}");
    assert_eq!(detail(&s, "late_row_check_failures"), 1, "{s:?}");
    assert_eq!(
        enqueued(&db).await,
        vec![1, 3, 4],
        "the run's rows are committed"
    );
    let s = ingest(&r).await;
    assert_eq!(
        (
            detail(&s, "late_row_check_failures"),
            detail(&s, "late_row_holes_checked")
        ),
        (0, 0),
        "the failing hole waits for the interval too: {s:?}"
    );
    db.allow_inserts("inbox_late_row").await;
    clock.advance(Duration::minutes(1));
    let s = ingest(&r).await;
    assert_eq!(
        detail(&s, "late_rows"),
        1,
        "found once the store works: {s:?}"
    );
}

#[tokio::test]
async fn an_unreachable_mailbox_leaves_w_untouched_and_no_error_state() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(XML).await;
    let (_clock, shared) = manual_clock();
    let (ok, _s1) = runner(&db, Some(&mb), shared.clone(), |_| {});
    ingest(&ok).await;
    mb.insert(XML).await;
    let (down, _s2) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.mailbox.url = "mysql://msgx:msgx@127.0.0.1:1/nowhere".into();
    });
    let s = ingest(&down).await;
    assert_eq!(s.outcome, Outcome::Failed);
    assert!(
        s.error.as_deref().unwrap_or("").contains("mailbox"),
        "{s:?}"
    );
    assert_eq!(cursor(&db).await, (1, None), "W unchanged");
    let states: Vec<String> = sqlx::query_scalar("SELECT DISTINCT state FROM proc_state")
        .fetch_all(&db.pool)
        .await
        .unwrap();
    assert_eq!(
        states,
        vec!["PENDING"],
        "no message is put into an error state"
    );
    let job: (String, Option<String>) =
        sqlx::query_as("SELECT outcome, error FROM job_run ORDER BY id DESC LIMIT 1")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(job.0, "FAILED");
}

#[tokio::test]
async fn cutover_seeding_max_skips_the_visible_backlog_once() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.exec("ALTER TABLE cminmsgs AUTO_INCREMENT = 1000").await;
    for _ in 0..3 {
        mb.insert(XML).await; // 1000..1002
    }
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        c.msgx.pipeline.cutover_watermark = Some("max".into())
    });
    assert_eq!(ingest(&r).await.items, 0);
    let seeded: (i64, Option<chrono::DateTime<chrono::Utc>>) =
        sqlx::query_as("SELECT w, seeded_at FROM inbox_cursor")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(seeded, (1002, Some(shared.now())));
    mb.insert(XML).await; // 1003
    assert_eq!(
        ingest(&r).await.items,
        1,
        "seeding happens once; new rows flow"
    );
    assert_eq!(enqueued(&db).await, vec![1003]);
}

#[tokio::test]
async fn cutover_seeding_min_reads_everything_without_waiting_on_id_1() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.exec("ALTER TABLE cminmsgs AUTO_INCREMENT = 500").await;
    mb.insert(XML).await;
    mb.insert(XML).await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.pipeline.cutover_watermark = Some("min".into())
    });
    assert_eq!(ingest(&r).await.items, 2);
    assert_eq!(enqueued(&db).await, vec![500, 501]);
}

#[tokio::test]
async fn cutover_seeding_is_refused_on_an_instance_with_records() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(XML).await;
    let (_clock, shared) = manual_clock();
    let (plain, _s1) = runner(&db, Some(&mb), shared.clone(), |_| {});
    ingest(&plain).await;
    let (seeding, _s2) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.pipeline.cutover_watermark = Some("max".into())
    });
    let s = ingest(&seeding).await;
    assert_eq!(s.outcome, Outcome::Failed);
    assert!(s.error.unwrap_or_default().contains("refused"));
    let seeded: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT seeded_at FROM inbox_cursor")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(seeded, None);
}

/// Issue 16, item 1: a mailbox without the configured table is one clear
/// error naming the schema, the table and what exists; the run is FAILED
/// and the daemon refuses to start (exit 2) instead of failing every tick.
#[tokio::test]
async fn a_missing_mailbox_table_is_a_clear_error_naming_schema_and_tables() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.exec("DROP TABLE cminmsgs").await;
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let out = msgx(cfg.path(), &["run", "ingest-sweep"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains(&format!("`{}`", mb.name)),
        "names the schema: {err}"
    );
    assert!(err.contains("no table `cminmsgs`"), "{err}");
    assert!(err.contains("coutmsgs"), "lists the tables found: {err}");
    let outcome: String =
        sqlx::query_scalar("SELECT outcome FROM job_run WHERE job = 'ingest-sweep'")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(outcome, "FAILED");

    let mut d = Daemon::spawn(cfg.path(), &[]);
    assert_eq!(d.wait_exit(std::time::Duration::from_secs(30)).await, 2);
    assert!(d.output().contains("no table `cminmsgs`"), "{}", d.output());
}

/// A missing column (here the configured processing-mark column) names the
/// table, the missing column and the columns the table has.
#[tokio::test]
async fn a_missing_mailbox_column_names_it_and_the_columns_found() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(XML).await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.mailbox.processed_column = "CMINMSGS_DATE_DONE".into();
    });
    let s = ingest(&r).await;
    assert_eq!(s.outcome, Outcome::Failed);
    let err = s.error.unwrap_or_default();
    assert!(err.contains(&format!("`{}`.`cminmsgs`", mb.name)), "{err}");
    assert!(err.contains("lacks column(s) CMINMSGS_DATE_DONE"), "{err}");
    assert!(
        err.contains("CMINMSGS_DATE_PROCESSED"),
        "lists what it has: {err}"
    );
    assert!(enqueued(&db).await.is_empty());
}

/// Issue 20 item 2: under the daemon's instance lock, an idle poll issues no
/// PostgreSQL statement (W and HOLE_SINCE are kept in memory, a round that
/// changes nothing opens no transaction, the late-row check waits until a
/// hole is due). Another session holds the ingest tables ACCESS EXCLUSIVE
/// meanwhile: any read of them would fail at msgx.postgres.lock-timeout.
#[tokio::test]
async fn an_idle_poll_under_the_daemons_lock_issues_no_postgresql_statement() {
    use msgx::instance_lock::{AdvisoryLock, LockKey};
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(XML).await;
    mb.insert(XML).await;
    let (clock, shared) = manual_clock();
    let (mut r, _stop) = runner(&db, Some(&mb), shared, |c| {
        c.msgx.postgres.lock_timeout = "300ms".parse().expect("duration");
    });
    // A pool with the configured lock timeout, as the daemon's.
    r.pg = msgx::store::pg::connect(&r.config.msgx.postgres)
        .await
        .expect("pool");
    let lock = AdvisoryLock::try_acquire(&db.url, LockKey::instance(), "test")
        .await
        .expect("lock session")
        .expect("lock free");
    let guard = lock.guard();
    let poll = async || {
        r.run("ingest-sweep", &RunOptions::default(), Some(&guard))
            .await
            .expect("ingest runs")
    };
    assert_eq!(poll().await.items, 2);
    let mut locker = db.pool.begin().await.unwrap();
    sqlx::query(
        "LOCK TABLE inbox_cursor, inbox_hole, inbox_late_row, proc_state IN ACCESS EXCLUSIVE MODE",
    )
    .execute(&mut *locker)
    .await
    .unwrap();
    for _ in 0..5 {
        clock.advance(Duration::seconds(5)); // within late-row-recheck (1m)
        let s = poll().await;
        assert_eq!(
            (s.outcome, s.items, detail(&s, "late_row_check_failures")),
            (Outcome::Succeeded, 0, 0),
            "{s:?}"
        );
    }
    locker.rollback().await.unwrap();
    mb.insert(XML).await;
    assert_eq!(poll().await.items, 1, "new rows still flow");
    assert_eq!(cursor(&db).await, (3, None));
    lock.release().await;
}

/// After msgx's record was rolled back (a restore, a failover to a replica
/// behind), rows it had marked and the owner then purged are named, not
/// skipped: a gap below a marked row is enqueued and the pump records each
/// of its IDs DEAD(MALFORMED, raw-missing). The same gap below a row
/// without a mark is a released hole, as ever.
#[tokio::test]
async fn a_gap_below_a_marked_row_is_named_raw_missing_not_released_as_a_hole() {
    for marked in [true, false] {
        let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
        mb.insert(XML).await; // 1
        let two = mb.insert(XML).await;
        let three = mb.insert(XML).await;
        let four = mb.insert(XML).await;
        mb.exec(&format!(
            "DELETE FROM cminmsgs WHERE CMINMSGS_ID IN ({two}, {three})"
        ))
        .await;
        if marked {
            mb.exec(&format!(
                "UPDATE cminmsgs SET CMINMSGS_DATE_PROCESSED = NOW() WHERE CMINMSGS_ID = {four}"
            ))
            .await;
        }
        let (clock, shared) = manual_clock();
        let (r, _stop) = runner(&db, Some(&mb), shared, time_rule_only);
        ingest(&r).await;
        clock.advance(Duration::seconds(31));
        let s = ingest(&r).await;
        let holes: i64 = sqlx::query_scalar("SELECT count(*) FROM inbox_hole")
            .fetch_one(&db.pool)
            .await
            .unwrap();
        if !marked {
            assert_eq!(enqueued(&db).await, vec![1, four], "released as a hole");
            assert_eq!((holes, detail(&s, "purged_after_mark")), (1, 0));
            continue;
        }
        assert_eq!(enqueued(&db).await, vec![1, two, three, four], "{s:?}");
        assert_eq!((holes, detail(&s, "purged_after_mark")), (0, 2));
        common::jobs::drain(&r).await;
        let named: Vec<_> = common::queries::outcomes(&db)
            .await
            .into_iter()
            .filter(|o| o.0 == two || o.0 == three)
            .map(|(_, state, class, why)| (state, class, why))
            .collect();
        let dead = (
            "DEAD".to_string(),
            Some("MALFORMED".to_string()),
            Some("raw-missing".to_string()),
        );
        assert_eq!(named, vec![dead.clone(), dead]);
    }
}
