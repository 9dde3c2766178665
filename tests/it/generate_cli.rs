//! `msgx mailbox generate --rate` (issue 11): the steady inflow of the latency
//! benchmark and the outage soak inserts one message at a time and prints the
//! commit time and mailbox ID of each insert (0 for a rolled-back one).

use crate::common;

use common::*;
use mysql_async::prelude::Queryable;

#[tokio::test]
async fn generate_with_a_rate_prints_every_insert_with_its_mailbox_id() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let out = msgx(
        cfg.path(),
        &[
            "mailbox",
            "generate",
            "--no-schedules",
            "--messages",
            "30",
            "--flights",
            "10",
            "--holes",
            "1",
            "--rate",
            "1000",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let printed: Vec<(f64, i64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut parts = l.split_whitespace();
            let t = parts.next().and_then(|t| t.parse().ok()).expect("time");
            let id = parts.next().and_then(|i| i.parse().ok()).expect("id");
            (t, id)
        })
        .collect();
    assert_eq!(printed.len(), 30, "{}", text(&out));
    assert_eq!(
        printed.iter().filter(|(_, id)| *id == 0).count(),
        1,
        "one hole"
    );
    assert!(printed.windows(2).all(|w| w[0].0 <= w[1].0), "times ascend");
    let ids: Vec<i64> = printed
        .iter()
        .map(|(_, id)| *id)
        .filter(|&id| id > 0)
        .collect();

    let mut conn = mb.pool.get_conn().await.unwrap();
    let rows: Vec<(i64, String)> = conn
        .query("SELECT CMINMSGS_ID, CMINMSGS_CLOB_MSG FROM cminmsgs ORDER BY CMINMSGS_ID")
        .await
        .unwrap();
    assert_eq!(rows.iter().map(|(id, _)| *id).collect::<Vec<_>>(), ids);
    assert!(
        rows.iter()
            .all(|(_, xml)| xml.contains("<TYPE>FLOP</TYPE>")),
        "--no-schedules: the FLOP mix only"
    );
}
