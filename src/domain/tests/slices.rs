//! Large schedules in slices (`domain::slices`): deciding a
//! SCHD slice by slice — each slice loaded by the loading protocol, the
//! package validated whole first — writes the same flights with the same
//! versions and the same events per flight as deciding it at once, and
//! rejects it for the same reason.

use std::collections::BTreeMap;

use proptest::collection::vec;
use proptest::prelude::*;

use super::support::*;
use crate::codec::*;
use crate::domain::slices::{StoredLink, schedule_slices, slice_message};
use crate::domain::{Decision, DomainEvent, FlightSet, FlightState};

fn package(flights: Vec<Fltr>) -> Schd {
    match schd("DNLD", flights).kind {
        MsgKind::Schd(s) => s,
        _ => unreachable!("a SCHD"),
    }
}

const D: &str = "2021-01-23 05:35";

#[test]
fn masters_stay_with_their_shares_and_slices_keep_package_order() {
    // FLTR 1 shares 9 and stored 4 shares 9: {1, 4, 9}. Stored 3 and 8
    // share 7, which the package does not name: {3, 7, 8}. 2 is alone.
    let p = package(vec![
        share(1, 9, D),
        fltr(2, D),
        fltr(3, D),
        fltr(4, D),
        fltr(9, D),
    ]);
    let link = |flid, maid| StoredLink {
        flid,
        maid: Some(maid),
    };
    let stored = [link(4, 9), link(3, 7), link(8, 7)];
    assert_eq!(
        schedule_slices(&p, &stored, 2),
        vec![vec![0, 3, 4], vec![1, 2]]
    );
    assert_eq!(schedule_slices(&p, &stored, 100), vec![vec![0, 1, 2, 3, 4]]);
    assert_eq!(
        schedule_slices(&p, &[], 1),
        vec![vec![0, 4], vec![1], vec![2], vec![3]]
    );
}

#[test]
fn a_repeated_flid_is_one_component() {
    let p = package(vec![fltr(5, D), fltr(6, D), fltr(5, "2021-01-23 06:35")]);
    assert_eq!(schedule_slices(&p, &[], 1), vec![vec![0, 2], vec![1]]);
}

/// What the store's loading protocol loads for `msg` from the stored
/// flights `all` (`flight_txn::load`: the named flights with their ACTIVE
/// children, then the other masters with theirs).
fn load_like_the_store(all: &FlightSet, msg: &DecodedMessage) -> FlightSet {
    let e = engine();
    let with_children = |ids: &[i64]| -> Vec<FlightState> {
        all.iter()
            .filter(|f| {
                ids.contains(&f.flid)
                    || (f.is_active() && f.master_id().is_some_and(|m| ids.contains(&m)))
            })
            .cloned()
            .collect()
    };
    let named = e.flids_to_load(msg);
    let mut set: FlightSet = with_children(&named).into_iter().collect();
    let extra: Vec<i64> = e
        .masters_to_load(msg, &set)
        .into_iter()
        .filter(|m| !named.contains(m))
        .collect();
    for f in with_children(&extra) {
        if !set.contains(f.flid) {
            set.insert(f);
        }
    }
    set
}

/// The outcome compared: rejection reason, or the writes by FLID and the
/// events of each FLID in order.
#[derive(Debug, PartialEq)]
enum Outcome {
    Rejected(String),
    Written(BTreeMap<i64, FlightState>, BTreeMap<i64, Vec<DomainEvent>>),
}

fn outcome_of(writes: Vec<FlightState>, events: Vec<DomainEvent>) -> Outcome {
    let mut by_flid: BTreeMap<i64, Vec<DomainEvent>> = BTreeMap::new();
    for e in events {
        let flid = match &e {
            DomainEvent::Msg(n) => n.flid,
            DomainEvent::Schd(s) => s.flid,
        };
        by_flid.entry(flid).or_default().push(e);
    }
    Outcome::Written(writes.into_iter().map(|w| (w.flid, w)).collect(), by_flid)
}

fn whole(all: &FlightSet, msg: &DecodedMessage) -> Outcome {
    match engine().decide(&ctx(7), msg, &load_like_the_store(all, msg)) {
        Decision::Applied { writes, events } => outcome_of(writes, events),
        Decision::NoChange { .. } => outcome_of(vec![], vec![]),
        Decision::Rejected { reason } => Outcome::Rejected(reason.to_string()),
        Decision::NoMatch { reason } => Outcome::Rejected(reason.to_string()),
    }
}

/// `flight_txn::apply_in_slices`, without the database.
fn sliced(all: &FlightSet, msg: &DecodedMessage, max: usize) -> Outcome {
    let e = engine();
    let MsgKind::Schd(s) = &msg.kind else {
        unreachable!("a SCHD")
    };
    let named = e.flids_to_load(msg);
    let links = |ids: &[i64]| -> Vec<&FlightState> {
        all.iter()
            .filter(|f| {
                ids.contains(&f.flid)
                    || (f.is_active() && f.master_id().is_some_and(|m| ids.contains(&m)))
            })
            .collect()
    };
    let mut loaded: BTreeMap<i64, &FlightState> =
        links(&named).into_iter().map(|f| (f.flid, f)).collect();
    let extra: Vec<i64> = e
        .masters_to_load_by(msg, &|f| loaded.get(&f).and_then(|s| s.master_id()))
        .into_iter()
        .filter(|m| !named.contains(m))
        .collect();
    for f in links(&extra) {
        loaded.entry(f.flid).or_insert(f);
    }
    let day = |f: i64| loaded.get(&f).and_then(|s| s.operation_day);
    if let Err(reason) = e.check_schedule(msg, &day) {
        return Outcome::Rejected(reason.to_string());
    }
    let stored: Vec<StoredLink> = loaded
        .values()
        .map(|f| StoredLink {
            flid: f.flid,
            maid: f.int(ScalarTag::MAID),
        })
        .collect();
    let (mut writes, mut events) = (Vec::new(), Vec::new());
    for indices in schedule_slices(s, &stored, max) {
        let slice = slice_message(msg, &indices).expect("a SCHD");
        match e.decide(&ctx(7), &slice, &load_like_the_store(all, &slice)) {
            Decision::Applied {
                writes: w,
                events: ev,
            } => {
                writes.extend(w);
                events.extend(ev);
            }
            Decision::NoChange { .. } => {}
            Decision::Rejected { reason } => {
                let reason = e.schedule_rejection(msg, now()).unwrap_or(reason);
                return Outcome::Rejected(reason.to_string());
            }
            Decision::NoMatch { reason } => return Outcome::Rejected(reason.to_string()),
        }
    }
    outcome_of(writes, events)
}

/// One FLTR: FLID, maybe a MAID (a share, self, or dangling), a stand, a
/// SODT on the operation day or (rarely) the next, maybe a bad FDIV.
fn record() -> impl Strategy<Value = Fltr> {
    (
        1i64..14,
        proptest::option::of(1i64..14),
        prop::sample::select(vec!["A1", "B2", "C3"]),
        prop::sample::select(vec![D, D, D, D, D, "2021-01-23 09:00", "2021-01-24 05:35"]),
        prop::sample::select(vec![None, None, None, None, Some("TO"), Some("X")]),
    )
        .prop_map(|(flid, maid, stand, sodt, ddir)| {
            let mut f = match maid {
                Some(m) => share(flid, m, sodt),
                None => fltr(flid, sodt),
            };
            put(&mut f, ScalarTag::STND, txt(stand));
            if let Some(ddir) = ddir {
                f.fdiv = Field::Value(Diversion {
                    ddes: s("PEK"),
                    ddir: s(ddir),
                    reason: Field::Absent,
                });
            }
            f
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn slices_decide_what_the_whole_package_decides(
        seed in vec((1i64..11, proptest::option::of(1i64..11)), 0..10),
        deleted in vec(1i64..11, 0..3),
        fltrs in vec(record(), 1..14),
        max in 1usize..5,
    ) {
        // The stored flights: a first schedule (its shares and masters as
        // drawn, one FLTR per FLID), then some deleted.
        let mut firsts: BTreeMap<i64, Fltr> = BTreeMap::new();
        for (flid, maid) in seed {
            firsts.entry(flid).or_insert_with(|| match maid {
                Some(m) => share(flid, m, D),
                None => fltr(flid, D),
            });
        }
        let mut all = if firsts.is_empty() {
            FlightSet::new()
        } else {
            seeded(firsts.into_values().collect())
        };
        for (i, flid) in deleted.into_iter().enumerate() {
            apply(&mut all, 2 + i as i64, &fdel(flid));
        }
        let msg = schd("DNLD", fltrs);
        prop_assert_eq!(sliced(&all, &msg, max), whole(&all, &msg));
    }
}
