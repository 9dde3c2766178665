//! The page models the templates render (askama, checked at compile time;
//! `templates/console/`). Handlers fill them with text already formatted,
//! so templates hold layout only.

use super::filter::FilterForm;
use super::state::Principal;
use askama::Template;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use chrono::{DateTime, Utc};

/// The header every page shows: who is logged in and the CSRF token its
/// forms carry.
pub struct Nav {
    pub user: String,
    pub role: &'static str,
    /// The rights of the principal's role: the pages offer only the forms
    /// it may use ([`Nav::may`]).
    pub granted: super::rights::Granted,
    pub role_of: super::access::Role,
    /// Logged in through the form: a logout button.
    pub session: bool,
    pub csrf: String,
    /// The `id` of the active menu entry.
    pub active: &'static str,
    /// What this binary is, for the footer (as `msgx --version`).
    pub build: String,
}

impl Nav {
    pub fn of(who: &Principal, active: &'static str) -> Nav {
        Nav {
            user: who.name().to_string(),
            role: who.role().as_str(),
            granted: who.granted(),
            role_of: who.role(),
            session: matches!(who, Principal::Session { .. }),
            csrf: who.csrf().to_string(),
            active,
            build: crate::build_info::get().one_line(),
        }
    }
}

impl Nav {
    /// Whether the principal may use the right named `right` on one item
    /// (templates: `{% if nav.may("replay") %}`); an unknown name is never
    /// granted.
    pub fn may(&self, right: &str) -> bool {
        crate::config::Right::parse(right)
            .is_some_and(|r| super::rights::may(self.granted, self.role_of, r, 1).is_ok())
    }
}

/// A labelled value with a stable id.
pub struct Fact {
    pub id: String,
    pub label: String,
    pub value: String,
    /// Draws attention (a problem).
    pub warn: bool,
}

impl Fact {
    pub fn new(id: &str, label: &str, value: impl Into<String>) -> Fact {
        Fact {
            id: id.into(),
            label: label.into(),
            value: value.into(),
            warn: false,
        }
    }
    pub fn warn_if(mut self, warn: bool) -> Fact {
        self.warn = warn;
        self
    }
}

/// A table cell, linked when `href` is set.
pub struct Cell {
    pub text: String,
    pub href: Option<String>,
}

impl Cell {
    pub fn text(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            href: None,
        }
    }
    pub fn link(t: impl Into<String>, href: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            href: Some(href.into()),
        }
    }
}

/// A per-row action button: a form POSTing `fields` to `url` (the first
/// step, which shows the confirmation page).
pub struct RowAction {
    pub form_id: String,
    pub url: String,
    pub fields: Vec<(String, String)>,
    pub label: &'static str,
}

pub struct Row {
    pub id: String,
    pub cells: Vec<Cell>,
    pub actions: Vec<RowAction>,
}

pub struct Table {
    pub id: String,
    pub columns: Vec<&'static str>,
    pub rows: Vec<Row>,
    pub empty: &'static str,
}

impl Table {
    pub fn new(id: &str, columns: Vec<&'static str>, empty: &'static str) -> Table {
        Table {
            id: id.into(),
            columns,
            rows: Vec::new(),
            empty,
        }
    }
    pub fn has_actions(&self) -> bool {
        self.rows.iter().any(|r| !r.actions.is_empty())
    }
}

/// A titled part of a page: facts, a table, or both.
pub struct Section {
    pub id: String,
    pub heading: String,
    pub facts: Vec<Fact>,
    pub table: Option<Table>,
    /// Inline SVG rendered by [`super::chart`] (trusted: numbers and escaped text).
    pub svg: Vec<String>,
}

impl Section {
    pub fn new(id: &str, heading: &str) -> Section {
        Section {
            id: id.into(),
            heading: heading.into(),
            facts: Vec::new(),
            table: None,
            svg: Vec::new(),
        }
    }
}

#[derive(Template)]
#[template(path = "console/login.html")]
pub struct LoginPage {
    pub error: Option<String>,
    /// The login CSRF token (also in the form's cookie).
    pub csrf: String,
    /// The password form is offered (a users file is configured).
    pub password: bool,
    /// Single sign-on is offered, with this button text.
    pub sso: Option<String>,
}

/// Overview, DLQ, abandoned backfill, holes, requests, jobs: sections.
#[derive(Template)]
#[template(path = "console/sections.html")]
pub struct SectionsPage {
    pub nav: Nav,
    pub title: String,
    pub page_id: &'static str,
    pub intro: String,
    pub sections: Vec<Section>,
    /// The Requests page's send form (shown to an operator).
    pub request_form: bool,
    /// The live view's stream: the sections and intro are `data-live`
    /// fragments the page's script refreshes; `None` = a plain page.
    pub live: Option<String>,
}

#[derive(Template)]
#[template(path = "console/messages.html")]
pub struct MessagesPage {
    pub nav: Nav,
    pub filter: FilterForm,
    pub error: Option<String>,
    pub states: Vec<&'static str>,
    pub classes: Vec<&'static str>,
    pub table: Table,
    pub next: Option<String>,
}

#[derive(Template)]
#[template(path = "console/message.html")]
pub struct MessagePage {
    pub nav: Nav,
    pub msg_id: i64,
    pub facts: Vec<Fact>,
    pub events: Table,
    /// The raw XML (its start when `raw_cut`), or `None` with `raw_note`
    /// saying why.
    pub raw: Option<String>,
    pub raw_note: String,
    /// Says the raw XML shown is cut and how large the whole is.
    pub raw_cut: Option<String>,
    /// The link to the whole raw text (a download).
    pub download: Option<String>,
    /// The decoded message as pretty JSON: one page of its records.
    pub decoded: Option<String>,
    /// Which records are shown (messages with records), and whether the
    /// decoded text is cut.
    pub records: Option<String>,
    /// Links to the previous and next page of records.
    pub prev: Option<String>,
    pub next: Option<String>,
    pub can_replay: bool,
    pub can_skip: bool,
    /// The live view's stream (the facts, actions and events are `data-live`
    /// fragments); `None` = a plain page.
    pub live: Option<String>,
}

#[derive(Template)]
#[template(path = "console/flights.html")]
pub struct FlightsPage {
    pub nav: Nav,
    pub flid: String,
    pub flno: String,
    pub day: String,
    pub error: Option<String>,
    pub table: Table,
}

#[derive(Template)]
#[template(path = "console/flight.html")]
pub struct FlightPage {
    pub nav: Nav,
    pub flid: i64,
    pub facts: Vec<Fact>,
    pub shares: Table,
    pub milestones: Table,
    pub state_json: String,
    /// Every version, newest first (issue 37 item 6; [`super::history`]).
    pub history: Vec<super::history::Entry>,
    /// The next (older) page of versions.
    pub history_next: Option<String>,
}

/// The confirmation step of an action: what will happen, the reason, and
/// the same fields again with `step=apply`.
#[derive(Template)]
#[template(path = "console/confirm.html")]
pub struct ConfirmPage {
    pub nav: Nav,
    pub title: String,
    pub url: String,
    pub lines: Vec<String>,
    /// Rows the action applies to, when it is a bulk action.
    pub count: Option<i64>,
    pub fields: Vec<(String, String)>,
    pub reason: String,
    pub error: Option<String>,
    /// Nothing to do: no apply button.
    pub blocked: bool,
    /// Show the replay's "force" checkbox.
    pub offer_force: bool,
}

#[derive(Template)]
#[template(path = "console/result.html")]
pub struct ResultPage {
    pub nav: Nav,
    pub title: String,
    pub ok: bool,
    pub lines: Vec<String>,
    pub back: String,
}

/// The 403 page of a refused action: names the missing right.
#[derive(Template)]
#[template(path = "console/forbidden.html")]
pub struct ForbiddenPage {
    pub nav: Nav,
    pub reason: String,
    pub missing: &'static str,
    pub role: &'static str,
    pub action: String,
}

/// Renders a page; a template failure is a 500 that names nothing internal.
pub fn page(status: StatusCode, t: &impl Template) -> Response {
    match t.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "Console: a page did not render");
            (StatusCode::INTERNAL_SERVER_ERROR, "page did not render").into_response()
        }
    }
}

/// A time as the pages show it.
pub fn time(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(|| "-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

/// A count of seconds as the pages show it (`95 s`, `-`).
pub fn seconds(s: Option<i64>) -> String {
    s.map_or_else(|| "-".into(), |s| format!("{s} s"))
}

/// The operator actions, each posted to `/actions/<name>` (first the
/// confirmation, then the apply step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Replay the listed messages.
    Replay,
    /// Replay every message the list's filter matches.
    ReplayFilter,
    Skip,
    EventResend,
    EventDiscard,
    BackfillReopen,
    BackfillReconcile,
    /// Send an upstream request (RQFD/RQRD).
    Request,
    JobRun,
    /// Re-send flights' records as REQUEST records (`msgx events republish`).
    Republish,
    /// Pause a job (`msgx jobs pause`).
    JobPause,
    /// Resume a paused job (`msgx jobs resume`).
    JobResume,
}

impl Action {
    pub const ALL: [Action; 12] = [
        Action::Replay,
        Action::ReplayFilter,
        Action::Skip,
        Action::EventResend,
        Action::EventDiscard,
        Action::BackfillReopen,
        Action::BackfillReconcile,
        Action::Request,
        Action::JobRun,
        Action::Republish,
        Action::JobPause,
        Action::JobResume,
    ];

    /// The name in the URL.
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::Replay => "replay",
            Action::ReplayFilter => "replay-filter",
            Action::Skip => "skip",
            Action::EventResend => "event-resend",
            Action::EventDiscard => "event-discard",
            Action::BackfillReopen => "backfill-reopen",
            Action::BackfillReconcile => "backfill-reconcile",
            Action::Request => "request",
            Action::JobRun => "job-run",
            Action::Republish => "republish",
            Action::JobPause => "job-pause",
            Action::JobResume => "job-resume",
        }
    }

    /// The action named `name` in a URL, if any.
    pub fn parse(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// The right it needs (docs/console.md "Roles and rights").
    pub const fn right(self) -> crate::config::Right {
        use crate::config::Right;
        match self {
            Action::Replay | Action::ReplayFilter => Right::Replay,
            Action::Skip => Right::Skip,
            Action::EventResend => Right::Resend,
            Action::EventDiscard => Right::Discard,
            Action::BackfillReopen => Right::Reopen,
            Action::BackfillReconcile => Right::Reconcile,
            Action::Request => Right::Request,
            Action::JobRun => Right::RunJob,
            Action::Republish => Right::Republish,
            Action::JobPause | Action::JobResume => Right::PauseJob,
        }
    }

    /// The URL its forms post to.
    pub fn path(self) -> String {
        format!("/actions/{}", self.as_str())
    }
}
