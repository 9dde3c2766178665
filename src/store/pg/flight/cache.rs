//! The flight store's read-through cache: complete flight states the pump's
//! group commit read or wrote, kept across groups and runs, each with the
//! [`StoredVersion`] of its `flight_schd` row. Owned by the [`FlightStore`]
//! (shared by its clones); read through [`FlightStore::load_cached`],
//! filled by [`FlightStore::remember`] after a commit.
//!
//! Why: a group's flight load (every row and list of up to ~50 flights as
//! JSON, then decoded) was the pump's largest statement, and on a busy feed
//! the same flights come back group after group. A load now asks the
//! versions of the flights it needs (index lookups, no content) and reads
//! the content only of those whose version differs from the cached one.
//!
//! Coherence: a state is used only while the stored row shows the version
//! it was cached at (`xmin`, `content_version`, `updated_at`). Any other
//! writer changes the row, so the next load reads it again: msgx's own
//! (the single-message path, SCHD, flight-history-clean) rewrite it, which
//! changes its `xmin`; an operator's SQL on the row does too, and on a detail
//! row (a gate, a delay) a trigger adds to the row's `content_version`
//! (migration 0013). A row gone is simply not returned. A written state is
//! cached only after its transaction committed ([`FlightStore::remember`]
//! takes a [`CacheUpdate`] after COMMIT), and it equals what a load would
//! return: the codec keeps decimals in NUMERIC's canonical text and times in
//! the airport zone, and the engine truncates its clock to microseconds.
//! tests/it/pipeline.rs: the group-commit equivalence tests run many groups over
//! the same flights (later groups decide on cached states) and compare rows
//! and outbox payloads with one message per transaction;
//! `a_flight_changed_outside_the_pump_is_read_again_not_taken_from_its_cache`,
//! `a_detail_row_changed_outside_the_pump_is_read_again_and_kept`.
//!
//! [`FlightStore`]: super::FlightStore
//! [`FlightStore::load_cached`]: super::FlightStore::load_cached
//! [`FlightStore::remember`]: super::FlightStore::remember

use std::collections::HashMap;

use super::StoredVersion;
use crate::domain::FlightState;

/// Flights kept at most: a few days of a large airport's flights. When a
/// new entry would exceed it the cache starts empty again (the next groups
/// load what they need), so memory stays bounded without bookkeeping.
pub const FLIGHT_CACHE_CAPACITY: usize = 10_000;

/// FLID → (version, state).
#[derive(Debug, Default)]
pub struct FlightCache {
    entries: HashMap<i64, (StoredVersion, FlightState)>,
}

impl FlightCache {
    /// The cached state of `v.flid` if it is at version `v`.
    pub fn get(&self, v: &StoredVersion) -> Option<&FlightState> {
        self.entries
            .get(&v.flid)
            .filter(|(cached, _)| cached == v)
            .map(|(_, s)| s)
    }

    /// Number of flights cached.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Applies a committed group's reads and writes (writes last: they are
    /// newer than anything the group read).
    pub fn apply(&mut self, update: CacheUpdate) {
        for (v, s) in update.read.into_iter().chain(update.written) {
            if !self.entries.contains_key(&v.flid) && self.entries.len() >= FLIGHT_CACHE_CAPACITY {
                self.entries.clear();
            }
            self.entries.insert(v.flid, (v, s));
        }
    }
}

/// What one group transaction adds to the cache once it has committed.
#[derive(Debug, Default)]
pub struct CacheUpdate {
    /// Loaded from the database (committed rows), with their versions.
    pub read: Vec<(StoredVersion, FlightState)>,
    /// Written by the group: the final state of each flight with the version
    /// its last write returned.
    pub written: Vec<(StoredVersion, FlightState)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::pg::flight::RowStamp;
    use chrono::{TimeZone, Utc};

    fn version(flid: i64, xmin: i64) -> StoredVersion {
        StoredVersion {
            flid,
            row: RowStamp {
                xmin,
                content_version: 0,
            },
            updated_at: Utc.with_ymd_and_hms(2026, 12, 3, 10, 0, 0).unwrap(),
        }
    }

    fn state(flid: i64) -> FlightState {
        FlightState::new(flid, Utc.with_ymd_and_hms(2026, 12, 3, 9, 0, 0).unwrap())
    }

    #[test]
    fn a_state_is_used_only_at_the_version_it_was_cached_at() {
        let mut cache = FlightCache::default();
        cache.apply(CacheUpdate {
            read: vec![(version(1, 10), state(1))],
            written: vec![],
        });
        assert!(cache.get(&version(1, 10)).is_some());
        assert!(cache.get(&version(1, 11)).is_none(), "rewritten since");
        let mut later = version(1, 10);
        later.updated_at += chrono::Duration::microseconds(1);
        assert!(cache.get(&later).is_none(), "same xmin, other write");
        let mut detail = version(1, 10);
        detail.row.content_version += 1;
        assert!(cache.get(&detail).is_none(), "same xmin, a detail changed");
        assert!(cache.get(&version(2, 10)).is_none(), "never cached");
    }

    #[test]
    fn a_write_replaces_what_the_same_group_read() {
        let mut cache = FlightCache::default();
        let mut written = state(1);
        written.state_version = 7;
        cache.apply(CacheUpdate {
            read: vec![(version(1, 10), state(1))],
            written: vec![(version(1, 20), written)],
        });
        assert!(cache.get(&version(1, 10)).is_none());
        assert_eq!(cache.get(&version(1, 20)).map(|s| s.state_version), Some(7));
    }

    #[test]
    fn the_cache_starts_again_when_full() {
        let mut cache = FlightCache::default();
        let read = (0..FLIGHT_CACHE_CAPACITY as i64)
            .map(|f| (version(f, 1), state(f)))
            .collect();
        cache.apply(CacheUpdate {
            read,
            written: vec![],
        });
        assert_eq!(cache.len(), FLIGHT_CACHE_CAPACITY);
        cache.apply(CacheUpdate {
            read: vec![(version(1, 2), state(1))],
            written: vec![],
        });
        assert_eq!(cache.len(), FLIGHT_CACHE_CAPACITY, "an update in place");
        cache.apply(CacheUpdate {
            read: vec![(version(-1, 1), state(-1))],
            written: vec![],
        });
        assert_eq!(cache.len(), 1);
        assert!(cache.get(&version(-1, 1)).is_some());
    }
}
