//! FlightStore against a real PostgreSQL (design §11.1, §11.3, INV-14): one
//! fresh migrated database per test.

use crate::common;

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset, NaiveDate, TimeZone, Utc};
use common::TestDb;
use common::queries::flight_rows;
use msgx::codec::{ScalarKind, ScalarTag};
use msgx::domain::flight_state::{
    AirbridgeItem, CarouselItem, ChockItem, ChuteItem, CounterItem, DelayItem, DiversionInfo,
    DoorItem, GateItem, LandingAbortInfo, PushItem, ReturnInfo, RouteItem, ServiceItem, StandItem,
    TractorItem, VipItem, VipServiceItem,
};
use msgx::domain::milestones::MilestoneCode;
use msgx::domain::{DomainConfig, FlightState, FlightStatus, FlightValue, schd_projection};
use msgx::store::pg::flight::{FlightStore, FlightStoreError, StoredVersion};
use msgx::store::pg::proc_state;

/// Every detail table with its route kind filter, for row counts and xmin checks.
const DETAILS: &[(&str, &str)] = &[
    ("flight_route_point", "route_kind = 'ROUT'"),
    ("flight_route_point", "route_kind = 'ERUT'"),
    ("flight_stand", "true"),
    ("flight_gate", "true"),
    ("flight_counter", "true"),
    ("flight_carousel", "true"),
    ("flight_chute", "true"),
    ("flight_chock", "true"),
    ("flight_airbridge", "true"),
    ("flight_delay", "true"),
    ("flight_service", "true"),
    ("flight_vip", "true"),
    ("flight_door", "true"),
    ("flight_tractor", "true"),
    ("flight_push", "true"),
];

fn local_at(cfg: &DomainConfig, d: u32, h: u32, m: u32) -> Option<DateTime<FixedOffset>> {
    let naive = NaiveDate::from_ymd_opt(2026, 7, d)?.and_hms_opt(h, m, 0)?;
    Some(cfg.local_time(naive))
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// A flight with every scalar kind, FDIV/FRET/FLAB and every list set.
fn full_flight(cfg: &DomainConfig, flid: i64) -> FlightState {
    let now = Utc
        .with_ymd_and_hms(2026, 7, 1, 2, 3, 4)
        .single()
        .expect("valid instant")
        + chrono::Duration::microseconds(123_456);
    let mut f = FlightState::new(flid, now);
    f.state_version = 3;
    f.operation_day = NaiveDate::from_ymd_opt(2026, 7, 1);
    f.last_msg_id = 4711;
    f.updated_at = now + chrono::Duration::seconds(90);
    for (i, tag) in ScalarTag::ALL.iter().enumerate() {
        let i = i as u32;
        let v = match tag.kind() {
            ScalarKind::Text => FlightValue::Text(format!("{}-x", tag.name())),
            ScalarKind::Int => FlightValue::Int(1000 + i64::from(i)),
            ScalarKind::Decimal => FlightValue::Decimal("12.5".into()),
            ScalarKind::Time => FlightValue::Time(local_at(cfg, 1, i % 24, i).expect("time")),
            ScalarKind::Date => {
                FlightValue::Date(NaiveDate::from_ymd_opt(2026, 7, 1 + i % 28).expect("date"))
            }
            ScalarKind::Hhmm => FlightValue::Hhmm("0535".into()),
        };
        f.set_scalar(*tag, Some(v));
    }
    f.fdiv = Some(DiversionInfo {
        ddes: "PEK".into(),
        ddir: "TO".into(),
        reason: s("WX"),
    });
    f.fret = Some(ReturnInfo {
        reid: "A".into(),
        reason: s("TECH"),
    });
    f.flab = Some(LandingAbortInfo {
        ares: "G".into(),
        reason: None,
    });
    let t = |h| local_at(cfg, 2, h, 15);
    let route = |ordinal, apcd: &str| RouteItem {
        ordinal,
        source_seq: Some(i64::from(ordinal)),
        apcd: s(apcd),
        scat: t(1),
        scdt: t(2),
        sadc: s("0"),
        sddc: s("1"),
    };
    f.rout = vec![route(1, "PEK")];
    f.erut = vec![route(1, "CTU"), route(2, "PEK")];
    f.psdt = vec![StandItem {
        ordinal: 1,
        source_seq: Some(1),
        psst: s("101"),
        stst: t(3),
        stet: t(4),
    }];
    f.gtdt = vec![
        GateItem {
            ordinal: 1,
            source_seq: Some(1),
            gate: s("G1"),
            pgot: t(5),
            pgct: t(6),
            gotm: t(7),
            gctm: t(8),
            gtyp: s("B"),
        },
        // Same gate twice: never deduplicated (§11.3).
        GateItem {
            ordinal: 2,
            source_seq: Some(1),
            gate: s("G1"),
            pgot: None,
            pgct: None,
            gotm: None,
            gctm: None,
            gtyp: None,
        },
    ];
    f.ckdt = vec![CounterItem {
        ordinal: 1,
        source_seq: None,
        chkc: s("C1"),
        ccls: s("Y"),
        pcot: t(5),
        pcct: t(6),
        cotm: t(7),
        cctm: t(8),
        ctyp: s("N"),
    }];
    f.cldt = vec![CarouselItem {
        ordinal: 1,
        source_seq: Some(4),
        belt: s("B2"),
        bcls: s("J"),
        pcot: t(9),
        pcct: t(10),
        fbag: t(11),
        lbag: t(12),
        btyp: s("D"),
    }];
    f.chdt = vec![ChuteItem {
        ordinal: 1,
        source_seq: Some(5),
        chut: s("H1"),
        ccls: s("F"),
        pcbt: t(13),
        pcet: t(14),
        cbtm: t(15),
        cetm: t(16),
        ctyp: s("M"),
    }];
    f.chot = vec![ChockItem {
        ordinal: 1,
        source_seq: Some(6),
        chtm: t(17),
        chid: s("ON"),
        chst: s("101"),
    }];
    f.abtm = vec![AirbridgeItem {
        ordinal: 1,
        source_seq: Some(7),
        abdg: s("A1"),
        abop: s("ATT"),
        aotm: t(18),
    }];
    f.dely = vec![DelayItem {
        ordinal: 1,
        source_seq: None,
        code: s("93"),
        strt: t(19),
        dura_minutes: Some(25),
        comment: s("late inbound"),
    }];
    f.srvt = vec![ServiceItem {
        ordinal: 1,
        source_seq: None,
        srtc: s("CAT"),
        srqt: s("2"),
        srst: t(20),
        sret: t(21),
        srpr: s("P"),
        sanr: s("N1"),
        sarr: s("R1"),
    }];
    f.vipf = vec![VipItem {
        ordinal: 1,
        source_seq: None,
        vpcd: s("VIP1"),
        vfes: Some(2),
        vipt: vec![
            VipServiceItem {
                ordinal: 1,
                source_seq: None,
                vscd: s("LNG"),
                vtqy: s("1"),
                vtst: t(22),
                vtet: t(23),
            },
            VipServiceItem {
                ordinal: 2,
                source_seq: None,
                vscd: s("CAR"),
                vtqy: None,
                vtst: None,
                vtet: None,
            },
        ],
    }];
    f.port = vec![DoorItem {
        ordinal: 1,
        source_seq: None,
        potm: t(1),
        poid: s("O"),
    }];
    f.tipt = vec![TractorItem {
        ordinal: 1,
        source_seq: None,
        trtm: t(2),
        trst: s("101"),
    }];
    f.psht = vec![PushItem {
        ordinal: 1,
        source_seq: Some(9),
        pstm: t(3),
        psid: s("P"),
        pust: s("101"),
    }];
    // Which messages set its milestones (issue 36 item 2).
    f.milestone_msgs = [(MilestoneCode::Sobt, 4700), (MilestoneCode::Aobt, 4711)].into();
    f
}

/// Writes in its own committed transaction.
async fn write_flight(
    db: &TestDb,
    store: &FlightStore,
    before: Option<&FlightState>,
    after: &FlightState,
) {
    let mut tx = db.pool.begin().await.expect("begin");
    store.write(&mut tx, before, after).await.expect("write");
    tx.commit().await.expect("commit");
}

/// Loads in its own transaction, after `prepare`.
async fn load(db: &TestDb, store: &FlightStore, flids: &[i64]) -> Vec<FlightState> {
    let mut tx = db.pool.begin().await.expect("begin");
    store.prepare(&mut tx).await.expect("prepare");
    store.load(&mut tx, flids).await.expect("load")
}

fn projection(f: &FlightState) -> String {
    String::from_utf8(schd_projection(f, None).to_bytes()).expect("utf-8")
}

/// Loaded equals written, field by field and byte by byte.
fn assert_same(loaded: &FlightState, written: &FlightState) {
    assert_eq!(loaded, written);
    assert_eq!(projection(loaded), projection(written));
}

/// xmin of every detail row of `flid`, by (table, filter).
async fn detail_xmins(db: &TestDb, flid: i64) -> BTreeMap<(String, String), Vec<String>> {
    let mut conn = db.pool.acquire().await.expect("conn");
    let mut out = BTreeMap::new();
    for (table, filter) in DETAILS {
        let sql =
            format!("SELECT xmin::text FROM {table} WHERE flid = $1 AND {filter} ORDER BY ordinal");
        let x: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(flid)
            .fetch_all(&mut *conn)
            .await
            .expect("xmin");
        out.insert((table.to_string(), filter.to_string()), x);
    }
    out
}

async fn round_trip_in(cfg: DomainConfig) {
    let db = TestDb::migrated().await;
    let store = FlightStore::new(&cfg);
    let f = full_flight(&cfg, 15);
    assert!(
        f.scalars.len() == ScalarTag::ALL.len() - 1,
        "every scalar but FLID is set"
    );
    write_flight(&db, &store, None, &f).await;
    let loaded = load(&db, &store, &[15]).await;
    assert_eq!(loaded.len(), 1);
    assert_same(&loaded[0], &f);
    assert!(projection(&loaded[0]).contains("\"lbwt\":\"12.5\""));
    assert_eq!(
        loaded[0].milestone_msgs.get(&MilestoneCode::Aobt),
        Some(&4711),
        "the mailbox IDs that set the milestones are kept"
    );
}

#[tokio::test]
async fn round_trip_of_a_complete_state_is_byte_identical() {
    round_trip_in(DomainConfig::default()).await;
}

#[tokio::test]
async fn round_trip_keeps_summer_and_winter_offsets_of_a_dst_zone() {
    let cfg = DomainConfig {
        timezone: chrono_tz::Europe::Berlin,
        ..DomainConfig::default()
    };
    round_trip_in(cfg.clone()).await;
    // A winter time next to the summer ones of the full flight.
    let db = TestDb::migrated().await;
    let store = FlightStore::new(&cfg);
    let mut f = full_flight(&cfg, 16);
    let winter = NaiveDate::from_ymd_opt(2026, 1, 5)
        .and_then(|d| d.and_hms_opt(6, 0, 0))
        .expect("date");
    f.set_scalar(
        ScalarTag::ESTT,
        Some(FlightValue::Time(cfg.local_time(winter))),
    );
    write_flight(&db, &store, None, &f).await;
    let loaded = load(&db, &store, &[16]).await;
    assert_same(&loaded[0], &f);
    assert!(projection(&loaded[0]).contains("\"estt\":\"2026-01-05T06:00:00+01:00\""));
}

#[tokio::test]
async fn times_get_the_airport_offset_even_without_prepare() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let f = full_flight(&cfg, 17);
    write_flight(&db, &store, None, &f).await;
    let mut conn = db.pool.acquire().await.expect("conn");
    sqlx::query("SET TIME ZONE 'America/New_York'")
        .execute(&mut *conn)
        .await
        .expect("set");
    let loaded = store.load(&mut conn, &[17]).await.expect("load");
    assert_same(&loaded[0], &f);
}

#[tokio::test]
async fn update_rewrites_only_the_changed_list() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let before = full_flight(&cfg, 20);
    write_flight(&db, &store, None, &before).await;
    let xmins_before = detail_xmins(&db, 20).await;

    let mut after = before.clone();
    after.state_version += 1;
    after.erut.truncate(1);
    after.erut[0].apcd = s("SHA");
    after.set_scalar(ScalarTag::STND, Some(FlightValue::Text("205".into())));
    write_flight(&db, &store, Some(&before), &after).await;

    let loaded = load(&db, &store, &[20]).await;
    assert_same(&loaded[0], &after);
    let xmins_after = detail_xmins(&db, 20).await;
    for (key, x) in &xmins_before {
        if key.1.contains("ERUT") {
            assert_ne!(xmins_after[key], *x, "ERUT rewritten");
            assert_eq!(xmins_after[key].len(), 1);
        } else {
            assert_eq!(xmins_after[key], *x, "{key:?} untouched");
        }
    }
}

/// The many-flight statements (group commit, large schedules) delete only
/// the changed lists of stored flights and nothing for a new one (issue 17
/// item 5: the deletes are keyed by Rust-built `(FLID, list)` pairs).
#[tokio::test]
async fn a_many_flight_write_rewrites_only_the_changed_lists_of_stored_flights() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let (b40, b41) = (full_flight(&cfg, 40), full_flight(&cfg, 41));
    write_flight(&db, &store, None, &b40).await;
    write_flight(&db, &store, None, &b41).await;
    let (x40, x41) = (detail_xmins(&db, 40).await, detail_xmins(&db, 41).await);

    let mut a40 = b40.clone();
    a40.state_version += 1;
    a40.erut.truncate(1);
    a40.gtdt.clear();
    let mut a41 = b41.clone();
    a41.state_version += 1;
    a41.set_scalar(ScalarTag::STND, Some(FlightValue::Text("207".into())));
    let a42 = full_flight(&cfg, 42);
    let mut tx = db.pool.begin().await.expect("begin");
    store
        .write_many(
            &mut tx,
            &[(Some(&b40), &a40), (Some(&b41), &a41), (None, &a42)],
        )
        .await
        .expect("write_many");
    tx.commit().await.expect("commit");

    let loaded = load(&db, &store, &[40, 41, 42]).await;
    assert_same(&loaded[0], &a40);
    assert_same(&loaded[1], &a41);
    assert_same(&loaded[2], &a42);
    let (y40, y41) = (detail_xmins(&db, 40).await, detail_xmins(&db, 41).await);
    assert_eq!(y41, x41, "flight 41 changed no list");
    for (key, x) in &x40 {
        let changed = key.1.contains("ERUT") || key.0 == "flight_gate";
        match y40.get(key) {
            Some(y) if changed => assert_ne!(y, x, "{key:?} rewritten"),
            Some(y) => assert_eq!(y, x, "{key:?} untouched"),
            None => assert!(changed, "{key:?} vanished"),
        }
    }
    let mut conn = db.pool.acquire().await.expect("conn");
    assert_eq!(flight_rows(&mut conn, "flight_gate", "true", 40).await, 0);
}

#[tokio::test]
async fn clearing_lists_and_scalars_leaves_no_rows_and_nulls() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let before = full_flight(&cfg, 30);
    write_flight(&db, &store, None, &before).await;

    let mut after = before.clone();
    after.state_version += 1;
    after.gtdt.clear();
    after.vipf.clear();
    after.rout.clear();
    after.set_scalar(ScalarTag::STND, None);
    after.set_scalar(ScalarTag::LBWT, None);
    after.set_scalar(ScalarTag::ESTT, None);
    after.fdiv = None;
    write_flight(&db, &store, Some(&before), &after).await;

    let mut conn = db.pool.acquire().await.expect("conn");
    assert_eq!(flight_rows(&mut conn, "flight_gate", "true", 30).await, 0);
    assert_eq!(flight_rows(&mut conn, "flight_vip", "true", 30).await, 0);
    assert_eq!(
        flight_rows(&mut conn, "flight_route_point", "route_kind = 'ROUT'", 30).await,
        0
    );
    assert_eq!(
        flight_rows(&mut conn, "flight_route_point", "route_kind = 'ERUT'", 30).await,
        2
    );
    let nulls: bool = sqlx::query_scalar(
        "SELECT stnd IS NULL AND lbwt IS NULL AND estt IS NULL AND fdiv_ddes IS NULL \
         AND fdiv_ddir IS NULL AND fdiv_reason IS NULL AND flno IS NOT NULL FROM flight_schd WHERE flid = 30",
    )
    .fetch_one(&mut *conn)
    .await
    .expect("row");
    assert!(nulls);
    let loaded = load(&db, &store, &[30]).await;
    assert_same(&loaded[0], &after);
}

#[tokio::test]
async fn load_skips_missing_flids_and_handles_empty_input() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let created = Utc
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .expect("instant");
    let mut a = FlightState::new(1, created);
    a.state_version = 1;
    let b = full_flight(&cfg, 2);
    write_flight(&db, &store, None, &a).await;
    write_flight(&db, &store, None, &b).await;
    let loaded = load(&db, &store, &[999, 2, 1, 998]).await;
    assert_eq!(loaded.len(), 2);
    assert_same(&loaded[0], &a);
    assert_same(&loaded[1], &b);
    assert!(load(&db, &store, &[]).await.is_empty());
    assert!(load(&db, &store, &[7]).await.is_empty());
}

#[tokio::test]
async fn load_active_children_returns_only_active_flights_of_those_masters() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let flight = |flid: i64, maid: Option<i64>, status: FlightStatus| {
        let mut f = full_flight(&cfg, flid);
        f.set_scalar(ScalarTag::MAID, maid.map(FlightValue::Int));
        f.state = status;
        f
    };
    let flights = [
        flight(100, None, FlightStatus::Active),
        flight(101, Some(100), FlightStatus::Active),
        flight(102, Some(100), FlightStatus::Deleted),
        flight(103, Some(200), FlightStatus::Active),
        flight(104, Some(300), FlightStatus::Active),
        flight(105, Some(100), FlightStatus::Active),
    ];
    for f in &flights {
        write_flight(&db, &store, None, f).await;
    }
    let mut tx = db.pool.begin().await.expect("begin");
    store.prepare(&mut tx).await.expect("prepare");
    let kids = store
        .load_active_children(&mut tx, &[100])
        .await
        .expect("load");
    let ids: Vec<i64> = kids.iter().map(|f| f.flid).collect();
    assert_eq!(ids, vec![101, 105]);
    assert_same(&kids[0], &flights[1]);
    let kids = store
        .load_active_children(&mut tx, &[100, 200, 999])
        .await
        .expect("load");
    let ids: Vec<i64> = kids.iter().map(|f| f.flid).collect();
    assert_eq!(ids, vec![101, 103, 105]);
    assert!(
        store
            .load_active_children(&mut tx, &[])
            .await
            .expect("load")
            .is_empty()
    );
}

#[tokio::test]
async fn delete_needs_the_expected_version_and_cascades() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let f = full_flight(&cfg, 40);
    write_flight(&db, &store, None, &f).await;
    let mut conn = db.pool.acquire().await.expect("conn");
    assert_eq!(
        store
            .delete(&mut conn, 40, f.state_version + 1)
            .await
            .expect("delete"),
        0
    );
    assert_eq!(flight_rows(&mut conn, "flight_schd", "true", 40).await, 1);
    for (table, filter) in DETAILS {
        assert!(
            flight_rows(&mut conn, table, filter, 40).await > 0,
            "{table} {filter} kept"
        );
    }
    assert_eq!(
        store
            .delete(&mut conn, 40, f.state_version)
            .await
            .expect("delete"),
        1
    );
    assert_eq!(flight_rows(&mut conn, "flight_schd", "true", 40).await, 0);
    for (table, filter) in DETAILS {
        assert_eq!(
            flight_rows(&mut conn, table, filter, 40).await,
            0,
            "{table} {filter} removed"
        );
    }
    assert_eq!(
        store
            .delete(&mut conn, 40, f.state_version)
            .await
            .expect("delete"),
        0
    );
}

#[tokio::test]
async fn snapshot_json_holds_the_row_and_every_list() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let f = full_flight(&cfg, 50);
    let snap = store.snapshot_json(&f);
    let obj = snap.as_object().expect("object");
    for tag in ScalarTag::ALL {
        let v = &obj[&tag.name().to_ascii_lowercase()];
        assert!(!v.is_null(), "{tag:?}");
    }
    assert_eq!(obj["lbwt"], "12.5");
    assert_eq!(obj["fdiv_ddes"], "PEK");
    assert_eq!(obj["fret_reid"], "A");
    assert_eq!(obj["flab_ares"], "G");
    assert_eq!(obj["state"], "ACTIVE");
    for key in [
        "rout", "erut", "psdt", "gtdt", "ckdt", "cldt", "chdt", "chot", "abtm", "dely", "srvt",
        "vipf", "port", "tipt", "psht",
    ] {
        let list = obj[key].as_array().expect("list");
        assert!(!list.is_empty(), "{key}");
    }
    assert_eq!(obj["vipf"][0]["vipt"][1]["vscd"], "CAR");
    // The snapshot of the reloaded state is the same document.
    write_flight(&db, &store, None, &f).await;
    let loaded = load(&db, &store, &[50]).await;
    assert_eq!(store.snapshot_json(&loaded[0]), snap);
    // And it is storable as flight_history.snapshot.
    let mut conn = db.pool.acquire().await.expect("conn");
    sqlx::query(
        "INSERT INTO flight_history (flid, state, state_version, snapshot, archived_at) \
         VALUES (50, 'ACTIVE', 3, $1, now())",
    )
    .bind(&snap)
    .execute(&mut *conn)
    .await
    .expect("history insert");
}

#[tokio::test]
async fn odd_stored_data_is_a_typed_decode_error() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    write_flight(&db, &store, None, &full_flight(&cfg, 60)).await;
    let mut conn = db.pool.acquire().await.expect("conn");
    sqlx::query("UPDATE flight_schd SET fdiv_ddir = NULL WHERE flid = 60")
        .execute(&mut *conn)
        .await
        .expect("update");
    let err = store
        .load(&mut conn, &[60])
        .await
        .expect_err("incomplete FDIV");
    match err {
        sqlx::Error::Decode(e) => {
            let e = e
                .downcast_ref::<FlightStoreError>()
                .expect("FlightStoreError");
            assert!(
                matches!(e, FlightStoreError::Column { flid: 60, .. }),
                "{e}"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn lbwt_keeps_canonical_decimal_text_and_normalises_the_rest() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let cases = [
        ("12.5", "12.5"),
        ("12.50", "12.50"),
        ("-0.25", "-0.25"),
        ("12", "12"),
        (
            "123456789012345678901234567890.123456789",
            "123456789012345678901234567890.123456789",
        ),
        // Documented rule: PostgreSQL's numeric text for non-canonical input.
        (".5", "0.5"),
        ("007", "7"),
    ];
    for (i, (written, read)) in cases.iter().enumerate() {
        let mut f = full_flight(&cfg, 70 + i as i64);
        f.set_scalar(
            ScalarTag::LBWT,
            Some(FlightValue::Decimal(written.to_string())),
        );
        write_flight(&db, &store, None, &f).await;
        let loaded = load(&db, &store, &[f.flid]).await;
        assert_eq!(
            loaded[0].scalar(ScalarTag::LBWT),
            Some(&FlightValue::Decimal(read.to_string())),
            "{written}"
        );
    }
}

/// The stored version of `flid` ([`FlightStore::load_links`]).
async fn stored_version(db: &TestDb, store: &FlightStore, flid: i64) -> StoredVersion {
    let mut conn = db.pool.acquire().await.expect("conn");
    let links = store.load_links(&mut conn, &[flid]).await.expect("links");
    links.first().expect("stored").version
}

/// The version the pump's flight cache checks (migration 0013, issue 31
/// item 6): a write in a transaction that took PIPELINE_LOCK reports the
/// version then stored, rewriting every list included (the cache hits it, no
/// extra row update), while every INSERT, UPDATE and DELETE of a detail row
/// on any detail table elsewhere, and a TRUNCATE, gives the flight a new
/// version. A write without the lock that rewrites a list is never reported
/// at the version stored (the cache would only miss).
#[tokio::test]
async fn a_detail_write_outside_msgx_gives_the_flight_a_new_version() {
    let db = TestDb::migrated().await;
    let cfg = DomainConfig::default();
    let store = FlightStore::new(&cfg);
    let f = full_flight(&cfg, 70);
    let (mut empty, mut other) = (
        FlightState::new(70, f.created_at),
        FlightState::new(71, f.created_at),
    );
    (empty.state_version, other.state_version) = (1, 1);
    let mut tx = db.pool.begin().await.expect("begin");
    proc_state::take_pipeline_lock(&mut tx).await.expect("lock");
    store
        .write_many_versioned(&mut tx, &[(None, &empty), (None, &other)])
        .await
        .expect("write");
    // Every list deleted (none stored) and inserted, on every detail table.
    let written = store
        .write_many_versioned(&mut tx, &[(Some(&empty), &f)])
        .await
        .expect("write");
    tx.commit().await.expect("commit");
    let v = stored_version(&db, &store, 70).await;
    assert_eq!(v, StoredVersion::of(&f, written[0].1));
    assert_eq!(v.row.content_version, 0);

    let mut conn = db.pool.acquire().await.expect("conn");
    for (table, filter) in DETAILS {
        let before = stored_version(&db, &store, 70).await;
        // An UPDATE, then a DELETE and an INSERT (of the same row) in one statement.
        for sql in [
            format!(
                "UPDATE {table} SET source_seq = 99 WHERE flid = 70 AND {filter} AND ordinal = 1"
            ),
            format!(
                "WITH d AS (DELETE FROM {table} WHERE flid = 70 AND {filter} AND ordinal = 1 RETURNING *) \
                 INSERT INTO {table} SELECT * FROM d"
            ),
        ] {
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .execute(&mut *conn)
                .await
                .expect("operator's SQL");
        }
        let after = stored_version(&db, &store, 70).await;
        assert_eq!(
            after.row.content_version,
            before.row.content_version + 3,
            "{table} {filter}"
        );
        assert_ne!(after.row.xmin, before.row.xmin, "{table} {filter}");
    }
    assert_eq!(stored_version(&db, &store, 71).await.row.content_version, 0);
    sqlx::query("TRUNCATE flight_door")
        .execute(&mut *conn)
        .await
        .expect("truncate");
    assert_eq!(stored_version(&db, &store, 71).await.row.content_version, 1);
    assert_eq!(
        stored_version(&db, &store, 70).await.row.content_version,
        3 * DETAILS.len() as i64 + 1
    );

    // A list rewritten without PIPELINE_LOCK: the triggers count it after
    // the version was returned.
    let stored = load(&db, &store, &[70]).await.remove(0);
    let mut next = stored.clone();
    next.gtdt.truncate(1);
    let mut tx = db.pool.begin().await.expect("begin");
    let written = store
        .write_many_versioned(&mut tx, &[(Some(&stored), &next)])
        .await
        .expect("write");
    tx.commit().await.expect("commit");
    assert_ne!(
        stored_version(&db, &store, 70).await,
        StoredVersion::of(&next, written[0].1)
    );
}
