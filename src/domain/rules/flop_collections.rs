//! FLOP handlers for the repeating groups (sis-format §3.2, §3.3; design
//! §11.3, §12.2; INV-20). Every handler needs its payload: an absent group is
//! rejected (a FLOP that does not carry what its STYP names).
//!
//! * **Replace** (ABTM, CHDT, CHOT, CKDT, CLDT, GTDT, PSDT): the items replace
//!   the whole list; a bare element empties it.
//! * **Merge** (DELY by CODE, ERUT by RTNO, SRVT by SRTC, VIPF by VPCD): each
//!   item replaces the first stored item with its key or is appended; keys
//!   not mentioned are kept. A bare element deletes all (not VIPF: no clear).
//!   An item without its key is rejected. ERUT is then ordered by RTNO
//!   (sis-format §2.4); a VIPF merges *into* the stored VIP.
//! * **Events keyed by what the STYP sets** (PORT by POID, TIPT by TRST, PSHT
//!   by PUST): an item with its time upserts; an item whose time is empty
//!   removes the stored event with that key (the "clear that time" of §3.3).
//!   The key is mandatory; a bare element is rejected.

use crate::codec::{
    AirbridgeEvent, CarouselAlloc, ChockEvent, ChuteAlloc, Collection, CounterAlloc, Delay,
    DoorEvent, GateAlloc, PushEvent, RoutePoint, Service, StandAlloc, TractorEvent, Vip,
};
use crate::domain::error::DomainError;
use crate::domain::flight_state::{FlightState, Ordinal, renumber};

use super::apply::{
    OnAbsent, apply, apply_replace, convert_collection, merge_by_key, remove_first_by_key,
};
use super::convert::Conv;

type Res = Result<(), DomainError>;

fn missing(field: &'static str, context: &'static str) -> DomainError {
    DomainError::Missing { field, context }
}

/// Replace rule shared by the seven replace subtypes.
fn replace<C, T: Ordinal>(
    list: &mut Vec<T>,
    name: &'static str,
    coll: &Collection<C>,
    f: impl Fn(&C) -> Result<T, DomainError>,
) -> Res {
    if matches!(coll, Collection::Absent) {
        return Err(missing(name, "the FLOP does not carry its group"));
    }
    apply_replace(list, convert_collection(coll, f)?, OnAbsent::Keep);
    Ok(())
}

/// Merge rule shared by DELY, ERUT, SRVT: bare element deletes all; every
/// item needs its key (`check` rejects otherwise).
fn merge<C, T: Ordinal, K: PartialEq>(
    list: &mut Vec<T>,
    name: &'static str,
    coll: &Collection<C>,
    convert: impl Fn(&C) -> Result<T, DomainError>,
    check: impl Fn(&T) -> Res,
    key: impl Fn(&T) -> K,
) -> Res {
    match coll {
        Collection::Absent => Err(missing(name, "the FLOP does not carry its group")),
        Collection::ClearAll => {
            list.clear();
            Ok(())
        }
        Collection::Items(items) => {
            let incoming = items.iter().map(convert).collect::<Result<Vec<_>, _>>()?;
            incoming.iter().try_for_each(&check)?;
            merge_by_key(list, incoming, key);
            Ok(())
        }
    }
}

/// Keyed-event rule shared by PORT, TIPT, PSHT: `has_time` decides upsert
/// vs removal; the key must be present.
fn keyed_events<C, T: Ordinal>(
    list: &mut Vec<T>,
    name: &'static str,
    key_name: &'static str,
    coll: &Collection<C>,
    convert: impl Fn(&C) -> Result<T, DomainError>,
    key: impl Fn(&T) -> Option<String>,
    has_time: impl Fn(&T) -> bool,
) -> Res {
    let items = match coll {
        Collection::Items(items) => items,
        Collection::Absent => return Err(missing(name, "the FLOP does not carry its group")),
        Collection::ClearAll => return Err(missing(key_name, "a bare element has no key")),
    };
    for raw in items {
        let item = convert(raw)?;
        let k = key(&item).ok_or(missing(key_name, "every item needs its key"))?;
        if has_time(&item) {
            merge_by_key(list, vec![item], &key);
        } else {
            remove_first_by_key(list, &Some(k), &key);
        }
    }
    Ok(())
}

/// ABTM: replace the airbridge-event list.
pub fn abtm(st: &mut FlightState, cx: Conv<'_>, c: &Collection<AirbridgeEvent>) -> Res {
    replace(&mut st.abtm, "ABTM", c, |x| cx.airbridge(x))
}
/// CHDT: replace the chute list.
pub fn chdt(st: &mut FlightState, cx: Conv<'_>, c: &Collection<ChuteAlloc>) -> Res {
    replace(&mut st.chdt, "CHDT", c, |x| cx.chute(x))
}
/// CHOT: replace the chock list (CHID must be ON/OFF).
pub fn chot(st: &mut FlightState, cx: Conv<'_>, c: &Collection<ChockEvent>) -> Res {
    replace(&mut st.chot, "CHOT", c, |x| cx.chock(x))
}
/// CKDT: replace the check-in counter list.
pub fn ckdt(st: &mut FlightState, cx: Conv<'_>, c: &Collection<CounterAlloc>) -> Res {
    replace(&mut st.ckdt, "CKDT", c, |x| cx.counter(x))
}
/// CLDT: replace the carousel list.
pub fn cldt(st: &mut FlightState, cx: Conv<'_>, c: &Collection<CarouselAlloc>) -> Res {
    replace(&mut st.cldt, "CLDT", c, |x| cx.carousel(x))
}
/// GTDT: replace the gate list.
pub fn gtdt(st: &mut FlightState, cx: Conv<'_>, c: &Collection<GateAlloc>) -> Res {
    replace(&mut st.gtdt, "GTDT", c, |x| cx.gate(x))
}
/// PSDT: replace the planned-stand list.
pub fn psdt(st: &mut FlightState, cx: Conv<'_>, c: &Collection<StandAlloc>) -> Res {
    replace(&mut st.psdt, "PSDT", c, |x| cx.stand(x))
}

/// DELY: merge by CODE; bare `<DELY></DELY>` deletes all; CODE mandatory.
pub fn dely(st: &mut FlightState, cx: Conv<'_>, c: &Collection<Delay>) -> Res {
    merge(
        &mut st.dely,
        "DELY",
        c,
        |x| cx.delay(x),
        |d| match d.code {
            Some(_) => Ok(()),
            None => Err(missing("DELY@CODE", "a non-empty DELY needs CODE")),
        },
        |d| d.code.clone(),
    )
}

/// ERUT: merge by RTNO; bare element deletes all routes; RTNO and APCD
/// mandatory. The merged route is ordered by RTNO (stable; points without
/// one, possible from a SCHD, last) and renumbered: stored [1, 3] plus RTNO 2
/// is [1, 2, 3] (sis-format §2.4).
pub fn erut(st: &mut FlightState, cx: Conv<'_>, c: &Collection<RoutePoint>) -> Res {
    merge(
        &mut st.erut,
        "ERUT",
        c,
        |x| cx.route(x),
        |r| match (r.source_seq, &r.apcd) {
            (None, _) => Err(missing("ERUT@RTNO", "ERUT merges by RTNO")),
            (_, None) => Err(missing("ERUT/APCD", "every route point needs APCD")),
            _ => Ok(()),
        },
        |r| r.source_seq,
    )?;
    st.erut
        .sort_by_key(|r| (r.source_seq.is_none(), r.source_seq));
    renumber(&mut st.erut);
    Ok(())
}

/// SRVT: merge by SRTC; bare element deletes all services; SRTC and SRQT mandatory.
pub fn srvt(st: &mut FlightState, cx: Conv<'_>, c: &Collection<Service>) -> Res {
    merge(
        &mut st.srvt,
        "SRVT",
        c,
        |x| cx.service(x),
        |s| match (&s.srtc, &s.srqt) {
            (None, _) => Err(missing("SRVT/SRTC", "SRVT merges by SRTC")),
            (_, None) => Err(missing("SRVT/SRQT", "every service needs SRQT")),
            _ => Ok(()),
        },
        |s| s.srtc.clone(),
    )
}

/// VIPF: add the VIP, or merge into the stored VIP with its VPCD (mandatory):
/// VFES as a scalar (value sets, empty clears, absent keeps) and the VIPT
/// items by their key VSCD (mandatory), stored VIPTs not mentioned kept
/// (sis-format §2.4; a VIPF without VIPT, like the real sample VIPF-01, keeps
/// them all). VIPs cannot be cleared or removed by FLOP (bare
/// element rejected).
pub fn vipf(st: &mut FlightState, cx: Conv<'_>, c: &Collection<Vip>) -> Res {
    let items = match c {
        Collection::Items(items) => items,
        Collection::Absent => return Err(missing("VIPF", "the FLOP does not carry its group")),
        Collection::ClearAll => {
            return Err(missing("VIPF/VPCD", "VIPF cannot clear or remove VIPs"));
        }
    };
    for raw in items {
        let incoming = cx.vip(raw)?;
        let Some(vpcd) = incoming.vpcd.clone() else {
            return Err(missing("VIPF/VPCD", "VIPF merges by VPCD"));
        };
        if incoming.vipt.iter().any(|t| t.vscd.is_none()) {
            return Err(missing("VIPF/VIPT/VSCD", "VIPT merges by VSCD"));
        }
        match st
            .vipf
            .iter_mut()
            .find(|v| v.vpcd.as_deref() == Some(vpcd.as_str()))
        {
            None => st.vipf.push(incoming),
            Some(stored) => {
                apply(&mut stored.vfes, raw.vfes.clone(), OnAbsent::Keep);
                merge_by_key(&mut stored.vipt, incoming.vipt, |t| t.vscd.clone());
            }
        }
    }
    renumber(&mut st.vipf);
    Ok(())
}

/// PORT: door open (`O`) / close (`C`) time, keyed by POID (mandatory, O/C);
/// an empty POTM removes that door event.
pub fn port(st: &mut FlightState, cx: Conv<'_>, c: &Collection<DoorEvent>) -> Res {
    keyed_events(
        &mut st.port,
        "PORT",
        "PORT/POID",
        c,
        |x| cx.door(x),
        |d| d.poid.clone(),
        |d| d.potm.is_some(),
    )
}

/// TIPT: tractor-in-place time at stand TRST (mandatory); an empty TRTM
/// removes that stand's tractor event.
pub fn tipt(st: &mut FlightState, cx: Conv<'_>, c: &Collection<TractorEvent>) -> Res {
    keyed_events(
        &mut st.tipt,
        "TIPT",
        "TIPT/TRST",
        c,
        |x| cx.tractor(x),
        |t| t.trst.clone(),
        |t| t.trtm.is_some(),
    )
}

/// PSHT: push-back time + indicator from stand PUST (mandatory); an empty
/// PSTM removes that stand's push event (time and indicator cleared).
pub fn psht(st: &mut FlightState, cx: Conv<'_>, c: &Collection<PushEvent>) -> Res {
    keyed_events(
        &mut st.psht,
        "PSHT",
        "PSHT/PUST",
        c,
        |x| cx.push(x),
        |p| p.pust.clone(),
        |p| p.pstm.is_some(),
    )
}
