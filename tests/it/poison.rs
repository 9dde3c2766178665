//! Poison messages never stall the queue silently (issue 31 items 1 and 2;
//! design §3, §5.1): against real PostgreSQL and MariaDB, with the default
//! configuration and a manual clock. An over-long identity part is
//! DEAD(MALFORMED) at decode; any failure of the identity binding is recorded
//! on the message (FAILED, attempts, HEAD_FAILURE), never a failed run; a
//! database error the message's data provokes is FAILED(DATA) and ends
//! DEAD(EXHAUSTED) after its schedule, keeping its SQLSTATE.

use crate::common;

use chrono::Duration;
use common::jobs::{drain_ok, run_ok};
use common::queries::outcomes;
use common::sis::{flop, schd};
use common::*;
use msgx::store::pg::proc_state;

/// (STATE, ERROR_CLASS) of each row of [`outcomes`], in MSG_ID order.
fn states_and_classes(
    s: &[(i64, String, Option<String>, Option<String>)],
) -> Vec<(&str, Option<&str>)> {
    s.iter().map(|o| (o.1.as_str(), o.2.as_deref())).collect()
}

/// `n` pseudo-random characters of `alphabet` (fixed seed): PostgreSQL
/// compresses a repetitive value before it indexes it, so only an
/// incompressible one reproduces an index row over the btree limit.
fn incompressible(n: usize, alphabet: &[u8]) -> String {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(alphabet[(x % alphabet.len() as u64) as usize])
        })
        .collect()
}

/// A SCHD for 9001, then the FLOP RENO updates 3 and 4 behind message 2.
async fn with_two_behind(mb: &TestMailbox, second: &str) {
    mb.insert(&schd(1, "DNLD", &[(9001, "01DEC260835")])).await; // 1
    mb.insert(second).await; // 2
    mb.insert(&flop(3, 9001, "RENO", "<RENO>B3</RENO>")).await; // 3
    mb.insert(&flop(4, 9001, "RENO", "<RENO>B4</RENO>")).await; // 4
}

/// 9001's RENO: message 4's once the queue has moved past message 2.
async fn reno(db: &TestDb) -> Option<String> {
    sqlx::query_scalar("SELECT reno FROM flight_schd WHERE flid = 9001")
        .fetch_one(&db.pool)
        .await
        .unwrap()
}

/// Item 1: a FLOP whose SEQN is 6,000 digits once made every pump-drain run
/// fail on the identity index (the head stayed PENDING with no attempt and
/// no head-blocked signal). It is DEAD(MALFORMED) at decode, naming SEQN and
/// its length, and the messages behind it are processed — one per
/// transaction and in a group (the default) alike.
#[tokio::test]
async fn an_over_long_seqn_is_dead_malformed_and_the_queue_moves_on() {
    for group_commit in [50, 1] {
        let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
        let seqn = incompressible(6_000, b"0123456789");
        let poison = flop(2, 9001, "RENO", "<RENO>B2</RENO>")
            .replace("<SEQN>2</SEQN>", &format!("<SEQN>{seqn}</SEQN>"));
        with_two_behind(&mb, &poison).await;
        let (_clock, shared) = manual_clock();
        let (r, _stop) = runner(&db, Some(&mb), shared, |c| {
            c.msgx.pipeline.group_commit = group_commit
        });
        drain_ok(&r).await;
        let s = outcomes(&db).await;
        let got = states_and_classes(&s);
        assert_eq!(
            got,
            [
                ("SUCCEEDED", None),
                ("DEAD", Some("MALFORMED")),
                ("SUCCEEDED", None),
                ("SUCCEEDED", None)
            ],
            "group-commit {group_commit}: {s:?}"
        );
        let why = s[1].3.clone().unwrap_or_default();
        assert!(
            why.contains("MSG/META/SEQN") && why.contains("is 6000 characters long"),
            "{why}"
        );
        assert_eq!(reno(&db).await.as_deref(), Some("B4"));
    }
}

/// A GLST DNLD with a 6,000-character GCOD (a reference record key).
fn glst_with_long_gcod(seqn: u32) -> String {
    let gcod = incompressible(
        6_000,
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    );
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>20261201080000</DTTM><TYPE>GLST</TYPE>\
         <STYP>DNLD</STYP></META><RECS>1</RECS><GLST><GCOD>{gcod}</GCOD><GTNM>g</GTNM></GLST></MSG>"
    )
}

/// Item 2: the GLST's key exceeds PostgreSQL's index row limit (SQLSTATE
/// 54000, a program limit). That is no outage: the message is FAILED(DATA)
/// with attempts and the head-blocked signal, retried on
/// `msgx.pipeline.retry.data` (3 attempts, 30 s then 2 min), then
/// DEAD(EXHAUSTED) with the SQLSTATE in LAST_ERROR; the messages behind it
/// are processed within that schedule, with no operator action.
#[tokio::test]
async fn a_data_error_retries_on_its_schedule_then_is_exhausted_keeping_the_sqlstate() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    with_two_behind(&mb, &glst_with_long_gcod(2)).await;
    let (clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    drain_ok(&r).await;
    let s = outcomes(&db).await;
    assert_eq!(
        (s[1].1.as_str(), s[1].2.as_deref()),
        ("FAILED", Some("DATA")),
        "{s:?}"
    );
    let why = s[1].3.clone().unwrap_or_default();
    assert!(why.starts_with("SQLSTATE 54000: "), "{why}");
    let blocked = proc_state::head_failure(&db.pool).await.unwrap();
    assert_eq!(
        blocked.map(|h| (h.msg_id, h.attempts)),
        Some((2, 1)),
        "the head-blocked signal"
    );
    assert_eq!((s[2].1.as_str(), s[3].1.as_str()), ("PENDING", "PENDING"));

    for (tier, attempts) in [(30, 2), (120, 3)] {
        clock.advance(Duration::seconds(tier - 1));
        run_ok(&r, "pump-drain").await;
        assert_eq!(
            outcomes(&db).await[1].1,
            "FAILED",
            "not due before its tier"
        );
        clock.advance(Duration::seconds(1));
        run_ok(&r, "pump-drain").await;
        if attempts < 3 {
            let h = proc_state::head_failure(&db.pool).await.unwrap();
            assert_eq!(h.map(|h| h.attempts), Some(attempts));
        }
    }
    // 2.5 minutes after the first failure, before the head-blocked alert.
    let s = outcomes(&db).await;
    let got = states_and_classes(&s);
    assert_eq!(
        got,
        [
            ("SUCCEEDED", None),
            ("DEAD", Some("EXHAUSTED")),
            ("SUCCEEDED", None),
            ("SUCCEEDED", None)
        ]
    );
    let kept = s[1].3.clone().unwrap_or_default();
    assert!(
        kept.starts_with("SQLSTATE 54000: database error while processing: ")
            && kept.contains("index row"),
        "{kept}"
    );
    assert_eq!(reno(&db).await.as_deref(), Some("B4"));
    assert!(proc_state::head_failure(&db.pool).await.unwrap().is_none());
}

/// Item 1: the identity binding statement failing for any reason the decode
/// bounds do not catch — here a trigger on PROC_STATE refusing message 2's
/// identity with a chosen SQLSTATE — is the message's attempt: FAILED with
/// the SQLSTATE's class, attempts and HEAD_FAILURE, and the run succeeds.
/// With the default group commit the group binds first (and rolls back),
/// then the message alone. Once the cause is gone, it is processed.
#[tokio::test]
async fn a_failing_identity_binding_is_recorded_on_the_message_not_a_failed_run() {
    for (sqlstate, class, wait) in [("22023", "DATA", 30), ("40P01", "INFRA", 5)] {
        let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
        with_two_behind(&mb, &flop(66, 9001, "RENO", "<RENO>B2</RENO>")).await;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "CREATE FUNCTION refuse_identity() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
               RAISE EXCEPTION 'identity refused (test)' USING ERRCODE = '{sqlstate}'; END $$; \
             CREATE TRIGGER refuse_identity BEFORE UPDATE OF identity_key ON proc_state FOR EACH ROW \
               WHEN (NEW.identity_key = 'AODB|FLOP|RENO|66') EXECUTE FUNCTION refuse_identity();"
        )))
        .execute(&db.pool)
        .await
        .unwrap();
        let (clock, shared) = manual_clock();
        let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
        drain_ok(&r).await;
        let s = outcomes(&db).await;
        let got = states_and_classes(&s);
        assert_eq!(
            got,
            [
                ("SUCCEEDED", None),
                ("FAILED", Some(class)),
                ("PENDING", None),
                ("PENDING", None)
            ],
            "{sqlstate}: {s:?}"
        );
        let why = s[1].3.clone().unwrap_or_default();
        assert!(
            why.starts_with(&format!(
                "SQLSTATE {sqlstate}: database error while binding the identity: "
            )) && why.contains("identity refused (test)"),
            "{why}"
        );
        let h = proc_state::head_failure(&db.pool).await.unwrap();
        assert_eq!(
            h.map(|h| (h.msg_id, h.attempts)),
            Some((2, 1)),
            "{sqlstate}"
        );

        sqlx::raw_sql("DROP TRIGGER refuse_identity ON proc_state")
            .execute(&db.pool)
            .await
            .unwrap();
        clock.advance(Duration::seconds(wait));
        run_ok(&r, "pump-drain").await;
        let states: Vec<String> = outcomes(&db).await.into_iter().map(|o| o.1).collect();
        assert_eq!(states, ["SUCCEEDED"; 4], "{sqlstate}");
        assert_eq!(reno(&db).await.as_deref(), Some("B4"));
    }
}
