//! Serving for every listener (the compat entry, the ops endpoints and the
//! console; docs/production/http.md): a hand-driven accept loop
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
//! | open connections of one client | `msgx.http.max-connections-per-client` | a new connection is closed at once |
//! | request head (and TLS handshake) | `msgx.http.header-read-timeout` | the connection is closed |
//! | the whole request body | `msgx.http.body-timeout` | 408, and the connection is closed |
//! | requests per second of one client | `msgx.http.requests-per-second-per-client` | 429 at once |
//! | requests per second | `msgx.http.requests-per-second` | 429 at once |
//! | requests in progress | `msgx.http.max-concurrent-requests` | 503 at once |
//!
//! Excess requests are refused at once rather than queued, so a flood never
//! turns into a backlog of stale requests, and a refusal costs nothing.
//! The per-client budgets come first: a client beyond its
//! own share is refused before it can charge the listener's, so one client
//! cannot take the others' share. The client is the direct peer, or behind
//! a trusted proxy the address it forwarded ([`client::resolve`]); the
//! connection budget counts direct peers only, and trusted proxies are
//! exempt from it. The body bound covers the whole body, not the gap
//! between chunks: a body trickling one byte at a time holds its request
//! slot for at most `body-timeout`.
//! HTTP/1.1 only: neither endpoint needs HTTP/2, and one protocol is one
//! set of timeouts to reason about.

use super::client::{self, Client, ConnectionSlot, Connections, Rates};
use crate::config::Http;
use axum::Router;
use axum::body::Body;
use axum::body::HttpBody;
use axum::error_handling::HandleErrorLayer;
use axum::http::{HeaderValue, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use hyper::body::{Frame, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rustls::RootCertStore;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
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

/// The limits of one listener (see the module table).
#[derive(Debug, Clone)]
pub struct Limits {
    pub header_read_timeout: Duration,
    pub body_timeout: Duration,
    pub max_concurrent_requests: usize,
    pub requests_per_second: u64,
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    pub requests_per_second_per_client: u64,
    /// `msgx.http.trusted-proxies`, IPv4-mapped addresses as IPv4.
    pub trusted_proxies: Arc<[IpAddr]>,
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
            max_connections_per_client: h.max_connections_per_client.max(1),
            requests_per_second_per_client: h.requests_per_second_per_client.max(1),
            trusted_proxies: h.trusted_proxies.iter().map(|p| p.to_canonical()).collect(),
        }
    }
}

/// The direct peer's address, in every request's extensions (behind a
/// proxy, the proxy; [`Client`] is the resolved client).
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

/// Why a listener's optional HTTPS ([`server_tls`]) cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum ServerTlsError {
    #[error("{0}, {1}: set both or neither")]
    Incomplete(&'static str, &'static str),
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// A listener's HTTPS without client certificates (the console, the ACRIS
/// API): `None` when neither `cert` nor `key` is set, the acceptor when
/// both are; one alone is refused (a listener half configured for TLS must
/// not fall back to plain HTTP). `keys` names them in errors.
pub fn server_tls(
    cert: Option<&Path>,
    key: Option<&Path>,
    keys: [&'static str; 3],
) -> Result<Option<TlsAcceptor>, ServerTlsError> {
    match (cert, key) {
        (None, None) => Ok(None),
        (Some(cert), Some(key)) => Ok(Some(tls_acceptor(TlsFiles {
            cert,
            key,
            client_ca: None,
            keys,
        })?)),
        _ => Err(ServerTlsError::Incomplete(keys[0], keys[1])),
    }
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

/// The router behind the limits: the client's own rate first, then one
/// Buffer worker owns the shared limiters (tower's RateLimit is not Clone),
/// each limiter sits behind a LoadShed so it refuses instead of waiting, and
/// HandleError turns refusals into answers. Innermost, the whole-body bound.
fn limited(
    name: &'static str,
    router: Router,
    limits: &Limits,
) -> impl Service<Request<Body>, Response = Response, Error = Infallible, Future: Send>
+ Clone
+ Send
+ 'static {
    let rates = Arc::new(Rates::new(
        limits.requests_per_second_per_client,
        client::TRACKED_CLIENTS,
    ));
    let body_timeout = limits.body_timeout;
    ServiceBuilder::new()
        // Every answer, refusals included, is counted (a hostile or
        // overloading client leaves a visible signal).
        .map_response(move |r: Response| {
            metrics::counter!(
                "msgx_http_responses_total",
                "listener" => name,
                "status" => r.status().as_str().to_owned()
            )
            .increment(1);
            r
        })
        .layer_fn(move |inner| ClientRate {
            inner,
            name,
            rates: rates.clone(),
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
        .layer_fn(move |inner| WholeBody {
            inner,
            limit: body_timeout,
        })
        .service(router)
}

/// Refuses a request whose client has used its
/// `msgx.http.requests-per-second-per-client` (429) before the listener's
/// shared limits are charged with it.
#[derive(Clone)]
struct ClientRate<S> {
    inner: S,
    name: &'static str,
    rates: Arc<Rates>,
}

impl<S> Service<Request<Body>> for ClientRate<S>
where
    S: Service<Request<Body>, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<std::future::Ready<Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let client = req.extensions().get::<Client>().map(|c| c.0);
        match client {
            Some(c) if !self.rates.admit(c, tokio::time::Instant::now()) => {
                tracing::debug!(listener = self.name, client = %c, "HTTP request refused: the client's rate");
                let mut r = (
                    StatusCode::TOO_MANY_REQUESTS,
                    axum::Json(json!({
                        "error": "request rate limit of this client exceeded \
                                  (msgx.http.requests-per-second-per-client)"
                    })),
                )
                    .into_response();
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                Either::Left(std::future::ready(Ok(r)))
            }
            _ => Either::Right(self.inner.call(req)),
        }
    }
}

/// Bounds the time from a request's head to the last byte of its body by
/// `limit` (`msgx.http.body-timeout`): past it, the body fails its reader
/// and the request answers 408 with `Connection: close`, whatever the
/// handler made of the failed read. A body that trickles steadily is cut
/// off like a stalled one; a request without a body is not
/// timed, and neither is the handler once the body has arrived.
#[derive(Clone)]
struct WholeBody<S> {
    inner: S,
    limit: Duration,
}

impl<S> Service<Request<Body>> for WholeBody<S>
where
    S: Service<Request<Body>, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        if req.body().is_end_stream() {
            return Box::pin(self.inner.call(req));
        }
        let limit = self.limit;
        let expired = Arc::new(AtomicBool::new(false));
        let req = req.map(|body| {
            Body::new(Deadline {
                body,
                timer: Box::pin(tokio::time::sleep(limit)),
                expired: expired.clone(),
            })
        });
        let answer = self.inner.call(req);
        Box::pin(async move {
            let response = answer.await?;
            if !expired.load(Ordering::Acquire) {
                return Ok(response);
            }
            let mut r = (
                StatusCode::REQUEST_TIMEOUT,
                axum::Json(json!({
                    "error": format!("request body not received within {limit:?} (msgx.http.body-timeout)")
                })),
            )
                .into_response();
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Ok(r)
        })
    }
}

/// A request body that fails once its deadline has passed (see [`WholeBody`]).
struct Deadline {
    body: Body,
    timer: Pin<Box<tokio::time::Sleep>>,
    expired: Arc<AtomicBool>,
}

/// The error a body past its deadline fails with.
#[derive(Debug, thiserror::Error)]
#[error("request body not received within msgx.http.body-timeout")]
pub struct BodyTimedOut;

impl HttpBody for Deadline {
    type Data = axum::body::Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if !this.body.is_end_stream() && this.timer.as_mut().poll(cx).is_ready() {
            this.expired.store(true, Ordering::Release);
            return Poll::Ready(Some(Err(Box::new(BodyTimedOut))));
        }
        Pin::new(&mut this.body)
            .poll_frame(cx)
            .map_err(|e| -> BoxError { Box::new(e) })
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The connection slot of the direct peer `ip`: `Some(None)` for a trusted
/// proxy (exempt: its connections carry many clients), `None` when `ip`
/// holds all of its `max-connections-per-client`.
fn client_slot(
    budget: &Arc<Connections>,
    limits: &Limits,
    ip: IpAddr,
) -> Option<Option<ConnectionSlot>> {
    let ip = ip.to_canonical();
    if limits.trusted_proxies.contains(&ip) {
        return Some(None);
    }
    budget.take(ip).map(Some)
}

/// Binds `addr`; returns the socket and its address (port 0 resolved).
pub async fn bind_tcp(addr: SocketAddr) -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    Ok((listener, bound))
}

/// A listener's socket, bound, with its router, TLS and limits: ready to
/// [`Bound::serve`] (the compat entry, the ACRIS API).
pub struct Bound {
    /// Labels the logs and metrics (`listener="…"`).
    pub name: &'static str,
    pub listener: TcpListener,
    pub addr: SocketAddr,
    pub tls: Option<TlsAcceptor>,
    pub router: Router,
    pub limits: Limits,
}

impl Bound {
    /// The bound address (port 0 resolved).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until `stop` turns true ([`serve`]).
    pub async fn serve(self, stop: watch::Receiver<bool>) -> std::io::Result<()> {
        serve(
            self.name,
            self.listener,
            self.tls,
            self.router,
            self.limits,
            stop,
        )
        .await
    }
}

/// Resolves when `stop` turns true; never, if its sender is gone (nobody
/// can ask for a stop any more).
pub async fn stopped(mut stop: watch::Receiver<bool>) {
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
    let per_client = Connections::new(limits.max_connections_per_client);
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
        let Some(client_slot) = client_slot(&per_client, &limits, peer.ip()) else {
            // Closed at once: a refusal costs nothing and holds no slot.
            dropped(name, "client-connections");
            tracing::debug!(listener = name, %peer, "HTTP connection refused: the client's connections (msgx.http.max-connections-per-client)");
            drop(tcp);
            continue;
        };
        let service = service.clone();
        let tls = tls.clone();
        let stop = stop.clone();
        let limits = limits.clone();
        connections.spawn(async move {
            // Dropped in order: the client's slot before the listener's, so
            // the next connection accepted never finds this one counted.
            let _slots = (client_slot, slot);
            let trusted = limits.trusted_proxies.clone();
            let service = service.map_request(move |mut r: Request<hyper::body::Incoming>| {
                let client = client::resolve(peer.ip(), r.headers(), &trusted);
                r.extensions_mut().insert(Peer(peer));
                r.extensions_mut().insert(Client(client));
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
