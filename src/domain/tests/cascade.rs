//! FDEL (design §12.3) and the master/share projection MAFL (§11.4).

use super::support::*;
use crate::codec::*;
use crate::domain::{
    ChangeKind, Decision, DomainError, DomainEvent, EventType, FlightSet, FlightStatus,
    NoChangeReason, SchdPayload,
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

/// The change notification of `flid` among `events`.
fn note_of(events: &[DomainEvent], flid: i64) -> &crate::domain::ChangeNotification {
    events
        .iter()
        .find_map(|e| match e {
            DomainEvent::Msg(n) if n.flid == flid => Some(n),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no notification for {flid}"))
}

/// Deleting a master deletes its ACTIVE shares in the same decision
/// (§12.3: no state where the master is deleted and its children remain),
/// each with its own DELETE notification and tombstone; the master's DELETE
/// lists only STATE (docs/events.md). The old code detached the shares and
/// published them as ACTIVE upserts.
#[test]
fn deleting_a_master_deletes_its_active_shares_with_it() {
    let mut set = master_with_shares();
    // 104 was deleted earlier; 200 is a share of another master.
    applied(apply(&mut set, 2, &schd("ADFT", vec![share(104, 100, D)])));
    applied(apply(&mut set, 3, &fdel(104)));
    applied(apply(
        &mut set,
        4,
        &schd("ADFT", vec![fltr(300, D), share(200, 300, D)]),
    ));
    let before = set.clone();
    let (writes, events) = applied(apply(&mut set, 5, &fdel(100)));
    assert_eq!(
        writes.iter().map(|w| w.flid).collect::<Vec<_>>(),
        vec![100, 101, 103],
        "the master, then its ACTIVE shares by FLID"
    );
    for flid in [100, 101, 103] {
        let w = write_of(&writes, flid);
        let old = before.get(flid).expect("loaded");
        assert_eq!(w.state, FlightStatus::Deleted);
        assert_eq!(w.state_version, old.state_version + 1);
        let mut kept = w.clone();
        kept.state = old.state;
        kept.state_version = old.state_version;
        kept.last_msg_id = old.last_msg_id;
        kept.updated_at = old.updated_at;
        assert_eq!(&kept, old, "FLID {flid}: every detail kept (MAID too)");
        let n = note_of(&events, flid);
        assert_eq!(
            (n.change, n.changed_fields.clone(), n.msg_kind.as_str()),
            (ChangeKind::Delete, vec!["STATE".to_string()], "FLOP-FDEL"),
            "FLID {flid}"
        );
        assert!(
            events.iter().any(|e| matches!(e, DomainEvent::Schd(s)
                if s.flid == flid && s.payload == SchdPayload::Tombstone)),
            "FLID {flid} has its tombstone"
        );
    }
    assert_eq!(
        events.len(),
        6,
        "notification + tombstone for each of three"
    );
    assert_eq!(
        set.get(104).map(|f| f.state_version),
        before.get(104).map(|f| f.state_version)
    );
    assert!(
        set.get(200).is_some_and(|f| f.is_active()),
        "another master's share is untouched"
    );
    // Idempotent afterwards.
    assert!(matches!(
        apply(&mut set, 6, &fdel(100)),
        Decision::NoChange { .. }
    ));
}

/// sis-format §2.1: SCHD DEL deletes each listed flight exactly as
/// an FDEL of it would (same next state, version, events but the kind),
/// skipping unknown and already deleted FLIDs, in one decision.
#[test]
fn schd_del_deletes_each_listed_flight_like_fdel() {
    let mut set = seeded(vec![full_fltr(15), fltr(16, D), fltr(17, D)]);
    applied(apply(&mut set, 2, &fdel(17)));
    let msg = schd(
        "DEL",
        vec![
            fltr(15, D),
            fltr(16, D),
            fltr(17, D),
            fltr(99, D),
            fltr(15, D),
        ],
    );
    let (writes, events) = applied(engine().decide(&ctx(3), &msg, &set));
    assert_eq!(
        writes.iter().map(|w| w.flid).collect::<Vec<_>>(),
        vec![15, 16],
        "17 already deleted, 99 unknown, 15 once"
    );
    for flid in [15, 16] {
        let (by_fdel, fdel_events) = applied(engine().decide(&ctx(3), &fdel(flid), &set));
        assert_eq!(write_of(&writes, flid), &by_fdel[0], "FLID {flid}");
        let n = note_of(&events, flid);
        assert_eq!(n.msg_kind, "SCHD-DEL");
        assert_eq!(n.provenance.msg_kind, "SCHD-DEL");
        let by_fdel_note = note_of(&fdel_events, flid);
        let mut same = n.clone();
        same.msg_kind = "FLOP-FDEL".into();
        same.provenance = by_fdel_note.provenance.clone();
        assert_eq!(&same, by_fdel_note);
    }
    assert_eq!(write_of(&writes, 15).gtdt.len(), 2, "details kept");
    // Every FLID gone already: an idempotent success without events.
    for w in writes {
        set.insert(w);
    }
    assert_eq!(
        engine().decide(&ctx(4), &msg, &set),
        Decision::NoChange {
            reason: NoChangeReason::NothingToDelete
        }
    );
}

#[test]
fn schd_del_of_a_master_cascades_to_its_shares() {
    let set = master_with_shares();
    let (writes, events) =
        applied(engine().decide(&ctx(2), &schd("DEL", vec![fltr(100, D)]), &set));
    assert_eq!(
        writes.iter().map(|w| (w.flid, w.state)).collect::<Vec<_>>(),
        vec![
            (100, FlightStatus::Deleted),
            (101, FlightStatus::Deleted),
            (103, FlightStatus::Deleted)
        ]
    );
    assert_eq!(note_of(&events, 103).msg_kind, "SCHD-DEL");
    // Listing the share too deletes it once.
    let both = schd("DEL", vec![fltr(103, D), fltr(100, D)]);
    let (writes, _) = applied(engine().decide(&ctx(2), &both, &set));
    assert_eq!(
        writes.iter().map(|w| w.flid).collect::<Vec<_>>(),
        vec![103, 100, 101]
    );
}

/// Package validation as for DNLD (RECS, FLID, SODT, the mandatory fields and
/// their codes): any failure rejects the whole package, nothing is deleted.
#[test]
fn schd_del_validates_the_whole_package() {
    let set = seeded(vec![fltr(15, D), fltr(16, D)]);
    let decide = |msg: &DecodedMessage| engine().decide(&ctx(2), msg, &set);
    let mut no_acft = fltr(16, D);
    no_acft.scalars.retain(|(t, _)| *t != ScalarTag::ACFT);
    let mut bad_mvin = fltr(16, D);
    put(&mut bad_mvin, ScalarTag::MVIN, txt("X"));
    let mut no_sodt = fltr(16, D);
    put(&mut no_sodt, ScalarTag::SODT, Field::Empty);
    let cases = [
        (
            schd_recs("DEL", Field::Value(3), vec![fltr(15, D), fltr(16, D)]),
            "RECS is 3",
        ),
        (schd("DEL", vec![fltr(15, D), no_acft]), "has no ACFT"),
        (schd("DEL", vec![fltr(15, D), bad_mvin]), "MVIN"),
        (schd("DEL", vec![fltr(15, D), no_sodt]), "SODT"),
    ];
    for (msg, reason) in cases {
        match decide(&msg) {
            Decision::Rejected { reason: r } => {
                assert!(r.to_string().contains(reason), "{r} does not name {reason}");
            }
            other => panic!("expected a rejection naming {reason}, got {other:?}"),
        }
    }
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

#[test]
fn a_lifecycle_delete_is_an_fdel_said_to_be_lifecycle_clean() {
    let set = master_with_shares();
    let ctx = ctx(0);
    let by_fdel = engine().decide(&ctx, &fdel(100), &set);
    let by_clean = engine().lifecycle_delete(&ctx, 100, &set);
    let (fdel_writes, fdel_events) = applied(by_fdel);
    let (writes, events) = applied(by_clean);
    assert_eq!(writes, fdel_writes, "the same states, the cascade included");
    assert_eq!(writes.len(), 3, "master and both shares");
    assert_eq!(events.len(), fdel_events.len());
    for (e, f) in events.iter().zip(&fdel_events) {
        match (e, f) {
            (DomainEvent::Msg(a), DomainEvent::Msg(b)) => {
                assert_eq!(a.msg_kind, crate::domain::engine::LIFECYCLE_CLEAN);
                assert_eq!(b.msg_kind, "FLOP-FDEL");
                assert_eq!((a.flid, &a.changed_fields), (b.flid, &b.changed_fields));
            }
            _ => assert_eq!(e, f, "schd records and tombstones are the same"),
        }
    }
    let mut deleted = set.clone();
    for w in &writes {
        deleted.insert(w.clone());
    }
    assert_eq!(
        engine().lifecycle_delete(&ctx, 100, &deleted),
        Decision::NoChange {
            reason: NoChangeReason::AlreadyDeleted { flid: 100 }
        }
    );
    assert_eq!(
        engine().lifecycle_delete(&ctx, 7, &set),
        Decision::NoChange {
            reason: NoChangeReason::UnknownFlight { flid: 7 }
        }
    );
}
