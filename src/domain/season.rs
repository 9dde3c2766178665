//! The seasonal schedule (SCHS, sis-format §2.5): pure rules
//! that turn a decoded SCHS into a typed [`Season`], decide which stored
//! seasons a new one replaces or pushes out (`msgx.season.keep`), and build
//! the `season` topic records. No I/O. Rules: docs/season.md.
//!
//! - **Package validation** (all or nothing, as SCHD §7.1 step 2): header
//!   SNAM/SDAT/EDAT, RECS = number of FLTR, SDAT ≤ EDAT, in every FLTR the
//!   mandatory ALCD/FLNO/MVIN/STDT/EDDT/DYOP/SCHT/FLTY/FLIN/ACFT, STDT ≤ EDDT,
//!   a DYOP of seven weekday positions, MVIN/FLIN codes (as SCHD), and a series key
//!   unique within the season. Any failure is one [`SeasonError`] → the
//!   message is DEAD(PROTOCOL) and nothing is stored.
//! - **Replacement**: the season is keyed by SNAM + SDAT + EDAT; a new SCHS
//!   for it replaces all of its series. Only the `keep` most recent seasons
//!   (latest SDAT, then EDAT, then SNAM) stay stored.
//! - **Records**: one per series of the stored new season, keyed
//!   `SNAM|ALCD|FLNO|MVIN|STDT`; a tombstone for every key that was published
//!   before and is in no season kept afterwards.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::codec::{Collection, Field, Fltr, RoutePoint, ScalarTag, ScalarValue, Schs};
use crate::domain::config::DomainConfig;
use crate::domain::error::DomainError;
use crate::domain::rules::convert::Conv;

/// Why a SCHS is rejected (class PROTOCOL, design §3): the reason names the
/// FLTR (1-based) and the element, for LAST_ERROR.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeasonError {
    /// RECS must equal the number of FLTR: applying a truncated package
    /// would drop the missing series from the season.
    #[error("SCHS: RECS is {} but the SCHS carries {count} FLTR; not applied (a truncated package would drop series)", recs.map_or_else(|| "missing".to_string(), |n| n.to_string()))]
    RecsMismatch { recs: Option<i64>, count: usize },
    /// SNAM, SDAT and EDAT key the season.
    #[error("SCHS: <{field}> is mandatory in the season header (sis-format §2.5)")]
    MissingHeader { field: &'static str },
    #[error("SCHS season {snam}: SDAT {sdat} is after EDAT {edat}")]
    SeasonReversed {
        snam: String,
        sdat: NaiveDate,
        edat: NaiveDate,
    },
    /// sis-format §2.5: these are mandatory in a SCHS FLTR.
    #[error("SCHS FLTR #{index}: <{field}> is mandatory (sis-format §2.5)")]
    MissingField { index: usize, field: &'static str },
    /// A series cannot end before it starts (the real sample SCHS-01 does).
    #[error(
        "SCHS FLTR #{index} ({flight}): STDT {stdt} is after EDDT {eddt}; a series cannot end before it starts"
    )]
    PeriodReversed {
        index: usize,
        flight: String,
        stdt: NaiveDate,
        eddt: NaiveDate,
    },
    #[error(
        "SCHS FLTR #{index} ({flight}): DYOP {dyop:?} is not seven weekday positions of digits (1 = Monday, 0 = not operated; sis-format §2.3)"
    )]
    BadDyop {
        index: usize,
        flight: String,
        dyop: String,
    },
    /// Two FLTR with one key would be one compacted record: one would be lost.
    #[error(
        "SCHS FLTR #{index} repeats series {key} of FLTR #{first}; SNAM|ALCD|FLNO|MVIN|STDT must be unique in a season"
    )]
    DuplicateSeries {
        index: usize,
        first: usize,
        key: String,
    },
    /// A value the flight rules reject too (MVIN/FLIN code, value kind).
    #[error("SCHS FLTR #{index}: {source}")]
    Field { index: usize, source: DomainError },
}

/// A season's identity (`SEASON` primary key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SeasonId {
    pub snam: String,
    pub sdat: NaiveDate,
    pub edat: NaiveDate,
}

impl SeasonId {
    /// Most recent first: latest SDAT, then latest EDAT, then SNAM.
    fn recency(&self) -> impl Ord + '_ {
        (
            std::cmp::Reverse(self.sdat),
            std::cmp::Reverse(self.edat),
            &self.snam,
        )
    }
}

impl std::fmt::Display for SeasonId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}..{}", self.snam, self.sdat, self.edat)
    }
}

/// One ROUT or ERUT stop of a series. Times are as sent: `HHMM` stays its
/// four digits; a `DDMMMYYHHMM` (the ERUT of the real samples) becomes
/// ISO-8601 with the airport offset, as every SIS time in the events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeasonRoutePoint {
    /// 1-based persisted order (by RTNO, message order among equal ones).
    pub ordinal: i32,
    /// RTNO as sent.
    pub rtno: Option<i64>,
    pub apcd: Option<String>,
    pub scat: Option<String>,
    /// Arrival day-change factor, e.g. `+1`.
    pub sadc: Option<String>,
    pub scdt: Option<String>,
    /// Departure day-change factor, e.g. `-2`.
    pub sddc: Option<String>,
}

/// One series (a SCHS FLTR): a flight operated on the DYOP weekdays between
/// STDT and EDDT at SCHT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeasonSeries {
    pub alcd: String,
    pub flno: String,
    /// `A` / `D`.
    pub mvin: String,
    /// Period start / end, `YYYY-MM-DD`.
    pub stdt: NaiveDate,
    pub eddt: NaiveDate,
    /// Seven positions, 1 = Monday, a digit other than `0` = operated.
    pub dyop: String,
    /// Scheduled time at the home airport, `HHMM` local.
    pub scht: String,
    pub flty: String,
    /// `D` / `I` / `M`.
    pub flin: String,
    pub acft: String,
    pub alsc: Option<String>,
    pub reno: Option<String>,
    pub taop: Option<String>,
    pub tafl: Option<String>,
    pub trml: Option<String>,
    pub maxp: Option<i64>,
    pub csop: Option<String>,
    pub csft: Option<String>,
    /// Any other FLTR scalar the message sent (lower-case tag → value, `null`
    /// when sent empty): nothing the message carried is dropped.
    pub other: BTreeMap<String, serde_json::Value>,
    pub rout: Vec<SeasonRoutePoint>,
    pub erut: Vec<SeasonRoutePoint>,
}

impl SeasonSeries {
    /// The record key `SNAM|ALCD|FLNO|MVIN|STDT` (STDT as `YYYY-MM-DD`).
    pub fn key(&self, snam: &str) -> String {
        format!(
            "{snam}|{}|{}|{}|{}",
            self.alcd, self.flno, self.mvin, self.stdt
        )
    }

    /// The weekdays operated (1 = Monday … 7 = Sunday), from DYOP.
    pub fn days(&self) -> Vec<u8> {
        self.dyop
            .bytes()
            .zip(1u8..)
            .filter(|(b, _)| b.is_ascii_digit() && *b != b'0')
            .map(|(_, d)| d)
            .collect()
    }
}

/// A validated SCHS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Season {
    pub id: SeasonId,
    pub apcd: Option<String>,
    /// In message order.
    pub series: Vec<SeasonSeries>,
    /// FLTR elements a season has no place for (FDIV, GTDT…), by name, once
    /// each: named in the SUCCEEDED note rather than dropped silently.
    pub ignored: Vec<&'static str>,
}

/// The scalars a series keeps in its own fields.
const OWN: &[ScalarTag] = &[
    ScalarTag::ALCD,
    ScalarTag::FLNO,
    ScalarTag::MVIN,
    ScalarTag::STDT,
    ScalarTag::EDDT,
    ScalarTag::DYOP,
    ScalarTag::SCHT,
    ScalarTag::FLTY,
    ScalarTag::FLIN,
    ScalarTag::ACFT,
    ScalarTag::ALSC,
    ScalarTag::RENO,
    ScalarTag::TAOP,
    ScalarTag::TAFL,
    ScalarTag::TRML,
    ScalarTag::MAXP,
    ScalarTag::CSOP,
    ScalarTag::CSFT,
];

/// Validates a decoded SCHS into a [`Season`] (module docs for the rules).
pub fn validate(schs: &Schs, cfg: &DomainConfig) -> Result<Season, SeasonError> {
    let count = schs.flights.len();
    match schs.recs {
        Field::Value(n) if usize::try_from(n).ok() == Some(count) => {}
        ref r => {
            return Err(SeasonError::RecsMismatch {
                recs: r.value().copied(),
                count,
            });
        }
    }
    let snam = schs
        .snam
        .value()
        .cloned()
        .ok_or(SeasonError::MissingHeader { field: "SNAM" })?;
    let sdat = *schs
        .sdat
        .value()
        .ok_or(SeasonError::MissingHeader { field: "SDAT" })?;
    let edat = *schs
        .edat
        .value()
        .ok_or(SeasonError::MissingHeader { field: "EDAT" })?;
    if sdat > edat {
        return Err(SeasonError::SeasonReversed { snam, sdat, edat });
    }
    let conv = Conv { cfg };
    let mut series = Vec::with_capacity(count);
    let mut keys: BTreeMap<String, usize> = BTreeMap::new();
    let mut ignored = BTreeSet::new();
    for (i, f) in schs.flights.iter().enumerate() {
        let index = i + 1;
        let s = one_series(index, f, &conv)?;
        let key = s.key(&snam);
        if let Some(first) = keys.insert(key.clone(), index) {
            return Err(SeasonError::DuplicateSeries { index, first, key });
        }
        ignored.extend(unused_groups(f));
        series.push(s);
    }
    Ok(Season {
        id: SeasonId { snam, sdat, edat },
        apcd: schs.apcd.value().cloned(),
        series,
        ignored: ignored.into_iter().collect(),
    })
}

fn one_series(index: usize, f: &Fltr, conv: &Conv<'_>) -> Result<SeasonSeries, SeasonError> {
    let field = |source| SeasonError::Field { index, source };
    let value = |tag: ScalarTag| -> Result<Option<serde_json::Value>, SeasonError> {
        match f.scalar(tag) {
            Field::Value(v) => {
                let stored = conv.scalar(tag, v).map_err(field)?;
                Ok(Some(serde_json::to_value(stored).unwrap_or_default()))
            }
            _ => Ok(None),
        }
    };
    let text = |tag: ScalarTag| -> Result<Option<String>, SeasonError> {
        Ok(value(tag)?.and_then(|v| v.as_str().map(String::from)))
    };
    let need = |tag: ScalarTag| -> Result<String, SeasonError> {
        text(tag)?.ok_or(SeasonError::MissingField {
            index,
            field: tag.name(),
        })
    };
    let date = |tag: ScalarTag| -> Result<NaiveDate, SeasonError> {
        match f.scalar(tag) {
            Field::Value(ScalarValue::Date(d)) => Ok(*d),
            Field::Value(v) => Err(field(conv.scalar(tag, v).err().unwrap_or(
                DomainError::WrongValueKind {
                    field: tag.name(),
                    found: "other",
                    expected: "date",
                },
            ))),
            _ => Err(SeasonError::MissingField {
                index,
                field: tag.name(),
            }),
        }
    };
    let (alcd, flno, mvin) = (
        need(ScalarTag::ALCD)?,
        need(ScalarTag::FLNO)?,
        need(ScalarTag::MVIN)?,
    );
    let flight = format!("{alcd} {flno} {mvin}");
    let (stdt, eddt) = (date(ScalarTag::STDT)?, date(ScalarTag::EDDT)?);
    if stdt > eddt {
        return Err(SeasonError::PeriodReversed {
            index,
            flight,
            stdt,
            eddt,
        });
    }
    let dyop = need(ScalarTag::DYOP)?;
    if dyop.len() != 7 || !dyop.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SeasonError::BadDyop {
            index,
            flight,
            dyop,
        });
    }
    let mut other = BTreeMap::new();
    for (tag, v) in &f.scalars {
        if OWN.contains(tag) {
            continue;
        }
        let v = match v {
            Field::Value(v) => {
                serde_json::to_value(conv.scalar(*tag, v).map_err(field)?).unwrap_or_default()
            }
            _ => serde_json::Value::Null,
        };
        other.insert(tag.name().to_ascii_lowercase(), v);
    }
    Ok(SeasonSeries {
        scht: need(ScalarTag::SCHT)?,
        flty: need(ScalarTag::FLTY)?,
        // MVIN and FLIN codes are checked by `Conv::scalar`, as for SCHD.
        flin: need(ScalarTag::FLIN)?,
        acft: need(ScalarTag::ACFT)?,
        alsc: text(ScalarTag::ALSC)?,
        reno: text(ScalarTag::RENO)?,
        taop: text(ScalarTag::TAOP)?,
        tafl: text(ScalarTag::TAFL)?,
        trml: text(ScalarTag::TRML)?,
        maxp: value(ScalarTag::MAXP)?.and_then(|v| v.as_i64()),
        csop: text(ScalarTag::CSOP)?,
        csft: text(ScalarTag::CSFT)?,
        other,
        rout: route(index, "ROUT", &f.rout, conv)?,
        erut: route(index, "ERUT", &f.erut, conv)?,
        mvin,
        alcd,
        flno,
        stdt,
        eddt,
        dyop,
    })
}

/// ROUT/ERUT points ordered by RTNO (sis-format §2.3; points without one
/// last), message order among equal ones, with ordinals 1…n.
fn route(
    index: usize,
    group: &'static str,
    points: &Collection<RoutePoint>,
    conv: &Conv<'_>,
) -> Result<Vec<SeasonRoutePoint>, SeasonError> {
    let mut items: Vec<&RoutePoint> = points.items().iter().collect();
    items.sort_by_key(|p| (p.seq.is_none(), p.seq));
    let time = |field: &'static str, f: &Field<ScalarValue>| match f.value() {
        None => Ok(None),
        Some(ScalarValue::Hhmm(s)) => Ok(Some(s.clone())),
        Some(ScalarValue::Time(t)) => Ok(Some(conv.cfg.local_time(*t).to_rfc3339())),
        Some(_) => Err(SeasonError::Field {
            index,
            source: DomainError::WrongValueKind {
                field,
                found: "other",
                expected: "HHMM or time",
            },
        }),
    };
    let (scat, scdt) = match group {
        "ROUT" => ("ROUT/SCAT", "ROUT/SCDT"),
        _ => ("ERUT/SCAT", "ERUT/SCDT"),
    };
    items
        .into_iter()
        .zip(1i32..)
        .map(|(p, ordinal)| {
            Ok(SeasonRoutePoint {
                ordinal,
                rtno: p.seq,
                apcd: p.apcd.value().cloned(),
                scat: time(scat, &p.scat)?,
                sadc: p.sadc.value().cloned(),
                scdt: time(scdt, &p.scdt)?,
                sddc: p.sddc.value().cloned(),
            })
        })
        .collect()
}

/// Groups and attributed elements of a FLTR that a season does not keep.
fn unused_groups(f: &Fltr) -> impl Iterator<Item = &'static str> {
    [
        ("FDIV", f.fdiv.is_present()),
        ("FRET", f.fret.is_present()),
        ("FLAB", f.flab.is_present()),
        ("PSDT", !matches!(f.psdt, Collection::Absent)),
        ("GTDT", !matches!(f.gtdt, Collection::Absent)),
        ("CKDT", !matches!(f.ckdt, Collection::Absent)),
        ("CLDT", !matches!(f.cldt, Collection::Absent)),
        ("CHDT", !matches!(f.chdt, Collection::Absent)),
        ("CHOT", !matches!(f.chot, Collection::Absent)),
        ("ABTM", !matches!(f.abtm, Collection::Absent)),
        ("DELY", !matches!(f.dely, Collection::Absent)),
        ("SRVT", !matches!(f.srvt, Collection::Absent)),
        ("VIPF", !matches!(f.vipf, Collection::Absent)),
        ("PORT", !matches!(f.port, Collection::Absent)),
        ("TIPT", !matches!(f.tipt, Collection::Absent)),
        ("PSHT", !matches!(f.psht, Collection::Absent)),
    ]
    .into_iter()
    .filter(|(_, present)| *present)
    .map(|(name, _)| name)
}

/// A stored season as the replacement decision sees it: its id and the
/// record keys of its series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredKeys {
    pub id: SeasonId,
    pub keys: BTreeSet<String>,
}

/// What storing a new season does to the stored ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// Stored seasons to delete: the old copy of the new season's id, and
    /// every season pushed out of the `keep` most recent.
    pub delete: Vec<SeasonId>,
    /// False when the new season itself is older than the `keep` most recent:
    /// nothing of it is stored or published.
    pub store_new: bool,
    /// Keys published before and in no season kept afterwards, sorted.
    pub tombstones: Vec<String>,
}

/// Decides the replacement of `new` into `stored` keeping `keep` seasons.
pub fn plan_replacement(stored: &[StoredKeys], new: &Season, keep: usize) -> Replacement {
    let mut ids: Vec<&SeasonId> = stored
        .iter()
        .map(|s| &s.id)
        .filter(|id| **id != new.id)
        .collect();
    ids.push(&new.id);
    ids.sort_by(|a, b| a.recency().cmp(&b.recency()));
    let kept: BTreeSet<&SeasonId> = ids.iter().take(keep).copied().collect();
    let store_new = kept.contains(&new.id);
    let mut delete: Vec<SeasonId> = stored
        .iter()
        .filter(|s| s.id == new.id || !kept.contains(&s.id))
        .map(|s| s.id.clone())
        .collect();
    delete.sort();
    let mut after: BTreeSet<String> = stored
        .iter()
        .filter(|s| s.id != new.id && kept.contains(&s.id))
        .flat_map(|s| s.keys.iter().cloned())
        .collect();
    if store_new {
        after.extend(new.series.iter().map(|s| s.key(&new.id.snam)));
    }
    let tombstones = stored
        .iter()
        .flat_map(|s| s.keys.iter())
        .filter(|k| !after.contains(*k))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    Replacement {
        delete,
        store_new,
        tombstones,
    }
}

/// The `season` record value of one series (docs/events.md): the season
/// header, the revision that wrote it, then the series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SeasonRecord<'a> {
    /// The record key, `SNAM|ALCD|FLNO|MVIN|STDT`.
    pub key: String,
    pub snam: &'a str,
    pub apcd: Option<&'a str>,
    pub sdat: NaiveDate,
    pub edat: NaiveDate,
    /// The season's revision (also the `state-version` header): grows with
    /// every stored SCHS, across all seasons, so a consumer can drop an
    /// older record that arrives late.
    pub revision: i64,
    /// Mailbox ID of the SCHS.
    pub msg_id: i64,
    /// UTC time of the write.
    pub updated_at: DateTime<Utc>,
    /// The weekdays operated, from DYOP (1 = Monday).
    pub days: Vec<u8>,
    #[serde(flatten)]
    pub series: &'a SeasonSeries,
}

/// One `KAFKA:season` outbox row: a series record, or a tombstone (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeasonEvent {
    pub key: String,
    pub revision: i64,
    pub payload: Option<Vec<u8>>,
}

/// The records of a stored replacement: tombstones first (sorted), then one
/// record per series of the new season (message order).
pub fn events(
    new: &Season,
    plan: &Replacement,
    revision: i64,
    msg_id: i64,
    now: DateTime<Utc>,
) -> Vec<SeasonEvent> {
    let mut out: Vec<SeasonEvent> = plan
        .tombstones
        .iter()
        .map(|k| SeasonEvent {
            key: k.clone(),
            revision,
            payload: None,
        })
        .collect();
    if plan.store_new {
        for s in &new.series {
            let record = record(&new.id, new.apcd.as_deref(), s, revision, msg_id, now);
            out.push(SeasonEvent {
                key: record.key.clone(),
                revision,
                // Plain data with string keys: serialising cannot fail.
                payload: Some(serde_json::to_vec(&record).unwrap_or_default()),
            });
        }
    }
    out
}

/// The record of `series` in season `id`.
pub fn record<'a>(
    id: &'a SeasonId,
    apcd: Option<&'a str>,
    series: &'a SeasonSeries,
    revision: i64,
    msg_id: i64,
    updated_at: DateTime<Utc>,
) -> SeasonRecord<'a> {
    SeasonRecord {
        key: series.key(&id.snam),
        snam: &id.snam,
        apcd,
        sdat: id.sdat,
        edat: id.edat,
        revision,
        msg_id,
        updated_at,
        days: series.days(),
        series,
    }
}

#[cfg(test)]
mod tests;
