//! The console's POSTs: login, logout, and the
//! operator actions. Each action is two steps on one URL: `step=confirm`
//! (the list page's button) shows what will happen — for a bulk action the
//! count — and asks for the reason; `step=apply` does it by calling exactly
//! what the CLI calls, with the logged-in user as the actor. Every POST
//! but the login needs the operator role and, from a browser session, the
//! session's CSRF token; a refusal is logged and answered 403.

use super::access::valid_user_name;
use super::filter::FilterForm;
use super::pages::{self, login_page, unavailable};
use super::rights::MissingRight;
use super::session;
use super::state::{ConsoleState, Principal, Transport};
use super::views::{Action, ConfirmPage, ForbiddenPage, Nav, ResultPage, page};
use crate::backfill::Refusal;
use crate::backfill::gate;
use crate::backfill::ops::{self, OpsError, Target};
use crate::backfill::replay::{
    ORDERING_WARNING, ReplayError, ReplayRequest, ReplayService, Selection,
};
use crate::backfill::skip::{self, SKIP_WARNING, SkipRequest, SkipService};
use crate::delivery::dead_letters::{self, Resolution};
use crate::http::client::Client;
use crate::log_text::for_log;
use crate::requests::track::{RequestKind, Tracker};
use crate::store::pg::flight::FlightStore;
use crate::store::pg::republish::{self, Selection as RepublishSelection};
use crate::store::pg::{console_session, message_search};
use crate::telemetry::request::{self, RequestContext};
use crate::telemetry::trace_context::TraceParent;
use axum::Extension;
use axum::Form;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr};

/// The most rows one bulk action may touch (narrow the filter beyond it).
pub const MAX_BULK: i64 = 10_000;

/// The login form.
#[derive(Debug, Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    user: String,
    #[serde(default)]
    password: String,
    /// The login form's CSRF token.
    #[serde(default)]
    csrf: Option<String>,
}

pub async fn login(
    State(s): State<ConsoleState>,
    client: Option<Extension<Client>>,
    transport: Option<Extension<Transport>>,
    headers: HeaderMap,
    Form(f): Form<LoginForm>,
) -> Response {
    let https = pages::https(transport);
    let Some(users) = s.users.clone() else {
        let error = Some(
            "no users are configured (msgx.console.users-file): the console is read-only".into(),
        );
        return login_page(&s, StatusCode::FORBIDDEN, error, https, &headers);
    };
    // Double submit: the form's token equals its cookie's. A page of another
    // site can post the form but can neither read nor set the cookie
    // (SameSite=Strict, HttpOnly, `__Host-` over HTTPS), so it cannot log a
    // browser in as a user of its choosing. Checked before anything else:
    // such a post costs no password check and no limiter entry.
    let cookie = session::read_cookie(&headers, session::LOGIN_COOKIE_NAME, https);
    if cookie.is_none_or(|c| !session::csrf_matches(&c, f.csrf.as_deref())) {
        let error = Some("the login form had expired or came from elsewhere; log in again".into());
        return login_page(&s, StatusCode::FORBIDDEN, error, https, &headers);
    }
    let now = s.clock.now();
    let client = client_address(client.as_ref().map(|Extension(c)| c));
    let addr = client.to_string();
    // A name that cannot be valid is refused unlooked-up and is no limiter
    // key (a 2 MB key would be kept in memory): only the address counts.
    let valid = valid_user_name(&f.user);
    let user = valid.then_some(f.user.as_str());
    if !s.limiter.allowed(user, client, now) {
        log_failed_login(&s, &f.user, &addr, now, true);
        let error = Some(format!(
            "too many failed logins; try again after {}",
            s.config.msgx.console.login_window
        ));
        return login_page(&s, StatusCode::TOO_MANY_REQUESTS, error, https, &headers);
    }
    let checked = if valid {
        let (user, password, users) = (f.user.clone(), f.password, users.clone());
        tokio::task::spawn_blocking(move || users.verify_password(&user, &password))
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    let credential = users.credential_of(&f.user);
    let (Some(_), Some(credential)) = (checked, credential) else {
        s.limiter.failed(user, client, now);
        log_failed_login(&s, &f.user, &addr, now, false);
        let error = Some("wrong user name or password".into());
        return login_page(&s, StatusCode::UNAUTHORIZED, error, https, &headers);
    };
    s.limiter.succeeded(&f.user);
    let (cookie, ended) = match open_session(&s, &f.user, &credential, None, https).await {
        Ok(opened) => opened,
        Err(r) => return r,
    };
    tracing::info!(user = %for_log(&f.user), %addr, ended_oldest = ended, "Console: login");
    let mut r = with_cookie(Redirect::to("/").into_response(), &cookie);
    // The form's token has served its purpose.
    let spent = session::set_named_cookie(session::LOGIN_COOKIE_NAME, "", https, 0);
    if let Ok(v) = HeaderValue::from_str(&spent) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r
}

/// Opens a session for `user` (a password login, or single sign-on with
/// `oidc` = its role and ID token): fresh id and CSRF token, the expired
/// sessions dropped, the user's oldest beyond `sessions-per-user` ended.
/// The session cookie's `Set-Cookie` value and how many sessions ended.
pub(super) async fn open_session(
    s: &ConsoleState,
    user: &str,
    credential: &str,
    oidc: Option<(&str, &str)>,
    https: bool,
) -> Result<(String, u64), Response> {
    let (id, csrf) = match (session::random_token(), session::random_token()) {
        (Ok(id), Ok(csrf)) => (id, csrf),
        (Err(e), _) | (_, Err(e)) => return Err(unavailable("login", e)),
    };
    let now = s.clock.now();
    let c = &s.config.msgx.console;
    let lifetime = c.session_lifetime.chrono();
    console_session::delete_expired(&s.pg, now, c.session_idle_timeout.chrono())
        .await
        .map_err(|e| unavailable("login", e))?;
    let new = console_session::NewSession {
        id_sha256: &session::id_hash(&id),
        user_name: user,
        csrf_token: &csrf,
        credential_sha256: credential,
        now,
        expires_at: now + lifetime,
        oidc,
    };
    let ended = console_session::insert(&s.pg, &new, c.sessions_per_user)
        .await
        .map_err(|e| unavailable("login", e))?;
    Ok((
        session::set_cookie(&id, https, lifetime.num_seconds()),
        ended,
    ))
}

/// The WARN line of a failed login (`locked`: refused by the rate limit)
/// with the name escaped and cut; at most the console's `login_log` lines
/// per client address and window, so guessing cannot flood the log. The
/// windows that ended are reported with their count of suppressed lines.
fn log_failed_login(s: &ConsoleState, user: &str, addr: &str, now: DateTime<Utc>, locked: bool) {
    if !failure_line_admitted(s, addr, now) {
        return;
    }
    let user = for_log(user);
    if locked {
        tracing::warn!(%user, %addr, "Console: login refused, too many failed attempts");
    } else {
        tracing::warn!(%user, %addr, "Console: failed login");
    }
}

/// Whether a failed-credential line (login or bearer token) for `addr` may
/// be written: at most the console's `login_log` lines per client address
/// and window; the windows that ended are reported with their count of
/// suppressed lines.
pub(super) fn failure_line_admitted(s: &ConsoleState, addr: &str, now: DateTime<Utc>) -> bool {
    let admit = s.login_log.admit(addr, now);
    for (addr, suppressed) in admit.ended {
        tracing::warn!(%addr, suppressed, "Console: failed-login lines suppressed in the last window");
    }
    admit.write
}

/// The request's client address (the listener resolves it; a request that
/// did not come through the listener counts as `0.0.0.0`).
pub(super) fn client_address(client: Option<&Client>) -> IpAddr {
    client.map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0)
}

fn with_cookie(mut r: Response, cookie: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// The logout form: only the CSRF token.
#[derive(Debug, Deserialize)]
pub struct CsrfForm {
    #[serde(default)]
    csrf: Option<String>,
}

pub async fn logout(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    transport: Option<Extension<Transport>>,
    headers: HeaderMap,
    Form(f): Form<CsrfForm>,
) -> Response {
    let https = pages::https(transport);
    if let Principal::Session { csrf, user, .. } = &who {
        if !session::csrf_matches(csrf, f.csrf.as_deref()) {
            return refused(&who, "logout", "missing or wrong CSRF token");
        }
        let mut id_token = None;
        if let Some(id) = session::session_cookie(&headers, https) {
            match console_session::delete(&s.pg, &session::id_hash(&id)).await {
                Ok(t) => id_token = t,
                Err(e) => return unavailable("logout", e),
            }
        }
        tracing::info!(user = %for_log(user), "Console: logout");
        // RP-initiated logout: a single sign-on session also ends at the
        // provider when its discovery document offers an end_session_endpoint.
        if let (Some(oidc), Some(token)) = (&s.oidc, id_token)
            && let Some(url) = oidc.logout_url(&token).await
        {
            let cookie = session::clear_cookie(https);
            return with_cookie(Redirect::to(&url).into_response(), &cookie);
        }
    }
    let cookie = session::clear_cookie(https);
    with_cookie(Redirect::to("/login").into_response(), &cookie)
}

/// Every action's fields; each action reads the ones it needs.
#[derive(Debug, Default, Deserialize)]
pub struct ActionForm {
    #[serde(default)]
    csrf: Option<String>,
    /// `confirm` (default) or `apply`.
    #[serde(default)]
    step: String,
    #[serde(default)]
    reason: String,
    /// MSG_IDs or EVENT_IDs, separated by commas or spaces.
    #[serde(default)]
    ids: String,
    /// Replay MALFORMED / PROTOCOL too (a checkbox).
    #[serde(default)]
    force: String,
    /// The count the confirmation showed (bulk actions).
    #[serde(default)]
    expected: String,
    /// Upstream request: operation day `YYYY-MM-DD` (RQFD), else `rtype`.
    #[serde(default)]
    day: String,
    /// Upstream request: reference type (RQRD), e.g. `GLST`.
    #[serde(default)]
    rtype: String,
    /// Run now: the job's name.
    #[serde(default)]
    job: String,
    #[serde(flatten)]
    filter: FilterForm,
}

fn refused(who: &Principal, action: &str, why: &str) -> Response {
    tracing::warn!(
        user = %for_log(who.name()),
        role = who.role().as_str(),
        action = %for_log(action),
        why,
        "Console: action refused"
    );
    (StatusCode::FORBIDDEN, format!("refused: {why}")).into_response()
}

/// The answer to an action the principal's role may not use: 403 with
/// the missing right named, as an HTML page (browsers) or a JSON error
/// (bearer-token scripts), and a WARN line with user, role and action.
pub(super) fn forbidden(who: &Principal, action: &str, m: MissingRight) -> Response {
    tracing::warn!(
        user = %for_log(who.name()),
        role = who.role().as_str(),
        action = %for_log(action),
        missing_right = m.missing.as_str(),
        count = m.count,
        "Console: action refused, missing right"
    );
    if matches!(who, Principal::Token { .. }) {
        let body = serde_json::json!({
            "error": "forbidden",
            "missing_right": m.missing.as_str(),
            "role": m.role.as_str(),
            "action": action,
            "message": m.to_string(),
        });
        return (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
    }
    let p = ForbiddenPage {
        nav: Nav::of(who, "nav-actions"),
        reason: m.to_string(),
        missing: m.missing.as_str(),
        role: m.role.as_str(),
        action: crate::error_text::cut(action).to_string(),
    };
    page(StatusCode::FORBIDDEN, &p)
}

fn parse_ids(text: &str) -> Result<Vec<i64>, String> {
    let ids: Result<Vec<i64>, _> = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(str::parse)
        .collect();
    match ids {
        // Bounded like a filter's bulk action.
        Ok(ids) if ids.len() as i64 > MAX_BULK => Err(format!(
            "{} IDs: at most {MAX_BULK} in one action",
            ids.len()
        )),
        Ok(ids) if !ids.is_empty() => Ok(ids),
        Ok(_) => Err("no ID given".into()),
        Err(_) => Err(format!(
            "{:?} is not a list of IDs",
            crate::error_text::cut(text)
        )),
    }
}

fn refusal_lines(refusals: &[Refusal]) -> Vec<String> {
    refusals
        .iter()
        .map(|r| match r.msg_id {
            0 => format!("refused: {}", r.why),
            id => format!("refused: {id}: {}", r.why),
        })
        .collect()
}

/// What an action shows, then does.
struct Plan {
    title: String,
    lines: Vec<String>,
    count: Option<i64>,
    /// The fields carried to the apply step.
    fields: Vec<(String, String)>,
    blocked: bool,
    /// Offer the "force" checkbox (replay).
    offer_force: bool,
}

pub async fn handle(
    State(s): State<ConsoleState>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    headers: HeaderMap,
    Form(f): Form<ActionForm>,
) -> Response {
    let Some(action) = Action::parse(&name) else {
        return (StatusCode::NOT_FOUND, "no such action").into_response();
    };
    if let Err(m) = who.may(action.right(), 1) {
        return forbidden(&who, &name, m);
    }
    if let Principal::Session { csrf, .. } = &who
        && !session::csrf_matches(csrf, f.csrf.as_deref())
    {
        return refused(&who, &name, "missing or wrong CSRF token");
    }
    let url = action.path();
    let reason = f.reason.trim().to_string();
    let apply = f.step == "apply";
    let plan = match plan(&s, action, &f).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    // The count is known once the selection is: beyond the bulk threshold
    // the role needs the `bulk` right too, checked before the confirmation.
    let count = plan
        .count
        .or_else(|| parse_ids(&f.ids).ok().map(|ids| ids.len() as i64))
        .unwrap_or(1);
    if let Err(m) = who.may(action.right(), count) {
        return forbidden(&who, &name, m);
    }
    let confirm = |error: Option<String>, plan: Plan| {
        let p = ConfirmPage {
            nav: Nav::of(&who, "nav-actions"),
            title: plan.title,
            url: url.clone(),
            lines: plan.lines,
            count: plan.count,
            fields: plan.fields,
            reason: reason.clone(),
            error,
            blocked: plan.blocked,
            offer_force: plan.offer_force,
        };
        page(StatusCode::OK, &p)
    };
    if !apply || plan.blocked {
        return confirm(None, plan);
    }
    if reason.is_empty() {
        return confirm(
            Some("a reason is required: it is recorded with the action".into()),
            plan,
        );
    }
    if let (Some(n), Ok(expected)) = (plan.count, f.expected.parse::<i64>())
        && n != expected
    {
        let error = format!(
            "the matching rows changed from {expected} to {n} since the confirmation: check and confirm again"
        );
        return confirm(Some(error), plan);
    }
    let actor = who.name().to_string();
    // The audit trail's role and trace (telemetry::request): the role acted
    // with, and the caller's `traceparent` when valid, else a new trace.
    let request = RequestContext {
        role: who.role().as_str().to_string(),
        trace: headers
            .get("traceparent")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| TraceParent::parse(v).ok())
            .unwrap_or_else(TraceParent::random),
    };
    let applied = request::scope(request, apply_action(&s, action, &f, &reason, &actor)).await;
    let (ok, lines) = match applied {
        Ok(r) => r,
        Err(r) => return r,
    };
    let p = ResultPage {
        nav: Nav::of(&who, "nav-actions"),
        title: plan.title,
        ok,
        lines,
        back: back_link(action, &f),
    };
    page(
        if ok {
            StatusCode::OK
        } else {
            StatusCode::CONFLICT
        },
        &p,
    )
}

fn back_link(action: Action, f: &ActionForm) -> String {
    match action {
        Action::EventResend | Action::EventDiscard => "/events/dead".into(),
        Action::BackfillReopen | Action::BackfillReconcile => "/backfill/abandoned".into(),
        Action::Request => "/requests".into(),
        Action::JobRun | Action::JobPause | Action::JobResume => {
            format!("/jobs?job={}", f.job.trim())
        }
        Action::Republish => parse_ids(&f.ids)
            .ok()
            .filter(|ids| ids.len() == 1)
            .map_or_else(|| "/flights".into(), |ids| format!("/flights/{}", ids[0])),
        Action::ReplayFilter => format!("/messages?{}", f.filter.without_cursor().query_string()),
        Action::Replay | Action::Skip => parse_ids(&f.ids)
            .ok()
            .filter(|ids| ids.len() == 1)
            .map_or_else(|| "/messages".into(), |ids| format!("/messages/{}", ids[0])),
    }
}

fn bad_request(e: impl std::fmt::Display) -> Response {
    (StatusCode::BAD_REQUEST, e.to_string()).into_response()
}

fn replay_service(s: &ConsoleState) -> ReplayService<'_> {
    ReplayService {
        pool: &s.pg,
        clock: &s.clock,
        gate_wait: gate::default_wait(s.config.msgx.mailbox.timeout.std()),
    }
}

/// The messages a replay applies to: the IDs given, or every row matching
/// the filter (at most [`MAX_BULK`]).
async fn replay_ids(
    s: &ConsoleState,
    action: Action,
    f: &ActionForm,
) -> Result<Vec<i64>, Response> {
    if action != Action::ReplayFilter {
        return parse_ids(&f.ids).map_err(bad_request);
    }
    let (q, _) = f.filter.without_cursor().parse().map_err(bad_request)?;
    let ids = message_search::ids(&s.pg, &q, MAX_BULK + 1)
        .await
        .map_err(|e| unavailable("replay", e))?;
    if ids.len() as i64 > MAX_BULK {
        return Err(bad_request(format!(
            "more than {MAX_BULK} messages match: narrow the filter"
        )));
    }
    Ok(ids)
}

fn replay_request(
    ids: Vec<i64>,
    f: &ActionForm,
    reason: &str,
    actor: &str,
    dry_run: bool,
) -> ReplayRequest {
    ReplayRequest {
        selection: Selection::Ids(ids),
        force: !f.force.is_empty(),
        reason: Some(reason.to_string()).filter(|r| !r.is_empty()),
        actor: actor.to_string(),
        dry_run,
    }
}

async fn plan(s: &ConsoleState, action: Action, f: &ActionForm) -> Result<Plan, Response> {
    let ids_field = |ids: &str| vec![("ids".to_string(), ids.to_string())];
    match action {
        Action::Replay | Action::ReplayFilter => {
            let ids = replay_ids(s, action, f).await?;
            let count = ids.len() as i64;
            let mut fields = if action == Action::Replay {
                ids_field(&f.ids)
            } else {
                filter_fields(&f.filter.without_cursor())
            };
            fields.push(("expected".into(), count.to_string()));
            let mut lines = vec![ORDERING_WARNING.to_string()];
            let mut blocked = ids.is_empty();
            if ids.is_empty() {
                lines.push("no message matches: nothing to replay".into());
            } else {
                // A dry run of the very request: what it would replay, or why not.
                let dry = replay_request(ids, f, "dry run", "console", true);
                match replay_service(s).replay(&dry).await {
                    Ok(o) => lines.push(format!(
                        "{} message(s) go back to PENDING: {}",
                        o.rows.len(),
                        crate::backfill::id_ranges(
                            &o.rows.iter().map(|r| r.msg_id).collect::<Vec<_>>()
                        )
                    )),
                    Err(ReplayError::Refused(r)) => {
                        // Only a refusal that forcing lifts leaves the apply button.
                        let forceable = f.force.is_empty() && r.iter().all(|r| r.forceable);
                        blocked = !forceable;
                        lines.extend(refusal_lines(&r));
                        lines.push(if forceable {
                            "tick \"force\" to replay MALFORMED / PROTOCOL messages (recorded as REPLAY_FORCED)".into()
                        } else {
                            "nothing would change: the replay is all or nothing; narrow the selection".into()
                        });
                    }
                    Err(e) => lines.push(format!("cannot plan the replay: {e}")),
                }
            }
            Ok(Plan {
                title: if action == Action::Replay {
                    "Replay".into()
                } else {
                    "Replay all matching the filter".into()
                },
                lines,
                count: Some(count),
                fields,
                blocked,
                offer_force: true,
            })
        }
        Action::Skip => {
            let ids = parse_ids(&f.ids).map_err(bad_request)?;
            let service = SkipService {
                pool: &s.pg,
                now: s.clock.now(),
            };
            let dry = SkipRequest {
                selection: skip::Selection::Ids(ids.clone()),
                reason: "dry run".into(),
                actor: "console".into(),
                dry_run: true,
            };
            let mut lines = vec![SKIP_WARNING.to_string()];
            let mut blocked = false;
            match service.skip(&dry).await {
                Ok(o) => {
                    lines.push(format!("{} message(s) become SKIPPED", o.skipped.len()));
                    for l in &o.left_alone {
                        lines.push(format!("{}: left alone ({})", l.msg_id, l.state.as_str()));
                    }
                    for id in &o.not_found {
                        lines.push(format!("{id}: not in PROC_STATE"));
                    }
                    blocked = o.skipped.is_empty();
                }
                Err(e) => lines.push(format!("cannot plan the skip: {e}")),
            }
            Ok(Plan {
                title: "Skip".into(),
                lines,
                count: Some(ids.len() as i64),
                fields: ids_field(&f.ids),
                blocked,
                offer_force: false,
            })
        }
        Action::EventResend | Action::EventDiscard => {
            let ids = parse_ids(&f.ids).map_err(bad_request)?;
            let resend = action == Action::EventResend;
            let what = if resend {
                "go back to PENDING with a fresh retry budget (delivery order is not restored)"
            } else {
                "are deleted; the row and its payload are recorded in operator_action"
            };
            Ok(Plan {
                title: if resend {
                    "Resend DEAD events".into()
                } else {
                    "Discard DEAD events".into()
                },
                lines: vec![format!("DEAD event(s) {} {what}", f.ids.trim())],
                count: Some(ids.len() as i64),
                fields: ids_field(&f.ids),
                blocked: false,
                offer_force: false,
            })
        }
        Action::BackfillReopen | Action::BackfillReconcile => {
            let ids = parse_ids(&f.ids).map_err(bad_request)?;
            let line = if action == Action::BackfillReopen {
                "the abandonment is cleared: the next backfill scan retries the mark at once (reopen once the mailbox is healthy)"
            } else {
                "recorded as reconciled with the mailbox owner (the reason is the note): the archive job may then archive them"
            };
            Ok(Plan {
                title: if action == Action::BackfillReopen {
                    "Reopen abandoned backfill".into()
                } else {
                    "Reconcile abandoned backfill".into()
                },
                lines: vec![format!("message(s) {}: {line}", f.ids.trim())],
                count: Some(ids.len() as i64),
                fields: ids_field(&f.ids),
                blocked: false,
                offer_force: false,
            })
        }
        Action::Request => {
            let kind = request_kind(f).map_err(bad_request)?;
            let mut fields = vec![
                ("day".to_string(), f.day.clone()),
                ("rtype".to_string(), f.rtype.clone()),
            ];
            fields.retain(|(_, v)| !v.trim().is_empty());
            let shadow = s.config.msgx.mailbox.shadow;
            let mut lines = vec![format!(
                "a {} request is written to COUTMSGS for the AODB and tracked in REQ_TRACK (docs/requests.md)",
                kind.req_type()
            )];
            if shadow {
                lines.push(crate::requests::track::RequestError::Shadow.to_string());
            }
            Ok(Plan {
                title: "Send an upstream request".into(),
                lines,
                count: None,
                fields,
                blocked: shadow,
                offer_force: false,
            })
        }
        Action::JobRun => {
            let m = crate::jobs::manifest::find(f.job.trim())
                .ok_or_else(|| bad_request(format!("{:?} is not a job", f.job)))?;
            Ok(Plan {
                title: format!("Run {} now", m.name),
                lines: vec![format!(
                    "{} runs once now as `msgx run {}` does: at most {} items within {}, under its own \
                     lock (a pipeline job is refused while a daemon holds the instance lock)",
                    m.name, m.name, m.bounds.max_items, m.bounds.time_budget
                )],
                count: None,
                fields: vec![("job".into(), m.name.clone())],
                blocked: s.launcher.is_none(),
                offer_force: false,
            })
        }
        Action::JobPause | Action::JobResume => job_control_plan(s, action, f).await,
        Action::Republish => {
            let selection = republish_selection(f).map_err(bad_request)?;
            let dry = republish_of(s, &selection, "console", "dry run", true)
                .await
                .map_err(bad_request)?;
            let count = dry.flids.len() as i64;
            let mut fields = vec![
                ("ids".to_string(), f.ids.trim().to_string()),
                ("day".to_string(), f.day.trim().to_string()),
            ];
            fields.push(("expected".into(), count.to_string()));
            let line = if dry.flids.is_empty() {
                "no flight matches: nothing to re-send".to_string()
            } else {
                format!(
                    "{count} flight(s) re-sent as REQUEST records (msg, then the schd record at its                      current version), in FLID order: {}",
                    crate::backfill::id_ranges(&dry.flids)
                )
            };
            Ok(Plan {
                title: format!("Re-send the records of {}", selection.describe()),
                lines: vec![line],
                count: Some(count),
                fields,
                blocked: dry.flids.is_empty(),
                offer_force: false,
            })
        }
    }
}

/// The confirmation of a pause or resume: what it does, and the standing
/// pause (a pause of a paused job, or a resume of a running one, has
/// nothing to do and is not offered).
async fn job_control_plan(
    s: &ConsoleState,
    action: Action,
    f: &ActionForm,
) -> Result<Plan, Response> {
    let m = crate::jobs::manifest::find(f.job.trim())
        .ok_or_else(|| bad_request(format!("{:?} is not a job", f.job)))?;
    let standing = crate::store::pg::job_pause::get(&s.pg, &m.name)
        .await
        .map_err(|e| unavailable(action.as_str(), e))?;
    let pause = action == Action::JobPause;
    let (title, mut lines) = if pause {
        (
            format!("Pause {}", m.name),
            vec![format!(
                "the daemon (and a standby that takes over) skips {}'s scheduled starts, recorded \
                 as SKIPPED_PAUSED; `msgx run` and \"Run now\" refuse it (`msgx run --force` runs \
                 it); the jobs its runs would start keep their own schedule",
                m.name
            )],
        )
    } else {
        (
            format!("Resume {}", m.name),
            vec![format!("{}'s next scheduled start runs", m.name)],
        )
    };
    let blocked = match (&standing, pause) {
        (Some(p), true) => {
            lines.push(format!(
                "already {}: nothing to do",
                crate::jobs::control::describe(p)
            ));
            true
        }
        (Some(p), false) => {
            lines.push(format!("now {}", crate::jobs::control::describe(p)));
            false
        }
        (None, true) => false,
        (None, false) => {
            lines.push("not paused: nothing to do".into());
            true
        }
    };
    Ok(Plan {
        title,
        lines,
        count: None,
        fields: vec![("job".into(), m.name.clone())],
        blocked,
        offer_force: false,
    })
}

/// The flights a republish form names: FLIDs (`ids`), else an operation day.
fn republish_selection(f: &ActionForm) -> Result<RepublishSelection, String> {
    let (ids, day) = (f.ids.trim(), f.day.trim());
    match (ids.is_empty(), day.is_empty()) {
        (false, true) => parse_ids(ids).map(RepublishSelection::Flids),
        (true, false) => chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
            .map(RepublishSelection::Day)
            .map_err(|_| format!("day: {day:?} is not YYYY-MM-DD")),
        _ => Err("give FLIDs or an operation day, not both".into()),
    }
}

/// `msgx events republish` of `selection`, at most [`MAX_BULK`] flights.
async fn republish_of(
    s: &ConsoleState,
    selection: &RepublishSelection,
    actor: &str,
    reason: &str,
    dry_run: bool,
) -> Result<republish::Republished, republish::RepublishError> {
    let store = FlightStore::new(&crate::jobs::domain_config(&s.config));
    let request = republish::Request {
        selection,
        limit: usize::try_from(MAX_BULK).unwrap_or(usize::MAX),
        actor,
        reason,
        at: s.clock.now(),
        dry_run,
    };
    republish::republish(&s.pg, &store, &request).await
}

/// The request the form asks for: RQFD for `day`, else RQRD for `rtype`.
fn request_kind(f: &ActionForm) -> Result<RequestKind, String> {
    let (day, rtype) = (f.day.trim(), f.rtype.trim());
    match (day.is_empty(), rtype.is_empty()) {
        (false, true) => chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
            .map(|day| RequestKind::Schedule { day })
            .map_err(|_| format!("day: {day:?} is not YYYY-MM-DD")),
        (true, false) => Ok(RequestKind::Reference {
            rtype: rtype.to_ascii_uppercase(),
        }),
        _ => Err(
            "give an operation day (schedule, RQFD) or a reference type (RQRD), not both".into(),
        ),
    }
}

fn filter_fields(f: &FilterForm) -> Vec<(String, String)> {
    [
        ("state", &f.state),
        ("class", &f.class),
        ("kind", &f.kind),
        ("flid", &f.flid),
        ("from", &f.from),
        ("to", &f.to),
        ("text", &f.text),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.clone()))
    .collect()
}

/// Records an action the console started that its service does not audit
/// itself (an upstream request, a job run) in OPERATOR_ACTION with the
/// authenticated user; the result line says so, or that
/// the record failed (the action itself has happened either way).
async fn audit(
    s: &ConsoleState,
    actor: &str,
    action: &str,
    target: &str,
    reason: &str,
    detail: serde_json::Value,
) -> String {
    let row = crate::store::pg::operator_action::NewAction {
        at: s.clock.now(),
        actor,
        action,
        target,
        reason: Some(reason),
        detail,
    };
    let recorded = match s.pg.acquire().await {
        Ok(mut conn) => crate::store::pg::operator_action::insert(&mut conn, &row).await,
        Err(e) => Err(e),
    };
    match recorded {
        Ok(id) => format!("recorded as operator_action #{id} by {actor}"),
        Err(e) => {
            tracing::error!(user = %for_log(actor), action, target = %for_log(target), error = %for_log(&e.to_string()), "Console: the action happened but could not be recorded");
            format!("the action happened but its record failed: {e}")
        }
    }
}

/// Does the action; `(applied, what happened)`.
async fn apply_action(
    s: &ConsoleState,
    action: Action,
    f: &ActionForm,
    reason: &str,
    actor: &str,
) -> Result<(bool, Vec<String>), Response> {
    let now = s.clock.now();
    match action {
        Action::Replay | Action::ReplayFilter => {
            let ids = replay_ids(s, action, f).await?;
            match replay_service(s)
                .replay(&replay_request(ids, f, reason, actor, false))
                .await
            {
                Ok(o) => {
                    let ids: Vec<i64> = o.rows.iter().map(|r| r.msg_id).collect();
                    let mut lines = vec![format!(
                        "replayed {} message(s) to PENDING: {}",
                        ids.len(),
                        crate::backfill::id_ranges(&ids)
                    )];
                    if let Some(id) = o.action_id {
                        lines.push(format!("recorded as backfill_action #{id} by {actor}"));
                    }
                    if !o.already_marked.is_empty() {
                        lines.push(format!(
                            "note: the mailbox mark of {} was already written; if the owner purged the raw text, the replay ends DEAD(MALFORMED, raw-missing)",
                            crate::backfill::id_ranges(&o.already_marked)
                        ));
                    }
                    Ok((!ids.is_empty(), lines))
                }
                Err(ReplayError::Refused(r)) => {
                    let mut lines = refusal_lines(&r);
                    lines.push("nothing was changed".into());
                    Ok((false, lines))
                }
                Err(e) => Ok((
                    false,
                    vec![format!("replay failed; nothing was changed: {e}")],
                )),
            }
        }
        Action::Skip => {
            let ids = parse_ids(&f.ids).map_err(bad_request)?;
            let service = SkipService { pool: &s.pg, now };
            let req = SkipRequest {
                selection: skip::Selection::Ids(ids),
                reason: reason.to_string(),
                actor: actor.to_string(),
                dry_run: false,
            };
            match service.skip(&req).await {
                Ok(o) => {
                    let ids: Vec<i64> = o.skipped.iter().map(|r| r.msg_id).collect();
                    let mut lines = vec![format!(
                        "skipped {} message(s): {}",
                        ids.len(),
                        crate::backfill::id_ranges(&ids)
                    )];
                    if let Some(id) = o.action_id {
                        lines.push(format!("recorded as backfill_action #{id} by {actor}"));
                    }
                    Ok((!ids.is_empty(), lines))
                }
                Err(e) => Ok((false, vec![format!("skip failed: {e}")])),
            }
        }
        Action::EventResend | Action::EventDiscard => {
            let ids = parse_ids(&f.ids).map_err(bad_request)?;
            let what = if action == Action::EventResend {
                Resolution::Resend
            } else {
                Resolution::Discard
            };
            let results = dead_letters::resolve(&s.pg, what, &ids, actor, Some(reason), now)
                .await
                .map_err(|e| unavailable(action.as_str(), e))?;
            let mut ok = true;
            let lines = results
                .iter()
                .map(|r| match r.action_id {
                    Some(a) if r.applied => {
                        format!("{}: done (operator_action #{a} by {actor})", r.event_id)
                    }
                    _ => {
                        ok = false;
                        format!("{}: not a DEAD event; nothing done", r.event_id)
                    }
                })
                .collect();
            Ok((ok, lines))
        }
        Action::BackfillReopen | Action::BackfillReconcile => {
            let ids = parse_ids(&f.ids).map_err(bad_request)?;
            let done = if action == Action::BackfillReopen {
                ops::reopen(&s.pg, now, &Target::Ids(ids), Some(reason), actor).await
            } else {
                ops::reconcile(&s.pg, now, &ids, Some(reason), actor).await
            };
            match done {
                Ok(o) => {
                    let mut lines = vec![format!(
                        "changed: {}",
                        crate::backfill::id_ranges(&o.changed)
                    )];
                    if !o.unchanged.is_empty() {
                        lines.push(format!(
                            "already reconciled: {}",
                            crate::backfill::id_ranges(&o.unchanged)
                        ));
                    }
                    if let Some(id) = o.action_id {
                        lines.push(format!("recorded as backfill_action #{id} by {actor}"));
                    }
                    Ok((!o.changed.is_empty(), lines))
                }
                Err(OpsError::Refused(r)) => {
                    let mut lines = refusal_lines(&r);
                    lines.push("nothing was changed".into());
                    Ok((false, lines))
                }
                Err(e) => Ok((false, vec![format!("failed: {e}")])),
            }
        }
        Action::Request => {
            let kind = request_kind(f).map_err(bad_request)?;
            let tracker = Tracker {
                pg: &s.pg,
                mailbox: &s.mailbox,
                config: &s.config,
            };
            match tracker.request(&kind, s.clock.as_ref()).await {
                Ok(sent) => {
                    let r = &sent.request;
                    tracing::info!(user = %for_log(actor), reason = %for_log(reason), request = r.id, req_type = %r.req_type, "Console: upstream request sent");
                    let detail = serde_json::json!({
                        "req_type": r.req_type.to_string(), "seqn": r.seqn, "coutmsgs_id": r.coutmsgs_id,
                    });
                    let target = format!("req_track:{}", r.id);
                    let audit = audit(s, actor, "REQUEST_SEND", &target, reason, detail).await;
                    let mut lines = vec![format!(
                        "request {} {} SEQN {} sent: COUTMSGS {}",
                        r.id,
                        r.req_type,
                        r.seqn,
                        r.coutmsgs_id.unwrap_or_default()
                    )];
                    if !sent.superseded.is_empty() {
                        lines.push(format!(
                            "expired the older open request(s) {:?}",
                            sent.superseded
                        ));
                    }
                    lines.push(audit);
                    Ok((true, lines))
                }
                Err(e) => Ok((false, vec![format!("{}: {e}", kind.req_type())])),
            }
        }
        Action::JobRun => {
            let Some(launcher) = &s.launcher else {
                return Ok((
                    false,
                    vec!["\"run now\" is not available in this process".into()],
                ));
            };
            let job = f.job.trim();
            tracing::info!(user = %for_log(actor), reason = %for_log(reason), job = %for_log(job), "Console: job run requested");
            match launcher.run_now(job).await {
                Ok(summary) => {
                    let detail = serde_json::json!({ "summary": summary });
                    let target = format!("job:{job}");
                    let audit = audit(s, actor, "JOB_RUN", &target, reason, detail).await;
                    let mut lines: Vec<String> = summary.lines().map(str::to_string).collect();
                    lines.push(audit);
                    Ok((true, lines))
                }
                Err(e) => Ok((false, vec![format!("{job} did not run: {e}")])),
            }
        }
        Action::JobPause | Action::JobResume => {
            use crate::jobs::control::{self, Verb};
            let verb = if action == Action::JobPause {
                Verb::Pause
            } else {
                Verb::Resume
            };
            let job = f.job.trim();
            let request = control::Request {
                verb,
                job,
                actor,
                reason,
                at: now,
            };
            // The store writes the change and its operator_action row in one
            // transaction.
            match control::apply(&s.pg, &request).await {
                Ok(change) => {
                    tracing::info!(user = %for_log(actor), reason = %for_log(reason), job = %for_log(job), action = action.as_str(), "Console: job pause changed");
                    let applied =
                        matches!(change, crate::store::pg::job_pause::Change::Applied { .. });
                    Ok((applied, vec![control::outcome_line(verb, job, &change)]))
                }
                Err(e) => Ok((false, vec![format!("nothing changed: {e}")])),
            }
        }
        Action::Republish => {
            let selection = republish_selection(f).map_err(bad_request)?;
            // The store records the action (EVENT_REPUBLISH) in its own transaction.
            match republish_of(s, &selection, actor, reason, false).await {
                Ok(done) => Ok((
                    true,
                    vec![
                        format!(
                            "re-sent {} flight(s) as REQUEST records: {}",
                            done.flids.len(),
                            crate::backfill::id_ranges(&done.flids)
                        ),
                        format!(
                            "recorded as operator_action {}",
                            done.action_id.map_or("-".into(), |i| i.to_string())
                        ),
                    ],
                )),
                Err(e) => Ok((false, vec![format!("nothing re-sent: {e}")])),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_separated_by_commas_or_spaces() {
        assert_eq!(parse_ids("1, 2 3,,4"), Ok(vec![1, 2, 3, 4]));
        assert!(parse_ids("").is_err());
        assert!(parse_ids("1,x").is_err());
    }

    /// An explicit list is bounded like a filter's bulk action.
    #[test]
    fn an_explicit_list_holds_at_most_max_bulk_ids() {
        let list = |n: i64| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        assert_eq!(
            parse_ids(&list(MAX_BULK)).map(|v| v.len() as i64),
            Ok(MAX_BULK)
        );
        let e = parse_ids(&list(200_000)).expect_err("too many");
        assert!(e.contains("at most 10000"), "{e}");
        let e = parse_ids(&"x".repeat(100_000)).expect_err("not IDs");
        assert!(
            e.len() < 1_000,
            "the refused text is cut: {} bytes",
            e.len()
        );
    }
}
