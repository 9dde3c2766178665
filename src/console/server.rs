//! The console's listener, router and authentication. Every request passes
//! [`browser_guard`] (the Host allow-list, the security headers) and then
//! [`authenticate`]: a bearer token, else the session cookie, else (only when
//! no users file is configured and `anonymous-viewer` asks for it, on loopback
//! alone) an anonymous viewer.

use super::access::{AccessError, LogLimiter, LoginLimiter, Role, Users};
use super::live::LiveFeed;
use super::live::{Live, LiveClients};
use super::live_stream;
use super::oidc::{self, Oidc, OidcError};
use super::rights::Rights;
use super::state::{ConsoleState, JobLauncher, Principal, Transport};
use super::{actions, audit, pages, session, sso};
use crate::clock::SharedClock;
use crate::config::Config;
use crate::http::client::Client;
use crate::http::listener::{self, Limits, Peer, ServerTlsError, TlsError};
use crate::store::mailbox::Mailbox;
use crate::store::pg::console_session;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use sqlx::PgPool;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// The console's TLS keys, named in errors.
const TLS_KEYS: [&str; 3] = [
    "msgx.console.tls-cert",
    "msgx.console.tls-key",
    "msgx.console.tls-client-ca",
];

/// Why the console does not start.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    #[error("msgx.console.listen {0:?} is not an IP:PORT address")]
    Address(String),
    #[error(
        "msgx.console.listen {0} is not a loopback address and no users are configured: \
         set msgx.console.users-file with at least one [[user]] or [[token]] (docs/console.md)"
    )]
    NoUsers(SocketAddr),
    #[error(
        "msgx.console.users-file is not set: set it (operators log in), or set \
         msgx.console.anonymous-viewer = true for a read-only console without login on \
         loopback (docs/console.md)"
    )]
    NoAnonymous,
    #[error(transparent)]
    Users(#[from] AccessError),
    #[error(transparent)]
    Oidc(#[from] OidcError),
    #[error("msgx.console.users-file {0}: no [[user]] and no [[token]]: nobody could log in")]
    EmptyUsers(PathBuf),
    #[error("msgx.console.tls-cert, tls-key: set both or neither")]
    TlsIncomplete,
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("cannot listen on msgx.console.listen {listen}: {source}")]
    Bind {
        listen: SocketAddr,
        source: std::io::Error,
    },
}

/// A bound console, ready to serve.
pub struct ConsoleServer {
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    state: ConsoleState,
    limits: Limits,
}

/// What the console needs from its config and files before it binds: the
/// address, the users (read and checked: mode, entries) and the TLS keys.
/// `msgx config check` runs the same, so a file that
/// would stop the console is reported before a daemon starts.
struct Prepared {
    addr: SocketAddr,
    users: Option<Arc<Users>>,
    oidc: Option<Arc<Oidc>>,
    tls: Option<TlsAcceptor>,
}

fn prepare(listen: &str, config: &Config) -> Result<Prepared, ConsoleError> {
    let c = &config.msgx.console;
    let addr: SocketAddr = listen
        .parse()
        .map_err(|_| ConsoleError::Address(listen.to_string()))?;
    let oidc = match &c.oidc {
        Some(o) => {
            let secret = oidc::client_secret(o, |k| std::env::var(k).ok())?;
            Some(Arc::new(Oidc::new(o, secret)?))
        }
        None => None,
    };
    let users = match &c.users_file {
        None if oidc.is_some() => None,
        None if !addr.ip().is_loopback() => return Err(ConsoleError::NoUsers(addr)),
        None if !c.anonymous_viewer => return Err(ConsoleError::NoAnonymous),
        None => None,
        Some(path) => {
            let users = Users::load(path)?;
            if users.is_empty() {
                return Err(ConsoleError::EmptyUsers(path.clone()));
            }
            Some(Arc::new(users))
        }
    };
    let tls = listener::server_tls(c.tls_cert.as_deref(), c.tls_key.as_deref(), TLS_KEYS).map_err(
        |e| match e {
            ServerTlsError::Incomplete(..) => ConsoleError::TlsIncomplete,
            ServerTlsError::Tls(e) => ConsoleError::Tls(e),
        },
    )?;
    Ok(Prepared {
        addr,
        users,
        oidc,
        tls,
    })
}

/// Everything [`bind`] checks except binding the address: the users file
/// (mode, entries), the TLS files, the console settings. For `msgx config
/// check`; `Ok` when no console is configured.
pub fn preflight(config: &Config) -> Result<(), ConsoleError> {
    match &config.msgx.console.listen {
        Some(listen) => prepare(listen, config).map(|_| ()),
        None => Ok(()),
    }
}

/// The host names a console on `addr` answers to: the configured ones,
/// else `localhost`; with the listen address itself unless it is a
/// wildcard. Lower case, without port or brackets.
fn allowed_hosts(configured: &[String], addr: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = if configured.is_empty() {
        vec!["localhost".into()]
    } else {
        configured.iter().map(|h| bare_host(h.trim())).collect()
    };
    if !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    hosts
}

/// `host[:port]` or `[v6]:port` without the port and brackets, lower case.
fn bare_host(authority: &str) -> String {
    let a = authority.trim().to_ascii_lowercase();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("").to_string();
    }
    match a.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            host.to_string()
        }
        _ => a,
    }
}

/// Checks the config, loads the users file and binds `msgx.console.listen`.
/// `launcher` enables "run now" on the Jobs page.
pub async fn bind(
    listen: &str,
    config: Arc<Config>,
    pg: PgPool,
    mailbox: Mailbox,
    clock: SharedClock,
    launcher: Option<Arc<dyn JobLauncher>>,
) -> Result<ConsoleServer, ConsoleError> {
    let Prepared {
        addr,
        users,
        oidc,
        tls,
    } = prepare(listen, &config)?;
    let c = &config.msgx.console;
    let tcp = TcpListener::bind(addr)
        .await
        .map_err(|source| ConsoleError::Bind {
            listen: addr,
            source,
        })?;
    let limits = Limits::from_config(&config.msgx.http);
    let limiter = Arc::new(LoginLimiter::new(
        c.login_attempts,
        c.login_attempts_per_client,
        c.login_window.chrono(),
    ));
    // The live view's series exist from the start (0) in a process that
    // serves a console, and only there.
    metrics::gauge!("msgx_console_live_clients").increment(0.0);
    metrics::counter!("msgx_console_live_refused_total").increment(0);
    let live = Live {
        feed: LiveFeed::new(pg.clone(), c.live.poll_interval.std()),
        clients: Arc::new(LiveClients::default()),
    };
    let state = ConsoleState {
        pg,
        mailbox,
        clock,
        users,
        limiter,
        login_log: Arc::new(LogLimiter::failed_logins()),
        tls: tls.is_some(),
        allowed_hosts: Arc::new(allowed_hosts(&c.allowed_hosts, addr)),
        rights: Rights::from_config(&c.rights),
        oidc,
        live,
        config,
        launcher,
    };
    Ok(ConsoleServer {
        listener: tcp,
        tls,
        state,
        limits,
    })
}

impl ConsoleServer {
    /// The bound address (port 0 resolved).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `stop` turns true.
    pub async fn serve(self, stop: tokio::sync::watch::Receiver<bool>) -> std::io::Result<()> {
        self.state.live.feed.stop_on(stop.clone());
        let app = router(self.state);
        listener::serve("console", self.listener, self.tls, app, self.limits, stop).await
    }
}

/// The console's routes behind [`authenticate`].
pub fn router(state: ConsoleState) -> Router {
    Router::new()
        .route("/", get(pages::overview))
        .route("/messages", get(pages::messages))
        .route("/messages/{id}", get(pages::message))
        .route("/messages/{id}/raw", get(pages::message_raw))
        .route("/flights", get(pages::flights))
        .route("/flights/{flid}", get(pages::flight))
        .route("/events/dead", get(pages::dead_events))
        .route("/backfill/abandoned", get(pages::abandoned))
        .route("/holes", get(pages::holes))
        .route("/requests", get(pages::requests))
        .route("/compat", get(pages::compat))
        .route("/jobs", get(pages::jobs))
        .route("/audit", get(audit::audit))
        .route("/live/overview", get(live_stream::overview))
        .route("/live/messages/{id}", get(live_stream::message))
        .route("/actions/{action}", post(actions::handle))
        .route("/login", get(pages::login_form).post(actions::login))
        .route("/logout", post(actions::logout))
        .route("/oidc/login", get(sso::begin))
        .route(oidc::CALLBACK_PATH, get(sso::callback))
        .route("/assets/console.css", get(stylesheet))
        .route("/assets/live.js", get(live_script))
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(middleware::from_fn_with_state(state.clone(), browser_guard))
        .with_state(state)
}

/// The security headers of every console response:
/// scripts, styles and frames only from the console itself and no framing
/// by any page (clickjacking), no content-type guessing, no Referer to other
/// sites (message IDs and filters are in the URLs).
const SECURITY_HEADERS: [(header::HeaderName, &str); 3] = [
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; frame-ancestors 'none'",
    ),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "no-referrer"),
];

/// The outermost layer: a request whose `Host` (or
/// HTTP/2 `:authority`) is not one of the console's allowed hosts gets 421
/// before anything else runs (DNS rebinding: a page of another site whose
/// name resolves to this address is not this console); every answer gets
/// [`SECURITY_HEADERS`] and, unless it set its own, `Cache-Control:
/// no-store` (no page of the feed or of a session stays in a browser's or
/// proxy's cache).
async fn browser_guard(State(s): State<ConsoleState>, mut req: Request, next: Next) -> Response {
    let host = req
        .uri()
        .authority()
        .map(|a| a.as_str().to_string())
        .or_else(|| {
            req.headers()
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        });
    let allowed = host
        .as_deref()
        .map(bare_host)
        .is_some_and(|h| s.allowed_hosts.contains(&h));
    let mut response = if allowed {
        let from_proxy = req.extensions().get::<Peer>().is_some_and(|p| {
            let ip = p.0.ip().to_canonical();
            s.config
                .msgx
                .http
                .trusted_proxies
                .iter()
                .any(|t| t.to_canonical() == ip)
        });
        let https = session::is_https(req.headers(), s.tls, from_proxy);
        req.extensions_mut().insert(Transport { https });
        next.run(req).await
    } else {
        (
            StatusCode::MISDIRECTED_REQUEST,
            "this console does not answer to that host name (msgx.console.allowed-hosts)",
        )
            .into_response()
    };
    let h = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        h.insert(name, HeaderValue::from_static(value));
    }
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// The vendored stylesheet, compiled into the binary (no CDN, no files at run time).
async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        include_str!("../../assets/console.css"),
    )
        .into_response()
}

/// The live view's script, compiled into the binary like the stylesheet.
async fn live_script() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        include_str!("../../assets/live.js"),
    )
        .into_response()
}

/// Paths anyone may fetch.
fn public(path: &str) -> bool {
    matches!(
        path,
        "/login" | "/assets/console.css" | "/assets/live.js" | "/oidc/login" | oidc::CALLBACK_PATH
    )
}

/// The header the live view's script sends when it fetches a page again.
pub(super) const LIVE_HEADER: &str = "x-msgx-live";

/// A request of the live view (its stream, or its script fetching a page
/// again): it reads the session without extending it, so a page left open
/// does not keep its session alive past `session-idle-timeout`.
fn passive(req: &Request) -> bool {
    req.uri().path().starts_with("/live/") || req.headers().contains_key(LIVE_HEADER)
}

/// Resolves the [`Principal`] into the request's extensions, or turns the
/// request away: a page to the login form, anything else with 403.
async fn authenticate(State(s): State<ConsoleState>, mut req: Request, next: Next) -> Response {
    let client = actions::client_address(req.extensions().get::<Client>());
    let https = req.extensions().get::<Transport>().is_some_and(|t| t.https);
    let passive = passive(&req);
    let principal = match resolve(&s, req.headers().clone(), client, https, passive).await {
        Ok(p) => p,
        Err(status) => return status.into_response(),
    };
    match principal {
        Some(p) => {
            req.extensions_mut().insert(p);
            next.run(req).await
        }
        None if public(req.uri().path()) => next.run(req).await,
        None if req.uri().path().starts_with("/live/") => {
            (StatusCode::FORBIDDEN, "not logged in").into_response()
        }
        None if req.method() == axum::http::Method::GET => Redirect::to("/login").into_response(),
        None => {
            tracing::warn!(path = %crate::log_text::for_log(req.uri().path()), "Console: unauthenticated request refused");
            (StatusCode::FORBIDDEN, "not logged in").into_response()
        }
    }
}

/// A bearer token is checked only while its client is within
/// `login-attempts-per-client` (429 beyond it); a wrong one
/// counts against the client like a failed login. A `passive` request
/// does not extend its session.
async fn resolve(
    s: &ConsoleState,
    headers: HeaderMap,
    client: IpAddr,
    https: bool,
    passive: bool,
) -> Result<Option<Principal>, StatusCode> {
    if s.users.is_none() && s.oidc.is_none() {
        return Ok(Some(Principal::Anonymous));
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if let Some(token) = bearer {
        let now = s.clock.now();
        let addr = client.to_string();
        if !s.limiter.client_allowed(client, now) {
            if actions::failure_line_admitted(s, &addr, now) {
                tracing::warn!(%addr, "Console: bearer token refused, too many failed attempts");
            }
            return Err(StatusCode::TOO_MANY_REQUESTS);
        }
        let found = s.users.as_ref().and_then(|u| u.verify_token(token.trim()));
        return match found {
            Some((name, role)) => Ok(Some(Principal::Token {
                name,
                role,
                granted: s.rights.granted(role),
            })),
            None => {
                s.limiter.client_failed(client, now);
                if actions::failure_line_admitted(s, &addr, now) {
                    tracing::warn!(%addr, "Console: invalid bearer token refused");
                }
                Err(StatusCode::UNAUTHORIZED)
            }
        };
    }
    let Some(id) = session::session_cookie(&headers, https) else {
        return Ok(None);
    };
    let now = s.clock.now();
    let idle = s.config.msgx.console.session_idle_timeout.chrono();
    let hash = session::id_hash(&id);
    let unavailable = |e: sqlx::Error| {
        tracing::error!(error = %e, "Console: cannot read the session table");
        StatusCode::SERVICE_UNAVAILABLE
    };
    let row = if passive {
        console_session::peek(&s.pg, &hash, now, idle).await
    } else {
        console_session::touch(&s.pg, &hash, now, idle).await
    };
    let Some(row) = row.map_err(unavailable)? else {
        return Ok(None);
    };
    // An OIDC session carries the role its ID token mapped to (while OIDC
    // stays configured); a password session is bound to the user's entry at
    // login: a changed password hash or role, or a removed user, ends it.
    let role = if row.auth_method == "oidc" {
        row.role
            .as_deref()
            .and_then(Role::parse)
            .filter(|_| s.oidc.is_some())
    } else {
        s.users.as_ref().and_then(|users| {
            let current = users.credential_of(&row.user_name);
            users
                .role_of(&row.user_name)
                .filter(|_| current.as_deref() == Some(row.credential_sha256.as_str()))
        })
    };
    match role {
        Some(role) => Ok(Some(Principal::Session {
            user: row.user_name,
            role,
            granted: s.rights.granted(role),
            csrf: row.csrf_token,
        })),
        _ => {
            console_session::delete(&s.pg, &hash)
                .await
                .map_err(unavailable)?;
            tracing::info!(
                user = %crate::log_text::for_log(&row.user_name),
                "Console: session ended: the user's password or role changed, or the user was removed"
            );
            Ok(None)
        }
    }
}
