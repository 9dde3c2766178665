//! The structured FLTR/FLOP elements (sis-format §2.3, §2.4, §3.3): the
//! repeating groups and the attributed FDIV/FRET/FLAB. FLTR and FLOP share
//! these decoders, so a group reads the same in a SCHD and in a FLOP.
//!
//! A group is collected with [`collect`]: no element → `Absent`; only bare
//! elements (`<DELY></DELY>`, `<SRVT/>`) → `ClearAll` (sis-format §3.2);
//! otherwise `Items` in message order, where a bare element mixed with real
//! ones becomes an item with every field absent (kept, so the domain can
//! reject it, rather than dropped).

use super::error::DecodeError;
use super::fields::{
    attr_field, attr_text, extra_attrs, inner_text, int_leaf, leaf, parse_route_time, put,
    seq_attr, stray_text, text_leaf, time_leaf, unknown_el,
};
use super::model::{
    AirbridgeEvent, CarouselAlloc, ChockEvent, ChuteAlloc, Collection, CounterAlloc, Delay,
    Diversion, DoorEvent, Field, GateAlloc, LandingAbort, PushEvent, Return, RoutePoint, Service,
    StandAlloc, TractorEvent, UnknownElement, Vip, VipService,
};
use super::time::parse_duration_minutes;
use super::xml::{El, tag_keys};

/// Accumulates one repeating group while its elements are met, so FLTR
/// decodes in a single pass without collecting element lists first.
pub(crate) struct Group<T> {
    items: Vec<T>,
    seen: bool,
    content: bool,
}

impl<T> Group<T> {
    pub fn new() -> Self {
        Group {
            items: Vec::new(),
            seen: false,
            content: false,
        }
    }

    /// Decodes one element of the group and keeps it in message order.
    pub fn push<'d, 'a>(
        &mut self,
        el: El<'d, 'a>,
        decode: impl FnOnce(El<'d, 'a>) -> Result<T, DecodeError>,
    ) -> Result<(), DecodeError> {
        if !self.seen {
            self.items.reserve_exact(el.same_name_run());
        }
        self.seen = true;
        self.content |= !el.is_bare();
        self.items.push(decode(el)?);
        Ok(())
    }

    /// Absent, clear-all (only bare elements) or the items.
    pub fn finish(self) -> Collection<T> {
        match (self.seen, self.content) {
            (false, _) => Collection::Absent,
            (true, false) => Collection::ClearAll,
            (true, true) => Collection::Items(self.items),
        }
    }
}

/// Builds a collection from the group's elements, in message order.
pub(crate) fn collect<'d, 'a, T>(
    els: &[El<'d, 'a>],
    mut decode: impl FnMut(El<'d, 'a>) -> Result<T, DecodeError>,
) -> Result<Collection<T>, DecodeError> {
    let mut g = Group::new();
    for &e in els {
        g.push(e, &mut decode)?;
    }
    Ok(g.finish())
}

/// Declares a group-item decoder: the sequence attribute (if any), then one
/// arm per child element. Unknown children, attributes and stray text go to
/// the item's `unknown` list.
macro_rules! item_decoder {
    ($fn:ident, $ty:ident, seq = $seq:expr, { $( $tag:ident => $field:ident : $how:ident ),* $(,)? }) => {
        pub(crate) fn $fn(el: El<'_, '_>) -> Result<$ty, DecodeError> {
            tag_keys!($($tag),*);
            let seq: Option<&str> = $seq;
            let mut item = $ty::default();
            item_seq(&mut item, el, seq)?;
            for c in el.children() {
                match c.key() {
                    $( $tag => {
                        let v = $how(c, &mut item.unknown)?;
                        put(&mut item.$field, v, c)?;
                    } )*
                    _ => item.unknown.push(unknown_el(c)),
                }
            }
            extra_attrs(el, seq.as_slice(), &mut item.unknown);
            stray_text(el, &mut item.unknown);
            Ok(item)
        }
    };
}

/// Items that carry a source sequence.
trait Sequenced {
    fn set_seq(&mut self, seq: Option<i64>);
}

macro_rules! sequenced {
    ($($ty:ident),*) => { $( impl Sequenced for $ty { fn set_seq(&mut self, s: Option<i64>) { self.seq = s; } } )* };
}
sequenced!(
    RoutePoint,
    StandAlloc,
    GateAlloc,
    CounterAlloc,
    CarouselAlloc,
    ChuteAlloc,
    ChockEvent,
    AirbridgeEvent,
    PushEvent
);

/// Items without a sequence attribute (SRVT, VIPF, VIPT, PORT, TIPT).
macro_rules! unsequenced {
    ($($ty:ident),*) => { $( impl Sequenced for $ty { fn set_seq(&mut self, _: Option<i64>) {} } )* };
}
unsequenced!(Service, Vip, VipService, DoorEvent, TractorEvent);

/// Sets the item's source sequence from its sequence attribute, if the group has one.
fn item_seq<T: Sequenced>(
    item: &mut T,
    el: El<'_, '_>,
    seq: Option<&str>,
) -> Result<(), DecodeError> {
    if let Some(name) = seq {
        item.set_seq(seq_attr(el, name)?);
    }
    Ok(())
}

fn route_time(
    c: El<'_, '_>,
    unk: &mut Vec<UnknownElement>,
) -> Result<Field<super::model::ScalarValue>, DecodeError> {
    leaf(c, unk, parse_route_time)
}

item_decoder!(route_point, RoutePoint, seq = Some("RTNO"), {
    APCD => apcd: text_leaf, SCAT => scat: route_time, SCDT => scdt: route_time,
    SADC => sadc: text_leaf, SDDC => sddc: text_leaf,
});
item_decoder!(stand_alloc, StandAlloc, seq = Some("PSNO"), {
    PSST => psst: text_leaf, STST => stst: time_leaf, STET => stet: time_leaf,
});
item_decoder!(gate_alloc, GateAlloc, seq = Some("GTNO"), {
    GATE => gate: text_leaf, PGOT => pgot: time_leaf, PGCT => pgct: time_leaf,
    GOTM => gotm: time_leaf, GCTM => gctm: time_leaf, GTYP => gtyp: text_leaf,
});
item_decoder!(counter_alloc, CounterAlloc, seq = Some("CKNO"), {
    CHKC => chkc: text_leaf, CCLS => ccls: text_leaf, PCOT => pcot: time_leaf,
    PCCT => pcct: time_leaf, COTM => cotm: time_leaf, CCTM => cctm: time_leaf,
    CTYP => ctyp: text_leaf,
});
item_decoder!(carousel_alloc, CarouselAlloc, seq = Some("CLNO"), {
    BELT => belt: text_leaf, BCLS => bcls: text_leaf, PCOT => pcot: time_leaf,
    PCCT => pcct: time_leaf, FBAG => fbag: time_leaf, LBAG => lbag: time_leaf,
    BTYP => btyp: text_leaf,
});
item_decoder!(chute_alloc, ChuteAlloc, seq = Some("CHNO"), {
    CHUT => chut: text_leaf, CCLS => ccls: text_leaf, PCBT => pcbt: time_leaf,
    PCET => pcet: time_leaf, CBTM => cbtm: time_leaf, CETM => cetm: time_leaf,
    CTYP => ctyp: text_leaf,
});
item_decoder!(chock_event, ChockEvent, seq = Some("CSNO"), {
    CHTM => chtm: time_leaf, CHID => chid: text_leaf, CHST => chst: text_leaf,
});
item_decoder!(airbridge_event, AirbridgeEvent, seq = Some("ASNO"), {
    ABDG => abdg: text_leaf, ABOP => abop: text_leaf, AOTM => aotm: time_leaf,
});
item_decoder!(service, Service, seq = None, {
    SRTC => srtc: text_leaf, SRQT => srqt: text_leaf, SRST => srst: time_leaf,
    SRET => sret: time_leaf, SRPR => srpr: text_leaf, SANR => sanr: text_leaf,
    SARR => sarr: text_leaf,
});
item_decoder!(vip_service, VipService, seq = None, {
    VSCD => vscd: text_leaf, VTQY => vtqy: text_leaf, VTST => vtst: time_leaf,
    VTET => vtet: time_leaf,
});
item_decoder!(door_event, DoorEvent, seq = None, {
    POTM => potm: time_leaf, POID => poid: text_leaf,
});
item_decoder!(tractor_event, TractorEvent, seq = None, {
    TRTM => trtm: time_leaf, TRST => trst: text_leaf,
});
item_decoder!(push_event, PushEvent, seq = Some("PSHN"), {
    PSTM => pstm: time_leaf, PSID => psid: text_leaf, PUST => pust: text_leaf,
});

/// VIPF: VPCD, VFES and repeating VIPT (sis-format §2.4).
pub(crate) fn vip(el: El<'_, '_>) -> Result<Vip, DecodeError> {
    tag_keys!(VPCD, VFES, VIPT);
    let mut item = Vip::default();
    for c in el.children() {
        match c.key() {
            VPCD => {
                let v = text_leaf(c, &mut item.unknown)?;
                put(&mut item.vpcd, v, c)?;
            }
            VFES => {
                let v = int_leaf(c, &mut item.unknown)?;
                put(&mut item.vfes, v, c)?;
            }
            VIPT => item.vipt.push(vip_service(c)?),
            _ => item.unknown.push(unknown_el(c)),
        }
    }
    extra_attrs(el, &[], &mut item.unknown);
    stray_text(el, &mut item.unknown);
    Ok(item)
}

/// DELY: `<DELY CODE="YY" STRT="…" DURA="HHMM">comment</DELY>`. `Delay` has
/// no unknown list, so stray attributes and children go to the enclosing
/// FLTR/FLOP's list.
pub(crate) fn delay(
    el: El<'_, '_>,
    unknown: &mut Vec<UnknownElement>,
) -> Result<Delay, DecodeError> {
    let d = Delay {
        code: attr_text(el, "CODE"),
        strt: attr_field(el, "STRT", super::time::parse_time)?,
        dura_minutes: attr_field(el, "DURA", parse_duration_minutes)?,
        comment: inner_text(el),
    };
    extra_attrs(el, &["CODE", "STRT", "DURA"], unknown);
    for c in el.children() {
        unknown.push(unknown_el(c));
    }
    Ok(d)
}

/// Reads an attributed single element (FDIV/FRET/FLAB): `Empty` when bare,
/// otherwise the value built by `build`. Children are kept as unknown.
fn attributed<T>(
    el: El<'_, '_>,
    known: &[&str],
    unknown: &mut Vec<UnknownElement>,
    build: impl FnOnce(El<'_, '_>) -> T,
) -> Field<T> {
    extra_attrs(el, known, unknown);
    for c in el.children() {
        unknown.push(unknown_el(c));
    }
    if el.attrs().is_empty() && el.text().is_empty() {
        return Field::Empty;
    }
    Field::Value(build(el))
}

/// FDIV: DDES airport, DDIR `TO`/`FROM` kept as sent (the domain validates).
pub(crate) fn diversion(el: El<'_, '_>, unknown: &mut Vec<UnknownElement>) -> Field<Diversion> {
    attributed(el, &["DDES", "DDIR"], unknown, |e| Diversion {
        ddes: attr_text(e, "DDES"),
        ddir: attr_text(e, "DDIR"),
        reason: inner_text(e),
    })
}

/// FRET: REID `A`/`G` kept as sent.
pub(crate) fn ret(el: El<'_, '_>, unknown: &mut Vec<UnknownElement>) -> Field<Return> {
    attributed(el, &["REID"], unknown, |e| Return {
        reid: attr_text(e, "REID"),
        reason: inner_text(e),
    })
}

/// FLAB: ARES `O`/`G` kept as sent.
pub(crate) fn landing_abort(
    el: El<'_, '_>,
    unknown: &mut Vec<UnknownElement>,
) -> Field<LandingAbort> {
    attributed(el, &["ARES"], unknown, |e| LandingAbort {
        ares: attr_text(e, "ARES"),
        reason: inner_text(e),
    })
}
