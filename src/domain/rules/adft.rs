//! SCHD ADFT: additional flights, set-only (design §12.3).
//!
//! Until upstream confirms ADFT's absent-field meaning: a value sets, an
//! **explicit empty element clears** (it is present, so it is an explicit
//! clear, as everywhere else), an absent element never clears; items replace
//! a stored list, a bare element clears it. RECS and FLID are checked as for
//! DNLD/RESP (a FLTR without FLID cannot be applied). The mandatory fields
//! ([`MANDATORY`](super::schd::MANDATORY), sis-format §2.1) can never be
//! cleared, and a flight ADFT creates (or rebuilds) must carry them all, so
//! none is published without FLNO. SODT is optional (§12.3): when
//! it parses, a flight whose operation day is NULL gets the derived day, and
//! a flight with a day must derive the same one, else the whole message is
//! rejected (INV-12, INV-19: the next DNLD would otherwise fail on it).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::codec::{Field, ScalarTag, Schd};
use crate::domain::error::DomainError;
use crate::domain::flight_state::{FlightSet, FlightState};
use crate::domain::operation_day;

use super::apply::OnAbsent;
use super::convert::Conv;
use super::schd::{base_state, check_mandatory, check_recs, fltr_flid, fltr_sodt, overlay_fltr};

/// SCHD ADFT: the next states of the carried flights, in message order.
pub fn additional(
    schd: &Schd,
    current: &FlightSet,
    cx: Conv<'_>,
    now: DateTime<Utc>,
) -> Result<Vec<FlightState>, DomainError> {
    check_recs(schd)?;
    let mut staged: BTreeMap<i64, FlightState> = BTreeMap::new();
    let mut order: Vec<i64> = Vec::new();
    for (i, fltr) in schd.flights.iter().enumerate() {
        let index = i + 1;
        let flid = fltr_flid(fltr).ok_or(DomainError::MissingFlid { index })?;
        let (mut st, fresh) = base_state(flid, &staged, current, now);
        check_mandatory(index, flid, fltr, !fresh)?;
        if matches!(fltr.scalar(ScalarTag::SODT), Field::Empty) {
            return Err(DomainError::MissingMandatory {
                index,
                flid,
                field: "SODT",
            });
        }
        let day = fltr_sodt(fltr).and_then(|t| operation_day::derive(t, cx.cfg.day_cutover));
        if let Some(day) = day {
            operation_day::check_unchanged(flid, st.operation_day, day)?;
        }
        overlay_fltr(&mut st, fltr, cx, OnAbsent::Keep)?;
        if st.operation_day.is_none() {
            st.operation_day = day;
        }
        if !order.contains(&flid) {
            order.push(flid);
        }
        staged.insert(flid, st);
    }
    Ok(order
        .into_iter()
        .filter_map(|f| staged.remove(&f))
        .collect())
}
