//! FDEL (design §12.3) and the master/share projection MAFL (§11.4).

use super::support::*;
use crate::codec::*;
use crate::domain::{
    Decision, DomainError, DomainEvent, EventType, FlightSet, FlightStatus, NoChangeReason,
    SchdPayload,
};

const D: &str = "2021-01-23 05:35";

fn master_with_shares() -> FlightSet {
    // 100 is the master; 103 and 101 are its shares (arrive unsorted).
    seeded(vec![fltr(100, D), share(103, 100, D), share(101, 100, D)])
}

#[test]
fn fdel_marks_deleted_keeps_details_and_emits_a_tombstone() {
    let mut set = seeded(vec![full_fltr(15)]);
    let before = set.get(15).cloned().expect("seeded");
    let (writes, events) = applied(apply(&mut set, 9, &fdel(15)));
    let f = &writes[0];
    assert_eq!(
        (f.state, f.state_version, f.last_msg_id),
        (FlightStatus::Deleted, 2, 9)
    );
    assert_eq!(f.gtdt, before.gtdt, "details kept");
    assert_eq!(f.operation_day, before.operation_day);
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].event_type(), EventType::Tombstone);
    assert_eq!(events[1].to_bytes(), None, "tombstone is a null value");
    match &events[0] {
        DomainEvent::Msg(n) => {
            assert_eq!(n.msg_kind, "FLOP-FDEL");
            assert_eq!(n.changed_fields, vec!["STATE"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn repeated_or_unknown_fdel_is_an_idempotent_no_change() {
    let mut set = seeded(vec![fltr(15, D)]);
    applied(apply(&mut set, 2, &fdel(15)));
    let d = apply(&mut set, 3, &fdel(15));
    assert_eq!(
        d,
        Decision::NoChange {
            reason: NoChangeReason::AlreadyDeleted { flid: 15 }
        }
    );
    let d = apply(&mut set, 4, &fdel(77));
    assert_eq!(
        d,
        Decision::NoChange {
            reason: NoChangeReason::UnknownFlight { flid: 77 }
        }
    );
    assert_eq!(set.get(15).map(|f| f.state_version), Some(2));
}

#[test]
fn fdel_with_content_is_rejected() {
    let set = seeded(vec![fltr(15, D)]);
    let mut msg = fdel(15);
    if let MsgKind::Fdel(f) = &mut msg.kind {
        f.fdel_empty = false;
    }
    let d = engine().decide(&ctx(2), &msg, &set);
    assert_eq!(
        d,
        Decision::Rejected {
            reason: DomainError::FdelNotEmpty { flid: 15 }
        }
    );
}

#[test]
fn mafl_lists_active_shares_sorted_by_flid_and_shares_carry_none() {
    let mut set = FlightSet::new();
    let (_, events) = applied(apply(
        &mut set,
        1,
        &schd(
            "DNLD",
            vec![fltr(100, D), share(103, 100, D), share(101, 100, D)],
        ),
    ));
    assert_eq!(projected_mafl(&events, 100), Some(vec![101, 103]));
    let share_projection = events.iter().find_map(|e| match e {
        DomainEvent::Schd(s) if s.flid == 103 => match &s.payload {
            SchdPayload::Upsert(p) => Some(p.clone()),
            SchdPayload::Tombstone => None,
        },
        _ => None,
    });
    assert_eq!(
        share_projection.and_then(|p| p.mafl),
        None,
        "a share never carries MAFL"
    );
    let mafl = crate::domain::mafl::of(100, &set).expect("master");
    assert_eq!(
        mafl.iter()
            .map(|m| (m.flid, m.flno.clone()))
            .collect::<Vec<_>>(),
        vec![(101, Some("YG101".into())), (103, Some("YG103".into()))]
    );
}

#[test]
fn a_new_share_bumps_its_master_in_the_same_decision() {
    let mut set = master_with_shares();
    let v = set.get(100).map(|f| f.state_version).unwrap_or_default();
    let (writes, events) = applied(apply(&mut set, 2, &schd("ADFT", vec![share(102, 100, D)])));
    assert_eq!(
        writes.iter().map(|w| w.flid).collect::<Vec<_>>(),
        vec![102, 100]
    );
    assert_eq!(write_of(&writes, 100).state_version, v + 1);
    assert_eq!(changed_of(&events, 100), vec!["MAFL"]);
    assert_eq!(projected_mafl(&events, 100), Some(vec![101, 102, 103]));
    assert_eq!(
        events.len(),
        4,
        "share and master each get notification + projection"
    );
}

#[test]
fn a_maid_move_bumps_both_masters() {
    let mut set = seeded(vec![fltr(100, D), fltr(200, D), share(101, 100, D)]);
    let mut moved = share(101, 200, D);
    put(&mut moved, ScalarTag::CSFT, txt("YG100"));
    let (writes, events) = applied(apply(&mut set, 2, &schd("DNLD", vec![moved])));
    let mut ids: Vec<i64> = writes.iter().map(|w| w.flid).collect();
    ids.sort();
    assert_eq!(ids, vec![100, 101, 200]);
    assert_eq!(projected_mafl(&events, 100), Some(vec![]));
    assert_eq!(projected_mafl(&events, 200), Some(vec![101]));
}

#[test]
fn a_share_flno_change_refreshes_the_master_projection() {
    let mut set = master_with_shares();
    let mut renamed = share(101, 100, D);
    put(&mut renamed, ScalarTag::FLNO, txt("CA7"));
    let (writes, events) = applied(apply(&mut set, 2, &schd("DNLD", vec![renamed])));
    assert_eq!(writes.len(), 2);
    assert_eq!(changed_of(&events, 100), vec!["MAFL"]);
}

#[test]
fn a_share_change_that_leaves_mafl_alone_does_not_touch_the_master() {
    let mut set = master_with_shares();
    let (writes, _) = applied(apply(&mut set, 2, &flop(101, FlopPayload::STND(s("9")))));
    assert_eq!(writes.iter().map(|w| w.flid).collect::<Vec<_>>(), vec![101]);
}

#[test]
fn deleting_a_share_recomputes_and_notifies_its_master() {
    let mut set = master_with_shares();
    let v = set.get(100).map(|f| f.state_version).unwrap_or_default();
    let (writes, events) = applied(apply(&mut set, 2, &fdel(103)));
    assert_eq!(
        writes.iter().map(|w| w.flid).collect::<Vec<_>>(),
        vec![103, 100]
    );
    assert_eq!(write_of(&writes, 100).state_version, v + 1);
    assert_eq!(projected_mafl(&events, 100), Some(vec![101]));
    assert_eq!(
        set.get(103).map(|f| f.int(ScalarTag::MAID)),
        Some(Some(100)),
        "the deleted share keeps its details"
    );
}

#[test]
fn deleting_a_master_detaches_and_notifies_its_shares() {
    let mut set = master_with_shares();
    let (writes, events) = applied(apply(&mut set, 2, &fdel(100)));
    assert_eq!(
        writes.iter().map(|w| w.flid).collect::<Vec<_>>(),
        vec![100, 101, 103]
    );
    for flid in [101, 103] {
        let s = write_of(&writes, flid);
        assert_eq!(
            (
                s.int(ScalarTag::MAID),
                s.text(ScalarTag::CSOP),
                s.text(ScalarTag::CSFT)
            ),
            (None, None, None)
        );
        assert_eq!(s.state_version, 2);
        assert_eq!(changed_of(&events, flid), vec!["CSOP", "CSFT", "MAID"]);
        assert_eq!(
            projected_mafl(&events, flid),
            Some(vec![]),
            "a detached share is a master of nothing"
        );
    }
    assert_eq!(write_of(&writes, 100).state, FlightStatus::Deleted);
    assert_eq!(events.len(), 6);
    // Idempotent afterwards.
    assert!(matches!(
        apply(&mut set, 3, &fdel(100)),
        Decision::NoChange { .. }
    ));
}

#[test]
fn self_reference_and_dangling_maid_produce_no_projection() {
    let mut set = FlightSet::new();
    let (writes, events) = applied(apply(
        &mut set,
        1,
        &schd("DNLD", vec![share(5, 5, D), share(6, 999, D)]),
    ));
    assert_eq!(writes.len(), 2, "no write for the missing master 999");
    assert_eq!(
        projected_mafl(&events, 5),
        Some(vec![]),
        "self-reference: a master without itself"
    );
    assert_eq!(
        crate::domain::mafl::of(6, &set),
        None,
        "a dangling share is still a share"
    );
}

#[test]
fn deleted_shares_leave_the_projection() {
    let mut set = master_with_shares();
    applied(apply(&mut set, 2, &fdel(101)));
    let (_, events) = applied(apply(&mut set, 3, &flop(100, FlopPayload::STND(s("1")))));
    assert_eq!(projected_mafl(&events, 100), Some(vec![103]));
}

#[test]
fn loading_protocol_names_flights_and_possible_masters() {
    let e = engine();
    let msg = schd(
        "DNLD",
        vec![share(101, 100, D), fltr(7, D), share(9, 200, D)],
    );
    assert_eq!(e.flids_to_load(&msg), vec![7, 9, 101]);
    let loaded = seeded(vec![share(7, 300, D)]);
    assert_eq!(
        e.masters_to_load(&msg, &loaded),
        vec![7, 9, 100, 101, 200, 300]
    );
    assert_eq!(e.flids_to_load(&fdel(4)), vec![4]);
    assert_eq!(e.masters_to_load(&fdel(4), &FlightSet::new()), vec![4]);
    assert_eq!(
        e.flids_to_load(&flop(5, FlopPayload::STND(Field::Empty))),
        vec![5]
    );
}

#[test]
fn a_share_whose_master_is_not_loaded_is_still_processed() {
    let set = seeded(vec![share(101, 100, D)]);
    let (writes, _) = applied(engine().decide(&ctx(2), &fdel(101), &set));
    assert_eq!(writes.len(), 1);
}
