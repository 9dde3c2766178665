//! Large schedules in slices: a SCHD DNLD/RESP of more
//! than `msgx.schd.apply-slice` FLTRs is decided and written one slice at a
//! time inside its one transaction, so only one slice's flight states and
//! events are in memory.
//!
//! A slice must decide exactly what the whole package would: every flight is
//! written at most once per message with one version bump (INV-13), and a
//! master's MAFL (§11.4) is derived from all its ACTIVE shares. So a slice
//! holds whole *components*: FLIDs joined by a link the loading protocol
//! follows (`engine.rs` module docs) — a FLTR's MAID, a named flight's
//! stored MAID, an ACTIVE stored share of any master involved. A repeated
//! FLID is one node, so its FLTRs share a slice too. Components keep
//! package order (by their first FLTR) and are packed into slices of up to
//! `max` FLTRs; a component larger than `max` is one slice.
//!
//! Package validation stays whole: the caller checks RECS and every FLTR's
//! identity and operation day over the whole package first
//! ([`FlightStateEngine::check_schedule`](super::FlightStateEngine::check_schedule)).

use std::collections::HashMap;

use crate::codec::{DecodedMessage, Field, MsgKind, Schd};
use crate::domain::rules::schd::{fltr_flid, fltr_maid};

/// A stored flight's link, as the light query of the loading protocol reads
/// it: its FLID and its stored MAID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredLink {
    pub flid: i64,
    pub maid: Option<i64>,
}

/// Union-find over FLIDs.
#[derive(Default)]
struct Components {
    index: HashMap<i64, usize>,
    parent: Vec<usize>,
}

impl Components {
    fn node(&mut self, flid: i64) -> usize {
        let next = self.parent.len();
        let id = *self.index.entry(flid).or_insert(next);
        if id == next {
            self.parent.push(next);
        }
        id
    }

    fn root(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn join(&mut self, a: i64, b: i64) {
        let (a, b) = (self.node(a), self.node(b));
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent[ra.max(rb)] = ra.min(rb);
        }
    }
}

/// The FLTR indices of `schd`, cut into slices (each ascending, slices in
/// the package order of their first FLTR). `stored` are the links of the
/// flights the loading protocol would load for the whole package. A FLTR
/// without a FLID is its own component (validation rejects such a package
/// before slicing; this only keeps the function total).
pub fn schedule_slices(schd: &Schd, stored: &[StoredLink], max: usize) -> Vec<Vec<usize>> {
    let max = max.max(1);
    let mut c = Components::default();
    for f in &schd.flights {
        if let Some(flid) = fltr_flid(f) {
            c.node(flid);
            if let Some(maid) = fltr_maid(f) {
                c.join(flid, maid);
            }
        }
    }
    for l in stored {
        c.node(l.flid);
        if let Some(maid) = l.maid {
            c.join(l.flid, maid);
        }
    }
    // Components in package order of their first FLTR.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    for (i, f) in schd.flights.iter().enumerate() {
        let Some(flid) = fltr_flid(f) else {
            groups.push(vec![i]);
            continue;
        };
        let node = c.node(flid);
        let root = c.root(node);
        let g = *group_of.entry(root).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    let mut slices: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for g in groups {
        if !current.is_empty() && current.len() + g.len() > max {
            slices.push(std::mem::take(&mut current));
        }
        current.extend(g);
    }
    if !current.is_empty() {
        slices.push(current);
    }
    for s in &mut slices {
        s.sort_unstable();
    }
    slices
}

/// The message a slice is decided as: the package's META and STYP with the
/// slice's FLTRs (copied; RECS = their count, as validation already checked
/// the whole package's RECS). `None` for a message that is not a SCHD.
pub fn slice_message(msg: &DecodedMessage, indices: &[usize]) -> Option<DecodedMessage> {
    let MsgKind::Schd(s) = &msg.kind else {
        return None;
    };
    let flights: Vec<_> = indices
        .iter()
        .filter_map(|&i| s.flights.get(i).cloned())
        .collect();
    Some(DecodedMessage {
        meta: msg.meta.clone(),
        kind: MsgKind::Schd(Schd {
            styp: s.styp.clone(),
            recs: Field::Value(i64::try_from(flights.len()).unwrap_or(i64::MAX)),
            flights,
            unknown: Vec::new(),
        }),
    })
}
