//! The PostgreSQL schema (issue 2, item 3) against a real PostgreSQL.

use crate::common;

use common::*;

#[tokio::test]
async fn migrations_apply_to_an_empty_database_and_are_idempotent() {
    let db = TestDb::empty().await;
    assert_eq!(
        msgx::store::pg::applied_version(&db.pool).await.unwrap(),
        None
    );
    let first = msgx::store::pg::migrate(&db.pool)
        .await
        .expect("first migrate");
    let embedded: Vec<i64> = msgx::store::pg::MIGRATOR
        .iter()
        .map(|m| m.version)
        .collect();
    assert_eq!(first, embedded);
    assert_eq!(first.last(), Some(&msgx::store::pg::expected_version()));
    let second = msgx::store::pg::migrate(&db.pool)
        .await
        .expect("second migrate");
    assert!(second.is_empty(), "nothing left to apply: {second:?}");
    msgx::store::pg::ensure_schema_current(&db.pool)
        .await
        .expect("schema current");

    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    for t in [
        "proc_state",
        "proc_state_hst",
        "msg_event",
        "req_track",
        "ref_master",
        "flight_schd",
        "flight_gate",
        "flight_counter",
        "flight_carousel",
        "flight_stand",
        "flight_chute",
        "flight_delay",
        "flight_airbridge",
        "flight_chock",
        "flight_service",
        "flight_vip",
        "flight_door",
        "flight_tractor",
        "flight_push",
        "flight_route_point",
        "flight_history",
        "inbox_cursor",
        "inbox_hole",
        "inbox_late_row",
        "schd_snap_log",
        "pipeline_lock",
        "job_run",
        "operator_action",
        "backfill_action",
    ] {
        assert!(
            tables.iter().any(|x| x == t),
            "missing table {t}: {tables:?}"
        );
    }
}

/// Migration 0008: one KAFKA:season row per series key, next to the schd
/// row of a FLID with the same text; no other target; a season's dates and
/// a series' period in order.
#[tokio::test]
async fn one_season_outbox_row_per_key_and_ordered_season_dates() {
    let db = TestDb::migrated().await;
    let insert = "INSERT INTO msg_event (target, partition_key, event_type, state_version, created_at) \
                  VALUES ($1, $2, 'UPSERT', 1, now())";
    for (target, key) in [
        ("KAFKA:season", "W|CA|CA1|D|2026-11-01"),
        ("KAFKA:schd", "15"),
        ("KAFKA:season", "15"),
    ] {
        sqlx::query(insert)
            .bind(target)
            .bind(key)
            .execute(&db.pool)
            .await
            .unwrap();
    }
    let dup = sqlx::query(insert)
        .bind("KAFKA:season")
        .bind("W|CA|CA1|D|2026-11-01")
        .execute(&db.pool)
        .await;
    assert!(
        dup.is_err(),
        "a second KAFKA:season row for one key must be refused"
    );
    let other = sqlx::query(insert)
        .bind("KAFKA:other")
        .bind("1")
        .execute(&db.pool)
        .await;
    assert!(other.is_err(), "unknown targets are refused");
    let reversed = sqlx::query(
        "INSERT INTO season (snam, sdat, edat, revision, msg_id, updated_at) \
         VALUES ('W', '2027-03-27', '2026-10-25', 1, 1, now())",
    )
    .execute(&db.pool)
    .await;
    assert!(reversed.is_err(), "SDAT after EDAT is refused");
}

#[tokio::test]
async fn one_schd_outbox_row_per_flid() {
    let db = TestDb::migrated().await;
    let insert = "INSERT INTO msg_event (target, partition_key, event_type, state_version, created_at) \
                  VALUES ($1, '15', 'UPSERT', $2, now())";
    sqlx::query(insert)
        .bind("KAFKA:schd")
        .bind(1_i64)
        .execute(&db.pool)
        .await
        .unwrap();
    let dup = sqlx::query(insert)
        .bind("KAFKA:schd")
        .bind(2_i64)
        .execute(&db.pool)
        .await;
    assert!(
        dup.is_err(),
        "a second KAFKA:schd row for FLID 15 must be refused"
    );
    // KAFKA:msg rows are appended freely.
    sqlx::query(insert)
        .bind("KAFKA:msg")
        .bind(1_i64)
        .execute(&db.pool)
        .await
        .unwrap();
    sqlx::query(insert)
        .bind("KAFKA:msg")
        .bind(2_i64)
        .execute(&db.pool)
        .await
        .unwrap();
    let ids: Vec<i64> = sqlx::query_scalar("SELECT event_id FROM msg_event ORDER BY event_id")
        .fetch_all(&db.pool)
        .await
        .unwrap();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "one global EVENT_ID sequence: {ids:?}"
    );
}

#[tokio::test]
async fn at_most_one_open_request_per_type_day_sender() {
    let db = TestDb::migrated().await;
    let insert = "INSERT INTO req_track (req_type, operation_day, sender, state, seqn, routing_id, request_xml, created_at) \
                  VALUES ('RQFD', DATE '2026-12-01', 'VIEW', $1, '000001', 'VIEWRQFD', '<MSG/>', now()) RETURNING id";
    let first: i64 = sqlx::query_scalar(insert)
        .bind("SENT")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert!(
        sqlx::query(insert)
            .bind("PENDING")
            .execute(&db.pool)
            .await
            .is_err(),
        "second open request refused"
    );
    sqlx::query("UPDATE req_track SET state = 'EXPIRED', closed_at = now() WHERE id = $1")
        .bind(first)
        .execute(&db.pool)
        .await
        .unwrap();
    sqlx::query(insert)
        .bind("PENDING")
        .execute(&db.pool)
        .await
        .expect("closed requests do not block");
}

#[tokio::test]
async fn request_seqn_cycles_without_zero() {
    let db = TestDb::migrated().await;
    sqlx::query("SELECT setval('request_seqn_seq', 999998)")
        .execute(&db.pool)
        .await
        .unwrap();
    let seq: Vec<i32> =
        sqlx::query_scalar("SELECT nextval('request_seqn_seq')::int FROM generate_series(1, 3)")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(seq, vec![999_999, 1, 2]);
}

#[tokio::test]
async fn archived_shadow_rows_keep_only_identity_and_id() {
    let db = TestDb::migrated().await;
    sqlx::query("INSERT INTO proc_state (msg_id, state, identity_key) VALUES (1, 'ARCHIVED', 'AODB|FLOP|APPT|1')")
        .execute(&db.pool)
        .await
        .expect("a shadow row needs no timestamps");
    let live = sqlx::query("INSERT INTO proc_state (msg_id, state) VALUES (2, 'PENDING')")
        .execute(&db.pool)
        .await;
    assert!(live.is_err(), "a live row needs ENQUEUED_AT and UPDATED_AT");
    let dup = sqlx::query(
        "INSERT INTO proc_state (msg_id, state, identity_key, enqueued_at, updated_at) \
         VALUES (3, 'PENDING', 'AODB|FLOP|APPT|1', now(), now())",
    )
    .execute(&db.pool)
    .await;
    assert!(
        dup.is_err(),
        "IDENTITY_KEY stays unique across archiving (INV-9)"
    );
}

#[tokio::test]
async fn route_kinds_do_not_collide() {
    let db = TestDb::migrated().await;
    sqlx::query(
        "INSERT INTO flight_schd (flid, state, state_version, created_at, updated_at) VALUES (15, 'ACTIVE', 1, now(), now())",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    for kind in ["ROUT", "ERUT"] {
        sqlx::query("INSERT INTO flight_route_point (flid, route_kind, ordinal, apcd) VALUES (15, $1, 1, 'XIY')")
            .bind(kind)
            .execute(&db.pool)
            .await
            .expect("ROUT 1 and ERUT 1 coexist");
    }
}

#[tokio::test]
async fn commands_refuse_an_unmigrated_database() {
    let db = TestDb::empty().await;
    let cfg = db.config_file();
    let out = msgx(cfg.path(), &["status"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("msgx migrate"),
        "{}",
        text(&out)
    );
    let out = msgx(cfg.path(), &["daemon"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not current"),
        "{}",
        text(&out)
    );
}

/// Records a migration this binary does not know, as a newer msgx would.
async fn migrated_by_a_newer_msgx(db: &TestDb) {
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (99999999, 'from the future', true, '\\x00', 0)",
    )
    .execute(&db.pool)
    .await
    .unwrap();
}

#[tokio::test]
async fn the_daemon_refuses_a_newer_schema() {
    let db = TestDb::migrated().await;
    migrated_by_a_newer_msgx(&db).await;
    let cfg = db.config_file();
    let out = msgx(cfg.path(), &["daemon"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("newer msgx"),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn migrate_command_is_idempotent() {
    let db = TestDb::empty().await;
    let cfg = db.config_file();
    let first = msgx(cfg.path(), &["migrate"]);
    assert_eq!(code(&first), 0, "{}", text(&first));
    assert!(String::from_utf8_lossy(&first.stdout).contains("applied"));
    let second = msgx(cfg.path(), &["migrate"]);
    assert_eq!(code(&second), 0, "{}", text(&second));
    assert!(String::from_utf8_lossy(&second.stdout).contains("current"));
}

/// `msgx migrate --check` (issue 35, the package's upgrade step): applies
/// nothing, exits 0 only on a current schema, and names what stands in the
/// way otherwise.
#[tokio::test]
async fn migrate_check_applies_nothing_and_passes_only_a_current_schema() {
    let db = TestDb::empty().await;
    let cfg = db.config_file();
    let json = |out: &std::process::Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
    };
    let expected = msgx::store::pg::expected_version();

    let fresh = msgx(cfg.path(), &["migrate", "--check", "--json"]);
    assert_eq!(code(&fresh), 1, "{}", text(&fresh));
    assert_eq!(json(&fresh)["status"], "unmigrated");
    assert_eq!(
        msgx::store::pg::applied_version(&db.pool).await.unwrap(),
        None,
        "--check applied nothing"
    );

    assert_eq!(code(&msgx(cfg.path(), &["migrate"])), 0);
    let current = msgx(cfg.path(), &["migrate", "--check"]);
    assert_eq!(code(&current), 0, "{}", text(&current));
    assert!(text(&current).contains(&format!("current (v{expected})")));

    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = $1")
        .bind(expected)
        .execute(&db.pool)
        .await
        .unwrap();
    let behind = msgx(cfg.path(), &["migrate", "--check", "--json"]);
    assert_eq!(code(&behind), 1, "{}", text(&behind));
    assert_eq!(json(&behind)["status"], "behind");
    assert_eq!(json(&behind)["pending"], serde_json::json!([expected]));

    migrated_by_a_newer_msgx(&db).await;
    let newer = msgx(cfg.path(), &["migrate", "--check"]);
    assert_eq!(code(&newer), 1, "{}", text(&newer));
    assert!(text(&newer).contains("newer msgx"), "{}", text(&newer));
}

#[tokio::test]
async fn migration_0004_adds_the_close_note_and_the_degraded_match_audit_action() {
    let db = TestDb::migrated().await;
    sqlx::query(
        "INSERT INTO req_track (req_type, sender, state, seqn, routing_id, request_xml, created_at, close_note) \
         VALUES ('RQRD:GLST', 'VIEW', 'EXPIRED', '000001', 'VIEWRQRD', '<MSG/>', now(), 'superseded')",
    )
    .execute(&db.pool)
    .await
    .expect("close_note exists");
    let insert = "INSERT INTO operator_action (at, actor, action, target) VALUES (now(), 'msgx', $1, 'req_track:1')";
    for ok in ["EVENT_RESEND", "EVENT_DISCARD", "REQUEST_MATCH_DEGRADED"] {
        sqlx::query(insert)
            .bind(ok)
            .execute(&db.pool)
            .await
            .unwrap_or_else(|e| panic!("{ok} accepted: {e}"));
    }
    assert!(
        sqlx::query(insert)
            .bind("SOMETHING_ELSE")
            .execute(&db.pool)
            .await
            .is_err(),
        "other actions are still refused"
    );
}

/// Migration 0014 (issue 31 item 4): a row whose backfill is failing at the
/// upgrade starts its streak at its last recorded failure (UPDATED_AT), so a
/// row failing since before R still reaches `TRANSIENT_DEADLINE`; rows never
/// tried, confirmed or abandoned get none.
#[tokio::test]
async fn migration_0014_starts_the_streak_of_rows_failing_at_the_upgrade() {
    let db = TestDb::empty().await;
    for m in msgx::store::pg::MIGRATOR.iter().filter(|m| m.version < 14) {
        sqlx::raw_sql(m.sql.clone())
            .execute(&db.pool)
            .await
            .unwrap_or_else(|e| panic!("migration {}: {e}", m.version));
    }
    sqlx::raw_sql(
        "INSERT INTO proc_state (msg_id, state, enqueued_at, updated_at, backfill_next_at, \
           backfill_attempts, backfill_last_error, backfill_at, backfill_abandoned_at) VALUES \
         (1, 'SKIPPED', '2026-12-01T00:00:00Z', '2026-12-01T01:00:00Z', '2026-12-01T01:00:30Z', \
          2, 'refused', NULL, NULL), \
         (2, 'SKIPPED', '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z', \
          0, NULL, NULL, NULL), \
         (3, 'DEAD', '2026-12-01T00:00:00Z', '2026-12-01T02:00:00Z', NULL, \
          1, 'refused', '2026-12-01T02:00:00Z', NULL), \
         (4, 'SUCCEEDED', '2026-12-01T00:00:00Z', '2026-12-02T01:00:00Z', '2026-12-01T00:00:00Z', \
          1, 'refused', NULL, '2026-12-02T01:00:00Z')",
    )
    .execute(&db.pool)
    .await
    .expect("rows");
    let m14 = msgx::store::pg::MIGRATOR
        .iter()
        .find(|m| m.version == 14)
        .expect("migration 0014");
    sqlx::raw_sql(m14.sql.clone())
        .execute(&db.pool)
        .await
        .expect("migration 0014");
    let since: Vec<(i64, Option<chrono::DateTime<chrono::Utc>>)> =
        sqlx::query_as("SELECT msg_id, backfill_failing_since FROM proc_state ORDER BY msg_id")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    let failing = "2026-12-01T01:00:00Z".parse().expect("instant");
    assert_eq!(
        since,
        vec![(1, Some(failing)), (2, None), (3, None), (4, None)]
    );
}

/// Migration 0028 (issue 38 item 1): PROC_STATE.TRACEPARENT's check accepts
/// exactly what 0011's regular expression accepted, and uses no regular
/// expression with counted repetitions (`{32}`): PostgreSQL's engine took
/// 13–19 µs per row on one, a third of the backend CPU of ingest's INSERT
/// and of every PROC_STATE update; the trigram indexes are partial, so an
/// enqueued row (no text) adds no GIN entry (docs/BENCHMARKS.md "Ingest
/// regression").
#[tokio::test]
async fn the_traceparent_check_accepts_the_w3c_form_alone_without_a_counted_regex() {
    let db = TestDb::migrated().await;
    let def: String = sqlx::query_scalar(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint \
         WHERE conrelid = 'proc_state'::regclass AND conname = 'proc_state_traceparent_form'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("the check exists");
    assert!(!def.contains('{'), "a counted repetition: {def}");
    // And the trigram indexes skip the rows without text (every enqueued row).
    let partial: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT c.relname::text, pg_get_expr(i.indpred, i.indrelid) FROM pg_index i \
         JOIN pg_class c ON c.oid = i.indexrelid \
         WHERE c.relname IN ('proc_state_last_error_trgm_idx', 'proc_state_outcome_reason_trgm_idx') \
         ORDER BY 1",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        partial,
        vec![
            (
                "proc_state_last_error_trgm_idx".into(),
                Some("(last_error IS NOT NULL)".into())
            ),
            (
                "proc_state_outcome_reason_trgm_idx".into(),
                Some("(outcome_reason IS NOT NULL)".into())
            ),
        ]
    );
    let old = "^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$";
    let good = "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01";
    let mut cases: Vec<String> = [
        good,
        "00-0123456789abcdef0123456789abcdef-0123456789abcdef-0",
        "00-0123456789abcdef0123456789abcdef-0123456789abcdef-012",
        "00-0123456789abcdef0123456789abcde--0123456789abcdef-01",
        "00-0123456789abcdef0123456789abcdeF-0123456789abcdef-01",
        "01-0123456789abcdef0123456789abcdef-0123456789abcdef-01",
        "00-0123456789abcdef0123456789abcdef-0123456789abcde-f01",
        "00-0123456789abcdef0123456789abcdef-0123456789abcdef-0é",
        "00-0123456789abcdef0123456789abcdef 0123456789abcdef-01",
        "00_0123456789abcdef0123456789abcdef-0123456789abcdef-01",
        "",
    ]
    .map(String::from)
    .to_vec();
    // Every character of the valid form replaced by each of a few others.
    for i in 0..good.len() {
        for c in ['-', 'g', 'A', '0', ' '] {
            let mut s = good.to_string();
            s.replace_range(i..=i, &c.to_string());
            cases.push(s);
        }
    }
    for (n, tp) in cases.iter().enumerate() {
        let expected: bool = sqlx::query_scalar("SELECT $1 ~ $2")
            .bind(tp)
            .bind(old)
            .fetch_one(&db.pool)
            .await
            .unwrap();
        let inserted = sqlx::query(
            "INSERT INTO proc_state (msg_id, state, enqueued_at, updated_at, traceparent) \
             VALUES ($1, 'PENDING', now(), now(), $2)",
        )
        .bind(n as i64 + 1)
        .bind(tp)
        .execute(&db.pool)
        .await;
        assert_eq!(inserted.is_ok(), expected, "{tp:?}: {inserted:?}");
    }
}
