//! The Messages filter as the page's form sends it:
//! parsed into a store query with a readable error per field, and the
//! keyset cursor (`before`, a MSG_ID) of the next page. Pure.

use crate::domain::ErrorClass;
use crate::domain::proc_state::ProcState;
use crate::store::pg::message_search::MessageQuery;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};

/// Rows per page.
pub const PAGE_SIZE: i64 = 50;

/// The form fields (all text; empty = unset). The same names are the
/// query string of `/messages` and the hidden fields of a bulk action.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct FilterForm {
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub class: String,
    /// `TYPE` or `TYPE-STYP`.
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub flid: String,
    /// `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]` (UTC), enqueued at or after.
    #[serde(default)]
    pub from: String,
    /// Same forms, enqueued before.
    #[serde(default)]
    pub to: String,
    /// Substring of the error or outcome reason.
    #[serde(default)]
    pub text: String,
    /// The keyset cursor: rows with a smaller MSG_ID.
    #[serde(default)]
    pub before: String,
}

/// A field that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FilterError {
    pub field: &'static str,
    pub problem: String,
}

/// The longest reason-text filter, in characters: the
/// text becomes an ILIKE over PROC_STATE's reasons, and a 32,000-character
/// one ran 21.5 s on 200,000 rows.
pub const MAX_TEXT_CHARS: usize = 200;

pub(super) fn opt(s: &str) -> Option<&str> {
    Some(s.trim()).filter(|s| !s.is_empty())
}

/// The keyset cursor field `before` (`None` when empty): an ID, `what`
/// names it in the error.
pub(super) fn cursor(text: &str, what: &str) -> Result<Option<i64>, FilterError> {
    opt(text)
        .map(|b| {
            b.parse::<i64>().map_err(|_| FilterError {
                field: "before",
                problem: format!("{b:?} is not {what}"),
            })
        })
        .transpose()
}

/// The cursor of the page after `last` (the smallest ID shown), when the
/// page of `rows_shown` rows was full.
pub(super) fn next_cursor(rows_shown: usize, last: Option<i64>) -> Option<String> {
    last.filter(|_| rows_shown as i64 >= PAGE_SIZE)
        .map(|l| l.to_string())
}

pub(super) fn instant(field: &'static str, text: &str) -> Result<DateTime<Utc>, FilterError> {
    if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    for layout in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, layout) {
            return Ok(t.and_utc());
        }
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| FilterError {
            field,
            problem: format!("{text:?} is not a date (YYYY-MM-DD) or time (YYYY-MM-DDTHH:MM, UTC)"),
        })
}

impl FilterForm {
    /// The store query and the cursor.
    pub fn parse(&self) -> Result<(MessageQuery, Option<i64>), FilterError> {
        let mut q = MessageQuery::default();
        if let Some(s) = opt(&self.state) {
            let state: ProcState = s.to_ascii_uppercase().parse().map_err(|_| FilterError {
                field: "state",
                problem: format!("{s:?} is not a state"),
            })?;
            q.state = Some(state);
        }
        if let Some(c) = opt(&self.class) {
            let class = ErrorClass::parse(c).ok_or_else(|| FilterError {
                field: "class",
                problem: format!("{c:?} is not an error class"),
            })?;
            q.error_class = Some(class.as_str().to_string());
        }
        if let Some(k) = opt(&self.kind) {
            let up = k.to_ascii_uppercase();
            match up.split_once('-') {
                Some((t, s)) if !t.is_empty() && !s.is_empty() => {
                    q.msg_type = Some(t.to_string());
                    q.msg_styp = Some(s.to_string());
                }
                Some(_) => {
                    return Err(FilterError {
                        field: "kind",
                        problem: format!("{k:?} is not TYPE or TYPE-STYP"),
                    });
                }
                None => q.msg_type = Some(up),
            }
        }
        if let Some(f) = opt(&self.flid) {
            q.flid = Some(f.parse().map_err(|_| FilterError {
                field: "flid",
                problem: format!("{f:?} is not a FLID (a number)"),
            })?);
        }
        q.from = opt(&self.from).map(|t| instant("from", t)).transpose()?;
        q.to = opt(&self.to).map(|t| instant("to", t)).transpose()?;
        if let Some(t) = opt(&self.text) {
            let chars = t.chars().count();
            if chars > MAX_TEXT_CHARS {
                return Err(FilterError {
                    field: "text",
                    problem: format!("{chars} characters; at most {MAX_TEXT_CHARS} are searched"),
                });
            }
            q.text = Some(t.to_string());
        }
        Ok((q, cursor(&self.before, "a MSG_ID")?))
    }

    /// The same filter on the page after `last` (the smallest MSG_ID shown),
    /// when the page was full.
    pub fn next_page(&self, rows_shown: usize, last: Option<i64>) -> Option<FilterForm> {
        Some(FilterForm {
            before: next_cursor(rows_shown, last)?,
            ..self.clone()
        })
    }

    /// The filter without its cursor (what a bulk action applies to).
    pub fn without_cursor(&self) -> FilterForm {
        FilterForm {
            before: String::new(),
            ..self.clone()
        }
    }

    /// The form as a query string (links to the next page).
    pub fn query_string(&self) -> String {
        serde_urlencoded::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(f: impl FnOnce(&mut FilterForm)) -> FilterForm {
        let mut x = FilterForm::default();
        f(&mut x);
        x
    }

    #[test]
    fn every_field_parses_into_the_query() {
        let f = form(|f| {
            f.state = "dead".into();
            f.class = "malformed".into();
            f.kind = "flop-appt".into();
            f.flid = " 9001 ".into();
            f.from = "2026-12-01".into();
            f.to = "2026-12-01T10:30".into();
            f.text = "raw-missing".into();
            f.before = "120".into();
        });
        let (q, before) = f.parse().expect("parses");
        assert_eq!(q.state, Some(ProcState::Dead));
        assert_eq!(q.error_class.as_deref(), Some("MALFORMED"));
        assert_eq!(
            (q.msg_type.as_deref(), q.msg_styp.as_deref()),
            (Some("FLOP"), Some("APPT"))
        );
        assert_eq!(q.flid, Some(9001));
        assert_eq!(
            q.from.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-12-01T00:00:00+00:00")
        );
        assert_eq!(
            q.to.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-12-01T10:30:00+00:00")
        );
        assert_eq!(q.text.as_deref(), Some("raw-missing"));
        assert_eq!(before, Some(120));
        let (all, none) = FilterForm::default().parse().expect("empty parses");
        assert_eq!((all, none), (MessageQuery::default(), None));
        let (q, _) = form(|f| f.kind = "schd".into()).parse().expect("type only");
        assert_eq!((q.msg_type.as_deref(), q.msg_styp), (Some("SCHD"), None));
    }

    #[test]
    fn a_bad_field_is_named() {
        let field = |f: FilterForm| f.parse().expect_err("refused").field;
        assert_eq!(field(form(|f| f.state = "LOST".into())), "state");
        assert_eq!(field(form(|f| f.class = "OOPS".into())), "class");
        assert_eq!(field(form(|f| f.kind = "FLOP-".into())), "kind");
        assert_eq!(field(form(|f| f.flid = "abc".into())), "flid");
        assert_eq!(field(form(|f| f.from = "yesterday".into())), "from");
        assert_eq!(field(form(|f| f.before = "x".into())), "before");
    }

    #[test]
    fn the_next_page_starts_below_the_last_row_of_a_full_page() {
        let f = form(|f| f.state = "DEAD".into());
        assert_eq!(f.next_page(10, Some(5)), None);
        let next = f
            .next_page(PAGE_SIZE as usize, Some(77))
            .expect("full page");
        assert_eq!(next.before, "77");
        assert_eq!(next.state, "DEAD");
        assert!(next.query_string().contains("before=77"));
        assert_eq!(next.without_cursor().before, "");
    }
}
