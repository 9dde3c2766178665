//! The console's listener, router and authentication (issue 21 items 1
//! and 4). Every request passes [`authenticate`]: a bearer token, else the
//! session cookie, else (only when no users file is configured, which the
//! config allows on loopback alone) an anonymous viewer.

use super::access::{AccessError, LogLimiter, LoginLimiter, Users};
use super::state::{ConsoleState, JobLauncher, Principal};
use super::{actions, pages, session};
use crate::clock::SharedClock;
use crate::config::Config;
use crate::http::client::Client;
use crate::http::listener::{self, Limits, TlsError, TlsFiles};
use crate::store::mailbox::Mailbox;
use crate::store::pg::console_session;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
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
    #[error(transparent)]
    Users(#[from] AccessError),
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
    let c = &config.msgx.console;
    let addr: SocketAddr = listen
        .parse()
        .map_err(|_| ConsoleError::Address(listen.to_string()))?;
    let users = match &c.users_file {
        None if !addr.ip().is_loopback() => return Err(ConsoleError::NoUsers(addr)),
        None => None,
        Some(path) => {
            let users = Users::load(path)?;
            if users.is_empty() {
                return Err(ConsoleError::EmptyUsers(path.clone()));
            }
            Some(Arc::new(users))
        }
    };
    let tls = match (&c.tls_cert, &c.tls_key) {
        (None, None) => None,
        (Some(cert), Some(key)) => Some(listener::tls_acceptor(TlsFiles {
            cert,
            key,
            client_ca: None,
            keys: TLS_KEYS,
        })?),
        _ => return Err(ConsoleError::TlsIncomplete),
    };
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
    let state = ConsoleState {
        pg,
        mailbox,
        clock,
        users,
        limiter,
        login_log: Arc::new(LogLimiter::failed_logins()),
        tls: tls.is_some(),
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
        .route("/jobs", get(pages::jobs))
        .route("/actions/{action}", post(actions::handle))
        .route("/login", get(pages::login_form).post(actions::login))
        .route("/logout", post(actions::logout))
        .route("/assets/console.css", get(stylesheet))
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .with_state(state)
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

/// Paths anyone may fetch.
fn public(path: &str) -> bool {
    matches!(path, "/login" | "/assets/console.css")
}

/// Resolves the [`Principal`] into the request's extensions, or turns the
/// request away: a page to the login form, anything else with 403.
async fn authenticate(State(s): State<ConsoleState>, mut req: Request, next: Next) -> Response {
    let client = actions::client_address(req.extensions().get::<Client>());
    let principal = match resolve(&s, req.headers().clone(), client).await {
        Ok(p) => p,
        Err(status) => return status.into_response(),
    };
    match principal {
        Some(p) => {
            req.extensions_mut().insert(p);
            next.run(req).await
        }
        None if public(req.uri().path()) => next.run(req).await,
        None if req.method() == axum::http::Method::GET => Redirect::to("/login").into_response(),
        None => {
            tracing::warn!(path = %crate::log_text::for_log(req.uri().path()), "Console: unauthenticated request refused");
            (StatusCode::FORBIDDEN, "not logged in").into_response()
        }
    }
}

/// A bearer token is checked only while its client is within
/// `login-attempts-per-client` (429 beyond it, issue 32 L6); a wrong one
/// counts against the client like a failed login.
async fn resolve(
    s: &ConsoleState,
    headers: HeaderMap,
    client: IpAddr,
) -> Result<Option<Principal>, StatusCode> {
    let Some(users) = &s.users else {
        return Ok(Some(Principal::Anonymous));
    };
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
        return match users.verify_token(token.trim()) {
            Some((name, role)) => Ok(Some(Principal::Token { name, role })),
            None => {
                s.limiter.client_failed(client, now);
                if actions::failure_line_admitted(s, &addr, now) {
                    tracing::warn!(%addr, "Console: invalid bearer token refused");
                }
                Err(StatusCode::UNAUTHORIZED)
            }
        };
    }
    let Some(id) = session::session_cookie(&headers) else {
        return Ok(None);
    };
    let now = s.clock.now();
    let row = console_session::find(&s.pg, &session::id_hash(&id), now)
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "Console: cannot read the session table");
            StatusCode::SERVICE_UNAVAILABLE
        })?;
    Ok(row.and_then(|r| {
        users.role_of(&r.user_name).map(|role| Principal::Session {
            user: r.user_name,
            role,
            csrf: r.csrf_token,
        })
    }))
}
