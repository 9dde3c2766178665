//! The seasonal schedule SCHS (issue 18 item 2; docs/season.md) against a
//! real MariaDB mailbox, a real PostgreSQL and librdkafka's mock cluster:
//! DNLD and RESP through ingest and pump, the replacement and the
//! `msgx.season.keep` limit with their tombstones on the `season` topic, the
//! malformed real sample's DEAD(PROTOCOL), and `msgx season list|show`.
//! Before this change every SCHS ended FAILED(UNSUPPORTED) and nothing was
//! stored: each test here fails on that code.

use crate::common;

use common::jobs::{drain, run};
use common::queries::outcomes_in_order;
use common::sis::{Series, schs};
use common::*;
use msgx::commands::tail::TailRecord;
use msgx::scheduler::runner::JobRunner;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SEASON: &str = "season";

/// (ROUTE_KIND, APCD, time, day-change factor) of a stored route point.
type RoutePoint = (String, Option<String>, Option<String>, Option<String>);

/// [`drain`], then the season flush.
async fn drain_flush(r: &JobRunner) {
    drain(r).await;
    run(r, "season-flush").await;
}

/// (SNAM, SDAT, series count) of the stored seasons, most recent first.
async fn seasons(db: &TestDb) -> Vec<(String, String, i64)> {
    sqlx::query_as(
        "SELECT s.snam, s.sdat::text, (SELECT count(*) FROM season_series x WHERE x.season_id = s.season_id) \
         FROM season s ORDER BY s.sdat DESC",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap()
}

/// The topic as a compacting consumer sees it: the last record per key
/// (`None` = tombstone), and every record's key in delivery order.
fn latest(records: &[TailRecord]) -> BTreeMap<String, Option<serde_json::Value>> {
    let mut sorted: Vec<&TailRecord> = records.iter().collect();
    sorted.sort_by_key(|r| (r.partition, r.offset));
    sorted
        .into_iter()
        .map(|r| {
            let v = r
                .value
                .as_deref()
                .map(|v| serde_json::from_str(v).expect("JSON value"));
            (r.key.clone().expect("keyed"), v)
        })
        .collect()
}

fn with_kafka(
    cluster: &rdkafka::mocking::MockCluster<'static, rdkafka::producer::DefaultProducerContext>,
) -> impl FnOnce(&mut msgx::config::Config) {
    let bootstrap = cluster.bootstrap_servers();
    move |c| fast_kafka(c, &bootstrap)
}

#[tokio::test]
async fn dnld_and_resp_are_stored_through_the_pump_and_published_one_record_per_series() {
    let (db, mb, kafka) = (
        TestDb::migrated().await,
        TestMailbox::new().await,
        mock_kafka(1),
    );
    let winter = [
        Series("LH724", "01NOV26", "27MAR27"),
        Series("CA002", "25OCT26", "20MAR27"),
    ];
    mb.insert(&schs(1, "DNLD", "Winter", "25OCT26", "27MAR27", &winter))
        .await;
    // RESP without any request: SCHS cannot be requested, so it is applied.
    mb.insert(&schs(
        2,
        "RESP",
        "Summer",
        "28MAR27",
        "30OCT27",
        &[Series("MU501", "28MAR27", "30OCT27")],
    ))
    .await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, with_kafka(&kafka));
    drain_flush(&r).await;

    let got = outcomes_in_order(&db).await;
    assert_eq!(got.len(), 2);
    for (state, class, note) in &got {
        assert_eq!(
            (state.as_str(), class.as_deref()),
            ("SUCCEEDED", None),
            "{note:?}"
        );
    }
    assert!(
        got[0]
            .2
            .as_deref()
            .unwrap_or("")
            .starts_with("season Winter 2026-10-25..2027-03-27: 2 series stored (revision 1)"),
        "{got:?}"
    );
    assert_eq!(
        seasons(&db).await,
        [
            ("Summer".into(), "2027-03-28".into(), 1),
            ("Winter".into(), "2026-10-25".into(), 2)
        ]
    );
    let points: Vec<RoutePoint> = sqlx::query_as(
        "SELECT p.route_kind, p.apcd, COALESCE(p.scat, p.scdt), COALESCE(p.sadc, p.sddc) FROM season_route_point p \
         JOIN season s USING (season_id) WHERE s.snam = 'Winter' AND p.series = 1 \
         ORDER BY p.route_kind DESC, p.ordinal",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        points,
        [
            ("ROUT".into(), Some("HKG".into()), Some("1125".into()), None),
            (
                "ERUT".into(),
                Some("CTU".into()),
                Some("2026-11-01T10:23:00+08:00".into()),
                Some("0".into())
            ),
            (
                "ERUT".into(),
                Some("HKG".into()),
                Some("2026-11-01T11:25:00+08:00".into()),
                Some("+1".into())
            ),
        ]
    );

    let records = consume(&kafka, SEASON).await;
    assert_eq!(records.len(), 3, "{records:?}");
    let topic = latest(&records);
    let keys: Vec<&str> = topic.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "Summer|MU|MU501|D|2027-03-28",
            "Winter|CA|CA002|D|2026-10-25",
            "Winter|LH|LH724|D|2026-11-01"
        ]
    );
    let lh = topic["Winter|LH|LH724|D|2026-11-01"]
        .as_ref()
        .expect("a value");
    assert_eq!(lh["snam"], "Winter");
    assert_eq!(lh["sdat"], "2026-10-25");
    assert_eq!(lh["stdt"], "2026-11-01");
    assert_eq!(lh["eddt"], "2027-03-27");
    assert_eq!(lh["dyop"], "1200560");
    assert_eq!(lh["days"], serde_json::json!([1, 2, 5, 6]));
    assert_eq!(lh["scht"], "1023");
    assert_eq!(lh["maxp"], 320);
    assert_eq!(lh["revision"], 1);
    assert_eq!(lh["erut"][1]["sadc"], "+1");
    assert_eq!(lh["rout"][0]["scat"], "1125");
    let r = records
        .iter()
        .find(|r| r.key.as_deref() == Some("Winter|LH|LH724|D|2026-11-01"))
        .unwrap();
    assert_eq!(r.headers["event-type"], "UPSERT");
    assert_eq!(r.header_i64("state-version"), Some(1));
    let unsent: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM msg_event WHERE target = 'KAFKA:season' AND status <> 'SENT'",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(unsent, 0);
}

#[tokio::test]
async fn a_replacement_and_the_keep_limit_tombstone_exactly_the_series_that_left() {
    let (db, mb, kafka) = (
        TestDb::migrated().await,
        TestMailbox::new().await,
        mock_kafka(1),
    );
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, with_kafka(&kafka));
    let (a, b, c, d) = (
        Series("CA001", "01NOV26", "27MAR27"),
        Series("CA002", "01NOV26", "27MAR27"),
        Series("CA003", "01NOV26", "27MAR27"),
        Series("CA004", "01NOV26", "27MAR27"),
    );
    let w26 = |seqn, s: &[Series]| schs(seqn, "DNLD", "Winter", "25OCT26", "27MAR27", s);
    mb.insert(&w26(1, &[a, b, Series("CA003", "01NOV26", "27MAR27")]))
        .await;
    drain_flush(&r).await;
    // The same season again: B is gone, D is new.
    mb.insert(&w26(2, &[Series("CA001", "01NOV26", "27MAR27"), c, d]))
        .await;
    drain_flush(&r).await;
    let topic = latest(&consume(&kafka, SEASON).await);
    assert_eq!(topic["Winter|CA|CA002|D|2026-11-01"], None, "B tombstoned");
    assert_eq!(
        topic["Winter|CA|CA001|D|2026-11-01"].as_ref().unwrap()["revision"],
        2
    );
    assert_eq!(
        seasons(&db).await,
        [("Winter".into(), "2026-10-25".into(), 3)]
    );

    // Two newer seasons: keep = 2 pushes Winter 2026 out, with its series.
    mb.insert(&schs(
        3,
        "DNLD",
        "Summer",
        "28MAR27",
        "30OCT27",
        &[Series("MU501", "28MAR27", "30OCT27")],
    ))
    .await;
    mb.insert(&schs(
        4,
        "DNLD",
        "Winter",
        "31OCT27",
        "25MAR28",
        &[Series("CA001", "01NOV27", "25MAR28")],
    ))
    .await;
    // A season older than both kept ones arrives late: not stored.
    mb.insert(&schs(
        5,
        "RESP",
        "Winter",
        "26OCT25",
        "28MAR26",
        &[Series("CA009", "01NOV25", "28MAR26")],
    ))
    .await;
    drain_flush(&r).await;
    assert_eq!(
        seasons(&db).await,
        [
            ("Winter".into(), "2027-10-31".into(), 1),
            ("Summer".into(), "2027-03-28".into(), 1)
        ]
    );
    let got = outcomes_in_order(&db).await;
    assert!(got.iter().all(|(s, _, _)| s == "SUCCEEDED"), "{got:?}");
    let note = |i: usize| got[i].2.clone().unwrap_or_default();
    assert!(
        note(1).contains("replaced the stored copy; 1 series tombstoned"),
        "{}",
        note(1)
    );
    assert!(
        note(3).contains("removed (keep 2): Winter 2026-10-25..2027-03-27; 3 series tombstoned"),
        "{}",
        note(3)
    );
    assert!(
        note(4).contains("older than the 2 most recent seasons"),
        "{}",
        note(4)
    );

    let records = consume(&kafka, SEASON).await;
    let topic = latest(&records);
    let alive: Vec<&str> = topic
        .iter()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(
        alive,
        [
            "Summer|MU|MU501|D|2027-03-28",
            "Winter|CA|CA001|D|2027-11-01"
        ]
    );
    let dead: Vec<&str> = topic
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(
        dead,
        [
            "Winter|CA|CA001|D|2026-11-01",
            "Winter|CA|CA002|D|2026-11-01",
            "Winter|CA|CA003|D|2026-11-01",
            "Winter|CA|CA004|D|2026-11-01"
        ]
    );
    let tombstone = records
        .iter()
        .rfind(|r| r.key.as_deref() == Some("Winter|CA|CA004|D|2026-11-01"))
        .unwrap();
    assert_eq!(tombstone.headers["event-type"], "TOMBSTONE");
    assert!(tombstone.value.is_none());
    // Nothing of the late season reached the outbox.
    let late: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM msg_event WHERE target = 'KAFKA:season' AND partition_key LIKE '%CA009%'",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(late, 0);
}

#[tokio::test]
async fn stdt_after_eddt_is_dead_protocol_and_an_unknown_subtype_stays_unsupported() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    // As the real sample SCHS-01: a series ending before it starts.
    mb.insert(&schs(
        1,
        "DNLD",
        "Winter",
        "10SEP20",
        "10JUN21",
        &[
            Series("LH724", "14NOV21", "14MAR21"),
            Series("CA002", "11OCT19", "10MAY21"),
        ],
    ))
    .await;
    mb.insert(&schs(2, "ADD", "Winter", "10SEP20", "10JUN21", &[]))
        .await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    run(&r, "ingest-sweep").await;
    run(&r, "pump-drain").await;
    let got = outcomes_in_order(&db).await;
    assert_eq!(
        got[0],
        (
            "DEAD".into(),
            Some("PROTOCOL".into()),
            Some(
                "SCHS FLTR #1 (LH LH724 D): STDT 2021-11-14 is after EDDT 2021-03-14; a series \
                 cannot end before it starts"
                    .into()
            )
        )
    );
    assert_eq!(got[1].0, "FAILED");
    assert_eq!(got[1].1.as_deref(), Some("UNSUPPORTED"));
    assert!(
        got[1]
            .2
            .as_deref()
            .unwrap_or("")
            .contains("unknown SCHS subtype ADD"),
        "{got:?}"
    );
    assert!(seasons(&db).await.is_empty());
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM msg_event")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(events, 0);
}

#[tokio::test]
async fn season_list_and_show_print_the_stored_seasons() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.insert(&schs(
        1,
        "DNLD",
        "Winter",
        "25OCT26",
        "27MAR27",
        &[
            Series("LH724", "01NOV26", "27MAR27"),
            Series("CA002", "25OCT26", "20MAR27"),
        ],
    ))
    .await;
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    run(&r, "ingest-sweep").await;
    run(&r, "pump-drain").await;
    let cfg = db.config_file();

    let out = msgx(cfg.path(), &["season", "list", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let s = &list["seasons"][0];
    assert_eq!(
        (
            &s["snam"],
            &s["sdat"],
            &s["edat"],
            &s["apcd"],
            &s["series"],
            &s["revision"]
        ),
        (
            &"Winter".into(),
            &"2026-10-25".into(),
            &"2027-03-27".into(),
            &"CTU".into(),
            &2.into(),
            &1.into()
        )
    );
    assert_eq!(list["seasons"].as_array().map(Vec::len), Some(1));

    let out = msgx(cfg.path(), &["season", "show", "Winter", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let show: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let series = &show["seasons"][0]["series"];
    assert_eq!(series[0]["flno"], "LH724");
    assert_eq!(series[1]["flno"], "CA002");
    assert_eq!(series[0]["erut"][0]["scdt"], "2026-11-01T10:23:00+08:00");
    assert_eq!(series[0]["rout"][0]["scdt"], "1330");

    let out = msgx(cfg.path(), &["season", "show", "Winter"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.starts_with("season Winter 2026-10-25..2027-03-27 at CTU: 2 series, revision 1"),
        "{t}"
    );
    assert!(
        t.contains("LH724    D    2026-11-01 2027-03-27 1200560 1023"),
        "{t}"
    );
    let out = msgx(cfg.path(), &["season", "list"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Winter"),
        "{}",
        text(&out)
    );

    let out = msgx(
        cfg.path(),
        &["season", "show", "Winter", "--sdat", "2027-10-31"],
    );
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        text(&out).contains("no stored season Winter starting 2027-10-31"),
        "{}",
        text(&out)
    );
}

/// The real samples: `MSGX_TEST_SIS_DIR`, else ../shared/fixtures/sis.
fn samples_dir() -> PathBuf {
    std::env::var_os("MSGX_TEST_SIS_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/sis"),
        PathBuf::from,
    )
}

/// Every real SCHS sample reaches its terminal state: SCHS-01 (DNLD, whose
/// LH724 has STDT 14NOV21 after EDDT 14MAR21) DEAD(PROTOCOL) with that
/// reason, every other SUCCEEDED with its two series stored.
#[tokio::test]
async fn every_real_schs_sample_reaches_its_expected_terminal_state() {
    let dir = samples_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains("-SCHS-") && n.ends_with(".xml"))
    });
    files.sort();
    if files.is_empty() {
        eprintln!(
            "skipped: no SCHS sample in {} (kept for acceptance testing)",
            dir.display()
        );
        return;
    }
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    for f in &files {
        mb.insert(&std::fs::read_to_string(f).unwrap()).await;
    }
    let (_clock, shared) = manual_clock();
    let (r, _stop) = runner(&db, Some(&mb), shared, |_| {});
    run(&r, "ingest-sweep").await;
    run(&r, "pump-drain").await;
    let got = outcomes_in_order(&db).await;
    assert_eq!(got.len(), files.len());
    for ((state, class, reason), f) in got.iter().zip(&files) {
        let name = f.file_name().unwrap().to_string_lossy();
        if name.starts_with("SCHS-01-") {
            assert_eq!(
                (state.as_str(), class.as_deref()),
                ("DEAD", Some("PROTOCOL")),
                "{name}: {reason:?}"
            );
            assert!(
                reason
                    .as_deref()
                    .unwrap_or("")
                    .contains("(LH LH724 D): STDT 2021-11-14 is after EDDT 2021-03-14"),
                "{name}: {reason:?}"
            );
        } else {
            assert_eq!(
                (state.as_str(), class.as_deref()),
                ("SUCCEEDED", None),
                "{name}: {reason:?}"
            );
        }
    }
    if files.len() > 1 {
        assert_eq!(
            seasons(&db).await,
            [("Winter".into(), "2020-09-10".into(), 2)]
        );
    }
}
