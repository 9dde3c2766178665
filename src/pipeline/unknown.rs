//! Reporting the elements the codec kept but did not understand (the codec
//! keeps them, `codec::model::UnknownElement`, "never
//! dropped silently"). Once per message, on its first processing attempt
//! (a PENDING head, whatever the outcome; retries of a FAILED message do
//! not count again, a replay does), the pump:
//!
//! - counts them in `msgx_codec_unknown_elements_total{kind,name}`
//!   (docs/metrics.md), with bounded labels: the sender chooses both the
//!   element names and, for an unknown subtype, the STYP, so neither may
//!   create series at will (see [`kind_label`], [`name_label`], [`MAX_SERIES`]);
//! - logs one WARN per element name per run (at most [`MAX_LOGGED_PER_RUN`]
//!   names, then one line saying the rest is not logged).
//!
//! `msgx msg show` lists them for one message (commands/inspect.rs).

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::codec::{DecodedMessage, FLOP_SUBTYPES, Meta, REF_TYPES, UnknownElement};

/// Distinct `(kind, name)` series this process exports at most; a new name
/// past it is counted under `name="_other"` (its kind is bounded already).
pub const MAX_SERIES: usize = 256;
/// Distinct element names one pump run logs at most.
pub const MAX_LOGGED_PER_RUN: usize = 100;
/// The label for whatever does not get a label of its own.
pub const OTHER: &str = "_other";
/// Longest element name that becomes a label (SIS tags have four letters;
/// `@ATTR` and `#text` fit too).
const MAX_NAME_CHARS: usize = 16;

/// The series registered so far (process-wide, as the metrics recorder is).
static SERIES: Mutex<Option<HashSet<(String, String)>>> = Mutex::new(None);

/// `TYPE-STYP` when both are ones msgx knows (sis-format §1–§5), so the
/// label set is fixed: `TYPE-_other` for a known TYPE with an unexpected
/// STYP, `_other` for anything else.
pub fn kind_label(meta: &Meta) -> String {
    let (t, s) = (meta.msg_type.as_str(), meta.styp.as_str());
    let known_type = matches!(t, "SCHD" | "FLOP" | "SCHS") || REF_TYPES.binary_search(&t).is_ok();
    if !known_type {
        return OTHER.to_string();
    }
    let known_styp = if t == "FLOP" {
        FLOP_SUBTYPES.binary_search(&s).is_ok()
    } else {
        matches!(s, "DNLD" | "RESP" | "ADFT" | "DEL" | "ADD" | "UPD")
    };
    if known_styp {
        format!("{t}-{s}")
    } else {
        format!("{t}-{OTHER}")
    }
}

/// The element name as a label: itself when it is short and made of name
/// characters, else `_other`.
pub fn name_label(name: &str) -> &str {
    let plain = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@' | '#'));
    if plain { name } else { OTHER }
}

/// The name label for `(kind, name)`, registering the series while fewer
/// than [`MAX_SERIES`] exist; `_other` once the cap is reached.
fn series_name(kind: &str, name: &str) -> String {
    let name = name_label(name);
    let mut guard = SERIES.lock().unwrap_or_else(|e| e.into_inner());
    let series = guard.get_or_insert_with(HashSet::new);
    let key = (kind.to_string(), name.to_string());
    if series.contains(&key) {
        return key.1;
    }
    if series.len() < MAX_SERIES {
        series.insert(key.clone());
        return key.1;
    }
    OTHER.to_string()
}

/// One pump run's reporter: remembers which names it has logged.
#[derive(Debug, Default)]
pub struct UnknownReporter {
    logged: Mutex<HashSet<String>>,
    capped: AtomicBool,
}

impl UnknownReporter {
    /// Counts and logs the unknown elements of message `msg_id` (module docs).
    pub fn report(&self, msg_id: i64, msg: &DecodedMessage) {
        let unknown = msg.unknown_elements();
        if unknown.is_empty() {
            return;
        }
        let kind = kind_label(&msg.meta);
        let mut by_name: BTreeMap<&str, (u64, &UnknownElement)> = BTreeMap::new();
        for u in unknown {
            by_name.entry(u.name.as_str()).or_insert((0, u)).0 += 1;
        }
        for (name, (count, first)) in by_name {
            let label = series_name(&kind, name);
            metrics::counter!("msgx_codec_unknown_elements_total", "kind" => kind.clone(), "name" => label)
                .increment(count);
            self.log_once(msg_id, msg, name, count, first);
        }
    }

    fn log_once(
        &self,
        msg_id: i64,
        msg: &DecodedMessage,
        name: &str,
        count: u64,
        first: &UnknownElement,
    ) {
        let mut logged = self.logged.lock().unwrap_or_else(|e| e.into_inner());
        if logged.contains(name) {
            return;
        }
        if logged.len() >= MAX_LOGGED_PER_RUN {
            if !self.capped.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    msg_id,
                    logged = MAX_LOGGED_PER_RUN,
                    "More unknown element names in this run; not logged (counted in msgx_codec_unknown_elements_total)"
                );
            }
            return;
        }
        logged.insert(name.to_string());
        let cut = crate::error_text::cut;
        tracing::warn!(
            msg_id,
            kind = %cut(&format!("{}-{}", msg.meta.msg_type, msg.meta.styp)),
            name = %cut(name),
            count,
            path = %cut(&first.path),
            raw = %cut(&first.raw),
            "Unknown element kept, not applied (logged once per name per run; `msgx msg show` lists all)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(t: &str, s: &str) -> Meta {
        Meta {
            sndr: "AODB".into(),
            seqn: "1".into(),
            dttm: None,
            msg_type: t.into(),
            styp: s.into(),
        }
    }

    #[test]
    fn kind_labels_come_from_fixed_lists() {
        assert_eq!(kind_label(&meta("FLOP", "GTDT")), "FLOP-GTDT");
        assert_eq!(kind_label(&meta("SCHD", "DNLD")), "SCHD-DNLD");
        assert_eq!(kind_label(&meta("GLST", "UPD")), "GLST-UPD");
        assert_eq!(kind_label(&meta("SCHD", "X1234")), "SCHD-_other");
        assert_eq!(kind_label(&meta("FLOP", "DNLD")), "FLOP-_other");
        assert_eq!(kind_label(&meta("ZZZZ", "DNLD")), "_other");
    }

    #[test]
    fn odd_names_share_one_label() {
        assert_eq!(name_label("GTXX"), "GTXX");
        assert_eq!(name_label("@VX"), "@VX");
        assert_eq!(name_label("#text"), "#text");
        assert_eq!(name_label(&"A".repeat(17)), OTHER);
        assert_eq!(name_label("ns:tag"), OTHER);
        assert_eq!(name_label("ÄÖ"), OTHER);
    }
}
