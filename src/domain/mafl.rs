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

/// One MAFL element: a share of this master.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MaflEntry {
    /// The share's FLID.
    pub flid: i64,
    /// The share's FLNO (null when it has none).
    pub flno: Option<String>,
}

/// The MAFL of `master` among `flights`; `None` when `master` does not carry
/// MAFL (it is a share, or DELETED).
pub fn derive<'a>(
    master: &FlightState,
    flights: impl IntoIterator<Item = &'a FlightState>,
) -> Option<Vec<MaflEntry>> {
    let mut links = Links::default();
    for f in flights {
        links.set(f);
    }
    links.set(master);
    links.mafl(master.flid)
}

/// The MAFL of the flight `flid` in `set` (`None` when it is not loaded or
/// does not carry MAFL).
pub fn of(flid: i64, set: &FlightSet) -> Option<Vec<MaflEntry>> {
    Links::of_set(set).mafl(flid)
}

/// What MAFL needs of one flight.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Link {
    active: bool,
    master: Option<i64>,
    flno: Option<String>,
}

/// The master/share links of a set of flights, without their content, with
/// the shares indexed by master: the engine derives MAFL before and after a
/// decision from these instead of a second full copy of every flight, and
/// without scanning the set per flight (a 20,000-flight schedule).
/// [`Links::mafl`] is the one implementation of the MAFL rule
/// above (a property test checks it against a plain scan).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    flights: std::collections::BTreeMap<i64, Link>,
    by_master: std::collections::BTreeMap<i64, std::collections::BTreeSet<i64>>,
}

impl Links {
    /// The links of every flight in `set`.
    pub fn of_set(set: &FlightSet) -> Self {
        let mut links = Links::default();
        for f in set.iter() {
            links.set(f);
        }
        links
    }

    /// Records `flight`'s links (replacing what was recorded for its FLID).
    pub fn set(&mut self, flight: &FlightState) {
        let link = Link {
            active: flight.is_active(),
            master: flight.master_id(),
            flno: flight.text(ScalarTag::FLNO).map(str::to_string),
        };
        if let Some(old) = self.flights.insert(flight.flid, link.clone())
            && let Some(m) = old.master
            && let Some(shares) = self.by_master.get_mut(&m)
        {
            shares.remove(&flight.flid);
            if shares.is_empty() {
                self.by_master.remove(&m);
            }
        }
        if let Some(m) = link.master {
            self.by_master.entry(m).or_default().insert(flight.flid);
        }
    }

    /// The ACTIVE shares of `master` (FLIDs, ascending).
    pub fn active_shares(&self, master: i64) -> Vec<i64> {
        self.by_master
            .get(&master)
            .into_iter()
            .flatten()
            .copied()
            .filter(|f| *f != master && self.flights.get(f).is_some_and(|l| l.active))
            .collect()
    }

    /// The MAFL of `flid` (`None` when it is not recorded or does not carry
    /// MAFL).
    pub fn mafl(&self, flid: i64) -> Option<Vec<MaflEntry>> {
        let master = self.flights.get(&flid)?;
        if !master.active || master.master.is_some() {
            return None;
        }
        Some(
            self.active_shares(flid)
                .into_iter()
                .map(|f| MaflEntry {
                    flid: f,
                    flno: self.flights.get(&f).and_then(|l| l.flno.clone()),
                })
                .collect(),
        )
    }
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

    proptest::proptest! {
        /// The links give the MAFL a plain scan of the set gives (the rule
        /// in the module docs), after any sequence of inserts and
        /// replacements.
        #[test]
        fn links_and_the_index_agree_with_the_scan(
            ops in proptest::collection::vec((0i64..12, proptest::option::of(0i64..12), proptest::bool::ANY), 0..60)
        ) {
            let mut set = FlightSet::new();
            let mut links = Links::default();
            for (flid, maid, active) in ops {
                let f = flight(flid, maid, active);
                links.set(&f);
                set.insert(f);
                for m in 0..12 {
                    let scan: Option<Vec<MaflEntry>> = set
                        .get(m)
                        .filter(|x| x.is_active() && x.master_id().is_none())
                        .map(|_| {
                            set.iter()
                                .filter(|f| f.is_active() && f.flid != m && f.master_id() == Some(m))
                                .map(|f| MaflEntry {
                                    flid: f.flid,
                                    flno: f.text(ScalarTag::FLNO).map(str::to_string),
                                })
                                .collect()
                        });
                    proptest::prop_assert_eq!(&links.mafl(m), &scan, "master {}", m);
                    proptest::prop_assert_eq!(of(m, &set), scan);
                }
            }
        }
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
