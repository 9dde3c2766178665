//! The Audit page's filter as its form sends it (user, action, time range,
//! target), parsed into a store query with a readable error per field, and
//! the keyset cursor (`before`, an OPERATOR_ACTION.ID) of the next page.
//! Pure; the same rules as the Messages filter ([`super::filter`]).

use super::filter::{FilterError, MAX_TEXT_CHARS, cursor, instant, next_cursor, opt};
use crate::store::pg::operator_action::ActionQuery;
use serde::{Deserialize, Serialize};

/// The form fields (all text; empty = unset), also the page's query string.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct AuditForm {
    /// The acting user, exactly.
    #[serde(default)]
    pub user: String,
    /// The action, e.g. `EVENT_RESEND` (case-insensitive).
    #[serde(default)]
    pub action: String,
    /// `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]` (UTC), applied at or after.
    #[serde(default)]
    pub from: String,
    /// Same forms, applied before.
    #[serde(default)]
    pub to: String,
    /// A substring of the target (`msg_event:4711`, a FLID, a user).
    #[serde(default)]
    pub target: String,
    /// The keyset cursor: rows with a smaller ID.
    #[serde(default)]
    pub before: String,
}

/// A bounded text field: at most [`MAX_TEXT_CHARS`] characters.
fn bounded(field: &'static str, text: &str) -> Result<String, FilterError> {
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(FilterError {
            field,
            problem: format!("{chars} characters; at most {MAX_TEXT_CHARS} are searched"),
        });
    }
    Ok(text.to_string())
}

impl AuditForm {
    /// The store query and the cursor.
    pub fn parse(&self) -> Result<(ActionQuery, Option<i64>), FilterError> {
        let action = opt(&self.action)
            .map(|a| {
                let up = a.to_ascii_uppercase();
                if up.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
                    Ok(up)
                } else {
                    Err(FilterError {
                        field: "action",
                        problem: format!("{a:?} is not an action name (e.g. EVENT_RESEND)"),
                    })
                }
            })
            .transpose()?;
        let q = ActionQuery {
            actor: opt(&self.user).map(|u| bounded("user", u)).transpose()?,
            action,
            from: opt(&self.from).map(|t| instant("from", t)).transpose()?,
            to: opt(&self.to).map(|t| instant("to", t)).transpose()?,
            target: opt(&self.target)
                .map(|t| bounded("target", t))
                .transpose()?,
        };
        Ok((q, cursor(&self.before, "an action ID")?))
    }

    /// The same filter on the page after `last` (the smallest ID shown),
    /// when the page was full.
    pub fn next_page(&self, rows_shown: usize, last: Option<i64>) -> Option<AuditForm> {
        Some(AuditForm {
            before: next_cursor(rows_shown, last)?,
            ..self.clone()
        })
    }

    /// The form as a query string (links to the next page).
    pub fn query_string(&self) -> String {
        serde_urlencoded::to_string(self).unwrap_or_default()
    }

    /// The refused form shown again: each field cut to [`MAX_TEXT_CHARS`].
    pub fn cut(&mut self) {
        for field in [
            &mut self.user,
            &mut self.action,
            &mut self.from,
            &mut self.to,
            &mut self.target,
            &mut self.before,
        ] {
            *field = field.chars().take(MAX_TEXT_CHARS).collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::filter::PAGE_SIZE;

    fn form(f: impl FnOnce(&mut AuditForm)) -> AuditForm {
        let mut x = AuditForm::default();
        f(&mut x);
        x
    }

    #[test]
    fn every_field_parses_into_the_query() {
        let (q, before) = form(|f| {
            f.user = " alice ".into();
            f.action = "event_resend".into();
            f.from = "2026-12-01".into();
            f.to = "2026-12-02T10:30".into();
            f.target = "msg_event:".into();
            f.before = "77".into();
        })
        .parse()
        .expect("parses");
        assert_eq!(q.actor.as_deref(), Some("alice"));
        assert_eq!(q.action.as_deref(), Some("EVENT_RESEND"));
        assert_eq!(
            q.from.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-12-01T00:00:00+00:00")
        );
        assert_eq!(
            q.to.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-12-02T10:30:00+00:00")
        );
        assert_eq!(q.target.as_deref(), Some("msg_event:"));
        assert_eq!(before, Some(77));
        let (all, none) = AuditForm::default().parse().expect("empty parses");
        assert_eq!((all, none), (ActionQuery::default(), None));
    }

    #[test]
    fn a_bad_or_over_long_field_is_named() {
        let field = |f: AuditForm| f.parse().expect_err("refused").field;
        assert_eq!(field(form(|f| f.action = "resend;drop".into())), "action");
        assert_eq!(field(form(|f| f.from = "yesterday".into())), "from");
        assert_eq!(field(form(|f| f.before = "x".into())), "before");
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        assert_eq!(field(form(|f| f.target = long.clone())), "target");
        let mut f = form(|f| f.user = long);
        assert_eq!(field(f.clone()), "user");
        f.cut();
        assert_eq!(f.user.chars().count(), MAX_TEXT_CHARS);
    }

    #[test]
    fn the_next_page_starts_below_the_last_row_of_a_full_page() {
        let f = form(|f| f.user = "alice".into());
        assert_eq!(f.next_page(3, Some(5)), None);
        let next = f.next_page(PAGE_SIZE as usize, Some(77)).expect("full");
        assert_eq!((next.before.as_str(), next.user.as_str()), ("77", "alice"));
        assert!(next.query_string().contains("before=77"));
    }
}
