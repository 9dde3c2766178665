//! FLOP table rows for the repeating groups: replace (ABTM CHDT CHOT CKDT
//! CLDT GTDT PSDT), merge (DELY ERUT SRVT VIPF) and keyed events (PORT TIPT
//! PSHT). The runner is in `flop_table.rs`.

use super::flop_case::{Case, Expect, case, v};
use super::support::*;
use crate::codec::*;
use crate::domain::DomainConfig;

pub(super) fn cases() -> Vec<Case> {
    use FlopPayload as P;
    vec![
        // Replace collections.
        case(
            "GTDT replace",
            P::GTDT(Collection::Items(vec![gate(7, "G9")])),
            Expect::Check(|f| {
                assert_eq!(f.gtdt.len(), 1);
                assert_eq!(
                    (
                        f.gtdt[0].ordinal,
                        f.gtdt[0].source_seq,
                        f.gtdt[0].gate.as_deref()
                    ),
                    (1, Some(7), Some("G9"))
                );
            }),
        ),
        case(
            "GTDT duplicates kept",
            P::GTDT(Collection::Items(vec![gate(1, "G5"), gate(1, "G5")])),
            Expect::Check(|f| {
                assert_eq!(
                    f.gtdt.iter().map(|g| g.ordinal).collect::<Vec<_>>(),
                    vec![1, 2]
                );
                assert!(f.gtdt.iter().all(|g| g.gate.as_deref() == Some("G5")));
            }),
        ),
        case(
            "GTDT same list",
            P::GTDT(Collection::Items(vec![gate(1, "G1"), gate(2, "G1")])),
            Expect::NoChange,
        ),
        case(
            "GTDT bare clears",
            P::GTDT(Collection::ClearAll),
            Expect::Check(|f| assert!(f.gtdt.is_empty())),
        ),
        case(
            "GTDT absent",
            P::GTDT(Collection::Absent),
            Expect::Rejected("GTDT"),
        ),
        case(
            "PSDT replace",
            P::PSDT(Collection::Items(vec![StandAlloc {
                seq: Some(1),
                psst: s("601"),
                ..Default::default()
            }])),
            Expect::Check(|f| {
                assert_eq!(
                    f.psdt.iter().map(|x| x.psst.clone()).collect::<Vec<_>>(),
                    vec![Some("601".into())]
                )
            }),
        ),
        case(
            "PSDT bare clears",
            P::PSDT(Collection::ClearAll),
            Expect::Check(|f| assert!(f.psdt.is_empty())),
        ),
        case(
            "PSDT absent",
            P::PSDT(Collection::Absent),
            Expect::Rejected("PSDT"),
        ),
        case(
            "CKDT replace",
            P::CKDT(Collection::Items(vec![CounterAlloc {
                seq: Some(1),
                chkc: s("C9"),
                ..Default::default()
            }])),
            Expect::Check(|f| {
                assert_eq!(
                    f.ckdt.iter().map(|x| x.chkc.clone()).collect::<Vec<_>>(),
                    vec![Some("C9".into())]
                )
            }),
        ),
        case(
            "CKDT bare clears",
            P::CKDT(Collection::ClearAll),
            Expect::Check(|f| assert!(f.ckdt.is_empty())),
        ),
        case(
            "CKDT absent",
            P::CKDT(Collection::Absent),
            Expect::Rejected("CKDT"),
        ),
        case(
            "CLDT replace",
            P::CLDT(Collection::Items(vec![CarouselAlloc {
                seq: Some(1),
                belt: s("B9"),
                ..Default::default()
            }])),
            Expect::Check(|f| {
                assert_eq!(
                    f.cldt.iter().map(|x| x.belt.clone()).collect::<Vec<_>>(),
                    vec![Some("B9".into())]
                )
            }),
        ),
        case(
            "CLDT bare clears",
            P::CLDT(Collection::ClearAll),
            Expect::Check(|f| assert!(f.cldt.is_empty())),
        ),
        case(
            "CLDT absent",
            P::CLDT(Collection::Absent),
            Expect::Rejected("CLDT"),
        ),
        case(
            "CHDT replace",
            P::CHDT(Collection::Items(vec![ChuteAlloc {
                seq: Some(1),
                chut: s("H9"),
                ..Default::default()
            }])),
            Expect::Check(|f| {
                assert_eq!(
                    f.chdt.iter().map(|x| x.chut.clone()).collect::<Vec<_>>(),
                    vec![Some("H9".into())]
                )
            }),
        ),
        case(
            "CHDT bare clears",
            P::CHDT(Collection::ClearAll),
            Expect::Check(|f| assert!(f.chdt.is_empty())),
        ),
        case(
            "CHDT absent",
            P::CHDT(Collection::Absent),
            Expect::Rejected("CHDT"),
        ),
        case(
            "CHOT replace",
            P::CHOT(Collection::Items(vec![ChockEvent {
                seq: Some(3),
                chid: s("ON"),
                chst: s("504"),
                ..Default::default()
            }])),
            Expect::Check(|f| {
                assert_eq!(
                    f.chot
                        .iter()
                        .map(|x| (x.chid.clone(), x.chst.clone()))
                        .collect::<Vec<_>>(),
                    vec![(Some("ON".into()), Some("504".into()))]
                )
            }),
        ),
        case(
            "CHOT invalid CHID",
            P::CHOT(Collection::Items(vec![ChockEvent {
                chid: s("IN"),
                ..Default::default()
            }])),
            Expect::Rejected("CHID"),
        ),
        case(
            "CHOT bare clears",
            P::CHOT(Collection::ClearAll),
            Expect::Check(|f| assert!(f.chot.is_empty())),
        ),
        case(
            "CHOT absent",
            P::CHOT(Collection::Absent),
            Expect::Rejected("CHOT"),
        ),
        case(
            "ABTM replace",
            P::ABTM(Collection::Items(vec![AirbridgeEvent {
                seq: Some(1),
                abdg: s("A9"),
                abop: s("D"),
                ..Default::default()
            }])),
            Expect::Check(|f| {
                assert_eq!(
                    f.abtm.iter().map(|x| x.abdg.clone()).collect::<Vec<_>>(),
                    vec![Some("A9".into())]
                )
            }),
        ),
        case(
            "ABTM bare clears",
            P::ABTM(Collection::ClearAll),
            Expect::Check(|f| assert!(f.abtm.is_empty())),
        ),
        case(
            "ABTM absent",
            P::ABTM(Collection::Absent),
            Expect::Rejected("ABTM"),
        ),
        // Merge collections.
        case(
            "DELY merge by CODE",
            P::DELY(Collection::Items(vec![
                delay("YY", "new"),
                delay("ZZ", "z"),
            ])),
            Expect::Check(|f| {
                let got: Vec<_> = f
                    .dely
                    .iter()
                    .map(|d| {
                        (
                            d.ordinal,
                            d.code.clone().unwrap_or_default(),
                            d.comment.clone().unwrap_or_default(),
                        )
                    })
                    .collect();
                assert_eq!(
                    got,
                    vec![
                        (1, "YY".into(), "new".into()),
                        (2, "XX".into(), "x".into()),
                        (3, "ZZ".into(), "z".into())
                    ]
                );
                assert_eq!(f.dely[0].dura_minutes, Some(120));
            }),
        ),
        case(
            "DELY bare deletes all",
            P::DELY(Collection::ClearAll),
            Expect::Check(|f| assert!(f.dely.is_empty())),
        ),
        case(
            "DELY without CODE",
            P::DELY(Collection::Items(vec![Delay {
                comment: s("x"),
                ..Default::default()
            }])),
            Expect::Rejected("CODE"),
        ),
        case(
            "DELY absent",
            P::DELY(Collection::Absent),
            Expect::Rejected("DELY"),
        ),
        case(
            "ERUT merge by RTNO",
            P::ERUT(Collection::Items(vec![route(2, "PEK"), route(3, "SHA")])),
            Expect::Check(|f| {
                let got: Vec<_> = f
                    .erut
                    .iter()
                    .map(|r| (r.ordinal, r.source_seq, r.apcd.clone().unwrap_or_default()))
                    .collect();
                assert_eq!(
                    got,
                    vec![
                        (1, Some(1), "CTU".into()),
                        (2, Some(2), "PEK".into()),
                        (3, Some(3), "SHA".into())
                    ]
                );
                assert_eq!(f.rout.len(), 2, "ROUT is a separate list");
            }),
        ),
        case(
            "ERUT bare deletes all",
            P::ERUT(Collection::ClearAll),
            Expect::Check(|f| assert!(f.erut.is_empty() && f.rout.len() == 2)),
        ),
        case(
            "ERUT without APCD",
            P::ERUT(Collection::Items(vec![RoutePoint {
                seq: Some(1),
                ..Default::default()
            }])),
            Expect::Rejected("APCD"),
        ),
        case(
            "ERUT without RTNO",
            P::ERUT(Collection::Items(vec![RoutePoint {
                apcd: s("PEK"),
                ..Default::default()
            }])),
            Expect::Rejected("RTNO"),
        ),
        case(
            "SRVT merge by SRTC",
            P::SRVT(Collection::Items(vec![
                service("S1", "5"),
                service("S3", "1"),
            ])),
            Expect::Check(|f| {
                let got: Vec<_> = f
                    .srvt
                    .iter()
                    .map(|x| {
                        (
                            x.srtc.clone().unwrap_or_default(),
                            x.srqt.clone().unwrap_or_default(),
                        )
                    })
                    .collect();
                assert_eq!(
                    got,
                    vec![
                        ("S1".into(), "5".into()),
                        ("S2".into(), "2".into()),
                        ("S3".into(), "1".into())
                    ]
                );
            }),
        ),
        case(
            "SRVT bare deletes all",
            P::SRVT(Collection::ClearAll),
            Expect::Check(|f| assert!(f.srvt.is_empty())),
        ),
        case(
            "SRVT without SRQT",
            P::SRVT(Collection::Items(vec![Service {
                srtc: s("S1"),
                ..Default::default()
            }])),
            Expect::Rejected("SRQT"),
        ),
        case(
            "SRVT without SRTC",
            P::SRVT(Collection::Items(vec![Service {
                srqt: s("1"),
                ..Default::default()
            }])),
            Expect::Rejected("SRTC"),
        ),
        case(
            "VIPF update by VPCD",
            P::VIPF(Collection::Items(vec![vip("V1", 9)])),
            Expect::Check(|f| {
                assert_eq!(f.vipf.len(), 2);
                assert_eq!(
                    (f.vipf[0].vpcd.as_deref(), f.vipf[0].vfes),
                    (Some("V1"), Some(9))
                );
                assert_eq!(f.vipf[0].vipt.len(), 1, "VIPT is kept");
            }),
        ),
        case(
            "VIPF add",
            P::VIPF(Collection::Items(vec![vip("V3", 1)])),
            Expect::Check(|f| {
                assert_eq!(
                    f.vipf
                        .iter()
                        .map(|x| x.vpcd.clone().unwrap_or_default())
                        .collect::<Vec<_>>(),
                    vec!["V1", "V2", "V3"]
                );
            }),
        ),
        case(
            "VIPF bare",
            P::VIPF(Collection::ClearAll),
            Expect::Rejected("VIPF"),
        ),
        case(
            "VIPF without VPCD",
            P::VIPF(Collection::Items(vec![Vip {
                vfes: Field::Value(1),
                ..Default::default()
            }])),
            Expect::Rejected("VPCD"),
        ),
        // Keyed events.
        case(
            "PORT set open",
            P::PORT(Collection::Items(vec![door("O", "2021-01-23 06:00")])),
            Expect::Check(|f| {
                assert_eq!(f.port.len(), 2);
                assert_eq!(f.port[0].poid.as_deref(), Some("O"));
                assert_eq!(
                    f.port[0].potm,
                    DomainConfig::default()
                        .local_time(t("2021-01-23 06:00"))
                        .into()
                );
            }),
        ),
        case(
            "PORT empty POTM clears",
            P::PORT(Collection::Items(vec![DoorEvent {
                potm: Field::Empty,
                poid: s("O"),
                unknown: vec![],
            }])),
            Expect::Check(|f| {
                assert_eq!(
                    f.port.iter().map(|d| d.poid.clone()).collect::<Vec<_>>(),
                    vec![Some("C".into())]
                )
            }),
        ),
        case(
            "PORT without POID",
            P::PORT(Collection::Items(vec![DoorEvent {
                potm: v("2021-01-23 06:00"),
                poid: Field::Absent,
                unknown: vec![],
            }])),
            Expect::Rejected("POID"),
        ),
        case(
            "PORT invalid POID",
            P::PORT(Collection::Items(vec![door("X", "2021-01-23 06:00")])),
            Expect::Rejected("POID"),
        ),
        case(
            "PORT bare",
            P::PORT(Collection::ClearAll),
            Expect::Rejected("POID"),
        ),
        case(
            "TIPT add",
            P::TIPT(Collection::Items(vec![tractor("506", "2021-01-23 05:40")])),
            Expect::Check(|f| {
                assert_eq!(
                    f.tipt
                        .iter()
                        .map(|x| x.trst.clone().unwrap_or_default())
                        .collect::<Vec<_>>(),
                    vec!["504", "505", "506"]
                )
            }),
        ),
        case(
            "TIPT empty TRTM clears",
            P::TIPT(Collection::Items(vec![TractorEvent {
                trtm: Field::Empty,
                trst: s("504"),
                unknown: vec![],
            }])),
            Expect::Check(|f| {
                assert_eq!(
                    f.tipt
                        .iter()
                        .map(|x| (x.ordinal, x.trst.clone().unwrap_or_default()))
                        .collect::<Vec<_>>(),
                    vec![(1, "505".into())]
                )
            }),
        ),
        case(
            "TIPT without TRST",
            P::TIPT(Collection::Items(vec![TractorEvent {
                trtm: v("2021-01-23 05:40"),
                trst: Field::Empty,
                unknown: vec![],
            }])),
            Expect::Rejected("TRST"),
        ),
        case(
            "PSHT update",
            P::PSHT(Collection::Items(vec![push("505", "2021-01-23 05:50")])),
            Expect::Check(|f| {
                assert_eq!(f.psht.len(), 2);
                assert_eq!(
                    f.psht[1].pstm,
                    DomainConfig::default()
                        .local_time(t("2021-01-23 05:50"))
                        .into()
                );
            }),
        ),
        case(
            "PSHT empty PSTM clears",
            P::PSHT(Collection::Items(vec![PushEvent {
                pstm: Field::Empty,
                pust: s("505"),
                ..Default::default()
            }])),
            Expect::Check(|f| {
                assert_eq!(
                    f.psht
                        .iter()
                        .map(|x| x.pust.clone().unwrap_or_default())
                        .collect::<Vec<_>>(),
                    vec!["504"]
                )
            }),
        ),
        case(
            "PSHT without PUST",
            P::PSHT(Collection::Items(vec![PushEvent {
                pstm: v("2021-01-23 05:50"),
                ..Default::default()
            }])),
            Expect::Rejected("PUST"),
        ),
    ]
}
