//! The consumer contract over generated flight states:
//! whatever a flight holds — every scalar kind at its extremes, every list,
//! a master's MAFL or a share's null, ACTIVE or DELETED — both events of its
//! write match schemas/ (docs/asyncapi.yaml). The engine's own events are
//! checked in `events_for` for every unit test too.

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, TimeZone, Utc};
use proptest::collection::vec;
use proptest::option::of;
use proptest::prelude::*;

use crate::codec::{ScalarKind, ScalarTag};
use crate::domain::events::contract_check::check_record;
use crate::domain::events::{Provenance, WriteFacts, events_for};
use crate::domain::flight_state::*;
use crate::domain::mafl::MaflEntry;
use crate::domain::{EventType, FlightState};

fn text() -> impl Strategy<Value = Option<String>> + Clone {
    of("\\PC{0,12}")
}

/// An instant anywhere in 1970–2099 with any real-world offset.
fn time() -> impl Strategy<Value = Option<DateTime<FixedOffset>>> + Clone {
    of((0i64..4_102_444_800, -12i32 * 4..=14 * 4)).prop_map(|t| {
        t.and_then(|(secs, quarters)| {
            let offset = FixedOffset::east_opt(quarters * 900)?;
            Some(Utc.timestamp_opt(secs, 0).single()?.with_timezone(&offset))
        })
    })
}

fn utc() -> impl Strategy<Value = DateTime<Utc>> {
    (0i64..4_102_444_800, 0u32..1_000_000).prop_map(|(s, micros)| {
        Utc.timestamp_opt(s, micros * 1000)
            .single()
            .unwrap_or_default()
    })
}

fn date() -> impl Strategy<Value = NaiveDate> {
    (0i64..47_000)
        .prop_map(|d| NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default() + Duration::days(d))
}

fn seq() -> impl Strategy<Value = Option<i64>> + Clone {
    of(any::<i64>())
}

/// A stored value of `kind`, as the store and engine produce them.
fn value(kind: ScalarKind) -> BoxedStrategy<Option<FlightValue>> {
    match kind {
        ScalarKind::Text => text().prop_map(|v| v.map(FlightValue::Text)).boxed(),
        ScalarKind::Int => of(any::<i64>())
            .prop_map(|v| v.map(FlightValue::Int))
            .boxed(),
        ScalarKind::Decimal => of((any::<i32>(), of(0u32..100_000)))
            .prop_map(|v| {
                v.map(|(int, frac)| {
                    FlightValue::Decimal(match frac {
                        Some(f) => format!("{int}.{f}"),
                        None => int.to_string(),
                    })
                })
            })
            .boxed(),
        ScalarKind::Time => time().prop_map(|v| v.map(FlightValue::Time)).boxed(),
        ScalarKind::Date => of(date()).prop_map(|v| v.map(FlightValue::Date)).boxed(),
        ScalarKind::Hhmm => of((0u32..24, 0u32..60))
            .prop_map(|v| v.map(|(h, m)| FlightValue::Hhmm(format!("{h:02}{m:02}"))))
            .boxed(),
    }
}

fn lists() -> impl Strategy<Value = FlightState> {
    let route = (seq(), text(), time(), time(), text(), text()).prop_map(
        |(source_seq, apcd, scat, scdt, sadc, sddc)| RouteItem {
            ordinal: 0,
            source_seq,
            apcd,
            scat,
            scdt,
            sadc,
            sddc,
        },
    );
    let stand =
        (seq(), text(), time(), time()).prop_map(|(source_seq, psst, stst, stet)| StandItem {
            ordinal: 0,
            source_seq,
            psst,
            stst,
            stet,
        });
    let gate = (seq(), text(), time(), time(), time(), time(), text()).prop_map(
        |(source_seq, gate, pgot, pgct, gotm, gctm, gtyp)| GateItem {
            ordinal: 0,
            source_seq,
            gate,
            pgot,
            pgct,
            gotm,
            gctm,
            gtyp,
        },
    );
    let counter = (
        seq(),
        text(),
        text(),
        time(),
        time(),
        time(),
        time(),
        text(),
    )
        .prop_map(
            |(source_seq, chkc, ccls, pcot, pcct, cotm, cctm, ctyp)| CounterItem {
                ordinal: 0,
                source_seq,
                chkc,
                ccls,
                pcot,
                pcct,
                cotm,
                cctm,
                ctyp,
            },
        );
    let carousel = (
        seq(),
        text(),
        text(),
        time(),
        time(),
        time(),
        time(),
        text(),
    )
        .prop_map(
            |(source_seq, belt, bcls, pcot, pcct, fbag, lbag, btyp)| CarouselItem {
                ordinal: 0,
                source_seq,
                belt,
                bcls,
                pcot,
                pcct,
                fbag,
                lbag,
                btyp,
            },
        );
    let chute = (
        seq(),
        text(),
        text(),
        time(),
        time(),
        time(),
        time(),
        text(),
    )
        .prop_map(
            |(source_seq, chut, ccls, pcbt, pcet, cbtm, cetm, ctyp)| ChuteItem {
                ordinal: 0,
                source_seq,
                chut,
                ccls,
                pcbt,
                pcet,
                cbtm,
                cetm,
                ctyp,
            },
        );
    let chock =
        (seq(), time(), text(), text()).prop_map(|(source_seq, chtm, chid, chst)| ChockItem {
            ordinal: 0,
            source_seq,
            chtm,
            chid,
            chst,
        });
    let bridge =
        (seq(), text(), text(), time()).prop_map(|(source_seq, abdg, abop, aotm)| AirbridgeItem {
            ordinal: 0,
            source_seq,
            abdg,
            abop,
            aotm,
        });
    let delay =
        (text(), time(), of(0i64..6000), text()).prop_map(|(code, strt, dura_minutes, comment)| {
            DelayItem {
                ordinal: 0,
                source_seq: None,
                code,
                strt,
                dura_minutes,
                comment,
            }
        });
    let service = (text(), text(), time(), time(), text(), text(), text()).prop_map(
        |(srtc, srqt, srst, sret, srpr, sanr, sarr)| ServiceItem {
            ordinal: 0,
            source_seq: None,
            srtc,
            srqt,
            srst,
            sret,
            srpr,
            sanr,
            sarr,
        },
    );
    let vipt =
        (text(), text(), time(), time()).prop_map(|(vscd, vtqy, vtst, vtet)| VipServiceItem {
            ordinal: 0,
            source_seq: None,
            vscd,
            vtqy,
            vtst,
            vtet,
        });
    let vip = (text(), of(any::<i64>()), vec(vipt, 0..3)).prop_map(|(vpcd, vfes, mut vipt)| {
        renumber(&mut vipt);
        VipItem {
            ordinal: 0,
            source_seq: None,
            vpcd,
            vfes,
            vipt,
        }
    });
    let door = (time(), text()).prop_map(|(potm, poid)| DoorItem {
        ordinal: 0,
        source_seq: None,
        potm,
        poid,
    });
    let tractor = (time(), text()).prop_map(|(trtm, trst)| TractorItem {
        ordinal: 0,
        source_seq: None,
        trtm,
        trst,
    });
    let push =
        (seq(), time(), text(), text()).prop_map(|(source_seq, pstm, psid, pust)| PushItem {
            ordinal: 0,
            source_seq,
            pstm,
            psid,
            pust,
        });
    let n = 0..3;
    (
        (
            vec(route.clone(), n.clone()),
            vec(route, n.clone()),
            vec(stand, n.clone()),
            vec(gate, n.clone()),
            vec(counter, n.clone()),
            vec(carousel, n.clone()),
            vec(chute, n.clone()),
            vec(chock, n.clone()),
        ),
        (
            vec(bridge, n.clone()),
            vec(delay, n.clone()),
            vec(service, n.clone()),
            vec(vip, n.clone()),
            vec(door, n.clone()),
            vec(tractor, n.clone()),
            vec(push, n),
        ),
    )
        .prop_map(
            |(
                (rout, erut, psdt, gtdt, ckdt, cldt, chdt, chot),
                (abtm, dely, srvt, vipf, port, tipt, psht),
            )| {
                let mut f = FlightState::new(1, DateTime::<Utc>::UNIX_EPOCH);
                (f.rout, f.erut, f.psdt, f.gtdt) = (rout, erut, psdt, gtdt);
                (f.ckdt, f.cldt, f.chdt, f.chot) = (ckdt, cldt, chdt, chot);
                (f.abtm, f.dely, f.srvt, f.vipf) = (abtm, dely, srvt, vipf);
                (f.port, f.tipt, f.psht) = (port, tipt, psht);
                renumber(&mut f.rout);
                renumber(&mut f.erut);
                renumber(&mut f.psdt);
                renumber(&mut f.gtdt);
                renumber(&mut f.ckdt);
                renumber(&mut f.cldt);
                renumber(&mut f.chdt);
                renumber(&mut f.chot);
                renumber(&mut f.abtm);
                renumber(&mut f.dely);
                renumber(&mut f.srvt);
                renumber(&mut f.vipf);
                renumber(&mut f.port);
                renumber(&mut f.tipt);
                renumber(&mut f.psht);
                f
            },
        )
}

/// A flight in any state msgx can hold, with the MAFL a projection gets.
fn flight() -> impl Strategy<Value = (FlightState, Option<Vec<MaflEntry>>)> {
    let scalars: Vec<BoxedStrategy<Option<FlightValue>>> = ScalarTag::ALL
        .iter()
        .filter(|t| **t != ScalarTag::FLID)
        .map(|t| value(t.kind()))
        .collect();
    let meta = (
        1i64..i64::MAX,
        any::<bool>(),
        1i64..i64::MAX,
        of(date()),
        any::<i64>(),
        utc(),
        utc(),
    );
    let exceptions = (
        of((".{1,4}", prop::sample::select(vec!["TO", "FROM"]), text())),
        of(("[AG]", text())),
        of(("[OG]", text())),
    );
    let mafl = of(vec((1i64..i64::MAX, text()), 0..4));
    (meta, scalars, exceptions, mafl, lists()).prop_map(
        |(
            (flid, deleted, version, day, msg, created, updated),
            values,
            (fdiv, fret, flab),
            mafl,
            lists,
        )| {
            let mut f = FlightState { flid, ..lists };
            if deleted {
                f.state = FlightStatus::Deleted;
            }
            (f.state_version, f.operation_day, f.last_msg_id) = (version, day, msg);
            (f.created_at, f.updated_at) = (created, updated);
            let tags = ScalarTag::ALL.iter().filter(|t| **t != ScalarTag::FLID);
            for (tag, v) in tags.zip(values) {
                if let Some(v) = v {
                    f.scalars.insert(*tag, v);
                }
            }
            f.fdiv = fdiv.map(|(ddes, ddir, reason)| DiversionInfo {
                ddes,
                ddir: ddir.to_string(),
                reason,
            });
            f.fret = fret.map(|(reid, reason)| ReturnInfo { reid, reason });
            f.flab = flab.map(|(ares, reason)| LandingAbortInfo { ares, reason });
            let mafl = mafl.map(|m| {
                m.into_iter()
                    .map(|(flid, flno)| MaflEntry { flid, flno })
                    .collect()
            });
            (f, mafl)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_write_of_any_flight_keeps_the_contract(
        (f, mafl) in flight(),
        kind in prop::sample::select(vec!["SCHD-DNLD", "FLOP-GTDT", "FLOP-FDEL", "SCHD-ADFT"]),
        changed in vec(prop::sample::select(vec!["STATE", "GTDT", "MAFL", "SODT"]), 0..4),
    ) {
        let changed: Vec<String> = changed.into_iter().map(String::from).collect();
        let facts = WriteFacts::of_write(None, &f, None, mafl.as_deref(), changed, Provenance::internal(kind));
        for e in events_for(&f, mafl, facts) {
            let event_type = match e.event_type() {
                EventType::Upsert => "UPSERT",
                EventType::Tombstone => "TOMBSTONE",
            };
            let topic = if e.target() == crate::domain::EventTarget::KafkaMsg { "msg" } else { "schd" };
            let checked = check_record(topic, e.partition_key().to_string().as_bytes(), event_type, e.to_bytes().as_deref());
            prop_assert!(checked.is_ok(), "{}", checked.err().unwrap_or_default());
        }
    }
}

/// The check can fail: a projection that lost a key, gained one or changed
/// a type, and a tombstone on `msg`, are refused.
#[test]
fn the_check_refuses_what_the_contract_does_not_allow() {
    let mut f = FlightState::new(15, DateTime::<Utc>::UNIX_EPOCH);
    f.state_version = 1;
    let facts = WriteFacts::of_write(
        None,
        &f,
        None,
        Some(&[]),
        vec!["STATE".into()],
        Provenance::internal("SCHD-DNLD"),
    );
    let [msg, schd] = events_for(&f, Some(Vec::new()), facts);
    let good = schd.to_bytes().expect("a projection");
    assert_eq!(check_record("schd", b"15", "UPSERT", Some(&good)), Ok(()));
    let doc: serde_json::Value = serde_json::from_slice(&good).expect("json");
    let changed = |edit: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| {
        let mut d = doc.clone();
        edit(d.as_object_mut().expect("object"));
        serde_json::to_vec(&d).expect("json")
    };
    for bad in [
        changed(&|m| {
            m.remove("gtdt");
        }),
        changed(&|m| {
            m.insert("extra".into(), serde_json::json!(1));
        }),
        changed(&|m| {
            m.insert("lbwt".into(), serde_json::json!(12.5));
        }),
        changed(&|m| {
            m.insert("sodt".into(), serde_json::json!("01DEC261420"));
        }),
    ] {
        assert!(
            check_record("schd", b"15", "UPSERT", Some(&bad)).is_err(),
            "{}",
            String::from_utf8_lossy(&bad)
        );
    }
    assert!(check_record("schd", b"fifteen", "UPSERT", Some(&good)).is_err());
    assert!(check_record("schd", b"15", "UPSERT", None).is_err());
    assert!(check_record("msg", b"15", "TOMBSTONE", None).is_err());
    let note = msg.to_bytes().expect("a notification");
    assert!(check_record("msg", b"15", "UPSERT", Some(&note)).is_ok());
    assert!(check_record("schd", b"15", "UPSERT", Some(&note)).is_err());
}
