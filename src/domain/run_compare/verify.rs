//! The end checks of the outage soak and of the independent-broker run
//! (scripts/soak.sh, scripts/real-broker.sh; docs/RESILIENCE.md): `msgx dev
//! caught-up`, `msgx dev verify` and `msgx dev broker-verify`. Pure: the
//! store reads the facts, `msgx dev` reads the topics and the W log.
//!
//! An outage may only cause backoff: a DEAD message that its content did not
//! cause, a DEAD outbox event or an abandoned backfill mark is fatal. After
//! the soak nothing may be lost, W never went back, every `KAFKA:msg` event
//! is on the topic with its payload and per FLID the versions never go back
//! (a re-send of a version is allowed with the same content). Against the
//! independent broker no fault is injected: the topics hold exactly the
//! outbox, per FLID on one partition in strictly increasing versions.

use super::{EventKey, MsgRecord, Rules, flid_text, msg_sequence, record_value};
use crate::domain::proc_state::ErrorClass;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The error class of the only DEAD an outage may leave: a message whose
/// own content is malformed.
pub const CAUSED_BY_CONTENT: ErrorClass = ErrorClass::Malformed;

/// How many DEAD messages a fatal problem names.
pub const DEAD_SHOWN: usize = 3;

/// Order violations listed by `broker-verify` (all are counted).
const ORDER_SHOWN: usize = 5;

/// Sequence violations listed by `verify`.
const SEQUENCE_SHOWN: usize = 5;

/// Examples named per failure.
const EXAMPLES: usize = 3;

/// Lost mailbox IDs named.
const LOST_SHOWN: usize = 5;

/// A DEAD message whose class is not [`CAUSED_BY_CONTENT`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadMessage {
    pub msg_id: i64,
    pub error_class: Option<ErrorClass>,
    pub last_error: Option<String>,
}

impl DeadMessage {
    /// `MSG_ID CLASS LAST_ERROR`, an absent part empty.
    fn describe(&self) -> String {
        format!(
            "{} {} {}",
            self.msg_id,
            self.error_class.map_or("", ErrorClass::as_str),
            self.last_error.as_deref().unwrap_or("")
        )
    }
}

/// What PostgreSQL holds of the outcomes an outage must never cause.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FatalFacts {
    /// DEAD messages whose class is not [`CAUSED_BY_CONTENT`].
    pub dead_messages: i64,
    /// The first [`DEAD_SHOWN`] of them, in MSG_ID order.
    pub dead_examples: Vec<DeadMessage>,
    /// Outbox events DEAD.
    pub dead_events: i64,
    /// Backfill marks abandoned.
    pub abandoned_marks: i64,
}

impl FatalFacts {
    /// One phrase per fatal outcome; empty when there is none: a DEAD
    /// message not caused by its content, a DEAD outbox event, an abandoned
    /// backfill mark.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.dead_messages > 0 {
            let shown: Vec<String> = self
                .dead_examples
                .iter()
                .take(DEAD_SHOWN)
                .map(DeadMessage::describe)
                .collect();
            out.push(format!(
                "{} DEAD messages not caused by their content: {shown:?}",
                self.dead_messages
            ));
        }
        if self.dead_events > 0 {
            out.push(format!("{} DEAD outbox events", self.dead_events));
        }
        if self.abandoned_marks > 0 {
            out.push(format!("{} backfill marks abandoned", self.abandoned_marks));
        }
        out
    }
}

/// How far the run got with the mailbox rows up to one ID.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CatchUpFacts {
    /// The last mailbox ID that must be done.
    pub upto: i64,
    /// Mailbox rows with an ID up to `upto`.
    pub mailbox_rows: i64,
    /// Of them, the rows without a processing mark.
    pub unmarked: i64,
    /// PROC_STATE rows up to `upto` in a terminal state with their mark
    /// confirmed.
    pub done: i64,
    /// Outbox events of the messages up to `upto` not SENT.
    pub unsent: i64,
}

impl CatchUpFacts {
    /// What is still awaited, one phrase each; empty when every mailbox row
    /// up to `upto` is processed and marked (its PROC_STATE row terminal
    /// with the mark confirmed, the mark on the mailbox row) and every event
    /// of those messages is SENT.
    pub fn waiting(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.done != self.mailbox_rows {
            out.push(format!(
                "{} of {} messages not yet processed and marked",
                self.mailbox_rows - self.done,
                self.mailbox_rows
            ));
        }
        if self.unmarked > 0 {
            out.push(format!("{} mailbox marks missing", self.unmarked));
        }
        if self.unsent > 0 {
            out.push(format!("{} events not yet SENT", self.unsent));
        }
        out
    }

    /// `caught up to ID N`, or what is awaited on one line.
    pub fn line(&self) -> String {
        let waiting = self.waiting();
        if waiting.is_empty() {
            format!("caught up to ID {}", self.upto)
        } else {
            waiting.join("; ")
        }
    }
}

/// An outbox event of one target: its FLID, version and payload text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEvent {
    pub partition_key: String,
    pub state_version: i64,
    /// `None` for a tombstone.
    pub payload: Option<String>,
}

/// A record value parsed as it is (clock keys kept); `None` for a null value.
pub fn raw_value(value: Option<&str>) -> Result<Option<Value>, serde_json::Error> {
    value.map(serde_json::from_str).transpose()
}

/// The outbox events by (FLID, STATE_VERSION) with their parsed payloads
/// (without clock keys when `strip`), and one failure per payload that is
/// not JSON.
pub fn expected_events(
    events: &[OutboxEvent],
    strip: bool,
) -> (BTreeMap<EventKey, Option<Value>>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut bad = Vec::new();
    for e in events {
        let parsed = if strip {
            record_value(e.payload.as_deref())
        } else {
            raw_value(e.payload.as_deref())
        };
        match parsed {
            Ok(v) => {
                out.insert((Some(e.partition_key.clone()), e.state_version), v);
            }
            Err(err) => bad.push(format!(
                "outbox event ({}, {}): payload is not JSON: {err}",
                e.partition_key, e.state_version
            )),
        }
    }
    (out, bad)
}

/// `[(FLID, V), …]` of the first few keys.
fn keys_text<'a>(keys: impl IntoIterator<Item = &'a EventKey>) -> String {
    let shown: Vec<String> = keys
        .into_iter()
        .take(EXAMPLES)
        .map(|(flid, v)| format!("({}, {v})", flid_text(flid)))
        .collect();
    format!("[{}]", shown.join(", "))
}

/// The W log (`TIME W` per line, as `harness.py watch-w` samples it):
/// the samples read and one failure each time W moved backwards (or a line
/// could not be read). W never moves backwards.
pub fn w_log(text: &str) -> (usize, Vec<String>) {
    let mut samples = 0;
    let mut failures = Vec::new();
    let mut prev: Option<i64> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(t), Some(w), None) = (parts.next(), parts.next(), parts.next()) else {
            failures.push(format!("W log line {} unreadable: {line:?}", i + 1));
            continue;
        };
        let Ok(w) = w.parse::<i64>() else {
            failures.push(format!("W log line {} unreadable: {line:?}", i + 1));
            continue;
        };
        samples += 1;
        if let Some(before) = prev
            && w < before
        {
            failures.push(format!("W moved backwards at {t}: {before} → {w}"));
        }
        prev = Some(w);
    }
    (samples, failures)
}

/// Every expected event is on the topic with its content: `None`, or the
/// failure naming how many are not.
pub fn undelivered(
    expected: &BTreeMap<EventKey, Option<Value>>,
    seen: &BTreeMap<EventKey, Option<Value>>,
) -> Option<String> {
    let missing: Vec<&EventKey> = expected
        .iter()
        .filter(|(k, v)| seen.get(*k) != Some(*v))
        .map(|(k, _)| k)
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} outbox events not delivered (or different), e.g. {}",
            missing.len(),
            keys_text(missing)
        )
    })
}

/// The failures of a check, then its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict<S> {
    pub failures: Vec<String>,
    pub summary: S,
}

impl<S: Serialize> Verdict<S> {
    /// One `FAIL …` line per failure, then `NAME: {…}`.
    pub fn text(&self, name: &str) -> String {
        let mut out = String::new();
        for f in &self.failures {
            out.push_str("FAIL ");
            out.push_str(&f.replace('\n', " "));
            out.push('\n');
        }
        out.push_str(name);
        out.push_str(": ");
        out.push_str(&serde_json::to_string(&self.summary).unwrap_or_default());
        out.push('\n');
        out
    }

    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// What the soak's final check is decided from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VerifyFacts {
    /// What is still to do ([`super::DrainFacts::problems`]).
    pub drain: Vec<String>,
    /// Every mailbox row's ID.
    pub mailbox_ids: Vec<i64>,
    /// Every PROC_STATE row's MSG_ID.
    pub msg_ids: Vec<i64>,
    /// Mailbox rows without a processing mark.
    pub unmarked: i64,
    pub fatal: FatalFacts,
    /// The `KAFKA:msg` outbox events.
    pub msg_events: Vec<OutboxEvent>,
    /// The `msg` topic, values without clock keys ([`MsgRecord::new`]).
    pub msg_records: Vec<MsgRecord>,
    /// The W log's text, when one was taken.
    pub w_log: Option<String>,
}

/// The figures of `verify: {…}` (scripts/soak.sh prints them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifySummary {
    pub mailbox_rows: usize,
    pub msg_events: usize,
    pub msg_records: usize,
    pub duplicates: usize,
    pub w_samples: usize,
    pub failures: usize,
}

/// The soak's invariants after the run: drained; nothing lost (every
/// mailbox ID has its PROC_STATE row); every mailbox row marked; nothing
/// fatal ([`FatalFacts::problems`]); the `msg` topic's sequence per FLID
/// ([`msg_sequence`]: versions never go back, a re-send carries the same
/// content); every `KAFKA:msg` outbox event on the topic with its payload
/// (clock keys aside); W never moved backwards.
pub fn verify(facts: &VerifyFacts) -> Verdict<VerifySummary> {
    let mut failures: Vec<String> = facts
        .drain
        .iter()
        .map(|p| format!("not drained: {p}"))
        .collect();
    let mailbox: BTreeSet<i64> = facts.mailbox_ids.iter().copied().collect();
    let known: BTreeSet<i64> = facts.msg_ids.iter().copied().collect();
    let lost: Vec<i64> = mailbox.difference(&known).copied().collect();
    if !lost.is_empty() {
        failures.push(format!(
            "lost: {} mailbox rows never enqueued, e.g. {:?}",
            lost.len(),
            &lost[..lost.len().min(LOST_SHOWN)]
        ));
    }
    if facts.unmarked > 0 {
        failures.push(format!(
            "{} mailbox rows without a processing mark",
            facts.unmarked
        ));
    }
    failures.extend(facts.fatal.problems());

    let (expected, bad) = expected_events(&facts.msg_events, true);
    failures.extend(bad);
    let seq = msg_sequence(&facts.msg_records, Rules::STRICT);
    failures.extend(seq.violations.iter().take(SEQUENCE_SHOWN).cloned());
    failures.extend(undelivered(&expected, &seq.events));

    let (w_samples, w_failures) = facts.w_log.as_deref().map_or((0, Vec::new()), w_log);
    failures.extend(w_failures);

    let summary = VerifySummary {
        mailbox_rows: mailbox.len(),
        msg_events: expected.len(),
        msg_records: facts.msg_records.len(),
        duplicates: seq.duplicates,
        w_samples,
        failures: failures.len(),
    };
    Verdict { failures, summary }
}

/// The `msg` topic read strictly: per FLID one partition and strictly
/// increasing versions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StrictSequence {
    /// Each version not above the FLID's previous one.
    pub order: Vec<String>,
    /// FLIDs found on more than one partition.
    pub split: Vec<String>,
    /// Each (FLID, STATE_VERSION) with the content last read.
    pub seen: BTreeMap<EventKey, Option<Value>>,
    /// Distinct FLIDs read.
    pub flids: usize,
}

/// Reads `records` in partition and offset order: per FLID every version
/// must be above the one before (no fault was injected, so not even a
/// duplicate is expected), and all on one partition.
pub fn strict_sequence(records: &[MsgRecord]) -> StrictSequence {
    let mut in_order: Vec<&MsgRecord> = records.iter().collect();
    in_order.sort_by_key(|r| (r.partition, r.offset));
    let mut last: BTreeMap<&Option<String>, i64> = BTreeMap::new();
    let mut partitions: BTreeMap<&Option<String>, BTreeSet<i32>> = BTreeMap::new();
    let mut out = StrictSequence::default();
    for r in in_order {
        let (flid, v) = (&r.key, r.state_version);
        partitions.entry(flid).or_default().insert(r.partition);
        if let Some(&before) = last.get(flid)
            && v <= before
        {
            out.order.push(format!(
                "FLID {}: version {v} after {before} (partition {} offset {})",
                flid_text(flid),
                r.partition,
                r.offset
            ));
        }
        last.insert(flid, v);
        out.seen.insert((flid.clone(), v), r.value.clone());
    }
    out.split = partitions
        .into_iter()
        .filter(|(_, ps)| ps.len() > 1)
        .map(|(flid, _)| flid_text(flid).to_string())
        .collect();
    out.flids = last.len();
    out
}

/// Each `schd` outbox row against the last record of its FLID (in
/// partition and offset order): the same `state-version` and the same
/// value (null for a tombstone). Returns the failure, if any, and the
/// number of keys on the topic.
pub fn schd_latest(events: &[OutboxEvent], records: &[MsgRecord]) -> (Option<String>, usize) {
    let mut in_order: Vec<&MsgRecord> = records.iter().collect();
    in_order.sort_by_key(|r| (r.partition, r.offset));
    let mut last: BTreeMap<&str, &MsgRecord> = BTreeMap::new();
    for r in in_order {
        last.insert(flid_text(&r.key), r);
    }
    let wrong: Vec<&str> = events
        .iter()
        .filter(|e| {
            let want = raw_value(e.payload.as_deref());
            match (last.get(e.partition_key.as_str()), want) {
                (Some(rec), Ok(want)) => rec.state_version != e.state_version || rec.value != want,
                _ => true,
            }
        })
        .map(|e| e.partition_key.as_str())
        .collect();
    let failure = (!wrong.is_empty()).then(|| {
        format!(
            "{} of {} flights without their latest schd record, e.g. {:?}",
            wrong.len(),
            events.len(),
            &wrong[..wrong.len().min(EXAMPLES)]
        )
    });
    (failure, last.len())
}

/// What the independent broker's check is decided from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BrokerFacts {
    /// What is still to do ([`super::DrainFacts::problems`]).
    pub drain: Vec<String>,
    pub fatal: FatalFacts,
    /// The `KAFKA:msg` outbox events.
    pub msg_events: Vec<OutboxEvent>,
    /// The `KAFKA:schd` outbox rows.
    pub schd_events: Vec<OutboxEvent>,
    /// The `msg` topic, values as read ([`raw_value`]).
    pub msg_records: Vec<MsgRecord>,
    /// The `schd` topic, values as read.
    pub schd_records: Vec<MsgRecord>,
}

/// The figures of `broker-verify: {…}` (scripts/real-broker.sh prints them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrokerSummary {
    pub msg_events: usize,
    pub msg_records: usize,
    pub flids: usize,
    pub schd_flights: usize,
    pub schd_tombstones: usize,
    pub schd_records: usize,
    pub failures: usize,
}

/// After a drain against an independent broker the topics hold exactly the
/// outbox: drained and nothing fatal; on `msg` every `KAFKA:msg` event with
/// its payload and nothing else, per FLID one partition and strictly
/// increasing versions ([`strict_sequence`]); on `schd` per flight the last
/// record is its outbox row's version and payload ([`schd_latest`]); every
/// FLID on `msg` has a `schd` outbox row.
pub fn broker_verify(facts: &BrokerFacts) -> Verdict<BrokerSummary> {
    let mut failures: Vec<String> = facts
        .drain
        .iter()
        .map(|p| format!("not drained: {p}"))
        .collect();
    failures.extend(facts.fatal.problems());

    let (expected, bad) = expected_events(&facts.msg_events, false);
    failures.extend(bad);
    let seq = strict_sequence(&facts.msg_records);
    failures.extend(seq.order.iter().take(ORDER_SHOWN).cloned());
    if seq.order.len() > ORDER_SHOWN {
        failures.push(format!(
            "… {} more order violations",
            seq.order.len() - ORDER_SHOWN
        ));
    }
    if !seq.split.is_empty() {
        failures.push(format!(
            "{} FLIDs on more than one partition, e.g. {:?}",
            seq.split.len(),
            &seq.split[..seq.split.len().min(EXAMPLES)]
        ));
    }
    let missing: Vec<&EventKey> = expected
        .keys()
        .filter(|k| !seq.seen.contains_key(*k))
        .collect();
    let different: Vec<&EventKey> = expected
        .iter()
        .filter(|(k, v)| seq.seen.get(*k).is_some_and(|got| got != *v))
        .map(|(k, _)| k)
        .collect();
    let extra: Vec<&EventKey> = seq
        .seen
        .keys()
        .filter(|k| !expected.contains_key(*k))
        .collect();
    for (name, keys) in [
        ("missing from the msg topic", missing),
        ("with a different payload", different),
        ("on the msg topic but not in the outbox", extra),
    ] {
        if !keys.is_empty() {
            failures.push(format!(
                "{} msg events {name}, e.g. {}",
                keys.len(),
                keys_text(keys.iter().copied())
            ));
        }
    }

    let (schd_failure, schd_records) = schd_latest(&facts.schd_events, &facts.schd_records);
    failures.extend(schd_failure);
    let with_schd: BTreeSet<&str> = facts
        .schd_events
        .iter()
        .map(|e| e.partition_key.as_str())
        .collect();
    let no_schd: BTreeSet<&str> = expected
        .keys()
        .map(|(flid, _)| flid_text(flid))
        .filter(|f| !with_schd.contains(f))
        .collect();
    if !no_schd.is_empty() {
        let shown: Vec<&str> = no_schd.iter().take(EXAMPLES).copied().collect();
        failures.push(format!(
            "{} FLIDs on msg without a schd outbox row, e.g. {shown:?}",
            no_schd.len()
        ));
    }

    let summary = BrokerSummary {
        msg_events: expected.len(),
        msg_records: facts.msg_records.len(),
        flids: seq.flids,
        schd_flights: facts.schd_events.len(),
        schd_tombstones: facts
            .schd_events
            .iter()
            .filter(|e| e.payload.is_none())
            .count(),
        schd_records,
        failures: failures.len(),
    };
    Verdict { failures, summary }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(flid: &str, partition: i32, offset: i64, version: i64) -> MsgRecord {
        MsgRecord {
            key: Some(flid.into()),
            partition,
            offset,
            state_version: version,
            event_id: offset + 1,
            value: Some(json!({"flid": flid, "state_version": version})),
        }
    }

    fn event(flid: &str, version: i64) -> OutboxEvent {
        OutboxEvent {
            partition_key: flid.into(),
            state_version: version,
            payload: Some(format!(
                r#"{{"flid":"{flid}","state_version":{version},"created_at":"t"}}"#
            )),
        }
    }

    /// A drained soak: three mailbox rows, two flights with two versions each.
    fn soak() -> VerifyFacts {
        VerifyFacts {
            mailbox_ids: vec![1, 2, 3],
            msg_ids: vec![1, 2, 3],
            msg_events: vec![event("7", 1), event("7", 2), event("8", 1), event("8", 2)],
            msg_records: vec![
                record("7", 0, 0, 1),
                record("7", 0, 1, 2),
                record("8", 1, 0, 1),
                record("8", 1, 1, 2),
            ],
            w_log: Some("1.0 1\n1.5 3\n2.0 3\n".into()),
            ..VerifyFacts::default()
        }
    }

    /// A drained run against the broker: the same flights, each with its
    /// schd row (8 deleted: a tombstone).
    fn broker() -> BrokerFacts {
        let mut schd_8 = record("8", 1, 0, 2);
        schd_8.value = None;
        BrokerFacts {
            msg_events: vec![event("7", 1), event("7", 2), event("8", 1), event("8", 2)],
            schd_events: vec![
                OutboxEvent {
                    partition_key: "7".into(),
                    state_version: 2,
                    payload: Some(r#"{"flid":"7","state_version":2}"#.into()),
                },
                OutboxEvent {
                    partition_key: "8".into(),
                    state_version: 2,
                    payload: None,
                },
            ],
            msg_records: [("7", 0), ("8", 1)]
                .into_iter()
                .flat_map(|(f, p)| {
                    (1..=2).map(move |v| {
                        let mut r = record(f, p, v - 1, v);
                        r.value = Some(json!({"flid": f, "state_version": v, "created_at": "t"}));
                        r
                    })
                })
                .collect(),
            schd_records: vec![record("7", 0, 0, 1), record("7", 0, 1, 2), schd_8],
            ..BrokerFacts::default()
        }
    }

    #[test]
    fn fatal_outcomes_are_a_dead_message_not_malformed_a_dead_event_an_abandoned_mark() {
        assert!(FatalFacts::default().problems().is_empty());
        let facts = FatalFacts {
            dead_messages: 4,
            dead_examples: vec![
                DeadMessage {
                    msg_id: 12,
                    error_class: Some(ErrorClass::Exhausted),
                    last_error: Some("mailbox down".into()),
                },
                DeadMessage {
                    msg_id: 13,
                    error_class: None,
                    last_error: None,
                },
            ],
            dead_events: 2,
            abandoned_marks: 1,
        };
        assert_eq!(
            facts.problems(),
            [
                "4 DEAD messages not caused by their content: \
                 [\"12 EXHAUSTED mailbox down\", \"13  \"]",
                "2 DEAD outbox events",
                "1 backfill marks abandoned",
            ]
        );
        assert_eq!(CAUSED_BY_CONTENT, ErrorClass::Malformed);
    }

    #[test]
    fn caught_up_needs_every_row_done_marked_and_sent() {
        let done = CatchUpFacts {
            upto: 40,
            mailbox_rows: 38,
            done: 38,
            ..CatchUpFacts::default()
        };
        assert!(done.waiting().is_empty());
        assert_eq!(done.line(), "caught up to ID 40");
        let open = CatchUpFacts {
            done: 30,
            unmarked: 5,
            unsent: 9,
            ..done
        };
        assert_eq!(
            open.line(),
            "8 of 38 messages not yet processed and marked; 5 mailbox marks missing; \
             9 events not yet SENT"
        );
    }

    #[test]
    fn w_never_moves_backwards() {
        assert_eq!(w_log("1.0 5\n1.5 5\n2.0 9\n"), (3, vec![]));
        let (n, failures) = w_log("1.0 5\n\n1.5 4\n2.0 x\n2.5 6\n");
        assert_eq!(n, 3);
        assert_eq!(
            failures,
            [
                "W moved backwards at 1.5: 5 → 4",
                "W log line 4 unreadable: \"2.0 x\"",
            ]
        );
        assert_eq!(w_log(""), (0, vec![]));
    }

    #[test]
    fn a_drained_soak_verifies_clean() {
        let v = verify(&soak());
        assert!(v.passed(), "{:?}", v.failures);
        assert_eq!(
            v.summary,
            VerifySummary {
                mailbox_rows: 3,
                msg_events: 4,
                msg_records: 4,
                duplicates: 0,
                w_samples: 3,
                failures: 0,
            }
        );
        assert_eq!(
            v.text("verify"),
            "verify: {\"mailbox_rows\":3,\"msg_events\":4,\"msg_records\":4,\
             \"duplicates\":0,\"w_samples\":3,\"failures\":0}\n"
        );
    }

    #[test]
    fn verify_names_every_failure_in_order() {
        let mut facts = soak();
        facts.drain = vec!["2 outbox events PENDING".into()];
        facts.mailbox_ids.extend([4, 5]);
        facts.unmarked = 2;
        facts.fatal.dead_events = 1;
        facts.msg_records.push(record("7", 0, 2, 1)); // back to version 1
        facts.msg_records.remove(3); // (8, 2) never sent
        facts.w_log = Some("1.0 3\n1.5 2\n".into());
        let v = verify(&facts);
        assert_eq!(
            v.failures,
            [
                "not drained: 2 outbox events PENDING",
                "lost: 2 mailbox rows never enqueued, e.g. [4, 5]",
                "2 mailbox rows without a processing mark",
                "1 DEAD outbox events",
                "FLID 7: version 1 after 2 (partition 0 offset 2)",
                "1 outbox events not delivered (or different), e.g. [(8, 2)]",
                "W moved backwards at 1.5: 3 → 2",
            ]
        );
        assert_eq!(v.summary.failures, 7);
        assert_eq!(v.summary.duplicates, 1, "(7, 1) read twice");
        let text = v.text("verify");
        assert!(
            text.starts_with("FAIL not drained: 2 outbox events PENDING\nFAIL lost: "),
            "{text}"
        );
        assert!(text.ends_with("\"failures\":7}\n"), "{text}");
    }

    #[test]
    fn a_resend_with_the_same_content_is_allowed_and_other_content_is_not() {
        let mut facts = soak();
        facts.msg_records.push(record("8", 1, 2, 2));
        let v = verify(&facts);
        assert!(v.passed(), "{:?}", v.failures);
        assert_eq!(v.summary.duplicates, 1);
        let mut other = record("8", 1, 3, 2);
        other.value = Some(json!({"flid": "8", "state_version": 2, "remc": "x"}));
        facts.msg_records.push(other);
        assert_eq!(
            verify(&facts).failures,
            ["FLID 8 version 2 re-sent with different content"]
        );
    }

    #[test]
    fn the_outbox_payload_must_be_on_the_topic_clock_keys_aside() {
        let expected = expected_events(&[event("7", 1)], true).0;
        let mut seen = BTreeMap::new();
        seen.insert(
            (Some("7".to_string()), 1),
            Some(json!({"flid": "7", "state_version": 1})),
        );
        assert_eq!(undelivered(&expected, &seen), None);
        seen.insert((Some("7".to_string()), 1), Some(json!({"flid": "7"})));
        assert_eq!(
            undelivered(&expected, &seen).as_deref(),
            Some("1 outbox events not delivered (or different), e.g. [(7, 1)]")
        );
        let bad = OutboxEvent {
            partition_key: "9".into(),
            state_version: 1,
            payload: Some("{".into()),
        };
        let (events, failures) = expected_events(&[bad], false);
        assert!(events.is_empty());
        assert!(
            failures[0].starts_with("outbox event (9, 1): payload is not JSON"),
            "{failures:?}"
        );
    }

    #[test]
    fn a_drained_broker_run_verifies_clean() {
        let v = broker_verify(&broker());
        assert!(v.passed(), "{:?}", v.failures);
        assert_eq!(
            v.summary,
            BrokerSummary {
                msg_events: 4,
                msg_records: 4,
                flids: 2,
                schd_flights: 2,
                schd_tombstones: 1,
                schd_records: 2,
                failures: 0,
            }
        );
        assert!(
            v.text("broker-verify")
                .starts_with("broker-verify: {\"msg_events\":4,")
        );
    }

    #[test]
    fn on_the_broker_versions_strictly_increase_on_one_partition() {
        let records = vec![
            record("7", 0, 0, 1),
            record("7", 0, 1, 1), // a duplicate: not expected here
            record("7", 1, 0, 2), // another partition
            record("9", 0, 2, 3),
            record("9", 0, 3, 2),
        ];
        let seq = strict_sequence(&records);
        assert_eq!(
            seq.order,
            [
                "FLID 7: version 1 after 1 (partition 0 offset 1)",
                "FLID 9: version 2 after 3 (partition 0 offset 3)",
            ]
        );
        assert_eq!(seq.split, ["7"]);
        assert_eq!((seq.flids, seq.seen.len()), (2, 4));
        // Only the previous version counts: 3, 1, 2 is one violation.
        let seq = strict_sequence(&[
            record("5", 0, 0, 3),
            record("5", 0, 1, 1),
            record("5", 0, 2, 2),
        ]);
        assert_eq!(seq.order.len(), 1, "{:?}", seq.order);
    }

    #[test]
    fn broker_verify_lists_five_order_violations_and_counts_the_rest() {
        let mut facts = broker();
        facts.msg_records = (0..8).map(|o| record("7", 0, o, 1)).collect();
        let v = broker_verify(&facts);
        assert_eq!(
            v.failures[5], "… 2 more order violations",
            "{:?}",
            v.failures
        );
    }

    #[test]
    fn the_msg_topic_holds_exactly_the_outbox() {
        let mut facts = broker();
        facts.msg_records.remove(3); // (8, 2) missing
        facts.msg_records[0].value = Some(json!({"other": true})); // (7, 1) different
        facts.msg_records.push(record("7", 0, 5, 3)); // (7, 3) extra
        let v = broker_verify(&facts);
        assert_eq!(
            v.failures,
            [
                "1 msg events missing from the msg topic, e.g. [(8, 2)]",
                "1 msg events with a different payload, e.g. [(7, 1)]",
                "1 msg events on the msg topic but not in the outbox, e.g. [(7, 3)]",
            ]
        );
    }

    #[test]
    fn the_last_schd_record_per_flid_is_the_outbox_row() {
        let facts = broker();
        assert_eq!(
            schd_latest(&facts.schd_events, &facts.schd_records),
            (None, 2)
        );
        // The last record read wins, in partition and offset order.
        let mut records = facts.schd_records.clone();
        records.swap(0, 1);
        assert_eq!(schd_latest(&facts.schd_events, &records).0, None);
        // Flight 7's last record at an older version, flight 8 without its
        // tombstone.
        let records = vec![record("7", 0, 0, 1), record("8", 1, 0, 2)];
        assert_eq!(
            schd_latest(&facts.schd_events, &records).0.as_deref(),
            Some("2 of 2 flights without their latest schd record, e.g. [\"7\", \"8\"]")
        );
        // A FLID on msg without a schd outbox row.
        let mut facts = broker();
        facts.schd_events.remove(1);
        facts.schd_records.pop();
        let v = broker_verify(&facts);
        assert_eq!(
            v.failures,
            ["1 FLIDs on msg without a schd outbox row, e.g. [\"8\"]"]
        );
    }

    #[test]
    fn broker_verify_keeps_the_clock_keys() {
        let mut facts = broker();
        facts.msg_records[0].value = Some(json!({"flid": "7", "state_version": 1}));
        assert_eq!(
            broker_verify(&facts).failures,
            ["1 msg events with a different payload, e.g. [(7, 1)]"]
        );
    }

    #[test]
    fn drain_and_fatal_problems_fail_both_checks() {
        let mut facts = broker();
        facts.drain = vec!["W 3 < last mailbox ID 4".into()];
        facts.fatal.abandoned_marks = 2;
        assert_eq!(
            broker_verify(&facts).failures,
            [
                "not drained: W 3 < last mailbox ID 4",
                "2 backfill marks abandoned"
            ]
        );
    }
}
