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
    set.get(flid).and_then(|m| derive(m, set.iter()))
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
    {
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// Cascade of a master's deletion (design §12.3): every ACTIVE share of
/// `master` loses its association (MAID, CSOP, CSFT cleared). Returns the
/// shares' next states, by FLID, only those that change.
pub fn detach_shares(master: i64, set: &FlightSet) -> Vec<FlightState> {
    set.iter()
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
