//! The SCHS rules (docs/season.md): validation, replacement and keep, records.

use super::*;
use crate::codec::{DecodedMessage, MsgKind, decode};

/// A SCHS with the given FLTR bodies (RECS = their count unless `recs`).
pub(crate) fn schs_xml(header: &str, fltrs: &[String], recs: Option<&str>) -> String {
    let n = fltrs.len().to_string();
    format!(
        "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><DTTM>20261201080000</DTTM><TYPE>SCHS</TYPE>\
         <STYP>DNLD</STYP></META><SCHS>{header}<RECS>{}</RECS>{}</SCHS></MSG>",
        recs.unwrap_or(&n),
        fltrs.concat()
    )
}

const WINTER: &str = "<SNAM>Winter</SNAM><APCD>CTU</APCD><SDAT>25OCT26</SDAT><EDAT>27MAR27</EDAT>";

fn fltr(flno: &str, stdt: &str, eddt: &str, extra: &str) -> String {
    format!(
        "<FLTR><ALCD>{}</ALCD><FLNO>{flno}</FLNO><MVIN>D</MVIN><STDT>{stdt}</STDT><EDDT>{eddt}</EDDT>\
         <DYOP>1200560</DYOP><SCHT>1023</SCHT><FLTY>P</FLTY><FLIN>I</FLIN><ACFT>747</ACFT>{extra}</FLTR>",
        &flno[..2]
    )
}

fn decoded(xml: &str) -> Schs {
    let m: DecodedMessage = decode(xml.as_bytes()).expect("decodes");
    match m.kind {
        MsgKind::Schs(s) => s,
        other => panic!("not SCHS: {other:?}"),
    }
}

fn season(xml: &str) -> Result<Season, SeasonError> {
    validate(&decoded(xml), &DomainConfig::default())
}

#[test]
fn a_valid_season_keeps_every_field_and_orders_routes_by_rtno() {
    let f = fltr(
        "LH724",
        "01NOV26",
        "27MAR27",
        "<ROUT RTNO=\"2\"><APCD>LON</APCD><SCAT>1125</SCAT><SCDT></SCDT></ROUT>\
         <ROUT RTNO=\"1\"><APCD>HKG</APCD><SCAT>1125</SCAT><SCDT>1330</SCDT></ROUT>\
         <RENO>A56729</RENO><TAOP>LH</TAOP><TAFL>LH647</TAFL><TRML>3</TRML><MAXP>320</MAXP>\
         <CSOP>HK</CSOP><CSFT>HK001</CSFT><REMC>seasonal</REMC><GTDT GTNO=\"1\"><GATE>1</GATE></GTDT>\
         <ERUT RTNO=\"1\"><APCD>CTU</APCD><SCAT>14MAR271023</SCAT><SADC>+1</SADC><SCDT>14MAR271023</SCDT><SDDC>-2</SDDC></ERUT>",
    );
    let s = season(&schs_xml(WINTER, &[f], None)).expect("valid");
    assert_eq!(s.id.snam, "Winter");
    assert_eq!(s.apcd.as_deref(), Some("CTU"));
    assert_eq!(s.ignored, ["GTDT"]);
    let x = &s.series[0];
    assert_eq!(x.key("Winter"), "Winter|LH|LH724|D|2026-11-01");
    assert_eq!(x.days(), [1, 2, 5, 6]);
    assert_eq!((x.scht.as_str(), x.maxp), ("1023", Some(320)));
    assert_eq!(x.csft.as_deref(), Some("HK001"));
    assert_eq!(x.other["remc"], serde_json::json!("seasonal"));
    let rout: Vec<_> = x
        .rout
        .iter()
        .map(|p| (p.ordinal, p.rtno, p.apcd.clone()))
        .collect();
    assert_eq!(
        rout,
        [
            (1, Some(1), Some("HKG".into())),
            (2, Some(2), Some("LON".into()))
        ]
    );
    assert_eq!(x.rout[1].scdt, None, "<SCDT></SCDT> is no time");
    let e = &x.erut[0];
    assert_eq!(e.scat.as_deref(), Some("2027-03-14T10:23:00+08:00"));
    assert_eq!(
        (e.sadc.as_deref(), e.sddc.as_deref()),
        (Some("+1"), Some("-2"))
    );
}

#[test]
fn stdt_after_eddt_is_rejected_with_the_fltr_and_both_dates() {
    let xml = schs_xml(
        WINTER,
        &[
            fltr("CA002", "11OCT26", "10MAR27", ""),
            fltr("LH724", "14NOV27", "14MAR27", ""),
        ],
        None,
    );
    let e = season(&xml).expect_err("reversed");
    assert_eq!(
        e.to_string(),
        "SCHS FLTR #2 (LH LH724 D): STDT 2027-11-14 is after EDDT 2027-03-14; a series cannot end before it starts"
    );
}

#[test]
fn package_rules_reject_the_whole_message() {
    let ok = fltr("CA002", "01NOV26", "10MAR27", "");
    let cases: Vec<(String, &str)> = vec![
        (
            schs_xml(WINTER, std::slice::from_ref(&ok), Some("2")),
            "RECS is 2 but the SCHS carries 1 FLTR",
        ),
        (
            schs_xml(WINTER, std::slice::from_ref(&ok), Some("")),
            "RECS is missing",
        ),
        (
            schs_xml(
                "<SDAT>25OCT26</SDAT><EDAT>27MAR27</EDAT>",
                std::slice::from_ref(&ok),
                None,
            ),
            "<SNAM> is mandatory",
        ),
        (
            schs_xml(
                "<SNAM>W</SNAM><SDAT>27MAR27</SDAT><EDAT>25OCT26</EDAT>",
                &[],
                None,
            ),
            "SDAT 2027-03-27 is after EDAT 2026-10-25",
        ),
        (
            schs_xml(
                WINTER,
                &[ok.replace("<ACFT>747</ACFT>", "<ACFT></ACFT>")],
                None,
            ),
            "FLTR #1: <ACFT> is mandatory",
        ),
        (
            schs_xml(WINTER, &[ok.replace("<SCHT>1023</SCHT>", "")], None),
            "FLTR #1: <SCHT> is mandatory",
        ),
        (
            schs_xml(WINTER, &[ok.replace("1200560", "12005")], None),
            "DYOP \"12005\" is not seven weekday positions",
        ),
        (
            schs_xml(
                WINTER,
                &[ok.replace("<MVIN>D</MVIN>", "<MVIN>X</MVIN>")],
                None,
            ),
            "FLTR #1: MVIN has invalid value \"X\"",
        ),
        (
            schs_xml(
                WINTER,
                &[
                    ok.clone(),
                    ok.replace("<SCHT>1023</SCHT>", "<SCHT>1100</SCHT>"),
                ],
                None,
            ),
            "FLTR #2 repeats series Winter|CA|CA002|D|2026-11-01 of FLTR #1",
        ),
    ];
    for (xml, want) in cases {
        let e = season(&xml).expect_err(want);
        assert!(e.to_string().contains(want), "{e} / {want}");
    }
}

fn id(snam: &str, sdat: (i32, u32, u32)) -> SeasonId {
    let d = NaiveDate::from_ymd_opt(sdat.0, sdat.1, sdat.2).expect("date");
    SeasonId {
        snam: snam.into(),
        sdat: d,
        edat: d + chrono::Duration::days(150),
    }
}

fn stored(id: SeasonId, keys: &[&str]) -> StoredKeys {
    StoredKeys {
        id,
        keys: keys.iter().map(|k| k.to_string()).collect(),
    }
}

fn new_season(id: SeasonId, flnos: &[&str]) -> Season {
    let fltrs: Vec<String> = flnos
        .iter()
        .map(|f| fltr(f, "01NOV26", "10MAR27", ""))
        .collect();
    let mut s = season(&schs_xml(WINTER, &fltrs, None)).expect("valid");
    s.id = id;
    s
}

#[test]
fn a_replacement_tombstones_only_the_series_it_drops() {
    let w = id("Winter", (2026, 10, 25));
    let old = stored(
        w.clone(),
        &[
            "Winter|CA|CA002|D|2026-11-01",
            "Winter|LH|LH724|D|2026-11-01",
        ],
    );
    let new = new_season(w.clone(), &["CA002", "MU501"]);
    let p = plan_replacement(&[old], &new, 2);
    assert_eq!(p.delete, [w]);
    assert!(p.store_new);
    assert_eq!(p.tombstones, ["Winter|LH|LH724|D|2026-11-01"]);
    let ev = events(&new, &p, 7, 42, DateTime::UNIX_EPOCH);
    let keys: Vec<(&str, bool)> = ev
        .iter()
        .map(|e| (e.key.as_str(), e.payload.is_some()))
        .collect();
    assert_eq!(
        keys,
        [
            ("Winter|LH|LH724|D|2026-11-01", false),
            ("Winter|CA|CA002|D|2026-11-01", true),
            ("Winter|MU|MU501|D|2026-11-01", true),
        ]
    );
    assert!(ev.iter().all(|e| e.revision == 7));
    let v: serde_json::Value = serde_json::from_slice(ev[1].payload.as_deref().unwrap()).unwrap();
    assert_eq!(v["key"], "Winter|CA|CA002|D|2026-11-01");
    assert_eq!(v["revision"], 7);
    assert_eq!(v["msg_id"], 42);
    assert_eq!(v["days"], serde_json::json!([1, 2, 5, 6]));
    assert_eq!(v["stdt"], "2026-11-01");
    assert_eq!(v["sdat"], "2026-10-25");
}

#[test]
fn only_the_keep_most_recent_seasons_stay_and_a_pushed_out_season_is_tombstoned() {
    let (s25, w25, s26) = (
        id("Summer", (2025, 3, 30)),
        id("Winter", (2025, 10, 26)),
        id("Summer", (2026, 3, 29)),
    );
    let stored_now = [
        stored(s25.clone(), &["Summer|CA|CA1|D|2025-04-01"]),
        stored(w25.clone(), &["Winter|CA|CA1|D|2025-11-01"]),
    ];
    let new = new_season(s26.clone(), &["CA002"]);
    let p = plan_replacement(&stored_now, &new, 2);
    assert_eq!(p.delete, std::slice::from_ref(&s25));
    assert!(p.store_new);
    assert_eq!(p.tombstones, ["Summer|CA|CA1|D|2025-04-01"]);
    // An old season arriving late is not stored, and changes nothing.
    let late = new_season(id("Winter", (2024, 10, 27)), &["CA002"]);
    let p = plan_replacement(&stored_now, &late, 2);
    assert_eq!(
        p,
        Replacement {
            delete: vec![],
            store_new: false,
            tombstones: vec![]
        }
    );
    assert!(events(&late, &p, 1, 1, DateTime::UNIX_EPOCH).is_empty());
    // A key another kept season still has is not tombstoned.
    let shared = [
        stored(s25.clone(), &["X|CA|CA1|D|2026-11-01"]),
        stored(w25.clone(), &["X|CA|CA1|D|2026-11-01"]),
    ];
    let p = plan_replacement(&shared, &new_season(s26, &["CA002"]), 2);
    assert_eq!(p.delete, [s25]);
    assert!(p.tombstones.is_empty(), "{p:?}");
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn season_ids() -> impl Strategy<Value = SeasonId> {
        (prop::sample::select(vec!["Summer", "Winter"]), 0i64..8).prop_map(|(n, k)| {
            let sdat =
                NaiveDate::from_ymd_opt(2024, 1, 1).unwrap() + chrono::Duration::days(180 * k);
            SeasonId {
                snam: n.into(),
                sdat,
                edat: sdat + chrono::Duration::days(150),
            }
        })
    }

    proptest! {
        /// Whatever is stored, after the replacement at most `keep` seasons
        /// remain, the new one among them unless older than all kept; every
        /// key that vanished is tombstoned and no kept key is.
        #[test]
        fn keep_and_tombstones_agree_with_the_store_afterwards(
            existing in prop::collection::btree_map(season_ids(), prop::collection::btree_set(0u8..6, 0..4), 0..5),
            new_id in season_ids(),
            new_keys in prop::collection::btree_set(0u8..6, 0..4),
            keep in 1usize..4,
        ) {
            let key = |id: &SeasonId, k: u8| format!("{}|CA|CA{k}|D|2026-11-01", id.snam);
            let stored_now: Vec<StoredKeys> = existing.iter().map(|(id, ks)| StoredKeys {
                id: id.clone(), keys: ks.iter().map(|k| key(id, *k)).collect(),
            }).collect();
            let flnos: Vec<String> = new_keys.iter().map(|k| format!("CA{k}")).collect();
            let refs: Vec<&str> = flnos.iter().map(String::as_str).collect();
            let new = new_season(new_id.clone(), &refs);
            let p = plan_replacement(&stored_now, &new, keep);
            let mut after: Vec<(SeasonId, BTreeSet<String>)> = stored_now.iter()
                .filter(|s| !p.delete.contains(&s.id))
                .map(|s| (s.id.clone(), s.keys.clone())).collect();
            if p.store_new {
                after.push((new_id.clone(), new.series.iter().map(|s| s.key(&new_id.snam)).collect()));
            }
            prop_assert!(after.len() <= keep);
            let ids: BTreeSet<&SeasonId> = after.iter().map(|(i, _)| i).collect();
            prop_assert_eq!(ids.len(), after.len(), "one copy per season");
            let after_keys: BTreeSet<&String> = after.iter().flat_map(|(_, k)| k).collect();
            let before_keys: BTreeSet<&String> = stored_now.iter().flat_map(|s| &s.keys).collect();
            let tomb: BTreeSet<&String> = p.tombstones.iter().collect();
            let vanished: BTreeSet<&String> = before_keys.difference(&after_keys).copied().collect();
            prop_assert_eq!(tomb, vanished);
            // Kept seasons are the most recent ones.
            for (i, _) in &after {
                for s in stored_now.iter().filter(|s| p.delete.contains(&s.id) && s.id != new_id) {
                    prop_assert!(i.recency() <= s.id.recency());
                }
            }
        }
    }
}

#[test]
fn the_record_bytes_are_the_documented_example() {
    let f = "<FLTR><ALCD>LH</ALCD><FLNO>LH724</FLNO><MVIN>D</MVIN><STDT>01NOV26</STDT><EDDT>27MAR27</EDDT>\
             <DYOP>1200560</DYOP><SCHT>1023</SCHT><FLTY>P</FLTY><FLIN>I</FLIN>\
             <ROUT RTNO=\"1\"><APCD>HKG</APCD><SCAT>1125</SCAT><SCDT>1330</SCDT></ROUT>\
             <ACFT>747</ACFT><MAXP>320</MAXP>\
             <ERUT RTNO=\"1\"><APCD>CTU</APCD><SCDT>01NOV261023</SCDT><SDDC>0</SDDC></ERUT></FLTR>";
    let s = season(&schs_xml(WINTER, &[f.to_string()], None)).expect("valid");
    let at = DateTime::parse_from_rfc3339("2026-12-01T08:00:00Z")
        .expect("instant")
        .with_timezone(&Utc);
    let plan = plan_replacement(&[], &s, 2);
    let ev = events(&s, &plan, 1, 4711, at);
    let bytes = String::from_utf8(ev[0].payload.clone().expect("a value")).expect("utf-8");
    // docs/events.md, "KAFKA:season", without the line breaks added there.
    let documented = concat!(
        r#"{"key":"Winter|LH|LH724|D|2026-11-01","snam":"Winter","apcd":"CTU","sdat":"2026-10-25","edat":"2027-03-27","#,
        r#""revision":1,"msg_id":4711,"updated_at":"2026-12-01T08:00:00Z","days":[1,2,5,6],"#,
        r#""alcd":"LH","flno":"LH724","mvin":"D","stdt":"2026-11-01","eddt":"2027-03-27","dyop":"1200560","scht":"1023","#,
        r#""flty":"P","flin":"I","acft":"747","alsc":null,"reno":null,"taop":null,"tafl":null,"trml":null,"maxp":320,"#,
        r#""csop":null,"csft":null,"other":{},"#,
        r#""rout":[{"ordinal":1,"rtno":1,"apcd":"HKG","scat":"1125","sadc":null,"scdt":"1330","sddc":null}],"#,
        r#""erut":[{"ordinal":1,"rtno":1,"apcd":"CTU","scat":null,"sadc":null,"scdt":"2026-11-01T10:23:00+08:00","sddc":"0"}]}"#,
    );
    assert_eq!(bytes, documented);
}

#[test]
fn the_record_type_has_a_json_schema_with_every_key() {
    let schema = serde_json::to_value(schemars::schema_for!(SeasonRecord<'static>)).expect("json");
    let props = schema["properties"].as_object().expect("properties");
    for key in [
        "key", "snam", "revision", "days", "alcd", "stdt", "dyop", "scht", "other", "rout", "erut",
    ] {
        assert!(props.contains_key(key), "{key}: {schema}");
    }
}
