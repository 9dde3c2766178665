//! Table-driven tests for every FLOP subtype (sis-format §3.3, INV-20):
//! set, clear, replace, merge, reject, and "unchanged is no change".

use std::collections::BTreeSet;

use chrono::NaiveDateTime;

use super::flop_case::{Case, Expect, case, v};
use super::support::*;
use crate::codec::*;
use crate::domain::rules::flop::{subtype, touched_fields};
use crate::domain::{Decision, DomainConfig, FlightSet, FlightValue};

fn ft(s: &str) -> Option<FlightValue> {
    Some(FlightValue::Time(DomainConfig::default().local_time(t(s))))
}
fn fx(s: &str) -> Option<FlightValue> {
    Some(FlightValue::Text(s.into()))
}
fn fi(i: i64) -> Option<FlightValue> {
    Some(FlightValue::Int(i))
}

type TimeCtor = fn(Field<NaiveDateTime>) -> FlopPayload;

/// The 16 clearable time subtypes.
pub(super) const TIME_SUBTYPES: [(TimeCtor, ScalarTag); 16] = [
    (FlopPayload::APPT, ScalarTag::APPT),
    (FlopPayload::BOTM, ScalarTag::BOTM),
    (FlopPayload::CNCL, ScalarTag::CNCL),
    (FlopPayload::COBT, ScalarTag::COBT),
    (FlopPayload::CTOT, ScalarTag::CTOT),
    (FlopPayload::EGSR, ScalarTag::EGSR),
    (FlopPayload::EGST, ScalarTag::EGST),
    (FlopPayload::EOBT, ScalarTag::EOBT),
    (FlopPayload::FINT, ScalarTag::FINT),
    (FlopPayload::IEST, ScalarTag::IEST),
    (FlopPayload::LACL, ScalarTag::LACL),
    (FlopPayload::NAAT, ScalarTag::NAAT),
    (FlopPayload::NEAT, ScalarTag::NEAT),
    (FlopPayload::PADT, ScalarTag::PADT),
    (FlopPayload::PEDT, ScalarTag::PEDT),
    (FlopPayload::TOBT, ScalarTag::TOBT),
];

type TextCtor = fn(Field<String>) -> FlopPayload;

/// The 6 clearable text subtypes.
pub(super) const TEXT_SUBTYPES: [(TextCtor, ScalarTag); 6] = [
    (FlopPayload::FTSS, ScalarTag::FTSS),
    (FlopPayload::REMC, ScalarTag::REMC),
    (FlopPayload::RENO, ScalarTag::RENO),
    (FlopPayload::RUNW, ScalarTag::RUNW),
    (FlopPayload::STND, ScalarTag::STND),
    (FlopPayload::TRML, ScalarTag::TRML),
];

fn cases() -> Vec<Case> {
    let mut c = Vec::new();
    for (ctor, tag) in TIME_SUBTYPES {
        c.push(case(
            "time set",
            ctor(v("2021-01-23 09:00")),
            Expect::Scalars(vec![(tag, ft("2021-01-23 09:00"))]),
        ));
        c.push(case(
            "time empty clears",
            ctor(Field::Empty),
            Expect::Scalars(vec![(tag, None)]),
        ));
        c.push(case(
            "time absent clears",
            ctor(Field::Absent),
            Expect::Scalars(vec![(tag, None)]),
        ));
        c.push(case(
            "time same value",
            ctor(v("2021-01-23 06:00")),
            Expect::NoChange,
        ));
    }
    for (ctor, tag) in TEXT_SUBTYPES {
        c.push(case(
            "text set",
            ctor(s("NEW")),
            Expect::Scalars(vec![(tag, fx("NEW"))]),
        ));
        c.push(case(
            "text empty clears",
            ctor(Field::Empty),
            Expect::Scalars(vec![(tag, None)]),
        ));
        c.push(case(
            "text absent clears",
            ctor(Field::Absent),
            Expect::Scalars(vec![(tag, None)]),
        ));
    }
    use FlopPayload as P;
    use ScalarTag as T;
    c.extend([
        // Mandatory scalars: cannot be cleared.
        case(
            "ACFT set",
            P::ACFT(s("320")),
            Expect::Scalars(vec![(T::ACFT, fx("320"))]),
        ),
        case(
            "ACFT empty",
            P::ACFT(Field::Empty),
            Expect::Rejected("ACFT"),
        ),
        case(
            "ACFT absent",
            P::ACFT(Field::Absent),
            Expect::Rejected("ACFT"),
        ),
        case(
            "FLTY set",
            P::FLTY(s("C")),
            Expect::Scalars(vec![(T::FLTY, fx("C"))]),
        ),
        case(
            "FLTY empty",
            P::FLTY(Field::Empty),
            Expect::Rejected("FLTY"),
        ),
        case(
            "FLIN set",
            P::FLIN(s("I")),
            Expect::Scalars(vec![(T::FLIN, fx("I"))]),
        ),
        case("FLIN same", P::FLIN(s("D")), Expect::NoChange),
        case("FLIN invalid", P::FLIN(s("X")), Expect::Rejected("FLIN")),
        case(
            "FLIN absent",
            P::FLIN(Field::Absent),
            Expect::Rejected("FLIN"),
        ),
        case(
            "MAXP set",
            P::MAXP(Field::Value(180)),
            Expect::Scalars(vec![(T::MAXP, fi(180))]),
        ),
        case(
            "MAXP empty clears",
            P::MAXP(Field::Empty),
            Expect::Scalars(vec![(T::MAXP, None)]),
        ),
        // EXSS.
        case(
            "EXSS set",
            P::EXSS {
                exsc: s("DELAY"),
                exsr: s("late"),
            },
            Expect::Scalars(vec![(T::EXSC, fx("DELAY")), (T::EXSR, fx("late"))]),
        ),
        case(
            "EXSS remark absent clears it",
            P::EXSS {
                exsc: s("DELAY"),
                exsr: Field::Absent,
            },
            Expect::Scalars(vec![(T::EXSC, fx("DELAY")), (T::EXSR, None)]),
        ),
        case(
            "EXSS empty code clears both",
            P::EXSS {
                exsc: Field::Empty,
                exsr: s("x"),
            },
            Expect::Scalars(vec![(T::EXSC, None), (T::EXSR, None)]),
        ),
        case(
            "EXSS code missing",
            P::EXSS {
                exsc: Field::Absent,
                exsr: s("x"),
            },
            Expect::Rejected("EXSC"),
        ),
        // HNAG: each empty one on its own.
        case(
            "HNAG set",
            P::HNAG {
                fhag: Field::Value(1),
                phag: Field::Value(2),
                mhag: Field::Value(3),
            },
            Expect::Scalars(vec![(T::FHAG, fi(1)), (T::PHAG, fi(2)), (T::MHAG, fi(3))]),
        ),
        case(
            "HNAG one empty",
            P::HNAG {
                fhag: Field::Value(1),
                phag: Field::Empty,
                mhag: Field::Value(7),
            },
            Expect::Scalars(vec![(T::FHAG, fi(1)), (T::PHAG, None), (T::MHAG, fi(7))]),
        ),
        case(
            "HNAG all empty",
            P::HNAG {
                fhag: Field::Empty,
                phag: Field::Empty,
                mhag: Field::Empty,
            },
            Expect::Scalars(vec![(T::FHAG, None), (T::PHAG, None), (T::MHAG, None)]),
        ),
        // VIPP: the four samples (2,3), ("",3), (2,""), ("","").
        case(
            "VIPP 2,3",
            P::VIPP {
                vipp: Field::Value(2),
                vipr: Field::Value(3),
            },
            Expect::Scalars(vec![(T::VIPP, fi(2)), (T::VIPR, fi(3))]),
        ),
        case(
            "VIPP '',3",
            P::VIPP {
                vipp: Field::Empty,
                vipr: Field::Value(3),
            },
            Expect::Scalars(vec![(T::VIPP, None), (T::VIPR, fi(3))]),
        ),
        case(
            "VIPP 2,''",
            P::VIPP {
                vipp: Field::Value(2),
                vipr: Field::Empty,
            },
            Expect::Scalars(vec![(T::VIPP, fi(2)), (T::VIPR, None)]),
        ),
        case(
            "VIPP '',''",
            P::VIPP {
                vipp: Field::Empty,
                vipr: Field::Empty,
            },
            Expect::Scalars(vec![(T::VIPP, None), (T::VIPR, None)]),
        ),
        // TAOP: all three or unlink.
        case(
            "TAOP set",
            P::TAOP {
                taop: s("CA"),
                tafl: s("CA1"),
                taid: Field::Value(99),
            },
            Expect::Scalars(vec![
                (T::TAOP, fx("CA")),
                (T::TAFL, fx("CA1")),
                (T::TAID, fi(99)),
            ]),
        ),
        case(
            "TAOP one empty unlinks",
            P::TAOP {
                taop: s("CA"),
                tafl: Field::Empty,
                taid: Field::Value(99),
            },
            Expect::Scalars(vec![(T::TAOP, None), (T::TAFL, None), (T::TAID, None)]),
        ),
        // FDIV.
        case(
            "FDIV set",
            P::FDIV(Field::Value(Diversion {
                ddes: s("CAN"),
                ddir: s("FROM"),
                reason: s("fog"),
            })),
            Expect::Check(|f| {
                let d = f.fdiv.as_ref().expect("fdiv set");
                assert_eq!(
                    (d.ddes.as_str(), d.ddir.as_str(), d.reason.as_deref()),
                    ("CAN", "FROM", Some("fog"))
                );
            }),
        ),
        case(
            "FDIV DDES empty clears",
            P::FDIV(Field::Value(Diversion {
                ddes: Field::Empty,
                ddir: s("TO"),
                reason: s("x"),
            })),
            Expect::Check(|f| assert!(f.fdiv.is_none())),
        ),
        case(
            "FDIV absent clears",
            P::FDIV(Field::Absent),
            Expect::Check(|f| assert!(f.fdiv.is_none())),
        ),
        case(
            "FDIV DDIR TOO",
            P::FDIV(Field::Value(Diversion {
                ddes: s("CAN"),
                ddir: s("TOO"),
                reason: Field::Absent,
            })),
            Expect::Rejected("DDIR"),
        ),
        case(
            "FDIV DDIR empty",
            P::FDIV(Field::Value(Diversion {
                ddes: s("CAN"),
                ddir: Field::Empty,
                reason: Field::Absent,
            })),
            Expect::Rejected("DDIR"),
        ),
        // FRET.
        case(
            "FRET set",
            P::FRET(Field::Value(Return {
                reid: s("G"),
                reason: s("bird"),
            })),
            Expect::Check(|f| {
                assert_eq!(
                    f.fret
                        .as_ref()
                        .map(|r| (r.reid.as_str(), r.reason.as_deref())),
                    Some(("G", Some("bird")))
                )
            }),
        ),
        case(
            "FRET REID only",
            P::FRET(Field::Value(Return {
                reid: s("A"),
                reason: Field::Absent,
            })),
            Expect::Check(|f| {
                assert_eq!(
                    f.fret.as_ref().map(|r| (r.reid.as_str(), r.reason.clone())),
                    Some(("A", None))
                )
            }),
        ),
        case(
            "FRET empty clears",
            P::FRET(Field::Empty),
            Expect::Check(|f| assert!(f.fret.is_none())),
        ),
        case(
            "FRET invalid REID",
            P::FRET(Field::Value(Return {
                reid: s("X"),
                reason: Field::Absent,
            })),
            Expect::Rejected("REID"),
        ),
        // FLAB.
        case(
            "FLAB set",
            P::FLAB(Field::Value(LandingAbort {
                ares: s("O"),
                reason: s("gust"),
            })),
            Expect::Check(|f| assert_eq!(f.flab.as_ref().map(|a| a.ares.as_str()), Some("O"))),
        ),
        case(
            "FLAB ARES empty",
            P::FLAB(Field::Value(LandingAbort {
                ares: Field::Empty,
                reason: s("gust"),
            })),
            Expect::Rejected("ARES"),
        ),
        case(
            "FLAB ARES invalid",
            P::FLAB(Field::Value(LandingAbort {
                ares: s("X"),
                reason: Field::Absent,
            })),
            Expect::Rejected("ARES"),
        ),
        case(
            "FLAB empty clears",
            P::FLAB(Field::Empty),
            Expect::Check(|f| assert!(f.flab.is_none())),
        ),
    ]);
    c.extend(super::flop_table_collections::cases());
    c
}

fn base() -> FlightSet {
    seeded(vec![full_fltr(15)])
}

#[test]
fn every_flop_subtype_follows_its_rule() {
    let set = base();
    let before = set.get(15).cloned().expect("seeded");
    for (i, c) in cases().into_iter().enumerate() {
        let styp = subtype(&c.payload);
        let label = format!("#{i} {styp}: {}", c.name);
        let d = engine().decide(&ctx(2), &flop(15, c.payload), &set);
        match (c.expect, d) {
            (Expect::Rejected(text), Decision::Rejected { reason }) => {
                assert!(
                    reason.to_string().contains(text),
                    "{label}: reason {reason}"
                );
            }
            (Expect::NoChange, Decision::NoChange { .. }) => {}
            (
                expect @ (Expect::Scalars(_) | Expect::Check(_)),
                Decision::Applied { writes, events },
            ) => {
                assert_eq!(writes.len(), 1, "{label}");
                let next = &writes[0];
                assert_eq!(next.state_version, before.state_version + 1, "{label}");
                assert_eq!(
                    next.operation_day, before.operation_day,
                    "{label}: op day kept"
                );
                let changed = before.changed_fields(next);
                assert!(!changed.is_empty(), "{label}: applied without change");
                let touched = touched_fields(styp);
                assert!(
                    changed.iter().all(|f| touched.contains(&f.as_str())),
                    "{label}: changed {changed:?}"
                );
                assert_eq!(changed_of(&events, 15), changed, "{label}: notification");
                match expect {
                    Expect::Scalars(want) => {
                        for (tag, value) in want {
                            assert_eq!(next.scalar(tag), value.as_ref(), "{label}: {}", tag.name());
                        }
                    }
                    Expect::Check(check) => check(next),
                    _ => unreachable!(),
                }
            }
            (_, other) => panic!("{label}: unexpected {other:?}"),
        }
    }
}

#[test]
fn the_table_covers_all_47_flop_subtypes() {
    let covered: BTreeSet<&str> = cases().iter().map(|c| subtype(&c.payload)).collect();
    let all: BTreeSet<&str> = FLOP_SUBTYPES
        .iter()
        .copied()
        .filter(|s| *s != "FDEL")
        .collect();
    assert_eq!(all.len(), 47);
    assert_eq!(covered, all);
}

#[test]
fn flop_for_unknown_or_deleted_flight_is_no_match() {
    let mut set = base();
    let d = engine().decide(
        &ctx(2),
        &flop(99, FlopPayload::APPT(v("2021-01-23 09:00"))),
        &set,
    );
    assert!(matches!(
        d,
        Decision::NoMatch {
            reason: crate::domain::NoMatchReason::UnknownFlight { flid: 99 }
        }
    ));
    applied(apply(&mut set, 3, &fdel(15)));
    let d = engine().decide(
        &ctx(4),
        &flop(15, FlopPayload::APPT(v("2021-01-23 09:00"))),
        &set,
    );
    assert!(matches!(
        d,
        Decision::NoMatch {
            reason: crate::domain::NoMatchReason::DeletedFlight { flid: 15 }
        }
    ));
}

#[test]
fn unchanged_flop_does_not_bump_the_version() {
    let mut set = base();
    let v0 = set.get(15).map(|f| f.state_version);
    let d = apply(&mut set, 2, &flop(15, FlopPayload::STND(s("STND15"))));
    assert!(matches!(d, Decision::NoChange { .. }), "{d:?}");
    assert_eq!(set.get(15).map(|f| f.state_version), v0);
}

#[test]
fn flop_write_records_message_id_and_time() {
    let mut set = base();
    let (writes, events) = applied(apply(
        &mut set,
        42,
        &flop(
            15,
            FlopPayload::GTDT(Collection::Items(vec![gate(1, "G2")])),
        ),
    ));
    assert_eq!(writes[0].last_msg_id, 42);
    assert_eq!(writes[0].updated_at, now());
    assert_eq!(events.len(), 2);
    match &events[0] {
        crate::domain::DomainEvent::Msg(n) => {
            assert_eq!(
                (n.msg_kind.as_str(), n.msg_id, n.state_version),
                ("FLOP-GTDT", 42, 2)
            );
        }
        other => panic!("first event should be the notification: {other:?}"),
    }
}
