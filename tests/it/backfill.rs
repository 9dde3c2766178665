//! Backfill, replay and reopen (issue 7; design §6, §9.1, §9.2) against a real
//! MariaDB mailbox and a real PostgreSQL, with a manual clock. Terminal rows
//! come from the real path: ingest-sweep then pump-drain.

use crate::common;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use common::jobs::{detail, drain_ok, run_ok, succeeds};
use common::queries::backfill_actions;
use common::sis::{schd_one_flight as schd, unsupported};
use common::*;
use msgx::backfill::replay::{self, ReplayError, ReplayRequest, ReplayService, Selection};
use msgx::backfill::{gate, ops};
use msgx::clock::{ManualClock, SharedClock};
use msgx::scheduler::runner::{JobRunner, RunOptions, RunSummary};
use msgx::store::pg::job_run::Outcome;
use mysql_async::prelude::Queryable;

/// A message the default ignore rules skip: SKIPPED(ignored:LDM).
fn ldm(seqn: u32) -> String {
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>20261201080000</DTTM><TYPE>LDM</TYPE>\
         <STYP>UPD</STYP></META><LDM><X>1</X></LDM></MSG>"
    )
}

const MALFORMED: &str = "<MSG><META>";
const UNREACHABLE: &str = "mysql://msgx:msgx@127.0.0.1:1/x";

async fn scan(r: &JobRunner) -> RunSummary {
    run_ok(r, "backfill-scan").await
}

/// The pipeline config of these tests: one attempt, so an unsupported
/// message is DEAD(EXHAUSTED) within one pump run.
fn one_attempt(c: &mut msgx::config::Config) {
    c.msgx.pipeline.retry.unsupported = msgx::config::RetrySchedule {
        max_attempts: Some(1),
        backoff: Vec::new(),
    };
}

/// A database, a mailbox holding `messages`, all processed to terminal states.
async fn processed(
    messages: &[String],
) -> (TestDb, TestMailbox, ManualClock, SharedClock, Vec<i64>) {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let mut ids = Vec::new();
    for m in messages {
        ids.push(mb.insert(m).await);
    }
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), one_attempt);
    drain_ok(&r).await;
    (db, mb, clock, shared, ids)
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
struct Bf {
    state: String,
    error_class: Option<String>,
    outcome_reason: Option<String>,
    identity_key: Option<String>,
    enqueued_at: Option<DateTime<Utc>>,
    backfill_next_at: Option<DateTime<Utc>>,
    backfill_at: Option<DateTime<Utc>>,
    backfill_attempts: i32,
    backfill_last_error: Option<String>,
    backfill_abandoned_at: Option<DateTime<Utc>>,
    backfill_abandoned_reason: Option<String>,
    backfill_reconciled_at: Option<DateTime<Utc>>,
    backfill_failing_since: Option<DateTime<Utc>>,
}

async fn bf(db: &TestDb, id: i64) -> Bf {
    sqlx::query_as(
        "SELECT state, error_class, outcome_reason, identity_key, enqueued_at, backfill_next_at, \
         backfill_at, backfill_attempts, backfill_last_error, backfill_abandoned_at, \
         backfill_abandoned_reason, backfill_reconciled_at, backfill_failing_since \
         FROM proc_state WHERE msg_id = $1",
    )
    .bind(id)
    .fetch_one(&db.pool)
    .await
    .expect("proc_state row")
}

async fn mark(mb: &TestMailbox, id: i64) -> Option<NaiveDateTime> {
    let mut conn = mb.pool.get_conn().await.expect("connect");
    conn.exec_first::<Option<NaiveDateTime>, _, _>(
        "SELECT CMINMSGS_DATE_PROCESSED FROM cminmsgs WHERE CMINMSGS_ID = ?",
        (id,),
    )
    .await
    .expect("select")
    .flatten()
}

fn local_mark(now: DateTime<Utc>) -> NaiveDateTime {
    msgx::backfill::scan::mark_value(now, chrono_tz::Asia::Shanghai)
}

// ------------------------------------------------------------ four outcomes --

#[tokio::test]
async fn written_marks_every_terminal_state_with_local_time_and_confirms() {
    let (db, mb, _clock, shared, ids) =
        processed(&[schd(1, 9101), ldm(2), MALFORMED.to_string(), unsupported(3)]).await;
    let states: Vec<String> = futures_states(&db, &ids).await;
    assert_eq!(states, ["SUCCEEDED", "SKIPPED", "DEAD", "DEAD"]);
    for &id in &ids {
        assert!(
            bf(&db, id).await.backfill_next_at.is_some(),
            "intent registered"
        );
        assert_eq!(mark(&mb, id).await, None);
    }
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let s = scan(&r).await;
    assert_eq!((s.items, detail(&s, "written")), (4, 4), "{s:?}");
    let now = shared.now();
    for &id in &ids {
        assert_eq!(
            mark(&mb, id).await,
            Some(local_mark(now)),
            "local airport time"
        );
        let row = bf(&db, id).await;
        assert_eq!(row.backfill_at, Some(now));
        assert_eq!(row.backfill_next_at, None, "intent fulfilled");
        assert_eq!(row.backfill_abandoned_at, None);
    }
    // Nothing is left: a second scan selects nothing.
    assert_eq!(scan(&r).await.items, 0);
}

async fn futures_states(db: &TestDb, ids: &[i64]) -> Vec<String> {
    let mut out = Vec::new();
    for &id in ids {
        out.push(bf(db, id).await.state);
    }
    out
}

#[tokio::test]
async fn already_marked_is_success_without_overwriting() {
    let (db, mb, _clock, shared, ids) = processed(&[ldm(1), ldm(2)]).await;
    mb.exec(&format!(
        "UPDATE cminmsgs SET CMINMSGS_DATE_PROCESSED = '2020-01-02 03:04:05' WHERE CMINMSGS_ID = {}",
        ids[0]
    ))
    .await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let s = scan(&r).await;
    assert_eq!(detail(&s, "already_marked"), 1, "{s:?}");
    assert_eq!(detail(&s, "written"), 1, "{s:?}");
    assert_eq!(
        mark(&mb, ids[0]).await.map(|m| m.to_string()),
        Some("2020-01-02 03:04:05".to_string()),
        "the existing mark is kept"
    );
    assert_eq!(bf(&db, ids[0]).await.backfill_at, Some(shared.now()));
    assert_eq!(mark(&mb, ids[1]).await, Some(local_mark(shared.now())));
}

#[tokio::test]
async fn a_missing_mailbox_row_is_abandoned_at_once_without_a_mark() {
    let (db, mb, _clock, shared, ids) = processed(&[ldm(1), ldm(2)]).await;
    mb.exec(&format!(
        "DELETE FROM cminmsgs WHERE CMINMSGS_ID = {}",
        ids[0]
    ))
    .await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        // Far from any deadline or attempt limit: MISSING_ROW is not protected by R.
        c.msgx.pipeline.backfill_max_attempts = 100;
    });
    let s = scan(&r).await;
    assert_eq!(detail(&s, "abandoned_missing_row"), 1, "{s:?}");
    let row = bf(&db, ids[0]).await;
    assert_eq!(
        row.backfill_abandoned_reason.as_deref(),
        Some("MISSING_ROW")
    );
    assert_eq!(row.backfill_abandoned_at, Some(shared.now()));
    assert_eq!(row.backfill_at, None, "abandonment never confirms");
    assert_eq!(row.backfill_attempts, 1);
    assert!(row.backfill_next_at.is_some(), "the mark is still owed");
    assert_eq!(bf(&db, ids[1]).await.backfill_at, Some(shared.now()));
    // Abandoned rows leave the scan.
    assert_eq!(scan(&r).await.items, 0);
    let list = ops::abandoned(&db.pool).await.unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].msg_id, ids[0]);
    let config = db.config();
    let status = msgx::status::collect(&db.pool, None, &shared, &config)
        .await
        .unwrap();
    assert_eq!(status.backfill.abandoned.get("MISSING_ROW"), Some(&1));
    assert_eq!(status.backfill.abandoned_unreconciled, 1);
    assert_eq!(status.backfill.confirmed, 1);
    assert_eq!(status.backfill.pending, 0);
}

/// Issue 20: a round's marks are one gate transaction (and one mailbox
/// statement), not one per row, with the §6.2 outcomes still per row: under a
/// 1,000 msg/s burst the per-row marks (≈ 4.5 ms each) fell behind the feed.
#[tokio::test]
async fn a_round_of_marks_is_one_gate_transaction_with_outcomes_per_row() {
    let messages: Vec<String> = (1..=12).map(ldm).collect();
    let (db, mb, _clock, shared, ids) = processed(&messages).await;
    mb.exec(&format!(
        "UPDATE cminmsgs SET CMINMSGS_DATE_PROCESSED = '2020-01-02 03:04:05' WHERE CMINMSGS_ID = {}",
        ids[3]
    ))
    .await;
    mb.exec(&format!(
        "DELETE FROM cminmsgs WHERE CMINMSGS_ID = {}",
        ids[7]
    ))
    .await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let (statements, _guard) = record_statements();
    let s = scan(&r).await;
    let gates = statements
        .take()
        .iter()
        .filter(|q| q.contains("pg_advisory_xact_lock"))
        .count();
    assert_eq!(gates, 1, "one gate transaction for the round");
    assert_eq!(
        (
            detail(&s, "written"),
            detail(&s, "already_marked"),
            detail(&s, "abandoned_missing_row")
        ),
        (10, 1, 1),
        "{s:?}"
    );
    let now = shared.now();
    for (n, &id) in ids.iter().enumerate() {
        let row = bf(&db, id).await;
        match n {
            3 => {
                assert_eq!(
                    mark(&mb, id).await.map(|m| m.to_string()).as_deref(),
                    Some("2020-01-02 03:04:05")
                );
                assert_eq!(row.backfill_at, Some(now));
            }
            7 => {
                assert_eq!(
                    row.backfill_abandoned_reason.as_deref(),
                    Some("MISSING_ROW")
                );
                assert_eq!(row.backfill_at, None);
            }
            _ => {
                assert_eq!(mark(&mb, id).await, Some(local_mark(now)));
                assert_eq!(row.backfill_at, Some(now));
            }
        }
    }
    // A refused statement (a trigger on one row) is retried row by row: the
    // one row backs off, the others are written.
    let more: Vec<i64> = {
        let mut v = Vec::new();
        for m in (20..=24).map(ldm) {
            v.push(mb.insert(&m).await);
        }
        v
    };
    let (p, _stop2) = runner(&db, Some(&mb), shared.clone(), one_attempt);
    drain_ok(&p).await;
    refuse_mark(&mb, more[2]).await;
    let s = scan(&r).await;
    assert_eq!(
        (detail(&s, "written"), detail(&s, "retrying")),
        (4, 1),
        "{s:?}"
    );
    assert_eq!(mark(&mb, more[2]).await, None);
    assert_eq!(bf(&db, more[2]).await.backfill_attempts, 1);
}

/// The mailbox owner purging marked rows (C-8 allows it once a row is
/// marked) on a connection of its own, while the scan runs: `DELETE … WHERE
/// <mark> IS NOT NULL` in a loop until `stop` (at most 20,000 statements).
/// The task answers how many rows it purged.
fn owner_purging_marked_rows(
    mb: &TestMailbox,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<u64> {
    let pool = mb.pool.clone();
    let purge = format!(
        "DELETE FROM {} WHERE CMINMSGS_DATE_PROCESSED IS NOT NULL",
        mb.inbox
    );
    tokio::spawn(async move {
        let mut conn = pool.get_conn().await.expect("connect");
        let mut purged = 0;
        for _ in 0..20_000 {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            conn.query_drop(purge.as_str()).await.expect("purge");
            purged += conn.affected_rows();
        }
        purged
    })
}

/// Issue 31 item 3: a row this round's UPDATE wrote is `written` whatever the
/// owner does afterwards; the old round classified its rows with a SELECT
/// after the (committed) UPDATE, so a mark of ours that the owner had
/// purged in between read as "row missing" and was abandoned `MISSING_ROW` —
/// a false statement in the list that is the C-8 purge evidence. A row
/// deleted before the round is still `MISSING_ROW`. One such row in every
/// round makes every round classify its rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_purging_our_marks_never_turns_them_into_missing_rows() {
    let messages: Vec<String> = (1..=3000).map(ldm).collect();
    let (db, mb, _clock, shared, ids) = processed(&messages).await;
    let batch = 100;
    let deleted: Vec<i64> = ids.iter().skip(batch / 2).step_by(batch).copied().collect();
    let list = deleted.iter().map(i64::to_string).collect::<Vec<_>>();
    mb.exec(&format!(
        "DELETE FROM cminmsgs WHERE CMINMSGS_ID IN ({})",
        list.join(",")
    ))
    .await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        c.msgx.pipeline.backfill_batch = batch as u32;
    });
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let owner = owner_purging_marked_rows(&mb, stop.clone());
    let s = scan(&r).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let purged = owner.await.expect("owner task");
    assert!(purged > 0, "the owner purged marked rows during the scan");
    let missing: Vec<i64> = sqlx::query_scalar(
        "SELECT msg_id FROM proc_state WHERE backfill_abandoned_reason = 'MISSING_ROW' \
         ORDER BY msg_id",
    )
    .fetch_all(&db.pool)
    .await
    .expect("abandoned");
    let false_missing = missing.iter().filter(|id| !deleted.contains(id)).count();
    assert_eq!(
        false_missing, 0,
        "rows msgx marked reported MISSING_ROW ({purged} purged): {s:?}"
    );
    assert_eq!(missing, deleted, "a row deleted before marking: {s:?}");
    assert_eq!(
        (
            detail(&s, "written") + detail(&s, "already_marked"),
            detail(&s, "abandoned_missing_row")
        ),
        ((ids.len() - deleted.len()) as u64, deleted.len() as u64),
        "{s:?}"
    );
    let unconfirmed: i64 =
        sqlx::query_scalar("SELECT count(*) FROM proc_state WHERE backfill_at IS NULL")
            .fetch_one(&db.pool)
            .await
            .expect("count");
    assert_eq!(unconfirmed, deleted.len() as i64);
}

/// A trigger that refuses the mark of `id` with a server error: a row
/// failure, answered by a reachable mailbox.
async fn refuse_mark(mb: &TestMailbox, id: i64) {
    mb.exec(&format!(
        "CREATE TRIGGER refuse_mark BEFORE UPDATE ON cminmsgs FOR EACH ROW \
         IF NEW.CMINMSGS_ID = {id} THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'row is locked'; END IF"
    ))
    .await;
}

/// One `backfill-scan` run that must FAIL: the mailbox is unreachable.
async fn scan_fails(r: &JobRunner) -> RunSummary {
    let s = r
        .run("backfill-scan", &RunOptions::default(), None)
        .await
        .expect("job runs");
    assert_eq!(s.outcome, Outcome::Failed, "{s:?}");
    s
}

#[tokio::test]
async fn a_row_failure_walks_the_backoff_tiers_until_r_then_transient_deadline() {
    let (db, mb, clock, shared, ids) = processed(&[ldm(1)]).await;
    let id = ids[0];
    let enqueued = bf(&db, id).await.enqueued_at.expect("enqueued");
    refuse_mark(&mb, id).await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        c.msgx.pipeline.backfill_max_attempts = 3;
        c.msgx.pipeline.backfill_backoff = vec![
            "30s".parse().expect("duration"),
            "2m".parse().expect("duration"),
            "1h".parse().expect("duration"),
        ];
    });
    let tiers = [
        Duration::seconds(30),
        Duration::minutes(2),
        Duration::hours(1),
        Duration::hours(1),
        Duration::hours(1),
        Duration::hours(1),
    ];
    // Six failures (twice backfill-max-attempts): only backoff, never abandoned.
    for (n, tier) in tiers.iter().enumerate() {
        let s = scan(&r).await;
        assert_eq!(detail(&s, "retrying"), 1, "attempt {}: {s:?}", n + 1);
        let row = bf(&db, id).await;
        assert_eq!(row.backfill_attempts, n as i32 + 1);
        assert_eq!(row.backfill_next_at, Some(shared.now() + *tier), "tier {n}");
        assert_eq!(row.backfill_abandoned_at, None, "no abandonment by count");
        assert!(
            row.backfill_last_error
                .as_deref()
                .is_some_and(|e| e.contains("row is locked") && !e.contains("unreachable")),
            "{row:?}"
        );
        // Not due before the backoff ends.
        assert_eq!(scan(&r).await.items, 0);
        clock.advance(*tier);
    }
    // One second before R: still only backoff.
    clock.set(enqueued + Duration::hours(24) - Duration::seconds(1));
    let s = scan(&r).await;
    assert_eq!(detail(&s, "retrying"), 1, "{s:?}");
    let row = bf(&db, id).await;
    assert_eq!(row.backfill_abandoned_at, None);
    assert!(row.backfill_next_at.expect("next") > shared.now() + Duration::minutes(30));
    // Past R the overdue branch overrides the backoff, and the failure abandons.
    clock.advance(Duration::seconds(2));
    let s = scan(&r).await;
    assert_eq!(detail(&s, "abandoned_transient_deadline"), 1, "{s:?}");
    let row = bf(&db, id).await;
    assert_eq!(
        row.backfill_abandoned_reason.as_deref(),
        Some("TRANSIENT_DEADLINE")
    );
    assert_eq!(row.backfill_at, None);
    assert_eq!(row.backfill_attempts, 8);
    assert_eq!(
        row.backfill_failing_since,
        Some(enqueued),
        "failing since its first attempt, before R"
    );
}

/// Issue 20 item 5: an unreachable mailbox is an outage of the mailbox, not a
/// failure of each row. Each scan probes one row and FAILS; the rows not
/// tried are not charged and nobody is pushed into a backoff tier, so once
/// the mailbox is back the next scan (5 s later, not the 30 s tier) writes
/// every outstanding mark.
#[tokio::test]
async fn an_outage_charges_one_probe_per_scan_and_the_next_scan_writes_every_mark() {
    let messages: Vec<String> = (1..=10).map(ldm).collect();
    let (db, mb, clock, shared, ids) = processed(&messages).await;
    let (down, _s1) = runner(&db, None, shared.clone(), |c| {
        c.msgx.mailbox.url = UNREACHABLE.into()
    });
    let (good, _s2) = runner(&db, Some(&mb), shared.clone(), |_| {});
    for probe in 1..=3 {
        let s = scan_fails(&down).await;
        assert!(
            s.error.as_deref().is_some_and(|e| e.contains("mailbox")),
            "{s:?}"
        );
        let mut charged = Vec::new();
        for &id in &ids {
            let row = bf(&db, id).await;
            assert_eq!(row.backfill_abandoned_at, None);
            if row.backfill_attempts > 0 {
                assert_eq!(row.backfill_attempts, 1, "fairness: a new row each probe");
                assert!(
                    row.backfill_last_error
                        .as_deref()
                        .is_some_and(|e| e.starts_with("mailbox unreachable")),
                    "{row:?}"
                );
                assert!(
                    row.backfill_next_at.expect("intent") <= shared.now(),
                    "no backoff tier for an outage: {row:?}"
                );
                charged.push(id);
            }
        }
        assert_eq!(
            charged,
            ids[..probe],
            "one probe per scan, in fairness order"
        );
        clock.advance(Duration::seconds(5));
    }
    // The mailbox is back: the next scan, 5 s on, writes all ten marks.
    let s = scan(&good).await;
    assert_eq!(detail(&s, "written"), 10, "{s:?}");
    for &id in &ids {
        assert_eq!(mark(&mb, id).await, Some(local_mark(shared.now())));
        assert_eq!(bf(&db, id).await.backfill_at, Some(shared.now()));
    }
}

/// A mailbox that accepts the connection but never answers is an outage too
/// (`msgx.mailbox.timeout`), not a row failure.
#[tokio::test]
async fn a_mailbox_that_never_answers_is_probed_once_per_scan() {
    let (db, _mb, _clock, shared, ids) = processed(&[ldm(1), ldm(2)]).await;
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = silent.local_addr().expect("addr").port();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let (down, _s) = runner(&db, None, shared.clone(), |c| {
        c.msgx.mailbox.url = format!("mysql://msgx:msgx@127.0.0.1:{port}/x");
        c.msgx.mailbox.timeout = "1s".parse().expect("duration");
    });
    let s = scan_fails(&down).await;
    assert!(
        s.error.as_deref().is_some_and(|e| e.contains("timed out")),
        "{s:?}"
    );
    let (first, second) = (bf(&db, ids[0]).await, bf(&db, ids[1]).await);
    assert_eq!((first.backfill_attempts, second.backfill_attempts), (1, 0));
    assert!(first.backfill_next_at.expect("intent") <= shared.now());
    holder.abort();
}

/// The rows of a mailbox outage past R, their attempts and their rows.
async fn rows(db: &TestDb, ids: &[i64]) -> Vec<Bf> {
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        out.push(bf(db, id).await);
    }
    out
}

/// R still abandons during an outage (§6.2, §6.3) when the outage began
/// before R: each row's streak starts with its first failed probe before R
/// (BACKFILL_FAILING_SINCE, kept while it fails), nothing is abandoned
/// before R however many probes, and past R each scan's probe abandons its
/// own row `TRANSIENT_DEADLINE`, without touching the rows it did not try
/// (issue 31 item 4).
#[tokio::test]
async fn an_outage_from_before_r_abandons_its_rows_at_r_one_per_probe() {
    let (db, _mb, clock, shared, ids) = processed(&[ldm(1), ldm(2), ldm(3)]).await;
    let enqueued = bf(&db, ids[0]).await.enqueued_at.expect("enqueued");
    let (down, _s) = runner(&db, None, shared.clone(), |c| {
        c.msgx.mailbox.url = UNREACHABLE.into();
        c.msgx.pipeline.backfill_max_attempts = 2;
    });
    let start = shared.now();
    for _ in 0..7 {
        scan_fails(&down).await;
        clock.advance(Duration::minutes(5));
    }
    clock.set(enqueued + Duration::hours(24) - Duration::seconds(1));
    scan_fails(&down).await;
    let attempts = |rows: &[Bf]| rows.iter().map(|r| r.backfill_attempts).sum::<i32>();
    let mut now = rows(&db, &ids).await;
    assert_eq!(attempts(&now), 8, "one probe per scan");
    for (i, row) in now.iter().enumerate() {
        assert_eq!(row.backfill_abandoned_at, None, "before R: {row:?}");
        assert_eq!(
            row.backfill_failing_since,
            Some(start + Duration::minutes(5) * i as i32),
            "failing since its first probe, in fairness order: {row:?}"
        );
    }
    clock.advance(Duration::seconds(2));
    for scans in 1..=ids.len() {
        scan_fails(&down).await;
        let before = now;
        now = rows(&db, &ids).await;
        let abandoned = now
            .iter()
            .filter(|r| r.backfill_abandoned_at.is_some())
            .count();
        assert_eq!(abandoned, scans, "one row per failed probe");
        assert_eq!(attempts(&now), attempts(&before) + 1, "the probe only");
    }
    for (i, row) in now.iter().enumerate() {
        assert_eq!(
            row.backfill_abandoned_reason.as_deref(),
            Some("TRANSIENT_DEADLINE"),
            "{row:?}"
        );
        assert_eq!(row.backfill_at, None);
        assert_eq!(
            row.backfill_failing_since,
            Some(start + Duration::minutes(5) * i as i32),
            "the streak that reached R is kept for the reconciliation"
        );
        assert!(
            row.backfill_last_error
                .as_deref()
                .is_some_and(|e| e.contains("unreachable")),
            "{row:?}"
        );
    }
    assert_eq!(ops::abandoned(&db.pool).await.unwrap().len(), 3);
}

/// Issue 31 item 4: rows past R that were never tried are not abandoned by
/// an outage, however long: each scan's probe is the row's own failed
/// attempt, but its failures begin past R, not before (§6.2, §6.3: only a
/// failure that persisted until R abandons). The old rule abandoned every
/// row past R after one probe; d4d5574 abandoned the probed row, one more
/// per scan. Past R they stay due at every scan, and once the mailbox
/// answers they are all written.
#[tokio::test]
async fn rows_past_r_never_tried_are_not_abandoned_by_an_outage() {
    let messages: Vec<String> = (1..=5).map(ldm).collect();
    let (db, mb, clock, shared, ids) = processed(&messages).await;
    let enqueued = bf(&db, ids[0]).await.enqueued_at.expect("enqueued");
    let deadline = enqueued + Duration::hours(24);
    // Never tried before R (the scan did not run): every row is past R.
    clock.set(deadline + Duration::hours(1));
    let (down, _s1) = runner(&db, None, shared.clone(), |c| {
        c.msgx.mailbox.url = UNREACHABLE.into();
        c.msgx.pipeline.backfill_max_attempts = 2;
    });
    for _ in 0..12 {
        scan_fails(&down).await;
        clock.advance(Duration::seconds(5));
    }
    let now = rows(&db, &ids).await;
    assert_eq!(
        now.iter().map(|r| r.backfill_attempts).collect::<Vec<_>>(),
        vec![3, 3, 2, 2, 2],
        "one probe per scan, in fairness order: {now:?}"
    );
    for row in &now {
        assert_eq!(
            row.backfill_abandoned_at, None,
            "failing since past R: {row:?}"
        );
        assert!(
            row.backfill_failing_since.expect("failing") >= deadline,
            "{row:?}"
        );
        assert!(
            row.backfill_next_at.expect("intent") <= shared.now(),
            "due at every scan: {row:?}"
        );
    }
    assert!(ops::abandoned(&db.pool).await.unwrap().is_empty());
    // The mailbox answers again: every row is written.
    let (good, _s2) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let s = scan(&good).await;
    assert_eq!(detail(&s, "written"), 5, "{s:?}");
    for &id in &ids {
        assert_eq!(mark(&mb, id).await, Some(local_mark(shared.now())));
        let row = bf(&db, id).await;
        assert_eq!(row.backfill_at, Some(shared.now()));
        assert_eq!(row.backfill_failing_since, None, "the streak ended");
    }
}

/// The precise rule in one outage (issue 31 item 4): of three rows, only
/// the one probed before R is failing since before its deadline; past R
/// the outage abandons it at its next probe and never the two whose first
/// failure came past R, however many probes they get.
#[tokio::test]
async fn an_outage_past_r_abandons_only_the_rows_failing_since_before_r() {
    let (db, mb, clock, shared, ids) = processed(&[ldm(1), ldm(2), ldm(3)]).await;
    let enqueued = bf(&db, ids[0]).await.enqueued_at.expect("enqueued");
    let (down, _s1) = runner(&db, None, shared.clone(), |c| {
        c.msgx.mailbox.url = UNREACHABLE.into()
    });
    let before_r = shared.now();
    scan_fails(&down).await;
    clock.set(enqueued + Duration::hours(24) + Duration::seconds(1));
    for _ in 0..6 {
        scan_fails(&down).await;
        clock.advance(Duration::seconds(5));
    }
    let abandoned = ops::abandoned(&db.pool).await.unwrap();
    assert_eq!(
        abandoned.iter().map(|a| a.msg_id).collect::<Vec<_>>(),
        vec![ids[0]]
    );
    let first = bf(&db, ids[0]).await;
    assert_eq!(
        (
            first.backfill_abandoned_reason.as_deref(),
            first.backfill_failing_since,
            first.backfill_attempts
        ),
        (Some("TRANSIENT_DEADLINE"), Some(before_r), 2)
    );
    for row in rows(&db, &ids[1..]).await {
        assert_eq!(row.backfill_abandoned_at, None, "{row:?}");
        assert!(row.backfill_attempts >= 2, "probed past R: {row:?}");
    }
    let (good, _s2) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let s = scan(&good).await;
    assert_eq!(detail(&s, "written"), 2, "{s:?}");
}

/// The same rule for a row failure (a server error answering this row,
/// issue 31 item 4): one that begins past R never abandons the row; past R
/// it is retried at every scan (no backoff tier, §6.3 point 1), and
/// `backfill-max-attempts` only alerts, until the mailbox accepts the mark.
#[tokio::test]
async fn a_row_failure_that_begins_past_r_is_retried_at_every_scan_until_written() {
    let (db, mb, clock, shared, ids) = processed(&[ldm(1)]).await;
    let id = ids[0];
    let enqueued = bf(&db, id).await.enqueued_at.expect("enqueued");
    refuse_mark(&mb, id).await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        c.msgx.pipeline.backfill_max_attempts = 2;
    });
    clock.set(enqueued + Duration::hours(25));
    let first = shared.now();
    for n in 1..=4 {
        let s = scan(&r).await;
        assert_eq!(detail(&s, "retrying"), 1, "attempt {n}: {s:?}");
        let row = bf(&db, id).await;
        assert_eq!(row.backfill_attempts, n);
        assert_eq!(row.backfill_abandoned_at, None, "{row:?}");
        assert_eq!(row.backfill_failing_since, Some(first));
        clock.advance(Duration::seconds(5));
    }
    mb.exec("DROP TRIGGER refuse_mark").await;
    let s = scan(&r).await;
    assert_eq!(detail(&s, "written"), 1, "{s:?}");
    assert_eq!(mark(&mb, id).await, Some(local_mark(shared.now())));
}

#[tokio::test]
async fn received_at_null_or_skewed_changes_nothing() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let a = mb.insert(&ldm(1)).await;
    let b = mb.insert(&ldm(2)).await;
    mb.exec(&format!(
        "UPDATE cminmsgs SET CMINMSGS_DATE_RECEIVED = NULL WHERE CMINMSGS_ID = {a}"
    ))
    .await;
    mb.exec(&format!(
        "UPDATE cminmsgs SET CMINMSGS_DATE_RECEIVED = '2000-01-01 00:00:00' WHERE CMINMSGS_ID = {b}"
    ))
    .await;
    let (clock, shared) = manual_clock();
    let (good, _s1) = runner(&db, Some(&mb), shared.clone(), |_| {});
    drain_ok(&good).await;
    let received: Option<DateTime<Utc>> =
        sqlx::query_scalar("SELECT received_at FROM proc_state WHERE msg_id = $1")
            .bind(a)
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(received, None);
    // Mailbox down: two probes, one per row, neither abandoned — a
    // 26-year-old RECEIVED_AT is not "past R".
    let (down, _s2) = runner(&db, None, shared.clone(), |c| {
        c.msgx.mailbox.url = UNREACHABLE.into()
    });
    scan_fails(&down).await;
    scan_fails(&down).await;
    for id in [a, b] {
        let row = bf(&db, id).await;
        assert_eq!(row.backfill_abandoned_at, None);
        assert_eq!(row.backfill_attempts, 1);
    }
    // Mailbox back: both marked at the next scan.
    clock.advance(Duration::seconds(5));
    let s = scan(&good).await;
    assert_eq!(detail(&s, "written"), 2, "{s:?}");
}

// ------------------------------------------------------- fairness, exclusions --

#[tokio::test]
async fn a_permanently_failing_row_does_not_starve_the_others() {
    let (db, mb, clock, shared, ids) = processed(&[ldm(1), ldm(2), ldm(3)]).await;
    // The lowest ID always fails on the mailbox side.
    refuse_mark(&mb, ids[0]).await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        c.msgx.pipeline.backfill_batch = 1;
    });
    let one = RunOptions {
        max_items: Some(1),
        ..Default::default()
    };
    // Run 1 takes the lowest ID (all at 0 attempts) and fails.
    let s = succeeds(&r, "backfill-scan", one.clone()).await;
    assert_eq!(detail(&s, "retrying"), 1, "{s:?}");
    // Its backoff ends; it is due again and still has the lowest ID, yet the
    // rows with fewer attempts go first.
    clock.advance(Duration::hours(2));
    let s = succeeds(&r, "backfill-scan", one.clone()).await;
    assert_eq!(detail(&s, "written"), 1, "{s:?}");
    assert!(mark(&mb, ids[1]).await.is_some());
    clock.advance(Duration::hours(2));
    let s = succeeds(&r, "backfill-scan", one.clone()).await;
    assert_eq!(detail(&s, "written"), 1, "{s:?}");
    assert!(mark(&mb, ids[2]).await.is_some());
    // Then the failing row again.
    clock.advance(Duration::hours(2));
    let s = succeeds(&r, "backfill-scan", one).await;
    assert_eq!(detail(&s, "retrying"), 1, "{s:?}");
    let row = bf(&db, ids[0]).await;
    assert_eq!(row.backfill_attempts, 2);
    assert!(
        row.backfill_last_error
            .as_deref()
            .is_some_and(|e| e.contains("row is locked")),
        "{row:?}"
    );
    assert_eq!(
        row.backfill_abandoned_at, None,
        "a server error is not MISSING_ROW"
    );
}

#[tokio::test]
async fn archived_rows_are_ignored_by_the_scan() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let id = mb.insert(&ldm(1)).await;
    // An ARCHIVED shadow row keeps only MSG_ID and IDENTITY_KEY (§9.3): no
    // BACKFILL_NEXT_AT, no BACKFILL_AT — the "no intent" branch of §6.1 would
    // match it if ARCHIVED were not excluded explicitly.
    sqlx::query("INSERT INTO proc_state (msg_id, state, identity_key) VALUES ($1, 'ARCHIVED', 'AODB|LDM|UPD|1')")
        .bind(id)
        .execute(&db.pool)
        .await
        .unwrap();
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    let s = scan(&r).await;
    assert_eq!(s.items, 0, "{s:?}");
    assert_eq!(mark(&mb, id).await, None);
}

#[tokio::test]
async fn shadow_mode_writes_nothing_and_leaves_intents_pending() {
    let (db, mb, _clock, shared, ids) = processed(&[ldm(1), ldm(2)]).await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |c| {
        c.msgx.mailbox.shadow = true
    });
    let s = scan(&r).await;
    assert_eq!(s.items, 0);
    assert_eq!(detail(&s, "shadow_not_written"), 2, "{s:?}");
    for &id in &ids {
        assert_eq!(mark(&mb, id).await, None);
        let row = bf(&db, id).await;
        assert_eq!((row.backfill_at, row.backfill_attempts), (None, 0));
        assert!(row.backfill_next_at.is_some());
    }
    let mut config = db.config();
    config.msgx.mailbox.shadow = true;
    let status = msgx::status::collect(&db.pool, None, &shared, &config)
        .await
        .unwrap();
    assert!(status.shadow_mode);
    assert_eq!((status.backfill.pending, status.backfill.due), (2, 2));
    assert!(msgx::status::render(&status).contains("SHADOW"));
}

// ------------------------------------------------------------------- replay --

fn replay_request(selection: Selection) -> ReplayRequest {
    ReplayRequest {
        selection,
        force: false,
        reason: None,
        actor: "tester".into(),
        dry_run: false,
    }
}

fn service<'a>(db: &'a TestDb, clock: &'a SharedClock) -> ReplayService<'a> {
    ReplayService {
        pool: &db.pool,
        clock,
        gate_wait: std::time::Duration::from_secs(10),
    }
}

#[tokio::test]
async fn replay_of_dead_exhausted_processes_it_again_with_a_fresh_intent() {
    let (db, mb, clock, shared, ids) = processed(&[unsupported(1)]).await;
    let id = ids[0];
    let dead = bf(&db, id).await;
    assert_eq!(
        (dead.state.as_str(), dead.error_class.as_deref()),
        ("DEAD", Some("EXHAUSTED"))
    );
    let identity = dead
        .identity_key
        .clone()
        .expect("identity bound before dispatch");
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), one_attempt);
    scan(&r).await;
    let first_mark = mark(&mb, id).await.expect("marked");
    clock.advance(Duration::hours(1));

    let dry = service(&db, &shared)
        .replay(&ReplayRequest {
            dry_run: true,
            ..replay_request(Selection::Class(msgx::domain::ErrorClass::Exhausted))
        })
        .await
        .unwrap();
    assert_eq!(dry.rows.len(), 1);
    assert_eq!(bf(&db, id).await.state, "DEAD", "dry run changes nothing");
    assert!(
        backfill_actions(&db).await.is_empty(),
        "dry run records nothing"
    );

    let done = service(&db, &shared)
        .replay(&replay_request(Selection::Ids(vec![id])))
        .await
        .unwrap();
    assert_eq!(done.already_marked, vec![id]);
    let row = bf(&db, id).await;
    assert_eq!(row.state, "PENDING");
    assert_eq!(
        row.identity_key.as_deref(),
        Some(identity.as_str()),
        "identity kept"
    );
    assert_eq!(
        (row.error_class, row.backfill_next_at, row.backfill_at),
        (None, None, None)
    );
    let attempts: i32 = sqlx::query_scalar("SELECT attempts FROM proc_state WHERE msg_id = $1")
        .bind(id)
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(attempts, 0);
    assert_eq!(
        backfill_actions(&db).await,
        vec![("tester".into(), "REPLAY".into(), id.to_string(), None)]
    );

    // A later release ignores FLOP-ESTT: processing again reaches SKIPPED by
    // that rule — not duplicate-of itself — with a fresh intent.
    let (fixed, _s) = runner(&db, Some(&mb), shared.clone(), |c| {
        one_attempt(c);
        c.msgx.ignore.push("FLOP-ESTT".into());
    });
    run_ok(&fixed, "pump-drain").await;
    let row = bf(&db, id).await;
    assert_eq!(row.state, "SKIPPED");
    assert_eq!(row.outcome_reason.as_deref(), Some("ignored:FLOP-ESTT"));
    assert_eq!(row.backfill_next_at, Some(shared.now()), "fresh intent");
    assert_eq!(row.backfill_at, None);
    // The old mark stays in the mailbox: the scan confirms it without overwriting.
    let s = scan(&fixed).await;
    assert_eq!(detail(&s, "already_marked"), 1, "{s:?}");
    assert_eq!(mark(&mb, id).await, Some(first_mark));
    assert_eq!(bf(&db, id).await.backfill_at, Some(shared.now()));
}

/// Replay resets every backfill field of the old terminal state, the
/// failure streak too (issue 31 item 4): the new terminal state's attempts
/// start a streak of their own.
#[tokio::test]
async fn replay_ends_a_failure_streak() {
    let (db, _mb, _clock, shared, ids) = processed(&[unsupported(1)]).await;
    let id = ids[0];
    let (down, _s) = runner(&db, None, shared.clone(), |c| {
        c.msgx.mailbox.url = UNREACHABLE.into()
    });
    scan_fails(&down).await;
    assert_eq!(bf(&db, id).await.backfill_failing_since, Some(shared.now()));
    service(&db, &shared)
        .replay(&replay_request(Selection::Ids(vec![id])))
        .await
        .unwrap();
    let row = bf(&db, id).await;
    assert_eq!(
        (
            row.state.as_str(),
            row.backfill_attempts,
            row.backfill_failing_since
        ),
        ("PENDING", 0, None)
    );
}

#[tokio::test]
async fn replay_refuses_malformed_without_force_and_never_replays_finished_states() {
    let (db, _mb, _clock, shared, ids) =
        processed(&[MALFORMED.to_string(), ldm(1), unsupported(2)]).await;
    let (malformed, skipped, exhausted) = (ids[0], ids[1], ids[2]);
    // One refused ID refuses the whole request: the EXHAUSTED row stays DEAD.
    let err = service(&db, &shared)
        .replay(&replay_request(Selection::Ids(vec![malformed, exhausted])))
        .await
        .unwrap_err();
    let ReplayError::Refused(refused) = err else {
        panic!("expected a refusal, got {err:?}");
    };
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].msg_id, malformed);
    assert!(refused[0].why.contains("--force"), "{refused:?}");
    assert_eq!(bf(&db, exhausted).await.state, "DEAD");
    assert!(matches!(
        service(&db, &shared)
            .replay(&replay_request(Selection::Class(
                msgx::domain::ErrorClass::Malformed
            )))
            .await,
        Err(ReplayError::Refused(_))
    ));
    assert!(matches!(
        service(&db, &shared)
            .replay(&replay_request(Selection::Ids(vec![skipped])))
            .await,
        Err(ReplayError::Refused(_))
    ));
    assert!(matches!(
        service(&db, &shared)
            .replay(&ReplayRequest {
                force: true,
                ..replay_request(Selection::Ids(vec![malformed]))
            })
            .await,
        Err(ReplayError::ForceWithoutReason)
    ));
    assert!(backfill_actions(&db).await.is_empty());
    // With --force --reason: replayed and recorded.
    service(&db, &shared)
        .replay(&ReplayRequest {
            force: true,
            reason: Some("codec fix 1.2.3".into()),
            ..replay_request(Selection::Ids(vec![malformed]))
        })
        .await
        .unwrap();
    assert_eq!(bf(&db, malformed).await.state, "PENDING");
    assert_eq!(
        backfill_actions(&db).await,
        vec![(
            "tester".into(),
            "REPLAY_FORCED".into(),
            malformed.to_string(),
            Some("codec fix 1.2.3".into())
        )]
    );
    assert_eq!(bf(&db, skipped).await.state, "SKIPPED");
}

// ---------------------------------------------------------------------- gate --

#[tokio::test]
async fn replay_waits_for_a_backfill_holding_the_gate() {
    let (db, _mb, _clock, shared, ids) = processed(&[unsupported(1)]).await;
    let id = ids[0];
    // Another session (the scan, mid mark+record) holds the gate.
    let holder = gate::enter(&db.pool, std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let pool = db.pool.clone();
    let clock = shared.clone();
    let task = tokio::spawn(async move {
        ReplayService {
            pool: &pool,
            clock: &clock,
            gate_wait: std::time::Duration::from_secs(30),
        }
        .replay(&replay_request(Selection::Ids(vec![id])))
        .await
    });
    wait_until(
        "replay blocked on the gate",
        std::time::Duration::from_secs(10),
        || {
            let pool = db.pool.clone();
            async move { gate::has_waiter(&pool).await.unwrap_or(false) }
        },
    )
    .await;
    assert_eq!(bf(&db, id).await.state, "DEAD", "replay has not run");
    holder.commit().await.unwrap();
    let done = task.await.unwrap().unwrap();
    assert_eq!(done.rows.len(), 1);
    assert_eq!(bf(&db, id).await.state, "PENDING");
}

#[tokio::test]
async fn a_scan_behind_a_replay_never_marks_the_replayed_message() {
    let (db, mb, _clock, shared, ids) = processed(&[unsupported(1), ldm(2)]).await;
    let (replayed, other) = (ids[0], ids[1]);
    // The replay holds the gate…
    let mut replay_tx = gate::enter(&db.pool, std::time::Duration::from_secs(5))
        .await
        .unwrap();
    // …while the scan selects both rows and blocks on the first.
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let scan_task = tokio::spawn(async move { scan(&r).await });
    wait_until(
        "scan blocked on the gate",
        std::time::Duration::from_secs(10),
        || {
            let pool = db.pool.clone();
            async move { gate::has_waiter(&pool).await.unwrap_or(false) }
        },
    )
    .await;
    assert_eq!(mark(&mb, replayed).await, None);
    replay::apply_in(
        &mut replay_tx,
        &replay_request(Selection::Ids(vec![replayed])),
        shared.now(),
    )
    .await
    .unwrap();
    replay_tx.commit().await.unwrap();
    let s = scan_task.await.unwrap();
    assert_eq!(detail(&s, "changed_meanwhile"), 1, "{s:?}");
    assert_eq!(detail(&s, "written"), 1, "{s:?}");
    assert_eq!(
        mark(&mb, replayed).await,
        None,
        "no mark for a message about to be re-read"
    );
    assert_eq!(bf(&db, replayed).await.state, "PENDING");
    assert!(mark(&mb, other).await.is_some());
}

// -------------------------------------------------------------- reopen etc. --

#[tokio::test]
async fn reopen_lets_the_scan_retry_and_reconcile_is_recorded() {
    let (db, mb, clock, shared, ids) = processed(&[ldm(1), ldm(2)]).await;
    // Abandon both: one missing, one by a deadline during an outage.
    mb.exec(&format!(
        "DELETE FROM cminmsgs WHERE CMINMSGS_ID = {}",
        ids[0]
    ))
    .await;
    let (good, _s1) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let (down, _s2) = runner(&db, None, shared.clone(), |c| {
        c.msgx.mailbox.url = UNREACHABLE.into()
    });
    // An outage from before R: both rows fail before R, and past R each
    // failed probe abandons its own row — the missing row too, since an
    // unreachable mailbox cannot tell that it is missing.
    scan_fails(&down).await;
    scan_fails(&down).await;
    clock.advance(Duration::hours(25));
    scan_fails(&down).await;
    scan_fails(&down).await;
    let abandoned = ops::abandoned(&db.pool).await.unwrap();
    assert_eq!(abandoned.len(), 2);
    assert!(
        abandoned
            .iter()
            .all(|a| a.backfill_abandoned_reason.as_deref() == Some("TRANSIENT_DEADLINE"))
    );

    // Reopen refuses a row that is not abandoned, changing nothing.
    let refused = ops::reopen(
        &db.pool,
        shared.now(),
        &ops::Target::Ids(vec![ids[1], 424242]),
        None,
        "op",
    )
    .await;
    assert!(matches!(refused, Err(ops::OpsError::Refused(ref r)) if r.len() == 1));
    assert!(bf(&db, ids[1]).await.backfill_abandoned_at.is_some());

    // Mailbox healthy again: reopen all, the scan retries them.
    let o = ops::reopen(
        &db.pool,
        shared.now(),
        &ops::Target::All,
        Some("outage over"),
        "op",
    )
    .await
    .unwrap();
    assert_eq!(o.changed, ids);
    // Reopening ends the failure streak: a reopened row that fails again
    // past R is retried, not abandoned again (issue 31 item 4).
    for row in rows(&db, &ids).await {
        assert_eq!(
            (row.backfill_failing_since, row.backfill_next_at),
            (None, Some(shared.now())),
            "{row:?}"
        );
    }
    scan_fails(&down).await;
    assert!(ops::abandoned(&db.pool).await.unwrap().is_empty());
    assert_eq!(
        bf(&db, ids[0]).await.backfill_failing_since,
        Some(shared.now())
    );
    clock.advance(Duration::seconds(5));
    let s = scan(&good).await;
    assert_eq!(detail(&s, "written"), 1, "{s:?}");
    assert_eq!(detail(&s, "abandoned_missing_row"), 1, "{s:?}");
    assert!(bf(&db, ids[1]).await.backfill_at.is_some());

    // The missing row is reconciled by the operator.
    let o = ops::reconcile(
        &db.pool,
        shared.now(),
        &[ids[0]],
        Some("owner confirmed"),
        "op",
    )
    .await
    .unwrap();
    assert_eq!(o.changed, vec![ids[0]]);
    assert_eq!(
        bf(&db, ids[0]).await.backfill_reconciled_at,
        Some(shared.now())
    );
    let again = ops::reconcile(&db.pool, shared.now(), &[ids[0]], None, "op")
        .await
        .unwrap();
    assert_eq!(
        (again.changed.len(), again.unchanged.clone()),
        (0, vec![ids[0]])
    );
    let recorded = backfill_actions(&db).await;
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].1, "BACKFILL_REOPEN");
    assert_eq!(recorded[0].2, format!("{},{}", ids[0], ids[1]));
    assert_eq!(recorded[0].3.as_deref(), Some("outage over"));
    assert_eq!(recorded[1].1, "BACKFILL_RECONCILE");
    assert_eq!(recorded[1].3.as_deref(), Some("owner confirmed"));
}

// ---------------------------------------------------------------------- CLI --

#[tokio::test]
async fn cli_commands_exit_codes_and_json() {
    let (db, mb, _clock, shared, ids) =
        processed(&[ldm(1), MALFORMED.to_string(), unsupported(2)]).await;
    let (missing, malformed, exhausted) = (ids[0], ids[1], ids[2]);
    mb.exec(&format!(
        "DELETE FROM cminmsgs WHERE CMINMSGS_ID = {missing}"
    ))
    .await;
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    scan(&r).await;
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let cfg = cfg.path();
    let id = |n: i64| n.to_string();

    let out = msgx(cfg, &["backfill", "abandoned", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list[0]["msg_id"], missing);
    assert_eq!(list[0]["backfill_abandoned_reason"], "MISSING_ROW");
    let out = msgx(cfg, &["backfill", "abandoned"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("MISSING_ROW"));

    // Usage errors: 2.
    assert_eq!(
        code(&msgx(cfg, &["backfill", "reopen", "--all"])),
        2,
        "--all needs --reason"
    );
    assert_eq!(code(&msgx(cfg, &["backfill", "reopen"])), 2);
    // A bulk reopen needs --yes when nobody can be asked (issue 16, item 5).
    let out = msgx(
        cfg,
        &["backfill", "reopen", "--all", "--reason", "outage over"],
    );
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(text(&out).contains("--yes"), "{}", text(&out));
    assert!(bf(&db, missing).await.backfill_abandoned_at.is_some());
    assert_eq!(
        code(&msgx(cfg, &["backfill", "reopen", &id(exhausted)])),
        2,
        "not abandoned"
    );
    let out = msgx(cfg, &["backfill", "reconcile", &id(missing)]);
    assert_eq!(code(&out), 2, "needs --confirm: {}", text(&out));
    assert!(bf(&db, missing).await.backfill_reconciled_at.is_none());

    let out = msgx(
        cfg,
        &[
            "backfill",
            "reconcile",
            &id(missing),
            "--confirm",
            "--note",
            "checked",
            "--actor",
            "alice",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(bf(&db, missing).await.backfill_reconciled_at.is_some());
    let out = msgx(cfg, &["backfill", "reopen", &id(missing), "--actor", "bob"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let row = bf(&db, missing).await;
    assert_eq!(
        (row.backfill_abandoned_at, row.backfill_reconciled_at),
        (None, None)
    );
    let who: Vec<(String, String)> = backfill_actions(&db)
        .await
        .into_iter()
        .map(|(a, b, _, _)| (a, b))
        .collect();
    assert_eq!(
        who,
        vec![
            ("alice".into(), "BACKFILL_RECONCILE".into()),
            ("bob".into(), "BACKFILL_REOPEN".into())
        ]
    );

    // Replay.
    let out = msgx(cfg, &["replay", &id(malformed)]);
    assert_eq!(code(&out), 2, "MALFORMED needs --force: {}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("CLM-3") && err.contains("--force"), "{err}");
    assert_eq!(
        code(&msgx(cfg, &["replay", &id(malformed), "--force"])),
        2,
        "--force needs --reason"
    );
    assert_eq!(code(&msgx(cfg, &["replay", "--error-class", "NOPE"])), 2);
    assert_eq!(code(&msgx(cfg, &["replay"])), 2);
    let out = msgx(
        cfg,
        &[
            "replay",
            "--error-class",
            "exhausted",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(plan["dry_run"], true);
    assert_eq!(plan["rows"][0]["msg_id"], exhausted);
    assert_eq!(bf(&db, exhausted).await.state, "DEAD");
    // A bulk replay needs --reason, then --yes (no terminal here), and
    // names the database it would change (issue 16, item 5).
    let out = msgx(cfg, &["replay", "--error-class", "exhausted"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(text(&out).contains("--reason"), "{}", text(&out));
    let out = msgx(
        cfg,
        &["replay", "--error-class", "exhausted", "--reason", "fixed"],
    );
    assert_eq!(code(&out), 2, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("--yes") && err.contains("1 row(s)"), "{err}");
    assert!(err.contains(&db.name), "names the target database: {err}");
    assert_eq!(bf(&db, exhausted).await.state, "DEAD", "nothing changed");
    let out = msgx(cfg, &["replay", &id(exhausted), "--actor", "carol"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(bf(&db, exhausted).await.state, "PENDING");

    // Status shows the backfill counts.
    let out = msgx(cfg, &["status", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(status["backfill"]["pending"].is_i64(), "{status}");
    assert_eq!(status["backfill"]["abandoned"]["MISSING_ROW"], 0);
    let out = msgx(cfg, &["status"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("backfill:"),
        "{}",
        text(&out)
    );

    // `msgx run backfill-scan` takes the reopened row: the row is still missing.
    let out = msgx(cfg, &["run", "backfill-scan", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(run["details"]["abandoned_missing_row"], 1, "{run}");
    // A writing command names what it acts on, without credentials.
    let on = run["target"]["postgres"].as_str().unwrap_or_default();
    assert!(on.ends_with(&format!("/{}", db.name)), "{run}");
    assert!(
        run["target"]["mailbox"]
            .as_str()
            .unwrap_or_default()
            .ends_with(&mb.name)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("acting on PostgreSQL") && !err.contains("msgx:msgx@"),
        "{err}"
    );
}

/// The harness drops a test mailbox even while a connection holds a metadata
/// lock on its tables (an open transaction that is never ended), as a
/// test's pools could at its end under load: the DROP waited for it forever
/// and hung the suite (seen once, in this file, 2026-12-06).
#[tokio::test]
async fn a_test_mailbox_is_dropped_while_a_transaction_holds_its_tables() {
    use mysql_async::prelude::Queryable;
    let mb = TestMailbox::new().await;
    let (name, table) = (mb.name.clone(), mb.inbox);
    let holder = mysql_async::Pool::from_url(mb.url.as_str()).expect("url");
    let mut conn = holder.get_conn().await.expect("connects");
    conn.query_drop("START TRANSACTION").await.unwrap();
    let _: Vec<i64> = conn
        .query(format!("SELECT CMINMSGS_ID FROM {table}"))
        .await
        .unwrap();
    drop(mb);
    let admin = mysql_async::Pool::from_url(mysql_admin_url()).expect("url");
    let left: Vec<String> = admin
        .get_conn()
        .await
        .unwrap()
        .exec(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name = ?",
            (name.as_str(),),
        )
        .await
        .unwrap();
    assert!(left.is_empty(), "{name} left");
    drop(conn);
    let _ = admin.disconnect().await;
}
