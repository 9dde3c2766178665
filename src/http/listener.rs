//! Serving for both listeners (the compat entry and the ops endpoints;
//! issue 16 item 4; docs/production/http.md): a hand-driven accept loop
//! instead of `axum::serve`, because only hyper's own connection builder
//! bounds the time a client may take to send a request head, and optional
//! TLS (tokio-rustls, client certificates verified by rustls'
//! `WebPkiClientVerifier`).
//!
//! Per listener, and shared by all its connections:
//!
//! | limit | key | when exceeded |
//! |---|---|---|
//! | open connections | `msgx.http.max-connections` | new connections wait in the kernel backlog |
//! | request head (and TLS handshake) | `msgx.http.header-read-timeout` | the connection is closed |
//! | request body | `msgx.http.body-timeout` | a longer gap between chunks fails the read; the compat entry also bounds the whole body by it (408) |
//! | requests per second | `msgx.http.requests-per-second` | 429 at once |
//! | requests in progress | `msgx.http.max-concurrent-requests` | 503 at once |
//!
//! Excess requests are refused at once rather than queued, so a flood never
//! turns into a backlog of stale requests, and a refusal costs nothing.
//! HTTP/1.1 only: neither endpoint needs HTTP/2, and one protocol is one
//! set of timeouts to reason about.

use crate::config::Http;
use axum::Router;
use axum::body::Body;
use axum::error_handling::HandleErrorLayer;
use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rustls::RootCertStore;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tower::limit::{ConcurrencyLimitLayer, RateLimitLayer};
use tower::load_shed::LoadShedLayer;
use tower::load_shed::error::Overloaded;
use tower::{BoxError, Service, ServiceBuilder, ServiceExt};
use tower_http::timeout::RequestBodyTimeoutLayer;

/// The limits of one listener (see the module table).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_read_timeout: Duration,
    pub body_timeout: Duration,
    pub max_concurrent_requests: usize,
    pub requests_per_second: u64,
    pub max_connections: usize,
}

impl Limits {
    /// The configured limits (validated > 0 at load; clamped here anyway,
    /// since a zero would make tower's layers refuse everything forever).
    pub fn from_config(h: &Http) -> Limits {
        Limits {
            header_read_timeout: h.header_read_timeout.std(),
            body_timeout: h.body_timeout.std(),
            max_concurrent_requests: h.max_concurrent_requests.max(1),
            requests_per_second: h.requests_per_second.max(1),
            max_connections: h.max_connections.max(1),
        }
    }
}

/// The client's address, in every request's extensions (for logs).
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

/// Why a TLS setting could not be used (the listener does not start).
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{key} {path}: cannot read PEM: {detail}")]
    Pem {
        key: &'static str,
        path: PathBuf,
        detail: String,
    },
    #[error("{key} {path}: no {what} in the file")]
    Empty {
        key: &'static str,
        path: PathBuf,
        what: &'static str,
    },
    #[error("{key} {path}: {detail}")]
    Rejected {
        key: &'static str,
        path: PathBuf,
        detail: String,
    },
}

/// The TLS files of a listener; `client_ca` set = mutual TLS.
#[derive(Debug, Clone, Copy)]
pub struct TlsFiles<'a> {
    pub cert: &'a Path,
    pub key: &'a Path,
    pub client_ca: Option<&'a Path>,
    /// The config keys of cert, key and client CA, named in errors.
    pub keys: [&'static str; 3],
}

/// The compat entry's TLS keys.
pub const COMPAT_TLS_KEYS: [&str; 3] = [
    "msgx.http.compat-tls-cert",
    "msgx.http.compat-tls-key",
    "msgx.http.compat-tls-client-ca",
];

/// Builds the acceptor; errors name the listener's keys (`files.keys`).
/// The ring provider is passed explicitly so no process-wide default
/// provider is needed.
pub fn tls_acceptor(files: TlsFiles<'_>) -> Result<TlsAcceptor, TlsError> {
    let [cert_key, key_key, ca_key] = files.keys;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = read_certs(cert_key, files.cert)?;
    let key = PrivateKeyDer::from_pem_file(files.key).map_err(|e| TlsError::Pem {
        key: key_key,
        path: files.key.to_path_buf(),
        detail: e.to_string(),
    })?;
    let rejected = |key: &'static str, path: &Path, e: &dyn std::fmt::Display| TlsError::Rejected {
        key,
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| rejected(cert_key, files.cert, &e))?;
    let builder = match files.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for c in read_certs(ca_key, ca)? {
                roots.add(c).map_err(|e| rejected(ca_key, ca, &e))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| rejected(ca_key, ca, &e))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| rejected(key_key, files.key, &e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn read_certs(key: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = |e: rustls_pki_types::pem::Error| TlsError::Pem {
        key,
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(pem)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem)?;
    if certs.is_empty() {
        return Err(TlsError::Empty {
            key,
            path: path.to_path_buf(),
            what: "CERTIFICATE",
        });
    }
    Ok(certs)
}

/// Marks a refusal by the concurrency limit (the rate limit's is the plain
/// [`Overloaded`]), so the two answer 503 and 429 apart.
#[derive(Debug)]
struct Busy;

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("too many requests in progress")
    }
}

impl std::error::Error for Busy {}

async fn refused(name: &'static str, e: BoxError) -> Response {
    let (status, error) = if e.is::<Busy>() {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many requests in progress (msgx.http.max-concurrent-requests)",
        )
    } else if e.is::<Overloaded>() {
        (
            StatusCode::TOO_MANY_REQUESTS,
            "request rate limit exceeded (msgx.http.requests-per-second)",
        )
    } else {
        tracing::warn!(listener = name, error = %e, "HTTP request failed inside the listener");
        (StatusCode::SERVICE_UNAVAILABLE, "service unavailable")
    };
    tracing::debug!(listener = name, %status, "HTTP request refused");
    (status, axum::Json(json!({ "error": error }))).into_response()
}

/// The router behind the shared limits: one Buffer worker owns the limiters
/// (tower's RateLimit is not Clone), each limiter sits behind a LoadShed so
/// it refuses instead of waiting, and HandleError turns refusals into answers.
fn limited(
    name: &'static str,
    router: Router,
    limits: &Limits,
) -> impl Service<Request<Body>, Response = Response, Error = Infallible, Future: Send>
+ Clone
+ Send
+ 'static {
    ServiceBuilder::new()
        // Every answer, refusals included, is counted (issue 16: a hostile
        // or overloading client leaves a visible signal).
        .map_response(move |r: Response| {
            metrics::counter!(
                "msgx_http_responses_total",
                "listener" => name,
                "status" => r.status().as_str().to_owned()
            )
            .increment(1);
            r
        })
        .layer(HandleErrorLayer::new(move |e: BoxError| refused(name, e)))
        .layer(tower::buffer::BufferLayer::new(1024))
        .layer(LoadShedLayer::new())
        .layer(RateLimitLayer::new(
            limits.requests_per_second,
            Duration::from_secs(1),
        ))
        .map_err(|e: BoxError| -> BoxError {
            if e.is::<Overloaded>() {
                Box::new(Busy)
            } else {
                e
            }
        })
        .layer(LoadShedLayer::new())
        .layer(ConcurrencyLimitLayer::new(limits.max_concurrent_requests))
        .layer(RequestBodyTimeoutLayer::new(limits.body_timeout))
        .service(router)
}

/// Resolves when `stop` turns true; never, if its sender is gone (nobody
/// can ask for a stop any more).
async fn stopped(mut stop: watch::Receiver<bool>) {
    if stop.wait_for(|v| *v).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Serves `router` on `listener` (TLS when `tls` is given) until `stop`
/// turns true; then lets open connections finish their request, each
/// within the header and body timeouts. `name` labels the logs.
pub async fn serve(
    name: &'static str,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    limits: Limits,
    stop: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let service = limited(name, router, &limits);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => match s {
                Ok(s) => s,
                Err(_) => break, // never closed
            },
            _ = stopped(stop.clone()) => break,
        };
        let (tcp, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    // EMFILE and the like: back off instead of spinning.
                    tracing::warn!(listener = name, error = %e, "Cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stopped(stop.clone()) => break,
        };
        let service = service.clone();
        let tls = tls.clone();
        let stop = stop.clone();
        connections.spawn(async move {
            let _slot = slot;
            let service = service.map_request(move |mut r: Request<hyper::body::Incoming>| {
                r.extensions_mut().insert(Peer(peer));
                r.map(Body::new)
            });
            let Some(tls) = tls else {
                return connection(name, tcp, peer, service, limits, stop).await;
            };
            match tokio::time::timeout(limits.header_read_timeout, tls.accept(tcp)).await {
                Ok(Ok(stream)) => connection(name, stream, peer, service, limits, stop).await,
                Ok(Err(e)) => {
                    dropped(name, "tls-handshake");
                    tracing::warn!(listener = name, %peer, error = %e, "TLS handshake refused")
                }
                Err(_) => {
                    dropped(name, "tls-handshake");
                    tracing::debug!(listener = name, %peer, "TLS handshake not completed in time")
                }
            }
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// One HTTP/1.1 connection, closed by hyper when a request head takes
/// longer than the header timeout (also while idle between requests).
async fn connection<I, S>(
    name: &'static str,
    io: I,
    peer: SocketAddr,
    service: S,
    limits: Limits,
    stop: watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: Service<Request<hyper::body::Incoming>, Response = Response, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let conn = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
    tokio::pin!(conn);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        _ = stopped(stop) => {
            conn.as_mut().graceful_shutdown();
            let grace = limits.header_read_timeout + limits.body_timeout;
            match tokio::time::timeout(grace, conn.as_mut()).await {
                Ok(r) => r,
                Err(_) => return,
            }
        }
    };
    if let Err(e) = result {
        // Header timeouts, resets, malformed requests: the client's problem.
        dropped(
            name,
            if e.is_timeout() {
                "header-timeout"
            } else {
                "error"
            },
        );
        tracing::debug!(listener = name, %peer, error = %e, "HTTP connection ended with an error");
    }
}

/// Counts a connection closed without a response
/// (`msgx_http_connections_dropped_total`).
fn dropped(listener: &'static str, reason: &'static str) {
    metrics::counter!("msgx_http_connections_dropped_total", "listener" => listener, "reason" => reason)
        .increment(1);
}
