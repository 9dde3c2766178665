//! SCHD ADFT: additional flights, set-only (design §12.3).
//!
//! Until upstream confirms ADFT's absent-field meaning: a value sets, an
//! **explicit empty element clears** (it is present, so it is an explicit
//! clear, as everywhere else), an absent element never clears; items replace
//! a stored list, a bare element clears it. RECS and FLID are checked as for
//! DNLD/RESP (a FLTR without FLID cannot be applied). SODT is optional: a new
//! (or rebuilt) flight gets its operation day from SODT when it parses, else
//! NULL; an existing operation day is never changed and never compared
//! (INV-12 is only enforced by DNLD/RESP, §11.2).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::codec::Schd;
use crate::domain::error::DomainError;
use crate::domain::flight_state::{FlightSet, FlightState};
use crate::domain::operation_day;

use super::apply::OnAbsent;
use super::convert::Conv;
use super::schd::{base_state, check_recs, fltr_flid, fltr_sodt, overlay_fltr};

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
        let flid = fltr_flid(fltr).ok_or(DomainError::MissingFlid { index: i + 1 })?;
        let (mut st, fresh) = base_state(flid, &staged, current, now);
        overlay_fltr(&mut st, fltr, cx, OnAbsent::Keep)?;
        if fresh && st.operation_day.is_none() {
            st.operation_day =
                fltr_sodt(fltr).and_then(|t| operation_day::derive(t, cx.cfg.day_cutover));
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
