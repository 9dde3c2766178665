//! Hand-built inputs for the domain tests: small constructors for messages,
//! FLTRs and seeded flight sets.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

use crate::codec::*;
use crate::domain::{
    ApplyContext, Decision, DomainConfig, DomainEvent, FlightSet, FlightState, FlightStateEngine,
    SchdPayload,
};

/// The fixed "now" of every test decision.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 8, 0, 0)
        .single()
        .expect("valid now")
}

pub fn engine() -> FlightStateEngine {
    FlightStateEngine::new(DomainConfig::default())
}

pub fn ctx(msg_id: i64) -> ApplyContext {
    ApplyContext { msg_id, now: now() }
}

/// `t("2021-01-23 05:35")`.
pub fn t(s: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").expect("test time")
}

pub fn day(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("test date")
}

pub fn meta(ty: &str, styp: &str) -> Meta {
    Meta {
        sndr: "AODB".into(),
        seqn: "1".into(),
        dttm: None,
        msg_type: ty.into(),
        styp: styp.into(),
    }
}

pub fn flop(flid: i64, payload: FlopPayload) -> DecodedMessage {
    let styp = serde_json::to_value(&payload)
        .ok()
        .and_then(|v| v.get("styp").and_then(|s| s.as_str()).map(str::to_string))
        .unwrap_or_default();
    DecodedMessage {
        meta: meta("FLOP", &styp),
        kind: MsgKind::Flop(Flop {
            flid,
            ffid: Field::Absent,
            payload,
            unknown: vec![],
        }),
    }
}

pub fn fdel(flid: i64) -> DecodedMessage {
    DecodedMessage {
        meta: meta("FLOP", "FDEL"),
        kind: MsgKind::Fdel(Fdel {
            flid,
            ffid: Field::Absent,
            fdel_empty: true,
        }),
    }
}

fn styp_of(s: &str) -> SchdStyp {
    match s {
        "DNLD" => SchdStyp::Dnld,
        "RESP" => SchdStyp::Resp,
        "ADFT" => SchdStyp::Adft,
        "DEL" => SchdStyp::Del,
        o => SchdStyp::Other(o.into()),
    }
}

/// A SCHD message with RECS = number of FLTR.
pub fn schd(styp: &str, flights: Vec<Fltr>) -> DecodedMessage {
    let n = i64::try_from(flights.len()).expect("small");
    schd_recs(styp, Field::Value(n), flights)
}

pub fn schd_recs(styp: &str, recs: Field<i64>, flights: Vec<Fltr>) -> DecodedMessage {
    DecodedMessage {
        meta: meta("SCHD", styp),
        kind: MsgKind::Schd(Schd {
            styp: styp_of(styp),
            recs,
            flights,
            unknown: vec![],
        }),
    }
}

/// Sets (or replaces) a scalar of a FLTR.
pub fn put(f: &mut Fltr, tag: ScalarTag, v: Field<ScalarValue>) {
    f.scalars.retain(|(t, _)| *t != tag);
    f.scalars.push((tag, v));
}

pub fn txt(s: &str) -> Field<ScalarValue> {
    Field::Value(ScalarValue::Text(s.into()))
}
pub fn int(i: i64) -> Field<ScalarValue> {
    Field::Value(ScalarValue::Int(i))
}
pub fn tm(s: &str) -> Field<ScalarValue> {
    Field::Value(ScalarValue::Time(t(s)))
}
pub fn s(v: &str) -> Field<String> {
    Field::Value(v.to_string())
}

/// A minimal FLTR: FLID, SODT and the other mandatory fields (sis-format
/// §2.1: ALCD, FLNO, MVIN, FLTY, FLIN, ACFT).
pub fn fltr(flid: i64, sodt: &str) -> Fltr {
    let mut f = Fltr::default();
    put(&mut f, ScalarTag::FLID, int(flid));
    put(&mut f, ScalarTag::ALCD, txt("YG"));
    put(&mut f, ScalarTag::FLNO, txt(&format!("YG{flid}")));
    put(&mut f, ScalarTag::MVIN, txt("D"));
    put(&mut f, ScalarTag::SODT, tm(sodt));
    put(&mut f, ScalarTag::FLTY, txt("W"));
    put(&mut f, ScalarTag::FLIN, txt("D"));
    put(&mut f, ScalarTag::ACFT, txt("733"));
    f
}

/// A FLTR with FLID and the mandatory fields but no SODT (ADFT may omit it,
/// §12.3).
pub fn fltr_without_sodt(flid: i64) -> Fltr {
    let mut f = fltr(flid, "2021-01-23 05:35");
    f.scalars.retain(|(t, _)| *t != ScalarTag::SODT);
    f
}

/// A share FLTR pointing at `maid`.
pub fn share(flid: i64, maid: i64, sodt: &str) -> Fltr {
    let mut f = fltr(flid, sodt);
    put(&mut f, ScalarTag::MAID, int(maid));
    put(&mut f, ScalarTag::CSOP, txt("YG"));
    put(&mut f, ScalarTag::CSFT, txt(&format!("YG{maid}")));
    f
}

/// A valid value for every scalar tag of sis-format §2.3 (no MAID).
pub fn value_for(tag: ScalarTag, flid: i64) -> Option<ScalarValue> {
    Some(match tag {
        ScalarTag::FLID => ScalarValue::Int(flid),
        ScalarTag::MAID => return None,
        ScalarTag::MVIN => ScalarValue::Text("D".into()),
        ScalarTag::FLIN => ScalarValue::Text("D".into()),
        ScalarTag::SODT => ScalarValue::Time(t("2021-01-23 05:35")),
        _ => match tag.kind() {
            ScalarKind::Text => ScalarValue::Text(format!("{}{flid}", tag.name())),
            ScalarKind::Int => ScalarValue::Int(7),
            ScalarKind::Decimal => ScalarValue::Decimal("12.5".into()),
            ScalarKind::Time => ScalarValue::Time(t("2021-01-23 06:00")),
            ScalarKind::Date => ScalarValue::Date(day("2021-01-23")),
            ScalarKind::Hhmm => ScalarValue::Hhmm("0535".into()),
        },
    })
}

pub fn gate(seq: i64, code: &str) -> GateAlloc {
    GateAlloc {
        seq: Some(seq),
        gate: s(code),
        pgot: Field::Value(t("2021-01-23 04:00")),
        gtyp: s("D"),
        ..Default::default()
    }
}
pub fn route(seq: i64, apcd: &str) -> RoutePoint {
    RoutePoint {
        seq: Some(seq),
        apcd: s(apcd),
        scat: Field::Value(ScalarValue::Time(t("2021-01-23 07:10"))),
        ..Default::default()
    }
}
pub fn delay(code: &str, comment: &str) -> Delay {
    Delay {
        code: s(code),
        strt: Field::Value(t("2021-01-23 05:00")),
        dura_minutes: Field::Value(120),
        comment: s(comment),
    }
}
pub fn service(srtc: &str, srqt: &str) -> Service {
    Service {
        srtc: s(srtc),
        srqt: s(srqt),
        ..Default::default()
    }
}
pub fn vip(vpcd: &str, vfes: i64) -> Vip {
    Vip {
        vpcd: s(vpcd),
        vfes: Field::Value(vfes),
        vipt: vec![VipService {
            vscd: s("S1"),
            vtqy: s("1"),
            ..Default::default()
        }],
        unknown: vec![],
    }
}
pub fn door(poid: &str, at: &str) -> DoorEvent {
    DoorEvent {
        potm: Field::Value(t(at)),
        poid: s(poid),
        unknown: vec![],
    }
}
pub fn tractor(trst: &str, at: &str) -> TractorEvent {
    TractorEvent {
        trtm: Field::Value(t(at)),
        trst: s(trst),
        unknown: vec![],
    }
}
pub fn push(pust: &str, at: &str) -> PushEvent {
    PushEvent {
        seq: Some(1),
        pstm: Field::Value(t(at)),
        psid: s("IN"),
        pust: s(pust),
        unknown: vec![],
    }
}

/// A FLTR carrying every scalar, FDIV/FRET/FLAB and two items of every group.
pub fn full_fltr(flid: i64) -> Fltr {
    let mut f = Fltr::default();
    for &tag in ScalarTag::ALL {
        if let Some(v) = value_for(tag, flid) {
            put(&mut f, tag, Field::Value(v));
        }
    }
    f.fdiv = Field::Value(Diversion {
        ddes: s("PEK"),
        ddir: s("TO"),
        reason: s("WX"),
    });
    f.fret = Field::Value(Return {
        reid: s("A"),
        reason: s("tech"),
    });
    f.flab = Field::Value(LandingAbort {
        ares: s("G"),
        reason: s("wind"),
    });
    f.rout = Collection::Items(vec![route(1, "XIY"), route(2, "PEK")]);
    f.erut = Collection::Items(vec![route(1, "CTU"), route(2, "XIY")]);
    f.psdt = Collection::Items(vec![
        StandAlloc {
            seq: Some(1),
            psst: s("504"),
            ..Default::default()
        },
        StandAlloc {
            seq: Some(2),
            psst: s("505"),
            ..Default::default()
        },
    ]);
    f.gtdt = Collection::Items(vec![gate(1, "G1"), gate(2, "G1")]);
    f.ckdt = Collection::Items(vec![
        CounterAlloc {
            seq: Some(1),
            chkc: s("C1"),
            ..Default::default()
        },
        CounterAlloc {
            seq: Some(2),
            chkc: s("C2"),
            ..Default::default()
        },
    ]);
    f.cldt = Collection::Items(vec![
        CarouselAlloc {
            seq: Some(1),
            belt: s("B1"),
            ..Default::default()
        },
        CarouselAlloc {
            seq: Some(2),
            belt: s("B2"),
            ..Default::default()
        },
    ]);
    f.chdt = Collection::Items(vec![
        ChuteAlloc {
            seq: Some(1),
            chut: s("H1"),
            ..Default::default()
        },
        ChuteAlloc {
            seq: Some(2),
            chut: s("H2"),
            ..Default::default()
        },
    ]);
    f.chot = Collection::Items(vec![
        ChockEvent {
            seq: Some(1),
            chid: s("ON"),
            chtm: Field::Value(t("2021-01-23 05:00")),
            ..Default::default()
        },
        ChockEvent {
            seq: Some(2),
            chid: s("OFF"),
            chtm: Field::Value(t("2021-01-23 05:30")),
            ..Default::default()
        },
    ]);
    f.abtm = Collection::Items(vec![
        AirbridgeEvent {
            seq: Some(1),
            abdg: s("A1"),
            abop: s("A"),
            ..Default::default()
        },
        AirbridgeEvent {
            seq: Some(2),
            abdg: s("A1"),
            abop: s("D"),
            ..Default::default()
        },
    ]);
    f.dely = Collection::Items(vec![delay("YY", "y"), delay("XX", "x")]);
    f.srvt = Collection::Items(vec![service("S1", "1"), service("S2", "2")]);
    f.vipf = Collection::Items(vec![vip("V1", 2), vip("V2", 3)]);
    f.port = Collection::Items(vec![
        door("O", "2021-01-23 05:00"),
        door("C", "2021-01-23 05:20"),
    ]);
    f.tipt = Collection::Items(vec![
        tractor("504", "2021-01-23 05:10"),
        tractor("505", "2021-01-23 05:11"),
    ]);
    f.psht = Collection::Items(vec![
        push("504", "2021-01-23 05:25"),
        push("505", "2021-01-23 05:26"),
    ]);
    f
}

/// Decides `msg` against `set` and, when applied, writes the result into it.
pub fn apply(set: &mut FlightSet, msg_id: i64, msg: &DecodedMessage) -> Decision {
    let d = engine().decide(&ctx(msg_id), msg, set);
    if let Decision::Applied { writes, .. } = &d {
        for w in writes {
            set.insert(w.clone());
        }
    }
    d
}

/// A set seeded by one SCHD DNLD of `fltrs`.
pub fn seeded(fltrs: Vec<Fltr>) -> FlightSet {
    let mut set = FlightSet::new();
    let d = apply(&mut set, 1, &schd("DNLD", fltrs));
    assert!(matches!(d, Decision::Applied { .. }), "seed failed: {d:?}");
    set
}

/// The writes and events of an applied decision (panics otherwise: test only).
pub fn applied(d: Decision) -> (Vec<FlightState>, Vec<DomainEvent>) {
    match d {
        Decision::Applied { writes, events } => (writes, events),
        other => panic!("expected Applied, got {other:?}"),
    }
}

/// The write for `flid`.
pub fn write_of(writes: &[FlightState], flid: i64) -> &FlightState {
    writes
        .iter()
        .find(|w| w.flid == flid)
        .unwrap_or_else(|| panic!("no write for {flid}"))
}

/// The MAFL FLIDs in the last schd projection of `flid` among `events`.
pub fn projected_mafl(events: &[DomainEvent], flid: i64) -> Option<Vec<i64>> {
    events.iter().rev().find_map(|e| match e {
        DomainEvent::Schd(s) if s.flid == flid => match &s.payload {
            SchdPayload::Upsert(p) => Some(
                p.mafl
                    .as_ref()
                    .map(|m| m.iter().map(|x| x.flid).collect())
                    .unwrap_or_default(),
            ),
            SchdPayload::Tombstone => None,
        },
        _ => None,
    })
}

/// The changed fields of the notification for `flid`.
pub fn changed_of(events: &[DomainEvent], flid: i64) -> Vec<String> {
    events
        .iter()
        .find_map(|e| match e {
            DomainEvent::Msg(n) if n.flid == flid => Some(n.changed_fields.clone()),
            _ => None,
        })
        .unwrap_or_default()
}
