//! The ACRIS API's listener, authentication and routes (docs/acris.md).
//!
//! Served through [`crate::http::listener`] like the console and the compat
//! entry (the same timeouts, connection, concurrency and rate limits, per
//! client budgets, optional TLS; counted as `listener="acris"`). Every
//! request needs a bearer token of `msgx.acris.tokens-file` (the console's
//! users-file format, any role reads); a client that sends
//! [`FAILED_AUTH_PER_CLIENT`] wrong or missing tokens within
//! [`FAILED_AUTH_WINDOW_MINUTES`] gets 429 without a token check until the
//! window has passed, as at the compat entry.
//!
//! Answers are JSON: a flight list (`ACRISFlightList`), one flight
//! (`ACRISFlight`) or `{"error": …}` with 400, 401, 404, 429 or 503. Every
//! "now" comes from the injected clock.

use super::view::{self, AcrisFlight, Linked, ShareCode};
use crate::clock::SharedClock;
use crate::config::Config;
use crate::console::access::{AccessError, LogLimiter, Users};
use crate::domain::{DomainConfig, FlightState};
use crate::http::client::{self, Client, FailureLimiter, TRACKED_CLIENTS};
pub use crate::http::compat::{FAILED_AUTH_PER_CLIENT, FAILED_AUTH_WINDOW_MINUTES};
use crate::http::listener::{self, Limits, ServerTlsError};
use crate::store::pg::acris::{self as store, Movement, WindowQuery};
use crate::store::pg::flight::FlightStore;
use axum::Router;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Timelike, Utc};
use serde::Deserialize;
use serde_json::json;
use sqlx::PgPool;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;

/// The API's TLS keys, named in errors.
const TLS_KEYS: [&str; 3] = [
    "msgx.acris.tls-cert",
    "msgx.acris.tls-key",
    "msgx.acris.tls-client-ca",
];

/// `length` when not given (RAML `PageingList`).
pub const DEFAULT_LENGTH: i64 = 50;
/// The largest page (`length`), and the most flights a `timeRange` request
/// returns.
pub const MAX_LENGTH: i64 = 1000;
/// The widest window `from`…`to` (a window is read and sorted whole).
pub const MAX_WINDOW_DAYS: i64 = 7;
/// The default window: now − 1 h …
pub const DEFAULT_BEFORE_HOURS: i64 = 1;
/// … now + 24 h (RAML: "flights up to 24h should be provided").
pub const DEFAULT_AHEAD_HOURS: i64 = 24;

/// Why the API does not start.
#[derive(Debug, thiserror::Error)]
pub enum AcrisError {
    #[error("msgx.acris.listen {0:?} is not an IP:PORT address")]
    Address(String),
    #[error(
        "msgx.acris.tokens-file is not set: every ACRIS request needs a bearer token \
         (docs/acris.md)"
    )]
    NoTokens,
    #[error(transparent)]
    Tokens(#[from] AccessError),
    #[error("msgx.acris.tokens-file {0}: no [[token]]: no client could read")]
    EmptyTokens(PathBuf),
    #[error("msgx.airport.iata {0:?} is not an IATA airport code (3 upper-case letters)")]
    Airport(String),
    #[error(transparent)]
    Tls(#[from] ServerTlsError),
    #[error("cannot listen on msgx.acris.listen {listen}: {source}")]
    Bind {
        listen: SocketAddr,
        source: std::io::Error,
    },
}

/// What the API needs before it binds: the address, the tokens, the TLS keys.
struct Prepared {
    addr: SocketAddr,
    users: Users,
    tls: Option<TlsAcceptor>,
}

fn prepare(listen: &str, config: &Config) -> Result<Prepared, AcrisError> {
    let a = &config.msgx.acris;
    let addr: SocketAddr = listen
        .parse()
        .map_err(|_| AcrisError::Address(listen.to_string()))?;
    let iata = &config.msgx.airport.iata;
    if iata.len() != 3 || !iata.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(AcrisError::Airport(iata.clone()));
    }
    let path = a.tokens_file.as_ref().ok_or(AcrisError::NoTokens)?;
    let users = Users::load_as(path, "msgx.acris.tokens-file")?;
    if users.token_count() == 0 {
        return Err(AcrisError::EmptyTokens(path.clone()));
    }
    let tls = listener::server_tls(a.tls_cert.as_deref(), a.tls_key.as_deref(), TLS_KEYS)?;
    Ok(Prepared { addr, users, tls })
}

/// Everything [`bind`] checks except binding: the tokens file (mode,
/// entries) and the TLS files. For `msgx config check`; `Ok` when the API
/// is off.
pub fn preflight(config: &Config) -> Result<(), AcrisError> {
    match &config.msgx.acris.listen {
        Some(listen) => prepare(listen, config).map(|_| ()),
        None => Ok(()),
    }
}

/// What every handler shares.
struct Acris {
    pg: PgPool,
    store: FlightStore,
    domain: DomainConfig,
    clock: SharedClock,
    /// `msgx.airport.iata`.
    home: String,
    users: Users,
    /// Wrong or missing tokens per client address.
    failures: FailureLimiter<IpAddr>,
    /// Log lines of refused tokens, per client address.
    refusal_log: LogLimiter,
    /// The OpenAPI document's text.
    openapi: String,
}

/// A bound API, ready to [`listener::Bound::serve`].
pub type AcrisServer = listener::Bound;

/// Reads the tokens and TLS files and binds `listen`. `pg` is the API's own
/// pool ([`crate::store::pg::connect_acris`]); `openapi` is the document
/// `/acris/v1/openapi.json` serves ([`super::bind`] passes the generated one).
pub async fn bind(
    listen: &str,
    config: &Config,
    pg: PgPool,
    clock: SharedClock,
    openapi: String,
) -> Result<AcrisServer, AcrisError> {
    let Prepared { addr, users, tls } = prepare(listen, config)?;
    let (tcp, addr) = listener::bind_tcp(addr)
        .await
        .map_err(|source| AcrisError::Bind {
            listen: addr,
            source,
        })?;
    tracing::info!(
        listen = %addr,
        tls = tls.is_some(),
        bearer_tokens = users.token_count(),
        airport = %config.msgx.airport.iata,
        "ACRIS flight API listening"
    );
    let domain = crate::jobs::domain_config(config);
    let state = Arc::new(Acris {
        pg,
        store: FlightStore::new(&domain),
        domain,
        clock,
        home: config.msgx.airport.iata.clone(),
        users,
        failures: FailureLimiter::new(
            FAILED_AUTH_PER_CLIENT,
            Duration::minutes(FAILED_AUTH_WINDOW_MINUTES),
            TRACKED_CLIENTS,
        ),
        refusal_log: LogLimiter::failed_logins(),
        openapi,
    });
    Ok(listener::Bound {
        name: "acris",
        listener: tcp,
        addr,
        tls,
        router: router(state),
        limits: Limits::from_config(&config.msgx.http),
    })
}

/// The route paths (also the OpenAPI document's, src/acris/openapi.rs).
pub mod paths {
    pub const ARRIVALS: &str = "/acris/v1/flight/{airport}/arrival";
    pub const DEPARTURES: &str = "/acris/v1/flight/{airport}/departure";
    pub const FLIGHTS: &str = "/acris/v1/flightDetails/{airlineCode}/{flightNumber}/{originDate}";
    pub const FLIGHT: &str = "/acris/v1/flightDetails/{airlineCode}/{flightNumber}/{originDate}/{depAirport}/{arrAirport}";
    pub const OPENAPI: &str = "/acris/v1/openapi.json";
}

fn router(state: Arc<Acris>) -> Router {
    Router::new()
        .route(paths::ARRIVALS, get(arrivals))
        .route(paths::DEPARTURES, get(departures))
        .route(paths::FLIGHTS, get(flights))
        .route(paths::FLIGHT, get(one_flight))
        .route(paths::OPENAPI, get(openapi))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such resource") })
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .with_state(state)
}

/// `{"error": text}` with `status`.
fn error(status: StatusCode, text: impl Into<String>) -> Response {
    let text = text.into();
    (
        status,
        axum::Json(json!({ "error": crate::error_text::cut(&text) })),
    )
        .into_response()
}

/// A database failure: logged, answered 503 without its text.
fn unavailable(e: &sqlx::Error) -> Response {
    tracing::error!(error = %e, "ACRIS: the flight store could not be read");
    error(StatusCode::SERVICE_UNAVAILABLE, "flight store unavailable")
}

/// Every request: the client's failed-token budget (429), then a bearer
/// token of the tokens file (401 otherwise, with `WWW-Authenticate`).
async fn authenticate(State(s): State<Arc<Acris>>, req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<Client>()
        .map_or(IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED), |c| c.0);
    let now = s.clock.now();
    if !s.failures.allowed(&peer, now) {
        return error(
            StatusCode::TOO_MANY_REQUESTS,
            "too many wrong bearer tokens from this client; try again later",
        );
    }
    let presented = client::bearer(req.headers());
    // A token is text (the users file holds its SHA-256); bytes that are not
    // UTF-8 are no token of it.
    let known = presented
        .and_then(|t| std::str::from_utf8(t).ok())
        .is_some_and(|t| s.users.verify_token(t).is_some());
    if known {
        return next.run(req).await;
    }
    s.failures.failed(&peer, now);
    let (problem, challenge) = client::bearer_refusal(presented.is_some());
    if s.refusal_log.admit(&peer.to_string(), now).write {
        tracing::warn!(client = %peer, problem, "ACRIS: request refused (401)");
    }
    let mut answer = error(StatusCode::UNAUTHORIZED, problem);
    answer
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, challenge);
    answer
}

/// The query parameters of the list routes (RAML `PageingList`,
/// `TimeRangeParam`, `TimestampQueryParam` `startTime`; msgx's `from`, `to`,
/// `lastUpdate`). Unknown parameters are refused (400), so a misspelt one
/// is never silently ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ListParams {
    from: Option<String>,
    start_time: Option<String>,
    to: Option<String>,
    time_range: Option<String>,
    length: Option<String>,
    offset: Option<String>,
    last_update: Option<String>,
}

/// A parameter that does not parse: its name and what it must be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}: {rule}")]
pub struct BadParam {
    pub name: &'static str,
    pub rule: String,
}

fn bad(name: &'static str, rule: impl Into<String>) -> BadParam {
    BadParam {
        name,
        rule: rule.into(),
    }
}

/// An ISO-8601 date-time: RFC 3339 with an offset or `Z`, or a local time
/// `YYYY-MM-DDTHH:MM[:SS]` of the airport.
fn instant(
    name: &'static str,
    text: &str,
    domain: &DomainConfig,
) -> Result<DateTime<Utc>, BadParam> {
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.to_utc());
    }
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .map(|local| domain.local_time(local).to_utc())
        .ok_or_else(|| {
            bad(
                name,
                "must be an ISO-8601 date-time (2026-12-01T08:00:00+08:00, …Z, or a local \
                 time of the airport 2026-12-01T08:00)",
            )
        })
}

fn integer(name: &'static str, text: &str, min: i64, max: i64) -> Result<i64, BadParam> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| bad(name, format!("must be an integer from {min} to {max}")))
}

/// A parsed list request (before the movement is known).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ListRequest {
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    updated_after: Option<DateTime<Utc>>,
    offset: i64,
    /// Rows asked of the store; with `timeRange` one more than
    /// [`MAX_LENGTH`], to tell a window that holds more.
    limit: i64,
    time_range: bool,
}

/// The window and page of a list request (docs/acris.md "Parameters"):
/// `from` (or RAML's `startTime`) defaults to now − 1 h; `to` to now + 24 h,
/// or `from` + 25 h when `from` is given, or `from` + `timeRange` minutes
/// (then the whole window, up to [`MAX_LENGTH`] flights, without paging);
/// `to` after `from`, at most [`MAX_WINDOW_DAYS`] apart.
fn list_request(
    query: Option<&str>,
    now: DateTime<Utc>,
    domain: &DomainConfig,
) -> Result<ListRequest, BadParam> {
    let p: ListParams =
        serde_urlencoded::from_str(query.unwrap_or("")).map_err(|e| bad("query", e.to_string()))?;
    let from = match (&p.from, &p.start_time) {
        (Some(_), Some(_)) => return Err(bad("startTime", "give from or startTime, not both")),
        (Some(t), None) => Some(instant("from", t, domain)?),
        (None, Some(t)) => Some(instant("startTime", t, domain)?),
        (None, None) => None,
    };
    let span = Duration::hours(DEFAULT_BEFORE_HOURS + DEFAULT_AHEAD_HOURS);
    let range = p
        .time_range
        .as_deref()
        .map(|r| integer("timeRange", r, 1, MAX_WINDOW_DAYS * 24 * 60))
        .transpose()?;
    let start = from.unwrap_or(now - Duration::hours(DEFAULT_BEFORE_HOURS));
    let to = match (&p.to, range) {
        (Some(_), Some(_)) => return Err(bad("timeRange", "give to or timeRange, not both")),
        (Some(t), None) => instant("to", t, domain)?,
        (None, Some(minutes)) => start + Duration::minutes(minutes),
        (None, None) if from.is_some() => start + span,
        (None, None) => now + Duration::hours(DEFAULT_AHEAD_HOURS),
    };
    if to <= start {
        return Err(bad("to", "must be after from"));
    }
    if to - start > Duration::days(MAX_WINDOW_DAYS) {
        return Err(bad(
            "to",
            format!("the window may span at most {MAX_WINDOW_DAYS} days"),
        ));
    }
    let updated_after = p
        .last_update
        .as_deref()
        .map(|t| instant("lastUpdate", t, domain))
        .transpose()?;
    let length = p
        .length
        .as_deref()
        .map(|l| integer("length", l, 1, MAX_LENGTH))
        .transpose()?
        .unwrap_or(DEFAULT_LENGTH);
    let offset = p
        .offset
        .as_deref()
        .map(|o| integer("offset", o, 0, 1_000_000))
        .transpose()?
        .unwrap_or(0);
    Ok(match range {
        Some(_) => ListRequest {
            from: start,
            to,
            updated_after,
            offset: 0,
            limit: MAX_LENGTH + 1,
            time_range: true,
        },
        None => ListRequest {
            from: start,
            to,
            updated_after,
            offset,
            limit: length,
            time_range: false,
        },
    })
}

/// `Last-Modified`'s time: `t` rounded up to its whole second (an HTTP date
/// has no fraction; rounding down would make every later `If-Modified-Since`
/// of it look older than the change it names).
fn whole_second_up(t: DateTime<Utc>) -> DateTime<Utc> {
    let floor = t.with_nanosecond(0).unwrap_or(t);
    if floor == t {
        t
    } else {
        floor + Duration::seconds(1)
    }
}

fn http_date(t: DateTime<Utc>) -> String {
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// `If-Modified-Since` (an HTTP date); an unreadable one is ignored (RFC 9110).
fn if_modified_since(headers: &HeaderMap) -> Option<DateTime<Utc>> {
    let v = headers.get(header::IF_MODIFIED_SINCE)?.to_str().ok()?;
    DateTime::parse_from_rfc2822(v.trim())
        .ok()
        .map(|t| t.to_utc())
}

/// The refusal of a list route's airport: `None` for the home airport
/// (case-insensitive), else 404 naming the one served.
fn other_airport(s: &Acris, airport: &str) -> Option<Response> {
    if airport.eq_ignore_ascii_case(&s.home) {
        return None;
    }
    Some(error(
        StatusCode::NOT_FOUND,
        format!(
            "airport {} is not served here; this API serves {}",
            crate::log_text::for_log(&airport.chars().take(8).collect::<String>()),
            s.home
        ),
    ))
}

/// The ACRIS views of `states`, with their code shares (one more read).
async fn views(s: &Acris, states: &[FlightState]) -> Result<Vec<AcrisFlight>, sqlx::Error> {
    let mut masters: Vec<i64> = states
        .iter()
        .map(|f| f.master_id().unwrap_or(f.flid))
        .collect();
    masters.sort_unstable();
    masters.dedup();
    let linked: Vec<Linked> = store::links(&s.pg, &masters)
        .await?
        .into_iter()
        .map(|r| Linked {
            flid: r.flid,
            maid: r.maid,
            code: ShareCode {
                alcd: r.alcd,
                flno: r.flno,
            },
        })
        .collect();
    let now = s.clock.now();
    Ok(states
        .iter()
        .map(|f| view::flight(f, &s.home, &view::share_codes(f, &linked), now))
        .collect())
}

#[utoipa::path(
    get,
    path = "/acris/v1/flight/{airport}/arrival",
    tag = "flight",
    operation_id = "getArrivals",
    summary = "Arriving flights of the home airport, ordered by scheduled time",
    params(AirportPath, ListQuery),
    responses(ListAnswers),
    security(("bearer" = []))
)]
async fn arrivals(
    State(s): State<Arc<Acris>>,
    Path(airport): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    list(&s, Movement::Arrival, &airport, query.as_deref(), &headers).await
}

#[utoipa::path(
    get,
    path = "/acris/v1/flight/{airport}/departure",
    tag = "flight",
    summary = "Departing flights of the home airport, ordered by scheduled time",
    operation_id = "getDepartures",
    params(AirportPath, ListQuery),
    responses(ListAnswers),
    security(("bearer" = []))
)]
async fn departures(
    State(s): State<Arc<Acris>>,
    Path(airport): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    list(
        &s,
        Movement::Departure,
        &airport,
        query.as_deref(),
        &headers,
    )
    .await
}

/// The list routes: the window's page, `Last-Modified`, and 304 when
/// nothing in the window changed since `If-Modified-Since`.
async fn list(
    s: &Acris,
    movement: Movement,
    airport: &str,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Response {
    if let Some(r) = other_airport(s, airport) {
        return r;
    }
    let r = match list_request(query, s.clock.now(), &s.domain) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let q = WindowQuery {
        movement,
        from: r.from,
        to: r.to,
        updated_after: r.updated_after,
        offset: r.offset,
        limit: r.limit,
    };
    let page = match store::window(&s.pg, &q).await {
        Ok(p) => p,
        Err(e) => return unavailable(&e),
    };
    let modified = page.last_modified.map(whole_second_up);
    if let (Some(m), Some(since)) = (modified, if_modified_since(headers))
        && m <= since
    {
        let mut r = StatusCode::NOT_MODIFIED.into_response();
        set_last_modified(&mut r, m);
        return r;
    }
    if r.time_range && page.flids.len() as i64 > MAX_LENGTH {
        return error(
            StatusCode::BAD_REQUEST,
            format!(
                "timeRange: the window holds more than {MAX_LENGTH} flights; page it with \
                 from, to, length and offset"
            ),
        );
    }
    let flights = match store::load(&s.pg, &s.store, &page.flids).await {
        Ok(f) => f,
        Err(e) => return unavailable(&e),
    };
    let body = match views(s, &flights).await {
        Ok(v) => v,
        Err(e) => return unavailable(&e),
    };
    let mut r = axum::Json(body).into_response();
    if let Some(m) = modified {
        set_last_modified(&mut r, m);
    }
    r
}

fn set_last_modified(r: &mut Response, t: DateTime<Utc>) {
    if let Ok(v) = HeaderValue::from_str(&http_date(t)) {
        r.headers_mut().insert(header::LAST_MODIFIED, v);
    }
}

/// The path of a `flightDetails` request.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FlightKey {
    airline: String,
    /// Digits without leading zeros, padded to 3 as [`view::split_flight_number`] does.
    track: String,
    suffix: Option<String>,
    day: NaiveDate,
}

/// `suffix` is the only query parameter of `flightDetails`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DetailParams {
    suffix: Option<String>,
}

/// Checks the path: an airline code of 2–3 letters or digits, a flight
/// number of 1–4 digits, a date `YYYY-MM-DD`; a suffix of one letter.
fn flight_key(
    airline: &str,
    number: &str,
    date: &str,
    query: Option<&str>,
) -> Result<FlightKey, BadParam> {
    let p: DetailParams =
        serde_urlencoded::from_str(query.unwrap_or("")).map_err(|e| bad("query", e.to_string()))?;
    if !(2..=3).contains(&airline.len()) || !airline.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(bad(
            "airlineCode",
            "must be 2 or 3 letters or digits (IATA or ICAO)",
        ));
    }
    if !(1..=4).contains(&number.len()) || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("flightNumber", "must be 1 to 4 digits"));
    }
    let day = NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .map_err(|_| bad("originDate", "must be a date YYYY-MM-DD"))?;
    let suffix = match p.suffix.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(x) if x.len() == 1 && x.bytes().all(|b| b.is_ascii_alphabetic()) => {
            Some(x.to_ascii_uppercase())
        }
        Some(_) => return Err(bad("suffix", "must be one letter")),
    };
    Ok(FlightKey {
        airline: airline.to_ascii_uppercase(),
        track: format!("{:0>3}", number.trim_start_matches('0')),
        suffix,
        day,
    })
}

/// The ACTIVE flights of the key's day with its number.
async fn matching(s: &Acris, key: &FlightKey) -> Result<Vec<AcrisFlight>, sqlx::Error> {
    let candidates = store::day_candidates(&s.pg, key.day, &key.airline).await?;
    let states = store::load(&s.pg, &s.store, &candidates).await?;
    let states: Vec<FlightState> = states
        .into_iter()
        .filter(|f| {
            let n = view::flight_number(f);
            n.airline_code == key.airline
                && n.track_number == key.track
                && key
                    .suffix
                    .as_ref()
                    .is_none_or(|x| n.suffix.as_ref() == Some(x))
        })
        .collect();
    views(s, &states).await
}

#[utoipa::path(
    get,
    path = "/acris/v1/flightDetails/{airlineCode}/{flightNumber}/{originDate}",
    tag = "flight",
    operation_id = "getFlightsDetails",
    summary = "The flights with this number on this operation day",
    params(DetailPath, ("suffix" = Option<String>, Query, description = "The flight number's suffix letter")),
    responses(
        (status = 200, description = "The flights found, maybe none (ACRISFlightList)", body = Vec<AcrisFlight>),
        (status = 400, description = "A path parameter is not valid", body = ErrorBody),
        (status = 401, description = "No or a wrong bearer token", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
async fn flights(
    State(s): State<Arc<Acris>>,
    Path((airline, number, date)): Path<(String, String, String)>,
    RawQuery(query): RawQuery,
) -> Response {
    let key = match flight_key(&airline, &number, &date, query.as_deref()) {
        Ok(k) => k,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    match matching(&s, &key).await {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => unavailable(&e),
    }
}

#[utoipa::path(
    get,
    path = "/acris/v1/flightDetails/{airlineCode}/{flightNumber}/{originDate}/{depAirport}/{arrAirport}",
    tag = "flight",
    operation_id = "getFlightDetails",
    summary = "The one flight with this number, day and route (the AIDX flight id)",
    params(
        DetailPath,
        ("depAirport" = String, Path, description = "Scheduled departure airport (IATA)", min_length = 3, max_length = 4),
        ("arrAirport" = String, Path, description = "Scheduled arrival airport (IATA)", min_length = 3, max_length = 4),
        ("suffix" = Option<String>, Query, description = "The flight number's suffix letter"),
    ),
    responses(
        (status = 200, description = "The flight (ACRISFlight)", body = AcrisFlight),
        (status = 400, description = "A path parameter is not valid", body = ErrorBody),
        (status = 401, description = "No or a wrong bearer token", body = ErrorBody),
        (status = 404, description = "No such flight", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
async fn one_flight(
    State(s): State<Arc<Acris>>,
    Path((airline, number, date, dep, arr)): Path<(String, String, String, String, String)>,
    RawQuery(query): RawQuery,
) -> Response {
    let key = match flight_key(&airline, &number, &date, query.as_deref()) {
        Ok(k) => k,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    for (name, code) in [("depAirport", &dep), ("arrAirport", &arr)] {
        if !(3..=4).contains(&code.len()) || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return error(
                StatusCode::BAD_REQUEST,
                format!("{name}: must be an airport code of 3 or 4 letters or digits"),
            );
        }
    }
    let found = match matching(&s, &key).await {
        Ok(v) => v,
        Err(e) => return unavailable(&e),
    };
    let same =
        |a: &Option<String>, b: &str| a.as_deref().is_some_and(|a| a.eq_ignore_ascii_case(b));
    match found
        .into_iter()
        .find(|f| same(&f.departure_airport, &dep) && same(&f.arrival_airport, &arr))
    {
        Some(f) => axum::Json(f).into_response(),
        None => error(StatusCode::NOT_FOUND, "no such flight"),
    }
}

#[utoipa::path(
    get,
    path = "/acris/v1/openapi.json",
    tag = "meta",
    operation_id = "getOpenApi",
    summary = "This API's OpenAPI 3.1 document",
    responses(
        (status = 200, description = "The OpenAPI document (JSON)"),
        (status = 401, description = "No or a wrong bearer token", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
async fn openapi(State(s): State<Arc<Acris>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        s.openapi.clone(),
    )
        .into_response()
}

/// The error body of every refusal.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What was wrong, e.g. `length: must be an integer from 1 to 1000`.
    pub error: String,
}

/// The list routes' path parameter, as the OpenAPI document shows it.
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct AirportPath {
    /// The home airport's IATA code (`msgx.airport.iata`); another answers 404.
    #[param(min_length = 3, max_length = 3)]
    airport: String,
}

/// The list routes' answers, as the OpenAPI document shows them.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum ListAnswers {
    /// The flights in the window, a page of them (ACRISFlightList).
    #[response(status = 200, headers(("Last-Modified" = String, description = "The newest change of a flight in the window")))]
    Flights(Vec<AcrisFlight>),
    /// Nothing in the window changed since `If-Modified-Since`.
    #[response(status = 304)]
    NotModified,
    /// A parameter is not valid.
    #[response(status = 400)]
    BadParameter(ErrorBody),
    /// No or a wrong bearer token.
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// Not the home airport.
    #[response(status = 404)]
    OtherAirport(ErrorBody),
}

/// The list routes' query parameters, as the OpenAPI document shows them
/// (parsed by [`ListParams`]).
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ListQuery {
    /// Window start, ISO-8601 (with an offset, `Z`, or local to the airport);
    /// default now − 1 h. Flights whose scheduled or estimated time is in the
    /// window are listed.
    from: Option<String>,
    /// RAML's name of `from`.
    start_time: Option<String>,
    /// Window end (exclusive); default now + 24 h, or `from` + 25 h; at most 7
    /// days after `from`.
    to: Option<String>,
    /// Window length in minutes from `from`, instead of `to`; then paging is not
    /// used and at most 1000 flights are returned (400 beyond).
    time_range: Option<i64>,
    /// Page length, 1–1000, default 50.
    length: Option<i64>,
    /// Flights of the window skipped before the page, default 0.
    offset: Option<i64>,
    /// Only flights changed after this ISO-8601 time (a delta).
    last_update: Option<String>,
}

/// The path of the `flightDetails` routes, as the OpenAPI document shows it.
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Path, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct DetailPath {
    /// The operating airline's code (IATA, or ICAO), 2–3 characters.
    airline_code: String,
    /// The flight number's digits, 1–4 (RAML pads to at least 3).
    flight_number: String,
    /// The operation day, `YYYY-MM-DD`.
    origin_date: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 2, 0, 0)
            .single()
            .expect("valid")
    }

    fn req(q: &str) -> Result<ListRequest, BadParam> {
        list_request(Some(q), now(), &DomainConfig::default())
    }

    #[test]
    fn the_default_window_is_an_hour_back_and_a_day_ahead() {
        let r = req("").expect("valid");
        assert_eq!(r.from, now() - Duration::hours(1));
        assert_eq!(r.to, now() + Duration::hours(24));
        assert_eq!((r.offset, r.limit, r.time_range), (0, 50, false));
        let r = req("from=2026-12-01T10:00&timeRange=90").expect("valid");
        assert_eq!(r.from, now(), "10:00 at +08:00 is 02:00 UTC");
        assert_eq!(r.to, now() + Duration::minutes(90));
        assert_eq!((r.offset, r.limit, r.time_range), (0, 1001, true));
        let r = req("startTime=2026-12-01T02:00:00Z&length=1000&offset=7").expect("valid");
        assert_eq!((r.from, r.to), (now(), now() + Duration::hours(25)));
        assert_eq!((r.offset, r.limit), (7, 1000));
        let r = req("lastUpdate=2026-12-01T01:59:59.5%2B00:00").expect("valid");
        assert_eq!(r.updated_after, Some(now() - Duration::milliseconds(500)));
    }

    #[test]
    fn bad_parameters_are_named() {
        for (q, name) in [
            ("length=0", "length"),
            ("length=1001", "length"),
            ("offset=-1", "offset"),
            ("from=yesterday", "from"),
            (
                "from=2026-12-01T00:00Z&startTime=2026-12-01T00:00Z",
                "startTime",
            ),
            ("from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", "to"),
            ("from=2026-12-01T00:00:00Z&to=2026-12-09T00:00:01Z", "to"),
            ("to=2026-12-02T00:00:00Z&timeRange=5", "timeRange"),
            ("timeRange=x", "timeRange"),
            ("lastUpdate=12", "lastUpdate"),
            ("lenght=5", "query"),
        ] {
            assert_eq!(req(q).map_err(|e| e.name), Err(name), "{q}");
        }
    }

    #[test]
    fn flight_keys_are_checked_and_padded() {
        let k = flight_key("yg", "28", "2026-12-01", Some("suffix=a")).expect("valid");
        assert_eq!((k.airline.as_str(), k.track.as_str()), ("YG", "028"));
        assert_eq!(k.suffix.as_deref(), Some("A"));
        assert_eq!(
            flight_key("YG", "9028", "2026-12-01", None).map(|k| k.track),
            Ok("9028".into())
        );
        for (a, n, d, q, name) in [
            ("Y", "9028", "2026-12-01", None, "airlineCode"),
            ("YG", "90280", "2026-12-01", None, "flightNumber"),
            ("YG", "9a", "2026-12-01", None, "flightNumber"),
            ("YG", "9028", "01.12.2026", None, "originDate"),
            ("YG", "9028", "2026-12-01", Some("suffix=AB"), "suffix"),
        ] {
            assert_eq!(flight_key(a, n, d, q).map_err(|e| e.name), Err(name));
        }
    }

    #[test]
    fn last_modified_rounds_up_to_the_second_and_reads_back() {
        let t = now() + Duration::microseconds(1);
        assert_eq!(whole_second_up(t), now() + Duration::seconds(1));
        assert_eq!(whole_second_up(now()), now());
        let mut h = HeaderMap::new();
        let text = http_date(now());
        assert_eq!(text, "Tue, 01 Dec 2026 02:00:00 GMT");
        h.insert(
            header::IF_MODIFIED_SINCE,
            HeaderValue::from_str(&text).expect("ascii"),
        );
        assert_eq!(if_modified_since(&h), Some(now()));
    }
}
