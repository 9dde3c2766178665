//! A-CDM milestones (issue 36 item 2, docs/events.md "Milestones"): which
//! fields give which code on each side, and which message set each one.

use super::support::*;
use crate::codec::*;
use crate::domain::FlightSet;
use crate::domain::milestones::{
    MAPPINGS, MilestoneCode as C, Milestones, TimeType, UNMAPPED, milestones,
};

const D: &str = "2021-01-23 05:35";

fn of(set: &FlightSet, flid: i64) -> Milestones {
    milestones(set.get(flid).expect("stored"))
}

/// `(code, time as RFC 3339, type, source label, msg_id)` of each milestone.
fn rows(m: &Milestones) -> Vec<(C, String, TimeType, String, Option<i64>)> {
    m.iter()
        .map(|(c, m)| (*c, m.time.to_rfc3339(), m.kind, m.source_label(), m.msg_id))
        .collect()
}

fn chock(seq: i64, chid: &str, at: &str) -> ChockEvent {
    ChockEvent {
        seq: Some(seq),
        chtm: Field::Value(t(at)),
        chid: s(chid),
        chst: s("504"),
        unknown: vec![],
    }
}

/// Decides and writes the FLOP `p` for `flid` as mailbox message `msg_id`.
fn send(set: &mut FlightSet, msg_id: i64, flid: i64, p: FlopPayload) {
    apply(set, msg_id, &flop(flid, p));
}

fn arrival(flid: i64) -> Fltr {
    let mut f = fltr(flid, D);
    put(&mut f, ScalarTag::MVIN, txt("A"));
    f
}

#[test]
fn a_departure_gathers_its_milestones_each_from_the_message_that_set_it() {
    let mut set = seeded(vec![fltr(15, D)]);
    assert_eq!(
        rows(&of(&set, 15)),
        vec![(
            C::Sobt,
            "2021-01-23T05:35:00+08:00".into(),
            TimeType::Sct,
            "SODT".into(),
            Some(1)
        )]
    );
    send(
        &mut set,
        2,
        15,
        FlopPayload::TOBT(Field::Value(t("2021-01-23 05:40"))),
    );
    send(
        &mut set,
        3,
        15,
        FlopPayload::EGSR(Field::Value(t("2021-01-23 05:42"))),
    );
    send(
        &mut set,
        4,
        15,
        FlopPayload::APPT(Field::Value(t("2021-01-23 05:43"))),
    );
    send(
        &mut set,
        5,
        15,
        FlopPayload::CHOT(Collection::Items(vec![chock(1, "OFF", "2021-01-23 05:45")])),
    );
    let mut later = fltr(15, D);
    put(&mut later, ScalarTag::ESTT, tm("2021-01-23 05:55"));
    put(&mut later, ScalarTag::ACTT, tm("2021-01-23 05:58"));
    apply(&mut set, 6, &schd("ADFT", vec![later]));
    let m = of(&set, 15);
    let got = |c: C| {
        let m = &m[&c];
        (m.time.to_rfc3339(), m.kind, m.source_label(), m.msg_id)
    };
    assert_eq!(got(C::Sobt).3, Some(1), "unchanged since the schedule");
    assert_eq!(
        got(C::Tobt),
        (
            "2021-01-23T05:40:00+08:00".into(),
            TimeType::Tar,
            "TOBT".into(),
            Some(2)
        )
    );
    assert_eq!(
        got(C::Asrt),
        (
            "2021-01-23T05:42:00+08:00".into(),
            TimeType::Act,
            "EGSR".into(),
            Some(3)
        )
    );
    assert_eq!(
        got(C::Asat),
        (
            "2021-01-23T05:43:00+08:00".into(),
            TimeType::Act,
            "APPT".into(),
            Some(4)
        )
    );
    assert_eq!(
        got(C::Aobt),
        (
            "2021-01-23T05:45:00+08:00".into(),
            TimeType::Act,
            "CHOT[1].CHTM".into(),
            Some(5)
        )
    );
    assert_eq!(
        got(C::Etot),
        (
            "2021-01-23T05:55:00+08:00".into(),
            TimeType::Est,
            "ESTT".into(),
            Some(6)
        )
    );
    assert_eq!(
        got(C::Atot),
        (
            "2021-01-23T05:58:00+08:00".into(),
            TimeType::Act,
            "ACTT".into(),
            Some(6)
        )
    );
    assert!(
        !m.contains_key(&C::Sibt) && !m.contains_key(&C::Aldt),
        "no arrival codes"
    );

    // A new TOBT moves TOBT alone; the same CHOT again moves nothing.
    send(
        &mut set,
        7,
        15,
        FlopPayload::TOBT(Field::Value(t("2021-01-23 05:50"))),
    );
    send(
        &mut set,
        8,
        15,
        FlopPayload::CHOT(Collection::Items(vec![chock(1, "OFF", "2021-01-23 05:45")])),
    );
    let m2 = of(&set, 15);
    assert_eq!(m2[&C::Tobt].msg_id, Some(7));
    assert_eq!(m2[&C::Aobt].msg_id, Some(5));
    assert_eq!(m2[&C::Etot].msg_id, Some(6));
    // A cleared field takes its milestone away.
    send(&mut set, 9, 15, FlopPayload::TOBT(Field::Empty));
    assert!(!of(&set, 15).contains_key(&C::Tobt));
}

#[test]
fn an_arrival_shows_the_arrival_codes() {
    let mut f = arrival(20);
    put(&mut f, ScalarTag::ESTT, tm("2021-01-23 05:20"));
    put(&mut f, ScalarTag::ACTT, tm("2021-01-23 05:25"));
    put(&mut f, ScalarTag::TOBT, tm("2021-01-23 06:00"));
    let mut set = seeded(vec![f]);
    // Two chocks-on (a tow): the earliest is the in-block; a door opens.
    send(
        &mut set,
        2,
        20,
        FlopPayload::CHOT(Collection::Items(vec![
            chock(1, "ON", "2021-01-23 05:40"),
            chock(2, "ON", "2021-01-23 05:31"),
        ])),
    );
    send(
        &mut set,
        3,
        20,
        FlopPayload::PORT(Collection::Items(vec![door("O", "2021-01-23 05:33")])),
    );
    let m = of(&set, 20);
    let codes: Vec<C> = m.keys().copied().collect();
    assert_eq!(
        codes,
        vec![C::Sibt, C::Eldt, C::Aldt, C::Aibt, C::Acgt],
        "TOBT is a departure code"
    );
    assert_eq!(m[&C::Sibt].msg_id, Some(1));
    assert_eq!(m[&C::Eldt].source, "ESTT");
    assert_eq!(m[&C::Aldt].time.to_rfc3339(), "2021-01-23T05:25:00+08:00");
    assert_eq!(
        (
            m[&C::Aibt].time.to_rfc3339(),
            m[&C::Aibt].source_label(),
            m[&C::Aibt].msg_id
        ),
        (
            "2021-01-23T05:31:00+08:00".into(),
            "CHOT[2].CHTM".into(),
            Some(2)
        )
    );
    assert_eq!(m[&C::Acgt].msg_id, Some(3));
}

#[test]
fn the_ready_time_is_the_last_door_close_and_off_block_falls_back_to_push_back() {
    let mut set = seeded(vec![fltr(30, D)]);
    let doors = |list: Vec<DoorEvent>| flop(30, FlopPayload::PORT(Collection::Items(list)));
    apply(
        &mut set,
        2,
        &doors(vec![
            door("O", "2021-01-23 05:00"),
            door("C", "2021-01-23 05:30"),
        ]),
    );
    let m = of(&set, 30);
    assert_eq!(m[&C::Ardt].time.to_rfc3339(), "2021-01-23T05:30:00+08:00");
    assert_eq!(m[&C::Acgt].time.to_rfc3339(), "2021-01-23T05:00:00+08:00");
    // Opened again after the close: not ready.
    apply(
        &mut set,
        3,
        &doors(vec![
            door("O", "2021-01-23 05:00"),
            door("C", "2021-01-23 05:30"),
            door("O", "2021-01-23 05:32"),
        ]),
    );
    assert!(!of(&set, 30).contains_key(&C::Ardt));

    send(
        &mut set,
        4,
        30,
        FlopPayload::PSHT(Collection::Items(vec![push("504", "2021-01-23 05:41")])),
    );
    let m = of(&set, 30);
    assert_eq!(
        (m[&C::Aobt].source_label(), m[&C::Aobt].msg_id),
        ("PSHT[1].PSTM".into(), Some(4))
    );
    // A chocks-off wins over the push-back once it is there.
    send(
        &mut set,
        5,
        30,
        FlopPayload::CHOT(Collection::Items(vec![chock(1, "OFF", "2021-01-23 05:40")])),
    );
    let m = of(&set, 30);
    assert_eq!(
        (m[&C::Aobt].source.as_str(), m[&C::Aobt].msg_id),
        ("CHOT.CHTM", Some(5))
    );
}

#[test]
fn a_recreated_flight_has_every_milestone_from_the_message_that_recreated_it() {
    let mut set = seeded(vec![fltr(40, D)]);
    apply(&mut set, 2, &fdel(40));
    assert!(!set.get(40).expect("kept as DELETED").is_active());
    apply(&mut set, 3, &schd("ADFT", vec![fltr(40, D)]));
    assert_eq!(of(&set, 40)[&C::Sobt].msg_id, Some(3));
}

#[test]
fn a_flight_written_before_milestones_were_recorded_shows_no_message_until_one_changes() {
    let mut set = seeded(vec![fltr(50, D)]);
    let mut old = set.get(50).expect("stored").clone();
    old.milestone_msgs.clear(); // as an older release stored it
    set.insert(old);
    send(
        &mut set,
        2,
        50,
        FlopPayload::TOBT(Field::Value(t("2021-01-23 05:40"))),
    );
    let m = of(&set, 50);
    assert_eq!((m[&C::Sobt].msg_id, m[&C::Tobt].msg_id), (None, Some(2)));
}

#[test]
fn the_mapping_names_every_code_once_and_derives_at_least_twelve() {
    let mut named: Vec<C> = MAPPINGS.iter().map(|m| m.code).collect();
    named.extend(UNMAPPED.iter().map(|(c, _)| *c));
    named.sort();
    let mut all = C::ALL.to_vec();
    all.sort();
    assert_eq!(named, all, "each of the 21 codes mapped or explained, once");
    assert!(MAPPINGS.len() >= 12, "{} derived", MAPPINGS.len());
    for c in C::ALL {
        assert_eq!(C::from_name(c.as_str()), Some(c));
        assert_eq!(
            serde_json::to_value(c).ok(),
            Some(serde_json::json!(c.as_str()))
        );
    }
}

#[test]
fn the_full_fltr_fills_every_derived_departure_code() {
    let set = seeded(vec![full_fltr(60)]);
    let m = of(&set, 60);
    for want in MAPPINGS
        .iter()
        .filter(|m| m.side != crate::domain::milestones::Side::Arrival)
    {
        assert!(
            m.contains_key(&want.code) || want.code == C::Ardt,
            "{:?} in {m:?}",
            want.code
        );
    }
}

/// docs/events.md's milestone table says what the code does: for each code
/// its side, its type, and every source field (or `none`).
#[test]
fn the_documented_mapping_table_matches_the_code() {
    let doc = include_str!("../../../docs/events.md");
    for code in C::ALL {
        let prefix = format!("| {} |", code.as_str());
        let row = doc
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no row for {}", code.as_str()));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (side, kind, source) = (cells[3], cells[4], cells[5]);
        match MAPPINGS.iter().find(|m| m.code == code) {
            Some(m) => {
                assert_eq!(side, m.side.as_str(), "{row}");
                assert_eq!(kind, m.kind.as_str(), "{row}");
                for s in m.sources {
                    assert!(source.contains(s.field()), "{} not in {row}", s.field());
                }
                assert_eq!(m.ambiguity.is_some(), cells[6].starts_with('⚠'), "{row}");
            }
            None => assert_eq!((kind, source), ("–", "none"), "{row}"),
        }
    }
}
