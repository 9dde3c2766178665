//! `FlightStateEngine`: the pure flight-domain decision (design §12, first
//! paragraph; US-03, INV-17). Given the current complete states a message
//! touches and the decoded message, it returns the next complete states and
//! the events to store. No I/O, no clock, no globals.
//!
//! # Loading protocol (for the transactional processor)
//!
//! Inside the `PIPELINE_LOCK` transaction the processor fills one [`FlightSet`]
//! with two indexed queries, then calls [`FlightStateEngine::decide`]:
//!
//! 1. `ids = engine.flids_to_load(&msg)`; load every flight (ACTIVE **and**
//!    DELETED) with `FLID = ANY(ids)` (primary key).
//! 2. `m = engine.masters_to_load(&msg, &set)`; load every flight with
//!    `FLID = ANY(m)` not yet loaded, **and** every ACTIVE flight with
//!    `MAID = ANY(m)` (the `MAID` index, §11.4), into the same set.
//!    For named FLIDs not found, record the last version the history store
//!    holds ([`FlightSet::set_retired_version`]): a re-created flight
//!    continues its version line.
//! 3. `engine.decide(&ctx, &msg, &set)`.
//!
//! `decide` never panics on an incomplete set: a flight that is not loaded is
//! unknown, and a master that is not loaded gets no projection. A set that
//! lacks some ACTIVE children of a loaded master, however, yields a wrong
//! MAFL, so step 2 must load them all.

use std::collections::BTreeSet;

use chrono::{DateTime, SubsecRound, Utc};

use crate::codec::{DecodedMessage, MsgKind, SchdStyp};
use crate::domain::config::DomainConfig;
use crate::domain::error::DomainError;
use crate::domain::events::{DomainEvent, Provenance, WriteFacts, events_for};
use crate::domain::flight_state::{FlightSet, FlightState, FlightStatus};
use crate::domain::rules::convert::Conv;
use crate::domain::rules::fdel::{self, FdelOutcome};
use crate::domain::rules::{adft, flop, schd};
use crate::domain::{mafl, milestones};

/// Per-message inputs the caller provides (the engine never reads a clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApplyContext {
    /// Mailbox ID (`CMINMSGS_ID` = `PROC_STATE.MSG_ID`) of the message.
    pub msg_id: i64,
    /// Transaction time, stored (truncated to microseconds) as audit time.
    pub now: DateTime<Utc>,
}

/// Why a message was a successful no-op (no write, no event).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoChangeReason {
    /// Every carried value equals the stored one (no version bump).
    #[error("no field changed")]
    Unchanged,
    /// FDEL of a flight that is already DELETED (§12.3).
    #[error("FLID {flid} is already deleted")]
    AlreadyDeleted { flid: i64 },
    /// FDEL of a flight that does not exist (§12.3).
    #[error("FLID {flid} does not exist")]
    UnknownFlight { flid: i64 },
    /// SCHD DEL whose every FLID is unknown or already DELETED (§12.3).
    #[error("every listed FLID is unknown or already deleted")]
    NothingToDelete,
}

/// Why a FLOP matched no flight (the pipeline records SKIPPED with the reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoMatchReason {
    #[error("no-match: FLID {flid} is unknown")]
    UnknownFlight { flid: i64 },
    #[error("no-match: FLID {flid} is deleted")]
    DeletedFlight { flid: i64 },
}

/// The engine's answer for one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Write these complete next states (only flights whose content changed,
    /// each with STATE_VERSION bumped by one) and store these events, in order.
    Applied {
        writes: Vec<FlightState>,
        events: Vec<DomainEvent>,
    },
    /// Idempotent success: nothing to write, no event.
    NoChange { reason: NoChangeReason },
    /// FLOP for an unknown or DELETED flight: SKIPPED.
    NoMatch { reason: NoMatchReason },
    /// PROTOCOL error: DEAD, nothing written.
    Rejected { reason: DomainError },
}

/// The flight state engine.
#[derive(Debug, Clone)]
pub struct FlightStateEngine {
    config: DomainConfig,
}

/// A pending write: the next content and its changed fields.
struct Pending {
    next: FlightState,
    changed: Vec<String>,
}

impl FlightStateEngine {
    /// An engine for `config`.
    pub fn new(config: DomainConfig) -> Self {
        Self { config }
    }

    /// The configuration in use.
    pub fn config(&self) -> &DomainConfig {
        &self.config
    }

    /// Loading step 1: the FLIDs the message names (sorted, unique).
    pub fn flids_to_load(&self, msg: &DecodedMessage) -> Vec<i64> {
        let ids: BTreeSet<i64> = match &msg.kind {
            MsgKind::Schd(s) => s.flights.iter().filter_map(schd::fltr_flid).collect(),
            MsgKind::Flop(f) => [f.flid].into(),
            MsgKind::Fdel(f) => [f.flid].into(),
            MsgKind::RefData(_) | MsgKind::Schs(_) | MsgKind::Unsupported(_) => BTreeSet::new(),
        };
        ids.into_iter().collect()
    }

    /// Loading step 2: the possible masters whose MAFL the message may change
    /// (sorted, unique): the named FLIDs themselves, the stored MAID of each
    /// loaded named flight, and every MAID a FLTR carries. The caller loads
    /// these flights and all ACTIVE flights whose MAID is in this list.
    pub fn masters_to_load(&self, msg: &DecodedMessage, loaded: &FlightSet) -> Vec<i64> {
        self.masters_to_load_by(msg, &|f| loaded.get(f)?.master_id())
    }

    /// [`masters_to_load`](Self::masters_to_load) with the stored master of
    /// a named flight given by `stored_master` (the light links of a large
    /// schedule, `domain::slices`).
    pub fn masters_to_load_by(
        &self,
        msg: &DecodedMessage,
        stored_master: &dyn Fn(i64) -> Option<i64>,
    ) -> Vec<i64> {
        let named = self.flids_to_load(msg);
        let mut ids: BTreeSet<i64> = named.iter().copied().collect();
        ids.extend(named.iter().filter_map(|f| stored_master(*f)));
        if let MsgKind::Schd(s) = &msg.kind {
            ids.extend(s.flights.iter().filter_map(schd::fltr_maid));
        }
        ids.into_iter().collect()
    }

    /// Whole-package validation of a SCHD DNLD/RESP decided in slices
    /// (`domain::slices`): RECS and every FLTR's identity and operation day,
    /// in package order, as [`decide`](Self::decide) checks them first.
    /// `stored_day` is a stored flight's operation day. Other messages pass.
    pub fn check_schedule(
        &self,
        msg: &DecodedMessage,
        stored_day: &dyn Fn(i64) -> Option<chrono::NaiveDate>,
    ) -> Result<(), DomainError> {
        match &msg.kind {
            MsgKind::Schd(s) if matches!(s.styp, SchdStyp::Dnld | SchdStyp::Resp) => {
                schd::validate_package(s, stored_day, Conv { cfg: &self.config })
            }
            _ => Ok(()),
        }
    }

    /// Why a validated SCHD DNLD/RESP is rejected, as [`decide`](Self::decide)
    /// on the whole package would say it: the first FLTR, in package order,
    /// whose content does not convert. `None` when every FLTR converts.
    pub fn schedule_rejection(
        &self,
        msg: &DecodedMessage,
        now: DateTime<Utc>,
    ) -> Option<DomainError> {
        match &msg.kind {
            MsgKind::Schd(s) => {
                schd::first_overlay_error(s, Conv { cfg: &self.config }, now.trunc_subsecs(6))
            }
            _ => None,
        }
    }

    /// Decides one message against the loaded flights (see the module docs
    /// for what `current` must hold).
    pub fn decide(
        &self,
        ctx: &ApplyContext,
        msg: &DecodedMessage,
        current: &FlightSet,
    ) -> Decision {
        let cx = Conv { cfg: &self.config };
        let now = ctx.now.trunc_subsecs(6);
        let (kind, staged) = match &msg.kind {
            MsgKind::Schd(s) => {
                let staged = match &s.styp {
                    SchdStyp::Dnld | SchdStyp::Resp => schd::snapshot(s, current, cx, now),
                    SchdStyp::Adft => adft::additional(s, current, cx, now),
                    SchdStyp::Del => match schd::delete(s, current, cx) {
                        Ok(deleted) if deleted.is_empty() => {
                            return Decision::NoChange {
                                reason: NoChangeReason::NothingToDelete,
                            };
                        }
                        other => other,
                    },
                    SchdStyp::Other(o) => Err(DomainError::NotFlightMessage {
                        what: format!("SCHD-{o} (only DNLD, RESP, ADFT, DEL)"),
                    }),
                };
                (format!("SCHD-{}", msg.meta.styp), staged)
            }
            MsgKind::Flop(f) => {
                let base = match current.get(f.flid) {
                    None => {
                        return Decision::NoMatch {
                            reason: NoMatchReason::UnknownFlight { flid: f.flid },
                        };
                    }
                    Some(st) if !st.is_active() => {
                        return Decision::NoMatch {
                            reason: NoMatchReason::DeletedFlight { flid: f.flid },
                        };
                    }
                    Some(st) => st,
                };
                let mut next = base.clone();
                let staged = flop::apply(&mut next, cx, &f.payload).map(|()| vec![next]);
                (format!("FLOP-{}", flop::subtype(&f.payload)), staged)
            }
            MsgKind::Fdel(d) => {
                let staged = match fdel::delete(d, current) {
                    Ok(FdelOutcome::Delete(next)) => Ok(vec![*next]),
                    Ok(FdelOutcome::Unknown) => {
                        return Decision::NoChange {
                            reason: NoChangeReason::UnknownFlight { flid: d.flid },
                        };
                    }
                    Ok(FdelOutcome::AlreadyDeleted) => {
                        return Decision::NoChange {
                            reason: NoChangeReason::AlreadyDeleted { flid: d.flid },
                        };
                    }
                    Err(e) => Err(e),
                };
                ("FLOP-FDEL".to_string(), staged)
            }
            MsgKind::RefData(r) => (
                String::new(),
                Err(DomainError::NotFlightMessage {
                    what: format!("reference data {}", r.rtype),
                }),
            ),
            MsgKind::Schs(_) => (
                String::new(),
                Err(DomainError::NotFlightMessage {
                    what: "seasonal schedule SCHS (domain::season)".into(),
                }),
            ),
            MsgKind::Unsupported(u) => (
                String::new(),
                Err(DomainError::NotFlightMessage {
                    what: format!("{}-{}", u.msg_type, u.styp),
                }),
            ),
        };
        match staged {
            Err(reason) => Decision::Rejected { reason },
            Ok(staged) => {
                let nonempty = |s: &str| Some(s.to_string()).filter(|s| !s.is_empty());
                let provenance = Provenance {
                    msg_id: ctx.msg_id,
                    sndr: nonempty(&msg.meta.sndr),
                    msg_kind: kind,
                    dttm: msg.meta.dttm.map(|t| self.config.local_time(t)),
                    seqn: nonempty(&msg.meta.seqn),
                };
                finish(&provenance, now, current, staged)
            }
        }
    }

    /// The lifecycle delete of a finished flight (flight-history-clean,
    /// §12.5): exactly what an FDEL of `flid` decides — DELETED, the
    /// tombstone, the master/share cascade (§12.3) — with its notifications
    /// saying [`LIFECYCLE_CLEAN`] (no message caused them; `ctx.msg_id` is
    /// 0). `current` holds the flight with its children and its master, as
    /// for an FDEL. A flight not loaded or already DELETED is `NoChange`.
    pub fn lifecycle_delete(&self, ctx: &ApplyContext, flid: i64, current: &FlightSet) -> Decision {
        match current.get(flid) {
            None => Decision::NoChange {
                reason: NoChangeReason::UnknownFlight { flid },
            },
            Some(f) if !f.is_active() => Decision::NoChange {
                reason: NoChangeReason::AlreadyDeleted { flid },
            },
            Some(f) => finish(
                &Provenance {
                    msg_id: ctx.msg_id,
                    ..Provenance::internal(LIFECYCLE_CLEAN)
                },
                ctx.now.trunc_subsecs(6),
                current,
                vec![fdel::deleted(f)],
            ),
        }
    }
}

/// The `msg_kind` of the notifications of a lifecycle delete
/// ([`FlightStateEngine::lifecycle_delete`]).
pub const LIFECYCLE_CLEAN: &str = "LIFECYCLE-CLEAN";

/// Turns staged next states into the decision: keeps changed flights, runs
/// the master/share cascade and MAFL propagation (§11.4, §12.3), bumps
/// versions (INV-13) and builds the events, each notification with the
/// field-level changes against the loaded state, its kind and `provenance`.
fn finish(
    provenance: &Provenance,
    now: DateTime<Utc>,
    current: &FlightSet,
    staged: Vec<FlightState>,
) -> Decision {
    let msg_id = provenance.msg_id;
    // 1. Named flights that changed (a new flight is always a write).
    let mut writes: Vec<Pending> = Vec::new();
    for next in staged {
        let changed = match current.get(next.flid) {
            Some(old) => old.changed_fields(&next),
            None => FlightState::new(next.flid, now).changed_fields(&next),
        };
        if current.contains(next.flid) && changed.is_empty() {
            continue;
        }
        writes.push(Pending { next, changed });
    }
    // The links before and after, not a second copy of every flight, and an
    // index of the writes by FLID: a 20,000-flight schedule stays linear.
    let before = mafl::Links::of_set(current);
    let mut after = before.clone();
    writes.iter().for_each(|w| after.set(&w.next));
    let mut index: std::collections::HashMap<i64, usize> = writes
        .iter()
        .enumerate()
        .map(|(i, w)| (w.next.flid, i))
        .collect();

    // 2. A deleted master's ACTIVE shares are deleted with it, in the same
    // decision (§12.3: no state where the master is gone and its children
    // remain). Each is a delete of its own (FDEL semantics).
    let deleted_masters: Vec<i64> = writes
        .iter()
        .filter(|w| w.next.state == FlightStatus::Deleted && w.next.master_id().is_none())
        .filter(|w| current.get(w.next.flid).is_some_and(FlightState::is_active))
        .map(|w| w.next.flid)
        .collect();
    for m in deleted_masters {
        for flid in after.active_shares(m) {
            let state = match index.get(&flid) {
                Some(&i) => &writes[i].next,
                None => match current.get(flid) {
                    Some(f) => f,
                    None => continue,
                },
            };
            let share = fdel::deleted(state);
            let old = current.get(share.flid);
            let changed = old.map(|o| o.changed_fields(&share)).unwrap_or_default();
            after.set(&share);
            match index.get(&flid) {
                Some(&i) => {
                    writes[i].changed = changed;
                    writes[i].next = share;
                }
                None => {
                    index.insert(flid, writes.len());
                    writes.push(Pending {
                        next: share,
                        changed,
                    });
                }
            }
        }
    }

    // 3. MAFL propagation: every master whose share list changed is written.
    let mut candidates: BTreeSet<i64> = BTreeSet::new();
    for w in &writes {
        candidates.insert(w.next.flid);
        candidates.extend(mafl::masters_touched(current.get(w.next.flid), &w.next));
    }
    for m in candidates {
        // An absent MAFL (share) and an empty one list the same children.
        if before.mafl(m).unwrap_or_default() == after.mafl(m).unwrap_or_default() {
            continue;
        }
        match index.get(&m) {
            // A deleted flight carries no MAFL: its DELETE lists only STATE
            // (docs/events.md).
            Some(&i) if !writes[i].next.is_active() => {}
            Some(&i) => writes[i].changed.push("MAFL".to_string()),
            None => {
                // Not written by this message: its state is the loaded one.
                if let Some(master) = current.get(m).filter(|f| f.is_active()) {
                    index.insert(m, writes.len());
                    writes.push(Pending {
                        next: master.clone(),
                        changed: vec!["MAFL".to_string()],
                    });
                }
            }
        }
    }
    if writes.is_empty() {
        return Decision::NoChange {
            reason: NoChangeReason::Unchanged,
        };
    }

    // 4. Versions, audit columns and which message set each milestone (a
    // re-created FLID continues its retired version line).
    for w in &mut writes {
        let old = current.get(w.next.flid);
        w.next.state_version = current.last_version(w.next.flid).saturating_add(1);
        w.next.last_msg_id = msg_id;
        w.next.updated_at = now;
        milestones::stamp(old, &mut w.next, msg_id);
        if old.is_none() {
            w.next.created_at = now;
        }
    }

    // 5. Events (INV-13): one notification and one projection/tombstone each.
    let mut events = Vec::with_capacity(writes.len() * 2);
    for w in &writes {
        let flid = w.next.flid;
        let m = after.mafl(flid);
        let facts = WriteFacts::of_write(
            current.get(flid),
            &w.next,
            before.mafl(flid).as_deref(),
            m.as_deref(),
            w.changed.clone(),
            provenance.clone(),
        );
        events.extend(events_for(&w.next, m, facts));
    }
    Decision::Applied {
        writes: writes.into_iter().map(|w| w.next).collect(),
        events,
    }
}
