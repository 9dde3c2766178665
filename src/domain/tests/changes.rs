//! Field-level changes, event kinds and provenance of `msg` records (issue
//! 36 item 1, docs/events.md): per FLOP family and for the relation and
//! lifecycle writes, and the property that applying a notification's
//! `changes` to the flight's previous `schd` projection gives the next one.

use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::props::payload;
use super::support::*;
use crate::codec::*;
use crate::domain::changes::{ChangeOp, FieldChange, apply as apply_changes};
use crate::domain::{
    ChangeNotification, Decision, DomainEvent, EventKind, FlightSet, FlightState, mafl,
    schd_projection,
};

const D: &str = "2021-01-23 05:35";

/// Keys of a projection that are not content: the notification carries them
/// (`milestones` is derived from content fields, docs/events.md).
const LIFECYCLE_KEYS: [&str; 5] = [
    "state_version",
    "last_msg_id",
    "created_at",
    "updated_at",
    "milestones",
];

/// The projection of `flid` in `set` as a consumer holds it (content keys);
/// a flight never written or DELETED (a tombstone) is an empty one.
fn projection(set: &FlightSet, flid: i64) -> Value {
    let empty = FlightState::new(flid, now());
    let f = set.get(flid).filter(|f| f.is_active()).unwrap_or(&empty);
    let mut json = schd_projection(f, mafl::of(flid, set).as_deref()).to_json();
    if let Some(o) = json.as_object_mut() {
        LIFECYCLE_KEYS.iter().for_each(|k| {
            o.remove(*k);
        });
    }
    json
}

fn notes(events: &[DomainEvent]) -> Vec<&ChangeNotification> {
    events
        .iter()
        .filter_map(|e| match e {
            DomainEvent::Msg(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// Decides `msg` on `set`, writes it, and checks every notification: its
/// `changes` applied to the flight's projection before give the one after
/// (a DELETED flight: its content keys but MAFL, its record being a
/// tombstone), and they name exactly the fields of `changed_fields` (MAFL
/// may also switch between null and a list). Returns the notifications.
fn decide_and_check(
    set: &mut FlightSet,
    msg_id: i64,
    msg: &DecodedMessage,
) -> Vec<ChangeNotification> {
    let before = set.clone();
    let d = apply(set, msg_id, msg);
    let Decision::Applied { events, .. } = d else {
        return Vec::new();
    };
    let out: Vec<ChangeNotification> = notes(&events).into_iter().cloned().collect();
    for n in &out {
        let mut got = projection(&before, n.flid);
        let mut want = projection(set, n.flid);
        apply_changes(&mut got, &n.changes)
            .unwrap_or_else(|e| panic!("FLID {} {}: {e}", n.flid, n.msg_kind));
        if n.event_kind == EventKind::Delete {
            // The consumer drops the flight on the tombstone; the changes
            // still turn its content into the DELETED state's.
            want = schd_projection(set.get(n.flid).expect("written"), None).to_json();
            for p in [&mut got, &mut want] {
                if let Some(o) = p.as_object_mut() {
                    o.remove("mafl");
                    LIFECYCLE_KEYS.iter().for_each(|k| {
                        o.remove(*k);
                    });
                }
            }
        }
        assert_eq!(got, want, "FLID {} {}: {:?}", n.flid, n.msg_kind, n.changes);
        let mut named: Vec<&str> = n.changes.iter().map(|c| c.field.as_str()).collect();
        named.dedup();
        let listed: Vec<&str> = n.changed_fields.iter().map(String::as_str).collect();
        let without_mafl = |v: &[&str]| -> Vec<String> {
            v.iter()
                .filter(|f| **f != "MAFL")
                .map(|f| f.to_string())
                .collect()
        };
        // A re-created flight's changed_fields compare with its DELETED
        // state; its changes with an empty flight.
        let recreated = before.get(n.flid).is_some();
        if !(n.event_kind == EventKind::Create && recreated) {
            assert_eq!(
                without_mafl(&named),
                without_mafl(&listed),
                "FLID {}",
                n.flid
            );
        }
        if listed.contains(&"MAFL") {
            assert!(
                named.contains(&"MAFL"),
                "FLID {}: MAFL listed, no change",
                n.flid
            );
        }
        assert_eq!(n.provenance.msg_id, msg_id);
        assert_eq!(n.provenance.msg_kind, n.msg_kind);
    }
    out
}

fn only(notes: &[ChangeNotification], flid: i64) -> &ChangeNotification {
    notes
        .iter()
        .find(|n| n.flid == flid)
        .unwrap_or_else(|| panic!("no notification for {flid}"))
}

#[test]
fn a_scalar_flop_sets_one_field_with_its_old_and_new_value() {
    let mut set = seeded(vec![fltr(15, D)]);
    let n = decide_and_check(
        &mut set,
        2,
        &flop(15, FlopPayload::APPT(Field::Value(t("2021-01-23 06:10")))),
    );
    let n = only(&n, 15);
    assert_eq!(n.event_kind, EventKind::Update);
    assert_eq!(
        n.changes,
        vec![FieldChange {
            field: "APPT".into(),
            index: None,
            op: ChangeOp::Set,
            old: Value::Null,
            new: json!("2021-01-23T06:10:00+08:00"),
        }]
    );
    let n = decide_and_check(
        &mut set,
        3,
        &flop(15, FlopPayload::APPT(Field::Value(t("2021-01-23 06:20")))),
    );
    let c = &only(&n, 15).changes[0];
    assert_eq!(
        (&c.old, &c.new),
        (
            &json!("2021-01-23T06:10:00+08:00"),
            &json!("2021-01-23T06:20:00+08:00")
        )
    );
    let n = decide_and_check(&mut set, 4, &flop(15, FlopPayload::APPT(Field::Empty)));
    assert_eq!(only(&n, 15).changes[0].new, Value::Null, "a cleared field");
}

#[test]
fn a_list_flop_lists_added_changed_and_removed_items_by_position() {
    let mut set = seeded(vec![fltr(15, D)]);
    let n = decide_and_check(
        &mut set,
        2,
        &flop(
            15,
            FlopPayload::GTDT(Collection::Items(vec![gate(1, "A1"), gate(2, "A2")])),
        ),
    );
    let ops: Vec<(Option<usize>, ChangeOp)> = only(&n, 15)
        .changes
        .iter()
        .map(|c| (c.index, c.op))
        .collect();
    assert_eq!(
        ops,
        vec![(Some(0), ChangeOp::Added), (Some(1), ChangeOp::Added)]
    );
    // One gate replaced by another: position 0 changes, position 1 goes.
    let n = decide_and_check(
        &mut set,
        3,
        &flop(
            15,
            FlopPayload::GTDT(Collection::Items(vec![gate(1, "B7")])),
        ),
    );
    let c = &only(&n, 15).changes;
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!((c[0].index, c[0].op), (Some(0), ChangeOp::Changed));
    assert_eq!(c[0].old["gate"], "A1");
    assert_eq!(c[0].new["gate"], "B7");
    assert_eq!(
        (c[1].index, c[1].op, &c[1].new),
        (Some(1), ChangeOp::Removed, &Value::Null)
    );
    assert_eq!(c[1].old["gate"], "A2");
    let n = decide_and_check(
        &mut set,
        4,
        &flop(15, FlopPayload::GTDT(Collection::ClearAll)),
    );
    assert_eq!(only(&n, 15).changes[0].op, ChangeOp::Removed);
}

#[test]
fn an_exception_flop_sets_the_whole_object() {
    let mut set = seeded(vec![fltr(15, D)]);
    let n = decide_and_check(
        &mut set,
        2,
        &flop(
            15,
            FlopPayload::FDIV(Field::Value(Diversion {
                ddes: s("HKG"),
                ddir: s("TO"),
                reason: s("WX"),
            })),
        ),
    );
    let c = &only(&n, 15).changes[0];
    assert_eq!(
        (c.field.as_str(), c.op, &c.old),
        ("FDIV", ChangeOp::Set, &Value::Null)
    );
    assert_eq!(c.new["ddes"], "HKG");
}

#[test]
fn create_delete_and_merge_are_told_apart() {
    let mut set = FlightSet::new();
    let n = decide_and_check(&mut set, 1, &schd("DNLD", vec![fltr(15, D)]));
    let created = only(&n, 15);
    assert_eq!(created.event_kind, EventKind::Create);
    assert!(
        created
            .changes
            .iter()
            .any(|c| c.field == "FLNO" && c.old.is_null())
    );
    assert_eq!(created.provenance.sndr.as_deref(), Some("AODB"));

    // A share joins: the share is created, the master is MERGE (only MAFL).
    let n = decide_and_check(&mut set, 2, &schd("ADFT", vec![share(16, 15, D)]));
    assert_eq!(only(&n, 16).event_kind, EventKind::Create);
    let master = only(&n, 15);
    assert_eq!(master.event_kind, EventKind::Merge);
    assert_eq!(master.changed_fields, vec!["MAFL"]);
    assert_eq!(master.changes.len(), 1);
    assert_eq!(
        (master.changes[0].index, master.changes[0].op),
        (Some(0), ChangeOp::Added)
    );
    assert_eq!(master.changes[0].new, json!({"flid": 16, "flno": "YG16"}));

    // The master is deleted: DELETE for it and its cascaded share.
    let n = decide_and_check(&mut set, 3, &fdel(15));
    for flid in [15, 16] {
        let d = only(&n, flid);
        assert_eq!(d.event_kind, EventKind::Delete, "FLID {flid}");
        assert_eq!(d.changed_fields, vec!["STATE"]);
        assert_eq!(d.changes[0].old, "ACTIVE");
        assert_eq!(d.changes[0].new, "DELETED");
    }

    // Re-created by a schedule: CREATE again.
    let n = decide_and_check(&mut set, 4, &schd("DNLD", vec![fltr(15, D)]));
    assert_eq!(only(&n, 15).event_kind, EventKind::Create);
}

#[test]
fn the_provenance_names_the_message() {
    let mut set = seeded(vec![fltr(15, D)]);
    let mut msg = flop(15, FlopPayload::APPT(Field::Value(t("2021-01-23 06:10"))));
    msg.meta.sndr = "SITA".into();
    msg.meta.seqn = "4711".into();
    msg.meta.dttm = Some(t("2021-01-23 05:00"));
    let n = decide_and_check(&mut set, 9, &msg);
    let p = &only(&n, 15).provenance;
    assert_eq!(
        serde_json::to_value(p).expect("json"),
        json!({"msg_id": 9, "sndr": "SITA", "msg_kind": "FLOP-APPT", "dttm": "2021-01-23T05:00:00+08:00", "seqn": "4711"})
    );
}

#[test]
fn apply_refuses_changes_computed_from_another_state() {
    let mut p = json!({"appt": "2021-01-23T06:10:00+08:00", "gtdt": []});
    let set = |old: Value| FieldChange {
        field: "APPT".into(),
        index: None,
        op: ChangeOp::Set,
        old,
        new: Value::Null,
    };
    assert!(
        apply_changes(&mut p, &[set(Value::Null)]).is_err(),
        "old value differs"
    );
    let add = FieldChange {
        field: "GTDT".into(),
        index: Some(1),
        op: ChangeOp::Added,
        old: Value::Null,
        new: json!({}),
    };
    assert!(apply_changes(&mut p, &[add]).is_err(), "added past the end");
    assert!(apply_changes(&mut p, &[set(json!("2021-01-23T06:10:00+08:00"))]).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any sequence of FLOPs of any family on a master and its share:
    /// every notification's changes turn the previous projection into the
    /// next one.
    #[test]
    fn applying_the_changes_of_any_flops_gives_the_next_projection(
        steps in vec((prop::sample::select(vec![15i64, 16]), payload()), 1..5),
    ) {
        let mut set = seeded(vec![full_fltr(15), share(16, 15, D)]);
        for (i, (flid, p)) in steps.into_iter().enumerate() {
            let id = i64::try_from(i).unwrap_or_default() + 2;
            decide_and_check(&mut set, id, &flop(flid, p));
        }
    }

    /// Relation and lifecycle writes in any order: shares joining and
    /// leaving masters, deletions and re-creations.
    #[test]
    fn applying_the_changes_of_any_relation_writes_gives_the_next_projection(
        steps in vec((0u8..4, 1i64..=4, 1i64..=4), 1..8),
    ) {
        let mut set = seeded(vec![fltr(1, D), fltr(2, D)]);
        for (i, (what, a, b)) in steps.into_iter().enumerate() {
            let id = i64::try_from(i).unwrap_or_default() + 2;
            let msg = match what {
                0 => schd("ADFT", vec![share(a, b, D)]),
                1 => schd("ADFT", vec![fltr(a, D)]),
                2 => fdel(a),
                _ => flop(a, FlopPayload::APPT(Field::Value(t("2021-01-23 06:10")))),
            };
            decide_and_check(&mut set, id, &msg);
        }
    }
}
