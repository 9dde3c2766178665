//! The console's pages, each read through the read model
//! the CLI uses: [`crate::status::collect`] (`msgx status`),
//! [`crate::inspect`] (`msgx msg show`, `flight show`, `holes`),
//! [`crate::delivery::dead_letters`] (`msgx events dead`),
//! [`crate::backfill::ops`] (`msgx backfill abandoned`), the request and
//! job-run stores (`msgx request list`, `msgx jobs`).

use super::chart;
use super::filter::{self, FilterForm, PAGE_SIZE};
use super::history;
use super::live_stream::Watch;
use super::session;
use super::state::{ConsoleState, Principal, Transport};
use super::views::{
    Action, Cell, Fact, FlightPage, FlightsPage, LoginPage, MessagePage, MessagesPage, Nav, Row,
    RowAction, Section, SectionsPage, Table, page, seconds, time,
};
use crate::config::Right;
use crate::domain::ErrorClass;
use crate::domain::delivery::EventStatus;
use crate::domain::proc_state::ProcState;
use crate::inspect::{self, Raw};
use crate::store::pg::{
    compat_request, facts, flight_search, job_pause, job_run, message_search, msg_event, req_track,
};
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{Duration, NaiveDate};
use serde::Deserialize;
use std::fmt::Display;

/// Hours the Overview charts cover.
const CHART_HOURS: i64 = 12;
/// Rows the list pages show at most.
const LIST_LIMIT: i64 = 200;

/// A store could not be read: logged in full, answered without internals.
pub(super) fn unavailable(what: &str, e: impl Display) -> Response {
    tracing::error!(error = %e, page = what, "Console: a store could not be read");
    (
        StatusCode::SERVICE_UNAVAILABLE,
        format!("{what}: the database could not be read (see the msgx log)"),
    )
        .into_response()
}

fn opt<T: Display>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "-".into(), |v| v.to_string())
}

fn action(
    form_id: String,
    to: Action,
    fields: Vec<(&str, String)>,
    label: &'static str,
) -> RowAction {
    RowAction {
        form_id,
        url: to.path(),
        fields: fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        label,
    }
}

pub async fn login_form(
    State(s): State<ConsoleState>,
    transport: Option<Extension<Transport>>,
    headers: HeaderMap,
) -> Response {
    let https = https(transport);
    login_page(&s, StatusCode::OK, None, https, &headers)
}

/// Whether the request came over HTTPS ([`Transport`], set by the outermost layer).
pub(super) fn https(transport: Option<Extension<Transport>>) -> bool {
    transport.is_some_and(|Extension(t)| t.https)
}

/// Seconds a login form's CSRF cookie lives: an hour to type a password.
const LOGIN_FORM_SECONDS: i64 = 3600;

/// The login form with `error` and its login CSRF token (double submit:
/// the login POST must carry the form's token and the
/// cookie's, equal). The token of the request's login cookie is reused
/// when it has one (a browser's second request for the form, e.g. after a
/// favicon redirect, must not replace the cookie of a form already shown);
/// otherwise a fresh one is set.
pub(super) fn login_page(
    s: &ConsoleState,
    status: StatusCode,
    error: Option<String>,
    https: bool,
    headers: &HeaderMap,
) -> Response {
    let held = session::read_cookie(headers, session::LOGIN_COOKIE_NAME, https)
        .filter(|t| t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()));
    let csrf = match &held {
        Some(t) => t.clone(),
        None => match session::random_token() {
            Ok(t) => t,
            Err(e) => return unavailable("login", e),
        },
    };
    let mut r = page(
        status,
        &LoginPage {
            error,
            csrf: csrf.clone(),
            password: s.users.is_some() || s.oidc.is_none(),
            sso: s.oidc.as_ref().map(|o| o.label().to_string()),
        },
    );
    if held.is_none() {
        let cookie =
            session::set_named_cookie(session::LOGIN_COOKIE_NAME, &csrf, https, LOGIN_FORM_SECONDS);
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            r.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    r
}

pub async fn overview(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
) -> Response {
    let st = match crate::status::collect(&s.pg, Some(&s.mailbox), &s.clock, &s.config).await {
        Ok(st) => st,
        Err(e) => return unavailable("overview", e),
    };
    let now = st.now;
    let since = now - Duration::hours(CHART_HOURS);
    let dead = facts::dead_by_class(&s.pg).await;
    let throughput = job_run::items_per_bucket(&s.pg, "pump-drain", since, 3600).await;
    let lag = facts::finish_lag_per_bucket(&s.pg, since, 3600).await;
    let (dead, throughput, lag) = match (dead, throughput, lag) {
        (Ok(d), Ok(t), Ok(l)) => (d, t, l),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return unavailable("overview", e),
    };
    let mut feed = Section::new("overview-feed", "Feed");
    let active = st.active_instance.as_ref().map_or_else(
        || "none: no daemon holds the instance lock".into(),
        |h| h.to_string(),
    );
    feed.facts.push(
        Fact::new("fact-active", "Active instance", active).warn_if(st.active_instance.is_none()),
    );
    feed.facts
        .push(Fact::new("fact-w", "Watermark W", st.cursor.w.to_string()));
    feed.facts.push(
        Fact::new(
            "fact-lag-ids",
            "Lag (mailbox IDs beyond W)",
            opt(&st.watermark_lag),
        )
        .warn_if(st.watermark_lag.unwrap_or(0) > 0 && st.cursor.updated_at.is_none()),
    );
    let moved = st.cursor.updated_at.map(|t| (now - t).num_seconds().max(0));
    feed.facts.push(Fact::new(
        "fact-lag-seconds",
        "W last moved",
        seconds(moved).replace(" s", " s ago"),
    ));
    if let Some(e) = &st.mailbox_error {
        // The server's words (user names, hosts) are for operators and the
        // log only.
        let shown = match who.role() {
            super::access::Role::Operator | super::access::Role::Admin => {
                format!("unreachable: {e}")
            }
            super::access::Role::Viewer => {
                tracing::debug!(error = %e, "Console: the mailbox could not be read for the overview");
                "unreachable: the mailbox could not be read (see the msgx log)".to_string()
            }
        };
        feed.facts
            .push(Fact::new("fact-mailbox", "Mailbox", shown).warn_if(true));
    }
    let hole = st.cursor.hole_since.map_or_else(
        || "none".to_string(),
        |since| {
            format!(
                "at ID {} for {} s",
                st.cursor.w + 1,
                (now - since).num_seconds().max(0)
            )
        },
    );
    feed.facts.push(
        Fact::new("fact-open-hole", "Open hole", hole).warn_if(st.cursor.hole_since.is_some()),
    );
    feed.facts.push(Fact::new(
        "fact-holes-released",
        "Released holes",
        st.holes_released.to_string(),
    ));
    feed.facts.push(
        Fact::new("fact-late-rows", "Late rows", st.late_rows.to_string())
            .warn_if(st.late_rows > 0),
    );
    let backlog: i64 = ProcState::ALL
        .into_iter()
        .filter(|s| s.is_unfinished())
        .filter_map(|s| st.proc_state.get(s.as_str()))
        .sum();
    feed.facts.push(Fact::new(
        "fact-backlog",
        "Backlog (PENDING + FAILED)",
        backlog.to_string(),
    ));
    feed.facts.push(Fact::new(
        "fact-oldest",
        "Oldest unprocessed",
        seconds(st.oldest_unprocessed_seconds),
    ));
    if st.shadow_mode {
        feed.facts.push(Fact::new(
            "fact-shadow",
            "Shadow mode",
            "on: msgx writes nothing to the mailbox",
        ));
    }

    let mut states = Section::new("overview-states", "Messages by state");
    for (state, n) in &st.proc_state {
        let id = format!("fact-state-{}", state.to_ascii_lowercase());
        states.facts.push(
            Fact::new(&id, state, n.to_string())
                .warn_if(state == ProcState::Dead.as_str() && *n > 0),
        );
    }
    let mut dead_t = Table::new(
        "table-dead-by-class",
        vec!["Error class", "DEAD messages"],
        "no DEAD messages",
    );
    for (class, n) in &dead {
        dead_t.rows.push(Row {
            id: format!("dead-class-{class}"),
            cells: vec![
                Cell::link(
                    class,
                    format!("/messages?state={}&class={class}", ProcState::Dead),
                ),
                Cell::text(n.to_string()),
            ],
            actions: vec![],
        });
    }
    states.table = Some(dead_t);

    let mut outbox = Section::new("overview-outbox", "Outbox by topic");
    let mut t = Table::new(
        "table-outbox",
        [
            vec!["Target"],
            EventStatus::ALL.map(EventStatus::as_str).to_vec(),
            vec!["Oldest unsent"],
        ]
        .concat(),
        "no events",
    );
    for (target, by) in &st.outbox {
        let n = |k: EventStatus| by.get(k.as_str()).copied().unwrap_or(0).to_string();
        t.rows.push(Row {
            id: format!("outbox-{}", target.replace(':', "-")),
            cells: vec![
                Cell::text(target),
                Cell::text(n(EventStatus::Pending)),
                Cell::text(n(EventStatus::Sent)),
                Cell::link(n(EventStatus::Dead), "/events/dead"),
                Cell::text(seconds(st.oldest_unsent_seconds.get(target).copied())),
            ],
            actions: vec![],
        });
    }
    outbox.table = Some(t);

    let mut backfill = Section::new("overview-backfill", "Backfill");
    let b = &st.backfill;
    backfill.facts.push(Fact::new(
        "fact-backfill-pending",
        "Pending",
        b.pending.to_string(),
    ));
    backfill.facts.push(
        Fact::new(
            "fact-backfill-overdue",
            "Overdue (past R)",
            b.overdue.to_string(),
        )
        .warn_if(b.overdue > 0),
    );
    let abandoned: i64 = b.abandoned.values().sum();
    backfill.facts.push(
        Fact::new(
            "fact-backfill-abandoned",
            "Abandoned (unreconciled)",
            format!("{abandoned} ({})", b.abandoned_unreconciled),
        )
        .warn_if(b.abandoned_unreconciled > 0),
    );

    let mut charts = Section::new("overview-charts", &format!("Last {CHART_HOURS} hours"));
    let bucket = Duration::hours(1);
    let through: Vec<_> = throughput.iter().map(|(t, n)| (*t, *n as f64)).collect();
    charts.svg.push(chart::bars(
        "chart-throughput",
        "Messages drained per hour (JOB_RUN pump-drain)",
        "msg",
        &chart::fill_buckets(since, now, bucket, &through),
    ));
    let lag_points: Vec<_> = lag.iter().map(|(t, _, secs)| (*t, *secs)).collect();
    charts.svg.push(chart::bars(
        "chart-lag",
        "Longest enqueue-to-finish time per hour",
        "s",
        &chart::fill_buckets(since, now, bucket, &lag_points),
    ));

    let mut jobs = Section::new("overview-jobs", "Last run of every job");
    let mut jt = Table::new(
        "table-last-runs",
        vec!["Job", "Outcome", "Started", "Finished", "Items", "Error"],
        "no job has run",
    );
    for r in &st.jobs {
        jt.rows.push(Row {
            id: format!("last-run-{}", r.job),
            cells: vec![
                Cell::link(&r.job, format!("/jobs?job={}", r.job)),
                Cell::text(r.outcome.as_str()),
                Cell::text(time(Some(r.started_at))),
                Cell::text(time(r.finished_at)),
                Cell::text(r.items.to_string()),
                Cell::text(r.error.clone().unwrap_or_default()),
            ],
            actions: vec![],
        });
    }
    jobs.table = Some(jt);
    let p = SectionsPage {
        nav: Nav::of(&who, "nav-overview"),
        title: "Overview".into(),
        page_id: "page-overview",
        intro: format!("As of {} UTC.", time(Some(now))),
        sections: vec![feed, charts, states, outbox, backfill, jobs],
        request_form: false,
        live: Watch::Overview.source(&s, &who),
    };
    page(StatusCode::OK, &p)
}

pub async fn messages(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    Query(filter): Query<FilterForm>,
) -> Response {
    let mut table = Table::new(
        "table-messages",
        vec![
            "MSG_ID",
            "State",
            "Kind",
            "Class",
            "Attempts",
            "Enqueued",
            "Error / reason",
        ],
        "no message matches the filter",
    );
    let mut error = None;
    let mut stopped = None;
    let mut next = None;
    let mut filter = filter;
    match filter.parse() {
        Err(e) => {
            // The refused form is shown again, bounded.
            for field in [
                &mut filter.text,
                &mut filter.kind,
                &mut filter.flid,
                &mut filter.before,
            ] {
                *field = field.chars().take(filter::MAX_TEXT_CHARS).collect();
            }
            error = Some(crate::error_text::cut(&e.to_string()).into_owned());
        }
        Ok((q, before)) => {
            let rows = match message_search::page(&s.pg, &q, before, PAGE_SIZE).await {
                Ok(r) => r,
                Err(e) => match search_stopped(&e, &s) {
                    Some(why) => {
                        stopped = Some(why);
                        Vec::new()
                    }
                    None => return unavailable("messages", e),
                },
            };
            next = filter
                .next_page(rows.len(), rows.last().map(|r| r.msg_id))
                .map(|f| format!("/messages?{}", f.query_string()));
            for r in rows {
                let kind = format!(
                    "{}-{}",
                    r.msg_type.as_deref().unwrap_or("?"),
                    r.msg_styp.as_deref().unwrap_or("?")
                );
                let why = r.last_error.or(r.outcome_reason).unwrap_or_default();
                table.rows.push(Row {
                    id: format!("message-{}", r.msg_id),
                    cells: vec![
                        Cell::link(r.msg_id.to_string(), format!("/messages/{}", r.msg_id)),
                        Cell::text(r.state.as_str()),
                        Cell::text(kind),
                        Cell::text(r.error_class.unwrap_or_default()),
                        Cell::text(r.attempts.to_string()),
                        Cell::text(time(r.enqueued_at)),
                        Cell::text(why),
                    ],
                    actions: vec![],
                });
            }
        }
    }
    let refused = error.is_some();
    let p = MessagesPage {
        nav: Nav::of(&who, "nav-messages"),
        filter,
        error: error.or(stopped),
        states: ProcState::ALL.iter().map(|s| s.as_str()).collect(),
        classes: ErrorClass::ALL.iter().map(|c| c.as_str()).collect(),
        table,
        next,
    };
    let status = if refused {
        StatusCode::BAD_REQUEST
    } else if p.error.is_some() {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    page(status, &p)
}

/// The page's answer when the console's bounds stopped a search: the server
/// cancelled it at `msgx.console.statement-timeout`, or every console session
/// was busy for `msgx.postgres.acquire-timeout`. The visitor learns the search
/// stopped and how to narrow it; the log keeps a WARN (a costly filter is
/// worth knowing about, not an error of msgx).
fn search_stopped(e: &sqlx::Error, s: &ConsoleState) -> Option<String> {
    let why = if crate::store::pg::timeout_setting(e).is_some() {
        format!(
            "The search was stopped after {} (msgx.console.statement-timeout): \
             narrow it by state, class, kind or dates.",
            s.config.msgx.console.statement_timeout
        )
    } else if matches!(e, sqlx::Error::PoolTimedOut) {
        "The console is busy: every one of its database sessions is in use \
         (msgx.console.pool-size). Try again in a moment."
            .to_string()
    } else {
        return None;
    };
    tracing::warn!(error = %e, "Console: a message search was stopped by the console's bounds");
    Some(why)
}

/// The message page's query: `page` of the decoded records (from 1).
#[derive(Debug, Default, Deserialize)]
pub struct MessageQuery {
    #[serde(default)]
    page: Option<String>,
}

/// Decoded text a message page shows at most, in bytes (cut on a character
/// boundary): a page of records is far smaller; this bounds a record that
/// is not (e.g. a huge unknown element kept raw).
const DECODED_TEXT_BYTES: usize = 2 << 20;

/// The decoded part of the page as JSON: `{"message": …}` or `{"error": …}`,
/// borrowed, without an intermediate `serde_json::Value` of the message.
#[derive(serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum DecodedJson<'a> {
    Message(&'a crate::codec::DecodedMessage),
    Error(&'a crate::codec::DecodeError),
}

/// `n` bytes as the message page says it.
fn size_text(n: usize) -> String {
    format!("{n} bytes ({:.1} MiB)", n as f64 / f64::from(1 << 20))
}

/// One message, bounded: the first
/// [`inspect::RAW_PREVIEW_BYTES`] of its raw text, page `?page=N` of its
/// decoded records ([`inspect::RECORDS_PER_PAGE`] each), and a link to
/// [`message_raw`] for the whole text.
pub async fn message(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    Path(msg_id): Path<i64>,
    Query(q): Query<MessageQuery>,
) -> Response {
    let page_no = match q.page.as_deref().map(str::parse::<usize>) {
        None => 1,
        Some(Ok(n)) => n,
        Some(Err(_)) => 0,
    };
    let Some(bounds) = inspect::Bounds::page(page_no) else {
        return (
            StatusCode::BAD_REQUEST,
            "page: a whole number from 1 (the page of decoded records)",
        )
            .into_response();
    };
    let view = match inspect::message(&s.pg, &s.mailbox, msg_id, &bounds).await {
        Ok(Some(v)) => v,
        Ok(None) => {
            return (
                StatusCode::NOT_FOUND,
                format!("message {msg_id} is neither in PROC_STATE nor in the mailbox"),
            )
                .into_response();
        }
        Err(e) => return unavailable("message", e),
    };
    let mut facts = Vec::new();
    let mut can_replay = false;
    let mut can_skip = false;
    match &view.record {
        None => facts.push(Fact::new(
            "fact-record",
            "PROC_STATE",
            "not enqueued yet (beyond W) or a late row (see Holes)",
        )),
        Some(r) => {
            can_replay = r.state.may_replay();
            can_skip = r.state.is_unfinished();
            let kind = format!(
                "{}-{}",
                r.msg_type.as_deref().unwrap_or("?"),
                r.msg_styp.as_deref().unwrap_or("?")
            );
            facts.push(
                Fact::new("fact-state", "State", r.state.as_str())
                    .warn_if(r.state == ProcState::Dead),
            );
            facts.push(Fact::new("fact-kind", "Kind", kind));
            facts.push(Fact::new(
                "fact-attempts",
                "Attempts",
                r.attempts.to_string(),
            ));
            facts.push(Fact::new("fact-source", "Source", r.source.clone()));
            if let Some(c) = &r.error_class {
                facts.push(
                    Fact::new(
                        "fact-error",
                        "Error",
                        format!("{c}: {}", r.last_error.as_deref().unwrap_or("")),
                    )
                    .warn_if(true),
                );
            }
            if let Some(reason) = &r.outcome_reason {
                facts.push(Fact::new("fact-outcome", "Outcome reason", reason.clone()));
            }
            facts.push(Fact::new("fact-received", "Received", time(r.received_at)));
            facts.push(Fact::new("fact-enqueued", "Enqueued", time(r.enqueued_at)));
            facts.push(Fact::new("fact-finished", "Finished", time(r.finished_at)));
            if let Some(at) = r.archived_at {
                facts.push(Fact::new("fact-archived", "Archived", time(Some(at))));
            }
            let backfill = if let Some(at) = r.backfill_at {
                format!("mark written {}", time(Some(at)))
            } else if let Some(at) = r.backfill_abandoned_at {
                format!(
                    "ABANDONED {} ({})",
                    time(Some(at)),
                    r.backfill_abandoned_reason.as_deref().unwrap_or("?")
                )
            } else if r.backfill_next_at.is_some() {
                format!("pending, next try {}", time(r.backfill_next_at))
            } else {
                "no intent (not terminal)".into()
            };
            facts.push(Fact::new("fact-backfill", "Backfill", backfill));
            // The W3C trace context: the `traceparent`
            // header of its Kafka records, the `trace_id` of its log lines.
            let trace = r
                .traceparent
                .clone()
                .unwrap_or_else(|| "none (enqueued before trace context)".into());
            facts.push(Fact::new("fact-traceparent", "Trace (traceparent)", trace));
        }
    }
    let mut events = Table::new(
        "table-message-events",
        vec!["FLID", "State version"],
        "this message produced no flight event (still kept)",
    );
    for (flid, v) in &view.flights {
        events.rows.push(Row {
            id: format!("event-flight-{flid}"),
            cells: vec![
                Cell::link(flid, format!("/flights/{flid}")),
                Cell::text(v.to_string()),
            ],
            actions: vec![],
        });
    }
    let mut raw_cut = None;
    let (raw, raw_note) = match view.raw {
        Raw::Present(r) => {
            if r.cut {
                raw_cut = Some(format!(
                    "Cut: the first {} of {} shown; download the whole text.",
                    size_text(r.text.len()),
                    size_text(r.total_bytes)
                ));
            }
            (Some(r.text), String::new())
        }
        Raw::Purged => (None, "purged: the mailbox row no longer exists".to_string()),
        Raw::Unreadable(e) => {
            tracing::warn!(error = %e, msg_id, "Console: mailbox unreadable for a message detail");
            (
                None,
                "the mailbox could not be read (see the msgx log)".to_string(),
            )
        }
    };
    let download = raw.is_some().then(|| format!("/messages/{msg_id}/raw"));
    let decoded = view
        .decoded
        .map(|d| decoded_part(&d, msg_id, page_no))
        .unwrap_or_default();
    let p = MessagePage {
        nav: Nav::of(&who, "nav-messages"),
        msg_id,
        facts,
        events,
        raw,
        raw_note,
        raw_cut,
        download,
        decoded: decoded.text,
        records: decoded.records,
        prev: decoded.prev,
        next: decoded.next,
        can_replay,
        can_skip,
        live: Watch::Message(msg_id).source(&s, &who),
    };
    page(StatusCode::OK, &p)
}

/// The decoded part of a message page: the JSON text and the paging.
#[derive(Default)]
struct DecodedPart {
    text: Option<String>,
    /// Which records are shown, and whether the text is cut.
    records: Option<String>,
    prev: Option<String>,
    next: Option<String>,
}

/// Page `page_no` of a message's decoded records as bounded pretty JSON,
/// with the links to its neighbours.
fn decoded_part(
    d: &Result<crate::codec::DecodedWindow, crate::codec::DecodeError>,
    msg_id: i64,
    page_no: usize,
) -> DecodedPart {
    let mut part = DecodedPart::default();
    let json = match d {
        Ok(w) => {
            if w.total > 0 {
                let shown = w.shown();
                part.records = Some(if shown == 0 {
                    format!("No records on page {page_no}: the message has {}.", w.total)
                } else {
                    format!(
                        "Records {}–{} of {} (page {page_no}).",
                        w.first + 1,
                        w.first + shown,
                        w.total
                    )
                });
                let link = |n: usize| format!("/messages/{msg_id}?page={n}");
                part.prev = (page_no > 1).then(|| link(page_no - 1));
                part.next = (shown > 0 && w.first + shown < w.total).then(|| link(page_no + 1));
            }
            DecodedJson::Message(&w.message)
        }
        Err(e) => DecodedJson::Error(e),
    };
    let (text, cut) = inspect::pretty_json_bounded(&json, DECODED_TEXT_BYTES);
    if cut {
        let note = format!("The decoded text is cut at {}.", size_text(text.len()));
        part.records = Some(match part.records.take() {
            Some(r) => format!("{r} {note}"),
            None => note,
        });
    }
    part.text = Some(text);
    part
}

/// The whole raw text of one message as a download,
/// streamed from the mailbox in pieces ([`crate::store::mailbox::RawReader`]):
/// msgx holds one piece (about 1 MiB) at a time and no mailbox connection
/// between pieces, whatever the size and however slowly the client reads.
/// Byte for byte the mailbox's text, not re-encoded or escaped. Authenticated
/// like every page; a viewer may download what the page shows it.
pub async fn message_raw(State(s): State<ConsoleState>, Path(msg_id): Path<i64>) -> Response {
    let reader = match s.mailbox.open_raw(msg_id).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            return (
                StatusCode::NOT_FOUND,
                format!("message {msg_id}: no raw text in the mailbox (purged, or never there)"),
            )
                .into_response();
        }
        Err(e) => {
            tracing::warn!(error = %e, msg_id, "Console: mailbox unreadable for a raw download");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                "the mailbox could not be read (see the msgx log)",
            )
                .into_response();
        }
    };
    let pieces = futures_util::stream::try_unfold(reader, move |mut r| async move {
        match r.next().await {
            Ok(Some(piece)) => Ok(Some((axum::body::Bytes::from(piece), r))),
            Ok(None) => Ok(None),
            Err(e) => {
                // The client sees a cut transfer (no final chunk).
                tracing::warn!(error = %e, msg_id, "Console: a raw download stopped");
                Err(e)
            }
        }
    });
    (
        [
            (header::CONTENT_TYPE, "application/xml".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"message-{msg_id}.xml\""),
            ),
        ],
        axum::body::Body::from_stream(pieces),
    )
        .into_response()
}

/// The Flights search form.
#[derive(Debug, Default, Deserialize)]
pub struct FlightSearch {
    #[serde(default)]
    flid: String,
    #[serde(default)]
    flno: String,
    #[serde(default)]
    day: String,
}

pub async fn flights(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    Query(f): Query<FlightSearch>,
) -> Response {
    let mut table = Table::new(
        "table-flights",
        vec![
            "FLID",
            "Flight",
            "Movement",
            "Operation day",
            "SODT",
            "State",
            "Version",
            "Last message",
        ],
        "no flight matches",
    );
    let trimmed = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    let flid = trimmed(&f.flid).map(|v| {
        v.parse::<i64>()
            .map_err(|_| format!("flid: {v:?} is not a number"))
    });
    let day = trimmed(&f.day).map(|v| {
        NaiveDate::parse_from_str(&v, "%Y-%m-%d")
            .map_err(|_| format!("day: {v:?} is not YYYY-MM-DD"))
    });
    let mut error = None;
    match (flid.transpose(), day.transpose()) {
        (Err(e), _) | (_, Err(e)) => error = Some(e),
        (Ok(flid), Ok(day)) => {
            let flno = trimmed(&f.flno);
            let hits =
                match flight_search::search(&s.pg, flid, flno.as_deref(), day, LIST_LIMIT).await {
                    Ok(h) => h,
                    Err(e) => return unavailable("flights", e),
                };
            for h in hits {
                table.rows.push(Row {
                    id: format!("flight-{}", h.flid),
                    cells: vec![
                        Cell::link(h.flid.to_string(), format!("/flights/{}", h.flid)),
                        Cell::text(format!(
                            "{}{}",
                            h.alcd.unwrap_or_default(),
                            h.flno.unwrap_or_default()
                        )),
                        Cell::text(h.mvin.unwrap_or_default()),
                        Cell::text(opt(&h.operation_day)),
                        Cell::text(time(h.sodt)),
                        Cell::text(h.state),
                        Cell::text(h.state_version.to_string()),
                        h.last_msg_id.map_or_else(
                            || Cell::text("-"),
                            |m| Cell::link(m.to_string(), format!("/messages/{m}")),
                        ),
                    ],
                    actions: vec![],
                });
            }
        }
    }
    let p = FlightsPage {
        nav: Nav::of(&who, "nav-flights"),
        flid: f.flid,
        flno: f.flno,
        day: f.day,
        error,
        table,
    };
    page(StatusCode::OK, &p)
}

/// The flight page's query: the history's cursor.
#[derive(Debug, Default, Deserialize)]
pub struct FlightQuery {
    /// `VERSION-EVENT_ID` of the last history row of the previous page.
    #[serde(default)]
    before: String,
}

/// The history cursor `VERSION-EVENT_ID` (`None` when empty).
fn history_cursor(text: &str) -> Result<Option<(i64, i64)>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.split_once('-')
        .and_then(|(v, e)| Some((v.parse().ok()?, e.parse().ok()?)))
        .map(Some)
        .ok_or_else(|| "before: not VERSION-EVENT_ID".to_string())
}

/// One version of the flight's history: its notification's message,
/// kind, outcome and field-level changes (capped, the rest on the message page).
fn history_entry(c: &msg_event::FlightChange) -> history::Entry {
    let (changes, more) = history::change_lines(c.changes.as_ref(), history::CHANGES_PER_VERSION);
    let kind = [c.kind.as_deref(), c.event_kind.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" · ");
    let msg = c.msg_id.map(|m| (m.to_string(), format!("/messages/{m}")));
    history::Entry {
        id: format!("version-{}", c.event_id),
        version: c.state_version.to_string(),
        more: msg
            .as_ref()
            .filter(|_| more > 0)
            .map(|(_, href)| (format!("+{more} more on the message page"), href.clone())),
        msg,
        kind,
        outcome: opt(&c.outcome),
        written: opt(&c.at),
        changes,
        gone: false,
    }
}

pub async fn flight(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    Path(flid): Path<i64>,
    Query(q): Query<FlightQuery>,
) -> Response {
    // The history is read by page below, not here.
    let view = match inspect::flight(&s.pg, &s.config, flid, 0).await {
        Ok(Some(v)) => v,
        Ok(None) => {
            return (
                StatusCode::NOT_FOUND,
                format!("no flight {flid} in the current state (never created, or moved to the history store)"),
            )
                .into_response();
        }
        Err(e) => return unavailable("flight", e),
    };
    let mut facts = vec![
        Fact::new(
            "fact-flight-state",
            "State",
            view.state["state"].as_str().unwrap_or("?"),
        ),
        Fact::new(
            "fact-flight-version",
            "State version",
            view.state_version.to_string(),
        ),
        Fact::new(
            "fact-flight-last-msg",
            "Last message",
            view.last_msg_id.to_string(),
        ),
    ];
    if let Some(m) = view.state.get("maid").filter(|v| !v.is_null()) {
        facts.push(Fact::new(
            "fact-flight-master",
            "Master flight (MAID)",
            m.to_string(),
        ));
    }
    let mut shares = Table::new(
        "table-codeshares",
        vec!["Codeshare FLID", "Flight"],
        "no codeshare links",
    );
    if let Some(list) = view.state.get("mafl").and_then(|v| v.as_array()) {
        for (i, e) in list.iter().enumerate() {
            let id = e.get("flid").map(|v| v.to_string()).unwrap_or_default();
            let name = ["alcd", "flno"]
                .iter()
                .filter_map(|k| e.get(*k).and_then(|v| v.as_str()))
                .collect::<String>();
            shares.rows.push(Row {
                id: format!("codeshare-{i}"),
                cells: vec![Cell::link(&id, format!("/flights/{id}")), Cell::text(name)],
                actions: vec![],
            });
        }
    }
    let mut milestones = Table::new(
        "table-milestones",
        vec!["Code", "Type", "Time", "Source", "Set by message"],
        "none (no MVIN, or none of the fields they come from is set)",
    );
    for (code, m) in &view.milestones {
        milestones.rows.push(Row {
            id: format!("milestone-{}", code.as_str()),
            cells: vec![
                Cell::text(code.as_str()),
                Cell::text(m.kind.as_str()),
                Cell::text(m.time.to_rfc3339()),
                Cell::text(m.source_label()),
                m.msg_id.map_or_else(
                    || Cell::text("-"),
                    |id| Cell::link(id.to_string(), format!("/messages/{id}")),
                ),
            ],
            actions: vec![],
        });
    }
    let before = match history_cursor(&q.before) {
        Ok(b) => b,
        Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
    };
    let rows =
        match msg_event::flight_changes_before(&s.pg, flid, before, history::VERSIONS_PER_PAGE)
            .await
        {
            Ok(r) => r,
            Err(e) => return unavailable("flight", e),
        };
    let full = rows.len() as i64 >= history::VERSIONS_PER_PAGE;
    let versions: Vec<i64> = rows.iter().map(|r| r.state_version).collect();
    // The version just above this page: the current one + 1 on the first,
    // else the previous page's last (shown there).
    let above = before.map_or(view.state_version + 1, |b| b.0);
    let history_next = rows
        .last()
        .filter(|_| full)
        .map(|r| format!("/flights/{flid}?before={}-{}", r.state_version, r.event_id));
    let history = history::lines(&versions, above, !full)
        .into_iter()
        .filter_map(|line| match line {
            history::Line::Gone { from, to } => Some(history::Entry::gone(from, to)),
            history::Line::Version(i) => rows.get(i).map(history_entry),
        })
        .collect();
    let p = FlightPage {
        nav: Nav::of(&who, "nav-flights"),
        flid,
        facts,
        shares,
        milestones,
        state_json: serde_json::to_string_pretty(&view.state).unwrap_or_default(),
        history,
        history_next,
    };
    page(StatusCode::OK, &p)
}

pub async fn dead_events(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
) -> Response {
    let rows = match crate::delivery::dead_letters::list(&s.pg, LIST_LIMIT).await {
        Ok(r) => r,
        Err(e) => return unavailable("dead events", e),
    };
    let (resend, discard) = (
        who.may(Right::Resend, 1).is_ok(),
        who.may(Right::Discard, 1).is_ok(),
    );
    let mut t = Table::new(
        "table-dead-events",
        vec![
            "EVENT_ID",
            "Target",
            "FLID",
            "Type",
            "Version",
            "Message",
            "Attempts",
            "Class",
            "Last error",
        ],
        "no DEAD events",
    );
    for e in rows {
        let mut actions = Vec::new();
        let id = e.event_id.to_string();
        if resend {
            actions.push(action(
                format!("resend-{id}"),
                Action::EventResend,
                vec![("ids", id.clone())],
                "Resend",
            ));
        }
        if discard {
            actions.push(action(
                format!("discard-{id}"),
                Action::EventDiscard,
                vec![("ids", id)],
                "Discard",
            ));
        }
        t.rows.push(Row {
            id: format!("dead-event-{}", e.event_id),
            cells: vec![
                Cell::text(e.event_id.to_string()),
                Cell::text(e.target),
                Cell::link(&e.partition_key, format!("/flights/{}", e.partition_key)),
                Cell::text(e.event_type),
                Cell::text(e.state_version.to_string()),
                e.msg_id.map_or_else(
                    || Cell::text("-"),
                    |m| Cell::link(m.to_string(), format!("/messages/{m}")),
                ),
                Cell::text(e.attempts.to_string()),
                Cell::text(opt(&e.error_class)),
                Cell::text(e.last_error.unwrap_or_default()),
            ],
            actions,
        });
    }
    let mut section = Section::new("dead-events", "DEAD outbox events (oldest first)");
    section.table = Some(t);
    let p = SectionsPage {
        nav: Nav::of(&who, "nav-dead"),
        title: "Outbox DLQ".into(),
        page_id: "page-dead-events",
        intro:
            "Resend puts an event back to PENDING with a fresh retry budget; discard deletes it \
                (the row and its payload are recorded). Both are `msgx events resend|discard`."
                .into(),
        sections: vec![section],
        request_form: false,
        live: None,
    };
    page(StatusCode::OK, &p)
}

pub async fn abandoned(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
) -> Response {
    let rows = match crate::backfill::ops::abandoned(&s.pg).await {
        Ok(r) => r,
        Err(e) => return unavailable("abandoned backfill", e),
    };
    let (reopen, reconcile) = (
        who.may(Right::Reopen, 1).is_ok(),
        who.may(Right::Reconcile, 1).is_ok(),
    );
    let mut t = Table::new(
        "table-abandoned",
        vec![
            "MSG_ID",
            "State",
            "Abandoned",
            "Reason",
            "Attempts",
            "Last error",
            "Reconciled",
        ],
        "no abandoned backfill",
    );
    for r in rows {
        let mut actions = Vec::new();
        let id = r.msg_id.to_string();
        if reopen {
            actions.push(action(
                format!("reopen-{id}"),
                Action::BackfillReopen,
                vec![("ids", id.clone())],
                "Reopen",
            ));
        }
        if reconcile && r.backfill_reconciled_at.is_none() {
            actions.push(action(
                format!("reconcile-{id}"),
                Action::BackfillReconcile,
                vec![("ids", id)],
                "Reconcile",
            ));
        }
        t.rows.push(Row {
            id: format!("abandoned-{}", r.msg_id),
            cells: vec![
                Cell::link(r.msg_id.to_string(), format!("/messages/{}", r.msg_id)),
                Cell::text(r.state.as_str()),
                Cell::text(time(r.backfill_abandoned_at)),
                Cell::text(opt(&r.backfill_abandoned_reason)),
                Cell::text(r.backfill_attempts.to_string()),
                Cell::text(r.backfill_last_error.unwrap_or_default()),
                Cell::text(match r.backfill_reconciled_at {
                    Some(at) => format!(
                        "{} {}",
                        time(Some(at)),
                        r.backfill_reconciled_note.unwrap_or_default()
                    ),
                    None => "no".into(),
                }),
            ],
            actions,
        });
    }
    let mut section = Section::new("abandoned", "Abandoned backfill (§6.2)");
    section.table = Some(t);
    let p = SectionsPage {
        nav: Nav::of(&who, "nav-abandoned"),
        title: "Abandoned backfill".into(),
        page_id: "page-abandoned",
        intro: "Reopen lets the next scan retry the mark (do it once the mailbox is healthy); \
                reconcile records that the row was confirmed with the mailbox owner, so the archive \
                job may archive it. Both are `msgx backfill reopen|reconcile`."
            .into(),
        sections: vec![section],
        request_form: false,
        live: None,
    };
    page(StatusCode::OK, &p)
}

pub async fn holes(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
) -> Response {
    let v = match inspect::holes(&s.pg, s.clock.now(), LIST_LIMIT).await {
        Ok(v) => v,
        Err(e) => return unavailable("holes", e),
    };
    let mut head = Section::new("holes-open", "Watermark");
    head.facts
        .push(Fact::new("fact-holes-w", "W", v.w.to_string()));
    head.facts.push(match &v.open {
        Some(h) => Fact::new(
            "fact-holes-open",
            "Open hole",
            format!(
                "at ID {} since {} ({} s)",
                h.at_id,
                time(Some(h.since)),
                h.open_seconds
            ),
        )
        .warn_if(true),
        None => Fact::new("fact-holes-open", "Open hole", "none"),
    });
    let mut released = Section::new("holes-released", "Released holes (newest first)");
    let mut t = Table::new(
        "table-released-holes",
        vec!["#", "IDs", "First seen", "Released", "Rule"],
        "no released hole",
    );
    for h in &v.released {
        t.rows.push(Row {
            id: format!("hole-{}", h.id),
            cells: vec![
                Cell::text(h.id.to_string()),
                Cell::text(format!("{}..={}", h.first_id, h.last_id)),
                Cell::text(time(Some(h.first_seen))),
                Cell::text(time(Some(h.released_at))),
                Cell::text(&h.reason),
            ],
            actions: vec![],
        });
    }
    released.table = Some(t);
    let mut late = Section::new(
        "holes-late",
        "Late rows (below W, NOT processed: docs/operations.md)",
    );
    let mut t = Table::new(
        "table-late-rows",
        vec!["MSG_ID", "Hole", "Detected", "State", "Resolution"],
        "no late row",
    );
    for l in &v.late {
        t.rows.push(Row {
            id: format!("late-{}", l.msg_id),
            cells: vec![
                Cell::link(l.msg_id.to_string(), format!("/messages/{}", l.msg_id)),
                Cell::text(opt(&l.hole_id)),
                Cell::text(time(Some(l.detected_at))),
                Cell::text(l.state.clone().unwrap_or_else(|| "not enqueued".into())),
                Cell::text(opt(&l.resolution)),
            ],
            actions: vec![],
        });
    }
    late.table = Some(t);
    let p = SectionsPage {
        nav: Nav::of(&who, "nav-holes"),
        title: "Holes and late rows".into(),
        page_id: "page-holes",
        intro: "`msgx holes`: where the watermark skipped (design §4.1).".into(),
        sections: vec![head, released, late],
        request_form: false,
        live: None,
    };
    page(StatusCode::OK, &p)
}

pub async fn requests(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
) -> Response {
    let rows = match req_track::list(&s.pg, false, LIST_LIMIT).await {
        Ok(r) => r,
        Err(e) => return unavailable("requests", e),
    };
    let mut t = Table::new(
        "table-requests",
        vec![
            "#",
            "Type",
            "Operation day",
            "State",
            "SEQN",
            "Created",
            "Sent",
            "Closed",
            "Matched",
            "Note",
        ],
        "no upstream request",
    );
    for r in rows {
        t.rows.push(Row {
            id: format!("request-{}", r.id),
            cells: vec![
                Cell::text(r.id.to_string()),
                Cell::text(r.req_type),
                Cell::text(opt(&r.operation_day)),
                Cell::text(r.state.as_str()),
                Cell::text(r.seqn),
                Cell::text(time(Some(r.created_at))),
                Cell::text(time(r.sent_at)),
                Cell::text(time(r.closed_at)),
                r.matched_msg_id.map_or_else(
                    || Cell::text("-"),
                    |m| {
                        Cell::link(
                            format!("{m} {}", r.match_mode.unwrap_or_default()),
                            format!("/messages/{m}"),
                        )
                    },
                ),
                Cell::text(r.close_note.or(r.match_audit).unwrap_or_default()),
            ],
            actions: vec![],
        });
    }
    let p = TablePage {
        nav: "nav-requests",
        page_id: "page-requests",
        title: "Upstream requests",
        intro: "`msgx request list` (docs/requests.md).",
        section: ("requests", "Upstream requests (RQFD, RQRD), newest first"),
    };
    p.render(&who, t, true)
}

/// A page of one section holding one table.
struct TablePage {
    nav: &'static str,
    page_id: &'static str,
    title: &'static str,
    intro: &'static str,
    /// The section's id and heading.
    section: (&'static str, &'static str),
}

impl TablePage {
    fn render(self, who: &Principal, table: Table, request_form: bool) -> Response {
        let mut section = Section::new(self.section.0, self.section.1);
        section.table = Some(table);
        let p = SectionsPage {
            nav: Nav::of(who, self.nav),
            title: self.title.into(),
            page_id: self.page_id,
            intro: self.intro.into(),
            sections: vec![section],
            request_form,
            live: None,
        };
        page(StatusCode::OK, &p)
    }
}

/// Every request to the compat entry `POST /cminmsgs/send`, newest first
/// (COMPAT_REQUEST): who posted what, and the answer.
pub async fn compat(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
) -> Response {
    let rows = match compat_request::list(&s.pg, LIST_LIMIT).await {
        Ok(r) => r,
        Err(e) => return unavailable("compat", e),
    };
    let mut t = Table::new(
        "table-compat",
        vec![
            "#",
            "At",
            "Peer",
            "Client",
            "SNDR",
            "Body SHA-256",
            "Status",
            "Outcome",
            "Message",
            "Detail",
        ],
        "no compat request",
    );
    for r in rows {
        let sha = r.payload_sha256.as_deref().map_or("-".to_string(), |h| {
            h.get(..16)
                .map_or_else(|| h.to_string(), |p| format!("{p}…"))
        });
        t.rows.push(Row {
            id: format!("compat-{}", r.id),
            cells: vec![
                Cell::text(r.id.to_string()),
                Cell::text(time(Some(r.at))),
                Cell::text(r.peer),
                Cell::text(r.principal.unwrap_or_else(|| "(not authenticated)".into())),
                Cell::text(opt(&r.sndr)),
                Cell::text(sha),
                Cell::text(if r.status == 0 {
                    "-".into()
                } else {
                    r.status.to_string()
                }),
                Cell::text(r.outcome),
                r.msg_id.map_or_else(
                    || Cell::text("-"),
                    |m| Cell::link(m.to_string(), format!("/messages/{m}")),
                ),
                Cell::text(opt(&r.detail)),
            ],
            actions: vec![],
        });
    }
    let p = TablePage {
        nav: "nav-compat",
        page_id: "page-compat",
        title: "Compat entry",
        intro: "Every request to POST /cminmsgs/send, refused ones too (docs/production/http.md).",
        section: ("compat", "Compat requests, newest first"),
    };
    p.render(&who, t, false)
}

/// The Jobs page's filter.
#[derive(Debug, Default, Deserialize)]
pub struct JobFilter {
    #[serde(default)]
    job: String,
    #[serde(default)]
    failed: String,
}

/// Runs a job's sparkline shows.
const SPARK_RUNS: i64 = 50;
/// Failed runs the Jobs page lists with their error.
const FAILURES_SHOWN: i64 = 20;

/// The Jobs page: every job with its schedule (the daemon's profile), next
/// start (from the cron expression and the injected clock), pause (who,
/// since, why), its last [`SPARK_RUNS`] runs as a sparkline, the recent
/// failures with their error, and the run history; run-now, pause and
/// resume go through the confirm-then-apply actions.
pub async fn jobs(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    Query(f): Query<JobFilter>,
) -> Response {
    let job = Some(f.job.trim()).filter(|j| !j.is_empty());
    let failed = !f.failed.is_empty();
    let manifests = match crate::jobs::manifest::all() {
        Ok(m) => m,
        Err(e) => return unavailable("jobs", e),
    };
    let names: Vec<String> = manifests
        .iter()
        .map(|m| m.name.clone())
        .filter(|n| job.is_none_or(|j| j == n))
        .collect();
    let read = async {
        let runs = job_run::history(&s.pg, job, failed, LIST_LIMIT).await?;
        let recent = job_run::recent_per_job(&s.pg, &names, SPARK_RUNS).await?;
        let failures = job_run::history(&s.pg, job, true, FAILURES_SHOWN).await?;
        let pauses = job_pause::all(&s.pg).await?;
        Ok::<_, sqlx::Error>((runs, recent, failures, pauses))
    };
    let (runs, recent, failures, pauses) = match read.await {
        Ok(r) => r,
        Err(e) => return unavailable("jobs", e),
    };
    let profile = crate::jobs::profile::Profile::resolve(&s.config.msgx.daemon.schedule).ok();
    let now = s.clock.now();
    let t = runs_table("table-job-runs", "no run recorded", "run", &runs, true);
    let can_run = who.may(Right::RunJob, 1).is_ok() && s.launcher.is_some();
    let mut jt = Table::new(
        "table-jobs",
        vec![
            "Job",
            "Purpose",
            "Schedule",
            "Next start",
            "State",
            "Bounds",
        ],
        "no job",
    );
    for m in manifests.iter().filter(|m| names.contains(&m.name)) {
        let pause = pauses.iter().find(|p| p.job == m.name);
        let schedule = profile.as_ref().and_then(|p| p.jobs.get(&m.name));
        let next = match (schedule, pause) {
            (None, _) => "not scheduled".to_string(),
            (Some(_), Some(_)) => "paused: skipped".to_string(),
            (Some(cron), None) => crate::jobs::control::next_fire(cron, now)
                .map_or_else(|| "continuously (polled)".into(), |t| time(Some(t))),
        };
        let state = pause.map_or_else(|| "not paused".into(), crate::jobs::control::describe);
        let mut actions = Vec::new();
        if can_run {
            actions.push(action(
                format!("run-now-{}", m.name),
                Action::JobRun,
                vec![("job", m.name.clone())],
                "Run now",
            ));
        }
        let (toggle, label, id) = match pause {
            Some(_) => (Action::JobResume, "Resume…", "resume"),
            None => (Action::JobPause, "Pause…", "pause"),
        };
        if who.may(toggle.right(), 1).is_ok() {
            actions.push(action(
                format!("{id}-{}", m.name),
                toggle,
                vec![("job", m.name.clone())],
                label,
            ));
        }
        jt.rows.push(Row {
            id: format!("job-{}", m.name),
            cells: vec![
                Cell::link(&m.name, format!("/jobs?job={}", m.name)),
                Cell::text(&m.purpose),
                Cell::text(schedule.map_or("-", String::as_str)),
                Cell::text(next),
                Cell::text(state),
                Cell::text(format!(
                    "{} items, {}",
                    m.bounds.max_items, m.bounds.time_budget
                )),
            ],
            actions,
        });
    }
    let mut list = Section::new("jobs", "Jobs");
    list.table = Some(jt);
    let mut sparks = Section::new(
        "job-sparklines",
        &format!(
            "Last {SPARK_RUNS} runs: duration (bar), items (line), outcome (green succeeded, red failed, grey skipped)"
        ),
    );
    for name in &names {
        let spark: Vec<chart::SparkRun> = recent
            .iter()
            .filter(|r| &r.job == name)
            .map(|r| chart::SparkRun {
                started_at: r.started_at,
                seconds: r
                    .duration()
                    .map_or(0.0, |d| d.num_milliseconds() as f64 / 1000.0),
                items: r.items,
                outcome: r.outcome,
            })
            .collect();
        let title = format!("{name}: last {} run(s)", spark.len());
        sparks
            .svg
            .push(chart::sparkline(&format!("spark-{name}"), &title, &spark));
    }
    let ft = runs_table(
        "table-job-failures",
        "no failed run",
        "failure",
        &failures,
        false,
    );
    let mut fails = Section::new("job-failures", "Failures, newest first");
    fails.table = Some(ft);
    let heading = match job {
        Some(j) => format!("Runs of {j}, newest first"),
        None => "Runs, newest first".into(),
    };
    let mut section = Section::new("job-runs", &heading);
    section.table = Some(t);
    let p = SectionsPage {
        nav: Nav::of(&who, "nav-jobs"),
        title: "Jobs".into(),
        page_id: "page-jobs",
        intro: "JOB_RUN history (kept for msgx.job-run.retention). Filter: ?job=NAME, ?failed=1. \
                \"Run now\" is `msgx run JOB`: the same bounds and locks (a pipeline job is refused \
                while a daemon holds the instance lock). \"Pause\" is `msgx jobs pause`: the daemon \
                skips the job's scheduled starts until it is resumed (a reason is required)."
            .into(),
        sections: vec![list, sparks, fails, section],
        request_form: false,
        live: None,
    };
    page(StatusCode::OK, &p)
}

/// A table of JOB_RUN rows (`<row>-<id>`): with `full`, every column (the
/// history); else the start, outcome and error only (the failures).
fn runs_table(
    id: &str,
    empty: &'static str,
    row: &str,
    runs: &[job_run::RunRow],
    full: bool,
) -> Table {
    let columns = if full {
        vec![
            "#", "Job", "Trigger", "Instance", "Started", "Duration", "Outcome", "Items", "Error",
        ]
    } else {
        vec!["#", "Job", "Started", "Outcome", "Error"]
    };
    let mut t = Table::new(id, columns, empty);
    for r in runs {
        let mut cells = vec![
            Cell::text(r.id.to_string()),
            Cell::link(&r.job, format!("/jobs?job={}", r.job)),
        ];
        if full {
            cells.push(Cell::text(&r.trigger));
            cells.push(Cell::text(&r.instance));
        }
        cells.push(Cell::text(time(Some(r.started_at))));
        if full {
            cells.push(Cell::text(run_duration(r)));
        }
        cells.push(Cell::text(r.outcome.as_str()));
        if full {
            cells.push(Cell::text(r.items.to_string()));
        }
        cells.push(Cell::text(r.error.clone().unwrap_or_default()));
        t.rows.push(Row {
            id: format!("{row}-{}", r.id),
            cells,
            actions: vec![],
        });
    }
    t
}

/// A run's duration as the Jobs page shows it.
fn run_duration(r: &job_run::RunRow) -> String {
    r.duration().map_or_else(
        || "running".into(),
        |d| format!("{:.3} s", d.num_milliseconds() as f64 / 1000.0),
    )
}
