//! MAFL: the master flight's derived list of shares (design §11.3, §11.4,
//! `G-MAFL`, INV-21, INV-22).
//!
//! * The children of master M are the ACTIVE flights with `MAID = M`, sorted
//!   by FLID (independent of arrival order and of FLNO changes).
//! * Only a flight without a master carries MAFL (possibly empty); a share
//!   never does. `MAID = FLID` (self-reference) counts as "no master" and the
//!   flight never lists itself.
//! * A MAID that points to a missing or DELETED flight (dangling) produces no
//!   projection and does not block the share's own processing.
//! * MAFL is not stored; the engine derives it from the loaded flights when
//!   it builds a projection, and bumps the master whenever it changes.

use serde::Serialize;

use crate::codec::ScalarTag;
use crate::domain::flight_state::{FlightSet, FlightState};

/// One MAFL element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaflEntry {
    pub flid: i64,
    pub flno: Option<String>,
}

/// The MAFL of `master` among `flights`; `None` when `master` does not carry
/// MAFL (it is a share, or DELETED).
pub fn derive<'a>(
    master: &FlightState,
    flights: impl IntoIterator<Item = &'a FlightState>,
) -> Option<Vec<MaflEntry>> {
    if !master.is_active() || master.master_id().is_some() {
        return None;
    }
    let mut out: Vec<MaflEntry> = flights
        .into_iter()
        .filter(|f| f.is_active() && f.flid != master.flid)
        .filter(|f| f.master_id() == Some(master.flid))
        .map(|f| MaflEntry {
            flid: f.flid,
            flno: f.text(ScalarTag::FLNO).map(str::to_string),
        })
        .collect();
    out.sort_by_key(|e| e.flid);
    out.dedup_by_key(|e| e.flid);
    Some(out)
}

/// The MAFL of the flight `flid` in `set` (`None` when it is not loaded or
/// does not carry MAFL).
pub fn of(flid: i64, set: &FlightSet) -> Option<Vec<MaflEntry>> {
    set.get(flid).and_then(|m| derive(m, set.with_master(flid)))
}

/// The masters whose child set may change when `old` becomes `new`: the
/// master before (if the flight was ACTIVE) and after (if it is ACTIVE).
pub fn masters_touched(old: Option<&FlightState>, new: &FlightState) -> Vec<i64> {
    let mut out = Vec::new();
    if let Some(m) = old
        .filter(|o| o.is_active())
        .and_then(FlightState::master_id)
    {
        out.push(m);
    }
    if let Some(m) = Some(new)
        .filter(|n| n.is_active())
        .and_then(FlightState::master_id)
        .filter(|m| !out.contains(m))
    {
        out.push(m);
    }
    out
}

/// Cascade of a master's deletion (design §12.3): every ACTIVE share of
/// `master` loses its association (MAID, CSOP, CSFT cleared). Returns the
/// shares' next states, by FLID, only those that change.
pub fn detach_shares(master: i64, set: &FlightSet) -> Vec<FlightState> {
    set.with_master(master)
        .filter(|f| f.is_active() && f.flid != master && f.master_id() == Some(master))
        .map(|f| {
            let mut next = f.clone();
            for tag in [ScalarTag::MAID, ScalarTag::CSOP, ScalarTag::CSFT] {
                next.set_scalar(tag, None);
            }
            next
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::flight_state::{FlightStatus, FlightValue};
    use chrono::{TimeZone, Utc};

    fn flight(flid: i64, maid: Option<i64>, active: bool) -> FlightState {
        let now = Utc.timestamp_opt(0, 0).single().expect("epoch");
        let mut f = FlightState::new(flid, now);
        f.set_scalar(ScalarTag::FLNO, Some(FlightValue::Text(format!("F{flid}"))));
        f.set_scalar(ScalarTag::MAID, maid.map(FlightValue::Int));
        if !active {
            f.state = FlightStatus::Deleted;
        }
        f
    }

    #[test]
    fn derive_sorts_by_flid_whatever_the_input_order() {
        let master = flight(1, None, true);
        let children = [
            flight(9, Some(1), true),
            flight(3, Some(1), true),
            flight(5, Some(1), false),
            flight(7, Some(2), true),
            flight(4, Some(1), true),
        ];
        let got = derive(&master, children.iter()).expect("master");
        assert_eq!(
            got.iter().map(|e| e.flid).collect::<Vec<_>>(),
            vec![3, 4, 9]
        );
        assert_eq!(got[0].flno.as_deref(), Some("F3"));
    }

    #[test]
    fn shares_and_deleted_masters_carry_no_mafl() {
        let child = flight(3, Some(1), true);
        assert_eq!(derive(&flight(1, Some(8), true), [&child]), None);
        assert_eq!(derive(&flight(1, None, false), [&child]), None);
        let selfref = flight(1, Some(1), true);
        assert_eq!(
            derive(&selfref, [&selfref, &child]).map(|m| m.len()),
            Some(1)
        );
    }
}
