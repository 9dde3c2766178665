//! The failover run with a purging mailbox owner (scripts/failover.sh
//! `--purge`, docs/RESILIENCE.md "PostgreSQL failover"): its PROC_STATE
//! differences from the undisturbed run, sorted into what a rollback over
//! purged rows is expected to cause and the rest.
//!
//! The owner deletes a row once msgx's mark is written; after a failover the
//! promoted replica may lack both the row's processing and its mark. Then:
//! - a purged message that ends DEAD(MALFORMED, raw-missing) is named as
//!   lost (expected);
//! - a message whose processing survived but whose mark confirmation did
//!   not is abandoned MISSING_ROW by the next scan, otherwise equal
//!   (expected, named by that alert);
//! - a purged message without any PROC_STATE row, inside a released hole,
//!   has vanished: nothing names it (a failure);
//! - any other PROC_STATE difference is a failure, and so is a row still
//!   PENDING or FAILED, or an outbox not all SENT.
//!
//! Flights, `schd` records and `msg` events those messages touched differ as
//! a consequence: counted, not failed.

use super::{EventKey, Outcome, SHOWN, Snapshot, json};
use crate::domain::ProcState;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

/// IDs of the report's summary listed per kind.
const IDS_SHOWN: usize = 10;

/// Why an argument of the report does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("not a MSG_ID: {0:?}")]
    Id(String),
    #[error("not a hole FIRST-LAST: {0:?}")]
    Hole(String),
}

/// MSG_IDs, comma-separated; empty: none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MsgIds(pub BTreeSet<i64>);

impl FromStr for MsgIds {
    type Err = ArgError;

    fn from_str(s: &str) -> Result<MsgIds, ArgError> {
        items(s)
            .map(|x| x.parse().map_err(|_| ArgError::Id(x.to_string())))
            .collect::<Result<_, _>>()
            .map(MsgIds)
    }
}

/// Released holes as `FIRST-LAST` (inclusive), comma-separated; empty: none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holes(pub Vec<(i64, i64)>);

impl FromStr for Holes {
    type Err = ArgError;

    fn from_str(s: &str) -> Result<Holes, ArgError> {
        items(s)
            .map(|x| {
                let bad = || ArgError::Hole(x.to_string());
                let (first, last) = x.split_once('-').ok_or_else(bad)?;
                let first: i64 = first.trim().parse().map_err(|_| bad())?;
                let last: i64 = last.trim().parse().map_err(|_| bad())?;
                if first > last {
                    return Err(bad());
                }
                Ok((first, last))
            })
            .collect::<Result<_, _>>()
            .map(Holes)
    }
}

impl Holes {
    fn contain(&self, id: i64) -> bool {
        self.0
            .iter()
            .any(|&(first, last)| (first..=last).contains(&id))
    }
}

fn items(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty())
}

/// What the purging run's check is given beside the two snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PurgeFacts {
    /// The run's MSG_IDs DEAD(MALFORMED) because their raw row was gone.
    pub raw_missing: MsgIds,
    /// The run's released holes.
    pub holes: Holes,
}

/// The figures of the report (`purge: {…}`, read by scripts/failover.sh).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PurgeSummary {
    /// Differing messages named DEAD(MALFORMED, raw-missing) (expected).
    pub raw_missing_dead: usize,
    /// Messages of the clean run without a PROC_STATE row in the run,
    /// inside a released hole (a failure).
    pub vanished_in_released_holes: usize,
    /// Messages equal but for their mark: abandoned MISSING_ROW instead of
    /// confirmed (expected).
    pub mark_confirmations_lost_then_missing_row: usize,
    /// Later messages after a named raw-missing one, finished in both runs
    /// with another outcome: their flights missed the purged updates
    /// (counted).
    pub later_outcomes_changed: usize,
    /// Every other PROC_STATE difference (a failure).
    pub other_proc_state_differences: usize,
    /// The run's rows still PENDING or FAILED (a failure).
    pub unfinished: usize,
    /// Flight rows only one run has, over every table (counted).
    pub flight_rows_differing: usize,
    /// FLIDs whose last `schd` record differs (counted).
    pub schd_keys_differing: usize,
    /// (FLID, STATE_VERSION)s of the clean run not on the run's topic
    /// (counted).
    pub msg_events_missing: usize,
    /// (FLID, STATE_VERSION)s read with two contents in the run, or not
    /// with the clean run's (counted).
    pub msg_versions_with_other_content: usize,
    /// The first of [`PurgeSummary::raw_missing_dead`].
    pub raw_missing_ids: Vec<i64>,
    /// The first of [`PurgeSummary::vanished_in_released_holes`].
    pub vanished_ids: Vec<i64>,
}

/// What [`purge_report`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct PurgeReport {
    /// The failures, at most [`SHOWN`] listed per kind.
    pub lines: Vec<String>,
    pub summary: PurgeSummary,
}

impl PurgeReport {
    /// No failing difference: nothing vanished, no other PROC_STATE
    /// difference, nothing unfinished, every outbox event SENT.
    pub fn passed(&self) -> bool {
        self.lines.is_empty()
    }

    /// One `DIFF …` line per listed failure, then `purge: {…}`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            out.push_str("DIFF ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("purge: ");
        out.push_str(&serde_json::to_string(&self.summary).unwrap_or_default());
        out.push('\n');
        out
    }
}

/// How one PROC_STATE difference is explained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    RawMissing,
    Vanished,
    MarkLost,
    Consequence,
    Other,
}

/// A differing message's kind: named raw-missing (it was in the clean
/// run), vanished (no row, inside a released hole), its mark confirmation
/// lost (abandoned MISSING_ROW, otherwise equal), or other.
fn kind(id: i64, clean: Option<&Outcome>, run: Option<&Outcome>, facts: &PurgeFacts) -> Kind {
    match (clean, run) {
        (Some(_), _) if facts.raw_missing.0.contains(&id) => Kind::RawMissing,
        (_, None) if facts.holes.contain(id) => Kind::Vanished,
        (Some(c), Some(r))
            if r.backfill_abandoned_reason.as_deref() == Some("MISSING_ROW")
                && Outcome {
                    marked: true,
                    backfill_abandoned_reason: None,
                    ..r.clone()
                } == *c =>
        {
            Kind::MarkLost
        }
        // A later message of the same identity, finished in both runs with
        // another outcome: its flight missed an update that was purged (the
        // named raw-missing before it), so "no change" and "changed", or a
        // skip for a flight deleted by a lost FDEL, trade places.
        (Some(c), Some(r))
            if facts.raw_missing.0.first().is_some_and(|first| id > *first)
                && c.identity_key == r.identity_key
                && [c.state, r.state]
                    .iter()
                    .all(|s| matches!(s, ProcState::Succeeded | ProcState::Skipped)) =>
        {
            Kind::Consequence
        }
        _ => Kind::Other,
    }
}

/// The purging run's report: `clean` undisturbed, `run` the failover run
/// with a purging owner ([`PurgeReport::passed`] says whether it passed).
pub fn purge_report(clean: &Snapshot, run: &Snapshot, facts: &PurgeFacts) -> PurgeReport {
    let by_id = |s: &Snapshot| -> BTreeMap<i64, Outcome> {
        s.proc_state.iter().map(|o| (o.msg_id, o.clone())).collect()
    };
    let (c, r) = (by_id(clean), by_id(run));
    let ids: BTreeSet<i64> = c.keys().chain(r.keys()).copied().collect();
    let mut sorted: BTreeMap<Kind, Vec<i64>> = BTreeMap::new();
    let mut lines = Vec::new();
    for id in ids {
        let (a, b) = (c.get(&id), r.get(&id));
        if a == b {
            continue;
        }
        let k = kind(id, a, b, facts);
        let of_kind = sorted.entry(k).or_default();
        if k == Kind::Other && of_kind.len() < SHOWN {
            lines.push(format!(
                "PROC_STATE {id}: clean={} run={}",
                json(a),
                json(b)
            ));
        }
        of_kind.push(id);
    }
    let ids_of = |k: Kind| sorted.get(&k).cloned().unwrap_or_default();
    let (named, vanished, mark_lost, consequences, other) = (
        ids_of(Kind::RawMissing),
        ids_of(Kind::Vanished),
        ids_of(Kind::MarkLost),
        ids_of(Kind::Consequence),
        ids_of(Kind::Other),
    );
    if other.len() > SHOWN {
        lines.push(format!("PROC_STATE: … {} more", other.len() - SHOWN));
    }
    if !vanished.is_empty() {
        lines.push(format!(
            "{} purged messages above the restored W have no PROC_STATE row: released as holes, \
             not DEAD(MALFORMED, raw-missing), e.g. {:?}",
            vanished.len(),
            &vanished[..vanished.len().min(SHOWN)]
        ));
    }
    let unfinished: Vec<i64> = run
        .proc_state
        .iter()
        .filter(|o| o.state.is_unfinished())
        .map(|o| o.msg_id)
        .collect();
    if !unfinished.is_empty() {
        lines.push(format!(
            "{} messages PENDING/FAILED, e.g. {:?}",
            unfinished.len(),
            &unfinished[..unfinished.len().min(SHOWN)]
        ));
    }
    let not_sent = run.outbox_not_sent();
    if !not_sent.is_empty() {
        lines.push(format!(
            "outbox not all SENT: {}",
            serde_json::to_string(&not_sent).unwrap_or_default()
        ));
    }

    let tables: BTreeSet<&String> = clean.flights.keys().chain(run.flights.keys()).collect();
    let none = Vec::new();
    let flight_rows_differing = tables
        .into_iter()
        .map(|t| {
            let rows = |s: &Snapshot| -> BTreeSet<String> {
                s.flights
                    .get(t)
                    .unwrap_or(&none)
                    .iter()
                    .map(Value::to_string)
                    .collect()
            };
            rows(clean).symmetric_difference(&rows(run)).count()
        })
        .sum();
    let schd_keys: BTreeSet<&String> = clean.schd_last.keys().chain(run.schd_last.keys()).collect();
    let schd_keys_differing = schd_keys
        .into_iter()
        .filter(|k| clean.schd_last.get(*k) != run.schd_last.get(*k))
        .count();
    let (ec, er) = (contents(clean), contents(run));
    let msg_events_missing = ec.keys().filter(|k| !er.contains_key(*k)).count();
    let msg_versions_with_other_content = er
        .iter()
        .filter(|(k, seen)| {
            seen.len() > 1 || ec.get(*k).is_some_and(|first| !seen.contains(&first[0]))
        })
        .count();

    let summary = PurgeSummary {
        raw_missing_dead: named.len(),
        vanished_in_released_holes: vanished.len(),
        mark_confirmations_lost_then_missing_row: mark_lost.len(),
        later_outcomes_changed: consequences.len(),
        other_proc_state_differences: other.len(),
        unfinished: unfinished.len(),
        flight_rows_differing,
        schd_keys_differing,
        msg_events_missing,
        msg_versions_with_other_content,
        raw_missing_ids: named.into_iter().take(IDS_SHOWN).collect(),
        vanished_ids: vanished.into_iter().take(IDS_SHOWN).collect(),
    };
    PurgeReport { lines, summary }
}

/// Per (FLID, STATE_VERSION) of the `msg` topic, its distinct contents in
/// the order first read (partition and offset order).
fn contents(s: &Snapshot) -> BTreeMap<EventKey, Vec<String>> {
    let mut records: Vec<_> = s.msg_records.iter().collect();
    records.sort_by_key(|r| (r.partition, r.offset));
    let mut out: BTreeMap<EventKey, Vec<String>> = BTreeMap::new();
    for r in records {
        let text = json(r.value.as_ref());
        let seen = out.entry((r.key.clone(), r.state_version)).or_default();
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::FLIGHT_SCHD;
    use super::super::tests::{outcome, record, snapshot};
    use super::*;
    use crate::domain::delivery::EventStatus;
    use crate::domain::proc_state::{ErrorClass, ProcState};
    use serde_json::json;

    fn facts(raw_missing: &str, holes: &str) -> PurgeFacts {
        PurgeFacts {
            raw_missing: raw_missing.parse().expect("IDs"),
            holes: holes.parse().expect("holes"),
        }
    }

    #[test]
    fn the_arguments_parse_and_an_empty_one_is_none() {
        assert_eq!("".parse::<MsgIds>(), Ok(MsgIds::default()));
        assert_eq!(
            "3, 1,,2".parse::<MsgIds>(),
            Ok(MsgIds(BTreeSet::from([1, 2, 3])))
        );
        assert_eq!("1,x".parse::<MsgIds>(), Err(ArgError::Id("x".into())));
        assert_eq!("".parse::<Holes>(), Ok(Holes::default()));
        assert_eq!(
            "4-9,12-12".parse::<Holes>(),
            Ok(Holes(vec![(4, 9), (12, 12)]))
        );
        for bad in ["4", "4-x", "9-4"] {
            assert_eq!(bad.parse::<Holes>(), Err(ArgError::Hole(bad.into())));
        }
        let holes: Holes = "4-9".parse().expect("holes");
        assert!(holes.contain(4) && holes.contain(9) && !holes.contain(10));
    }

    #[test]
    fn equal_runs_pass() {
        let s = snapshot();
        let report = purge_report(&s, &s, &PurgeFacts::default());
        assert!(report.passed(), "{:?}", report.lines);
        assert_eq!(
            report.text(),
            "purge: {\"raw_missing_dead\":0,\"vanished_in_released_holes\":0,\
             \"mark_confirmations_lost_then_missing_row\":0,\"later_outcomes_changed\":0,\
             \"other_proc_state_differences\":0,\
             \"unfinished\":0,\"flight_rows_differing\":0,\"schd_keys_differing\":0,\
             \"msg_events_missing\":0,\"msg_versions_with_other_content\":0,\
             \"raw_missing_ids\":[],\"vanished_ids\":[]}\n"
        );
    }

    #[test]
    fn a_named_loss_and_a_lost_mark_confirmation_pass_and_their_consequences_are_counted() {
        let clean = snapshot();
        let mut run = snapshot();
        // Message 1 purged and named; its flight's version 2 never sent.
        run.proc_state[0].state = ProcState::Dead;
        run.proc_state[0].error_class = Some(ErrorClass::Malformed);
        run.proc_state[0].outcome_reason = Some("raw-missing".into());
        run.msg_records.remove(1);
        run.schd_last
            .insert("101".into(), Some(json!({"flid": 101, "state_version": 1})));
        run.flights.get_mut(FLIGHT_SCHD).expect("table")[0]["state_version"] = json!(1);
        // Message 2's mark confirmation lost, then abandoned MISSING_ROW.
        run.proc_state[1].marked = false;
        run.proc_state[1].backfill_abandoned_reason = Some("MISSING_ROW".into());
        let report = purge_report(&clean, &run, &facts("1,77", ""));
        assert!(report.passed(), "{:?}", report.lines);
        let s = &report.summary;
        assert_eq!(
            (
                s.raw_missing_dead,
                s.mark_confirmations_lost_then_missing_row,
                s.other_proc_state_differences,
                s.vanished_in_released_holes
            ),
            (1, 1, 0, 0)
        );
        assert_eq!(s.raw_missing_ids, [1]);
        assert_eq!(
            (
                s.flight_rows_differing,
                s.schd_keys_differing,
                s.msg_events_missing,
                s.msg_versions_with_other_content
            ),
            (2, 1, 1, 0)
        );
    }

    #[test]
    fn a_later_outcome_changed_after_a_named_loss_is_a_consequence_not_a_failure() {
        let clean = snapshot();
        let mut run = snapshot();
        fn done(run: &mut Snapshot) -> &mut Outcome {
            run.proc_state
                .iter_mut()
                .find(|o| o.state == ProcState::Succeeded)
                .expect("a SUCCEEDED message")
        }
        done(&mut run).outcome_reason = Some("no-change: no field changed".into());
        // Named raw-missing before it: ID 0, below every message.
        let report = purge_report(&clean, &run, &facts("0", ""));
        assert_eq!(report.summary.later_outcomes_changed, 1);
        assert!(report.passed(), "{:?}", report.lines);
        // With nothing named before it, it is another difference.
        let report = purge_report(&clean, &run, &facts("", ""));
        assert_eq!(report.summary.other_proc_state_differences, 1);
        assert!(!report.passed());
        // A message left DEAD is never a consequence.
        done(&mut run).state = ProcState::Dead;
        let report = purge_report(&clean, &run, &facts("0", ""));
        assert_eq!(report.summary.other_proc_state_differences, 1);
        assert!(!report.passed());
    }

    #[test]
    fn a_message_vanished_in_a_released_hole_fails() {
        let clean = snapshot();
        let mut run = snapshot();
        run.proc_state.remove(1);
        let report = purge_report(&clean, &run, &facts("", "2-5"));
        assert!(!report.passed());
        assert_eq!(report.summary.vanished_in_released_holes, 1);
        assert_eq!(report.summary.vanished_ids, [2]);
        assert_eq!(
            report.lines,
            [
                "1 purged messages above the restored W have no PROC_STATE row: released as \
                 holes, not DEAD(MALFORMED, raw-missing), e.g. [2]"
            ]
        );
        // Outside any hole it is another difference.
        let report = purge_report(&clean, &run, &facts("", "3-5"));
        assert_eq!(report.summary.other_proc_state_differences, 1);
        assert!(!report.passed());
        // Named raw-missing, it is that.
        let report = purge_report(&clean, &run, &facts("2", "2-5"));
        assert_eq!(report.summary.raw_missing_dead, 1);
        assert!(report.passed(), "{:?}", report.lines);
    }

    #[test]
    fn another_difference_an_unfinished_row_or_an_unsent_event_fails() {
        let clean = snapshot();
        // A MISSING_ROW mark that differs in more than the mark.
        let mut run = snapshot();
        run.proc_state[1].backfill_abandoned_reason = Some("MISSING_ROW".into());
        run.proc_state[1].marked = false;
        run.proc_state[1].state = ProcState::Skipped;
        let report = purge_report(&clean, &run, &facts("", ""));
        assert_eq!(report.summary.other_proc_state_differences, 1);
        assert!(
            report.lines[0].starts_with("PROC_STATE 2: clean={"),
            "{:?}",
            report.lines
        );
        // A row still PENDING (also a difference), an outbox event DEAD.
        let mut run = snapshot();
        run.proc_state[0].state = ProcState::Pending;
        run.outbox[0].status = EventStatus::Dead;
        let report = purge_report(&clean, &run, &facts("", ""));
        assert_eq!(report.summary.unfinished, 1);
        assert_eq!(report.lines.len(), 3, "{:?}", report.lines);
        assert_eq!(report.lines[1], "1 messages PENDING/FAILED, e.g. [1]");
        assert!(
            report.lines[2].starts_with("outbox not all SENT: [{\"target\":\"KAFKA:msg\""),
            "{:?}",
            report.lines
        );
        // A message only the run has, and six other differences: five listed.
        let mut run = snapshot();
        run.proc_state = (1..=7).map(|id| outcome(id, ProcState::Skipped)).collect();
        let report = purge_report(&clean, &run, &facts("", ""));
        assert_eq!(report.summary.other_proc_state_differences, 7);
        assert_eq!(report.lines.len(), 6, "{:?}", report.lines);
        assert_eq!(report.lines[5], "PROC_STATE: … 2 more");
    }

    #[test]
    fn a_version_read_with_other_content_is_counted() {
        let clean = snapshot();
        let mut run = snapshot();
        let mut again = record("101", 0, 2, 2);
        again.value = Some(json!({"flid": "101", "remc": "b"}));
        run.msg_records.push(again);
        let mut other = clean.clone();
        other.msg_records[2].value = Some(json!({"flid": "102"}));
        let report = purge_report(&other, &run, &facts("", ""));
        assert!(report.passed(), "counted, not failed");
        assert_eq!(report.summary.msg_versions_with_other_content, 2);
        assert_eq!(report.summary.msg_events_missing, 0);
    }
}
