//! Compat HTTP entry `POST /cminmsgs/send` (design §4.4, C-28; issue 16
//! item 4; docs/production/http.md).
//!
//! Writes the mailbox row first, then registers it in PROC_STATE — two steps,
//! not one transaction. The registered row is beyond W, so the pump takes it
//! only once ingest has caught up: order is kept, at the cost of waiting for
//! the poller.
//!
//! Anyone who can post here writes into the airport's shared mailbox (and
//! could pre-empt a genuine AODB message with the same identity), so:
//! - **Authentication.** A bearer token (`msgx.http.compat-token-file` or env
//!   `MSGX_COMPAT_TOKEN`, compared in constant time) and/or mutual TLS
//!   (`msgx.http.compat-tls-client-ca`: the TLS handshake refuses a client
//!   without a certificate from that CA). A configured token is required
//!   even on loopback; without either, [`bind`] refuses a non-loopback address.
//! - **Only what the pipeline would take.** The body is decoded before
//!   anything is written. Every [`DecodeError`] answers 400: decoding is a
//!   pure function of the bytes, so a body that fails here would fail the same
//!   way in processing — MALFORMED ends DEAD, CODEC_ERROR (DOCTYPE, an
//!   encoding other than UTF-8, a valid time in a layout this version does not
//!   read, two FLOP blocks…) ends FAILED and retries until EXHAUSTED. Storing
//!   it would only put a dead row into the shared mailbox; the sender learns at
//!   once instead. The same holds for a well-formed message of a type msgx
//!   does not handle (LDM, an unknown FLOP or SCHS subtype…) and that no
//!   `msgx.ignore` rule names: the pump would record it FAILED(UNSUPPORTED)
//!   and hold the FIFO for its whole retry schedule (issue 31 item 8), so the
//!   entry answers 422 and writes nothing. The decision is the pump's own
//!   ladder ([`crate::pipeline::ladder::decide`]), so the two cannot differ;
//!   a type an ignore rule names is accepted (the pump SKIPs it at once).
//! - **Only known senders.** META/SNDR must be in
//!   `msgx.http.compat-allowed-senders` (exact match).
//! - **No internals in answers.** A failed write answers a fixed text; the
//!   database's error (which can name tables, hosts or users) is only logged.
//!
//! Responses, in the order they are decided (the listener's own 429 and 503
//! for the rate and concurrency limits come first, see [`super::listener`]):
//!
//! | status | when | body |
//! |---|---|---|
//! | 401 | a token is configured and the request has none or another (`WWW-Authenticate: Bearer`) | `{"error": "missing bearer token" / "invalid bearer token"}` |
//! | 413 | the body exceeds `msgx.http.compat-max-body` | `{"error": …}` |
//! | 408 | the body did not arrive within `msgx.http.body-timeout` | `{"error": …}` |
//! | 400 | the body does not decode (MALFORMED or CODEC_ERROR, see above) | `{"error": "MALFORMED at …", "class": "MALFORMED"}` |
//! | 403 | SNDR is not in `msgx.http.compat-allowed-senders` | `{"error": …}` |
//! | 422 | a TYPE-STYP msgx does not handle and `msgx.ignore` does not name | `{"error": "unsupported: …", "class": "UNSUPPORTED"}` |
//! | 200 | mailbox row written and enqueued | `{"id": N, "enqueued": true}` |
//! | 202 | mailbox row written, PostgreSQL enqueue failed (the poller picks it up) | `{"id": N, "enqueued": false, "warning": …}` |
//! | 503 | the mailbox write failed, or shadow mode | `{"error": "mailbox unavailable"}` / the shadow-mode text |
//!
//! Nothing is written for any answer but 200 and 202.
//! A client that retries after an error may write the mailbox twice; the
//! business identity makes the second copy a `duplicate-of` skip (§4.4).

use super::listener::{self, Limits, Peer, TlsError, TlsFiles};
use crate::clock::SharedClock;
use crate::codec;
use crate::config::Http;
use crate::domain::ErrorClass;
use crate::log_text::for_log;
use crate::pipeline::ladder::{self, Step, Verdict};
use crate::store::mailbox::{Mailbox, MailboxError};
use crate::store::pg::inbox;
use crate::store::pg::proc_state::IdentityBinding;
use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;
use sqlx::PgPool;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

pub use crate::config::COMPAT_TOKEN_ENV as TOKEN_ENV;

/// Shortest token accepted: a guessable token is no authentication.
pub const MIN_TOKEN_LEN: usize = 16;

/// What the handler needs from the rest of msgx.
#[derive(Clone)]
pub struct CompatState {
    pub pg: PgPool,
    pub mailbox: Mailbox,
    pub clock: SharedClock,
    pub tz: chrono_tz::Tz,
    /// `msgx.ignore`: a type these rules name is accepted (the pump skips it).
    pub ignore: Vec<String>,
}

/// Why the compat entry does not start.
#[derive(Debug, thiserror::Error)]
pub enum CompatError {
    #[error("msgx.http.compat-listen {0:?} is not an IP:PORT address")]
    Address(String),
    #[error(
        "msgx.http.compat-listen {0} is not a loopback address and the entry has no \
         authentication: set msgx.http.compat-token-file (or {TOKEN_ENV}) or \
         msgx.http.compat-tls-client-ca (docs/production/http.md)"
    )]
    Unauthenticated(SocketAddr),
    #[error("msgx.http.compat-token-file {path}: {source}")]
    TokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the compat token from {origin} {problem}")]
    BadToken {
        origin: String,
        problem: &'static str,
    },
    #[error(
        "msgx.http.compat-tls-cert, compat-tls-key: set both or neither; \
         compat-tls-client-ca needs both"
    )]
    TlsIncomplete,
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("cannot listen on msgx.http.compat-listen {listen}: {source}")]
    Bind {
        listen: SocketAddr,
        source: std::io::Error,
    },
}

/// The bearer token, kept out of `Debug`.
struct Token(Vec<u8>);

impl Token {
    /// Constant time in the presented value: every byte of the token is
    /// compared whatever the presented length, so timing tells an attacker
    /// neither how many leading bytes matched nor the token's length.
    fn matches(&self, presented: &[u8]) -> bool {
        let mut same = presented.len().ct_eq(&self.0.len());
        for (i, b) in self.0.iter().enumerate() {
            same &= b.ct_eq(presented.get(i).unwrap_or(&0));
        }
        same.into()
    }
}

/// Reads the token: `MSGX_COMPAT_TOKEN` (via `env`) when set and non-empty,
/// else the file; `None` when neither is configured.
fn load_token(
    h: &Http,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Token>, CompatError> {
    let (text, origin) = match env(TOKEN_ENV).filter(|v| !v.is_empty()) {
        Some(v) => (v, TOKEN_ENV.to_string()),
        None => match &h.compat_token_file {
            None => return Ok(None),
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| CompatError::TokenFile {
                        path: path.clone(),
                        source,
                    })?;
                warn_if_world_accessible(path);
                (
                    text,
                    format!("msgx.http.compat-token-file {}", path.display()),
                )
            }
        },
    };
    let token = text.trim();
    let bad = |problem| CompatError::BadToken {
        origin: origin.clone(),
        problem,
    };
    if token.len() < MIN_TOKEN_LEN {
        return Err(bad("is shorter than 16 characters"));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad(
            "must be one line of visible ASCII characters (it travels in an HTTP header)",
        ));
    }
    Ok(Some(Token(token.as_bytes().to_vec())))
}

/// Group access is the usual `root:msgx 0640`; access for everyone is a leak.
#[cfg(unix)]
fn warn_if_world_accessible(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(path)
        && m.permissions().mode() & 0o007 != 0
    {
        tracing::warn!(path = %path.display(), "The compat token file is accessible to every user; chmod o= it");
    }
}

#[cfg(not(unix))]
fn warn_if_world_accessible(_: &std::path::Path) {}

/// The handler's settings and resources.
struct Compat {
    state: CompatState,
    allowed: Vec<String>,
    max_body: usize,
}

/// A bound compat entry, ready to [`CompatServer::serve`].
pub struct CompatServer {
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    limits: Limits,
    addr: SocketAddr,
}

/// Checks the authentication rules, reads the token and TLS files, and
/// binds `listen`. `env` looks up environment variables (`MSGX_COMPAT_TOKEN`).
/// Fails, without listening, on a non-loopback address with neither a token
/// nor a client CA, and on any unreadable secret.
pub async fn bind(
    listen: &str,
    http: &Http,
    state: CompatState,
    env: impl Fn(&str) -> Option<String>,
) -> Result<CompatServer, CompatError> {
    let addr: SocketAddr = listen
        .parse()
        .map_err(|_| CompatError::Address(listen.to_string()))?;
    let token = load_token(http, &env)?;
    let tls = match (
        &http.compat_tls_cert,
        &http.compat_tls_key,
        &http.compat_tls_client_ca,
    ) {
        (None, None, None) => None,
        (Some(cert), Some(key), client_ca) => Some(listener::tls_acceptor(TlsFiles {
            cert,
            key,
            client_ca: client_ca.as_deref(),
            keys: listener::COMPAT_TLS_KEYS,
        })?),
        _ => return Err(CompatError::TlsIncomplete),
    };
    let mtls = http.compat_tls_client_ca.is_some();
    if !addr.ip().is_loopback() && token.is_none() && !mtls {
        return Err(CompatError::Unauthenticated(addr));
    }
    if !addr.ip().is_loopback() && tls.is_none() {
        tracing::warn!(%addr, "Compat entry: bearer token over plain HTTP on a non-loopback address; \
                       set msgx.http.compat-tls-cert and -key so the token cannot be read off the network");
    }
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| CompatError::Bind {
            listen: addr,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| CompatError::Bind {
        listen: addr,
        source,
    })?;
    let compat = Arc::new(Compat {
        state,
        allowed: http.compat_allowed_senders.clone(),
        max_body: http.compat_max_body,
    });
    let mut router = Router::new().route("/cminmsgs/send", post(send));
    if let Some(token) = token {
        router = router.route_layer(middleware::from_fn_with_state(Arc::new(token), authorize));
    }
    tracing::info!(
        listen = %addr,
        tls = tls.is_some(),
        client_certificates = mtls,
        bearer_token = http.compat_token_file.is_some() || env(TOKEN_ENV).is_some_and(|v| !v.is_empty()),
        "Compat entry POST /cminmsgs/send listening"
    );
    Ok(CompatServer {
        listener,
        tls,
        router: router.with_state(compat),
        limits: Limits::from_config(http),
        addr,
    })
}

impl CompatServer {
    /// The bound address (port 0 resolved).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until `stop` turns true.
    pub async fn serve(self, stop: tokio::sync::watch::Receiver<bool>) -> std::io::Result<()> {
        listener::serve(
            "compat",
            self.listener,
            self.tls,
            self.router,
            self.limits,
            stop,
        )
        .await
    }
}

/// An error answer; the text is cut (crate::error_text, issue 17 item 5).
fn error(status: StatusCode, text: impl Into<String>) -> Response {
    let text = text.into();
    (
        status,
        axum::Json(json!({ "error": crate::error_text::cut(&text) })),
    )
        .into_response()
}

fn peer(req: &Request) -> Option<SocketAddr> {
    req.extensions().get::<Peer>().map(|p| p.0)
}

/// 401 unless `Authorization: Bearer <token>` carries the token. Runs before
/// the body is read, so an unauthenticated client costs no body buffering.
async fn authorize(State(token): State<Arc<Token>>, req: Request, next: Next) -> Response {
    let verdict = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes())
        .and_then(|v| {
            let (scheme, rest) = v.split_at_checked(7)?;
            scheme
                .eq_ignore_ascii_case(b"bearer ")
                .then(|| rest.trim_ascii())
        })
        .map(|presented| token.matches(presented));
    let (problem, challenge) = match verdict {
        Some(true) => return next.run(req).await,
        Some(false) => (
            "invalid bearer token",
            "Bearer realm=\"msgx\", error=\"invalid_token\"",
        ),
        None => ("missing bearer token", "Bearer realm=\"msgx\""),
    };
    tracing::warn!(peer = ?peer(&req), problem, "Compat entry: request refused (401)");
    let mut resp = error(StatusCode::UNAUTHORIZED, problem);
    resp.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    resp
}

/// Why the body could not be read.
enum BodyProblem {
    TooLarge,
    TimedOut,
    Broken(String),
}

/// Reads at most `max` bytes of `body`.
async fn read_body(mut body: Body, max: usize) -> Result<Bytes, BodyProblem> {
    let mut buf = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| {
            // The listener's whole-body timeout, deep in the error chain
            // (the listener answers 408 for it).
            let mut source: Option<&dyn std::error::Error> = Some(&e);
            while let Some(s) = source {
                if s.is::<listener::BodyTimedOut>() {
                    return BodyProblem::TimedOut;
                }
                source = s.source();
            }
            BodyProblem::Broken(e.to_string())
        })?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > max {
                return Err(BodyProblem::TooLarge);
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(buf))
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

async fn send(State(s): State<Arc<Compat>>, req: Request) -> Response {
    let peer = peer(&req);
    let too_large = || {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "body larger than {} bytes (msgx.http.compat-max-body)",
                s.max_body
            ),
        )
    };
    if declared_length(req.headers()).is_some_and(|n| n > s.max_body as u64) {
        return too_large();
    }
    let body = match read_body(req.into_body(), s.max_body).await {
        Ok(b) => b,
        Err(BodyProblem::TooLarge) => return too_large(),
        Err(BodyProblem::TimedOut) => {
            return error(
                StatusCode::REQUEST_TIMEOUT,
                "request body not received in time (msgx.http.body-timeout)",
            );
        }
        Err(BodyProblem::Broken(e)) => {
            tracing::debug!(?peer, error = %e, "Compat entry: request body could not be read");
            return error(StatusCode::BAD_REQUEST, "request body could not be read");
        }
    };
    let msg = match codec::decode(&body) {
        Ok(m) => m,
        Err(e) => {
            // A decode error quotes the refused value: cut (issue 17 item 5).
            let text = e.to_string();
            let text = crate::error_text::cut(&text);
            tracing::info!(?peer, error = %for_log(&text), "Compat entry: body refused (400), nothing written");
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": text, "class": e.class()})),
            )
                .into_response();
        }
    };
    if !s.allowed.contains(&msg.meta.sndr) {
        let sndr: String = msg.meta.sndr.chars().take(16).collect();
        tracing::warn!(
            ?peer,
            sndr = %for_log(&sndr),
            "Compat entry: SNDR not allowed (403), nothing written"
        );
        return error(
            StatusCode::FORBIDDEN,
            "SNDR is not allowed on this entry (msgx.http.compat-allowed-senders)",
        );
    }
    if let Some(reason) = unsupported(&s.state.ignore, &msg) {
        let reason = crate::error_text::cut(&reason).into_owned();
        tracing::info!(?peer, reason = %for_log(&reason), "Compat entry: type not handled (422), nothing written");
        return (
            StatusCode::UNPROCESSABLE_ENTITY,
            axum::Json(json!({"error": reason, "class": ErrorClass::Unsupported.as_str()})),
        )
            .into_response();
    }
    let meta = msg.meta;
    // decode() accepted the bytes, so they are UTF-8.
    let Ok(text) = std::str::from_utf8(&body) else {
        return error(StatusCode::BAD_REQUEST, "body is not UTF-8");
    };
    let st = &s.state;
    let now = st.clock.now();
    let received = now.with_timezone(&st.tz).naive_local();
    let id = match st.mailbox.insert_message(text, received, Some(&meta)).await {
        Ok(id) => id,
        Err(e @ MailboxError::Shadow) => {
            return error(StatusCode::SERVICE_UNAVAILABLE, e.to_string());
        }
        Err(e) => {
            tracing::error!(?peer, error = %e, "Compat entry: mailbox write failed (503)");
            return error(StatusCode::SERVICE_UNAVAILABLE, "mailbox unavailable");
        }
    };
    let enqueue = inbox::enqueue_compat(&st.pg, id, now).await;
    match enqueue {
        Ok(_) => (
            StatusCode::OK,
            axum::Json(json!({"id": id, "enqueued": true})),
        )
            .into_response(),
        Err(e) => {
            tracing::warn!(id, error = %e, "Compat entry: enqueue failed; the poller will pick the row up");
            (
                StatusCode::ACCEPTED,
                axum::Json(json!({"id": id, "enqueued": false, "warning": "stored in the mailbox; ingest will pick it up"})),
            )
                .into_response()
        }
    }
}

/// Why the pump would hold `msg` as FAILED(UNSUPPORTED) (its own ladder,
/// design §5.2 step 5), or `None` when it would take or skip it. The
/// identity is taken as this message's own: a duplicate is the pump's to
/// record (§4.4), not a refusal.
fn unsupported(ignore: &[String], msg: &codec::DecodedMessage) -> Option<String> {
    match ladder::decide(&IdentityBinding::Ours, ignore, msg) {
        Step::Ends(Verdict::Failed(ErrorClass::Unsupported, reason)) => Some(reason),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_comparison_needs_every_byte_and_the_length() {
        let t = Token(b"0123456789abcdef".to_vec());
        assert!(t.matches(b"0123456789abcdef"));
        assert!(!t.matches(b"0123456789abcdeF"));
        assert!(!t.matches(b"0123456789abcde"));
        assert!(!t.matches(b"0123456789abcdef0"));
        assert!(!t.matches(b""));
    }

    #[test]
    fn the_environment_wins_and_short_or_spaced_tokens_are_refused() {
        let h = Http {
            compat_token_file: Some("/nonexistent/token".into()),
            ..Http::default()
        };
        let env = |v: &'static str| move |k: &str| (k == TOKEN_ENV).then(|| v.to_string());
        let t = load_token(&h, &env("  0123456789abcdef\n"))
            .unwrap()
            .unwrap();
        assert!(t.matches(b"0123456789abcdef"));
        let e = load_token(&h, &env("short")).err().unwrap().to_string();
        assert!(
            e.contains("MSGX_COMPAT_TOKEN") && e.contains("shorter"),
            "{e}"
        );
        assert!(load_token(&h, &env("0123456789 abcdef")).is_err());
        let e = load_token(&h, &|_| None).err().unwrap().to_string();
        assert!(e.contains("/nonexistent/token"), "{e}");
        assert!(load_token(&Http::default(), &|_| None).unwrap().is_none());
    }
}
