//! The chaos drain's checks (docs/RESILIENCE.md): when a run is drained, what
//! a snapshot of its outcome holds, and how the snapshots of two runs of the
//! same input compare. Pure: the store reads the facts and the rows, `msgx
//! dev` reads the topics and writes and reads the snapshots as JSON.
//!
//! Two runs of one backlog, one undisturbed and one whose daemon was killed
//! and restarted, must end alike: the same PROC_STATE outcomes, the same
//! flight tables, the same last `schd` record per FLID and the same set of
//! `msg` events. Delivery is at-least-once (§8.1): a re-send of a (FLID,
//! STATE_VERSION) is a duplicate and allowed, but it must carry the same
//! content, and per FLID the versions on the topic never go back, except,
//! after a PostgreSQL rollback ([`Rules::resends_after_rollback`]), to a
//! version already read with the same content.
//!
//! The soak's and the independent broker's end checks are [`verify`]'s; the
//! failover run with a purging mailbox owner is [`purge`]'s.

pub mod purge;
pub mod verify;

use crate::domain::delivery::EventStatus;
use crate::domain::proc_state::{ErrorClass, ProcState};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Keys whose values come from the clock: they differ between two runs of
/// the same input, so a snapshot leaves them out at any depth.
pub const CLOCK_KEYS: [&str; 3] = ["created_at", "updated_at", "archived_at"];

/// The flight table whose rows are history versions (keyed by FLID and
/// STATE_VERSION, its serial `id` left out).
pub const FLIGHT_HISTORY: &str = "flight_history";

/// The flight table with one row per flight.
pub const FLIGHT_SCHD: &str = "flight_schd";

/// Differences listed per kind; the count covers every one.
const SHOWN: usize = 5;

/// What PostgreSQL says about a run's progress.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateCounts {
    /// The watermark W (0 before the first round).
    pub w: i64,
    /// PROC_STATE rows that are not ARCHIVED shadows.
    pub live_rows: i64,
    /// Rows still PENDING or FAILED.
    pub unfinished: i64,
    /// Outbox events still PENDING.
    pub pending_events: i64,
    /// Terminal rows whose backfill mark is neither confirmed nor abandoned.
    pub marks_due: i64,
}

/// What "drained" is decided from: the mailbox and PostgreSQL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DrainFacts {
    /// Rows of the mailbox's inbound table.
    pub mailbox_rows: i64,
    /// Its highest ID (0 when it is empty).
    pub mailbox_last_id: i64,
    pub state: StateCounts,
}

impl DrainFacts {
    /// What is still to do, one phrase each; empty when the run is drained:
    /// W at the mailbox's last ID, one live PROC_STATE row per mailbox row,
    /// nothing PENDING or FAILED, no outbox event PENDING (each SENT or
    /// DEAD), and every terminal row's mark confirmed or abandoned.
    pub fn problems(&self) -> Vec<String> {
        let s = &self.state;
        let mut out = Vec::new();
        if s.w < self.mailbox_last_id {
            out.push(format!(
                "W {} < last mailbox ID {}",
                s.w, self.mailbox_last_id
            ));
        }
        if s.live_rows != self.mailbox_rows {
            out.push(format!(
                "{} PROC_STATE rows for {} mailbox rows",
                s.live_rows, self.mailbox_rows
            ));
        }
        if s.unfinished > 0 {
            out.push(format!("{} messages PENDING/FAILED", s.unfinished));
        }
        if s.pending_events > 0 {
            out.push(format!("{} outbox events PENDING", s.pending_events));
        }
        if s.marks_due > 0 {
            out.push(format!("{} backfill marks outstanding", s.marks_due));
        }
        out
    }
}

/// A message's final outcome. Attempt counts and times are left out: a kill
/// between an attempt and its outcome rightly counts one attempt more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub msg_id: i64,
    pub state: ProcState,
    pub identity_key: Option<String>,
    pub msg_type: Option<String>,
    pub msg_styp: Option<String>,
    pub error_class: Option<ErrorClass>,
    pub outcome_reason: Option<String>,
    /// The backfill mark is confirmed.
    pub marked: bool,
    pub backfill_abandoned_reason: Option<String>,
}

/// Outbox events of one target in one status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboxCount {
    pub target: String,
    pub status: EventStatus,
    pub n: i64,
}

/// One record read back from the `msg` topic, its value without clock keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MsgRecord {
    /// The FLID.
    pub key: Option<String>,
    pub partition: i32,
    pub offset: i64,
    /// The `state-version` header (-1 when absent).
    pub state_version: i64,
    /// The `event-id` header (-1 when absent).
    pub event_id: i64,
    /// `None` for a null value.
    pub value: Option<Value>,
}

/// Where a record sits in its topic and which headers it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordPlace {
    pub partition: i32,
    pub offset: i64,
    pub state_version: Option<i64>,
    pub event_id: Option<i64>,
}

impl MsgRecord {
    /// The record as a snapshot keeps it; an absent header is -1.
    pub fn new(
        key: Option<String>,
        place: RecordPlace,
        value: Option<&str>,
    ) -> Result<MsgRecord, serde_json::Error> {
        Ok(MsgRecord {
            key,
            partition: place.partition,
            offset: place.offset,
            state_version: place.state_version.unwrap_or(-1),
            event_id: place.event_id.unwrap_or(-1),
            value: record_value(value)?,
        })
    }
}

/// A record's value as a snapshot keeps it: parsed, without clock keys;
/// `None` for a null value (a tombstone).
pub fn record_value(value: Option<&str>) -> Result<Option<Value>, serde_json::Error> {
    value
        .map(|v| serde_json::from_str(v).map(strip_clock))
        .transpose()
}

/// The outcome of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Every PROC_STATE row, in MSG_ID order.
    pub proc_state: Vec<Outcome>,
    /// Every flight table's rows ([`flight_rows`]), by table name.
    pub flights: BTreeMap<String, Vec<Value>>,
    /// Outbox events by target and status.
    pub outbox: Vec<OutboxCount>,
    /// Released holes (INBOX_HOLE rows).
    pub holes_released: i64,
    /// Every record of the `msg` topic.
    pub msg_records: Vec<MsgRecord>,
    /// The last `schd` record per key in the order read (`None`: a tombstone).
    pub schd_last: BTreeMap<String, Option<Value>>,
}

impl Snapshot {
    /// The outbox counts of events not SENT (a drained run has none).
    pub fn outbox_not_sent(&self) -> Vec<&OutboxCount> {
        self.outbox
            .iter()
            .filter(|o| o.status != EventStatus::Sent)
            .collect()
    }

    /// One line: what the snapshot holds.
    pub fn describe(&self) -> String {
        format!(
            "{} messages, {} flights, {} msg records, {} schd keys",
            self.proc_state.len(),
            self.flights.get(FLIGHT_SCHD).map_or(0, Vec::len),
            self.msg_records.len(),
            self.schd_last.len()
        )
    }
}

/// `value` without the [`CLOCK_KEYS`], at any depth.
pub fn strip_clock(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| !CLOCK_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k, strip_clock(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_clock).collect()),
        other => other,
    }
}

/// A flight table's rows as a snapshot keeps them: without clock keys (and
/// the history's serial `id`), in one order that depends only on their
/// content, so two runs' rows are equal exactly when they hold the same rows.
pub fn flight_rows(table: &str, rows: Vec<Value>) -> Vec<Value> {
    let mut rows: Vec<(String, Value)> = rows
        .into_iter()
        .map(|row| {
            let mut row = strip_clock(row);
            if table == FLIGHT_HISTORY
                && let Value::Object(map) = &mut row
            {
                map.remove("id");
            }
            (row.to_string(), row)
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows.into_iter().map(|(_, row)| row).collect()
}

/// A (FLID, STATE_VERSION) of the `msg` topic.
pub type EventKey = (Option<String>, i64);

/// Which re-sends the `msg` topic may hold beyond at-least-once delivery's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rules {
    /// A FLID's version may go back, but only to a (FLID, STATE_VERSION)
    /// already read on the topic with the same content: after a PostgreSQL
    /// rollback the new primary re-sends, in order, what the old primary had
    /// delivered (a consumer keeping the highest version per FLID drops
    /// them). A version never read before that arrives after a later one is
    /// still a violation (such a consumer would drop a real update).
    pub resends_after_rollback: bool,
}

impl Rules {
    /// Per FLID the versions never go back.
    pub const STRICT: Rules = Rules {
        resends_after_rollback: false,
    };
    /// [`Rules::resends_after_rollback`].
    pub const AFTER_ROLLBACK: Rules = Rules {
        resends_after_rollback: true,
    };
}

/// The `msg` topic of one run, read in partition and offset order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sequence {
    /// A FLID whose version went back, or a re-send with other content.
    pub violations: Vec<String>,
    /// Re-sends of a (FLID, STATE_VERSION) already read.
    pub duplicates: usize,
    /// Of those, re-sends below the FLID's highest version so far allowed
    /// by [`Rules::resends_after_rollback`].
    pub rollback_resends: usize,
    /// Each distinct event with the content it was first read with.
    pub events: BTreeMap<EventKey, Option<Value>>,
}

/// Per FLID, STATE_VERSION only increases (or, under
/// [`Rules::resends_after_rollback`], goes back only to a version already
/// read); a re-send of the same version is a duplicate (allowed) that must
/// carry the same content.
pub fn msg_sequence(records: &[MsgRecord], rules: Rules) -> Sequence {
    let mut in_order: Vec<&MsgRecord> = records.iter().collect();
    in_order.sort_by_key(|r| (r.partition, r.offset));
    let mut last: BTreeMap<&Option<String>, i64> = BTreeMap::new();
    let mut seq = Sequence::default();
    for r in in_order {
        let (flid, v) = (&r.key, r.state_version);
        let key = (flid.clone(), v);
        let before = last.get(flid).copied();
        if let Some(before) = before
            && v < before
        {
            match seq.events.get(&key) {
                // Other content is the re-send violation below.
                Some(first) if rules.resends_after_rollback => {
                    if *first == r.value {
                        seq.rollback_resends += 1;
                    }
                }
                _ => seq.violations.push(format!(
                    "FLID {}: version {v} after {before} (partition {} offset {})",
                    flid_text(flid),
                    r.partition,
                    r.offset
                )),
            }
        }
        last.insert(flid, before.map_or(v, |b| b.max(v)));
        match seq.events.get(&key) {
            Some(first) => {
                seq.duplicates += 1;
                if *first != r.value {
                    seq.violations.push(format!(
                        "FLID {} version {v} re-sent with different content",
                        flid_text(flid)
                    ));
                }
            }
            None => {
                seq.events.insert(key, r.value.clone());
            }
        }
    }
    seq
}

fn flid_text(flid: &Option<String>) -> &str {
    flid.as_deref().unwrap_or("null")
}

/// What [`compare`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The differences, at most [`SHOWN`] listed per kind.
    pub lines: Vec<String>,
    pub summary: Summary,
}

/// The figures of a comparison (`compare: {…}`, read by scripts/chaos.sh).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// PROC_STATE rows of the chaos run.
    pub messages: usize,
    /// Flights of the chaos run.
    pub flights: usize,
    /// Distinct msg events of the chaos run.
    pub msg_events: usize,
    pub msg_records_clean: usize,
    pub msg_records_chaos: usize,
    pub duplicates_clean: usize,
    pub duplicates_chaos: usize,
    /// Of the chaos run's duplicates, re-sends below a later version
    /// allowed by [`Rules::resends_after_rollback`] (0 without it).
    pub rollback_resends: usize,
    /// Released holes of the chaos run.
    pub holes_released: i64,
    /// The chaos run's PROC_STATE rows by state.
    pub outcomes: BTreeMap<String, usize>,
    /// Every difference found (0: the runs agree).
    pub differences: usize,
}

impl Comparison {
    /// The report: one `DIFF …` line per listed difference, then the
    /// `compare: {…}` line.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            out.push_str("DIFF ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("compare: ");
        out.push_str(&serde_json::to_string(&self.summary).unwrap_or_default());
        out.push('\n');
        out
    }
}

/// Differences counted and the first of each kind listed.
#[derive(Default)]
struct Found {
    total: usize,
    lines: Vec<String>,
}

impl Found {
    /// Every key whose row differs between `clean` and `chaos` (a row
    /// missing on one side included).
    fn rows<K: Ord, V: PartialEq + Serialize>(
        &mut self,
        name: &str,
        clean: &BTreeMap<K, V>,
        chaos: &BTreeMap<K, V>,
        label: impl Fn(&K) -> String,
    ) {
        let keys: BTreeSet<&K> = clean.keys().chain(chaos.keys()).collect();
        let differ: Vec<String> = keys
            .into_iter()
            .filter(|k| clean.get(*k) != chaos.get(*k))
            .map(|k| {
                format!(
                    "{name} {}: clean={} chaos={}",
                    label(k),
                    json(clean.get(k)),
                    json(chaos.get(k))
                )
            })
            .collect();
        self.total += differ.len();
        let more = differ.len().saturating_sub(SHOWN);
        self.lines.extend(differ.into_iter().take(SHOWN));
        if more > 0 {
            self.lines.push(format!("{name}: … {more} more"));
        }
    }

    /// One difference.
    fn one(&mut self, line: String) {
        self.total += 1;
        self.lines.push(line);
    }
}

fn json<T: Serialize>(value: Option<&T>) -> String {
    serde_json::to_string(&value).unwrap_or_default()
}

/// The key of a flight table's row: FLID, and ROUTE_KIND and ORDINAL where
/// the table has them; STATE_VERSION only for the history (elsewhere it is
/// content, so a row at another version is one difference, not two).
fn flight_key(table: &str, row: &Value) -> String {
    let key: Vec<&Value> = ["flid", "route_kind", "ordinal", "state_version"]
        .into_iter()
        .filter(|k| table == FLIGHT_HISTORY || *k != "state_version")
        .filter_map(|k| row.get(k))
        .collect();
    serde_json::to_string(&key).unwrap_or_default()
}

/// A FLID of a flight row as the topics spell it (the record key).
fn flid_of(row: &Value) -> String {
    match row.get("flid") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "null".into(),
    }
}

/// Compares two runs of the same input: `clean` (undisturbed) and `chaos`.
/// Every difference counts: a PROC_STATE outcome, a flight table row, a last
/// `schd` record, a `msg` event missing, extra or with other content, a
/// version that went back or a re-send with other content (in either run),
/// a flight without a `schd` record (the topic lost records) and an outbox
/// not all SENT. `rules` says which versions may go back ([`msg_sequence`]).
pub fn compare(clean: &Snapshot, chaos: &Snapshot, rules: Rules) -> Comparison {
    let mut found = Found::default();
    let by_id = |s: &Snapshot| -> BTreeMap<i64, Outcome> {
        s.proc_state.iter().map(|o| (o.msg_id, o.clone())).collect()
    };
    found.rows(
        "PROC_STATE",
        &by_id(clean),
        &by_id(chaos),
        ToString::to_string,
    );

    let tables: BTreeSet<&String> = clean.flights.keys().chain(chaos.flights.keys()).collect();
    let none = Vec::new();
    for table in tables {
        let (a, b) = (
            clean.flights.get(table).unwrap_or(&none),
            chaos.flights.get(table).unwrap_or(&none),
        );
        if a != b {
            let keyed = |rows: &[Value]| -> BTreeMap<String, Value> {
                rows.iter()
                    .map(|r| (flight_key(table, r), r.clone()))
                    .collect()
            };
            found.rows(table, &keyed(a), &keyed(b), Clone::clone);
        }
    }
    found.rows("schd", &clean.schd_last, &chaos.schd_last, Clone::clone);

    let seq_clean = msg_sequence(&clean.msg_records, rules);
    let seq_chaos = msg_sequence(&chaos.msg_records, rules);
    for (name, seq) in [("clean", &seq_clean), ("chaos", &seq_chaos)] {
        found.total += seq.violations.len();
        found.lines.extend(
            seq.violations
                .iter()
                .take(SHOWN)
                .map(|v| format!("msg ({name}): {v}")),
        );
    }
    // Every event of the clean run is in the chaos run with the same
    // content, and no other.
    found.rows(
        "msg event",
        &seq_clean.events,
        &seq_chaos.events,
        |(flid, v)| format!("({}, {v})", flid_text(flid)),
    );

    for (name, snap) in [("clean", clean), ("chaos", chaos)] {
        // The mock cluster drops a partition's oldest records beyond its
        // size limit instead of compacting: a flight without a schd record
        // means the topic lost records and the comparison is not sound.
        let no_schd: Vec<String> = snap
            .flights
            .get(FLIGHT_SCHD)
            .unwrap_or(&none)
            .iter()
            .map(flid_of)
            .collect::<BTreeSet<String>>()
            .into_iter()
            .filter(|flid| !snap.schd_last.contains_key(flid))
            .collect();
        if !no_schd.is_empty() {
            found.one(format!(
                "schd ({name}): no record for {} flights, e.g. {:?}",
                no_schd.len(),
                &no_schd[..no_schd.len().min(SHOWN)]
            ));
        }
        let not_sent = snap.outbox_not_sent();
        if !not_sent.is_empty() {
            found.one(format!(
                "outbox ({name}) not all SENT: {}",
                serde_json::to_string(&not_sent).unwrap_or_default()
            ));
        }
    }

    let mut outcomes = BTreeMap::new();
    for o in &chaos.proc_state {
        *outcomes.entry(o.state.as_str().to_string()).or_insert(0) += 1;
    }
    let summary = Summary {
        messages: chaos.proc_state.len(),
        flights: chaos.flights.get(FLIGHT_SCHD).map_or(0, Vec::len),
        msg_events: seq_chaos.events.len(),
        msg_records_clean: clean.msg_records.len(),
        msg_records_chaos: chaos.msg_records.len(),
        duplicates_clean: seq_clean.duplicates,
        duplicates_chaos: seq_chaos.duplicates,
        rollback_resends: seq_chaos.rollback_resends,
        holes_released: chaos.holes_released,
        outcomes,
        differences: found.total,
    };
    Comparison {
        lines: found.lines,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(super) fn outcome(msg_id: i64, state: ProcState) -> Outcome {
        Outcome {
            msg_id,
            state,
            identity_key: Some(format!("AODB|FLOP|GTDT|{msg_id}")),
            msg_type: Some("FLOP".into()),
            msg_styp: Some("GTDT".into()),
            error_class: None,
            outcome_reason: None,
            marked: true,
            backfill_abandoned_reason: None,
        }
    }

    pub(super) fn record(flid: &str, partition: i32, offset: i64, version: i64) -> MsgRecord {
        MsgRecord {
            key: Some(flid.into()),
            partition,
            offset,
            state_version: version,
            event_id: offset + 1,
            value: Some(json!({"flid": flid, "state_version": version})),
        }
    }

    /// A drained run: two flights (one deleted), three messages, each
    /// flight's versions 1 and 2 on the topic.
    pub(super) fn snapshot() -> Snapshot {
        let schd = flight_rows(
            FLIGHT_SCHD,
            vec![
                json!({"flid": 101, "state": "ACTIVE", "state_version": 2, "remc": "a",
                       "created_at": "t0", "updated_at": "t1"}),
                json!({"flid": 102, "state": "DELETED", "state_version": 2, "remc": null,
                       "created_at": "t0", "updated_at": "t1"}),
            ],
        );
        let routes = flight_rows(
            "flight_route_point",
            vec![
                json!({"flid": 101, "route_kind": "ROUT", "ordinal": 1, "apcd": "PEK"}),
                json!({"flid": 101, "route_kind": "ERUT", "ordinal": 1, "apcd": "PVG"}),
            ],
        );
        let history = flight_rows(
            FLIGHT_HISTORY,
            vec![
                json!({"id": 7, "flid": 102, "state_version": 2, "state": "DELETED",
                        "snapshot": {"flid": 102, "updated_at": "t2"}, "archived_at": "t3"}),
            ],
        );
        let mut dead = outcome(3, ProcState::Dead);
        dead.error_class = Some(ErrorClass::Malformed);
        Snapshot {
            proc_state: vec![
                outcome(1, ProcState::Succeeded),
                outcome(2, ProcState::Succeeded),
                dead,
            ],
            flights: BTreeMap::from([
                (FLIGHT_SCHD.to_string(), schd),
                ("flight_route_point".to_string(), routes),
                (FLIGHT_HISTORY.to_string(), history),
            ]),
            outbox: vec![
                OutboxCount {
                    target: "KAFKA:msg".into(),
                    status: EventStatus::Sent,
                    n: 4,
                },
                OutboxCount {
                    target: "KAFKA:schd".into(),
                    status: EventStatus::Sent,
                    n: 2,
                },
            ],
            holes_released: 1,
            msg_records: vec![
                record("101", 0, 0, 1),
                record("101", 0, 1, 2),
                record("102", 1, 0, 1),
                record("102", 1, 1, 2),
            ],
            schd_last: BTreeMap::from([
                (
                    "101".to_string(),
                    Some(json!({"flid": 101, "state_version": 2})),
                ),
                ("102".to_string(), None),
            ]),
        }
    }

    fn differences(clean: &Snapshot, chaos: &Snapshot) -> (usize, Vec<String>) {
        let c = compare(clean, chaos, Rules::STRICT);
        (c.summary.differences, c.lines)
    }

    #[test]
    fn drained_needs_every_condition_and_names_what_is_left() {
        let done = DrainFacts {
            mailbox_rows: 10,
            mailbox_last_id: 11,
            state: StateCounts {
                w: 11,
                live_rows: 10,
                ..StateCounts::default()
            },
        };
        assert!(done.problems().is_empty());
        assert!(DrainFacts::default().problems().is_empty(), "nothing to do");
        let open = DrainFacts {
            state: StateCounts {
                w: 7,
                live_rows: 9,
                unfinished: 2,
                pending_events: 3,
                marks_due: 4,
            },
            ..done
        };
        assert_eq!(
            open.problems(),
            [
                "W 7 < last mailbox ID 11",
                "9 PROC_STATE rows for 10 mailbox rows",
                "2 messages PENDING/FAILED",
                "3 outbox events PENDING",
                "4 backfill marks outstanding",
            ]
        );
    }

    #[test]
    fn clock_keys_go_at_any_depth_and_nothing_else() {
        let v = json!({"a": 1, "created_at": "x", "nested": [{"updated_at": "y", "b": null}],
                       "inner": {"archived_at": "z", "c": "created_at"}});
        assert_eq!(
            strip_clock(v),
            json!({"a": 1, "nested": [{"b": null}], "inner": {"c": "created_at"}})
        );
    }

    #[test]
    fn flight_rows_drop_the_history_id_and_sort_by_content() {
        let a = json!({"flid": 2, "id": 1});
        let b = json!({"flid": 1, "id": 2});
        assert_eq!(
            flight_rows(FLIGHT_HISTORY, vec![a.clone(), b.clone()]),
            [json!({"flid": 1}), json!({"flid": 2})]
        );
        assert_eq!(
            flight_rows("flight_gate", vec![a.clone(), b.clone()]),
            flight_rows("flight_gate", vec![b, a]),
            "the order read does not matter"
        );
    }

    #[test]
    fn a_run_equals_itself_and_the_summary_counts_the_chaos_run() {
        let s = snapshot();
        let c = compare(&s, &s, Rules::STRICT);
        assert!(c.lines.is_empty(), "{:?}", c.lines);
        assert_eq!(
            c.summary,
            Summary {
                messages: 3,
                flights: 2,
                msg_events: 4,
                msg_records_clean: 4,
                msg_records_chaos: 4,
                duplicates_clean: 0,
                duplicates_chaos: 0,
                rollback_resends: 0,
                holes_released: 1,
                outcomes: BTreeMap::from([("DEAD".into(), 1), ("SUCCEEDED".into(), 2)]),
                differences: 0,
            }
        );
        let text = c.text();
        assert!(text.starts_with("compare: {\"messages\":3,"), "{text}");
        assert!(text.contains("\"outcomes\":{\"DEAD\":1,\"SUCCEEDED\":2}"));
    }

    #[test]
    fn a_resent_version_is_an_allowed_duplicate() {
        let clean = snapshot();
        let mut chaos = snapshot();
        chaos.msg_records.push(record("101", 0, 2, 2));
        let c = compare(&clean, &chaos, Rules::STRICT);
        assert_eq!(c.summary.differences, 0, "{:?}", c.lines);
        assert_eq!(c.summary.duplicates_chaos, 1);
        assert_eq!(c.summary.msg_records_chaos, 5);
        assert_eq!(c.summary.msg_events, 4);
    }

    #[test]
    fn a_resent_version_with_other_content_is_a_violation() {
        let clean = snapshot();
        let mut chaos = snapshot();
        let mut other = record("101", 0, 2, 2);
        other.value = Some(json!({"flid": "101", "state_version": 2, "remc": "b"}));
        chaos.msg_records.push(other);
        let (n, lines) = differences(&clean, &chaos);
        assert_eq!(n, 1, "{lines:?}");
        assert_eq!(
            lines,
            ["msg (chaos): FLID 101 version 2 re-sent with different content"]
        );
    }

    #[test]
    fn a_version_going_back_is_a_violation_in_either_run() {
        let mut clean = snapshot();
        // Read in partition and offset order, whatever the order stored:
        // version 1 at offset 2 comes after version 2 at offset 1.
        clean.msg_records[0].offset = 2;
        let (n, lines) = differences(&clean, &snapshot());
        assert_eq!(n, 1, "{lines:?}");
        assert_eq!(
            lines,
            ["msg (clean): FLID 101: version 1 after 2 (partition 0 offset 2)"]
        );
        // Only the highest version so far counts: 1, 3, 2, 3 is one violation.
        let mut chaos = snapshot();
        chaos.msg_records = vec![
            record("7", 0, 0, 1),
            record("7", 0, 1, 3),
            record("7", 0, 2, 2),
            record("7", 0, 3, 3),
        ];
        let seq = msg_sequence(&chaos.msg_records, Rules::STRICT);
        assert_eq!(seq.violations.len(), 1, "{:?}", seq.violations);
        assert_eq!(seq.duplicates, 1);
        assert_eq!(seq.events.len(), 3);
    }

    /// The snapshot's topic after a rollback: flight 101's versions 1 and 2
    /// delivered, then sent again in order by the new primary, then its
    /// version 3 (in both runs).
    fn rolled_back() -> (Snapshot, Snapshot) {
        let mut clean = snapshot();
        clean.msg_records.push(record("101", 0, 2, 3));
        let mut chaos = snapshot();
        chaos.msg_records = vec![
            record("101", 0, 0, 1),
            record("101", 0, 1, 2),
            record("101", 0, 2, 1),
            record("101", 0, 3, 2),
            record("101", 0, 4, 3),
            record("102", 1, 0, 1),
            record("102", 1, 1, 2),
        ];
        (clean, chaos)
    }

    #[test]
    fn a_rollback_resend_is_allowed_only_after_a_rollback() {
        let (clean, chaos) = rolled_back();
        let c = compare(&clean, &chaos, Rules::AFTER_ROLLBACK);
        assert!(c.lines.is_empty(), "{:?}", c.lines);
        assert_eq!(
            (c.summary.duplicates_chaos, c.summary.rollback_resends),
            (2, 1),
            "version 2 re-sent at its own level is a plain duplicate"
        );
        let (n, lines) = differences(&clean, &chaos);
        assert_eq!(n, 1, "{lines:?}");
        assert_eq!(
            lines,
            ["msg (chaos): FLID 101: version 1 after 2 (partition 0 offset 2)"]
        );
        assert_eq!(
            compare(&clean, &chaos, Rules::STRICT)
                .summary
                .rollback_resends,
            0
        );
    }

    #[test]
    fn after_a_rollback_a_new_lower_version_other_content_or_a_lost_record_still_fail() {
        // A lower version never read before (version 3 read first).
        let (clean, mut chaos) = rolled_back();
        chaos.msg_records[0..5]
            .iter_mut()
            .zip([3, 1, 2, 1, 2])
            .for_each(|(r, v)| {
                *r = record("101", 0, r.offset, v);
            });
        let c = compare(&clean, &chaos, Rules::AFTER_ROLLBACK);
        assert_eq!(c.summary.differences, 2, "{:?}", c.lines);
        assert_eq!(
            c.lines,
            [
                "msg (chaos): FLID 101: version 1 after 3 (partition 0 offset 1)",
                "msg (chaos): FLID 101: version 2 after 3 (partition 0 offset 2)",
            ]
        );
        assert_eq!(c.summary.rollback_resends, 2, "the later 1 and 2");

        // A re-send below the highest version with other content.
        let (clean, mut chaos) = rolled_back();
        chaos.msg_records[2].value = Some(json!({"flid": "101", "state_version": 1, "remc": "b"}));
        let c = compare(&clean, &chaos, Rules::AFTER_ROLLBACK);
        assert_eq!(
            c.lines,
            ["msg (chaos): FLID 101 version 1 re-sent with different content"]
        );
        assert_eq!(c.summary.rollback_resends, 0);

        // A record dropped: its event is missing, though every version read
        // is a re-send.
        let (clean, mut chaos) = rolled_back();
        chaos.msg_records.remove(4);
        let c = compare(&clean, &chaos, Rules::AFTER_ROLLBACK);
        assert_eq!(c.summary.differences, 1, "{:?}", c.lines);
        assert!(
            c.lines[0].starts_with("msg event (101, 3): clean={"),
            "{:?}",
            c.lines
        );
    }

    #[test]
    fn a_missing_or_extra_event_is_a_difference() {
        let clean = snapshot();
        let mut chaos = snapshot();
        chaos.msg_records.remove(1);
        chaos.msg_records.push(record("103", 2, 0, 1));
        let (n, lines) = differences(&clean, &chaos);
        assert_eq!(n, 2, "{lines:?}");
        assert!(
            lines[0].starts_with("msg event (101, 2): clean={"),
            "{lines:?}"
        );
        assert!(lines[0].ends_with("chaos=null"), "{lines:?}");
        assert!(
            lines[1].starts_with("msg event (103, 1): clean=null"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_different_outcome_is_a_difference() {
        let clean = snapshot();
        let mut chaos = snapshot();
        chaos.proc_state[1].state = ProcState::Skipped;
        chaos.proc_state[2].marked = false;
        let c = compare(&clean, &chaos, Rules::STRICT);
        assert_eq!(c.summary.differences, 2, "{:?}", c.lines);
        assert!(
            c.lines[0].starts_with("PROC_STATE 2: clean={"),
            "{:?}",
            c.lines
        );
        assert!(
            c.lines[0].contains("\"state\":\"SKIPPED\""),
            "{:?}",
            c.lines
        );
        assert_eq!(
            c.summary.outcomes,
            BTreeMap::from([
                ("DEAD".into(), 1),
                ("SKIPPED".into(), 1),
                ("SUCCEEDED".into(), 1)
            ])
        );
        // A message missing from one run.
        chaos.proc_state.truncate(1);
        assert_eq!(differences(&clean, &chaos).0, 2);
    }

    #[test]
    fn a_flight_row_is_keyed_by_its_primary_key() {
        let clean = snapshot();
        let mut chaos = snapshot();
        // Another version of flight 101 is one difference (the key is the
        // FLID), and a changed route point is one more.
        let schd = chaos.flights.get_mut(FLIGHT_SCHD).expect("table");
        schd[0]["state_version"] = json!(3);
        let routes = chaos.flights.get_mut("flight_route_point").expect("table");
        routes[0]["apcd"] = json!("SHA");
        let (n, lines) = differences(&clean, &chaos);
        assert_eq!(n, 2, "{lines:?}");
        assert!(
            lines[0].starts_with("flight_route_point [101,\"ROUT\",1]: "),
            "{lines:?}"
        );
        assert!(lines[1].starts_with("flight_schd [101]: "), "{lines:?}");
        // In the history, the version is part of the key: a row at another
        // version is missing on one side and extra on the other.
        let mut chaos = snapshot();
        let history = chaos.flights.get_mut(FLIGHT_HISTORY).expect("table");
        history[0]["state_version"] = json!(3);
        assert_eq!(differences(&clean, &chaos).0, 2);
        // A table only one run has.
        let mut chaos = snapshot();
        chaos.flights.insert(
            "flight_gate".into(),
            vec![json!({"flid": 101, "ordinal": 1})],
        );
        assert_eq!(differences(&clean, &chaos).0, 1);
    }

    #[test]
    fn the_last_schd_record_and_a_flight_without_one_differ() {
        let clean = snapshot();
        let mut chaos = snapshot();
        chaos.schd_last.insert("101".into(), None);
        let (n, lines) = differences(&clean, &chaos);
        assert_eq!(n, 1, "{lines:?}");
        assert!(lines[0].starts_with("schd 101: clean={"), "{lines:?}");
        assert!(lines[0].ends_with("chaos=null"), "{lines:?}");
        // No record at all: differs from the clean run's, and the flight has none.
        chaos.schd_last.remove("101");
        let (n, lines) = differences(&clean, &chaos);
        assert_eq!(n, 2, "{lines:?}");
        assert_eq!(
            lines[1],
            "schd (chaos): no record for 1 flights, e.g. [\"101\"]"
        );
    }

    #[test]
    fn an_outbox_not_all_sent_is_a_difference() {
        let clean = snapshot();
        let mut chaos = snapshot();
        chaos.outbox.push(OutboxCount {
            target: "KAFKA:msg".into(),
            status: EventStatus::Dead,
            n: 1,
        });
        let (n, lines) = differences(&clean, &chaos);
        assert_eq!(n, 1, "{lines:?}");
        assert_eq!(
            lines,
            [
                "outbox (chaos) not all SENT: [{\"target\":\"KAFKA:msg\",\"status\":\"DEAD\",\"n\":1}]"
            ]
        );
    }

    #[test]
    fn every_difference_counts_and_five_of_a_kind_are_listed() {
        let clean = snapshot();
        let mut chaos = snapshot();
        chaos.proc_state = (1..=8).map(|id| outcome(id, ProcState::Skipped)).collect();
        let (n, lines) = differences(&clean, &chaos);
        assert_eq!(n, 8);
        assert_eq!(lines.len(), 6, "{lines:?}");
        assert_eq!(lines[5], "PROC_STATE: … 3 more");
    }

    #[test]
    fn a_snapshot_round_trips_through_json() {
        let s = snapshot();
        let text = serde_json::to_string(&s).expect("serializes");
        let back: Snapshot = serde_json::from_str(&text).expect("parses");
        assert_eq!(back, s);
        assert_eq!(
            s.describe(),
            "3 messages, 2 flights, 4 msg records, 2 schd keys"
        );
    }

    #[test]
    fn a_record_value_is_parsed_without_clock_keys() {
        let place = RecordPlace {
            partition: 1,
            offset: 5,
            state_version: Some(4),
            event_id: None,
        };
        let r = MsgRecord::new(Some("9".into()), place, Some(r#"{"a":1,"updated_at":"t"}"#))
            .expect("JSON");
        assert_eq!(r.value, Some(json!({"a": 1})));
        assert_eq!((r.state_version, r.event_id), (4, -1));
        assert_eq!(record_value(None).expect("null"), None);
        assert!(record_value(Some("{")).is_err());
    }
}
