//! A flight's history on its console page (issue 37 item 6): every version
//! with the message that made it and its field-level changes, from the
//! `KAFKA:msg` notifications the outbox still holds (docs/events.md
//! "Field-level changes"). Versions no longer there (past
//! `msgx.pipeline.event-retention`) are listed as one range each, so every
//! version from 1 to the current one appears. Pure: text for the page.

use crate::domain::changes::{ChangeOp, FieldChange};
use serde_json::Value;

/// Versions (outbox rows) per page.
pub const VERSIONS_PER_PAGE: i64 = 20;
/// Changes shown per version; the rest are counted and the message page
/// holds them all.
pub const CHANGES_PER_VERSION: usize = 12;
/// The longest value shown, in characters.
const VALUE_CHARS: usize = 60;

/// One line of the history: a version still in the outbox, or a range of
/// versions past retention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// The index of the row (in the rows given) of this version.
    Version(usize),
    /// Versions `from..=to` are no longer in the outbox.
    Gone { from: i64, to: i64 },
}

/// The lines of one page: `versions` are the page's rows' STATE_VERSIONs,
/// newest first; `above` is the version just above the page (the current
/// version + 1 on the first page, the previous page's last version after);
/// `last_page` says no older row is in the outbox, so the versions below
/// the last row down to 1 are gone.
pub fn lines(versions: &[i64], above: i64, last_page: bool) -> Vec<Line> {
    let mut out = Vec::new();
    let mut next_expected = above - 1;
    for (i, v) in versions.iter().enumerate() {
        if *v < next_expected {
            out.push(Line::Gone {
                from: v + 1,
                to: next_expected,
            });
        }
        out.push(Line::Version(i));
        next_expected = next_expected.min(v - 1);
    }
    if last_page && next_expected >= 1 {
        out.push(Line::Gone {
            from: 1,
            to: next_expected,
        });
    }
    out
}

/// The change lines of a notification's `changes` (at most `cap`) and how
/// many more there are. A value that is not a list of changes gives none.
pub fn change_lines(changes: Option<&Value>, cap: usize) -> (Vec<String>, usize) {
    let list: Vec<FieldChange> = changes
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    let more = list.len().saturating_sub(cap);
    (list.iter().take(cap).map(change_line).collect(), more)
}

/// `FIELD[i] OP: old → new`; for a changed list item (objects on both
/// sides) only the keys that differ, `FIELD[i] CHANGED gate: A1 → B7`.
pub fn change_line(c: &FieldChange) -> String {
    let path = match c.index {
        Some(i) => format!("{}[{i}]", c.field),
        None => c.field.clone(),
    };
    let op = match c.op {
        ChangeOp::Set => "SET",
        ChangeOp::Changed => "CHANGED",
        ChangeOp::Added => "ADDED",
        ChangeOp::Removed => "REMOVED",
    };
    if let (Value::Object(old), Value::Object(new)) = (&c.old, &c.new) {
        let diffs: Vec<String> = new
            .iter()
            .filter(|(k, v)| old.get(*k) != Some(*v))
            .map(|(k, v)| {
                format!(
                    "{k}: {} → {}",
                    value(old.get(k).unwrap_or(&Value::Null)),
                    value(v)
                )
            })
            .collect();
        return format!("{path} {op} {}", diffs.join(", "));
    }
    format!("{path} {op}: {} → {}", value(&c.old), value(&c.new))
}

/// A value as compact text (strings unquoted, `-` for null), cut to
/// [`VALUE_CHARS`].
fn value(v: &Value) -> String {
    let text = match v {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.chars().count() > VALUE_CHARS {
        let cut: String = text.chars().take(VALUE_CHARS).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_version_is_a_line_or_in_a_gone_range() {
        // Current version 9; the outbox holds 9, 8 (twice: a republish), 5.
        assert_eq!(
            lines(&[9, 8, 8, 5], 10, true),
            vec![
                Line::Version(0),
                Line::Version(1),
                Line::Version(2),
                Line::Gone { from: 6, to: 7 },
                Line::Version(3),
                Line::Gone { from: 1, to: 4 },
            ]
        );
        // A full page: what lies below is for the next page.
        assert_eq!(
            lines(&[4, 3], 7, false),
            vec![
                Line::Gone { from: 5, to: 6 },
                Line::Version(0),
                Line::Version(1),
            ]
        );
        // Nothing left in the outbox at all.
        assert_eq!(lines(&[], 4, true), vec![Line::Gone { from: 1, to: 3 }]);
        assert_eq!(lines(&[1], 2, true), vec![Line::Version(0)]);
    }

    #[test]
    fn a_change_is_one_compact_line() {
        let (lines, more) = change_lines(
            Some(&json!([
                {"field": "ETDT", "index": null, "op": "SET", "old": null, "new": "2026-12-01T08:30:00+08:00"},
                {"field": "GTDT", "index": 0, "op": "CHANGED",
                 "old": {"ordinal": 1, "gate": "A1", "pgct": null},
                 "new": {"ordinal": 1, "gate": "B7", "pgct": null}},
                {"field": "GTDT", "index": 1, "op": "REMOVED", "old": {"gate": "C3"}, "new": null},
            ])),
            2,
        );
        assert_eq!(
            lines,
            vec![
                "ETDT SET: - → 2026-12-01T08:30:00+08:00".to_string(),
                "GTDT[0] CHANGED gate: A1 → B7".to_string(),
            ]
        );
        assert_eq!(more, 1);
        let long = "x".repeat(100);
        let (l, _) = change_lines(
            Some(&json!([{"field": "RMKS", "index": null, "op": "SET", "old": long, "new": null}])),
            5,
        );
        assert!(l[0].ends_with("… → -"), "{}", l[0]);
        assert_eq!(change_lines(None, 5), (vec![], 0));
        assert_eq!(change_lines(Some(&json!("junk")), 5), (vec![], 0));
    }
}

/// One row of the history table as the template shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `version-<EVENT_ID>`, or `versions-gone-<from>-<to>`.
    pub id: String,
    /// `7`, or `1–4` for a range past retention.
    pub version: String,
    /// The message that made it, and its page.
    pub msg: Option<(String, String)>,
    /// `TYPE-STYP · EVENT_KIND`.
    pub kind: String,
    pub outcome: String,
    pub written: String,
    pub changes: Vec<String>,
    /// "+N more" with the message page's link, when capped.
    pub more: Option<(String, String)>,
    /// A range past the outbox retention.
    pub gone: bool,
}

impl Entry {
    /// The row of versions `from..=to`, no longer in the outbox.
    pub fn gone(from: i64, to: i64) -> Entry {
        let version = if from == to {
            from.to_string()
        } else {
            format!("{from}–{to}")
        };
        Entry {
            id: format!("versions-gone-{from}-{to}"),
            version,
            msg: None,
            kind: String::new(),
            outcome: String::new(),
            written: String::new(),
            changes: vec![
                "past the outbox retention (msgx.pipeline.event-retention): the changes are no longer stored".into(),
            ],
            more: None,
            gone: true,
        }
    }
}
