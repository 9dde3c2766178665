//! Property tests: a FLOP changes only its fields (INV-20);
//! FDEL twice equals FDEL once; MAFL does not depend on arrival order (§11.4);
//! SCHD with `preserve` never clears a field the package lacks (§12.1).

use chrono::{Duration, NaiveDateTime};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::Union;

use super::flop_table::{TEXT_SUBTYPES, TIME_SUBTYPES};
use super::support::*;
use crate::codec::*;
use crate::domain::rules::flop::{subtype, touched_fields};
use crate::domain::rules::schd::MANDATORY;
use crate::domain::{
    AbsentFieldPolicy, Decision, DomainConfig, DomainError, FlightSet, FlightStateEngine, mafl,
    schd_projection,
};

const D: &str = "2021-01-23 05:35";

fn field<T: Clone + std::fmt::Debug + 'static>(
    v: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<Field<T>> {
    prop_oneof![
        Just(Field::Absent),
        Just(Field::Empty),
        v.prop_map(Field::Value)
    ]
    .boxed()
}

fn ntime() -> impl Strategy<Value = NaiveDateTime> + Clone {
    (0i64..20_000).prop_map(|m| t("2021-01-20 00:00") + Duration::minutes(m))
}

/// Valid and invalid codes alike.
fn code() -> impl Strategy<Value = String> + Clone {
    prop::sample::select(vec![
        "A", "C", "D", "G", "I", "M", "O", "TO", "FROM", "ON", "OFF", "X", "504",
    ])
    .prop_map(String::from)
}

fn coll<T: Clone + std::fmt::Debug + 'static>(
    item: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<Collection<T>> {
    prop_oneof![
        Just(Collection::Absent),
        Just(Collection::ClearAll),
        vec(item, 1..4).prop_map(Collection::Items)
    ]
    .boxed()
}

pub(super) fn payload() -> impl Strategy<Value = FlopPayload> {
    use FlopPayload as P;
    let gate = (proptest::option::of(0i64..4), field(code()), field(ntime())).prop_map(
        |(seq, gate, pgot)| GateAlloc {
            seq,
            gate,
            pgot,
            ..Default::default()
        },
    );
    let delay = (
        field(code()),
        field(ntime()),
        field(0i64..600),
        field(code()),
    )
        .prop_map(|(code, strt, dura_minutes, comment)| Delay {
            code,
            strt,
            dura_minutes,
            comment,
        });
    let rp = (proptest::option::of(0i64..4), field(code())).prop_map(|(seq, apcd)| RoutePoint {
        seq,
        apcd,
        ..Default::default()
    });
    let srv = (field(code()), field(code())).prop_map(|(srtc, srqt)| Service {
        srtc,
        srqt,
        ..Default::default()
    });
    let vp = (field(code()), field(0i64..5)).prop_map(|(vpcd, vfes)| Vip {
        vpcd,
        vfes,
        ..Default::default()
    });
    let dr = (field(ntime()), field(code())).prop_map(|(potm, poid)| DoorEvent {
        potm,
        poid,
        unknown: vec![],
    });
    let tr = (field(ntime()), field(code())).prop_map(|(trtm, trst)| TractorEvent {
        trtm,
        trst,
        unknown: vec![],
    });
    let ps =
        (field(ntime()), field(code()), field(code())).prop_map(|(pstm, psid, pust)| PushEvent {
            seq: Some(1),
            pstm,
            psid,
            pust,
            unknown: vec![],
        });
    let ch = (field(ntime()), field(code())).prop_map(|(chtm, chid)| ChockEvent {
        chtm,
        chid,
        ..Default::default()
    });
    let stand = field(code()).prop_map(|psst| StandAlloc {
        psst,
        ..Default::default()
    });
    let ab = field(code()).prop_map(|abdg| AirbridgeEvent {
        abdg,
        ..Default::default()
    });
    let ck = field(code()).prop_map(|chkc| CounterAlloc {
        chkc,
        ..Default::default()
    });
    let cl = field(code()).prop_map(|belt| CarouselAlloc {
        belt,
        ..Default::default()
    });
    let cu = field(code()).prop_map(|chut| ChuteAlloc {
        chut,
        ..Default::default()
    });
    Union::new(vec![
        (0usize..16, field(ntime()))
            .prop_map(|(i, f)| TIME_SUBTYPES[i].0(f))
            .boxed(),
        (0usize..6, field(code()))
            .prop_map(|(i, f)| TEXT_SUBTYPES[i].0(f))
            .boxed(),
        field(code()).prop_map(P::ACFT).boxed(),
        field(code()).prop_map(P::FLTY).boxed(),
        field(code()).prop_map(P::FLIN).boxed(),
        field(0i64..400).prop_map(P::MAXP).boxed(),
        (field(code()), field(code()))
            .prop_map(|(exsc, exsr)| P::EXSS { exsc, exsr })
            .boxed(),
        (field(0i64..9), field(0i64..9), field(0i64..9))
            .prop_map(|(fhag, phag, mhag)| P::HNAG { fhag, phag, mhag })
            .boxed(),
        (field(0i64..9), field(0i64..9))
            .prop_map(|(vipp, vipr)| P::VIPP { vipp, vipr })
            .boxed(),
        (field(code()), field(code()), field(0i64..9))
            .prop_map(|(taop, tafl, taid)| P::TAOP { taop, tafl, taid })
            .boxed(),
        field(
            (field(code()), field(code()), field(code()))
                .prop_map(|(ddes, ddir, reason)| Diversion { ddes, ddir, reason }),
        )
        .prop_map(P::FDIV)
        .boxed(),
        field((field(code()), field(code())).prop_map(|(reid, reason)| Return { reid, reason }))
            .prop_map(P::FRET)
            .boxed(),
        field(
            (field(code()), field(code())).prop_map(|(ares, reason)| LandingAbort { ares, reason }),
        )
        .prop_map(P::FLAB)
        .boxed(),
        coll(gate).prop_map(P::GTDT).boxed(),
        coll(stand).prop_map(P::PSDT).boxed(),
        coll(ck).prop_map(P::CKDT).boxed(),
        coll(cl).prop_map(P::CLDT).boxed(),
        coll(cu).prop_map(P::CHDT).boxed(),
        coll(ch).prop_map(P::CHOT).boxed(),
        coll(ab).prop_map(P::ABTM).boxed(),
        coll(delay).prop_map(P::DELY).boxed(),
        coll(rp).prop_map(P::ERUT).boxed(),
        coll(srv).prop_map(P::SRVT).boxed(),
        coll(vp).prop_map(P::VIPF).boxed(),
        coll(dr).prop_map(P::PORT).boxed(),
        coll(tr).prop_map(P::TIPT).boxed(),
        coll(ps).prop_map(P::PSHT).boxed(),
    ])
}

/// Keys a FLOP may change besides its own fields: the lifecycle columns and
/// the milestones, derived from the fields (docs/events.md "Milestones").
const META_KEYS: [&str; 4] = ["state_version", "last_msg_id", "updated_at", "milestones"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_flop_changes_only_its_fields(p in payload()) {
        let set = seeded(vec![full_fltr(15), share(16, 15, D)]);
        let touched: Vec<String> = touched_fields(subtype(&p)).iter().map(|f| f.to_ascii_lowercase()).collect();
        let before = schd_projection(set.get(15).expect("seeded"), mafl::of(15, &set).as_deref()).to_json();
        if let Decision::Applied { writes, .. } = engine().decide(&ctx(2), &flop(15, p), &set) {
            prop_assert_eq!(writes.len(), 1, "only the named flight is written");
            let mut after_set = set.clone();
            after_set.insert(writes[0].clone());
            let after = schd_projection(&writes[0], mafl::of(15, &after_set).as_deref()).to_json();
            let (b, a) = (before.as_object().expect("object"), after.as_object().expect("object"));
            prop_assert_eq!(b.len(), a.len());
            for (k, old) in b {
                if touched.contains(k) || META_KEYS.contains(&k.as_str()) {
                    continue;
                }
                prop_assert_eq!(Some(old), a.get(k), "{} changed", k);
            }
        }
    }

    #[test]
    fn fdel_twice_equals_fdel_once(
        maids in vec(proptest::option::of(1i64..=6), 6),
        target in 1i64..=7,
    ) {
        let fltrs: Vec<Fltr> = maids
            .iter()
            .zip(1i64..)
            .map(|(m, flid)| match m {
                Some(m) => share(flid, *m, D),
                None => fltr(flid, D),
            })
            .collect();
        let mut set = seeded(fltrs);
        apply(&mut set, 2, &fdel(target));
        let once = set.clone();
        let second = apply(&mut set, 3, &fdel(target));
        prop_assert!(matches!(second, Decision::NoChange { .. }), "{:?}", second);
        prop_assert_eq!(&set, &once);
        // A deleted master leaves no ACTIVE share pointing at it.
        if once.get(target).is_some_and(|f| f.master_id().is_none()) {
            prop_assert!(once.iter().all(|f| !f.is_active() || f.master_id() != Some(target)));
        }
    }

    #[test]
    fn mafl_does_not_depend_on_arrival_order(
        (a, b) in proptest::sample::subsequence((101i64..=115).collect::<Vec<_>>(), 0..=15)
            .prop_flat_map(|v| (Just(v.clone()).prop_shuffle(), Just(v).prop_shuffle()))
    ) {
        let run = |order: &[i64]| -> (Vec<u8>, Option<Vec<i64>>) {
            let mut set = seeded(vec![fltr(100, D)]);
            for (i, child) in order.iter().enumerate() {
                let id = i64::try_from(i).unwrap_or_default() + 2;
                apply(&mut set, id, &schd("ADFT", vec![share(*child, 100, D)]));
            }
            let m = mafl::of(100, &set);
            let bytes = schd_projection(set.get(100).expect("master"), m.as_deref()).to_bytes();
            (bytes, m.map(|m| m.iter().map(|e| e.flid).collect()))
        };
        let (bytes_a, flids_a) = run(&a);
        let (bytes_b, _) = run(&b);
        let mut sorted = a.clone();
        sorted.sort();
        prop_assert_eq!(flids_a, Some(sorted));
        prop_assert_eq!(bytes_a, bytes_b);
    }

    #[test]
    fn preserve_never_clears_a_field_the_package_lacks(
        scalar_choice in vec(0u8..3, ScalarTag::ALL.len()),
        group_choice in vec(0u8..3, 15),
    ) {
        let set = seeded(vec![full_fltr(15)]);
        let full = full_fltr(15);
        // FLID, SODT and the mandatory fields are always valued (a SCHD
        // without them is rejected: `a_schd_never_clears_a_mandatory_field`).
        let kept = |t: &ScalarTag| matches!(t, ScalarTag::FLID | ScalarTag::SODT) || MANDATORY.contains(t);
        let mut f = fltr(15, D);
        f.scalars.retain(|(t, _)| kept(t));
        let mut absent_tags = Vec::new();
        for (tag, c) in ScalarTag::ALL.iter().zip(&scalar_choice) {
            if kept(tag) {
                continue;
            }
            match c {
                0 => absent_tags.push(*tag),
                1 => put(&mut f, *tag, Field::Empty),
                _ => match value_for(*tag, 99) {
                    Some(v) => put(&mut f, *tag, Field::Value(v)),
                    None => absent_tags.push(*tag),
                },
            }
        }
        macro_rules! group {
            ($($g:ident),*) => {{
                let mut absent = Vec::new();
                let mut i = 0;
                $(
                    match group_choice[i] {
                        0 => absent.push(stringify!($g)),
                        1 => f.$g = Collection::ClearAll,
                        _ => f.$g = full.$g.clone(),
                    }
                    i += 1;
                )*
                let _ = i;
                absent
            }};
        }
        let absent_groups = group!(rout, erut, psdt, gtdt, ckdt, cldt, chdt, chot, abtm, dely, srvt, vipf, port, tipt, psht);
        let before = set.get(15).cloned().expect("seeded");
        let d = engine().decide(&ctx(2), &schd("DNLD", vec![f]), &set);
        let after = match d {
            Decision::Applied { writes, .. } => writes[0].clone(),
            Decision::NoChange { .. } => before.clone(),
            other => return Err(TestCaseError::fail(format!("{other:?}"))),
        };
        for tag in absent_tags {
            prop_assert_eq!(before.scalar(tag), after.scalar(tag), "{} cleared", tag.name());
        }
        prop_assert_eq!(&before.fdiv, &after.fdiv);
        let b = schd_projection(&before, None).to_json();
        let a = schd_projection(&after, None).to_json();
        for g in absent_groups {
            prop_assert_eq!(&b[g], &a[g], "{} changed", g);
        }
    }
}

proptest! {
    /// sis-format §2.1: whatever a SCHD sends for the mandatory
    /// fields (absent, empty or a value), under either absent-field policy
    /// and every STYP, the flight never ends without one: the package is
    /// rejected whole, or every mandatory field still has a value.
    #[test]
    fn a_schd_never_clears_a_mandatory_field(
        choice in vec(0u8..3, MANDATORY.len()),
        styp in proptest::sample::select(vec!["DNLD", "RESP", "ADFT"]),
        clear in proptest::bool::ANY,
        existing in proptest::bool::ANY,
    ) {
        let set = if existing { seeded(vec![full_fltr(15)]) } else { FlightSet::new() };
        let mut f = fltr(15, D);
        for (tag, c) in MANDATORY.iter().zip(&choice) {
            match c {
                0 => f.scalars.retain(|(t, _)| t != tag),
                1 => put(&mut f, *tag, Field::Empty),
                _ => {}
            }
        }
        let cfg = DomainConfig {
            absent_field_policy: if clear { AbsentFieldPolicy::Clear } else { AbsentFieldPolicy::Preserve },
            ..DomainConfig::default()
        };
        let d = FlightStateEngine::new(cfg).decide(&ctx(2), &schd(styp, vec![f]), &set);
        let after = match d {
            Decision::Applied { writes, .. } => writes[0].clone(),
            Decision::NoChange { .. } => set.get(15).cloned().expect("unchanged means stored"),
            Decision::Rejected { reason: DomainError::MissingMandatory { .. } } => return Ok(()),
            other => return Err(TestCaseError::fail(format!("{other:?}"))),
        };
        for tag in MANDATORY {
            prop_assert!(after.scalar(*tag).is_some(), "{} cleared by {}", tag.name(), styp);
        }
        let all_valued = choice.iter().all(|c| *c == 2);
        prop_assert!(all_valued || styp == "ADFT", "{} applied without every mandatory field", styp);
    }
}

#[test]
fn fdel_of_unknown_flight_leaves_the_set_alone() {
    let mut set = FlightSet::new();
    assert!(matches!(
        apply(&mut set, 1, &fdel(3)),
        Decision::NoChange { .. }
    ));
    assert!(set.is_empty());
}
