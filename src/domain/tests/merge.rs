//! FLOP merge rules that must not lose or scramble stored data: VIPF merges into the stored VIP, ERUT stays ordered by RTNO.

use proptest::prelude::*;

use super::support::*;
use crate::codec::*;
use crate::domain::{Decision, FlightSet};

const D: &str = "2021-01-23 05:35";

fn vipt(vscd: &str, vtqy: &str) -> VipService {
    VipService {
        vscd: s(vscd),
        vtqy: s(vtqy),
        ..Default::default()
    }
}

/// A flight whose VIP V1 has entourage 2 and the services S1 ×1, S2 ×2.
fn with_vip() -> FlightSet {
    let mut f = fltr(15, D);
    let mut v = vip("V1", 2);
    v.vipt = vec![vipt("S1", "1"), vipt("S2", "2")];
    f.vipf = Collection::Items(vec![v, vip("V2", 3)]);
    seeded(vec![f])
}

fn vip_flop(v: Vip) -> DecodedMessage {
    flop(15, FlopPayload::VIPF(Collection::Items(vec![v])))
}

fn services(set: &FlightSet, vip: usize) -> Vec<(i32, String, String)> {
    set.get(15).expect("seeded").vipf[vip]
        .vipt
        .iter()
        .map(|t| {
            (
                t.ordinal,
                t.vscd.clone().unwrap_or_default(),
                t.vtqy.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// The real sample VIPF-01 carries VPCD only: nothing stored may be lost
/// (the old code replaced the VIP, emptying VIPT and VFES).
#[test]
fn a_vipf_without_vfes_or_vipt_keeps_the_stored_ones() {
    let mut set = with_vip();
    let d = apply(
        &mut set,
        2,
        &vip_flop(Vip {
            vpcd: s("V1"),
            ..Default::default()
        }),
    );
    assert!(matches!(d, Decision::NoChange { .. }), "{d:?}");
    assert_eq!(set.get(15).map(|f| f.vipf[0].vfes), Some(Some(2)));
    assert_eq!(
        services(&set, 0),
        vec![(1, "S1".into(), "1".into()), (2, "S2".into(), "2".into())]
    );
}

/// VIPT items merge by VSCD: a mentioned service is replaced in place, a new
/// one appended, the others kept; VFES sets when carried, clears when empty.
#[test]
fn vipt_items_merge_by_vscd_and_vfes_follows_the_scalar_rule() {
    let mut set = with_vip();
    let (writes, _) = applied(apply(
        &mut set,
        2,
        &vip_flop(Vip {
            vpcd: s("V1"),
            vfes: Field::Value(5),
            vipt: vec![vipt("S2", "9"), vipt("S3", "1")],
            unknown: vec![],
        }),
    ));
    assert_eq!(writes[0].vipf.len(), 2, "V2 untouched");
    assert_eq!(writes[0].vipf[0].vfes, Some(5));
    assert_eq!(
        services(&set, 0),
        vec![
            (1, "S1".into(), "1".into()),
            (2, "S2".into(), "9".into()),
            (3, "S3".into(), "1".into())
        ]
    );
    applied(apply(
        &mut set,
        3,
        &vip_flop(Vip {
            vpcd: s("V1"),
            vfes: Field::Empty,
            ..Default::default()
        }),
    ));
    assert_eq!(set.get(15).map(|f| f.vipf[0].vfes), Some(None));
    assert_eq!(services(&set, 0).len(), 3);
}

#[test]
fn a_vipt_without_vscd_is_rejected() {
    let set = with_vip();
    let d = engine().decide(
        &ctx(2),
        &vip_flop(Vip {
            vpcd: s("V1"),
            vipt: vec![VipService {
                vscd: Field::Empty,
                vtqy: s("1"),
                ..Default::default()
            }],
            ..Default::default()
        }),
        &set,
    );
    match d {
        Decision::Rejected { reason } => assert!(reason.to_string().contains("VSCD"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

fn with_route(rtnos: &[i64]) -> FlightSet {
    let mut f = fltr(15, D);
    f.erut = Collection::Items(rtnos.iter().map(|n| route(*n, &format!("A{n}"))).collect());
    seeded(vec![f])
}

fn erut_of(set: &FlightSet) -> Vec<(i32, Option<i64>)> {
    set.get(15)
        .expect("seeded")
        .erut
        .iter()
        .map(|r| (r.ordinal, r.source_seq))
        .collect()
}

/// Stored RTNO [1, 3] plus RTNO 2 is [1, 2, 3] with ordinals 1, 2, 3 (the old
/// code appended: [1, 3, 2]).
#[test]
fn erut_merge_keeps_the_route_ordered_by_rtno() {
    let mut set = with_route(&[1, 3]);
    applied(apply(
        &mut set,
        2,
        &flop(
            15,
            FlopPayload::ERUT(Collection::Items(vec![route(2, "XIY")])),
        ),
    ));
    assert_eq!(
        erut_of(&set),
        vec![(1, Some(1)), (2, Some(2)), (3, Some(3))]
    );
    assert_eq!(
        set.get(15).expect("seeded").erut[1].apcd.as_deref(),
        Some("XIY")
    );
}

proptest! {
    /// After any ERUT merge the route is ordered by RTNO, ordinals are 1..n
    /// in that order, and it holds exactly the stored and the sent RTNOs.
    #[test]
    fn erut_after_any_merge_is_ordered_by_rtno(
        stored in proptest::collection::btree_set(1i64..20, 0..8),
        sent in proptest::collection::vec(1i64..20, 1..6),
    ) {
        let stored: Vec<i64> = stored.into_iter().collect();
        let mut set = with_route(&stored);
        let items = sent.iter().map(|n| route(*n, "NEW")).collect();
        apply(&mut set, 2, &flop(15, FlopPayload::ERUT(Collection::Items(items))));
        let got = erut_of(&set);
        let mut want: Vec<i64> = stored.iter().chain(&sent).copied().collect();
        want.sort();
        want.dedup();
        let expected: Vec<(i32, Option<i64>)> = want
            .into_iter()
            .zip(1..)
            .map(|(n, i)| (i, Some(n)))
            .collect();
        prop_assert_eq!(got, expected);
    }
}
