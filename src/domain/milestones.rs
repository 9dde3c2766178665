//! A-CDM milestones of one flight (issue 36 item 2; docs/events.md
//! "Milestones"): the times SIS carries, keyed by EUROCONTROL Airport CDM's
//! codes (the same codes IATA AIDX carries as `OperationTime` qualifiers),
//! each with its time type, the SIS field it was read from and the mailbox
//! ID of the message that set it.
//!
//! The rule: a milestone is *derived* from the current content on every
//! read ([`MilestoneDeriver`]), so it can never disagree with the fields it
//! comes from; only the mailbox ID that set each one is *recorded*
//! ([`stamp`], in the flight state's `milestone_msgs`), because it cannot
//! be derived afterwards. A message sets a milestone when the milestone's
//! time or source differs from what the flight showed before it.
//!
//! Sides follow MVIN: an arrival (`A`) shows the arrival codes, a
//! departure (`D`) the departure codes; ACGT belongs to both. A flight
//! without MVIN has no milestones. [`MAPPINGS`] is the table docs/events.md
//! prints; [`UNMAPPED`] names the codes SIS does not carry, and why.

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};

pub use super::acdm::MilestoneCode;
use super::flight_state::{FlightState, FlightStatus, FlightValue};
use crate::codec::ScalarTag;

/// A-CDM's time types (the first letter of most codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum TimeType {
    /// Scheduled.
    Sct,
    /// Estimated.
    Est,
    /// Target.
    Tar,
    /// Calculated.
    Cal,
    /// Actual.
    Act,
}

impl TimeType {
    /// The type as A-CDM writes it (`EST`).
    pub fn as_str(self) -> &'static str {
        match self {
            TimeType::Sct => "SCT",
            TimeType::Est => "EST",
            TimeType::Tar => "TAR",
            TimeType::Cal => "CAL",
            TimeType::Act => "ACT",
        }
    }
}

/// Which movement a code belongs to (MVIN `A` / `D`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Arrival,
    Departure,
    /// Either movement (ACGT).
    Both,
}

impl Side {
    fn covers(self, mvin: Side) -> bool {
        self == Side::Both || self == mvin
    }
    /// The words docs/events.md prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Arrival => "arrival",
            Side::Departure => "departure",
            Side::Both => "both",
        }
    }
}

/// Which item of a list of timed events a milestone takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    Earliest,
    Latest,
}

/// Where a code's time is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A time scalar of sis-format §2.3.
    Scalar(ScalarTag),
    /// CHOT events whose CHID is the given value (`ON` / `OFF`), their CHTM.
    Chocks(&'static str, Pick),
    /// PORT events whose POID is the given value (`O` / `C`), their POTM.
    Doors(&'static str, Pick),
    /// The last PORT event by time, when it is a close (`C`): all doors
    /// are shut again.
    LastDoorClose,
    /// PSHT events (push-back), their PSTM.
    Pushes(Pick),
}

impl Source {
    /// The SIS field named in a milestone's `source`.
    pub fn field(self) -> &'static str {
        match self {
            Source::Scalar(tag) => tag.name(),
            Source::Chocks(..) => "CHOT.CHTM",
            Source::Doors(..) | Source::LastDoorClose => "PORT.POTM",
            Source::Pushes(_) => "PSHT.PSTM",
        }
    }
}

/// One row of the mapping: a code, its type and side, and its sources in
/// order of preference (the first that has a time wins).
#[derive(Debug, Clone, Copy)]
pub struct Mapping {
    pub code: MilestoneCode,
    pub kind: TimeType,
    pub side: Side,
    pub sources: &'static [Source],
    /// Set when SIS's meaning is not certain: what msgx chose and why
    /// (docs/events.md flags it).
    pub ambiguity: Option<&'static str>,
}

use MilestoneCode as C;
use ScalarTag as T;

/// The codes msgx derives (16 of the 21), in [`MilestoneCode::ALL`] order.
pub const MAPPINGS: &[Mapping] = &[
    Mapping {
        code: C::Sibt,
        kind: TimeType::Sct,
        side: Side::Arrival,
        sources: &[Source::Scalar(T::SODT)],
        ambiguity: None,
    },
    Mapping {
        code: C::Eldt,
        kind: TimeType::Est,
        side: Side::Arrival,
        sources: &[Source::Scalar(T::ESTT)],
        ambiguity: Some(
            "ESTT is the AODB's ETA, which some airports mean as in-block: msgx reads it as \
             landing (CAAC usage), because SIS carries in-block separately as CHOT ON",
        ),
    },
    Mapping {
        code: C::Aldt,
        kind: TimeType::Act,
        side: Side::Arrival,
        sources: &[Source::Scalar(T::ACTT)],
        ambiguity: Some(
            "ACTT is the AODB's ATA: read as touch-down (CAAC usage), in-block comes from CHOT ON",
        ),
    },
    Mapping {
        code: C::Aibt,
        kind: TimeType::Act,
        side: Side::Arrival,
        sources: &[Source::Chocks("ON", Pick::Earliest)],
        ambiguity: Some(
            "several chocks-on events (a tow to another stand): the earliest is the in-block",
        ),
    },
    Mapping {
        code: C::Acgt,
        kind: TimeType::Act,
        side: Side::Both,
        sources: &[Source::Doors("O", Pick::Earliest)],
        ambiguity: Some(
            "SIS has no ground-handling start: the first door opening (PORT POID=O) is taken",
        ),
    },
    Mapping {
        code: C::Sobt,
        kind: TimeType::Sct,
        side: Side::Departure,
        sources: &[Source::Scalar(T::SODT)],
        ambiguity: None,
    },
    Mapping {
        code: C::Eobt,
        kind: TimeType::Est,
        side: Side::Departure,
        sources: &[Source::Scalar(T::EOBT)],
        ambiguity: None,
    },
    Mapping {
        code: C::Tobt,
        kind: TimeType::Tar,
        side: Side::Departure,
        sources: &[Source::Scalar(T::TOBT)],
        ambiguity: None,
    },
    Mapping {
        code: C::Asbt,
        kind: TimeType::Act,
        side: Side::Departure,
        sources: &[Source::Scalar(T::BOTM)],
        ambiguity: Some("BOTM (boarding open) is read as the actual start of boarding"),
    },
    Mapping {
        code: C::Ardt,
        kind: TimeType::Act,
        side: Side::Departure,
        sources: &[Source::LastDoorClose],
        ambiguity: Some(
            "SIS has no ready time: the last door event, when it is a close, is taken (doors \
             closed is the first condition of A-CDM's ready state)",
        ),
    },
    Mapping {
        code: C::Asrt,
        kind: TimeType::Act,
        side: Side::Departure,
        sources: &[Source::Scalar(T::EGSR)],
        ambiguity: None,
    },
    Mapping {
        code: C::Asat,
        kind: TimeType::Act,
        side: Side::Departure,
        sources: &[Source::Scalar(T::APPT)],
        ambiguity: Some(
            "APPT (approved time) is read as the start-up approval given (ASAT), not as a target \
             (TSAT)",
        ),
    },
    Mapping {
        code: C::Aobt,
        kind: TimeType::Act,
        side: Side::Departure,
        sources: &[
            Source::Chocks("OFF", Pick::Latest),
            Source::Pushes(Pick::Earliest),
        ],
        ambiguity: Some(
            "several chocks-off events (a tow before departure): the latest is the off-block; \
             without one, the first push-back (PSHT) is taken",
        ),
    },
    Mapping {
        code: C::Etot,
        kind: TimeType::Est,
        side: Side::Departure,
        sources: &[Source::Scalar(T::ESTT)],
        ambiguity: Some(
            "ESTT is the AODB's ETD, which some airports mean as off-block: msgx reads it as \
             take-off (CAAC usage), because SIS carries off-block separately as EOBT/TOBT",
        ),
    },
    Mapping {
        code: C::Ctot,
        kind: TimeType::Cal,
        side: Side::Departure,
        sources: &[Source::Scalar(T::CTOT)],
        ambiguity: None,
    },
    Mapping {
        code: C::Atot,
        kind: TimeType::Act,
        side: Side::Departure,
        sources: &[Source::Scalar(T::ACTT)],
        ambiguity: Some(
            "ACTT is the AODB's ATD: read as take-off (CAAC usage), off-block comes from CHOT OFF",
        ),
    },
];

/// The codes SIS does not carry, and why (docs/events.md).
pub const UNMAPPED: &[(MilestoneCode, &str)] = &[
    (
        C::Tldt,
        "no SIS field: target landing times come from an arrival manager, not the AODB",
    ),
    (
        C::Eibt,
        "no SIS field: ESTT is read as ELDT, and taxi-in times are not sent",
    ),
    (
        C::Aegt,
        "no SIS field: the end of ground handling is not reported (the last airbridge \
         detach is in ABTM, but does not end handling)",
    ),
    (
        C::Tsat,
        "no SIS field: start-up approval targets come from the pre-departure sequencer",
    ),
    (
        C::Ttot,
        "no SIS field: CTOT is the only take-off target SIS carries",
    ),
];

/// One milestone as `schd`, `msgx flight show` and the console show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Milestone {
    /// The time, with the airport's offset.
    pub time: DateTime<FixedOffset>,
    /// SCT, EST, TAR, CAL or ACT.
    #[serde(rename = "type")]
    pub kind: TimeType,
    /// The SIS field the time was read from (`ESTT`, `CHOT.CHTM`).
    pub source: String,
    /// For a list source, the item's `ordinal` (1-based, as in `schd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ordinal: Option<i32>,
    /// Mailbox ID of the message that set it; null when it was set before
    /// msgx recorded milestones (a flight last written by an older release).
    pub msg_id: Option<i64>,
}

impl Milestone {
    /// The source with its list item, as people read it: `ESTT`,
    /// `CHOT[2].CHTM` (the item's ordinal).
    pub fn source_label(&self) -> String {
        match (self.ordinal, self.source.split_once('.')) {
            (Some(n), Some((list, field))) => format!("{list}[{n}].{field}"),
            _ => self.source.clone(),
        }
    }
}

/// A flight's milestones by code (in [`MilestoneCode`] order).
pub type Milestones = BTreeMap<MilestoneCode, Milestone>;

/// What a source gives: the time and the list item's ordinal.
type Reading = (DateTime<FixedOffset>, Option<i32>);

/// The movement side of a flight (`None` without MVIN or with another value).
fn side_of(state: &FlightState) -> Option<Side> {
    match state.text(ScalarTag::MVIN) {
        Some("A") => Some(Side::Arrival),
        Some("D") => Some(Side::Departure),
        _ => None,
    }
}

/// Picks the earliest or latest `(time, ordinal)` of `items`; ties go to
/// the first in list order.
fn pick(items: impl Iterator<Item = Reading>, how: Pick) -> Option<Reading> {
    items.fold(None, |best: Option<Reading>, r| match best {
        None => Some(r),
        Some(b) => match how {
            Pick::Earliest if r.0 < b.0 => Some(r),
            Pick::Latest if r.0 > b.0 => Some(r),
            _ => Some(b),
        },
    })
}

/// A code value compared without regard to case or padding (`on`, ` ON`).
fn is(value: Option<&str>, want: &str) -> bool {
    value.is_some_and(|v| v.trim().eq_ignore_ascii_case(want))
}

/// The items of an event list that have a time, and whose code (CHID,
/// POID) is `want` unless that is `None`, as readings with their ordinal.
/// `parts` gives an item's code, time and ordinal.
fn timed<'a, T>(
    items: &'a [T],
    want: Option<&'a str>,
    parts: impl Fn(&T) -> (Option<&str>, Option<DateTime<FixedOffset>>, i32) + 'a,
) -> impl Iterator<Item = Reading> + 'a {
    items.iter().filter_map(move |item| {
        let (code, at, ordinal) = parts(item);
        let wanted = want.is_none_or(|w| is(code, w));
        at.filter(|_| wanted).map(|t| (t, Some(ordinal)))
    })
}

impl Source {
    /// Reads this source from `state`.
    fn read(self, state: &FlightState) -> Option<Reading> {
        match self {
            Source::Scalar(tag) => match state.scalar(tag) {
                Some(FlightValue::Time(t)) => Some((*t, None)),
                _ => None,
            },
            Source::Chocks(chid, how) => pick(
                timed(&state.chot, Some(chid), |c| {
                    (c.chid.as_deref(), c.chtm, c.ordinal)
                }),
                how,
            ),
            Source::Doors(poid, how) => pick(
                timed(&state.port, Some(poid), |d| {
                    (d.poid.as_deref(), d.potm, d.ordinal)
                }),
                how,
            ),
            Source::LastDoorClose => {
                let last = state
                    .port
                    .iter()
                    .filter(|d| is(d.poid.as_deref(), "O") || is(d.poid.as_deref(), "C"))
                    .filter_map(|d| d.potm.map(|t| (t, d)))
                    // The latest event; on a tie a close wins (the doors
                    // end closed).
                    .max_by_key(|(t, d)| (*t, is(d.poid.as_deref(), "C")))?;
                is(last.1.poid.as_deref(), "C").then_some((last.0, Some(last.1.ordinal)))
            }
            Source::Pushes(how) => {
                pick(timed(&state.psht, None, |p| (None, p.pstm, p.ordinal)), how)
            }
        }
    }
}

/// A derived milestone before its mailbox ID is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Derived {
    time: DateTime<FixedOffset>,
    kind: TimeType,
    source: Source,
    ordinal: Option<i32>,
}

/// The milestones `state`'s content gives, without mailbox IDs.
fn derive(state: &FlightState) -> BTreeMap<MilestoneCode, Derived> {
    let mut out = BTreeMap::new();
    let Some(side) = side_of(state) else {
        return out;
    };
    for m in MAPPINGS.iter().filter(|m| m.side.covers(side)) {
        let found = m
            .sources
            .iter()
            .find_map(|s| s.read(state).map(|(time, ordinal)| (*s, time, ordinal)));
        if let Some((source, time, ordinal)) = found {
            out.insert(
                m.code,
                Derived {
                    time,
                    kind: m.kind,
                    source,
                    ordinal,
                },
            );
        }
    }
    out
}

/// The milestones of `state`: derived from its content, each with the
/// mailbox ID [`stamp`] recorded for it.
pub fn milestones(state: &FlightState) -> Milestones {
    derive(state)
        .into_iter()
        .map(|(code, d)| {
            let m = Milestone {
                time: d.time,
                kind: d.kind,
                source: d.source.field().to_string(),
                ordinal: d.ordinal,
                msg_id: state.milestone_msgs.get(&code).copied(),
            };
            (code, m)
        })
        .collect()
}

/// Records, in `next.milestone_msgs`, which message set each milestone
/// `next` shows: a milestone whose time and source are what `old` showed
/// keeps `old`'s mailbox ID; any other was set by `msg_id`. A flight not
/// active before (new, or re-created after a deletion) has every
/// milestone set by `msg_id`. The item's ordinal is not compared: a list
/// renumbered around an unchanged event does not move its milestone.
pub fn stamp(old: Option<&FlightState>, next: &mut FlightState, msg_id: i64) {
    let old = old.filter(|o| o.state == FlightStatus::Active);
    let before = old.map(derive).unwrap_or_default();
    let mut ids = BTreeMap::new();
    for (code, d) in derive(next) {
        let same = before
            .get(&code)
            .is_some_and(|b| b.time == d.time && b.source.field() == d.source.field());
        let id = if same {
            old.and_then(|o| o.milestone_msgs.get(&code).copied())
        } else {
            Some(msg_id)
        };
        if let Some(id) = id {
            ids.insert(code, id);
        }
    }
    next.milestone_msgs = ids;
}
