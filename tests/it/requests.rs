//! Upstream requests and the RESP guard (issue 9; design §7.1, §7.2;
//! sis-format §5) against a real MariaDB mailbox and a real PostgreSQL,
//! with a manual clock.

use crate::common;
use msgx::domain::request_state::RequestState;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use common::jobs::{drain, run};
use common::queries::flight_count;
use common::sis::schd_at;
use common::*;
use msgx::config::Config;
use msgx::requests::track::{RequestKind, SentRequest, Tracker};
use msgx::scheduler::runner::JobRunner;
use msgx::store::mailbox::Mailbox;
use msgx::store::pg::req_track::ReqRow;
use mysql_async::prelude::Queryable;

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 12, d).expect("valid")
}

fn schedule(d: u32) -> RequestKind {
    RequestKind::Schedule { day: day(d) }
}

fn reference(t: &str) -> RequestKind {
    RequestKind::Reference { rtype: t.into() }
}

fn config(db: &TestDb, mb: &TestMailbox) -> Config {
    let mut c = db.config();
    c.msgx.mailbox.url = mb.url.clone();
    c
}

async fn requests(db: &TestDb) -> Vec<ReqRow> {
    sqlx::query_as(
        "SELECT id, req_type, operation_day, sender, state, seqn, routing_id, request_xml, coutmsgs_id, \
         created_at, sent_at, closed_at, matched_msg_id, match_mode, match_audit, close_note \
         FROM req_track ORDER BY id",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap()
}

async fn coutmsgs_count(mb: &TestMailbox) -> i64 {
    let mut conn = mb.pool.get_conn().await.unwrap();
    conn.query_first("SELECT COUNT(*) FROM coutmsgs")
        .await
        .unwrap()
        .unwrap_or(0)
}

/// `(state, reason)` of one message.
async fn outcome(db: &TestDb, msg_id: i64) -> (String, Option<String>) {
    sqlx::query_as(
        "SELECT state, COALESCE(outcome_reason, last_error) FROM proc_state WHERE msg_id = $1",
    )
    .bind(msg_id)
    .fetch_one(&db.pool)
    .await
    .unwrap()
}

fn glst_resp(seqn: u32, dttm: &str, extra_meta: &str, recs: u32) -> String {
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>{seqn}</SEQN><DTTM>{dttm}</DTTM><TYPE>GLST</TYPE>\
         <STYP>RESP</STYP>{extra_meta}</META><RECS>{recs}</RECS>\
         <GLST><GCOD>G1</GCOD><GTNM>Gate 1</GTNM></GLST></MSG>"
    )
}

struct Env {
    db: TestDb,
    mb: TestMailbox,
    clock: msgx::clock::ManualClock,
    shared: msgx::clock::SharedClock,
    config: Config,
    mailbox: Mailbox,
}

impl Env {
    async fn new() -> Env {
        let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
        let (clock, shared) = manual_clock();
        let config = config(&db, &mb);
        let mailbox = Mailbox::new(&config.msgx.mailbox).expect("mailbox");
        Env {
            db,
            mb,
            clock,
            shared,
            config,
            mailbox,
        }
    }

    /// Sends one request through the tracker at the manual clock's time.
    async fn request(&self, kind: &RequestKind) -> SentRequest {
        self.tracker()
            .request(kind, self.shared.as_ref())
            .await
            .expect("request")
    }

    fn tracker(&self) -> Tracker<'_> {
        Tracker {
            pg: &self.db.pool,
            mailbox: &self.mailbox,
            config: &self.config,
        }
    }

    fn now(&self) -> DateTime<Utc> {
        self.shared.now()
    }

    fn runner(&self) -> (JobRunner, tokio::sync::watch::Sender<bool>) {
        runner(&self.db, Some(&self.mb), self.shared.clone(), |_| {})
    }
}

#[tokio::test]
async fn a_request_writes_a_coutmsgs_row_byte_compatible_with_the_predecessor() {
    let env = Env::new().await;
    sqlx::query("SELECT setval('request_seqn_seq', 41)")
        .execute(&env.db.pool)
        .await
        .unwrap();
    // 08:00Z is 16:00 at the airport (Asia/Shanghai): DTTM and the insert time are local.
    let sent = env.request(&reference("GLST")).await;
    let r = &sent.request;
    assert_eq!(
        (r.state.as_str(), r.seqn.as_str(), r.routing_id.as_str()),
        ("SENT", "000042", "VIEWRQRD")
    );
    assert_eq!(r.sent_at, Some(env.now()));
    let mut conn = env.mb.pool.get_conn().await.unwrap();
    type Row = (
        i64,
        String,
        chrono::NaiveDateTime,
        Option<chrono::NaiveDateTime>,
        String,
        (i8, Option<i8>, Option<i8>, Option<i16>, i8),
        (i8, i8, Option<chrono::NaiveDateTime>, i8, i8),
    );
    let rows: Vec<mysql_async::Row> = conn
        .query(
            "SELECT COUTMSGS_ID, COUTMSGS_CLOB_MSG, COUTMSGS_DATE_INSERTED, COUTMSGS_DATE_SENT, ROUTINGID, \
             COUTMSGS_TRUEFALS_GROUP, COUTMSGS_NO_MESSAGES, COUTMSGS_GROUP_ORDER, COUTMSGS_GROUP_ID, \
             COUTMSGS_FINAL_GROUP_IND, COUTMSGS_ACK_REQD, COUTMSGS_ACK_RESEND_TIMES, COUTMSGS_ACK_DATE_RECV, \
             COUTMSGS_ENCRYPT, COUTMSGS_ERROR FROM coutmsgs",
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let g = |i: usize| rows[0].get::<mysql_async::Value, _>(i).expect("column");
    let row: Row = (
        mysql_async::from_value(g(0)),
        mysql_async::from_value(g(1)),
        mysql_async::from_value(g(2)),
        mysql_async::from_value(g(3)),
        mysql_async::from_value(g(4)),
        (
            mysql_async::from_value(g(5)),
            mysql_async::from_value(g(6)),
            mysql_async::from_value(g(7)),
            mysql_async::from_value(g(8)),
            mysql_async::from_value(g(9)),
        ),
        (
            mysql_async::from_value(g(10)),
            mysql_async::from_value(g(11)),
            mysql_async::from_value(g(12)),
            mysql_async::from_value(g(13)),
            mysql_async::from_value(g(14)),
        ),
    );
    // sis-format §5, composed example, with this request's SEQN and DTTM.
    let want = r#"<?xml version="1.0" encoding="UTF-8"?><MSG xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="unisysaodbsis.xsd"><META><SNDR>VIEW</SNDR><SEQN>000042</SEQN><DTTM>20261201160000</DTTM><TYPE>RQRD</TYPE><STYP>GLST</STYP></META><RQRD><RTYP>GLST</RTYP></RQRD></MSG>"#;
    assert_eq!(row.0, r.coutmsgs_id.expect("linked"));
    assert_eq!(row.1, want);
    assert_eq!(r.request_xml, want);
    assert_eq!(row.2.to_string(), "2026-12-01 16:00:00");
    assert_eq!(row.3, None, "DATE_SENT is the AODB agent's");
    assert_eq!(row.4, "VIEWRQRD");
    assert_eq!(row.5, (0, None, None, None, 0));
    assert_eq!(row.6, (0, 0, None, 0, 0));

    // RQFD: fixed STYP NONE, the operation day from cutover to cutover.
    let sent = env.request(&schedule(2)).await;
    let want = r#"<?xml version="1.0" encoding="UTF-8"?><MSG xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="unisysaodbsis.xsd"><META><SNDR>VIEW</SNDR><SEQN>000043</SEQN><DTTM>20261201160000</DTTM><TYPE>RQFD</TYPE><STYP>NONE</STYP></META><RQFD><STDB>02DEC260000</STDB><STDE>03DEC260000</STDE></RQFD></MSG>"#;
    let (xml, routing): (String, String) = conn
        .exec_first(
            "SELECT COUTMSGS_CLOB_MSG, ROUTINGID FROM coutmsgs WHERE COUTMSGS_ID = ?",
            (sent.request.coutmsgs_id,),
        )
        .await
        .unwrap()
        .expect("row");
    assert_eq!((xml.as_str(), routing.as_str()), (want, "VIEWRQFD"));
    assert_eq!(sent.request.operation_day, Some(day(2)));
}

#[tokio::test]
async fn the_seqn_cycles_from_999999_to_000001() {
    let env = Env::new().await;
    sqlx::query("SELECT setval('request_seqn_seq', 999998)")
        .execute(&env.db.pool)
        .await
        .unwrap();
    let mut seqns = Vec::new();
    for t in ["GLST", "SLST", "TLST"] {
        let s = env.request(&reference(t)).await;
        seqns.push(s.request.seqn);
    }
    assert_eq!(seqns, vec!["999999", "000001", "000002"]);
}

#[tokio::test]
async fn a_duplicate_request_expires_the_old_one() {
    let env = Env::new().await;
    let first = env.request(&schedule(1)).await;
    let other_day = env.request(&schedule(2)).await;
    env.clock.advance(Duration::minutes(1));
    let second = env.request(&schedule(1)).await;
    assert_eq!(second.superseded, vec![first.request.id]);
    let rows = requests(&env.db).await;
    let by_id = |id: i64| rows.iter().find(|r| r.id == id).expect("row");
    let old = by_id(first.request.id);
    assert_eq!(old.state, RequestState::Expired);
    assert_eq!(old.closed_at, Some(env.now()));
    assert!(
        old.close_note
            .as_deref()
            .is_some_and(|n| n.contains("superseded") && n.contains(&second.request.seqn)),
        "{:?}",
        old.close_note
    );
    assert_eq!(by_id(second.request.id).state, RequestState::Sent);
    assert_eq!(
        by_id(other_day.request.id).state,
        RequestState::Sent,
        "another day is another key"
    );
    assert_eq!(
        coutmsgs_count(&env.mb).await,
        3,
        "each request is its own row"
    );
}

#[tokio::test]
async fn a_crash_between_the_mailbox_write_and_the_confirmation_is_compensated_without_a_second_row()
 {
    let env = Env::new().await;
    let t = env.tracker();
    // Written to COUTMSGS, then "crashed" before PENDING → SENT.
    let (written, _) = t.register(&schedule(1), env.now()).await.unwrap();
    let coutmsgs_id = t.write(&written, env.now()).await.unwrap();
    // Registered, crashed before the mailbox write.
    let (never, _) = t.register(&reference("GLST"), env.now()).await.unwrap();
    assert_eq!(
        requests(&env.db)
            .await
            .iter()
            .map(|r| r.state.as_str())
            .collect::<Vec<_>>(),
        vec!["PENDING", "PENDING"]
    );

    // Compensation before the expiry: the written one is confirmed, the
    // other may still be in flight and is left.
    env.clock.advance(Duration::minutes(1));
    let (r, _stop) = env.runner();
    let s = run(&r, "request-expiry").await;
    assert_eq!(
        s.details.get("pending_confirmed").and_then(|v| v.as_u64()),
        Some(1)
    );
    let rows = requests(&env.db).await;
    assert_eq!(rows[0].state, RequestState::Sent);
    assert_eq!(rows[0].coutmsgs_id, Some(coutmsgs_id));
    assert_eq!(rows[0].sent_at, Some(written.created_at));
    assert_eq!(rows[1].state, RequestState::Pending);
    assert_eq!(coutmsgs_count(&env.mb).await, 1, "nothing sent again");

    // After the expiry the never-written one is expired; still one row.
    env.clock.advance(Duration::minutes(10));
    run(&r, "request-expiry").await;
    let rows = requests(&env.db).await;
    let never = rows.iter().find(|r| r.id == never.id).expect("row");
    assert_eq!(never.state, RequestState::Expired);
    assert!(
        never
            .close_note
            .as_deref()
            .is_some_and(|n| n.contains("never sent"))
    );
    assert_eq!(coutmsgs_count(&env.mb).await, 1);

    // A new request compensates first too: a crashed write is confirmed,
    // then superseded; the mailbox has exactly one row per write.
    let (crashed, _) = t.register(&schedule(3), env.now()).await.unwrap();
    let crashed_row = t.write(&crashed, env.now()).await.unwrap();
    let next = t.request(&schedule(3), env.shared.as_ref()).await.unwrap();
    assert_eq!(next.superseded, vec![crashed.id]);
    let rows = requests(&env.db).await;
    let crashed = rows.iter().find(|r| r.id == crashed.id).expect("row");
    assert_eq!(
        (crashed.state.as_str(), crashed.coutmsgs_id),
        ("EXPIRED", Some(crashed_row))
    );
    assert_eq!(coutmsgs_count(&env.mb).await, 3);
}

#[tokio::test]
async fn a_matched_resp_is_applied_and_the_request_is_done() {
    let env = Env::new().await;
    let req = env.request(&schedule(1)).await;
    let noise = env.request(&schedule(2)).await;
    // No echo: degraded rule. DTTM 16:05 local = 5 minutes after the send.
    let id = env
        .mb
        .insert(&schd_at(
            1,
            "RESP",
            "20261201160500",
            "",
            &[(9001, "01DEC260835"), (9002, "01DEC261135")],
        ))
        .await;
    let (r, _stop) = env.runner();
    drain(&r).await;
    assert_eq!(outcome(&env.db, id).await.0, "SUCCEEDED");
    assert_eq!(flight_count(&env.db).await, 2, "the snapshot is applied");
    let rows = requests(&env.db).await;
    let done = rows.iter().find(|x| x.id == req.request.id).expect("row");
    assert_eq!(done.state, RequestState::Done);
    assert_eq!(done.matched_msg_id, Some(id));
    assert_eq!(done.match_mode.as_deref(), Some("DEGRADED"));
    assert_eq!(done.closed_at, Some(env.now()));
    let audit = done
        .match_audit
        .clone()
        .expect("degraded match audited on the row");
    assert!(
        audit.contains("degraded") && audit.contains(&done.seqn),
        "{audit}"
    );
    let logged: (String, String, Option<String>, serde_json::Value) = sqlx::query_as(
        "SELECT actor, target, reason, detail FROM operator_action WHERE action = 'REQUEST_MATCH_DEGRADED'",
    )
    .fetch_one(&env.db.pool)
    .await
    .unwrap();
    assert_eq!(logged.1, format!("req_track:{}", done.id));
    assert_eq!(logged.2.as_deref(), Some(audit.as_str()));
    assert_eq!(logged.3["msg_id"], serde_json::json!(id));
    let other = rows.iter().find(|x| x.id == noise.request.id).expect("row");
    assert_eq!(
        other.state,
        RequestState::Sent,
        "another day's request is untouched"
    );

    // Reference RESP echoing the request's SEQN: exact, no audit.
    let glst = env.request(&reference("GLST")).await;
    let echo = format!("<RQSN>{}</RQSN>", glst.request.seqn);
    let id = env
        .mb
        .insert(&glst_resp(2, "20261201160100", &echo, 1))
        .await;
    drain(&r).await;
    assert_eq!(outcome(&env.db, id).await.0, "SUCCEEDED");
    let rows = requests(&env.db).await;
    let done = rows.iter().find(|x| x.id == glst.request.id).expect("row");
    assert_eq!(
        (
            done.state.as_str(),
            done.match_mode.as_deref(),
            done.match_audit.as_deref(),
            done.matched_msg_id
        ),
        ("DONE", Some("EXACT"), None, Some(id))
    );
    let refs: i64 = sqlx::query_scalar("SELECT count(*) FROM ref_master WHERE rtype = 'GLST'")
        .fetch_one(&env.db.pool)
        .await
        .unwrap();
    assert_eq!(refs, 1);
}

#[tokio::test]
async fn a_matched_resp_that_is_rejected_leaves_the_request_sent() {
    let env = Env::new().await;
    let glst = env.request(&reference("GLST")).await;
    // RECS 3 but one record: the snapshot is rejected (PROTOCOL), nothing committed.
    let id = env.mb.insert(&glst_resp(2, "20261201160100", "", 3)).await;
    let (r, _stop) = env.runner();
    drain(&r).await;
    assert_eq!(outcome(&env.db, id).await.0, "DEAD");
    let rows = requests(&env.db).await;
    assert_eq!(rows[0].id, glst.request.id);
    assert_eq!(
        (rows[0].state.as_str(), rows[0].matched_msg_id),
        ("SENT", None),
        "DONE only after the data is committed"
    );
    let audits: i64 = sqlx::query_scalar("SELECT count(*) FROM operator_action")
        .fetch_one(&env.db.pool)
        .await
        .unwrap();
    assert_eq!(audits, 0, "the audit row rolled back with the snapshot");
}

impl Env {
    /// Inserts a one-flight SCHD RESP with DTTM `dttm`, drains the pump and
    /// asserts it was SKIPPED for `reason` with the request rows and the
    /// flights untouched (design §7.2: an unmatched RESP changes nothing).
    async fn resp_is_skipped(&self, r: &JobRunner, seqn: u32, dttm: &str, reason: &str) {
        let before = requests(&self.db).await;
        let id = self
            .mb
            .insert(&schd_at(seqn, "RESP", dttm, "", &[(9001, "01DEC260835")]))
            .await;
        drain(r).await;
        assert_eq!(
            outcome(&self.db, id).await,
            ("SKIPPED".into(), Some(reason.into())),
            "RESP {seqn} at {dttm}"
        );
        assert_eq!(requests(&self.db).await, before, "RESP {seqn}: requests");
        assert_eq!(flight_count(&self.db).await, 0, "RESP {seqn}: flights");
    }
}

#[tokio::test]
async fn unmatched_expired_and_too_old_resps_are_skipped_with_state_untouched() {
    let env = Env::new().await;
    let (r, _stop) = env.runner();

    // Unmatched: the open request is for another day.
    env.request(&schedule(2)).await;
    env.resp_is_skipped(&r, 1, "20261201160500", "resp-unmatched:no-open-request")
        .await;

    // Too old: DTTM 15:50 local, the request was sent at 16:00 (skew 2m).
    env.request(&schedule(1)).await;
    env.resp_is_skipped(&r, 2, "20261201155000", "resp-unmatched:older-than-request")
        .await;

    // Expired: request-expiry closed it; the RESP is skipped, the row stays as it was.
    env.clock.advance(Duration::minutes(11));
    let s = run(&r, "request-expiry").await;
    assert_eq!(
        s.details.get("requests_expired").and_then(|v| v.as_u64()),
        Some(2)
    );
    assert!(
        requests(&env.db)
            .await
            .iter()
            .all(|x| x.state == RequestState::Expired)
    );
    env.resp_is_skipped(&r, 3, "20261201161100", "resp-unmatched:request-expired")
        .await;
}

#[tokio::test]
async fn a_resp_after_expired_changes_nothing() {
    let env = Env::new().await;
    let glst = env.request(&reference("GLST")).await;
    env.clock.advance(Duration::minutes(11));
    let (r, _stop) = env.runner();
    run(&r, "request-expiry").await;
    let before = requests(&env.db).await;
    assert_eq!(before[0].state, RequestState::Expired);
    // Even an exact echo of the expired request does not reopen or complete it.
    let echo = format!("<RQSN>{}</RQSN>", glst.request.seqn);
    let late = env
        .mb
        .insert(&glst_resp(2, "20261201161000", &echo, 1))
        .await;
    let degraded = env.mb.insert(&glst_resp(3, "20261201161000", "", 1)).await;
    drain(&r).await;
    for id in [late, degraded] {
        assert_eq!(
            outcome(&env.db, id).await,
            (
                "SKIPPED".into(),
                Some("resp-unmatched:request-expired".into())
            )
        );
    }
    assert_eq!(requests(&env.db).await, before);
    let refs: i64 = sqlx::query_scalar("SELECT count(*) FROM ref_master")
        .fetch_one(&env.db.pool)
        .await
        .unwrap();
    assert_eq!(refs, 0, "the late snapshot is not applied");

    // A second RESP for a request already DONE changes nothing either.
    let again = env.request(&reference("GLST")).await;
    let first = env.mb.insert(&glst_resp(4, "20261201161200", "", 1)).await;
    drain(&r).await;
    assert_eq!(outcome(&env.db, first).await.0, "SUCCEEDED");
    let done = requests(&env.db).await;
    let second = env.mb.insert(&glst_resp(5, "20261201161300", "", 1)).await;
    drain(&r).await;
    assert_eq!(
        outcome(&env.db, second).await,
        (
            "SKIPPED".into(),
            Some("resp-unmatched:request-closed".into())
        )
    );
    assert_eq!(requests(&env.db).await, done);
    assert_eq!(
        done.iter()
            .find(|x| x.id == again.request.id)
            .map(|x| x.matched_msg_id),
        Some(Some(first))
    );
}

#[tokio::test]
async fn dnld_is_applied_whether_or_not_a_request_is_open() {
    let env = Env::new().await;
    env.request(&schedule(1)).await;
    let before = requests(&env.db).await;
    let id = env
        .mb
        .insert(&schd_at(
            1,
            "DNLD",
            "20261201160500",
            "",
            &[(9001, "01DEC260835")],
        ))
        .await;
    let (r, _stop) = env.runner();
    drain(&r).await;
    assert_eq!(outcome(&env.db, id).await.0, "SUCCEEDED");
    assert_eq!(flight_count(&env.db).await, 1);
    assert_eq!(
        requests(&env.db).await,
        before,
        "unsolicited DNLD does not answer a request"
    );
}

// ------------------------------------------------------------------ CLI --

#[tokio::test]
async fn cli_request_schedule_ref_and_list() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let out = msgx(cfg.path(), &["request", "schedule", "--day", "2026-12-01"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("RQFD 2026-12-01 SEQN 000001 sent: COUTMSGS 1 ROUTINGID VIEWRQFD"),
        "{stdout}"
    );

    let out = msgx(cfg.path(), &["request", "ref", "glst", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["request"]["req_type"], "RQRD:GLST");
    assert_eq!(v["request"]["state"], "SENT");
    assert_eq!(v["request"]["coutmsgs_id"], 2);

    let out = msgx(
        cfg.path(),
        &[
            "request",
            "schedule",
            "--from",
            "2026-12-01",
            "--to",
            "2026-12-03",
            "--json",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3, "one RQFD per operation day");
    assert_eq!(lines[0]["superseded"], serde_json::json!([1]));

    let out = msgx(cfg.path(), &["request", "list", "--open", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let open: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json");
    let days: Vec<String> = open
        .iter()
        .map(|r| format!("{}/{}", r["req_type"], r["operation_day"]))
        .collect();
    assert_eq!(
        days,
        vec![
            "\"RQFD\"/\"2026-12-03\"",
            "\"RQFD\"/\"2026-12-02\"",
            "\"RQFD\"/\"2026-12-01\"",
            "\"RQRD:GLST\"/null"
        ]
    );
    let out = msgx(cfg.path(), &["request", "list"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(listed.lines().count(), 6, "header + 5 requests:\n{listed}");
    assert!(
        listed.contains("EXPIRED") && listed.contains("superseded"),
        "{listed}"
    );
    assert_eq!(coutmsgs_count(&mb).await, 5);

    // Refusals change nothing.
    let out = msgx(cfg.path(), &["request", "ref", "NOPE"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        text(&out).contains("not a reference type"),
        "{}",
        text(&out)
    );
    let out = msgx(
        cfg.path(),
        &[
            "request",
            "schedule",
            "--from",
            "2026-12-03",
            "--to",
            "2026-12-01",
        ],
    );
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert_eq!(coutmsgs_count(&mb).await, 5);
    assert_eq!(requests(&db).await.len(), 5);
}

#[tokio::test]
async fn cli_request_refuses_in_shadow_mode() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.mailbox.shadow = true;
    });
    for args in [
        &["request", "schedule", "--day", "2026-12-01"][..],
        &["request", "ref", "GLST"][..],
    ] {
        let out = msgx(cfg.path(), args);
        assert_eq!(code(&out), 2, "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("shadow mode"),
            "{}",
            text(&out)
        );
    }
    assert_eq!(coutmsgs_count(&mb).await, 0);
    assert!(requests(&db).await.is_empty());
    let out = msgx(cfg.path(), &["request", "list"]);
    assert_eq!(code(&out), 0, "listing is a read: {}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no requests"));
}
