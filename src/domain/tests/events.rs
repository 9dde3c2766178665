//! Event JSON (docs/events.md, INV-13): stable layout, ISO-8601 with offset,
//! byte-identical for the same state and version.

use chrono::{TimeZone, Utc};

use super::support::*;
use crate::codec::*;
use crate::domain::{
    DomainConfig, DomainEvent, EventTarget, EventType, FlightSet, schd_projection,
};

const D: &str = "2021-01-23 05:35";

#[test]
fn notification_json_has_the_documented_layout() {
    let mut set = seeded(vec![fltr(15, D)]);
    let (_, events) = applied(apply(
        &mut set,
        42,
        &flop(15, FlopPayload::APPT(Field::Value(t("2021-01-23 06:10")))),
    ));
    assert_eq!(events[0].target(), EventTarget::KafkaMsg);
    assert_eq!(events[0].target().as_str(), "KAFKA:msg");
    assert_eq!(events[0].partition_key(), 15);
    let json = String::from_utf8(events[0].to_bytes().expect("value")).expect("utf8");
    assert_eq!(
        json,
        r#"{"flid":15,"state_version":2,"msg_id":42,"msg_kind":"FLOP-APPT","change":"UPSERT","event_kind":"UPDATE","changed_fields":["APPT"],"changes":[{"field":"APPT","index":null,"op":"SET","old":null,"new":"2021-01-23T06:10:00+08:00"}],"provenance":{"msg_id":42,"sndr":"AODB","msg_kind":"FLOP-APPT","dttm":null,"seqn":"1"},"updated_at":"2026-01-01T08:00:00Z"}"#
    );
}

#[test]
fn projection_json_has_the_documented_layout() {
    let set = seeded(vec![fltr(15, D)]);
    let f = set.get(15).expect("seeded");
    let json = schd_projection(f, Some(&[])).to_json();
    let keys: Vec<&str> = json
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert!(keys.len() > 60, "every scalar is a key: {}", keys.len());
    assert_eq!(json["flid"], 15);
    assert_eq!(json["state"], "ACTIVE");
    assert_eq!(json["operation_day"], "2021-01-23");
    assert_eq!(json["sodt"], "2021-01-23T05:35:00+08:00");
    assert_eq!(json["flno"], "YG15");
    assert_eq!(json["reno"], serde_json::Value::Null);
    assert_eq!(json["mafl"], serde_json::json!([]));
    assert_eq!(json["gtdt"], serde_json::json!([]));
    assert!(json.get("fdiv").is_some_and(serde_json::Value::is_null));
    let bytes = String::from_utf8(schd_projection(f, None).to_bytes()).expect("utf8");
    assert!(bytes.starts_with(r#"{"flid":15,"state":"ACTIVE","state_version":1,"operation_day":"2021-01-23","last_msg_id":1,"created_at":"2026-01-01T08:00:00Z","updated_at":"2026-01-01T08:00:00Z","alcd":"YG","alsc":null,"flno":"YG15","mvin":"D","sodt":"2021-01-23T05:35:00+08:00""#), "{bytes}");
    assert!(bytes.contains(r#""mafl":null"#));
}

#[test]
fn items_serialise_with_ordinal_and_source_seq() {
    let set = seeded(vec![full_fltr(15)]);
    let json = schd_projection(set.get(15).expect("seeded"), None).to_json();
    assert_eq!(
        json["gtdt"][1],
        serde_json::json!({"ordinal":2,"source_seq":2,"gate":"G1","pgot":"2021-01-23T04:00:00+08:00","pgct":null,"gotm":null,"gctm":null,"gtyp":"D"})
    );
    assert_eq!(
        json["fdiv"],
        serde_json::json!({"ddes":"PEK","ddir":"TO","reason":"WX"})
    );
    assert_eq!(json["lbwt"], "12.5");
    assert_eq!(json["vipf"][0]["vipt"][0]["vscd"], "S1");
}

#[test]
fn same_version_serialises_byte_identically_after_a_store_round_trip() {
    let cfg = DomainConfig::default();
    let now_with_nanos = Utc
        .timestamp_opt(1_767_254_400, 123_456_789)
        .single()
        .expect("valid");
    let mut set = FlightSet::new();
    let msg = schd("DNLD", vec![full_fltr(15), share(16, 15, D)]);
    let d = engine().decide(
        &crate::domain::ApplyContext {
            msg_id: 1,
            now: now_with_nanos,
        },
        &msg,
        &set,
    );
    let (writes, events) = applied(d);
    writes.iter().for_each(|w| set.insert(w.clone()));
    let original = events
        .iter()
        .find(|e| e.target() == EventTarget::KafkaSchd && e.partition_key() == 15)
        .and_then(DomainEvent::to_bytes)
        .expect("projection");
    // Simulate timestamptz: UTC instants back, airport offset re-applied.
    let mut reloaded = set.get(15).cloned().expect("written");
    assert_eq!(
        reloaded.updated_at.timestamp_subsec_nanos(),
        123_456_000,
        "microseconds kept"
    );
    if let Some(crate::domain::FlightValue::Time(t)) = reloaded.scalars.get_mut(&ScalarTag::SODT) {
        *t = cfg.airport_time(t.with_timezone(&Utc));
    }
    let mafl = crate::domain::mafl::of(15, &set);
    let again = schd_projection(&reloaded, mafl.as_deref()).to_bytes();
    assert_eq!(again, original);
    assert_eq!(
        schd_projection(&reloaded, mafl.as_deref()).to_bytes(),
        again
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e.event_type() == EventType::Upsert)
            .count(),
        4
    );
}
