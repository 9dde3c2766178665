//! The ACRIS view of a stored flight (ACI ACRIS flight API, `ACRISFlight`
//! draft-03; docs/acris.md "Field mapping"): pure functions from a
//! [`FlightState`] to the JSON the API answers, no I/O.
//!
//! SIS describes one movement at the home airport (MVIN `A` or `D`, SODT the
//! home time); ACRIS describes the flight between two airports. The home side
//! comes from the flight's own fields (SODT, ESTT, ACTT, TRML, GTDT, CLDT,
//! CKDT, BOTM); the other side from the route (ERUT, else ROUT) and the
//! previous/next-station times (PEDT/PADT, NEAT/NAAT). Absent values are left
//! out, never sent as `null`: the draft-03 schema types every field as a
//! string or object.

use chrono::{DateTime, FixedOffset, NaiveDate, SecondsFormat, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::codec::ScalarTag;
use crate::domain::flight_state::RouteItem;
use crate::domain::mafl::Links;
use crate::domain::{FlightState, FlightValue};

/// `flightStatus` (the schema's enum, in its spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum FlightStatus {
    Canceled,
    Diverted,
    Scheduled,
    GateOpened,
    Boarding,
    GateClosed,
    Departed,
    InApproach,
    Landed,
    BagClaimStarted,
    FlightFinished,
}

/// `operatingAirline`: a 2-character ALCD is an IATA code, a 3-character one
/// an ICAO code (sis-format §2.3: ALCD is 2–3 characters).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Airline {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    #[schema(min_length = 2, max_length = 2)]
    pub iata_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    #[schema(min_length = 3, max_length = 3)]
    pub icao_code: Option<String>,
}

/// `aircraftType`. ACFT is the IATA aircraft code (3 characters); the
/// schema's `icaoCode` needs 4, and SIS has none, so ACFT is `modelName`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AircraftType {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub model_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub registration: Option<String>,
}

/// `flightNumber` and each `codeShares` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlightNumber {
    pub airline_code: String,
    /// Digits, padded to at least 3 (RAML: "padded to at least 3 digits").
    pub track_number: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub suffix: Option<String>,
}

/// `checkinInfo` from CKDT.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckinInfo {
    /// The counters: `first-last` of the allocated CHKC codes, or the one code.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub checkin_location: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub check_in_begin_time: Option<DateTime<FixedOffset>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub check_in_end_time: Option<DateTime<FixedOffset>>,
}

/// One `boardingTime` item (BOTM; SIS has no booking classes for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct BoardingTime {
    pub time: DateTime<FixedOffset>,
}

/// What `departure` and `arrival` share: the movement's times at one
/// airport, its terminal and gate (flattened into both).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Times {
    pub scheduled: DateTime<FixedOffset>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub estimated: Option<DateTime<FixedOffset>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub actual: Option<DateTime<FixedOffset>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub terminal: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub gate: Option<String>,
}

impl Times {
    /// Scheduled at `scheduled`, with the estimated and actual times.
    fn at(scheduled: DateTime<FixedOffset>, estimated: Time, actual: Time) -> Times {
        Times {
            scheduled,
            estimated,
            actual,
            terminal: None,
            gate: None,
        }
    }
}

/// `departure` (`FlightDepartureInformation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DepartureInfo {
    #[serde(flatten)]
    pub times: Times,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub checkin_info: Option<CheckinInfo>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub boarding_time: Vec<BoardingTime>,
}

/// `baggageClaim` from CLDT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BaggageClaim {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub carousel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub expected_time_on_carousel: Option<DateTime<FixedOffset>>,
}

/// `arrival` (`FlightArrivalInformation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArrivalInfo {
    #[serde(flatten)]
    pub times: Times,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub baggage_claim: Option<BaggageClaim>,
}

/// One `via` stop: an intermediate route point with its route times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Via {
    pub via_airport: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub arrival: Option<ArrivalInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub departure: Option<DepartureInfo>,
}

/// One `ACRISFlight`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AcrisFlight {
    pub operating_airline: Airline,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub aircraft_type: Option<AircraftType>,
    pub flight_number: FlightNumber,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub code_shares: Vec<FlightNumber>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub departure_airport: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub arrival_airport: Option<String>,
    /// The operation day at 00:00 UTC (the schema: "Time element is not used").
    #[schema(format = DateTime)]
    pub origin_date: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub departure: Option<DepartureInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub arrival: Option<ArrivalInfo>,
    pub flight_status: FlightStatus,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<Via>,
    /// `updated_at` of the flight, in UTC.
    #[schema(format = DateTime)]
    pub last_update: String,
}

/// One code share as stored: the share's (or master's) ALCD and FLNO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareCode {
    pub alcd: Option<String>,
    pub flno: Option<String>,
}

/// Whether the flight is an arrival at the home airport (MVIN `A`); any
/// other MVIN is read as a departure.
pub fn is_arrival(f: &FlightState) -> bool {
    f.text(ScalarTag::MVIN)
        .is_some_and(|m| m.eq_ignore_ascii_case("A"))
}

fn time(f: &FlightState, tag: ScalarTag) -> Option<DateTime<FixedOffset>> {
    match f.scalar(tag) {
        Some(FlightValue::Time(t)) => Some(*t),
        _ => None,
    }
}

fn text(f: &FlightState, tag: ScalarTag) -> Option<String> {
    f.text(tag)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Splits FLNO (which includes the airline prefix, sis-format §2.3:
/// `YG9028`) into airline code, track number and suffix. The prefix is
/// `alcd` when FLNO starts with it; otherwise three letters followed by a
/// digit are an ICAO prefix and anything else takes the first two
/// characters (`3U8888`). The digits after it are the track number, padded
/// to at least 3 (`CA12` → `012`); a trailing letter is the suffix.
pub fn split_flight_number(flno: &str, alcd: Option<&str>) -> FlightNumber {
    let flno = flno.trim();
    let prefix_len = match alcd.map(str::trim).filter(|a| !a.is_empty()) {
        Some(a)
            if flno.len() > a.len()
                && flno.is_char_boundary(a.len())
                && flno[..a.len()].eq_ignore_ascii_case(a) =>
        {
            a.len()
        }
        _ => {
            let b = flno.as_bytes();
            if b.len() > 3 && b[..3].iter().all(u8::is_ascii_alphabetic) && b[3].is_ascii_digit() {
                3
            } else {
                flno.char_indices().nth(2).map_or(flno.len(), |(i, _)| i)
            }
        }
    };
    let (airline, rest) = flno.split_at(prefix_len);
    let rest = rest.trim();
    let (number, suffix) = match rest.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() && i > 0 => (&rest[..i], Some(c.to_string())),
        _ => (rest, None),
    };
    let number = number.trim_start_matches('0');
    FlightNumber {
        airline_code: airline.to_ascii_uppercase(),
        track_number: format!("{number:0>3}"),
        suffix,
    }
}

/// The flight's own number: FLNO split with ALCD as its prefix, or ALCD and
/// `000` when FLNO is absent.
pub fn flight_number(f: &FlightState) -> FlightNumber {
    let alcd = text(f, ScalarTag::ALCD);
    match text(f, ScalarTag::FLNO) {
        Some(flno) => split_flight_number(&flno, alcd.as_deref()),
        None => FlightNumber {
            airline_code: alcd.unwrap_or_default(),
            track_number: "000".into(),
            suffix: None,
        },
    }
}

fn airline(f: &FlightState, number: &FlightNumber) -> Airline {
    let code = text(f, ScalarTag::ALCD).unwrap_or_else(|| number.airline_code.clone());
    match code.chars().count() {
        2 => Airline {
            iata_code: Some(code),
            icao_code: None,
        },
        3 => Airline {
            iata_code: None,
            icao_code: Some(code),
        },
        _ => Airline::default(),
    }
}

/// The route points of the other airports, in flight order, before (`true`)
/// or after (`false`) the home airport: from ERUT (the entire route, home
/// included) when it has points on that side, else from ROUT (the stops
/// other than home). A route that does not name the home airport has every
/// point on the other side.
fn other_side<'a>(f: &'a FlightState, home: &str, before_home: bool) -> Vec<&'a RouteItem> {
    let side = |route: &'a [RouteItem]| -> Vec<&'a RouteItem> {
        let is_home = |r: &RouteItem| {
            r.apcd
                .as_deref()
                .is_some_and(|a| a.trim().eq_ignore_ascii_case(home))
        };
        let named: Vec<&RouteItem> = route
            .iter()
            .filter(|r| r.apcd.as_deref().is_some_and(|a| !a.trim().is_empty()))
            .collect();
        match named.iter().position(|r| is_home(r)) {
            Some(at) if before_home => named[..at].to_vec(),
            Some(at) => named[at + 1..]
                .iter()
                .copied()
                .filter(|r| !is_home(r))
                .collect(),
            None => named,
        }
    };
    let from_erut = side(&f.erut);
    if from_erut.is_empty() {
        side(&f.rout)
    } else {
        from_erut
    }
}

fn apcd(r: &RouteItem) -> String {
    r.apcd
        .as_deref()
        .map(|a| a.trim().to_ascii_uppercase())
        .unwrap_or_default()
}

fn remote_arrival(r: &RouteItem, estimated: Time, actual: Time) -> Option<ArrivalInfo> {
    r.scat.map(|scheduled| ArrivalInfo {
        times: Times::at(scheduled, estimated, actual),
        baggage_claim: None,
    })
}

fn remote_departure(r: &RouteItem, estimated: Time, actual: Time) -> Option<DepartureInfo> {
    r.scdt.map(|scheduled| DepartureInfo {
        times: Times::at(scheduled, estimated, actual),
        checkin_info: None,
        boarding_time: Vec::new(),
    })
}

type Time = Option<DateTime<FixedOffset>>;

fn via(points: &[&RouteItem]) -> Vec<Via> {
    points
        .iter()
        .map(|r| Via {
            via_airport: apcd(r),
            arrival: remote_arrival(r, None, None),
            departure: remote_departure(r, None, None),
        })
        .collect()
}

/// The first allocated gate (GTDT by ordinal).
fn first_gate(f: &FlightState) -> Option<String> {
    f.gtdt
        .iter()
        .filter_map(|g| g.gate.as_deref().map(str::trim))
        .find(|g| !g.is_empty())
        .map(str::to_string)
}

/// CKDT: the counter range (`first-last` in natural order, or the one
/// counter), opening at the earliest planned open (PCOT, else the actual
/// COTM) and closing at the latest planned close (PCCT, else CCTM).
fn checkin(f: &FlightState) -> Option<CheckinInfo> {
    let mut counters: Vec<&str> = f
        .ckdt
        .iter()
        .filter_map(|c| c.chkc.as_deref().map(str::trim))
        .filter(|c| !c.is_empty())
        .collect();
    counters.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
    counters.dedup();
    let location = match (counters.first(), counters.last()) {
        (Some(a), Some(b)) if a == b => Some(a.to_string()),
        (Some(a), Some(b)) => Some(format!("{a}-{b}")),
        _ => None,
    };
    let begin = f.ckdt.iter().filter_map(|c| c.pcot.or(c.cotm)).min();
    let end = f.ckdt.iter().filter_map(|c| c.pcct.or(c.cctm)).max();
    let info = CheckinInfo {
        checkin_location: location,
        check_in_begin_time: begin,
        check_in_end_time: end,
    };
    (info != CheckinInfo::default()).then_some(info)
}

/// CLDT: the first allocated belt, its bags expected from its first bag
/// (FBAG) or, before that, its planned opening (PCOT).
fn baggage_claim(f: &FlightState) -> Option<BaggageClaim> {
    let first = f
        .cldt
        .iter()
        .find(|c| c.belt.as_deref().is_some_and(|b| !b.trim().is_empty()))?;
    Some(BaggageClaim {
        carousel: first.belt.as_deref().map(|b| b.trim().to_string()),
        expected_time_on_carousel: first.fbag.or(first.pcot),
    })
}

/// The operation day as a date-time at 00:00 UTC; the local day of SODT
/// when the flight has no operation day yet.
fn origin_date(f: &FlightState) -> String {
    let day: Option<NaiveDate> = f
        .operation_day
        .or_else(|| time(f, ScalarTag::SODT).map(|t| t.date_naive()));
    day.map(|d| format!("{}T00:00:00Z", d.format("%Y-%m-%d")))
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

/// `lastUpdate` and `Last-Modified` times: RFC 3339 in UTC (`Z`).
pub fn utc_text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// The flight's status (docs/events.md "ACRIS status mapping"; the first
/// rule that matches wins). `now` is the clock's: SIS sends boarding and
/// gate times that may lie ahead, and a time ahead has not happened yet.
pub fn status(f: &FlightState, now: DateTime<Utc>) -> FlightStatus {
    let past = |t: Option<DateTime<FixedOffset>>| t.is_some_and(|t| t <= now);
    if f.scalar(ScalarTag::CNCL).is_some() {
        return FlightStatus::Canceled;
    }
    if f.fdiv.is_some() {
        return FlightStatus::Diverted;
    }
    let chocks = |id: &str| {
        f.chot.iter().any(|c| {
            c.chid
                .as_deref()
                .is_some_and(|c| c.trim().eq_ignore_ascii_case(id))
        })
    };
    if is_arrival(f) {
        if f.cldt.iter().any(|c| past(c.lbag)) {
            FlightStatus::FlightFinished
        } else if f.cldt.iter().any(|c| past(c.fbag)) {
            FlightStatus::BagClaimStarted
        } else if f.scalar(ScalarTag::ACTT).is_some() || chocks("ON") {
            FlightStatus::Landed
        } else if f.scalar(ScalarTag::PADT).is_some() {
            FlightStatus::InApproach
        } else {
            FlightStatus::Scheduled
        }
    } else if f.scalar(ScalarTag::ACTT).is_some() || chocks("OFF") || !f.psht.is_empty() {
        FlightStatus::Departed
    } else if f.gtdt.iter().any(|g| past(g.gctm)) {
        FlightStatus::GateClosed
    } else if [ScalarTag::BOTM, ScalarTag::LACL, ScalarTag::FINT]
        .iter()
        .any(|t| past(time(f, *t)))
    {
        FlightStatus::Boarding
    } else if f.gtdt.iter().any(|g| past(g.gotm)) {
        FlightStatus::GateOpened
    } else {
        FlightStatus::Scheduled
    }
}

/// What code shares need of one stored ACTIVE flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linked {
    pub flid: i64,
    pub maid: Option<i64>,
    pub code: ShareCode,
}

/// The codes `f` is also sold under (docs/acris.md "Code shares"), by the
/// MAFL rule of [`crate::domain::mafl`]: a master lists its ACTIVE shares
/// (by FLID); a share lists its master first, then the master's other
/// shares; a share whose master is missing, DELETED or itself a share
/// lists none. `linked` holds the ACTIVE masters and shares around `f`.
pub fn share_codes(f: &FlightState, linked: &[Linked]) -> Vec<ShareCode> {
    let mut links = Links::default();
    for l in linked {
        let mut light = FlightState::new(l.flid, f.updated_at);
        light.set_scalar(ScalarTag::MAID, l.maid.map(FlightValue::Int));
        light.set_scalar(ScalarTag::FLNO, l.code.flno.clone().map(FlightValue::Text));
        links.set(&light);
    }
    links.set(f);
    let code_of = |flid: i64| {
        linked
            .iter()
            .find(|l| l.flid == flid)
            .map(|l| l.code.clone())
    };
    let (master, head) = match f.master_id() {
        None => (f.flid, None),
        Some(m) => (m, code_of(m)),
    };
    let Some(shares) = links.mafl(master) else {
        return Vec::new();
    };
    head.into_iter()
        .chain(
            shares
                .iter()
                .filter(|s| s.flid != f.flid)
                .filter_map(|s| code_of(s.flid)),
        )
        .collect()
}

/// `codeShares`: each share code split like the flight's own number.
pub fn code_shares(shares: &[ShareCode]) -> Vec<FlightNumber> {
    shares
        .iter()
        .filter_map(|s| {
            let flno = s.flno.as_deref()?.trim();
            (!flno.is_empty()).then(|| split_flight_number(flno, s.alcd.as_deref()))
        })
        .collect()
}

/// The ACRIS view of `f` at the airport `home` (its IATA code): see the
/// module docs and docs/acris.md "Field mapping".
pub fn flight(
    f: &FlightState,
    home: &str,
    shares: &[ShareCode],
    now: DateTime<Utc>,
) -> AcrisFlight {
    let number = flight_number(f);
    let aircraft = AircraftType {
        model_name: text(f, ScalarTag::ACFT),
        registration: text(f, ScalarTag::RENO),
    };
    let airport = home.trim().to_ascii_uppercase();
    // The home side: without SODT there is no `scheduled`, so no object.
    let home = time(f, ScalarTag::SODT).map(|scheduled| Times {
        terminal: text(f, ScalarTag::TRML),
        gate: first_gate(f),
        ..Times::at(
            scheduled,
            time(f, ScalarTag::ESTT),
            time(f, ScalarTag::ACTT),
        )
    });
    let mut view = AcrisFlight {
        operating_airline: airline(f, &number),
        aircraft_type: (aircraft != AircraftType::default()).then_some(aircraft),
        flight_number: number,
        code_shares: code_shares(shares),
        departure_airport: None,
        arrival_airport: None,
        origin_date: origin_date(f),
        departure: None,
        arrival: None,
        flight_status: status(f, now),
        via: Vec::new(),
        last_update: utc_text(f.updated_at),
    };
    if is_arrival(f) {
        let points = other_side(f, &airport, true);
        view.arrival_airport = Some(airport);
        view.arrival = home.map(|times| ArrivalInfo {
            times,
            baggage_claim: baggage_claim(f),
        });
        if let Some((origin, stops)) = points.split_first() {
            view.departure_airport = Some(apcd(origin));
            view.departure =
                remote_departure(origin, time(f, ScalarTag::PEDT), time(f, ScalarTag::PADT));
            view.via = via(stops);
        }
    } else {
        let points = other_side(f, &airport, false);
        view.departure_airport = Some(airport);
        view.departure = home.map(|times| DepartureInfo {
            times,
            checkin_info: checkin(f),
            boarding_time: time(f, ScalarTag::BOTM)
                .map(|time| BoardingTime { time })
                .into_iter()
                .collect(),
        });
        if let Some((destination, stops)) = points.split_last() {
            view.arrival_airport = Some(apcd(destination));
            view.arrival = remote_arrival(
                destination,
                time(f, ScalarTag::NEAT),
                time(f, ScalarTag::NAAT),
            );
            view.via = via(stops);
        }
    }
    view
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::flight_state::{
        CarouselItem, ChockItem, CounterItem, DiversionInfo, GateItem, RouteItem,
    };
    use chrono::{Duration, TimeZone};

    fn at(h: u32, m: u32) -> DateTime<FixedOffset> {
        FixedOffset::east_opt(8 * 3600)
            .and_then(|z| z.with_ymd_and_hms(2026, 12, 1, h, m, 0).single())
            .expect("valid time")
    }

    fn now() -> DateTime<Utc> {
        at(10, 0).to_utc()
    }

    fn flight_of(mvin: &str) -> FlightState {
        let mut f = FlightState::new(15, now());
        f.operation_day = NaiveDate::from_ymd_opt(2026, 12, 1);
        let t = |s: &str| Some(FlightValue::Text(s.into()));
        f.set_scalar(ScalarTag::ALCD, t("YG"));
        f.set_scalar(ScalarTag::FLNO, t("YG9028"));
        f.set_scalar(ScalarTag::MVIN, t(mvin));
        f.set_scalar(ScalarTag::ACFT, t("733"));
        f.set_scalar(ScalarTag::SODT, Some(FlightValue::Time(at(11, 0))));
        f
    }

    fn route(ordinal: i32, apcd: &str, scat: Time, scdt: Time) -> RouteItem {
        RouteItem {
            ordinal,
            source_seq: Some(i64::from(ordinal)),
            apcd: Some(apcd.into()),
            scat,
            scdt,
            sadc: None,
            sddc: None,
        }
    }

    fn gate(gotm: Time, gctm: Time) -> GateItem {
        GateItem {
            ordinal: 1,
            source_seq: None,
            gate: Some("B12".into()),
            pgot: None,
            pgct: None,
            gotm,
            gctm,
            gtyp: None,
        }
    }

    fn belt(fbag: Time, lbag: Time) -> CarouselItem {
        CarouselItem {
            ordinal: 1,
            source_seq: None,
            belt: Some("7".into()),
            bcls: None,
            pcot: None,
            pcct: None,
            fbag,
            lbag,
            btyp: None,
        }
    }

    #[test]
    fn flight_numbers_split_off_the_airline_and_pad_the_track_number() {
        let n = |flno: &str, alcd: Option<&str>| {
            let f = split_flight_number(flno, alcd);
            (f.airline_code, f.track_number, f.suffix)
        };
        assert_eq!(n("YG9028", Some("YG")), ("YG".into(), "9028".into(), None));
        assert_eq!(n("CA12", Some("CA")), ("CA".into(), "012".into(), None));
        assert_eq!(
            n("CA101A", Some("CA")),
            ("CA".into(), "101".into(), Some("A".into()))
        );
        assert_eq!(n("3U8888", None), ("3U".into(), "8888".into(), None));
        assert_eq!(n("CSC8701", None), ("CSC".into(), "8701".into(), None));
        assert_eq!(
            n("CSC0701", Some("CSC")),
            ("CSC".into(), "701".into(), None)
        );
        assert_eq!(n("MU5", Some("CA")), ("MU".into(), "005".into(), None));
        assert_eq!(n("X", None), ("X".into(), "000".into(), None));
    }

    /// The rules of docs/events.md "ACRIS status mapping", each on a state
    /// built for it; earlier rules win over later ones.
    #[test]
    fn the_status_follows_the_rules_in_order() {
        let later = Some(at(12, 0));
        let earlier = Some(at(9, 0));
        let dep = flight_of("D");
        assert_eq!(status(&dep, now()), FlightStatus::Scheduled);
        let mut f = dep.clone();
        f.gtdt = vec![gate(later, None)];
        assert_eq!(
            status(&f, now()),
            FlightStatus::Scheduled,
            "gate opens later"
        );
        f.gtdt = vec![gate(earlier, None)];
        assert_eq!(status(&f, now()), FlightStatus::GateOpened);
        f.set_scalar(ScalarTag::BOTM, earlier.map(FlightValue::Time));
        assert_eq!(status(&f, now()), FlightStatus::Boarding);
        f.gtdt = vec![gate(earlier, earlier)];
        assert_eq!(status(&f, now()), FlightStatus::GateClosed);
        f.set_scalar(ScalarTag::ACTT, earlier.map(FlightValue::Time));
        assert_eq!(status(&f, now()), FlightStatus::Departed);
        f.fdiv = Some(DiversionInfo {
            ddes: "PEK".into(),
            ddir: "TO".into(),
            reason: None,
        });
        assert_eq!(status(&f, now()), FlightStatus::Diverted);
        f.set_scalar(ScalarTag::CNCL, earlier.map(FlightValue::Time));
        assert_eq!(status(&f, now()), FlightStatus::Canceled);
        let mut off = dep.clone();
        off.chot = vec![ChockItem {
            ordinal: 1,
            source_seq: None,
            chtm: earlier,
            chid: Some("OFF".into()),
            chst: None,
        }];
        assert_eq!(status(&off, now()), FlightStatus::Departed);

        let arr = flight_of("A");
        assert_eq!(status(&arr, now()), FlightStatus::Scheduled);
        let mut f = arr.clone();
        f.set_scalar(ScalarTag::PADT, earlier.map(FlightValue::Time));
        assert_eq!(status(&f, now()), FlightStatus::InApproach);
        f.set_scalar(ScalarTag::ACTT, earlier.map(FlightValue::Time));
        assert_eq!(status(&f, now()), FlightStatus::Landed);
        f.cldt = vec![belt(later, None)];
        assert_eq!(status(&f, now()), FlightStatus::Landed, "first bag later");
        f.cldt = vec![belt(earlier, None)];
        assert_eq!(status(&f, now()), FlightStatus::BagClaimStarted);
        f.cldt = vec![belt(earlier, earlier)];
        assert_eq!(status(&f, now()), FlightStatus::FlightFinished);
        f.set_scalar(ScalarTag::CNCL, earlier.map(FlightValue::Time));
        assert_eq!(status(&f, now()), FlightStatus::Canceled);
        let mut on = arr.clone();
        on.chot = vec![ChockItem {
            ordinal: 1,
            source_seq: None,
            chtm: earlier,
            chid: Some("ON".into()),
            chst: None,
        }];
        assert_eq!(status(&on, now()), FlightStatus::Landed);
    }

    #[test]
    fn a_departure_is_home_to_the_last_route_point_via_the_others() {
        let mut f = flight_of("D");
        f.erut = vec![
            route(1, "CTU", None, Some(at(11, 0))),
            route(2, "XIY", Some(at(12, 10)), Some(at(13, 0))),
            route(3, "PEK", Some(at(15, 0)), None),
        ];
        f.set_scalar(ScalarTag::RENO, Some(FlightValue::Text("B2574".into())));
        f.set_scalar(ScalarTag::TRML, Some(FlightValue::Text("T2".into())));
        f.set_scalar(ScalarTag::NEAT, Some(FlightValue::Time(at(15, 5))));
        f.set_scalar(ScalarTag::BOTM, Some(FlightValue::Time(at(10, 20))));
        f.gtdt = vec![gate(None, None)];
        f.ckdt = ["12", "9", "10"]
            .iter()
            .enumerate()
            .map(|(i, c)| CounterItem {
                ordinal: i32::try_from(i).unwrap_or(0) + 1,
                source_seq: None,
                chkc: Some((*c).into()),
                ccls: None,
                pcot: Some(at(8, 0) + Duration::minutes(i64::try_from(i).unwrap_or(0))),
                pcct: Some(at(10, 15)),
                cotm: None,
                cctm: None,
                ctyp: None,
            })
            .collect();
        let v = flight(&f, "ctu", &[], now());
        assert_eq!(v.departure_airport.as_deref(), Some("CTU"));
        assert_eq!(v.arrival_airport.as_deref(), Some("PEK"));
        assert_eq!(v.operating_airline.iata_code.as_deref(), Some("YG"));
        let d = v.departure.as_ref().expect("departure");
        assert_eq!(d.times.scheduled, at(11, 0));
        assert_eq!(d.times.gate.as_deref(), Some("B12"));
        assert_eq!(d.times.terminal.as_deref(), Some("T2"));
        let c = d.checkin_info.as_ref().expect("check-in");
        assert_eq!(c.checkin_location.as_deref(), Some("9-12"));
        assert_eq!(c.check_in_begin_time, Some(at(8, 0)));
        assert_eq!(d.boarding_time, vec![BoardingTime { time: at(10, 20) }]);
        let a = v.arrival.as_ref().expect("arrival at PEK");
        assert_eq!(
            (a.times.scheduled, a.times.estimated),
            (at(15, 0), Some(at(15, 5)))
        );
        assert_eq!(v.via.len(), 1);
        assert_eq!(v.via[0].via_airport, "XIY");
        assert_eq!(v.origin_date, "2026-12-01T00:00:00Z");
        let json = serde_json::to_value(&v).expect("json");
        assert_eq!(json["aircraftType"]["modelName"], "733");
        assert_eq!(json["aircraftType"]["registration"], "B2574");
        assert_eq!(json["departure"]["scheduled"], "2026-12-01T11:00:00+08:00");
        assert_eq!(json["lastUpdate"], "2026-12-01T02:00:00Z");
        assert!(json.get("codeShares").is_none(), "absent, not null: {json}");
    }

    #[test]
    fn a_master_lists_its_shares_and_a_share_its_master_and_siblings() {
        let code = |flno: &str| ShareCode {
            alcd: Some(flno[..2].into()),
            flno: Some(flno.into()),
        };
        let linked = |flid, maid, flno: &str| Linked {
            flid,
            maid,
            code: code(flno),
        };
        let all = [
            linked(15, None, "YG9028"),
            linked(20, Some(15), "CA1234"),
            linked(21, Some(15), "MU7777"),
            linked(30, Some(99), "ZH1111"),
        ];
        let mut master = flight_of("D");
        master.flid = 15;
        let numbers = |f: &FlightState| {
            share_codes(f, &all)
                .into_iter()
                .filter_map(|c| c.flno)
                .collect::<Vec<_>>()
        };
        assert_eq!(numbers(&master), ["CA1234", "MU7777"]);
        let mut share = flight_of("D");
        share.flid = 21;
        share.set_scalar(ScalarTag::MAID, Some(FlightValue::Int(15)));
        assert_eq!(numbers(&share), ["YG9028", "CA1234"]);
        let mut dangling = flight_of("D");
        dangling.flid = 30;
        dangling.set_scalar(ScalarTag::MAID, Some(FlightValue::Int(99)));
        assert!(numbers(&dangling).is_empty(), "master 99 is not there");
    }

    #[test]
    fn an_arrival_comes_from_the_first_route_point_and_shows_its_belt() {
        let mut f = flight_of("A");
        f.rout = vec![route(1, "XIY", None, Some(at(9, 0)))];
        f.cldt = vec![belt(Some(at(11, 20)), None)];
        f.set_scalar(ScalarTag::ALCD, Some(FlightValue::Text("CSC".into())));
        f.set_scalar(ScalarTag::FLNO, Some(FlightValue::Text("CSC8701".into())));
        let shares = [ShareCode {
            alcd: Some("CA".into()),
            flno: Some("CA4321".into()),
        }];
        let v = flight(&f, "CTU", &shares, now());
        assert_eq!(v.operating_airline.icao_code.as_deref(), Some("CSC"));
        assert_eq!(v.departure_airport.as_deref(), Some("XIY"));
        assert_eq!(v.arrival_airport.as_deref(), Some("CTU"));
        assert_eq!(
            v.departure.as_ref().map(|d| d.times.scheduled),
            Some(at(9, 0)),
            "SCDT of the origin"
        );
        let claim = v.arrival.and_then(|a| a.baggage_claim).expect("belt");
        assert_eq!(claim.carousel.as_deref(), Some("7"));
        assert_eq!(v.code_shares[0].airline_code, "CA");
        assert_eq!(v.code_shares[0].track_number, "4321");
    }
}
