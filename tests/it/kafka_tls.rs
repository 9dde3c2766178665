//! Kafka over TLS (issue 16, item 2; docs/production/kafka.md): a real TLS
//! endpoint with certificates made here, in front of librdkafka's mock
//! cluster, whose brokers advertise the TLS endpoints
//! (`rd_kafka_mock_broker_set_host_port`), so every connection — bootstrap,
//! produce, fetch — goes through TLS: the right CA produces and consumes; a
//! wrong CA, a certificate for another host name, a missing client
//! certificate and a TLS client against a plaintext broker each fail at once
//! with the TLS reason. Also `msgx config check` and `msgx tail` on the
//! command line.

use crate::common;

use common::{code, msgx, text, write_config};
use msgx::commands::tail::{TailError, TailOptions, TailRecord, tail};
use msgx::config::Config;
use msgx::kafka::producer::{DeliveryProducer, Outgoing, SendError, Topic};
use msgx::kafka::{self, KafkaClientError, TopicPartitions};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rdkafka::ClientConfig;
use rdkafka::producer::{BaseProducer, DefaultProducerContext, Producer};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ------------------------------------------------------------ certificates --

/// A private CA that signs server and client certificates.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        let cert = params.self_signed(&key).expect("CA certificate");
        Ca {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A leaf certificate for `names`, for a server or a client.
    fn leaf(&self, names: &[&str], usage: ExtendedKeyUsagePurpose) -> Leaf {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names.clone()).expect("leaf params");
        params.distinguished_name.push(
            DnType::CommonName,
            names.first().cloned().unwrap_or_default(),
        );
        params.extended_key_usages = vec![usage];
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().expect("leaf key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("leaf certificate");
        Leaf {
            der: cert.der().clone(),
            pem: cert.pem(),
            key_der: key.serialize_der(),
            key_pem: key.serialize_pem(),
        }
    }
}

struct Leaf {
    der: CertificateDer<'static>,
    pem: String,
    key_der: Vec<u8>,
    key_pem: String,
}

fn write_pem(dir: &Path, name: &str, content: &str) -> String {
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, content).expect("write PEM");
    path.to_str().expect("utf-8 path").to_string()
}

// --------------------------------------------------------------- TLS proxy --

/// What the TLS endpoint saw.
#[derive(Default)]
struct ProxyStats {
    handshakes: AtomicU32,
    /// The server side's reason per failed handshake.
    failures: Mutex<Vec<String>>,
    versions: Mutex<Vec<String>>,
}

/// A TLS-terminating TCP proxy (tokio-rustls) to a plaintext upstream, on
/// its own runtime so that blocking librdkafka calls in the test cannot
/// stall it.
struct TlsProxy {
    addr: SocketAddr,
    stats: Arc<ProxyStats>,
    /// Set by [`TlsProxy::forward_to`] once the mock brokers exist.
    upstream: Arc<Mutex<Option<SocketAddr>>>,
    rt: Option<tokio::runtime::Runtime>,
}

impl TlsProxy {
    fn start(server: &Leaf, client_ca: Option<&Ca>) -> TlsProxy {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("protocol versions");
        let builder = match client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = rustls::RootCertStore::empty();
                roots.add(pem_certificate(&ca.pem)).expect("client CA");
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .build()
                .expect("client verifier");
                builder.with_client_cert_verifier(verifier)
            }
        };
        let config = builder
            .with_single_cert(
                vec![server.der.clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server.key_der.clone())),
            )
            .expect("server certificate");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        listener.set_nonblocking(true).expect("nonblocking");
        let proxy = TlsProxy {
            addr: listener.local_addr().expect("proxy address"),
            stats: Arc::default(),
            upstream: Arc::default(),
            rt: Some(
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                    .expect("proxy runtime"),
            ),
        };
        let (stats, upstream) = (proxy.stats.clone(), proxy.upstream.clone());
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        proxy.rt.as_ref().expect("runtime").spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, stats, upstream) =
                    (acceptor.clone(), stats.clone(), upstream.clone());
                tokio::spawn(async move {
                    let mut tls = match acceptor.accept(tcp).await {
                        Ok(tls) => tls,
                        Err(e) => {
                            stats.failures.lock().unwrap().push(e.to_string());
                            return;
                        }
                    };
                    stats.handshakes.fetch_add(1, Ordering::SeqCst);
                    if let Some(v) = tls.get_ref().1.protocol_version() {
                        stats.versions.lock().unwrap().push(format!("{v:?}"));
                    }
                    let Some(to) = *upstream.lock().unwrap() else {
                        return;
                    };
                    if let Ok(mut plain) = tokio::net::TcpStream::connect(to).await {
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                    }
                });
            }
        });
        proxy
    }

    fn forward_to(&self, upstream: SocketAddr) {
        *self.upstream.lock().unwrap() = Some(upstream);
    }

    fn handshakes(&self) -> u32 {
        self.stats.handshakes.load(Ordering::SeqCst)
    }

    fn failures(&self) -> Vec<String> {
        self.stats.failures.lock().unwrap().clone()
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

fn pem_certificate(pem: &str) -> CertificateDer<'static> {
    use rustls::pki_types::pem::PemObject;
    CertificateDer::from_pem_slice(pem.as_bytes()).expect("PEM certificate")
}

// ------------------------------------------------------------ mock cluster --

/// librdkafka's mock cluster whose brokers advertise `localhost:<proxy
/// port>`: clients learn only the TLS addresses. Made through the C API
/// (as `MockCluster::new` does) because rdkafka's wrapper cannot re-advertise
/// a broker; its handle client has no bootstrap servers, so it never
/// connects itself.
struct TlsCluster {
    mock: *mut rdkafka::bindings::rd_kafka_mock_cluster_t,
    /// The brokers' own plaintext addresses (for the downgrade test).
    plaintext: Vec<SocketAddr>,
    proxies: Vec<TlsProxy>,
    _handle: BaseProducer<DefaultProducerContext>,
}

impl TlsCluster {
    fn new(brokers: usize, server: &Leaf, client_ca: Option<&Ca>) -> TlsCluster {
        use rdkafka::bindings as rd;
        let handle: BaseProducer<DefaultProducerContext> =
            ClientConfig::new().create().expect("handle client");
        // SAFETY: `handle` outlives the cluster (dropped after it, see Drop);
        // the strings are read or copied by librdkafka during each call.
        unsafe {
            let mock = rd::rd_kafka_mock_cluster_new(handle.client().native_ptr(), brokers as i32);
            assert!(!mock.is_null(), "mock cluster");
            let plaintext: Vec<SocketAddr> =
                std::ffi::CStr::from_ptr(rd::rd_kafka_mock_cluster_bootstraps(mock))
                    .to_str()
                    .expect("bootstraps")
                    .split(',')
                    .map(|a| a.parse().expect("broker address"))
                    .collect();
            assert_eq!(plaintext.len(), brokers);
            let proxies: Vec<TlsProxy> = plaintext
                .iter()
                .map(|p| {
                    let proxy = TlsProxy::start(server, client_ca);
                    proxy.forward_to(*p);
                    proxy
                })
                .collect();
            // Broker IDs are 1..=N, in the order of the bootstrap list.
            for (i, proxy) in proxies.iter().enumerate() {
                rd::rd_kafka_mock_broker_set_host_port(
                    mock,
                    i as i32 + 1,
                    c"localhost".as_ptr(),
                    i32::from(proxy.addr.port()),
                );
            }
            for topic in [c"msg", c"schd", c"season"] {
                let err = rd::rd_kafka_mock_topic_create(mock, topic.as_ptr(), 3, 1);
                assert_eq!(err, rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR);
            }
            TlsCluster {
                mock,
                plaintext,
                proxies,
                _handle: handle,
            }
        }
    }

    /// The bootstrap list a client is given: the TLS endpoints (the mock's
    /// own list is computed once, before the brokers were re-advertised).
    fn bootstrap(&self) -> String {
        let list: Vec<String> = self
            .proxies
            .iter()
            .map(|p| format!("localhost:{}", p.addr.port()))
            .collect();
        list.join(",")
    }

    fn handshakes(&self) -> u32 {
        self.proxies.iter().map(TlsProxy::handshakes).sum()
    }

    fn failures(&self) -> Vec<String> {
        self.proxies.iter().flat_map(TlsProxy::failures).collect()
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once, before its handle client.
        unsafe { rdkafka::bindings::rd_kafka_mock_cluster_destroy(self.mock) };
    }
}

// ----------------------------------------------------------------- helpers --

/// `msgx.kafka` for SSL with `ca` (fast timeouts for tests).
fn tls_kafka(bootstrap: &str, ca_file: &str) -> msgx::config::Kafka {
    let mut k = Config::default().msgx.kafka;
    k.brokers = bootstrap.to_string();
    k.message_timeout = "10s".parse().expect("duration");
    k.call_timeout = "10s".parse().expect("duration");
    k.reconnect_backoff_max = "200ms".parse().expect("duration");
    for (p, v) in [
        ("security.protocol", "SSL"),
        ("ssl.ca.location", ca_file),
        // `localhost` may also resolve to ::1, where no proxy listens.
        ("broker.address.family", "v4"),
    ] {
        k.properties.insert(p.into(), v.into());
    }
    k
}

fn records(n: i64) -> Vec<(String, String)> {
    (1..=n)
        .map(|i| {
            (
                format!("FLID{i}"),
                format!("{{\"flid\":\"FLID{i}\",\"v\":{i}}}"),
            )
        })
        .collect()
}

async fn send(
    producer: &DeliveryProducer,
    rows: &[(String, String)],
) -> Vec<Result<(), SendError>> {
    let out: Vec<Outgoing<'_>> = rows
        .iter()
        .enumerate()
        .map(|(i, (key, value))| Outgoing {
            topic: Topic::Msg,
            key,
            payload: Some(value.as_bytes()),
            event_type: "UPSERT",
            state_version: 1,
            event_id: i as i64 + 1,
            traceparent: None,
        })
        .collect();
    producer.send_all(&out).await
}

async fn read_all(cfg: &msgx::config::Kafka, topic: &str) -> Result<Vec<TailRecord>, TailError> {
    let opts = TailOptions {
        from_beginning: true,
        max: None,
        follow: false,
        idle: Duration::from_secs(10),
    };
    let mut out = Vec::new();
    tail(cfg, topic, &opts, |r| out.push(r.clone())).await?;
    Ok(out)
}

/// A TLS/SASL error naming the OpenSSL verification failure.
fn assert_verify_failure(e: &KafkaClientError, what: &str) {
    let text = e.to_string();
    assert!(
        matches!(e, KafkaClientError::Security(_)) && text.contains("certificate verify failed"),
        "{what}: {text}"
    );
}

fn kafka_config_file(kafka: msgx::config::Kafka) -> tempfile::NamedTempFile {
    let mut c = Config::default();
    c.msgx.kafka = kafka;
    c.msgx.log.dir = String::new();
    write_config(&c)
}

// ------------------------------------------------------------------- tests --

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_right_ca_produces_and_consumes_over_tls() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = Ca::new("msgx test CA");
    let server = ca.leaf(
        &["localhost", "127.0.0.1"],
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let cluster = TlsCluster::new(2, &server, None);
    let cfg = tls_kafka(
        &cluster.bootstrap(),
        &write_pem(dir.path(), "ca.pem", &ca.pem),
    );
    assert_eq!(kafka::check_clients(&cfg), Ok(()));

    let producer = DeliveryProducer::create(&cfg).expect("producer");
    let rows = records(20);
    let results = send(&producer, &rows).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");

    let got = read_all(&cfg, "msg").await.expect("tail over TLS");
    let mut keys: Vec<(String, Option<String>)> = got
        .iter()
        .map(|r| (r.key.clone().unwrap_or_default(), r.value.clone()))
        .collect();
    keys.sort();
    let mut want: Vec<(String, Option<String>)> = rows
        .iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect();
    want.sort();
    assert_eq!(keys, want);
    assert!(
        got.iter()
            .all(|r| r.headers.get("event-type").map(String::as_str) == Some("UPSERT"))
    );

    // The metadata client (msgx doctor) sees the topics through TLS too.
    let topics = tokio::task::spawn_blocking(move || kafka::configured_topics(&cfg))
        .await
        .expect("join")
        .expect("topics");
    assert_eq!(
        topics,
        [
            TopicPartitions {
                topic: "msg".into(),
                partitions: Some(3)
            },
            TopicPartitions {
                topic: "schd".into(),
                partitions: Some(3)
            },
            TopicPartitions {
                topic: "season".into(),
                partitions: Some(3)
            },
            // This test's cluster has no audit topic: seen as missing.
            TopicPartitions {
                topic: "audit".into(),
                partitions: None
            },
        ]
    );
    // Producer, consumer and metadata client each to both brokers at most,
    // all through the TLS endpoints (the only addresses they were told).
    assert!(cluster.handshakes() >= 3, "{}", cluster.handshakes());
    // No handshake was refused. A client that hangs up before finishing
    // one (librdkafka closing a second connection as the test's clients
    // are destroyed) is no refusal: the proxy sees "tls handshake eof".
    let refused: Vec<String> = cluster
        .failures()
        .into_iter()
        .filter(|f| f != "tls handshake eof")
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
    for p in &cluster.proxies {
        for v in p.stats.versions.lock().unwrap().iter() {
            assert_eq!(v, "TLSv1_3");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_ca_is_a_certificate_verification_error_at_once() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = Ca::new("msgx test CA");
    let other = Ca::new("some other CA");
    let server = ca.leaf(&["localhost"], ExtendedKeyUsagePurpose::ServerAuth);
    let cluster = TlsCluster::new(1, &server, None);
    let cfg = tls_kafka(
        &cluster.bootstrap(),
        &write_pem(dir.path(), "other.pem", &other.pem),
    );

    let started = Instant::now();
    let metadata_cfg = cfg.clone();
    let err = tokio::task::spawn_blocking(move || kafka::configured_topics(&metadata_cfg))
        .await
        .expect("join")
        .expect_err("wrong CA");
    assert_verify_failure(&err, "metadata client");
    let err = read_all(&cfg, "msg").await.expect_err("wrong CA");
    match &err {
        TailError::Client(e) => assert_verify_failure(e, "tail"),
        other => panic!("tail: {other}"),
    }
    // Told within a few metadata slices, not after msgx.kafka.call-timeout (10 s) each.
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(cluster.handshakes(), 0);
    assert!(
        !cluster.failures().is_empty(),
        "the server saw the handshakes fail"
    );

    // The producer's undelivered records carry the reason too.
    let mut short = cfg.clone();
    short.message_timeout = "2s".parse().expect("duration");
    let producer = DeliveryProducer::create(&short).expect("producer");
    let results = send(&producer, &records(1)).await;
    let err = results[0].as_ref().expect_err("not delivered");
    assert!(
        matches!(err, SendError::Security { .. })
            && err.to_string().contains("certificate verify failed"),
        "{err}"
    );

    // On the command line: exit 1 and the reason.
    let file = kafka_config_file(cfg);
    let out = msgx(file.path(), &["tail", "msg", "--from-beginning"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("msgx tail: Kafka TLS/SASL failure:")
            && stderr.contains("certificate verify failed"),
        "{}",
        text(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_for_another_host_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = Ca::new("msgx test CA");
    let server = ca.leaf(&["kafka.invalid"], ExtendedKeyUsagePurpose::ServerAuth);
    let cluster = TlsCluster::new(1, &server, None);
    let cfg = tls_kafka(
        &cluster.bootstrap(),
        &write_pem(dir.path(), "ca.pem", &ca.pem),
    );
    let err = tokio::task::spawn_blocking(move || kafka::configured_topics(&cfg))
        .await
        .expect("join")
        .expect_err("host name mismatch");
    // librdkafka's default ssl.endpoint.identification.algorithm=https.
    assert_verify_failure(&err, "host name");
    assert_eq!(cluster.handshakes(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_needs_the_client_certificate() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = Ca::new("msgx test CA");
    let server = ca.leaf(&["localhost"], ExtendedKeyUsagePurpose::ServerAuth);
    let client = ca.leaf(&["msgx"], ExtendedKeyUsagePurpose::ClientAuth);
    let cluster = TlsCluster::new(1, &server, Some(&ca));
    let mut cfg = tls_kafka(
        &cluster.bootstrap(),
        &write_pem(dir.path(), "ca.pem", &ca.pem),
    );

    let without = cfg.clone();
    let err = tokio::task::spawn_blocking(move || kafka::configured_topics(&without))
        .await
        .expect("join")
        .expect_err("no client certificate");
    assert!(matches!(err, KafkaClientError::Security(_)), "{err}");
    assert!(
        cluster.failures().iter().any(|f| f.contains("certificate")),
        "{:?}",
        cluster.failures()
    );

    cfg.properties.insert(
        "ssl.certificate.location".into(),
        write_pem(dir.path(), "client.pem", &client.pem),
    );
    cfg.properties.insert(
        "ssl.key.location".into(),
        write_pem(dir.path(), "client.key", &client.key_pem),
    );
    assert_eq!(kafka::check_clients(&cfg), Ok(()));
    let producer = DeliveryProducer::create(&cfg).expect("producer");
    let results = send(&producer, &records(3)).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(read_all(&cfg, "msg").await.expect("tail").len(), 3);
    assert!(cluster.handshakes() >= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_client_never_falls_back_to_plaintext() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = Ca::new("msgx test CA");
    let server = ca.leaf(&["localhost"], ExtendedKeyUsagePurpose::ServerAuth);
    let cluster = TlsCluster::new(1, &server, None);
    // Straight to the broker's plaintext port with security.protocol=SSL.
    let plain = format!("localhost:{}", cluster.plaintext[0].port());
    let cfg = tls_kafka(&plain, &write_pem(dir.path(), "ca.pem", &ca.pem));
    let err = tokio::task::spawn_blocking(move || kafka::configured_topics(&cfg))
        .await
        .expect("join")
        .expect_err("plaintext broker");
    assert!(
        matches!(err, KafkaClientError::Security(_)) && err.to_string().contains("SSL"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_broker_is_named_with_the_connect_error() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = free.local_addr().expect("addr").port();
    drop(free);
    let mut cfg = Config::default().msgx.kafka;
    cfg.brokers = format!("127.0.0.1:{port}");
    cfg.call_timeout = "2s".parse().expect("duration");
    let err = tokio::task::spawn_blocking(move || kafka::configured_topics(&cfg))
        .await
        .expect("join")
        .expect_err("nothing listens");
    let text = err.to_string();
    assert!(
        matches!(err, KafkaClientError::Unreachable { .. })
            && text.contains(&format!(
                "no Kafka broker of 127.0.0.1:{port} answered within 2s"
            ))
            && text.contains("Connection refused"),
        "{text}"
    );
}

#[test]
fn config_check_builds_every_kafka_client() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = Ca::new("msgx test CA");
    let mut k = tls_kafka(
        "kafka1.example:9093,kafka2.example:9093",
        &write_pem(dir.path(), "ca.pem", &ca.pem),
    );
    k.properties
        .insert("security.protocol".into(), "SASL_SSL".into());
    k.properties
        .insert("sasl.mechanism".into(), "SCRAM-SHA-512".into());
    k.properties.insert("sasl.username".into(), "msgx".into());
    k.properties.insert("sasl.password".into(), "secret".into());
    let ok = kafka_config_file(k.clone());
    let out = msgx(ok.path(), &["config", "check"]);
    assert_eq!(code(&out), 0, "{}", text(&out));

    k.properties.insert("sasl.mechanism".into(), "FOO".into());
    let bad = kafka_config_file(k.clone());
    let out = msgx(bad.path(), &["config", "check"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "msgx.kafka.properties: librdkafka refuses the producer, tail consumer, metadata client: \
             Unsupported SASL mechanism: FOO"
        ),
        "{}",
        text(&out)
    );

    k.properties
        .insert("sasl.mechanism".into(), "SCRAM-SHA-512".into());
    k.properties.insert(
        "ssl.ca.location".into(),
        dir.path().join("missing.pem").display().to_string(),
    );
    let missing = kafka_config_file(k);
    let out = msgx(missing.path(), &["config", "check"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("No such file or directory"),
        "{}",
        text(&out)
    );
}
