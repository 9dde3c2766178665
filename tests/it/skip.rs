//! `msgx skip` (issue 17 item 6; design §5.4, C-27) as an operator runs it,
//! against real PostgreSQL and MariaDB: backlog rows become SKIPPED with an
//! audited reason, the pump goes on past a skipped head, and the skipped
//! rows are backfilled like any terminal row. Rows in other states are
//! reported and left alone; a bulk skip needs `--yes`.

use crate::common;

use common::jobs::run;
use common::queries::{backfill_actions_by_kind, states};
use common::sis::{schd_one_flight as schd, unsupported};
use common::*;
use msgx::backfill::skip::{Selection, SkipRequest, SkipService};
use mysql_async::prelude::Queryable;

#[tokio::test]
async fn a_skipped_head_lets_the_pump_go_on_and_is_backfilled() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared.clone(), |_| {});
    let head = mb.insert(&unsupported(1)).await;
    let next = mb.insert(&schd(2, 7001)).await;
    run(&r, "ingest-sweep").await;
    run(&r, "pump-drain").await;
    assert_eq!(
        states(&db).await,
        vec![(head, "FAILED".into()), (next, "PENDING".into())],
        "the failed head holds the queue (strict FIFO)"
    );

    // In process, on the test clock, so the scan below sees the intent as due
    // (the CLI form is exercised by the tests after this one).
    let service = SkipService {
        pool: &db.pool,
        now: shared.now(),
    };
    let outcome = service
        .skip(&SkipRequest {
            selection: Selection::Ids(vec![head]),
            reason: "ESTT not needed, ticket 42".into(),
            actor: "alice".into(),
            dry_run: false,
        })
        .await
        .expect("skip");
    assert_eq!(outcome.skipped.len(), 1);
    assert!(outcome.action_id.is_some());
    let (state, class, reason, intent): (
        String,
        Option<String>,
        Option<String>,
        Option<chrono::DateTime<chrono::Utc>>,
    ) = sqlx::query_as(
        "SELECT state, error_class, outcome_reason, backfill_next_at FROM proc_state WHERE msg_id = $1",
    )
    .bind(head)
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(state, "SKIPPED");
    assert_eq!(
        class.as_deref(),
        Some("UNSUPPORTED"),
        "what the row was stays"
    );
    let reason = reason.unwrap_or_default();
    assert!(
        reason.starts_with("operator-skip #") && reason.ends_with(": ESTT not needed, ticket 42"),
        "{reason}"
    );
    assert!(intent.is_some(), "the backfill intent comes with the state");
    assert_eq!(
        backfill_actions_by_kind(&db).await,
        vec![(
            "SKIP".into(),
            "alice".into(),
            head.to_string(),
            Some("ESTT not needed, ticket 42".into())
        )]
    );

    run(&r, "pump-drain").await;
    assert_eq!(
        states(&db).await,
        vec![(head, "SKIPPED".into()), (next, "SUCCEEDED".into())],
        "the pump goes on past the skipped head"
    );
    let scan = run(&r, "backfill-scan").await;
    assert_eq!(scan.items, 2, "{scan:?}");
    let mut conn = mb.pool.get_conn().await.unwrap();
    let mark: Option<Option<chrono::NaiveDateTime>> = conn
        .exec_first(
            format!(
                "SELECT CMINMSGS_DATE_PROCESSED FROM {} WHERE CMINMSGS_ID = ?",
                mb.inbox
            ),
            (head,),
        )
        .await
        .unwrap();
    assert!(
        mark.flatten().is_some(),
        "the skipped row's mailbox mark is written"
    );
    let confirmed: bool =
        sqlx::query_scalar("SELECT backfill_at IS NOT NULL FROM proc_state WHERE msg_id = $1")
            .bind(head)
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert!(confirmed);
}

#[tokio::test]
async fn rows_in_other_states_are_reported_and_left_alone() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    let done = mb.insert(&schd(1, 7101)).await;
    let failed = mb.insert(&unsupported(2)).await;
    let pending = mb.insert(&schd(3, 7102)).await;
    run(&r, "ingest-sweep").await;
    run(&r, "pump-drain").await;
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let ids = [done, failed, pending, 999].map(|i| i.to_string());
    let mut args = vec!["skip"];
    args.extend(ids.iter().map(String::as_str));
    args.extend(["--reason", "drop the backlog"]);

    // Several IDs are a bulk action: without --yes (and no terminal) refused.
    let out = msgx(cfg.path(), &args);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("skip 2 row(s)"),
        "{}",
        text(&out)
    );
    assert_eq!(
        backfill_actions_by_kind(&db).await,
        vec![],
        "nothing recorded"
    );

    args.extend(["--yes", "--json"]);
    let out = msgx(cfg.path(), &args);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("msgx skip: acting on PostgreSQL"),
        "{}",
        text(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let skipped: Vec<i64> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["msg_id"].as_i64().unwrap())
        .collect();
    assert_eq!(skipped, vec![failed, pending]);
    assert_eq!(
        v["left_alone"],
        serde_json::json!([{"msg_id": done, "state": "SUCCEEDED"}])
    );
    assert_eq!(v["not_found"], serde_json::json!([999]));
    assert!(v["target"]["postgres"].is_string(), "{v}");
    assert!(v["action_id"].is_i64());
    assert_eq!(
        states(&db).await,
        vec![
            (done, "SUCCEEDED".into()),
            (failed, "SKIPPED".into()),
            (pending, "SKIPPED".into())
        ]
    );

    // Nothing left that could be skipped: refused, nothing recorded.
    let out = msgx(
        cfg.path(),
        &["skip", &done.to_string(), "--reason", "again"],
    );
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("left alone"));
    assert_eq!(backfill_actions_by_kind(&db).await.len(), 1);
    // A reason is required and may not be blank.
    assert_eq!(code(&msgx(cfg.path(), &["skip", &done.to_string()])), 2);
    let out = msgx(cfg.path(), &["skip", &done.to_string(), "--reason", " "]);
    assert_eq!(code(&out), 2, "{}", text(&out));
}

#[tokio::test]
async fn a_range_skips_the_unfinished_rows_in_it() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    let head = mb.insert(&unsupported(1)).await;
    let mut backlog = Vec::new();
    for i in 0..3 {
        backlog.push(mb.insert(&schd(10 + i, 7200 + i64::from(i))).await);
    }
    run(&r, "ingest-sweep").await;
    run(&r, "pump-drain").await;
    // An archived shadow inside the range is left alone (§9.3).
    sqlx::query(
        "INSERT INTO proc_state (msg_id, state, identity_key) VALUES (100, 'ARCHIVED', 'x')",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    let cfg = db.config_file_with(|c| c.msgx.mailbox.url = mb.url.clone());
    let range = format!("{head}-{}", backlog[1]);

    let out = msgx(
        cfg.path(),
        &["skip", "--range", &range, "--reason", "r", "--dry-run"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("would skip 3 message(s)"),
        "{}",
        text(&out)
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("acting on"),
        "a dry run writes nothing"
    );
    let out = msgx(cfg.path(), &["skip", "--range", &range, "--reason", "r"]);
    assert_eq!(code(&out), 2, "bulk needs --yes: {}", text(&out));
    assert!(
        states(&db).await.iter().all(|(_, s)| s != "SKIPPED"),
        "nothing changed yet"
    );
    assert_eq!(
        code(&msgx(
            cfg.path(),
            &["skip", "--range", "5-3", "--reason", "r"]
        )),
        2
    );

    let wide = format!("{head}-101");
    let out = msgx(
        cfg.path(),
        &[
            "skip",
            "--range",
            &wide,
            "--reason",
            "cutover backlog",
            "--yes",
            "--json",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["skipped"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["left_alone_by_state"], serde_json::json!({"ARCHIVED": 1}));
    assert_eq!(
        v["not_found_in_range"],
        serde_json::json!(101 - head + 1 - 5),
        "{v}"
    );
    let (_, _, target, reason) = backfill_actions_by_kind(&db).await.remove(0);
    assert_eq!(
        target,
        [vec![head], backlog.clone()]
            .concat()
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    assert_eq!(reason.as_deref(), Some("cutover backlog"));
    assert_eq!(run(&r, "pump-drain").await.items, 0, "the queue is empty");
}
