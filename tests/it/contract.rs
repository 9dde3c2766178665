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

/// Inserts the project's samples, the real ones (when ../shared is there)
/// and `extra` into `mb`, then runs ingest and the pump until nothing is
/// left (the clock jumps past every retry backoff).
async fn drain_samples(db: &TestDb, mb: &TestMailbox, extra: Vec<String>) {
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
    for xml in &extra {
        mb.insert(xml).await;
    }
    let (clock, shared_clock) = manual_clock();
    let (r, _stop) = runner(db, Some(mb), shared_clock, |_| {});
    for _ in 0..200 {
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
}

/// The project's samples, then the real ones (when ../shared is there),
/// through ingest and the pump until nothing is left: every record msgx
/// appended is in the harness's log and keeps the contract; rows a test
/// inserts by hand are not msgx's and are not in it.
#[tokio::test]
async fn every_outbox_record_of_the_samples_keeps_the_contract() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    drain_samples(&db, &mb, Vec::new()).await;
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

/// Issue 36 item 1: over the project's and the real samples and a generated
/// day (`msgx mailbox generate`), every `msg` record's `changes` turn the
/// flight's previous `schd` record into its next one, as a consumer would
/// apply them (`msgx::domain::changes::apply`): replayed from the harness's
/// log of every appended record, replaced `schd` rows included.
#[tokio::test]
async fn the_changes_of_every_msg_record_turn_the_previous_schd_record_into_the_next() {
    use msgx::domain::{FlightState, changes, schd_projection};
    use serde_json::Value;
    use std::collections::HashMap;

    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let day = msgx::commands::generate::Spec {
        messages: 1_500,
        flights: 120,
        seed: 36,
        duplicates: 0.02,
        malformed: 0.0,
        holes: 0,
        first_seqn: 500_000,
        package_flights: 40,
        rich: true,
    };
    let generated = msgx::commands::generate::messages(&day)
        .into_iter()
        .flatten();
    drain_samples(&db, &mb, generated.collect()).await;

    let content = |mut v: Value| -> Value {
        if let Some(o) = v.as_object_mut() {
            // Lifecycle keys, and the milestones derived from content.
            for k in [
                "state_version",
                "last_msg_id",
                "created_at",
                "updated_at",
                "milestones",
            ] {
                o.remove(k);
            }
        }
        v
    };
    let empty = |flid: i64| {
        content(schd_projection(&FlightState::new(flid, chrono::Utc::now()), None).to_json())
    };
    let log: Vec<(String, String, String, Option<Vec<u8>>)> = sqlx::query_as(
        "SELECT target, partition_key, event_type, payload FROM msgx_test.event_log ORDER BY n",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    // What a consumer holds per flight (the last schd record), and what the
    // notifications since then say it became.
    let mut held: HashMap<i64, Value> = HashMap::new();
    let mut expected: HashMap<i64, Value> = HashMap::new();
    let (mut notes, mut compared) = (0usize, 0usize);
    let mut seen: std::collections::BTreeSet<String> = Default::default();
    // Issue 36 item 2: the mailbox IDs that wrote each flight, and the
    // milestones and codes the records showed.
    let mut writers: HashMap<i64, std::collections::BTreeSet<i64>> = HashMap::new();
    let (mut milestones, mut codes) = (0usize, std::collections::BTreeSet::new());
    for (target, key, event_type, payload) in log {
        if !matches!(target.as_str(), "KAFKA:msg" | "KAFKA:schd") {
            continue; // the season topic's records are keyed by series
        }
        let flid: i64 = key.parse().expect("a FLID key");
        let value = || -> Value {
            serde_json::from_slice(payload.as_deref().expect("a value")).expect("JSON")
        };
        match (target.as_str(), event_type.as_str()) {
            ("KAFKA:msg", _) => {
                let note = value();
                let kind = note["event_kind"].as_str().expect("event_kind").to_string();
                let base = match kind.as_str() {
                    "CREATE" => empty(flid),
                    _ => expected
                        .remove(&flid)
                        .or_else(|| held.get(&flid).cloned())
                        .unwrap_or_else(|| panic!("FLID {flid}: {kind} of a flight never seen")),
                };
                let list: Vec<changes::FieldChange> =
                    serde_json::from_value(note["changes"].clone())
                        .unwrap_or_else(|e| panic!("FLID {flid}: changes: {e}"));
                let mut next = base;
                changes::apply(&mut next, &list)
                    .unwrap_or_else(|e| panic!("FLID {flid} {}: {e}", note["msg_kind"]));
                for c in &list {
                    seen.insert(format!("{:?}", c.op));
                }
                seen.insert(kind);
                expected.insert(flid, next);
                writers
                    .entry(flid)
                    .or_default()
                    .insert(note["msg_id"].as_i64().expect("msg_id"));
                notes += 1;
            }
            ("KAFKA:schd", "UPSERT") => {
                let record = value();
                milestones += check_milestones(&record, writers.get(&flid), &mut codes);
                let state = content(record);
                if let Some(want) = expected.remove(&flid) {
                    assert_eq!(
                        want, state,
                        "FLID {flid}: the changes applied differ from the record"
                    );
                    compared += 1;
                }
                held.insert(flid, state);
            }
            ("KAFKA:schd", _) => {
                held.remove(&flid);
                expected.remove(&flid);
            }
            _ => {}
        }
    }
    println!("{notes} notifications, {compared} compared with the next schd record; seen {seen:?}");
    assert!(
        notes > 1_000 && compared > 1_000,
        "{notes} notifications, {compared} compared"
    );
    for must in [
        "CREATE", "UPDATE", "DELETE", "Set", "Added", "Changed", "Removed",
    ] {
        assert!(seen.contains(must), "no {must} among {seen:?}");
    }
    println!("{milestones} milestones checked, codes {codes:?}");
    // The generated day sends no ACTT, EGSR, BOTM or chocks-on: 11 of the
    // 16 derived codes (every one is covered in src/domain/tests/milestones.rs).
    for code in [
        "SIBT", "ELDT", "SOBT", "EOBT", "TOBT", "CTOT", "AOBT", "ARDT", "ACGT",
    ] {
        assert!(codes.contains(code), "no {code} among {codes:?}");
    }
}

/// Checks every milestone of one `schd` record (issue 36 item 2): its time
/// is the value of the field it names in the same record, and it was set by
/// a message that wrote this flight. Returns how many it checked and adds
/// their codes to `codes`.
fn check_milestones(
    record: &serde_json::Value,
    writers: Option<&std::collections::BTreeSet<i64>>,
    codes: &mut std::collections::BTreeSet<String>,
) -> usize {
    let flid = &record["flid"];
    let Some(all) = record["milestones"].as_object() else {
        panic!("FLID {flid}: no milestones object");
    };
    for (code, m) in all {
        let source = m["source"].as_str().expect("source").to_ascii_lowercase();
        let value = match (source.split_once('.'), m["ordinal"].as_i64()) {
            (Some((list, field)), Some(n)) => &record[list][usize::try_from(n - 1).unwrap()][field],
            (None, None) => &record[source.as_str()],
            _ => panic!("FLID {flid} {code}: source {source} and ordinal disagree"),
        };
        let at = |v: &serde_json::Value| {
            chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default()).ok()
        };
        assert!(
            at(value).is_some() && at(value) == at(&m["time"]),
            "FLID {flid} {code}: {m} but {source} is {value}"
        );
        let id = m["msg_id"]
            .as_i64()
            .expect("a msg_id: every flight is new here");
        assert!(
            writers.is_some_and(|w| w.contains(&id)),
            "FLID {flid} {code}: set by {id}, which did not write it ({writers:?})"
        );
        codes.insert(code.clone());
    }
    all.len()
}

/// The compatibility rule of docs/events.md between release 0.1's schema
/// `name` (`tests/fixtures/contract-0.1/`) and the current one
/// (`schemas/`): `record` without the keys `added` since (a 0.1 record)
/// validates against both, `record` itself against the current one only
/// (0.1's schemas are closed: consumers take the new one), every 0.1 key
/// keeps its definition and nothing is newly required.
fn assert_compatible_with_0_1(name: &str, record: &serde_json::Value, added: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = format!("{name}.schema.json");
    let [(old, old_v), (new, new_v)] = [
        root.join("tests/fixtures/contract-0.1").join(&file),
        schemas_dir().join(&file),
    ]
    .map(|path| {
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut schemas = boon::Schemas::new();
        let i = crate::common::contract::compile(path.to_str().unwrap(), &mut schemas)
            .expect("a schema");
        (s, move |doc: &serde_json::Value| {
            schemas.validate(doc, i).is_ok()
        })
    });
    let mut as_01 = record.clone();
    for k in added {
        assert!(record.get(k).is_some(), "{name}: the record has {k}");
        as_01.as_object_mut().unwrap().remove(*k);
    }
    assert!(old_v(&as_01), "{name}: the 0.1 schema takes a 0.1 record");
    assert!(
        new_v(&as_01),
        "{name}: the current schema takes a 0.1 record"
    );
    assert!(new_v(record), "{name}: {record}");
    assert!(!old_v(record), "{name}: 0.1's schema is closed");
    for (key, def) in old["properties"].as_object().unwrap() {
        assert_eq!(
            Some(def),
            new["properties"].get(key),
            "{name}: {key} changed"
        );
    }
    assert_eq!(
        old["required"], new["required"],
        "{name}: nothing newly required"
    );
}

/// Issue 36 items 2 and 5 for the `schd` value's `milestones`: a 0.1
/// record (without it) validates against the current schema, a current one
/// with milestones does too, every 0.1 key keeps its definition, and the
/// closed 0.1 schema refuses the new key.
#[test]
fn a_schd_record_of_the_previous_release_still_validates() {
    use msgx::codec::ScalarTag;
    use msgx::domain::{FlightState, FlightValue, milestones, schd_projection};
    let mut f = FlightState::new(15, chrono::Utc::now());
    f.state_version = 1;
    f.last_msg_id = 4711;
    let sodt = chrono::DateTime::parse_from_rfc3339("2021-01-23T05:35:00+08:00").unwrap();
    f.set_scalar(ScalarTag::MVIN, Some(FlightValue::Text("D".into())));
    f.set_scalar(ScalarTag::SODT, Some(FlightValue::Time(sodt)));
    f.set_scalar(ScalarTag::CTOT, Some(FlightValue::Time(sodt)));
    milestones::stamp(None, &mut f, 4711);
    let record = schd_projection(&f, Some(&[])).to_json();
    assert_eq!(record["milestones"]["CTOT"]["msg_id"], 4711, "{record}");
    assert_compatible_with_0_1(
        "schd-value",
        &record,
        &msgx::domain::events::SCHD_FIELDS_ADDED_AFTER_0_1,
    );
}

/// Issue 36 item 5 for the `msg` record's new keys (docs/events.md
/// "Compatibility"): a record as 0.1 wrote it still validates against the
/// current schema, every key of the 0.1 schema keeps its definition, and the
/// 0.1 schema (`additionalProperties: false`) refuses a current record: a
/// consumer validating with it takes the new schema.
#[test]
fn a_msg_record_of_the_previous_release_still_validates() {
    use msgx::domain::events::{Provenance, WriteFacts, events_for};
    use msgx::domain::{FlightState, FlightValue};
    let mut f = FlightState::new(15, chrono::Utc::now());
    f.state_version = 1;
    f.last_msg_id = 4711;
    f.set_scalar(
        msgx::codec::ScalarTag::FLNO,
        Some(FlightValue::Text("YG15".into())),
    );
    let facts = WriteFacts::of_write(
        None,
        &f,
        None,
        None,
        vec!["FLNO".into()],
        Provenance::internal("SCHD-DNLD"),
    );
    let [msg, _] = events_for(&f, None, facts);
    let record: serde_json::Value = serde_json::from_slice(&msg.to_bytes().unwrap()).unwrap();
    assert_compatible_with_0_1(
        "msg-value",
        &record,
        &msgx::domain::events::FIELDS_ADDED_AFTER_0_1,
    );
}

/// Issue 36 item 4: `msgx events republish --day D` re-sends the day's
/// ACTIVE flights as REQUEST records (a `msg` record, then the `schd` row
/// PENDING again at the same version), audited; a bulk without `--yes`
/// and a selection over `--max` change nothing.
#[tokio::test]
async fn republish_re_sends_a_days_flights_as_request_records() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    drain_samples(&db, &mb, Vec::new()).await;
    sqlx::query("UPDATE msg_event SET status = 'SENT', sent_at = now()")
        .execute(&db.pool)
        .await
        .unwrap();
    let (day, flights): (chrono::NaiveDate, i64) = sqlx::query_as(
        "SELECT operation_day, count(*) FROM flight_schd WHERE state = 'ACTIVE' \
         AND operation_day IS NOT NULL GROUP BY operation_day ORDER BY count(*) DESC LIMIT 1",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert!(flights > 1, "a day with several flights");
    let day_arg = day.to_string();
    let cfg = db.config_file();
    let base = [
        "events",
        "republish",
        "--day",
        day_arg.as_str(),
        "--reason",
        "bootstrap",
    ];
    let pending = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM msg_event WHERE status = 'PENDING'")
            .fetch_one(&db.pool)
            .await
            .unwrap()
    };

    let unconfirmed = msgx(cfg.path(), &base);
    assert_eq!(code(&unconfirmed), 2, "{}", text(&unconfirmed));
    let over = msgx(cfg.path(), &[&base[..], &["--yes", "--max", "1"]].concat());
    assert_eq!(code(&over), 1, "{}", text(&over));
    assert!(
        text(&over).contains("more than the bound"),
        "{}",
        text(&over)
    );
    assert_eq!(pending().await, 0, "refused requests change nothing");

    let done = msgx(cfg.path(), &[&base[..], &["--yes", "--json"]].concat());
    assert_eq!(code(&done), 0, "{}", text(&done));
    let requests: Vec<(i64, i64, serde_json::Value)> = sqlx::query_as(
        "SELECT event_id, partition_key::bigint, convert_from(payload, 'UTF8')::jsonb \
         FROM msg_event WHERE target = 'KAFKA:msg' AND status = 'PENDING' ORDER BY event_id",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(requests.len() as i64, flights);
    for (event_id, flid, note) in &requests {
        assert_eq!(note["event_kind"], "REQUEST", "{note}");
        assert_eq!(note["msg_kind"], "REQUEST");
        assert_eq!(note["changes"], serde_json::json!([]));
        let (schd_id, version, status): (i64, i64, String) = sqlx::query_as(
            "SELECT event_id, state_version, status FROM msg_event \
             WHERE target = 'KAFKA:schd' AND partition_key = $1::text",
        )
        .bind(flid)
        .fetch_one(&db.pool)
        .await
        .unwrap();
        assert_eq!(status, "PENDING", "FLID {flid}'s schd row is re-sent");
        assert!(schd_id > *event_id, "FLID {flid}: notification first");
        assert_eq!(note["state_version"], version, "the same version");
    }
    let audit: (String, Option<String>, serde_json::Value) = sqlx::query_as(
        "SELECT target, reason, detail FROM operator_action WHERE action = 'EVENT_REPUBLISH'",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(audit.0, format!("flights:day={day}"));
    assert_eq!(audit.1.as_deref(), Some("bootstrap"));
    assert_eq!(audit.2["flights"], flights);
}
