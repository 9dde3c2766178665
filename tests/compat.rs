//! The compat HTTP entry `POST /cminmsgs/send` (design §4.4; issue 5 item 6)
//! against a real MariaDB mailbox and PostgreSQL, over a real TCP socket.

mod common;

use common::*;
use msgx::http::compat::{CompatState, router};

const MSG: &str = "<MSG><META><SNDR>AODB</SNDR><SEQN>77</SEQN><DTTM>20261201080000</DTTM><TYPE>FLOP</TYPE>\
                   <STYP>APPT</STYP></META><FLOP><FLID>1</FLID><APPT>01DEC260830</APPT></FLOP></MSG>";

async fn serve(db: &TestDb, mailbox_url: &str, max_body: usize) -> std::net::SocketAddr {
    let mut cfg = db.config();
    cfg.msgx.mailbox.url = mailbox_url.to_string();
    let (_clock, shared) = manual_clock();
    let state = CompatState {
        pg: db.pool.clone(),
        mailbox: msgx::store::mailbox::Mailbox::new(&cfg.msgx.mailbox).unwrap(),
        clock: shared,
        tz: cfg.msgx.airport.tz(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router(state, max_body)).await;
    });
    addr
}

/// POST /cminmsgs/send; returns (status, body).
async fn post(addr: std::net::SocketAddr, body: &str) -> (u16, String) {
    http(addr, "POST", "/cminmsgs/send", body).await
}

#[tokio::test]
async fn a_message_is_written_to_the_mailbox_and_enqueued_beyond_w() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let addr = serve(&db, &mb.url, 1 << 20).await;
    let (status, body) = post(addr, MSG).await;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let id = v["id"].as_i64().unwrap();
    assert_eq!(v["enqueued"], true);
    let row: (String, String) =
        sqlx::query_as("SELECT state, source FROM proc_state WHERE msg_id = $1")
            .bind(id)
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(row, ("PENDING".into(), "compat".into()));
    use mysql_async::prelude::Queryable;
    let mut conn = mb.pool.get_conn().await.unwrap();
    let stored: Option<(String, String, String)> = conn
        .exec_first(
            "SELECT CMINMSGS_SUBSYSTEM_TYPE, CMINMSGS_SUBSYSTEM_SUBTYPE, CMINMSGS_STATUS FROM cminmsgs WHERE CMINMSGS_ID = ?",
            (id,),
        )
        .await
        .unwrap();
    assert_eq!(stored, Some(("FLOP".into(), "APPT".into(), "VALID".into())));
}

#[tokio::test]
async fn a_malformed_body_is_400_and_writes_nothing() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let addr = serve(&db, &mb.url, 1 << 20).await;
    let (status, body) = post(addr, "<MSG><META>").await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("MALFORMED"), "{body}");
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM proc_state")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn an_oversized_body_is_413() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let addr = serve(&db, &mb.url, 64).await;
    let (status, _) = post(addr, MSG).await;
    assert_eq!(status, 413);
}

#[tokio::test]
async fn an_unreachable_mailbox_is_503() {
    let db = TestDb::migrated().await;
    let addr = serve(&db, "mysql://msgx:msgx@127.0.0.1:1/none", 1 << 20).await;
    let (status, body) = post(addr, MSG).await;
    assert_eq!(status, 503, "{body}");
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM proc_state")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn a_failed_enqueue_after_the_mailbox_write_is_202() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    sqlx::raw_sql(
        "CREATE FUNCTION no_compat() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'pg down (test)'; END $$; \
         CREATE TRIGGER no_compat BEFORE INSERT ON proc_state FOR EACH ROW EXECUTE FUNCTION no_compat();",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    let addr = serve(&db, &mb.url, 1 << 20).await;
    let (status, body) = post(addr, MSG).await;
    assert_eq!(status, 202, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["enqueued"], false);
    assert!(
        v["id"].as_i64().unwrap() > 0,
        "the mailbox row exists for the poller"
    );
}
