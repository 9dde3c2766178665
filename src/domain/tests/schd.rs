//! SCHD DNLD/RESP and ADFT (design §12.1, §12.3; INV-12, INV-15, INV-19) and
//! the operation-day rules (§11.2).

use chrono::NaiveTime;

use super::support::*;
use crate::codec::*;
use crate::domain::{
    AbsentFieldPolicy, Decision, DomainConfig, DomainError, FlightSet, FlightStateEngine,
    FlightStatus, FlightValue,
};

fn rejected(d: Decision) -> DomainError {
    match d {
        Decision::Rejected { reason } => reason,
        other => panic!("expected Rejected, got {other:?}"),
    }
}

fn decide(set: &FlightSet, msg: &DecodedMessage) -> Decision {
    engine().decide(&ctx(5), msg, set)
}

#[test]
fn recs_must_equal_the_number_of_fltr() {
    let set = FlightSet::new();
    let two = vec![fltr(1, "2021-01-23 05:35"), fltr(2, "2021-01-23 06:35")];
    let e = rejected(decide(
        &set,
        &schd_recs("DNLD", Field::Value(3), two.clone()),
    ));
    assert_eq!(
        e,
        DomainError::RecsMismatch {
            recs: Some(3),
            count: 2
        }
    );
    let e = rejected(decide(&set, &schd_recs("RESP", Field::Absent, two.clone())));
    assert_eq!(
        e,
        DomainError::RecsMismatch {
            recs: None,
            count: 2
        }
    );
    let e = rejected(decide(&set, &schd_recs("ADFT", Field::Value(1), two)));
    assert_eq!(
        e,
        DomainError::RecsMismatch {
            recs: Some(1),
            count: 2
        }
    );
}

#[test]
fn a_fltr_without_flid_rejects_the_whole_package() {
    let mut no_flid = fltr(2, "2021-01-23 05:35");
    no_flid.scalars.retain(|(t, _)| *t != ScalarTag::FLID);
    let msg = schd("DNLD", vec![fltr(1, "2021-01-23 05:35"), no_flid]);
    assert_eq!(
        rejected(decide(&FlightSet::new(), &msg)),
        DomainError::MissingFlid { index: 2 }
    );
}

#[test]
fn a_fltr_without_parsable_sodt_rejects_the_whole_package() {
    let mut f = fltr(2, "2021-01-23 05:35");
    put(&mut f, ScalarTag::SODT, Field::Empty);
    let msg = schd("DNLD", vec![fltr(1, "2021-01-23 05:35"), f.clone()]);
    assert_eq!(
        rejected(decide(&FlightSet::new(), &msg)),
        DomainError::MissingSodt { index: 2, flid: 2 }
    );
    f.scalars.retain(|(t, _)| *t != ScalarTag::SODT);
    let msg = schd("RESP", vec![f]);
    assert_eq!(
        rejected(decide(&FlightSet::new(), &msg)),
        DomainError::MissingSodt { index: 1, flid: 2 }
    );
}

#[test]
fn an_underivable_operation_day_rejects() {
    let mut f = fltr(1, "2021-01-23 05:35");
    let min = chrono::NaiveDate::MIN.and_hms_opt(1, 0, 0).expect("valid");
    put(
        &mut f,
        ScalarTag::SODT,
        Field::Value(ScalarValue::Time(min)),
    );
    let cfg = DomainConfig {
        day_cutover: NaiveTime::from_hms_opt(4, 0, 0).expect("valid"),
        ..DomainConfig::default()
    };
    let d = FlightStateEngine::new(cfg).decide(&ctx(1), &schd("DNLD", vec![f]), &FlightSet::new());
    assert!(matches!(
        rejected(d),
        DomainError::OperationDayUnderivable { flid: 1, .. }
    ));
}

#[test]
fn a_different_stored_operation_day_rejects_and_writes_nothing() {
    let set = seeded(vec![
        fltr(1, "2021-01-23 05:35"),
        fltr(2, "2021-01-23 05:35"),
    ]);
    let msg = schd(
        "DNLD",
        vec![fltr(2, "2021-01-23 09:00"), fltr(1, "2021-01-24 05:35")],
    );
    assert_eq!(
        rejected(decide(&set, &msg)),
        DomainError::OperationDayConflict {
            flid: 1,
            stored: day("2021-01-23"),
            derived: day("2021-01-24")
        }
    );
}

#[test]
fn the_same_flid_twice_in_a_package_must_agree_on_the_day() {
    let msg = schd(
        "DNLD",
        vec![fltr(1, "2021-01-23 05:35"), fltr(1, "2021-01-24 05:35")],
    );
    assert!(matches!(
        rejected(decide(&FlightSet::new(), &msg)),
        DomainError::OperationDayConflict { flid: 1, .. }
    ));
    // Agreeing repeats overlay each other into one write.
    let mut second = fltr(1, "2021-01-23 07:00");
    put(&mut second, ScalarTag::RENO, txt("B1234"));
    let (writes, _) = applied(decide(
        &FlightSet::new(),
        &schd("DNLD", vec![fltr(1, "2021-01-23 05:35"), second]),
    ));
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].text(ScalarTag::RENO), Some("B1234"));
}

#[test]
fn invalid_codes_in_a_schedule_reject_it() {
    let mut f = fltr(1, "2021-01-23 05:35");
    put(&mut f, ScalarTag::MVIN, txt("X"));
    assert!(matches!(
        rejected(decide(&FlightSet::new(), &schd("DNLD", vec![f]))),
        DomainError::InvalidCode { field: "MVIN", .. }
    ));
    let mut f = fltr(1, "2021-01-23 05:35");
    f.fdiv = Field::Value(Diversion {
        ddes: s("PEK"),
        ddir: s("TOO"),
        reason: Field::Absent,
    });
    assert!(matches!(
        rejected(decide(&FlightSet::new(), &schd("DNLD", vec![f]))),
        DomainError::InvalidCode { .. }
    ));
}

#[test]
fn other_schd_subtypes_are_rejected() {
    let d = decide(
        &FlightSet::new(),
        &schd("XYZ", vec![fltr(1, "2021-01-23 05:35")]),
    );
    assert!(matches!(rejected(d), DomainError::NotFlightMessage { .. }));
}

#[test]
fn schedule_creates_flights_with_operation_day_and_times_in_airport_zone() {
    let (writes, events) = applied(decide(
        &FlightSet::new(),
        &schd("DNLD", vec![full_fltr(15)]),
    ));
    let f = &writes[0];
    assert_eq!(
        (f.flid, f.state, f.state_version, f.last_msg_id),
        (15, FlightStatus::Active, 1, 5)
    );
    assert_eq!(f.operation_day, Some(day("2021-01-23")));
    assert_eq!(f.created_at, now());
    match f.scalar(ScalarTag::SODT) {
        Some(FlightValue::Time(t)) => assert_eq!(t.to_rfc3339(), "2021-01-23T05:35:00+08:00"),
        other => panic!("SODT {other:?}"),
    }
    assert_eq!(
        f.gtdt.len(),
        2,
        "two allocations of the same gate are both kept"
    );
    assert_eq!((f.rout.len(), f.erut.len()), (2, 2));
    assert_eq!(events.len(), 2);
}

#[test]
fn cutover_assigns_early_flights_to_the_previous_day() {
    let cfg = DomainConfig {
        day_cutover: NaiveTime::from_hms_opt(4, 0, 0).expect("valid"),
        ..DomainConfig::default()
    };
    let e = FlightStateEngine::new(cfg);
    let msg = schd(
        "DNLD",
        vec![fltr(1, "2021-01-23 03:59"), fltr(2, "2021-01-23 04:00")],
    );
    let (writes, _) = applied(e.decide(&ctx(1), &msg, &FlightSet::new()));
    assert_eq!(write_of(&writes, 1).operation_day, Some(day("2021-01-22")));
    assert_eq!(write_of(&writes, 2).operation_day, Some(day("2021-01-23")));
}

#[test]
fn preserve_keeps_absent_fields_and_empty_elements_clear() {
    let mut set = seeded(vec![full_fltr(15)]);
    let mut f = fltr(15, "2021-01-23 05:35");
    put(&mut f, ScalarTag::REMC, Field::Empty);
    f.dely = Collection::ClearAll;
    f.gtdt = Collection::Items(vec![gate(1, "G7")]);
    let (writes, events) = applied(apply(&mut set, 6, &schd("DNLD", vec![f])));
    let next = &writes[0];
    assert_eq!(
        next.text(ScalarTag::RENO),
        Some("RENO15"),
        "absent RENO kept"
    );
    assert!(
        next.fdiv.is_some() && next.srvt.len() == 2,
        "absent FDIV and SRVT kept"
    );
    assert_eq!(next.text(ScalarTag::REMC), None, "empty REMC cleared");
    assert!(next.dely.is_empty(), "bare DELY cleared");
    assert_eq!(next.gtdt.len(), 1, "items replace the list");
    let mut changed = changed_of(&events, 15);
    changed.sort();
    assert_eq!(
        changed,
        vec!["ACFT", "ALCD", "DELY", "FLNO", "FLTY", "GTDT", "REMC"]
    );
}

#[test]
fn clear_policy_clears_absent_fields() {
    let cfg = DomainConfig {
        absent_field_policy: AbsentFieldPolicy::Clear,
        ..DomainConfig::default()
    };
    let set = seeded(vec![full_fltr(15)]);
    let d = FlightStateEngine::new(cfg).decide(
        &ctx(6),
        &schd("DNLD", vec![fltr(15, "2021-01-23 05:35")]),
        &set,
    );
    let (writes, _) = applied(d);
    let next = &writes[0];
    assert_eq!(next.text(ScalarTag::RENO), None);
    assert!(next.fdiv.is_none() && next.gtdt.is_empty() && next.vipf.is_empty());
    assert_eq!(next.text(ScalarTag::FLNO), Some("YG15"));
    assert_eq!(next.operation_day, Some(day("2021-01-23")));
}

#[test]
fn a_schedule_never_deletes_flights_it_does_not_carry() {
    let mut set = seeded(vec![
        fltr(1, "2021-01-23 05:35"),
        fltr(2, "2021-01-23 06:35"),
    ]);
    let mut f = fltr(1, "2021-01-23 05:35");
    put(&mut f, ScalarTag::STND, txt("101"));
    let (writes, _) = applied(apply(&mut set, 7, &schd("DNLD", vec![f])));
    assert_eq!(writes.iter().map(|w| w.flid).collect::<Vec<_>>(), vec![1]);
    assert!(
        set.get(2)
            .is_some_and(|f| f.is_active() && f.state_version == 1)
    );
}

#[test]
fn an_unchanged_schedule_is_no_change() {
    let set = seeded(vec![fltr(1, "2021-01-23 05:35")]);
    let d = decide(&set, &schd("RESP", vec![fltr(1, "2021-01-23 05:35")]));
    assert!(matches!(d, Decision::NoChange { .. }), "{d:?}");
}

#[test]
fn a_schedule_rebuilds_a_deleted_flight_from_empty() {
    let mut set = seeded(vec![full_fltr(15)]);
    applied(apply(&mut set, 2, &fdel(15)));
    let (writes, events) = applied(apply(
        &mut set,
        3,
        &schd("DNLD", vec![fltr(15, "2021-01-23 05:35")]),
    ));
    let f = &writes[0];
    assert_eq!((f.state, f.state_version), (FlightStatus::Active, 3));
    assert_eq!(
        f.text(ScalarTag::RENO),
        None,
        "details of the deleted flight do not leak"
    );
    assert!(f.gtdt.is_empty());
    assert!(changed_of(&events, 15).contains(&"STATE".to_string()));
}

#[test]
fn operation_day_is_never_changed_by_flop_or_adft() {
    let mut set = seeded(vec![fltr(1, "2021-01-23 05:35")]);
    // An ADFT SODT on another operation day is a conflict (INV-12),
    // not a silent SODT move under the old day.
    let mut later = fltr(1, "2021-01-25 05:35");
    put(&mut later, ScalarTag::STND, txt("9"));
    assert_eq!(
        rejected(decide(&set, &schd("ADFT", vec![later]))),
        DomainError::OperationDayConflict {
            flid: 1,
            stored: day("2021-01-23"),
            derived: day("2021-01-25"),
        }
    );
    // The same day (a later time): SODT moves, the day stays.
    let mut same_day = fltr(1, "2021-01-23 09:00");
    put(&mut same_day, ScalarTag::STND, txt("9"));
    let (writes, _) = applied(apply(&mut set, 2, &schd("ADFT", vec![same_day])));
    assert_eq!(
        writes[0].operation_day,
        Some(day("2021-01-23")),
        "ADFT keeps the day"
    );
    assert_eq!(writes[0].text(ScalarTag::STND), Some("9"));
    let (writes, _) = applied(apply(
        &mut set,
        3,
        &flop(1, FlopPayload::APPT(Field::Value(t("2021-01-26 05:00")))),
    ));
    assert_eq!(
        writes[0].operation_day,
        Some(day("2021-01-23")),
        "FLOP keeps the day"
    );
}

#[test]
fn adft_is_set_only() {
    for policy in [AbsentFieldPolicy::Preserve, AbsentFieldPolicy::Clear] {
        let cfg = DomainConfig {
            absent_field_policy: policy,
            ..DomainConfig::default()
        };
        let set = seeded(vec![full_fltr(15)]);
        let mut f = Fltr::default();
        put(&mut f, ScalarTag::FLID, int(15));
        put(&mut f, ScalarTag::RENO, txt("B9"));
        put(&mut f, ScalarTag::REMC, Field::Empty);
        f.chot = Collection::ClearAll;
        let d = FlightStateEngine::new(cfg).decide(&ctx(3), &schd("ADFT", vec![f]), &set);
        let (writes, _) = applied(d);
        let n = &writes[0];
        assert_eq!(n.text(ScalarTag::RENO), Some("B9"));
        assert_eq!(n.text(ScalarTag::REMC), None, "explicit empty clears");
        assert!(n.chot.is_empty());
        assert_eq!(
            n.text(ScalarTag::STND),
            Some("STND15"),
            "absent kept under {policy:?}"
        );
        assert_eq!(n.gtdt.len(), 2);
    }
}

#[test]
fn adft_creates_flights_with_or_without_operation_day() {
    let no_sodt = fltr_without_sodt(8);
    let msg = schd("ADFT", vec![fltr(7, "2021-01-23 05:35"), no_sodt]);
    let (writes, _) = applied(decide(&FlightSet::new(), &msg));
    assert_eq!(write_of(&writes, 7).operation_day, Some(day("2021-01-23")));
    assert_eq!(write_of(&writes, 8).operation_day, None);
    let mut no_flid = Fltr::default();
    put(&mut no_flid, ScalarTag::RENO, txt("B1"));
    assert_eq!(
        rejected(decide(&FlightSet::new(), &schd("ADFT", vec![no_flid]))),
        DomainError::MissingFlid { index: 1 }
    );
}

#[test]
fn a_later_schedule_fills_a_null_operation_day() {
    let mut set = FlightSet::new();
    applied(apply(
        &mut set,
        1,
        &schd("ADFT", vec![fltr_without_sodt(8)]),
    ));
    let (writes, _) = applied(apply(
        &mut set,
        2,
        &schd("DNLD", vec![fltr(8, "2021-01-24 01:00")]),
    ));
    assert_eq!(writes[0].operation_day, Some(day("2021-01-24")));
}

/// sis-format §2.1: a DNLD/RESP FLTR without a value for a
/// mandatory field rejects the whole package, under either policy; an empty
/// element never clears one (the old code published `flno: null`).
#[test]
fn a_fltr_without_a_mandatory_field_rejects_the_whole_package() {
    let set = seeded(vec![full_fltr(15)]);
    for policy in [AbsentFieldPolicy::Preserve, AbsentFieldPolicy::Clear] {
        let e = FlightStateEngine::new(DomainConfig {
            absent_field_policy: policy,
            ..DomainConfig::default()
        });
        for &tag in crate::domain::rules::schd::MANDATORY {
            for (how, field) in [("absent", None), ("empty", Some(Field::Empty))] {
                let mut f = fltr(15, "2021-01-23 05:35");
                match field {
                    None => f.scalars.retain(|(t, _)| *t != tag),
                    Some(v) => put(&mut f, tag, v),
                }
                for styp in ["DNLD", "RESP"] {
                    let msg = schd(styp, vec![fltr(16, "2021-01-23 05:35"), f.clone()]);
                    assert_eq!(
                        rejected(e.decide(&ctx(5), &msg, &set)),
                        DomainError::MissingMandatory {
                            index: 2,
                            flid: 15,
                            field: tag.name()
                        },
                        "{styp}, {} {how}, {policy:?}",
                        tag.name()
                    );
                }
            }
        }
    }
}

/// ADFT is set-only, so an existing flight may omit mandatory fields, but an
/// empty one (`<ACFT></ACFT>`) would clear it and is rejected; a flight ADFT
/// creates must carry them all (SODT stays optional, §12.3).
#[test]
fn adft_never_clears_a_mandatory_field_and_creates_only_complete_flights() {
    let set = seeded(vec![full_fltr(15)]);
    let mut clear_acft = Fltr::default();
    put(&mut clear_acft, ScalarTag::FLID, int(15));
    put(&mut clear_acft, ScalarTag::ACFT, Field::Empty);
    assert_eq!(
        rejected(decide(&set, &schd("ADFT", vec![clear_acft]))),
        DomainError::MissingMandatory {
            index: 1,
            flid: 15,
            field: "ACFT"
        }
    );
    let mut clear_sodt = Fltr::default();
    put(&mut clear_sodt, ScalarTag::FLID, int(15));
    put(&mut clear_sodt, ScalarTag::SODT, Field::Empty);
    assert_eq!(
        rejected(decide(&set, &schd("ADFT", vec![clear_sodt]))),
        DomainError::MissingMandatory {
            index: 1,
            flid: 15,
            field: "SODT"
        }
    );
    let mut no_flno = fltr_without_sodt(8);
    no_flno.scalars.retain(|(t, _)| *t != ScalarTag::FLNO);
    assert_eq!(
        rejected(decide(&set, &schd("ADFT", vec![no_flno]))),
        DomainError::MissingMandatory {
            index: 1,
            flid: 8,
            field: "FLNO"
        }
    );
}

/// INV-12: an ADFT on a flight whose operation day is NULL sets
/// it from a parsable SODT (the old code left it NULL for existing flights).
#[test]
fn adft_sets_a_null_operation_day_from_its_sodt() {
    let mut set = FlightSet::new();
    applied(apply(
        &mut set,
        1,
        &schd("ADFT", vec![fltr_without_sodt(8)]),
    ));
    assert_eq!(set.get(8).and_then(|f| f.operation_day), None);
    let (writes, events) = applied(apply(
        &mut set,
        2,
        &schd("ADFT", vec![fltr(8, "2021-01-24 01:00")]),
    ));
    assert_eq!(writes[0].operation_day, Some(day("2021-01-24")));
    assert!(changed_of(&events, 8).contains(&"OPERATION_DAY".to_string()));
    // The next DNLD carrying that SODT applies (no conflict).
    applied(apply(
        &mut set,
        3,
        &schd("DNLD", vec![fltr(8, "2021-01-24 01:30")]),
    ));
}

/// A FLID that flight-history-clean removed continues its version
/// line when a schedule re-creates it (the processor loads the retired
/// version into the set).
#[test]
fn a_re_created_flight_continues_its_retired_version() {
    let mut set = FlightSet::new();
    set.set_retired_version(15, 7);
    let (writes, events) = applied(decide(
        &set,
        &schd("DNLD", vec![fltr(15, "2021-01-23 05:35")]),
    ));
    assert_eq!(writes[0].state_version, 8);
    assert!(matches!(&events[0], crate::domain::DomainEvent::Msg(n) if n.state_version == 8));
    assert_eq!(set.last_version(16), 0, "never written");
}
