//! SCHD DNLD/RESP: the daily schedule (design §7.1, §12.1; INV-12, INV-15, INV-19).
//!
//! 1. The whole package is validated first; any failure rejects it whole
//!    (PROTOCOL) and nothing is written: RECS ≠ number of FLTR, a FLTR
//!    without FLID or parsable SODT, or without a value for another
//!    mandatory field ([`MANDATORY`], sis-format §2.1), an operation day that
//!    cannot be derived, a FLID whose stored (or earlier-in-package)
//!    operation day differs.
//! 2. Each carried flight is overlaid on its current state (created when
//!    missing, rebuilt from empty when DELETED — design §12.3). Flights the
//!    package lacks are never touched (INV-15).
//! 3. Absent fields follow `msgx.schd.absent-field-policy`; an empty element
//!    always clears; items replace a stored list, a bare element clears it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

use crate::codec::{Field, Fltr, ScalarTag, ScalarValue, Schd};
use crate::domain::config::AbsentFieldPolicy;
use crate::domain::error::DomainError;
use crate::domain::flight_state::{FlightSet, FlightState, FlightStatus};
use crate::domain::operation_day;

use super::apply::{OnAbsent, apply, apply_replace, apply_scalar, convert_collection};
use super::convert::Conv;
use super::fdel;

/// The FLTR fields every SCHD flight carries besides FLID and SODT (the
/// predecessor's mandatory set, sis-format §2.1): without them a flight
/// would be published with `flno: null`. A SCHD can never clear
/// them: an empty element is a missing value.
pub const MANDATORY: &[ScalarTag] = &[
    ScalarTag::ALCD,
    ScalarTag::FLNO,
    ScalarTag::MVIN,
    ScalarTag::FLTY,
    ScalarTag::FLIN,
    ScalarTag::ACFT,
];

/// Checks the [`MANDATORY`] fields of FLTR #`index`: each must carry a value,
/// except that `absent_ok` lets an absent one through (ADFT on a flight that
/// already has it: set-only keeps the stored value). An empty element is
/// always rejected: it would clear the field.
pub fn check_mandatory(
    index: usize,
    flid: i64,
    fltr: &Fltr,
    absent_ok: bool,
) -> Result<(), DomainError> {
    for &tag in MANDATORY {
        match fltr.scalar(tag) {
            Field::Value(_) => {}
            Field::Absent if absent_ok => {}
            _ => {
                return Err(DomainError::MissingMandatory {
                    index,
                    flid,
                    field: tag.name(),
                });
            }
        }
    }
    Ok(())
}

/// The FLID of a FLTR, when it is an integer value.
pub fn fltr_flid(f: &Fltr) -> Option<i64> {
    match f.scalar(ScalarTag::FLID) {
        Field::Value(ScalarValue::Int(v)) => Some(*v),
        _ => None,
    }
}

/// The MAID a FLTR carries, when it is an integer value.
pub fn fltr_maid(f: &Fltr) -> Option<i64> {
    match f.scalar(ScalarTag::MAID) {
        Field::Value(ScalarValue::Int(v)) => Some(*v),
        _ => None,
    }
}

/// SODT as a naive local time, when it parsed.
pub fn fltr_sodt(f: &Fltr) -> Option<NaiveDateTime> {
    match f.scalar(ScalarTag::SODT) {
        Field::Value(ScalarValue::Time(t)) => Some(*t),
        _ => None,
    }
}

/// RECS must equal the number of FLTR (§7.1).
pub fn check_recs(schd: &Schd) -> Result<(), DomainError> {
    let count = schd.flights.len();
    match schd.recs {
        Field::Value(n) if usize::try_from(n).is_ok_and(|n| n == count) => Ok(()),
        Field::Value(n) => Err(DomainError::RecsMismatch {
            recs: Some(n),
            count,
        }),
        _ => Err(DomainError::RecsMismatch { recs: None, count }),
    }
}

/// Overlays one FLTR on `st`: every scalar except FLID, FDIV/FRET/FLAB, and
/// every repeating group. `on_absent` decides absent elements.
pub fn overlay_fltr(
    st: &mut FlightState,
    fltr: &Fltr,
    cx: Conv<'_>,
    on_absent: OnAbsent,
) -> Result<(), DomainError> {
    for &tag in ScalarTag::ALL {
        if tag == ScalarTag::FLID {
            continue;
        }
        let field = match fltr.scalar(tag) {
            Field::Value(v) => Field::Value(cx.scalar(tag, v)?),
            Field::Empty => Field::Empty,
            Field::Absent => Field::Absent,
        };
        apply_scalar(st, tag, field, on_absent);
    }
    let fdiv = match &fltr.fdiv {
        Field::Value(d) => cx.diversion(d)?.map_or(Field::Empty, Field::Value),
        Field::Empty => Field::Empty,
        Field::Absent => Field::Absent,
    };
    apply(&mut st.fdiv, fdiv, on_absent);
    let fret = match &fltr.fret {
        Field::Value(r) => Field::Value(cx.ret(r)?),
        Field::Empty => Field::Empty,
        Field::Absent => Field::Absent,
    };
    apply(&mut st.fret, fret, on_absent);
    let flab = match &fltr.flab {
        Field::Value(a) => Field::Value(cx.abort(a)?),
        Field::Empty => Field::Empty,
        Field::Absent => Field::Absent,
    };
    apply(&mut st.flab, flab, on_absent);

    apply_replace(
        &mut st.rout,
        convert_collection(&fltr.rout, |x| cx.route(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.erut,
        convert_collection(&fltr.erut, |x| cx.route(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.psdt,
        convert_collection(&fltr.psdt, |x| cx.stand(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.gtdt,
        convert_collection(&fltr.gtdt, |x| cx.gate(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.ckdt,
        convert_collection(&fltr.ckdt, |x| cx.counter(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.cldt,
        convert_collection(&fltr.cldt, |x| cx.carousel(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.chdt,
        convert_collection(&fltr.chdt, |x| cx.chute(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.chot,
        convert_collection(&fltr.chot, |x| cx.chock(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.abtm,
        convert_collection(&fltr.abtm, |x| cx.airbridge(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.dely,
        convert_collection(&fltr.dely, |x| cx.delay(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.srvt,
        convert_collection(&fltr.srvt, |x| cx.service(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.vipf,
        convert_collection(&fltr.vipf, |x| cx.vip(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.port,
        convert_collection(&fltr.port, |x| cx.door(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.tipt,
        convert_collection(&fltr.tipt, |x| cx.tractor(x))?,
        on_absent,
    );
    apply_replace(
        &mut st.psht,
        convert_collection(&fltr.psht, |x| cx.push(x))?,
        on_absent,
    );
    Ok(())
}

/// The state a schedule overlays for `flid`: an earlier FLTR of the same
/// package, else the stored ACTIVE flight, else a DELETED flight rebuilt from
/// empty (ACTIVE again, same operation day and version line), else a new one.
/// The flag is true when the flight is new or rebuilt.
pub fn base_state(
    flid: i64,
    staged: &BTreeMap<i64, FlightState>,
    current: &FlightSet,
    now: DateTime<Utc>,
) -> (FlightState, bool) {
    if let Some(st) = staged.get(&flid) {
        return (st.clone(), false);
    }
    match current.get(flid) {
        Some(st) if st.is_active() => (st.clone(), false),
        Some(st) => {
            let mut fresh = st.emptied();
            fresh.state = FlightStatus::Active;
            (fresh, true)
        }
        None => (FlightState::new(flid, now), true),
    }
}

/// Validated identity of one FLTR of a DNLD/RESP package.
struct Checked {
    flid: i64,
    day: NaiveDate,
}

/// Step 1 for the whole package: RECS, then each FLTR's FLID, SODT and
/// operation day against `stored_day` (the stored flight's operation day)
/// and the package's earlier FLTRs, in package order.
pub fn validate_package(
    schd: &Schd,
    stored_day: &dyn Fn(i64) -> Option<NaiveDate>,
    cx: Conv<'_>,
) -> Result<(), DomainError> {
    validate(schd, stored_day, cx).map(|_| ())
}

/// The first FLTR, in package order, whose content does not convert (what
/// [`snapshot`] rejects after validation). Conversion does not depend on
/// the stored state, so an empty one stands in for it.
pub fn first_overlay_error(schd: &Schd, cx: Conv<'_>, now: DateTime<Utc>) -> Option<DomainError> {
    schd.flights.iter().find_map(|f| {
        let mut scratch = FlightState::new(fltr_flid(f).unwrap_or_default(), now);
        overlay_fltr(&mut scratch, f, cx, OnAbsent::Keep).err()
    })
}

fn validate(
    schd: &Schd,
    stored_day: &dyn Fn(i64) -> Option<NaiveDate>,
    cx: Conv<'_>,
) -> Result<Vec<Checked>, DomainError> {
    check_recs(schd)?;
    let mut days: BTreeMap<i64, NaiveDate> = BTreeMap::new();
    let mut out = Vec::with_capacity(schd.flights.len());
    for (i, fltr) in schd.flights.iter().enumerate() {
        let index = i + 1;
        let flid = fltr_flid(fltr).ok_or(DomainError::MissingFlid { index })?;
        let sodt = fltr_sodt(fltr).ok_or(DomainError::MissingSodt { index, flid })?;
        check_mandatory(index, flid, fltr, false)?;
        let day = operation_day::derive(sodt, cx.cfg.day_cutover).ok_or_else(|| {
            DomainError::OperationDayUnderivable {
                flid,
                sodt: sodt.to_string(),
            }
        })?;
        let stored = days.get(&flid).copied().or_else(|| stored_day(flid));
        operation_day::check_unchanged(flid, stored, day)?;
        days.insert(flid, day);
        out.push(Checked { flid, day });
    }
    Ok(out)
}

/// SCHD DNLD/RESP: the next states of the carried flights, in package order
/// (one per FLID; a repeated FLID overlays its earlier FLTR), or the reason
/// the whole package is rejected.
pub fn snapshot(
    schd: &Schd,
    current: &FlightSet,
    cx: Conv<'_>,
    now: DateTime<Utc>,
) -> Result<Vec<FlightState>, DomainError> {
    let checked = validate(
        schd,
        &|flid| current.get(flid).and_then(|f| f.operation_day),
        cx,
    )?;
    let on_absent = match cx.cfg.absent_field_policy {
        AbsentFieldPolicy::Preserve => OnAbsent::Keep,
        AbsentFieldPolicy::Clear => OnAbsent::Clear,
    };
    let mut staged: BTreeMap<i64, FlightState> = BTreeMap::new();
    let mut order: Vec<i64> = Vec::new();
    for (fltr, c) in schd.flights.iter().zip(checked) {
        let (mut st, _) = base_state(c.flid, &staged, current, now);
        overlay_fltr(&mut st, fltr, cx, on_absent)?;
        st.operation_day = Some(c.day);
        if staged.insert(c.flid, st).is_none() {
            order.push(c.flid);
        }
    }
    Ok(order
        .into_iter()
        .filter_map(|f| staged.remove(&f))
        .collect())
}

/// SCHD DEL (sis-format §2.1): every listed flight is deleted with exactly
/// FDEL's semantics (§12.3, [`fdel::deleted`]); the engine adds the
/// master/share cascade. The package is validated as a DNLD's is (RECS,
/// FLID, parsable SODT, the [`MANDATORY`] fields and their codes) and is
/// rejected whole on any failure. Unknown and already DELETED FLIDs are
/// skipped (idempotent); a FLID listed twice is deleted once.
pub fn delete(
    schd: &Schd,
    current: &FlightSet,
    cx: Conv<'_>,
) -> Result<Vec<FlightState>, DomainError> {
    check_recs(schd)?;
    let mut flids = Vec::with_capacity(schd.flights.len());
    for (i, fltr) in schd.flights.iter().enumerate() {
        let index = i + 1;
        let flid = fltr_flid(fltr).ok_or(DomainError::MissingFlid { index })?;
        fltr_sodt(fltr).ok_or(DomainError::MissingSodt { index, flid })?;
        check_mandatory(index, flid, fltr, false)?;
        for &tag in MANDATORY {
            if let Field::Value(v) = fltr.scalar(tag) {
                cx.scalar(tag, v)?;
            }
        }
        flids.push(flid);
    }
    let mut seen = BTreeSet::new();
    Ok(flids
        .into_iter()
        .filter(|f| seen.insert(*f))
        .filter_map(|f| current.get(f).filter(|st| st.is_active()))
        .map(fdel::deleted)
        .collect())
}
