//! The decoded SIS message model (design §2; sis-format.md §1–§4).
//!
//! This file is the contract between the codec (which fills it) and the flight
//! domain (which reads it). It is pure data: no I/O, no clock, no time zone.
//! Times are the naive local times written in the message; the domain applies
//! the airport time zone (`msgx.airport.timezone`).
//!
//! Three-valued fields: every optional element is a [`Field`], so the domain
//! can tell *absent* (element not sent) from *empty* (`<X></X>` or `<X/>`,
//! treated alike) from a value. The clear rules of sis-format §3.2 depend on it.

use chrono::{NaiveDate, NaiveDateTime};
use serde::Serialize;

/// A three-valued element or attribute: absent, present but empty, or a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(tag = "state", content = "value", rename_all = "lowercase")]
pub enum Field<T> {
    /// The element (or attribute) was not in the message.
    #[default]
    Absent,
    /// `<X></X>`, `<X/>`, or `X=""` (whitespace only counts as empty).
    Empty,
    /// A value that parsed into `T`.
    Value(T),
}

impl<T> Field<T> {
    /// The value, if there is one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Field::Value(v) => Some(v),
            _ => None,
        }
    }
    /// True when the element was sent (empty or with a value).
    pub fn is_present(&self) -> bool {
        !matches!(self, Field::Absent)
    }
    /// Maps the value, keeping absent/empty.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Field<U> {
        match self {
            Field::Absent => Field::Absent,
            Field::Empty => Field::Empty,
            Field::Value(v) => Field::Value(f(v)),
        }
    }
    /// Borrowing view.
    pub fn as_ref(&self) -> Field<&T> {
        match self {
            Field::Absent => Field::Absent,
            Field::Empty => Field::Empty,
            Field::Value(v) => Field::Value(v),
        }
    }
}

/// A repeating group as it appeared in one FLTR or FLOP.
///
/// `ClearAll` is a bare element (no attributes, no children, no text), the
/// "delete all" form of sis-format §3.2 (`<DELY></DELY>`, `<SRVT/>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(tag = "state", content = "items", rename_all = "snake_case")]
pub enum Collection<T> {
    /// No element of this group was sent.
    #[default]
    Absent,
    /// Only bare empty elements were sent.
    ClearAll,
    /// One or more items, in message order.
    Items(Vec<T>),
}

impl<T> Collection<T> {
    /// The items (empty for `Absent` and `ClearAll`).
    pub fn items(&self) -> &[T] {
        match self {
            Collection::Items(v) => v,
            _ => &[],
        }
    }
}

/// An element the codec did not expect inside a known structure. It is kept
/// (never dropped silently) so the domain can report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownElement {
    /// Element path from the root, e.g. `MSG/SCHD/FLTR[2]/XYZZ`.
    pub path: String,
    /// The element name.
    pub name: String,
    /// The raw XML of the element, as it appeared.
    pub raw: String,
}

/// Anything that holds [`UnknownElement`]s, directly or in its items: lets
/// [`DecodedMessage::unknown_elements`] find every one, however deep
/// (the pipeline reports them, `msgx msg show` lists them).
trait HoldsUnknown {
    fn unknown_into<'a>(&'a self, out: &mut Vec<&'a UnknownElement>);
}

/// Group items whose only nested unknowns are their own list.
macro_rules! holds_unknown {
    ($($ty:ty),* $(,)?) => {$(
        impl HoldsUnknown for $ty {
            fn unknown_into<'a>(&'a self, out: &mut Vec<&'a UnknownElement>) {
                out.extend(self.unknown.iter());
            }
        }
    )*};
}
holds_unknown!(
    RoutePoint,
    StandAlloc,
    GateAlloc,
    CounterAlloc,
    CarouselAlloc,
    ChuteAlloc,
    ChockEvent,
    AirbridgeEvent,
    Service,
    VipService,
    DoorEvent,
    TractorEvent,
    PushEvent,
);

/// DELY items carry none: their extras are kept on the enclosing FLTR/FLOP.
impl HoldsUnknown for Delay {
    fn unknown_into<'a>(&'a self, _: &mut Vec<&'a UnknownElement>) {}
}

impl HoldsUnknown for Vip {
    fn unknown_into<'a>(&'a self, out: &mut Vec<&'a UnknownElement>) {
        out.extend(self.unknown.iter());
        for s in &self.vipt {
            s.unknown_into(out);
        }
    }
}

impl<T: HoldsUnknown> HoldsUnknown for Collection<T> {
    fn unknown_into<'a>(&'a self, out: &mut Vec<&'a UnknownElement>) {
        for item in self.items() {
            item.unknown_into(out);
        }
    }
}

impl HoldsUnknown for Fltr {
    fn unknown_into<'a>(&'a self, out: &mut Vec<&'a UnknownElement>) {
        out.extend(self.unknown.iter());
        self.rout.unknown_into(out);
        self.erut.unknown_into(out);
        self.psdt.unknown_into(out);
        self.gtdt.unknown_into(out);
        self.ckdt.unknown_into(out);
        self.cldt.unknown_into(out);
        self.chdt.unknown_into(out);
        self.chot.unknown_into(out);
        self.abtm.unknown_into(out);
        self.dely.unknown_into(out);
        self.srvt.unknown_into(out);
        self.vipf.unknown_into(out);
        self.port.unknown_into(out);
        self.tipt.unknown_into(out);
        self.psht.unknown_into(out);
    }
}

impl HoldsUnknown for FlopPayload {
    fn unknown_into<'a>(&'a self, out: &mut Vec<&'a UnknownElement>) {
        use FlopPayload as P;
        match self {
            P::ABTM(c) => c.unknown_into(out),
            P::CHDT(c) => c.unknown_into(out),
            P::CHOT(c) => c.unknown_into(out),
            P::CKDT(c) => c.unknown_into(out),
            P::CLDT(c) => c.unknown_into(out),
            P::DELY(c) => c.unknown_into(out),
            P::ERUT(c) => c.unknown_into(out),
            P::GTDT(c) => c.unknown_into(out),
            P::PORT(c) => c.unknown_into(out),
            P::PSDT(c) => c.unknown_into(out),
            P::PSHT(c) => c.unknown_into(out),
            P::SRVT(c) => c.unknown_into(out),
            P::TIPT(c) => c.unknown_into(out),
            P::VIPF(c) => c.unknown_into(out),
            // Scalar and attributed payloads keep their extras on the FLOP.
            _ => {}
        }
    }
}

impl DecodedMessage {
    /// Every unknown element, attribute (`@NAME`) and stray text (`#text`)
    /// the codec kept, at any depth: the message level first, then each
    /// FLTR (or the FLOP payload) with its items. An FDEL has none (anything
    /// extra is MALFORMED); an Unsupported message is not decoded further.
    pub fn unknown_elements(&self) -> Vec<&UnknownElement> {
        let mut out = Vec::new();
        match &self.kind {
            MsgKind::Schd(s) => {
                out.extend(s.unknown.iter());
                for f in &s.flights {
                    f.unknown_into(&mut out);
                }
            }
            MsgKind::Flop(f) => {
                out.extend(f.unknown.iter());
                f.payload.unknown_into(&mut out);
            }
            MsgKind::Schs(s) => {
                out.extend(s.unknown.iter());
                for f in &s.flights {
                    f.unknown_into(&mut out);
                }
            }
            MsgKind::RefData(r) => out.extend(r.unknown.iter()),
            MsgKind::Fdel(_) | MsgKind::Unsupported(_) => {}
        }
        out
    }
}

/// META (sis-format §1.2). SNDR, TYPE, STYP and SEQN are mandatory, and
/// bounded (the identity parts, design §2; `decode::MAX_CODE_CHARS`,
/// `decode::MAX_SEQN_DIGITS`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Meta {
    /// At most `MAX_CODE_CHARS` characters.
    pub sndr: String,
    /// Decimal digits as sent (trimmed), at most `MAX_SEQN_DIGITS`; inbound
    /// SEQN is not zero-padded, outbound is.
    pub seqn: String,
    /// `yyyyMMddHHmmss`, naive local time; `None` when DTTM was not sent.
    pub dttm: Option<NaiveDateTime>,
    /// Upper-cased, at most `MAX_CODE_CHARS` characters.
    pub msg_type: String,
    /// Upper-cased, at most `MAX_CODE_CHARS` characters.
    pub styp: String,
}

/// A whole decoded message (design §2).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecodedMessage {
    pub meta: Meta,
    pub kind: MsgKind,
}

/// The dispatch key (design §2, §5.2).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MsgKind {
    /// TYPE SCHD.
    Schd(Schd),
    /// TYPE FLOP with one of the 48 subtypes of sis-format §3.3 other than FDEL.
    Flop(Flop),
    /// TYPE FLOP, STYP FDEL.
    Fdel(Fdel),
    /// One of the 23 reference types of sis-format §4.
    RefData(RefData),
    /// TYPE SCHS, STYP DNLD or RESP (sis-format §2.5).
    Schs(Schs),
    /// Anything else (LDM, an unknown FLOP or SCHS subtype…). Not an error.
    Unsupported(Unsupported),
}

/// SCHD subtype. Other STYPs keep their text, so routing decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum SchdStyp {
    Dnld,
    Resp,
    Adft,
    /// Delete the listed flights (sis-format §2.1; FDEL semantics, §12.3).
    Del,
    Other(String),
}

/// A SCHD message: `<SCHD><RECS/><FLTR/>…</SCHD>`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Schd {
    pub styp: SchdStyp,
    /// RECS as sent; the domain checks it against `flights.len()`.
    pub recs: Field<i64>,
    pub flights: Vec<Fltr>,
    /// Unknown children of `<SCHD>`.
    pub unknown: Vec<UnknownElement>,
}

/// SCHS subtype: the two sis-format §2.5 saw (the predecessor ignored STYP;
/// any other is Unsupported, as other unknown subtypes are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum SchsStyp {
    Dnld,
    Resp,
}

/// A SCHS message: `<SCHS><SNAM/><APCD/><SDAT/><EDAT/><RECS/><FLTR/>…</SCHS>`
/// (sis-format §1.3, §2.5). The FLTRs have no FLID/SODT; they carry
/// STDT/EDDT/DYOP/SCHT. The domain (`domain::season`) checks the rules.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Schs {
    pub styp: SchsStyp,
    /// Season name, e.g. `Winter`.
    pub snam: Field<String>,
    /// Airport.
    pub apcd: Field<String>,
    /// Season start / end (`DDMMMYY`).
    pub sdat: Field<NaiveDate>,
    pub edat: Field<NaiveDate>,
    /// RECS as sent; the domain checks it against `flights.len()`.
    pub recs: Field<i64>,
    pub flights: Vec<Fltr>,
    /// Unknown children of `<SCHS>` (and of `<MSG>`).
    pub unknown: Vec<UnknownElement>,
}

/// The value kind of a FLTR scalar, which decides how its text is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ScalarKind {
    Text,
    Int,
    /// Decimal number, kept as its canonical text.
    Decimal,
    /// `DDMMMYYHHMM`.
    Time,
    /// `DDMMMYY`.
    Date,
    /// `HHMM` local time of day (SCHS only).
    Hhmm,
}

/// A parsed scalar value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(untagged)]
pub enum ScalarValue {
    Text(String),
    Int(i64),
    /// Validated decimal text, e.g. `12.5`.
    Decimal(String),
    Time(NaiveDateTime),
    Date(NaiveDate),
    /// `HHMM` as four digits.
    Hhmm(String),
}

macro_rules! scalar_tags {
    ($( $tag:ident : $kind:ident ),* $(,)?) => {
        /// Every single-valued FLTR element of sis-format §2.3 (attributed
        /// elements FDIV/FRET/FLAB and the repeating groups are separate).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum ScalarTag { $( $tag ),* }

        impl ScalarTag {
            /// All tags, in catalogue order.
            pub const ALL: &'static [ScalarTag] = &[ $( ScalarTag::$tag ),* ];
            /// The SIS element name.
            pub fn name(self) -> &'static str {
                match self { $( ScalarTag::$tag => stringify!($tag) ),* }
            }
            /// How the element's text is parsed.
            pub fn kind(self) -> ScalarKind {
                match self { $( ScalarTag::$tag => ScalarKind::$kind ),* }
            }
            /// Looks a tag up by element name (case-sensitive, as SIS is).
            pub fn from_name(name: &str) -> Option<ScalarTag> {
                match name { $( stringify!($tag) => Some(ScalarTag::$tag), )* _ => None }
            }
            /// Looks a tag up by the element's dispatch key
            /// (`codec::xml::tag_key`): integer compares, no string compares.
            pub(crate) fn from_key(key: u32) -> Option<ScalarTag> {
                $( const $tag: u32 = crate::codec::xml::tag_key(stringify!($tag).as_bytes()); )*
                match key { $( $tag => Some(ScalarTag::$tag), )* _ => None }
            }
        }
    };
}

scalar_tags! {
    FLID: Int, ALCD: Text, ALSC: Text, FLNO: Text, MVIN: Text, SODT: Time, FLTY: Text,
    FLIN: Text, ACFT: Text, RENO: Text, TAOP: Text, TAFL: Text, TAID: Int, TRML: Text,
    MAXP: Int, CSOP: Text, CSFT: Text, MAID: Int, STND: Text, ESTT: Time, ACTT: Time,
    PHAG: Int, FHAG: Int, MHAG: Int, CNCL: Time, REMC: Text, BOTM: Time, LACL: Time,
    FINT: Time, APPT: Time, EGSR: Time, EGST: Time, VIPP: Int, VIPR: Int, LBNO: Int,
    LBWT: Decimal, PAXC: Int, EXSC: Text, EXSR: Text, FTSS: Text, PEDT: Time, PADT: Time,
    NEAT: Time, NAAT: Time, COBT: Time, TOBT: Time, EOBT: Time, IEST: Time, CTOT: Time,
    RUNW: Text, STDT: Date, EDDT: Date, DYOP: Text, SCHT: Hhmm,
}

/// One flight record (sis-format §2.3, §2.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Fltr {
    /// Scalars that were sent (absent tags are not in the list), in message
    /// order. A tag appears at most once.
    pub scalars: Vec<(ScalarTag, Field<ScalarValue>)>,
    pub fdiv: Field<Diversion>,
    pub fret: Field<Return>,
    pub flab: Field<LandingAbort>,
    pub rout: Collection<RoutePoint>,
    pub erut: Collection<RoutePoint>,
    pub psdt: Collection<StandAlloc>,
    pub gtdt: Collection<GateAlloc>,
    pub ckdt: Collection<CounterAlloc>,
    pub cldt: Collection<CarouselAlloc>,
    pub chdt: Collection<ChuteAlloc>,
    pub chot: Collection<ChockEvent>,
    pub abtm: Collection<AirbridgeEvent>,
    pub dely: Collection<Delay>,
    pub srvt: Collection<Service>,
    pub vipf: Collection<Vip>,
    pub port: Collection<DoorEvent>,
    pub tipt: Collection<TractorEvent>,
    pub psht: Collection<PushEvent>,
    pub unknown: Vec<UnknownElement>,
}

impl Fltr {
    /// The scalar for `tag` (Absent when not sent).
    pub fn scalar(&self, tag: ScalarTag) -> Field<&ScalarValue> {
        self.scalars
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, f)| f.as_ref())
            .unwrap_or(Field::Absent)
    }
}

/// FDIV: `<FDIV DDES="…" DDIR="TO|FROM">reason</FDIV>`. DDIR is kept as sent;
/// the domain rejects invalid codes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Diversion {
    pub ddes: Field<String>,
    pub ddir: Field<String>,
    pub reason: Field<String>,
}

/// FRET: `<FRET REID="A|G">reason</FRET>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Return {
    pub reid: Field<String>,
    pub reason: Field<String>,
}

/// FLAB: `<FLAB ARES="O|G">reason</FLAB>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct LandingAbort {
    pub ares: Field<String>,
    pub reason: Field<String>,
}

/// ROUT and ERUT points (sequence attribute RTNO).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct RoutePoint {
    /// RTNO as sent (the source sequence); `None` when missing or empty.
    pub seq: Option<i64>,
    pub apcd: Field<String>,
    /// Time at that stop; SCHS sends `HHMM` here, SCHD `DDMMMYYHHMM`.
    pub scat: Field<ScalarValue>,
    pub scdt: Field<ScalarValue>,
    /// Day-change factors (SCHS), e.g. `+1`.
    pub sadc: Field<String>,
    pub sddc: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// PSDT (sequence PSNO): stand allocation plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct StandAlloc {
    pub seq: Option<i64>,
    pub psst: Field<String>,
    pub stst: Field<NaiveDateTime>,
    pub stet: Field<NaiveDateTime>,
    pub unknown: Vec<UnknownElement>,
}

/// GTDT (sequence GTNO): gate allocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct GateAlloc {
    pub seq: Option<i64>,
    pub gate: Field<String>,
    pub pgot: Field<NaiveDateTime>,
    pub pgct: Field<NaiveDateTime>,
    pub gotm: Field<NaiveDateTime>,
    pub gctm: Field<NaiveDateTime>,
    pub gtyp: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// CKDT (sequence CKNO): check-in counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct CounterAlloc {
    pub seq: Option<i64>,
    pub chkc: Field<String>,
    pub ccls: Field<String>,
    pub pcot: Field<NaiveDateTime>,
    pub pcct: Field<NaiveDateTime>,
    pub cotm: Field<NaiveDateTime>,
    pub cctm: Field<NaiveDateTime>,
    pub ctyp: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// CLDT (sequence CLNO): reclaim carousels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct CarouselAlloc {
    pub seq: Option<i64>,
    pub belt: Field<String>,
    pub bcls: Field<String>,
    pub pcot: Field<NaiveDateTime>,
    pub pcct: Field<NaiveDateTime>,
    pub fbag: Field<NaiveDateTime>,
    pub lbag: Field<NaiveDateTime>,
    pub btyp: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// CHDT (sequence CHNO): make-up chutes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ChuteAlloc {
    pub seq: Option<i64>,
    pub chut: Field<String>,
    pub ccls: Field<String>,
    pub pcbt: Field<NaiveDateTime>,
    pub pcet: Field<NaiveDateTime>,
    pub cbtm: Field<NaiveDateTime>,
    pub cetm: Field<NaiveDateTime>,
    pub ctyp: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// CHOT (sequence CSNO): chocks on/off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ChockEvent {
    pub seq: Option<i64>,
    pub chtm: Field<NaiveDateTime>,
    /// `ON` / `OFF`, as sent.
    pub chid: Field<String>,
    pub chst: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// ABTM (sequence ASNO): airbridge attach/detach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct AirbridgeEvent {
    pub seq: Option<i64>,
    pub abdg: Field<String>,
    pub abop: Field<String>,
    pub aotm: Field<NaiveDateTime>,
    pub unknown: Vec<UnknownElement>,
}

/// DELY: `<DELY CODE="YY" STRT="…" DURA="HHMM">comment</DELY>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Delay {
    pub code: Field<String>,
    pub strt: Field<NaiveDateTime>,
    /// DURA `HHMM` as a duration in minutes (hours × 60 + minutes; the
    /// predecessor's ×24 is a bug, sis-format §7.3).
    pub dura_minutes: Field<i64>,
    pub comment: Field<String>,
}

/// SRVT: ground-handling service transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Service {
    pub srtc: Field<String>,
    pub srqt: Field<String>,
    pub srst: Field<NaiveDateTime>,
    pub sret: Field<NaiveDateTime>,
    pub srpr: Field<String>,
    pub sanr: Field<String>,
    pub sarr: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// VIPF: a VIP on the flight, with its VIPT services.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Vip {
    pub vpcd: Field<String>,
    pub vfes: Field<i64>,
    pub vipt: Vec<VipService>,
    pub unknown: Vec<UnknownElement>,
}

/// VIPT inside VIPF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct VipService {
    pub vscd: Field<String>,
    pub vtqy: Field<String>,
    pub vtst: Field<NaiveDateTime>,
    pub vtet: Field<NaiveDateTime>,
    pub unknown: Vec<UnknownElement>,
}

/// PORT: door open (`O`) / close (`C`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct DoorEvent {
    pub potm: Field<NaiveDateTime>,
    pub poid: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// TIPT: tractor in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct TractorEvent {
    pub trtm: Field<NaiveDateTime>,
    pub trst: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// PSHT (sequence PSHN): push-back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct PushEvent {
    pub seq: Option<i64>,
    pub pstm: Field<NaiveDateTime>,
    pub psid: Field<String>,
    pub pust: Field<String>,
    pub unknown: Vec<UnknownElement>,
}

/// A FLOP message (sis-format §3). FLID is mandatory (Malformed without it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flop {
    pub flid: i64,
    /// FFID is only logged; never parsed or checked (sis-format §2.2).
    pub ffid: Field<String>,
    pub payload: FlopPayload,
    /// Elements in `<FLOP>` that the subtype does not name. Legacy ignored
    /// them; we keep them for reporting.
    pub unknown: Vec<UnknownElement>,
}

/// FDEL: `<FLOP><FLID/><FFID/><FDEL/></FLOP>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fdel {
    pub flid: i64,
    pub ffid: Field<String>,
    /// False when `<FDEL>` had content or was missing (the domain rejects it).
    pub fdel_empty: bool,
}

/// The typed payload of each FLOP subtype of sis-format §3.3 (FDEL is
/// [`MsgKind::Fdel`]). Each field is exactly what the message carried; the
/// domain applies the set / clear / merge / replace rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "styp", content = "data")]
pub enum FlopPayload {
    ABTM(Collection<AirbridgeEvent>),
    ACFT(Field<String>),
    APPT(Field<NaiveDateTime>),
    BOTM(Field<NaiveDateTime>),
    CHDT(Collection<ChuteAlloc>),
    CHOT(Collection<ChockEvent>),
    CKDT(Collection<CounterAlloc>),
    CLDT(Collection<CarouselAlloc>),
    CNCL(Field<NaiveDateTime>),
    COBT(Field<NaiveDateTime>),
    CTOT(Field<NaiveDateTime>),
    DELY(Collection<Delay>),
    EGSR(Field<NaiveDateTime>),
    EGST(Field<NaiveDateTime>),
    EOBT(Field<NaiveDateTime>),
    ERUT(Collection<RoutePoint>),
    EXSS {
        exsc: Field<String>,
        exsr: Field<String>,
    },
    FDIV(Field<Diversion>),
    FINT(Field<NaiveDateTime>),
    FLAB(Field<LandingAbort>),
    FLIN(Field<String>),
    FLTY(Field<String>),
    FRET(Field<Return>),
    FTSS(Field<String>),
    GTDT(Collection<GateAlloc>),
    HNAG {
        fhag: Field<i64>,
        phag: Field<i64>,
        mhag: Field<i64>,
    },
    IEST(Field<NaiveDateTime>),
    LACL(Field<NaiveDateTime>),
    MAXP(Field<i64>),
    NAAT(Field<NaiveDateTime>),
    NEAT(Field<NaiveDateTime>),
    PADT(Field<NaiveDateTime>),
    PEDT(Field<NaiveDateTime>),
    PORT(Collection<DoorEvent>),
    PSDT(Collection<StandAlloc>),
    PSHT(Collection<PushEvent>),
    REMC(Field<String>),
    RENO(Field<String>),
    RUNW(Field<String>),
    SRVT(Collection<Service>),
    STND(Field<String>),
    TAOP {
        taop: Field<String>,
        tafl: Field<String>,
        taid: Field<i64>,
    },
    TIPT(Collection<TractorEvent>),
    TOBT(Field<NaiveDateTime>),
    TRML(Field<String>),
    VIPF(Collection<Vip>),
    VIPP {
        vipp: Field<i64>,
        vipr: Field<i64>,
    },
}

/// The 47 non-FDEL FLOP subtypes plus FDEL: the 48 of sis-format §3.3.
pub const FLOP_SUBTYPES: [&str; 48] = [
    "ABTM", "ACFT", "APPT", "BOTM", "CHDT", "CHOT", "CKDT", "CLDT", "CNCL", "COBT", "CTOT", "DELY",
    "EGSR", "EGST", "EOBT", "ERUT", "EXSS", "FDEL", "FDIV", "FINT", "FLAB", "FLIN", "FLTY", "FRET",
    "FTSS", "GTDT", "HNAG", "IEST", "LACL", "MAXP", "NAAT", "NEAT", "PADT", "PEDT", "PORT", "PSDT",
    "PSHT", "REMC", "RENO", "RUNW", "SRVT", "STND", "TAOP", "TIPT", "TOBT", "TRML", "VIPF", "VIPP",
];

/// The 23 reference types of sis-format §4 (SCHS is not one: it is [`MsgKind::Schs`]).
pub const REF_TYPES: [&str; 23] = [
    "ABDG", "ABNR", "AIRC", "AIRL", "ARPT", "BLST", "CHLT", "CITY", "CLST", "COUL", "DLYL", "FLTL",
    "GLST", "HLTR", "ORGN", "PLST", "REGL", "REGN", "SLST", "STTS", "TLST", "VIPL", "VIPS",
];

/// Reference-data subtype.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum RefStyp {
    Dnld,
    Resp,
    Add,
    Upd,
    Del,
    Other(String),
}

/// A reference-data message: `RECS` then N records named like TYPE.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefData {
    /// One of [`REF_TYPES`].
    pub rtype: String,
    pub styp: RefStyp,
    pub recs: Field<i64>,
    pub records: Vec<RefRecord>,
    pub unknown: Vec<UnknownElement>,
}

/// One reference record: its key (the type's key field, sis-format §4) and
/// the whole record as JSON (element name → text, or a list for repeating
/// children; attributes as `@name`). Stored beside (RTYPE, RKEY).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefRecord {
    /// The key field's text; empty key fields make the message Malformed.
    pub key: String,
    pub body: serde_json::Value,
}

/// A message this codec version does not handle. Not an error (design §2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unsupported {
    pub msg_type: String,
    pub styp: String,
    /// Why it is unsupported, e.g. `unknown FLOP subtype ACTT`.
    pub reason: String,
}
