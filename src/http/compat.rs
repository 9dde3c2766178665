//! Compat HTTP entry `POST /cminmsgs/send` (design §4.4, C-28;
//! docs/production/http.md).
//!
//! Writes the mailbox row first, then registers it in PROC_STATE — two steps,
//! not one transaction. The registered row is beyond W, so the pump takes it
//! only once ingest has caught up: order is kept, at the cost of waiting for
//! the poller.
//!
//! Anyone who can post here writes into the airport's shared mailbox, so:
//! - **Authentication on every address**. Bearer tokens:
//!   one per client in `msgx.http.compat-tokens-file` (`[[token]]` name,
//!   SHA-256 of the token, the SNDR values it may send), and/or the single
//!   token of `msgx.http.compat-token-file` or env `MSGX_COMPAT_TOKEN`
//!   (sending `compat-allowed-senders`). And/or mutual TLS
//!   (`msgx.http.compat-tls-client-ca`: the handshake refuses a client without
//!   a certificate from that CA). Only `compat-development-mode`, on
//!   loopback, waives it, and says so at start. Wrong tokens are limited per
//!   client ([`FAILED_AUTH_PER_CLIENT`] in [`FAILED_AUTH_WINDOW_MINUTES`]).
//! - **No browser.** A request with an `Origin` header (every cross-site
//!   POST a browser sends has one) is refused with 403, one without an XML
//!   `Content-Type` (`application/xml`, `text/xml`) with 415: a page on
//!   another site can neither post a `text/plain` form here nor read the
//!   answer.
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
//!   and hold the FIFO for its whole retry schedule, so the
//!   entry answers 422 and writes nothing. The decision is the pump's own
//!   ladder ([`crate::pipeline::ladder::decide`]), so the two cannot differ;
//!   a type an ignore rule names is accepted (the pump SKIPs it at once).
//! - **Only the client's senders.** META/SNDR must be one its token (or
//!   certificate) may send; others get 403.
//! - **No identity taken from the AODB.** The row's MSG_ID is recorded in
//!   COMPAT_REQUEST before the mailbox transaction commits; the pump scopes
//!   the identity of such a row to its client (`compat:<client>|…`,
//!   [`crate::pipeline::identity::scoped_identity`]), so a compat message,
//!   whatever its outcome, never makes a genuine mailbox message a
//!   `duplicate-of` (docs/pipeline.md "Compat identities").
//! - **Every request recorded** in COMPAT_REQUEST: time, peer, client, SNDR,
//!   the body's SHA-256, status and outcome; the console's Compat page.
//! - **No internals in answers.** A failed write answers a fixed text; the
//!   database's error (which can name tables, hosts or users) is only logged.
//!
//! Responses, in the order they are decided (the listener's own 429 and 503
//! for the rate and concurrency limits come first, see [`super::listener`]):
//!
//! | status | when | body |
//! |---|---|---|
//! | 403 | the request has an `Origin` header | `{"error": …}` |
//! | 429 | the client sent too many wrong tokens | `{"error": …}` |
//! | 401 | tokens are configured and the request has none or another (`WWW-Authenticate: Bearer`) | `{"error": "missing bearer token" / "invalid bearer token"}` |
//! | 415 | `Content-Type` is not `application/xml` or `text/xml` | `{"error": …}` |
//! | 413 | the body exceeds `msgx.http.compat-max-body` | `{"error": …}` |
//! | 408 | the body did not arrive within `msgx.http.body-timeout` | `{"error": …}` |
//! | 400 | the body does not decode (MALFORMED or CODEC_ERROR, see above) | `{"error": "MALFORMED at …", "class": "MALFORMED"}` |
//! | 403 | SNDR is not one the client may send | `{"error": …}` |
//! | 422 | a TYPE-STYP msgx does not handle and `msgx.ignore` does not name | `{"error": "unsupported: …", "class": "UNSUPPORTED"}` |
//! | 200 | mailbox row written and enqueued | `{"id": N, "enqueued": true}` |
//! | 202 | mailbox row written, PostgreSQL enqueue failed (the poller picks it up) | `{"id": N, "enqueued": false, "warning": …}` |
//! | 503 | the request could not be recorded, the mailbox write failed, or shadow mode | `{"error": "mailbox unavailable"}` / the shadow-mode text |
//!
//! Nothing is written to the mailbox for any answer but 200 and 202.
//! A client that retries after an error may write the mailbox twice; the
//! business identity (the client's own) makes the second copy a
//! `duplicate-of` skip (§4.4).

use super::client::{Client, FailureLimiter, TRACKED_CLIENTS};
use super::listener::{self, Limits, Peer, TlsError, TlsFiles};
use crate::clock::SharedClock;
use crate::codec;
use crate::config::Http;
use crate::domain::ErrorClass;
use crate::log_text::for_log;
use crate::pipeline::ladder::{self, Step, Verdict};
use crate::store::mailbox::{ConfirmedInsert, Mailbox, MailboxError};
use crate::store::pg::compat_request::{self, NewRequest, Outcome};
use crate::store::pg::inbox;
use crate::store::pg::proc_state::IdentityBinding;
use axum::Extension;
use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use subtle::ConstantTimeEq;

pub use crate::config::COMPAT_TOKEN_ENV as TOKEN_ENV;

/// Shortest token accepted: a guessable token is no authentication.
pub const MIN_TOKEN_LEN: usize = 16;

/// Wrong or missing bearer tokens a client may send within
/// [`FAILED_AUTH_WINDOW_MINUTES`]; beyond it, 429 without a token check
/// (as the console's logins).
pub const FAILED_AUTH_PER_CLIENT: u32 = 20;

/// The window of [`FAILED_AUTH_PER_CLIENT`].
pub const FAILED_AUTH_WINDOW_MINUTES: i64 = 15;

/// The client name of the development mode's requests.
pub const DEVELOPMENT_CLIENT: &str = "development";

/// The client name of mutual-TLS requests when no token is configured.
pub const CERTIFICATE_CLIENT: &str = "client-certificate";

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
        "msgx.http.compat-listen {0} has no authentication: set msgx.http.compat-tokens-file, \
         msgx.http.compat-token-file (or {TOKEN_ENV}) or msgx.http.compat-tls-client-ca; on a \
         developer's loopback only, msgx.http.compat-development-mode = true \
         (docs/production/http.md)"
    )]
    Unauthenticated(SocketAddr),
    #[error(
        "msgx.http.compat-development-mode is true but msgx.http.compat-listen {0} is not a \
         loopback address: the development mode (no authentication) is for loopback only"
    )]
    DevelopmentOffLoopback(SocketAddr),
    #[error("{key} {path}: {source}")]
    TokenFile {
        key: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{key} {path}: mode {mode:04o} lets the group or others read or write it: chmod 600 \
         it, owned by the user msgx runs as"
    )]
    TokenFileMode {
        key: &'static str,
        path: PathBuf,
        mode: u32,
    },
    #[error("msgx.http.compat-tokens-file {path}: {message}")]
    TokensFile { path: PathBuf, message: String },
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

/// An authenticated client of the entry and the SNDR values it may send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompatClient {
    pub name: String,
    pub senders: Vec<String>,
}

/// A bearer token (only its SHA-256 is kept) and its client.
struct TokenEntry {
    sha256: [u8; 32],
    client: CompatClient,
}

/// How requests authenticate.
struct Auth {
    /// Non-empty: every request needs one of these bearer tokens.
    tokens: Vec<TokenEntry>,
    /// Who a request is when no token is configured: a certificate holder
    /// (the TLS handshake checked it) or, in development mode, anybody.
    tokenless: Option<CompatClient>,
}

impl Auth {
    /// The client whose token `presented` is. Every entry is compared, each
    /// in constant time on the digests, so timing tells nothing of which
    /// entry or how much of one matched.
    fn client_of(&self, presented: &[u8]) -> Option<&CompatClient> {
        let digest: [u8; 32] = Sha256::digest(presented).into();
        let mut found = None;
        for t in &self.tokens {
            if bool::from(t.sha256.ct_eq(&digest)) {
                found = Some(&t.client);
            }
        }
        found
    }
}

/// Refuses a secrets file that its group or others may read.
fn check_private(key: &'static str, path: &Path) -> Result<(), CompatError> {
    match crate::config::shared_file_mode(path) {
        Ok(None) => Ok(()),
        Ok(Some(mode)) => Err(CompatError::TokenFileMode {
            key,
            path: path.to_path_buf(),
            mode,
        }),
        Err(source) => Err(CompatError::TokenFile {
            key,
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Reads the single token: `MSGX_COMPAT_TOKEN` (via `env`) when set and
/// non-empty, else the file; `None` when neither is configured. Its client
/// is named after where it came from and sends `compat-allowed-senders`.
fn load_token(
    h: &Http,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<TokenEntry>, CompatError> {
    const KEY: &str = "msgx.http.compat-token-file";
    let (text, origin, name) = match env(TOKEN_ENV).filter(|v| !v.is_empty()) {
        Some(v) => (v, TOKEN_ENV.to_string(), TOKEN_ENV),
        None => match &h.compat_token_file {
            None => return Ok(None),
            Some(path) => {
                check_private(KEY, path)?;
                let text =
                    std::fs::read_to_string(path).map_err(|source| CompatError::TokenFile {
                        key: KEY,
                        path: path.clone(),
                        source,
                    })?;
                (
                    text,
                    format!("{KEY} {}", path.display()),
                    "compat-token-file",
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
    Ok(Some(TokenEntry {
        sha256: Sha256::digest(token.as_bytes()).into(),
        client: CompatClient {
            name: name.to_string(),
            senders: h.compat_allowed_senders.clone(),
        },
    }))
}

/// `msgx.http.compat-tokens-file`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    #[serde(default)]
    token: Vec<TokenDef>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenDef {
    name: String,
    /// Hex SHA-256 of the token (`printf %s TOKEN | sha256sum`).
    sha256: String,
    senders: Vec<String>,
}

/// A client name: 1–64 of `A-Z a-z 0-9 . _ -` (it is part of the scoped
/// identity and of log lines).
fn valid_client_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Reads and checks `msgx.http.compat-tokens-file`: private to its owner,
/// names unique and well-formed, hashes 64 hex digits and unique, each
/// token with at least one sender. A parse error names the place, never a
/// line of the file.
fn load_tokens_file(path: &Path) -> Result<Vec<TokenEntry>, CompatError> {
    const KEY: &str = "msgx.http.compat-tokens-file";
    check_private(KEY, path)?;
    let text = std::fs::read_to_string(path).map_err(|source| CompatError::TokenFile {
        key: KEY,
        path: path.to_path_buf(),
        source,
    })?;
    let problem = |message: String| CompatError::TokensFile {
        path: path.to_path_buf(),
        message,
    };
    let file: TokensFile = toml::from_str(&text)
        .map_err(|e| problem(crate::config::toml_error_without_text(&e, &text)))?;
    let mut out: Vec<TokenEntry> = Vec::with_capacity(file.token.len());
    for t in file.token {
        let named = |what: &str| problem(format!("token {:?}: {what}", for_log(&t.name)));
        if !valid_client_name(&t.name) {
            return Err(named("the name must be 1–64 of A-Z a-z 0-9 . _ -"));
        }
        if out.iter().any(|o| o.client.name == t.name) {
            return Err(named("the name is given twice"));
        }
        let mut sha256 = [0u8; 32];
        if hex::decode_to_slice(t.sha256.trim(), &mut sha256).is_err() {
            return Err(named(
                "sha256 must be 64 hex digits (printf %s TOKEN | sha256sum)",
            ));
        }
        if out.iter().any(|o| o.sha256 == sha256) {
            return Err(named("the same token hash is given twice"));
        }
        if t.senders.is_empty()
            || t.senders
                .iter()
                .any(|s| s.is_empty() || s.chars().count() > 16 || s.chars().any(char::is_control))
        {
            return Err(named(
                "senders must list 1 or more SNDR values of 1–16 characters",
            ));
        }
        out.push(TokenEntry {
            sha256,
            client: CompatClient {
                name: t.name,
                senders: t.senders,
            },
        });
    }
    if out.is_empty() {
        return Err(problem("no [[token]]: no client could post".into()));
    }
    Ok(out)
}

/// The handler's settings and resources.
struct Compat {
    state: CompatState,
    auth: Auth,
    max_body: usize,
    /// Wrong tokens per client address.
    failures: FailureLimiter<IpAddr>,
}

/// A bound compat entry, ready to [`listener::Bound::serve`].
pub type CompatServer = listener::Bound;

/// Checks the authentication rules, reads the token and TLS files, and
/// binds `listen`. `env` looks up environment variables (`MSGX_COMPAT_TOKEN`).
/// Fails, without listening, when the entry would have no authentication
/// (unless the development mode is asked for, on loopback), and on any
/// unreadable or shared secret.
pub async fn bind(
    listen: &str,
    http: &Http,
    state: CompatState,
    env: impl Fn(&str) -> Option<String>,
) -> Result<CompatServer, CompatError> {
    let addr: SocketAddr = listen
        .parse()
        .map_err(|_| CompatError::Address(listen.to_string()))?;
    let mut tokens = Vec::new();
    if let Some(path) = &http.compat_tokens_file {
        tokens = load_tokens_file(path)?;
    }
    if let Some(single) = load_token(http, &env)? {
        tokens.push(single);
    }
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
    let development = http.compat_development_mode;
    if development && !addr.ip().is_loopback() {
        return Err(CompatError::DevelopmentOffLoopback(addr));
    }
    let tokenless_name = if mtls {
        CERTIFICATE_CLIENT
    } else {
        DEVELOPMENT_CLIENT
    };
    let tokenless = (tokens.is_empty() && (mtls || development)).then(|| CompatClient {
        name: tokenless_name.to_string(),
        senders: http.compat_allowed_senders.clone(),
    });
    if tokens.is_empty() && tokenless.is_none() {
        return Err(CompatError::Unauthenticated(addr));
    }
    if !addr.ip().is_loopback() && tls.is_none() {
        tracing::warn!(%addr, "Compat entry: bearer token over plain HTTP on a non-loopback address; \
                       set msgx.http.compat-tls-cert and -key so the token cannot be read off the network");
    }
    let (listener, addr) = listener::bind_tcp(addr)
        .await
        .map_err(|source| CompatError::Bind {
            listen: addr,
            source,
        })?;
    if tokenless
        .as_ref()
        .is_some_and(|c| c.name == DEVELOPMENT_CLIENT)
    {
        tracing::warn!(listen = %addr, "Compat entry in DEVELOPMENT MODE: no authentication \
                       (msgx.http.compat-development-mode = true); never use it where the AODB's mailbox is real");
    }
    tracing::info!(
        listen = %addr,
        tls = tls.is_some(),
        client_certificates = mtls,
        bearer_tokens = tokens.len(),
        development_mode = tokenless.as_ref().is_some_and(|c| c.name == DEVELOPMENT_CLIENT),
        "Compat entry POST /cminmsgs/send listening"
    );
    let compat = Arc::new(Compat {
        state,
        auth: Auth { tokens, tokenless },
        max_body: http.compat_max_body,
        failures: FailureLimiter::new(
            FAILED_AUTH_PER_CLIENT,
            chrono::Duration::minutes(FAILED_AUTH_WINDOW_MINUTES),
            TRACKED_CLIENTS,
        ),
    });
    let router = Router::new()
        .route("/cminmsgs/send", post(send))
        .route_layer(middleware::from_fn_with_state(compat.clone(), admit))
        .with_state(compat);
    Ok(listener::Bound {
        name: "compat",
        listener,
        addr,
        tls,
        router,
        limits: Limits::from_config(http),
    })
}

/// An error answer; the text is cut (crate::error_text).
fn error(status: StatusCode, text: impl Into<String>) -> Response {
    let text = text.into();
    (
        status,
        axum::Json(json!({ "error": crate::error_text::cut(&text) })),
    )
        .into_response()
}

/// Where a request came from, as recorded and logged: the client address
/// (resolved through trusted proxies) and the direct peer when they differ.
#[derive(Debug, Clone)]
struct Caller {
    peer: Option<SocketAddr>,
    client: Option<IpAddr>,
}

impl Caller {
    fn of(req: &Request) -> Caller {
        Caller {
            peer: req.extensions().get::<Peer>().map(|p| p.0),
            client: req.extensions().get::<Client>().map(|c| c.0),
        }
    }

    /// The key of the failed-token limit.
    fn ip(&self) -> IpAddr {
        self.client
            .or(self.peer.map(|p| p.ip()))
            .unwrap_or(IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED))
    }

    fn text(&self) -> String {
        match (self.peer, self.client) {
            (Some(p), Some(c)) if p.ip().to_canonical() != c => format!("{c} via {p}"),
            (Some(p), _) => p.to_string(),
            (None, Some(c)) => c.to_string(),
            (None, None) => "unknown".into(),
        }
    }
}

/// What is known of a request when it is answered.
#[derive(Debug, Default)]
struct Seen {
    principal: Option<String>,
    sndr: Option<String>,
    sha256: Option<String>,
}

impl Compat {
    /// Records a request refused with `status` and the error `text` (no
    /// mailbox write), then answers it with [`error`].
    async fn refused(
        &self,
        caller: &Caller,
        seen: &Seen,
        status: StatusCode,
        text: impl Into<String>,
    ) -> Response {
        let text = text.into();
        self.refused_with(caller, seen, error(status, text.clone()), &text)
            .await
    }

    /// Records `answer` (a refusal: no mailbox write, `detail` its error
    /// text), then returns it. A failed record is logged, never a reason to
    /// answer otherwise.
    async fn refused_with(
        &self,
        caller: &Caller,
        seen: &Seen,
        answer: Response,
        detail: &str,
    ) -> Response {
        let detail = crate::error_text::cut(detail);
        let r = NewRequest {
            peer: caller.text(),
            principal: seen.principal.as_deref(),
            sndr: seen.sndr.as_deref(),
            payload_sha256: seen.sha256.as_deref(),
            detail: Some(&detail),
        };
        let at = self.state.clock.now();
        let status = answer.status().as_u16();
        if let Err(e) =
            compat_request::record(&self.state.pg, at, &r, status, Outcome::Refused).await
        {
            tracing::warn!(peer = %caller.text(), error = %e, "Compat entry: the request could not be recorded");
        }
        answer
    }
}

/// Whether `Content-Type` names XML (`application/xml` or `text/xml`, any
/// parameters).
fn xml_content_type(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|t| t == "application/xml" || t == "text/xml")
}

/// Before the body is read (an unauthenticated client costs no body
/// buffering): no `Origin` (403), the client's failed-token budget (429),
/// the bearer token (401), an XML content type (415). The authenticated
/// [`CompatClient`] goes to [`send`] in the request's extensions.
async fn admit(State(s): State<Arc<Compat>>, mut req: Request, next: Next) -> Response {
    let caller = Caller::of(&req);
    let mut seen = Seen::default();
    if req.headers().contains_key(header::ORIGIN) {
        tracing::warn!(peer = %caller.text(), "Compat entry: request with an Origin header refused (403): a browser page");
        return s
            .refused(
                &caller,
                &seen,
                StatusCode::FORBIDDEN,
                "requests with an Origin header are refused: this entry is not for browsers",
            )
            .await;
    }
    let client = if s.auth.tokens.is_empty() {
        s.auth.tokenless.clone()
    } else {
        let now = s.state.clock.now();
        if !s.failures.allowed(&caller.ip(), now) {
            return s
                .refused(
                    &caller,
                    &seen,
                    StatusCode::TOO_MANY_REQUESTS,
                    "too many wrong bearer tokens from this client; try again later",
                )
                .await;
        }
        let presented = super::client::bearer(req.headers());
        let Some(client) = presented.and_then(|p| s.auth.client_of(p)) else {
            let (problem, challenge) = super::client::bearer_refusal(presented.is_some());
            s.failures.failed(&caller.ip(), now);
            tracing::warn!(peer = %caller.text(), problem, "Compat entry: request refused (401)");
            let mut answer = s
                .refused(&caller, &seen, StatusCode::UNAUTHORIZED, problem)
                .await;
            answer
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
            return answer;
        };
        Some(client.clone())
    };
    let Some(client) = client else {
        // bind() refuses an entry without authentication; never reached.
        return s
            .refused(
                &caller,
                &seen,
                StatusCode::UNAUTHORIZED,
                "no authentication is configured",
            )
            .await;
    };
    seen.principal = Some(client.name.clone());
    if !xml_content_type(req.headers()) {
        return s
            .refused(
                &caller,
                &seen,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type must be application/xml or text/xml",
            )
            .await;
    }
    req.extensions_mut().insert(client);
    req.extensions_mut().insert(caller);
    next.run(req).await
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

async fn send(
    State(s): State<Arc<Compat>>,
    Extension(client): Extension<CompatClient>,
    Extension(caller): Extension<Caller>,
    req: Request,
) -> Response {
    let mut seen = Seen {
        principal: Some(client.name.clone()),
        ..Seen::default()
    };
    let too_large = || {
        format!(
            "body larger than {} bytes (msgx.http.compat-max-body)",
            s.max_body
        )
    };
    if declared_length(req.headers()).is_some_and(|n| n > s.max_body as u64) {
        return s
            .refused(&caller, &seen, StatusCode::PAYLOAD_TOO_LARGE, too_large())
            .await;
    }
    let body = match read_body(req.into_body(), s.max_body).await {
        Ok(b) => b,
        Err(BodyProblem::TooLarge) => {
            return s
                .refused(&caller, &seen, StatusCode::PAYLOAD_TOO_LARGE, too_large())
                .await;
        }
        Err(BodyProblem::TimedOut) => {
            return s
                .refused(
                    &caller,
                    &seen,
                    StatusCode::REQUEST_TIMEOUT,
                    "request body not received in time (msgx.http.body-timeout)",
                )
                .await;
        }
        Err(BodyProblem::Broken(e)) => {
            tracing::debug!(peer = %caller.text(), error = %e, "Compat entry: request body could not be read");
            return s
                .refused(
                    &caller,
                    &seen,
                    StatusCode::BAD_REQUEST,
                    "request body could not be read",
                )
                .await;
        }
    };
    seen.sha256 = Some(hex::encode(Sha256::digest(&body)));
    let msg = match codec::decode(&body) {
        Ok(m) => m,
        Err(e) => {
            // A decode error quotes the refused value: cut.
            let text = e.to_string();
            let text = crate::error_text::cut(&text).into_owned();
            tracing::info!(peer = %caller.text(), error = %for_log(&text), "Compat entry: body refused (400), nothing written");
            let answer = (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": text, "class": e.class()})),
            )
                .into_response();
            return s.refused_with(&caller, &seen, answer, &text).await;
        }
    };
    seen.sndr = Some(msg.meta.sndr.chars().take(16).collect());
    if !client.senders.contains(&msg.meta.sndr) {
        tracing::warn!(
            peer = %caller.text(),
            client = %client.name,
            sndr = %for_log(seen.sndr.as_deref().unwrap_or_default()),
            "Compat entry: SNDR not allowed for this client (403), nothing written"
        );
        return s
            .refused(
                &caller,
                &seen,
                StatusCode::FORBIDDEN,
                "SNDR is not one this client may send (its token's senders, or \
             msgx.http.compat-allowed-senders)",
            )
            .await;
    }
    if let Some(reason) = unsupported(&s.state.ignore, &msg) {
        let reason = crate::error_text::cut(&reason).into_owned();
        tracing::info!(peer = %caller.text(), reason = %for_log(&reason), "Compat entry: type not handled (422), nothing written");
        let answer = (
            StatusCode::UNPROCESSABLE_ENTITY,
            axum::Json(json!({"error": reason, "class": ErrorClass::Unsupported.as_str()})),
        )
            .into_response();
        return s.refused_with(&caller, &seen, answer, &reason).await;
    }
    let meta = msg.meta;
    // decode() accepted the bytes, so they are UTF-8.
    let Ok(text) = std::str::from_utf8(&body) else {
        return s
            .refused(&caller, &seen, StatusCode::BAD_REQUEST, "body is not UTF-8")
            .await;
    };
    s.write(text, &meta, &caller, &seen).await
}

impl Compat {
    /// Writes the mailbox row, recorded in COMPAT_REQUEST with its MSG_ID
    /// before the mailbox commits (so the pump scopes its identity), then
    /// enqueues it and records the answer.
    async fn write(
        &self,
        text: &str,
        meta: &codec::Meta,
        caller: &Caller,
        seen: &Seen,
    ) -> Response {
        let st = &self.state;
        let now = st.clock.now();
        let received = now.with_timezone(&st.tz).naive_local();
        let record = NewRequest {
            peer: caller.text(),
            principal: seen.principal.as_deref(),
            sndr: seen.sndr.as_deref(),
            payload_sha256: seen.sha256.as_deref(),
            detail: None,
        };
        let recorded = OnceLock::new();
        let (pg, record, slot) = (&st.pg, &record, &recorded);
        let confirm = |id: i64| async move {
            let rid = compat_request::begin_write(pg, now, record, id).await?;
            let _ = slot.set(rid);
            Ok::<(), sqlx::Error>(())
        };
        let written = st
            .mailbox
            .insert_message_confirmed(text, received, Some(meta), confirm)
            .await;
        let id = match written {
            Ok(ConfirmedInsert::Committed(id)) => id,
            Ok(ConfirmedInsert::Refused(id, e)) => {
                tracing::error!(peer = %caller.text(), id, error = %e, "Compat entry: the request could not be recorded in PostgreSQL; mailbox row rolled back (503)");
                return error(StatusCode::SERVICE_UNAVAILABLE, "mailbox unavailable");
            }
            Err(e @ MailboxError::Shadow) => {
                return self
                    .refused(caller, seen, StatusCode::SERVICE_UNAVAILABLE, e.to_string())
                    .await;
            }
            Err(e) => {
                tracing::error!(peer = %caller.text(), error = %e, "Compat entry: mailbox write failed (503)");
                let text = "mailbox unavailable";
                match recorded.get() {
                    Some(&rid) => {
                        let failed = Outcome::MailboxFailed;
                        if let Err(e) =
                            compat_request::finish(&st.pg, rid, 503, failed, Some(text)).await
                        {
                            tracing::warn!(error = %e, "Compat entry: the request's outcome could not be recorded");
                        }
                        return error(StatusCode::SERVICE_UNAVAILABLE, text);
                    }
                    None => {
                        return self
                            .refused(caller, seen, StatusCode::SERVICE_UNAVAILABLE, text)
                            .await;
                    }
                }
            }
        };
        let (status, outcome, answer) = match inbox::enqueue_compat(&st.pg, id, now).await {
            Ok(_) => (
                StatusCode::OK,
                Outcome::Accepted,
                axum::Json(json!({"id": id, "enqueued": true})),
            ),
            Err(e) => {
                tracing::warn!(id, error = %e, "Compat entry: enqueue failed; the poller will pick the row up");
                (
                    StatusCode::ACCEPTED,
                    Outcome::NotEnqueued,
                    axum::Json(
                        json!({"id": id, "enqueued": false, "warning": "stored in the mailbox; ingest will pick it up"}),
                    ),
                )
            }
        };
        if let Some(&rid) = recorded.get()
            && let Err(e) =
                compat_request::finish(&st.pg, rid, status.as_u16(), outcome, None).await
        {
            tracing::warn!(id, error = %e, "Compat entry: the request's outcome could not be recorded");
        }
        (status, answer).into_response()
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
    use axum::http::HeaderValue;

    fn entry(token: &str, name: &str) -> TokenEntry {
        TokenEntry {
            sha256: Sha256::digest(token.as_bytes()).into(),
            client: CompatClient {
                name: name.into(),
                senders: vec!["AODB".into()],
            },
        }
    }

    #[test]
    fn a_token_finds_its_own_client_and_no_other() {
        let auth = Auth {
            tokens: vec![
                entry("0123456789abcdef", "a"),
                entry("fedcba9876543210", "b"),
            ],
            tokenless: None,
        };
        let name = |p: &[u8]| auth.client_of(p).map(|c| c.name.clone());
        assert_eq!(name(b"0123456789abcdef").as_deref(), Some("a"));
        assert_eq!(name(b"fedcba9876543210").as_deref(), Some("b"));
        assert_eq!(name(b"0123456789abcdeF"), None);
        assert_eq!(name(b"0123456789abcde"), None);
        assert_eq!(name(b""), None);
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
        assert_eq!(t.client.name, TOKEN_ENV);
        assert_eq!(
            t.sha256,
            <[u8; 32]>::from(Sha256::digest(b"0123456789abcdef"))
        );
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

    fn tokens_file(text: &str, mode: u32) -> tempfile::NamedTempFile {
        use std::os::unix::fs::PermissionsExt;
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        f
    }

    #[test]
    fn a_tokens_file_binds_each_token_to_its_senders_and_is_checked() {
        let hash = hex::encode(Sha256::digest(b"bridge-token-0123456789"));
        let good = format!(
            "[[token]]\nname = \"bridge\"\nsha256 = \"{hash}\"\nsenders = [\"AODB\", \"BHS\"]\n"
        );
        let f = tokens_file(&good, 0o600);
        let t = load_tokens_file(f.path()).unwrap();
        assert_eq!(t[0].client.name, "bridge");
        assert_eq!(t[0].client.senders, ["AODB", "BHS"]);
        let shared = tokens_file(&good, 0o640);
        let e = load_tokens_file(shared.path()).err().unwrap().to_string();
        assert!(e.contains("mode 0640") && e.contains("chmod 600"), "{e}");
        for (text, why) in [
            (good.replace("bridge", "a b"), "the name"),
            (good.replace(&hash, "abc"), "64 hex digits"),
            (good.replace("[\"AODB\", \"BHS\"]", "[]"), "senders"),
            (format!("{good}{good}"), "twice"),
            (String::new(), "no [[token]]"),
            (format!("{good}x = 1\n"), "line 5"),
        ] {
            let f = tokens_file(&text, 0o600);
            let e = load_tokens_file(f.path())
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(why), "{why}: {e}");
            assert!(!e.contains(&hash), "no hash in the message: {e}");
        }
    }

    #[test]
    fn only_xml_content_types_are_taken() {
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(v));
            xml_content_type(&h)
        };
        assert!(with("application/xml"));
        assert!(with("Text/XML; charset=utf-8"));
        assert!(!with("text/plain"));
        assert!(!with("application/x-www-form-urlencoded"));
        assert!(!with("multipart/form-data; boundary=x"));
        assert!(!xml_content_type(&HeaderMap::new()));
    }
}
