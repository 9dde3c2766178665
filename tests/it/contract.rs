//! The published consumer contract (issue 18 item 5): the committed
//! `schemas/` are exactly what the code generates (`msgx contract export
//! --check`), the AsyncAPI document names them, and every outbox record the
//! pipeline writes for the real and the project's samples matches them
//! (the harness checks every test's outbox on drop, `tests/it/common`; this file
//! proves that check sees msgx's records and can fail).

use crate::common;

use chrono::Duration;
use common::jobs::run;
use common::sis::xml_files;
use common::*;
use std::path::{Path, PathBuf};

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas")
}

#[test]
fn the_committed_schemas_are_what_the_code_generates() {
    let problems = msgx::contract::check(&schemas_dir()).expect("schemas/ readable");
    assert!(
        problems.is_empty(),
        "schemas/ drifted from the code; run `msgx contract export`:\n{}",
        problems.join("\n")
    );
    // Through the binary, as CI and a developer run it; config is not needed.
    let cfg = tempfile::NamedTempFile::new().unwrap();
    let out = msgx(
        cfg.path(),
        &[
            "contract",
            "export",
            "--check",
            "--dir",
            &schemas_dir().display().to_string(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));

    // A changed, a missing and a stray file are each reported, exit 1.
    let dir = tempfile::tempdir().unwrap();
    let out = msgx(
        cfg.path(),
        &[
            "contract",
            "export",
            "--dir",
            &dir.path().display().to_string(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(msgx::contract::check(dir.path()).unwrap().is_empty());
    std::fs::write(dir.path().join("msg-value.schema.json"), "{}\n").unwrap();
    std::fs::remove_file(dir.path().join("schd-key.schema.json")).unwrap();
    std::fs::write(dir.path().join("old-value.schema.json"), "{}\n").unwrap();
    let problems = msgx::contract::check(dir.path()).unwrap();
    assert_eq!(problems.len(), 3, "{problems:?}");
    let out = msgx(
        cfg.path(),
        &[
            "contract",
            "export",
            "--check",
            "--dir",
            &dir.path().display().to_string(),
        ],
    );
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("msg-value.schema.json differs"),
        "{}",
        text(&out)
    );
}

#[test]
fn the_asyncapi_document_names_every_topic_and_schema() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/asyncapi.yaml"))
            .expect("docs/asyncapi.yaml");
    assert!(doc.starts_with("asyncapi: 3."), "AsyncAPI 3");
    for s in msgx::contract::schemas() {
        assert!(
            doc.contains(&format!("../schemas/{}", s.file_name())),
            "docs/asyncapi.yaml does not refer to {}",
            s.file_name()
        );
    }
    for header in ["event-type", "state-version", "event-id", "traceparent"] {
        assert!(doc.contains(header), "header {header} is described");
    }
    let events =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/events.md"))
            .expect("docs/events.md");
    assert!(events.contains("asyncapi.yaml") && events.contains("../schemas/"));
}

/// The project's samples, then the real ones (when ../shared is there),
/// through ingest and the pump until nothing is left: every record msgx
/// appended is in the harness's log and keeps the contract; rows a test
/// inserts by hand are not msgx's and are not in it.
#[tokio::test]
async fn every_outbox_record_of_the_samples_keeps_the_contract() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = xml_files(&root.join("tests/fixtures/sis"));
    let shared = root.join("../shared/fixtures/sis");
    if shared.is_dir() {
        files.extend(xml_files(&shared));
    } else {
        println!("real samples skipped: {} is absent", shared.display());
    }
    for f in &files {
        mb.insert(&String::from_utf8_lossy(&std::fs::read(f).unwrap()))
            .await;
    }
    let (clock, shared_clock) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared_clock, |_| {});
    for _ in 0..60 {
        run(&r, "ingest-sweep").await;
        run(&r, "pump-drain").await;
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM proc_state WHERE state IN ('PENDING', 'FAILED')",
        )
        .fetch_one(&db.pool)
        .await
        .unwrap();
        if open == 0 {
            break;
        }
        clock.advance(Duration::minutes(30));
    }
    sqlx::query(
        "INSERT INTO msg_event (target, partition_key, event_type, state_version, payload, created_at) \
         VALUES ('KAFKA:msg', '1', 'UPSERT', 1, 'not json', now())",
    )
    .execute(&db.pool)
    .await
    .unwrap();

    let logged: Vec<(String, i64)> = sqlx::query_as(
        "SELECT target, count(*) FROM msgx_test.event_log GROUP BY target ORDER BY target",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    let msg_rows: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM msg_event WHERE target = 'KAFKA:msg' AND msg_id IS NOT NULL",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert!(msg_rows > 0, "the samples wrote flights");
    assert_eq!(
        logged.first(),
        Some(&("KAFKA:msg".to_string(), msg_rows)),
        "every KAFKA:msg row msgx appended is logged, the hand-inserted one is not: {logged:?}"
    );
    assert!(
        logged.iter().any(|(t, n)| t == "KAFKA:schd" && *n > 0),
        "{logged:?}"
    );
    let failures = TestDb::contract_failures(db.url.clone())
        .await
        .expect("readable");
    assert_eq!(failures, Vec::<String>::new());
}

/// The drop-time check fails a test whose msgx-appended record breaks the
/// contract (here one forged with the append's marker).
#[tokio::test]
async fn a_record_that_breaks_the_contract_is_reported() {
    let db = TestDb::migrated().await;
    sqlx::query(
        "/* msgx:outbox-append */ INSERT INTO msg_event \
         (target, partition_key, event_type, state_version, payload, created_at) \
         VALUES ('KAFKA:msg', '7', 'UPSERT', 1, '{\"flid\":7}', now()), \
                ('KAFKA:schd', '7', 'UPSERT', 1, NULL, now())",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    let failures = TestDb::contract_failures(db.url.clone())
        .await
        .expect("readable");
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(failures[0].contains("msg-value"), "{failures:?}");
    assert!(failures[1].contains("null value"), "{failures:?}");
    // Forged on purpose: let this test's database go without the check.
    sqlx::query("TRUNCATE msgx_test.event_log")
        .execute(&db.pool)
        .await
        .unwrap();
}
