//! The authoritative flight current state (design §11.1, §11.3).
//!
//! One [`FlightState`] is one `FLIGHT_SCHD` row plus all its detail rows:
//! every FLTR scalar of sis-format §2.3 (columns named after the lower-case
//! SIS tag), the FDIV/FRET/FLAB exception objects, the lifecycle columns, and
//! one ordered list per repeating group. Each list item carries `ordinal`
//! (1-based persisted order, the detail-table key `(flid, ordinal)`) and
//! `source_seq` (the upstream sequence attribute, may be missing or repeated).
//! Lists are never deduplicated by resource code (§11.3). ROUT and ERUT are two
//! separate lists (`FLIGHT_ROUTE_POINT.ROUTE_KIND`). MAFL is not stored: it is
//! derived (see `mafl.rs`, §11.4).
//!
//! Times are instants with the airport offset ([`DomainConfig::local_time`]);
//! after a `timestamptz` round trip the store rebuilds them with
//! [`DomainConfig::airport_time`](super::DomainConfig::airport_time).

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use serde::{Deserialize, Serialize, Serializer};

use super::acdm::MilestoneCode;
use crate::codec::ScalarTag;

/// A stored scalar value: the codec's [`ScalarValue`](crate::codec::ScalarValue)
/// with the airport time zone applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlightValue {
    Text(String),
    Int(i64),
    /// Canonical decimal text (LBWT), kept as text to stay exact.
    Decimal(String),
    Time(DateTime<FixedOffset>),
    Date(NaiveDate),
    /// `HHMM` (SCHS only).
    Hhmm(String),
}

impl Serialize for FlightValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            FlightValue::Text(v) | FlightValue::Decimal(v) | FlightValue::Hhmm(v) => {
                s.serialize_str(v)
            }
            FlightValue::Int(v) => s.serialize_i64(*v),
            FlightValue::Time(v) => v.serialize(s),
            FlightValue::Date(v) => v.serialize(s),
        }
    }
}

/// What [`FlightState::walk_content`] shows each content field to: its SIS
/// name (the `schd` projection's key in lower case) and the two values,
/// a plain value or a list (compared by ordinal).
pub trait FieldVisitor {
    fn value<T: Serialize + PartialEq>(&mut self, name: &str, old: &T, new: &T);
    fn list<T: Serialize + PartialEq>(&mut self, name: &str, old: &[T], new: &[T]);
}

/// `FLIGHT_SCHD.STATE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum FlightStatus {
    Active,
    Deleted,
}

/// FDIV: diversion airport, direction (`TO`/`FROM`) and reason. Stored as the
/// columns `fdiv_ddes`, `fdiv_ddir`, `fdiv_reason`; all NULL when cleared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DiversionInfo {
    pub ddes: String,
    pub ddir: String,
    pub reason: Option<String>,
}

/// FRET: return indicator (`A` air / `G` ground) and reason (`fret_reid`, `fret_reason`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ReturnInfo {
    pub reid: String,
    pub reason: Option<String>,
}

/// FLAB: landing-abort indicator (`O` overshoot / `G` go-around) and reason
/// (`flab_ares`, `flab_reason`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LandingAbortInfo {
    pub ares: String,
    pub reason: Option<String>,
}

/// Local shorthand for an optional stored time.
pub type Time = Option<DateTime<FixedOffset>>;

/// A list item with a persisted position.
pub trait Ordinal {
    /// Sets the 1-based persisted position.
    fn set_ordinal(&mut self, ordinal: i32);
}

macro_rules! items {
    ($( $(#[$doc:meta])* $name:ident { $( $field:ident : $ty:ty ),* $(,)? } )*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
        pub struct $name {
            /// 1-based persisted order (detail-table key with FLID).
            pub ordinal: i32,
            /// Upstream sequence attribute; may be missing or repeated.
            pub source_seq: Option<i64>,
            $( pub $field: $ty ),*
        }
        impl Ordinal for $name {
            fn set_ordinal(&mut self, ordinal: i32) { self.ordinal = ordinal; }
        }
    )*};
}

items! {
    /// ROUT / ERUT point (RTNO). ROUT lists the stops other than home; ERUT the
    /// entire route. SADC/SDDC are the day-change factors.
    RouteItem { apcd: Option<String>, scat: Time, scdt: Time, sadc: Option<String>, sddc: Option<String> }
    /// PSDT (PSNO): planned stand allocation.
    StandItem { psst: Option<String>, stst: Time, stet: Time }
    /// GTDT (GTNO): gate allocation.
    GateItem { gate: Option<String>, pgot: Time, pgct: Time, gotm: Time, gctm: Time, gtyp: Option<String> }
    /// CKDT (CKNO): check-in counter allocation.
    CounterItem { chkc: Option<String>, ccls: Option<String>, pcot: Time, pcct: Time, cotm: Time, cctm: Time, ctyp: Option<String> }
    /// CLDT (CLNO): reclaim carousel allocation.
    CarouselItem { belt: Option<String>, bcls: Option<String>, pcot: Time, pcct: Time, fbag: Time, lbag: Time, btyp: Option<String> }
    /// CHDT (CHNO): make-up chute allocation.
    ChuteItem { chut: Option<String>, ccls: Option<String>, pcbt: Time, pcet: Time, cbtm: Time, cetm: Time, ctyp: Option<String> }
    /// CHOT (CSNO): chocks on/off event.
    ChockItem { chtm: Time, chid: Option<String>, chst: Option<String> }
    /// ABTM (ASNO): airbridge attach/detach event.
    AirbridgeItem { abdg: Option<String>, abop: Option<String>, aotm: Time }
    /// DELY: delay code, start, duration in minutes, comment (no sequence attribute).
    DelayItem { code: Option<String>, strt: Time, dura_minutes: Option<i64>, comment: Option<String> }
    /// SRVT: ground-handling service transaction.
    ServiceItem { srtc: Option<String>, srqt: Option<String>, srst: Time, sret: Time, srpr: Option<String>, sanr: Option<String>, sarr: Option<String> }
    /// VIPF: a VIP with its VIPT services (detail key `(flid, vip ordinal, ordinal)`).
    VipItem { vpcd: Option<String>, vfes: Option<i64>, vipt: Vec<VipServiceItem> }
    /// VIPT inside VIPF.
    VipServiceItem { vscd: Option<String>, vtqy: Option<String>, vtst: Time, vtet: Time }
    /// PORT: door open (`O`) / close (`C`) event.
    DoorItem { potm: Time, poid: Option<String> }
    /// TIPT: tractor in place at stand TRST.
    TractorItem { trtm: Time, trst: Option<String> }
    /// PSHT (PSHN): push-back from stand PUST.
    PushItem { pstm: Time, psid: Option<String>, pust: Option<String> }
}

/// Renumbers `ordinal` 1..=n in list order (after every list change).
pub fn renumber<T: Ordinal>(list: &mut [T]) {
    for (i, item) in list.iter_mut().enumerate() {
        item.set_ordinal(i32::try_from(i + 1).unwrap_or(i32::MAX));
    }
}

/// The complete current state of one flight (design §11.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlightState {
    /// `FLID`, the primary key (never inferred from FLNO or dates, §11).
    pub flid: i64,
    pub state: FlightStatus,
    /// Bumped by every successful write (INV-13); 0 = never written.
    pub state_version: i64,
    /// Immutable once non-NULL (INV-12).
    pub operation_day: Option<NaiveDate>,
    /// Mailbox ID of the last message that wrote this flight.
    pub last_msg_id: i64,
    /// Audit times, from [`ApplyContext::now`](super::ApplyContext), microsecond precision.
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Every [`ScalarTag`] except FLID (which is [`Self::flid`]); absent = NULL.
    pub scalars: BTreeMap<ScalarTag, FlightValue>,
    pub fdiv: Option<DiversionInfo>,
    pub fret: Option<ReturnInfo>,
    pub flab: Option<LandingAbortInfo>,
    /// ROUT: stops other than home.
    pub rout: Vec<RouteItem>,
    /// ERUT: the entire route.
    pub erut: Vec<RouteItem>,
    /// PSDT: planned stands.
    pub psdt: Vec<StandItem>,
    /// GTDT: gates.
    pub gtdt: Vec<GateItem>,
    /// CKDT: check-in counters.
    pub ckdt: Vec<CounterItem>,
    /// CLDT: carousels.
    pub cldt: Vec<CarouselItem>,
    /// CHDT: chutes.
    pub chdt: Vec<ChuteItem>,
    /// CHOT: chocks.
    pub chot: Vec<ChockItem>,
    /// ABTM: airbridge events.
    pub abtm: Vec<AirbridgeItem>,
    /// DELY: delays.
    pub dely: Vec<DelayItem>,
    /// SRVT: services (`G-SRVT-VIPF`).
    pub srvt: Vec<ServiceItem>,
    /// VIPF: VIPs (`G-SRVT-VIPF`).
    pub vipf: Vec<VipItem>,
    /// PORT: door events.
    pub port: Vec<DoorItem>,
    /// TIPT: tractor events.
    pub tipt: Vec<TractorItem>,
    /// PSHT: push-back events.
    pub psht: Vec<PushItem>,
    /// Which message set each A-CDM milestone the content shows (the one
    /// thing about milestones that cannot be derived later; see
    /// [`milestones`](super::milestones)). Not content: it never appears in
    /// `changed_fields` or `changes`.
    pub milestone_msgs: BTreeMap<MilestoneCode, i64>,
}

impl FlightState {
    /// An empty ACTIVE flight that was never written (version 0).
    pub fn new(flid: i64, now: DateTime<Utc>) -> Self {
        Self {
            flid,
            state: FlightStatus::Active,
            state_version: 0,
            operation_day: None,
            last_msg_id: 0,
            created_at: now,
            updated_at: now,
            scalars: BTreeMap::new(),
            fdiv: None,
            fret: None,
            flab: None,
            rout: Vec::new(),
            erut: Vec::new(),
            psdt: Vec::new(),
            gtdt: Vec::new(),
            ckdt: Vec::new(),
            cldt: Vec::new(),
            chdt: Vec::new(),
            chot: Vec::new(),
            abtm: Vec::new(),
            dely: Vec::new(),
            srvt: Vec::new(),
            vipf: Vec::new(),
            port: Vec::new(),
            tipt: Vec::new(),
            psht: Vec::new(),
            milestone_msgs: BTreeMap::new(),
        }
    }

    /// True when ACTIVE.
    pub fn is_active(&self) -> bool {
        self.state == FlightStatus::Active
    }

    /// The stored value of `tag` (FLID is [`Self::flid`] and never stored here).
    pub fn scalar(&self, tag: ScalarTag) -> Option<&FlightValue> {
        self.scalars.get(&tag)
    }

    /// Text value of `tag`, if it is text.
    pub fn text(&self, tag: ScalarTag) -> Option<&str> {
        match self.scalars.get(&tag) {
            Some(FlightValue::Text(v)) => Some(v),
            _ => None,
        }
    }

    /// Integer value of `tag`, if it is an integer.
    pub fn int(&self, tag: ScalarTag) -> Option<i64> {
        match self.scalars.get(&tag) {
            Some(FlightValue::Int(v)) => Some(*v),
            _ => None,
        }
    }

    /// Sets (`Some`) or clears (`None`) a scalar. FLID is ignored (identity).
    pub fn set_scalar(&mut self, tag: ScalarTag, value: Option<FlightValue>) {
        if tag == ScalarTag::FLID {
            return;
        }
        match value {
            Some(v) => {
                self.scalars.insert(tag, v);
            }
            None => {
                self.scalars.remove(&tag);
            }
        }
    }

    /// MAID with the self-reference removed (§11.4: `MAID = FLID` is treated
    /// as no master). `None` = this flight is a master (it carries MAFL).
    pub fn master_id(&self) -> Option<i64> {
        self.int(ScalarTag::MAID).filter(|m| *m != self.flid)
    }

    /// The content fields (SIS names) that differ between `self` and `next`:
    /// scalar tags, FDIV/FRET/FLAB, group names (ROUT, ERUT, GTDT, …), STATE,
    /// OPERATION_DAY. Version, message ID and audit times are not content.
    pub fn changed_fields(&self, next: &FlightState) -> Vec<String> {
        struct Names(Vec<String>);
        impl FieldVisitor for Names {
            fn value<T: Serialize + PartialEq>(&mut self, name: &str, old: &T, new: &T) {
                if old != new {
                    self.0.push(name.to_string());
                }
            }
            fn list<T: Serialize + PartialEq>(&mut self, name: &str, old: &[T], new: &[T]) {
                if old != new {
                    self.0.push(name.to_string());
                }
            }
        }
        let mut names = Names(Vec::new());
        self.walk_content(next, &mut names);
        names.0
    }

    /// Shows `visitor` every content field of `self` and `next` side by side,
    /// in the fixed order of docs/events.md (the order of `changed_fields`
    /// and of `changes`): STATE, OPERATION_DAY, the scalars in
    /// `ScalarTag::ALL` order, FDIV, FRET, FLAB, then the lists. One walk
    /// for every consumer of "what differs", so they cannot drift.
    pub fn walk_content(&self, next: &FlightState, visitor: &mut impl FieldVisitor) {
        // Exhaustive destructuring: a new field must be added here to compile.
        let FlightState {
            flid: _,
            state,
            state_version: _,
            operation_day,
            last_msg_id: _,
            created_at: _,
            updated_at: _,
            scalars: _,
            fdiv,
            fret,
            flab,
            rout,
            erut,
            psdt,
            gtdt,
            ckdt,
            cldt,
            chdt,
            chot,
            abtm,
            dely,
            srvt,
            vipf,
            port,
            tipt,
            psht,
            milestone_msgs: _,
        } = self;
        let v = visitor;
        v.value("STATE", state, &next.state);
        v.value("OPERATION_DAY", operation_day, &next.operation_day);
        for tag in ScalarTag::ALL {
            v.value(tag.name(), &self.scalar(*tag), &next.scalar(*tag));
        }
        v.value("FDIV", fdiv, &next.fdiv);
        v.value("FRET", fret, &next.fret);
        v.value("FLAB", flab, &next.flab);
        v.list("ROUT", rout, &next.rout);
        v.list("ERUT", erut, &next.erut);
        v.list("PSDT", psdt, &next.psdt);
        v.list("GTDT", gtdt, &next.gtdt);
        v.list("CKDT", ckdt, &next.ckdt);
        v.list("CLDT", cldt, &next.cldt);
        v.list("CHDT", chdt, &next.chdt);
        v.list("CHOT", chot, &next.chot);
        v.list("ABTM", abtm, &next.abtm);
        v.list("DELY", dely, &next.dely);
        v.list("SRVT", srvt, &next.srvt);
        v.list("VIPF", vipf, &next.vipf);
        v.list("PORT", port, &next.port);
        v.list("TIPT", tipt, &next.tipt);
        v.list("PSHT", psht, &next.psht);
    }

    /// The same flight with every content field emptied (used when a deleted
    /// FLID is rebuilt by a schedule, design §12.3): identity, version,
    /// operation day and audit times are kept.
    pub fn emptied(&self) -> FlightState {
        let mut fresh = FlightState::new(self.flid, self.created_at);
        fresh.state_version = self.state_version;
        fresh.operation_day = self.operation_day;
        fresh.last_msg_id = self.last_msg_id;
        fresh.updated_at = self.updated_at;
        fresh
    }
}

/// The current complete states the processor loaded for one message, by FLID
/// (see the loading protocol on [`FlightStateEngine`](super::FlightStateEngine)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlightSet {
    flights: BTreeMap<i64, FlightState>,
    /// For FLIDs with no current state: the last STATE_VERSION published
    /// before flight-history-clean removed them. A re-created
    /// flight continues from it, so consumers' only-forward guards accept it.
    retired: BTreeMap<i64, i64>,
}

impl FlightSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds or replaces a flight.
    pub fn insert(&mut self, flight: FlightState) {
        self.flights.insert(flight.flid, flight);
    }
    /// The flight with `flid`, if loaded.
    pub fn get(&self, flid: i64) -> Option<&FlightState> {
        self.flights.get(&flid)
    }
    /// True when `flid` is loaded.
    pub fn contains(&self, flid: i64) -> bool {
        self.flights.contains_key(&flid)
    }
    /// All loaded flights, by ascending FLID.
    pub fn iter(&self) -> impl Iterator<Item = &FlightState> {
        self.flights.values()
    }
    /// Number of loaded flights.
    pub fn len(&self) -> usize {
        self.flights.len()
    }
    /// True when nothing is loaded.
    pub fn is_empty(&self) -> bool {
        self.flights.is_empty()
    }
    /// Records that `flid`, not in the current state, last had `version`
    /// (the history store's record; the processor loads it).
    pub fn set_retired_version(&mut self, flid: i64, version: i64) {
        self.retired.insert(flid, version);
    }
    /// The version the next write of `flid` follows: the loaded flight's, else
    /// the retired one, else 0 (never written).
    pub fn last_version(&self, flid: i64) -> i64 {
        match self.flights.get(&flid) {
            Some(f) => f.state_version,
            None => self.retired.get(&flid).copied().unwrap_or(0),
        }
    }
}

impl FromIterator<FlightState> for FlightSet {
    fn from_iter<I: IntoIterator<Item = FlightState>>(iter: I) -> Self {
        let mut set = FlightSet::new();
        for f in iter {
            set.insert(f);
        }
        set
    }
}
