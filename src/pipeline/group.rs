//! Group commit (design §5.3, §5.4): a prefix of the queue
//! in ONE transaction, each message with exactly the outcome processOne
//! would record for it.
//!
//! A member is a PENDING head message that is a FLOP/FDEL, matches an ignore
//! rule, or is DEAD(MALFORMED) (raw text missing, too large or not
//! well-formed). The
//! prefix ends before anything else (SCHD, reference data, unsupported, a
//! CODEC_ERROR, a read error, a FAILED row): those go one per transaction.
//!
//! The transaction does per group what the single path does per message,
//! in a handful of statements: PIPELINE_LOCK + fence + every member's row
//! (one statement); who holds the members' identities (one); the flights
//! the members name, with their ACTIVE children (one, plus one per master
//! outside that set); then, in MSG_ID order and in memory, the ladder of
//! processOne ([`super::ladder`]: identity → duplicate → ignore rule) and
//! [`FlightStateEngine::decide`]; at the end the
//! changed flights (two statements), the outbox rows in the order one by one
//! would allocate them (one) and every terminal state with its backfill
//! intent and identity binding (one); COMMIT.
//!
//! The flights come through the flight store's read-through cache
//! ([`FlightStore::load_cached`]): the group reads the
//! versions of the flights it needs and loads only those not cached at that
//! version (module docs of [`crate::store::pg::flight::cache`]); after
//! COMMIT what it read and wrote is cached.
//!
//! Equivalence with one message per transaction: each member decides on
//! exactly the set the single path would load. Flights a member changed stay
//! in memory until a later member needs one of them; then the changes are
//! written and those flights read back first, so every member sees what
//! PostgreSQL returns (it normalises some values, e.g. NUMERIC text), never
//! an unwritten in-memory copy. Any error rolls the group back; the pump
//! then processes those messages one per transaction, so a failure is
//! recorded on the message that caused it and the messages behind it wait.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::identity::scoped_identity;
use super::ladder::{self, Route, Step, Verdict};
use super::process_one::{MessageProcessor, ProcessOutcome, decode_off_thread, log_dead};
use crate::codec::{DecodedMessage, ScalarTag};
use crate::domain::{
    ApplyContext, Decision, DomainEvent, FlightSet, FlightState, FlightStateEngine, FlightStatus,
};
use crate::domain::{ErrorClass, ProcState};
use crate::jobs::JobError;
use crate::store::pg::flight::CacheUpdate;
use crate::store::pg::flight::{FlightStore, RowStamp, StoredVersion};
use crate::store::pg::msg_event;
use crate::store::pg::proc_state::{self, GroupOutcome, Head, IdentityBinding};
use crate::telemetry::message_span;

/// What [`MessageProcessor::process_group`] did.
#[derive(Debug)]
pub enum GroupResult {
    /// Committed: one outcome per message, in order.
    Done(Vec<ProcessOutcome>),
    /// Fewer than two messages qualified: process the head alone.
    NotFormed,
    /// An error rolled the group back: process one by one up to `last`.
    RolledBack { last: i64 },
}

/// A group member after reading and decoding.
enum Member {
    /// Raw text missing or MALFORMED: DEAD(MALFORMED) with this reason
    /// (§5.2 steps 1–2).
    Malformed(String),
    /// A FLOP/FDEL, or a message an ignore rule matches.
    Decoded(Box<DecodedMessage>),
}

impl MessageProcessor<'_> {
    /// Processes the longest qualifying prefix of `heads` (the head first)
    /// as one transaction. See the module docs.
    pub async fn process_group(&self, heads: &[Head]) -> Result<GroupResult, JobError> {
        let ignore = &self.config.ignore;
        let mut members: Vec<(&Head, Member)> = Vec::with_capacity(heads.len());
        for h in heads {
            if h.state != ProcState::Pending {
                break;
            }
            // The ladder's steps 1–2: DEAD(MALFORMED) joins the group, a
            // FAILED outcome (read error, CODEC_ERROR) ends it.
            let decoded = match ladder::read(self.raw(h.msg_id, h.w).await) {
                Ok(raw) => ladder::decoded(decode_off_thread(raw).await?),
                Err(verdict) => Err(verdict),
            };
            let member = match decoded {
                Err(Verdict::Dead(ErrorClass::Malformed, reason)) => Member::Malformed(reason),
                Err(_) => break,
                Ok(msg) if ladder::groupable(ignore, &msg) => Member::Decoded(Box::new(msg)),
                Ok(msg) => {
                    // Not groupable: the group ends here. The first head
                    // goes to processOne next; keep its decode for it.
                    if members.is_empty() {
                        *self.decoded.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some((h.msg_id, msg));
                    }
                    break;
                }
            };
            members.push((h, member));
        }
        let (Some(last), true) = (members.last().map(|(h, _)| h.msg_id), members.len() >= 2) else {
            return Ok(GroupResult::NotFormed);
        };
        // One message span per member: its trace_id on the
        // member's log lines, and, when exporting, a span in each member's
        // trace covering the group's transaction.
        let spans: HashMap<i64, tracing::Span> = members
            .iter()
            .map(|(h, _)| (h.msg_id, message_span(h.msg_id, h.trace.as_ref())))
            .collect();
        let mut tx = self.ctx.pg.begin().await?;
        let done = match self.group_body(&mut tx, &members).await {
            Ok(Some(body)) => tx.commit().await.map(|()| body).map_err(JobError::from),
            Ok(None) => return Ok(GroupResult::RolledBack { last }),
            Err(e) => Err(e),
        };
        let records = match done {
            Ok((records, update)) => {
                self.store.remember(update);
                records
            }
            Err(JobError::LockLost) => return Err(JobError::LockLost),
            Err(e) => {
                tracing::debug!(first = heads[0].msg_id, last, error = %e, "Group rolled back; processing one by one");
                return Ok(GroupResult::RolledBack { last });
            }
        };
        // Committed: each member's first attempt is recorded (all were
        // PENDING), so its unknown elements are reported now, never for a
        // group that rolled back (its messages are processed again singly).
        for (h, member) in &members {
            if let Member::Decoded(msg) = member {
                self.unknown.report(h.msg_id, msg);
            }
        }
        let outcomes = records
            .into_iter()
            .map(|r| match (r.state, r.class) {
                (ProcState::Succeeded, _) => ProcessOutcome::Succeeded,
                (ProcState::Dead, Some(class)) => {
                    let reason = r.reason.unwrap_or_default();
                    let log = || log_dead(r.msg_id, class, &reason);
                    match spans.get(&r.msg_id) {
                        Some(span) => span.in_scope(log),
                        None => log(),
                    }
                    ProcessOutcome::Dead(class, reason)
                }
                _ => ProcessOutcome::Skipped(r.reason.unwrap_or_default()),
            })
            .collect();
        Ok(GroupResult::Done(outcomes))
    }

    /// The group's statements on its open transaction, and what to cache
    /// once it commits. `None`: a member's row is no longer PENDING (nothing
    /// written; the caller rolls back).
    async fn group_body(
        &self,
        conn: &mut sqlx::PgConnection,
        members: &[(&Head, Member)],
    ) -> Result<Option<(Vec<GroupOutcome>, CacheUpdate)>, JobError> {
        let ids: Vec<i64> = members.iter().map(|(h, _)| h.msg_id).collect();
        let rows = super::pipeline_lock::open_group(self.ctx, &mut *conn, &ids).await?;
        if rows.len() != ids.len() || rows.iter().any(|(_, state)| *state != ProcState::Pending) {
            return Ok(None);
        }
        let now = self.ctx.clock.now();
        let c = self.config;

        // §5.2 step 3 for every member at once: a row without an identity
        // binds its own unless another message holds it.
        let identities: Vec<Option<String>> = members
            .iter()
            .map(|(h, member)| match member {
                Member::Decoded(msg) if h.identity_key.is_none() => Some(scoped_identity(
                    &msg.meta,
                    c.include_day_boundary,
                    h.compat_principal.as_deref(),
                )),
                _ => None,
            })
            .collect();
        let keys: Vec<&str> = identities.iter().flatten().map(String::as_str).collect();
        let mut holders: HashMap<String, i64> = proc_state::identity_holders(&mut *conn, &keys)
            .await?
            .into_iter()
            .collect();

        let mut working = Working::new();
        let named: BTreeSet<i64> = members
            .iter()
            .filter_map(|(_, member)| match member {
                Member::Decoded(msg) => Some(self.engine.flids_to_load(msg)),
                Member::Malformed(_) => None,
            })
            .flatten()
            .collect();
        let named: Vec<i64> = named.into_iter().collect();
        working.ensure(&self.store, &mut *conn, &named).await?;

        let mut records = Vec::with_capacity(members.len());
        let mut events: Vec<(Option<i64>, Vec<DomainEvent>)> = Vec::new();
        for ((h, member), identity) in members.iter().zip(identities) {
            let id = h.msg_id;
            let record = |state, class, reason: String, bind| GroupOutcome {
                msg_id: id,
                state,
                class,
                reason: Some(reason),
                bind,
            };
            let msg = match member {
                Member::Malformed(reason) => {
                    records.push(record(
                        ProcState::Dead,
                        Some(ErrorClass::Malformed),
                        reason.clone(),
                        None,
                    ));
                    continue;
                }
                Member::Decoded(msg) => msg,
            };
            // Step 3 on the holders read above (an earlier member's binding
            // counts), then the ladder decides as processOne would.
            let mut bind = None;
            let mut binding = IdentityBinding::Ours;
            if let Some(key) = identity {
                match holders.get(&key) {
                    Some(other) => binding = IdentityBinding::DuplicateOf(*other),
                    None => {
                        holders.insert(key.clone(), id);
                        bind = Some((key, msg.meta.msg_type.clone(), msg.meta.styp.clone()));
                    }
                }
            }
            match ladder::decide(&binding, &c.ignore, msg) {
                Step::Dispatch(Route::Flop | Route::Fdel) => {}
                Step::Ends(Verdict::Skipped(reason)) => {
                    records.push(record(ProcState::Skipped, None, reason, bind));
                    continue;
                }
                Step::Ends(Verdict::Dead(class, reason)) => {
                    records.push(record(ProcState::Dead, Some(class), reason, bind));
                    continue;
                }
                // Not a group member's outcome (groupable admits none of
                // these): roll back, the messages go one by one.
                other => {
                    return Err(JobError::Other(format!(
                        "message {id} is not for group commit: {other:?}"
                    )));
                }
            }
            let set = working
                .set_for(&self.store, &mut *conn, &self.engine, msg)
                .await?;
            match self
                .engine
                .decide(&ApplyContext { msg_id: id, now }, msg, &set)
            {
                Decision::Applied {
                    writes,
                    events: mine,
                } => {
                    for next in writes {
                        working.stage(next);
                    }
                    events.push((Some(id), mine));
                    records.push(GroupOutcome {
                        reason: None,
                        ..record(ProcState::Succeeded, None, String::new(), bind)
                    });
                }
                Decision::NoChange { reason } => {
                    records.push(record(
                        ProcState::Succeeded,
                        None,
                        format!("no-change: {reason}"),
                        bind,
                    ));
                }
                Decision::NoMatch { reason } => {
                    records.push(record(ProcState::Skipped, None, reason.to_string(), bind));
                }
                Decision::Rejected { reason } => {
                    records.push(record(
                        ProcState::Dead,
                        Some(ErrorClass::Protocol),
                        reason.to_string(),
                        bind,
                    ));
                }
            }
        }
        working.write(&self.store, &mut *conn).await?;
        let batch: Vec<(Option<i64>, &[DomainEvent])> =
            events.iter().map(|(id, e)| (*id, e.as_slice())).collect();
        msg_event::append_many(&mut *conn, &batch, now).await?;
        let finished = proc_state::finish_group(&mut *conn, &records, now).await?;
        if finished != records.len() as u64 {
            return Err(JobError::Other(format!(
                "group {}..={}: {finished} of {} rows finished",
                ids[0],
                ids[ids.len() - 1],
                records.len()
            )));
        }
        Ok(Some((records, working.into_cache_update())))
    }
}

/// Counts a flight the group took from the cache or had to load
/// (docs/metrics.md).
fn count_cache(result: &'static str, n: usize) {
    if n > 0 {
        metrics::counter!("msgx_pipeline_flight_cache_total", "result" => result)
            .increment(n as u64);
    }
}

/// The flights a group has read, as the database would now return them
/// after the group's writes so far.
struct Working {
    flights: HashMap<i64, FlightState>,
    /// FLIDs whose own row (if any) and every ACTIVE child are in `flights`.
    loaded: HashSet<i64>,
    /// Changed in memory, not yet written: FLID → the stored state before
    /// (`None` = no row).
    dirty: BTreeMap<i64, Option<FlightState>>,
    /// Loaded from committed rows, with their versions (for the cache).
    read: Vec<(StoredVersion, FlightState)>,
    /// FLID → what its last write returned of the row.
    written: HashMap<i64, RowStamp>,
}

impl Working {
    fn new() -> Self {
        Self {
            flights: HashMap::new(),
            loaded: HashSet::new(),
            dirty: BTreeMap::new(),
            read: Vec::new(),
            written: HashMap::new(),
        }
    }

    /// What to cache once the group has committed: what it read, and the
    /// final state of every flight it wrote.
    fn into_cache_update(mut self) -> CacheUpdate {
        let written = self
            .written
            .into_iter()
            .filter_map(|(flid, row)| {
                let s = self.flights.remove(&flid)?;
                Some((StoredVersion::of(&s, row), s))
            })
            .collect();
        CacheUpdate {
            read: self.read,
            written,
        }
    }

    /// Reads the flights among `flids` not yet known, with their ACTIVE
    /// children: their versions (one statement), then the content of those
    /// not cached at that version (one more, if any); flights already known
    /// are kept (newer).
    async fn ensure(
        &mut self,
        store: &FlightStore,
        conn: &mut sqlx::PgConnection,
        flids: &[i64],
    ) -> Result<(), sqlx::Error> {
        let missing: Vec<i64> = flids
            .iter()
            .copied()
            .filter(|f| !self.loaded.contains(f))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let flights = &self.flights;
        let found = store
            .load_cached(&mut *conn, &missing, |f| flights.contains_key(&f))
            .await?;
        let (hits, misses) = (found.hits.len(), found.read.len());
        for f in found.hits {
            self.flights.insert(f.flid, f);
        }
        for (v, f) in found.read {
            self.read.push((v, f.clone()));
            self.flights.entry(f.flid).or_insert(f);
        }
        count_cache("hit", hits);
        count_cache("miss", misses);
        self.loaded.extend(missing);
        Ok(())
    }

    /// Adds to `set` what `FlightStore::load_with_children(flids)` would
    /// return now, leaving flights already in `set` as they are.
    fn add_to(&self, set: &mut FlightSet, flids: &[i64]) {
        for f in flids {
            if let Some(s) = self.flights.get(f)
                && !set.contains(*f)
            {
                set.insert(s.clone());
            }
        }
        for s in self.flights.values() {
            if s.state == FlightStatus::Active
                && s.int(ScalarTag::MAID).is_some_and(|m| flids.contains(&m))
                && !set.contains(s.flid)
            {
                set.insert(s.clone());
            }
        }
    }

    /// The engine's two-query loading protocol (flight_txn::apply_in) on the
    /// group's view. If the set holds a flight changed earlier in the group,
    /// the changes are written and read back first (module docs).
    async fn set_for(
        &mut self,
        store: &FlightStore,
        conn: &mut sqlx::PgConnection,
        engine: &FlightStateEngine,
        msg: &DecodedMessage,
    ) -> Result<FlightSet, sqlx::Error> {
        let mut set = self.build(store, &mut *conn, engine, msg).await?;
        if set.iter().any(|f| self.dirty.contains_key(&f.flid)) {
            let written = self.write(store, &mut *conn).await?;
            for f in store.load(&mut *conn, &written).await? {
                self.flights.insert(f.flid, f);
            }
            set = self.build(store, &mut *conn, engine, msg).await?;
        }
        Ok(set)
    }

    async fn build(
        &mut self,
        store: &FlightStore,
        conn: &mut sqlx::PgConnection,
        engine: &FlightStateEngine,
        msg: &DecodedMessage,
    ) -> Result<FlightSet, sqlx::Error> {
        let named = engine.flids_to_load(msg);
        self.ensure(store, &mut *conn, &named).await?;
        let mut set = FlightSet::new();
        self.add_to(&mut set, &named);
        let extra: Vec<i64> = engine
            .masters_to_load(msg, &set)
            .into_iter()
            .filter(|m| !named.contains(m))
            .collect();
        self.ensure(store, &mut *conn, &extra).await?;
        self.add_to(&mut set, &extra);
        Ok(set)
    }

    /// Takes a decided next state (in memory until written).
    fn stage(&mut self, next: FlightState) {
        let flid = next.flid;
        let before = self.flights.insert(flid, next);
        self.dirty.entry(flid).or_insert(before);
    }

    /// Writes every changed flight (two statements); returns their FLIDs.
    async fn write(
        &mut self,
        store: &FlightStore,
        conn: &mut sqlx::PgConnection,
    ) -> Result<Vec<i64>, sqlx::Error> {
        let dirty = std::mem::take(&mut self.dirty);
        let items: Vec<(Option<&FlightState>, &FlightState)> = dirty
            .iter()
            .filter_map(|(flid, before)| Some((before.as_ref(), self.flights.get(flid)?)))
            .collect();
        self.written
            .extend(store.write_many_versioned(conn, &items).await?);
        Ok(dirty.into_keys().collect())
    }
}
