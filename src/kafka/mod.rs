//! The one place that turns `msgx.kafka` into librdkafka clients. The
//! delivery producer, the `msgx tail` consumer and the metadata
//! client (topic checks) get the same bootstrap servers, the same security
//! settings and the same reconnect back-off, so a setting proven with one
//! client holds for all of them.
//!
//! Security settings are librdkafka's own properties in
//! `msgx.kafka.properties` (`security.protocol`, `ssl.*`, `sasl.*`): they are
//! the names a Kafka administrator hands out and librdkafka documents, and
//! every one of them (OAUTHBEARER/OIDC, Kerberos, key passwords…) works
//! without msgx mapping it. librdkafka itself validates them when a client is
//! built, which [`check_clients`] does without connecting (`msgx config
//! check`). docs/production/kafka.md has the production example.
//!
//! [`KafkaContext`] keeps the last broker failure librdkafka reported, so a
//! TLS or SASL failure surfaces as that failure (e.g. "certificate verify
//! failed") instead of as a timeout.

pub mod producer;

use crate::config::{self, ConfigIssue};
use rdkafka::ClientConfig;
use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::metadata::Metadata;
use rdkafka::producer::{BaseProducer, DeliveryResult, Producer, ProducerContext};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The Kafka clients msgx creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The delivery jobs' idempotent producer.
    Producer,
    /// `msgx tail`: assigns partitions directly, commits nothing.
    Tail,
    /// Metadata only (topics and partitions): `msgx doctor`, checks.
    Metadata,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Producer, Role::Tail, Role::Metadata];

    /// For messages.
    pub fn name(self) -> &'static str {
        match self {
            Role::Producer => "producer",
            Role::Tail => "tail consumer",
            Role::Metadata => "metadata client",
        }
    }

    /// librdkafka `client.id` unless configured: brokers log it (and may
    /// apply ACLs and quotas by it).
    fn client_id(self) -> &'static str {
        match self {
            Role::Producer => "msgx-producer",
            Role::Tail => "msgx-tail",
            Role::Metadata => "msgx-metadata",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a Kafka client could not be built or could not reach the cluster.
#[derive(Debug, Clone, thiserror::Error)]
pub enum KafkaClientError {
    #[error(
        "msgx.kafka.properties may not set {0:?}: msgx sets it from its own key (delivery guarantees)"
    )]
    ReservedProperty(String),
    #[error("msgx.kafka.brokers {brokers:?}: {rule}")]
    Brokers { brokers: String, rule: String },
    #[error("cannot create the Kafka {role}: {reason}")]
    Create { role: Role, reason: String },
    /// TLS or SASL with a broker failed: retrying will not help until the
    /// configuration (CA, certificate, credentials) or the broker changes.
    #[error("Kafka TLS/SASL failure: {0}")]
    Security(String),
    #[error("no Kafka broker of {brokers} answered within {waited:?}{}", last_failure(.last))]
    Unreachable {
        brokers: String,
        waited: Duration,
        last: Option<String>,
    },
    #[error("Kafka: {0}")]
    Kafka(#[from] KafkaError),
}

fn last_failure(last: &Option<String>) -> String {
    last.as_ref()
        .map(|l| format!("; last broker error: {l}"))
        .unwrap_or_default()
}

/// The librdkafka settings of one client role, with `bootstrap.servers`.
pub fn client_config(cfg: &config::Kafka, role: Role) -> Result<ClientConfig, KafkaClientError> {
    check_brokers(&cfg.brokers)?;
    let mut cc = role_settings(cfg, role)?;
    cc.set("bootstrap.servers", &cfg.brokers);
    Ok(cc)
}

/// Everything but the bootstrap servers: what [`check_clients`] builds.
fn role_settings(cfg: &config::Kafka, role: Role) -> Result<ClientConfig, KafkaClientError> {
    let mut cc = ClientConfig::new();
    cc.set("client.id", role.client_id());
    for (k, v) in &cfg.properties {
        if crate::config::RESERVED_KAFKA_PROPERTIES.contains(&k.as_str()) {
            return Err(KafkaClientError::ReservedProperty(k.clone()));
        }
        cc.set(k, v);
    }
    let reconnect_max = millis(cfg.reconnect_backoff_max.std());
    cc.set("reconnect.backoff.max.ms", reconnect_max.to_string());
    if !cfg.properties.contains_key("reconnect.backoff.ms") {
        // librdkafka requires reconnect.backoff.ms ≤ reconnect.backoff.max.ms.
        cc.set("reconnect.backoff.ms", reconnect_max.min(100).to_string());
    }
    match role {
        Role::Producer => {
            cc.set("enable.idempotence", "true").set("acks", "all").set(
                "message.timeout.ms",
                millis(cfg.message_timeout.std()).to_string(),
            );
            if !LINGER_KEYS.iter().any(|k| cfg.properties.contains_key(*k)) {
                cc.set("linger.ms", PRODUCER_LINGER_MS);
            }
        }
        Role::Tail => {
            cc.set("group.id", "msgx-tail")
                .set("enable.auto.commit", "false")
                .set("enable.partition.eof", "true");
        }
        Role::Metadata => {
            // A producer-type handle would otherwise ask the broker to create
            // a topic it merely looks up.
            cc.set("allow.auto.create.topics", "false");
        }
    }
    Ok(cc)
}

/// The producer's `linger.ms` unless `msgx.kafka.properties` sets it (or its
/// alias `queue.buffering.max.ms`): latency first. A
/// delivery wave enqueues all its records at once and then waits for every
/// report before the next wave of the same FLIDs, so a linger only delays
/// each wave: librdkafka's 5 ms made a one-record wave take 7.6 ms, 0 takes
/// 1.6–2.5 ms (docs/delivery.md, "Producer settings"). The records of a wide
/// wave still share requests (they queue while the first is in flight).
/// `acks=all` and idempotence stay as they are.
pub const PRODUCER_LINGER_MS: &str = "0";

/// librdkafka's names of the linger setting.
const LINGER_KEYS: [&str; 2] = ["linger.ms", "queue.buffering.max.ms"];

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// `[proto://]host[:port]` entries, comma-separated (librdkafka's syntax);
/// librdkafka itself only logs a bad entry and keeps trying the rest.
fn check_brokers(brokers: &str) -> Result<(), KafkaClientError> {
    let fail = |rule: String| KafkaClientError::Brokers {
        brokers: brokers.to_string(),
        rule,
    };
    if brokers.trim().is_empty() {
        return Err(fail("no bootstrap server configured".into()));
    }
    for entry in brokers.split(',').map(str::trim) {
        let hostport = entry.split_once("://").map_or(entry, |(_, rest)| rest);
        let (host, port) = match hostport.rsplit_once(':') {
            // `[::1]:9092`, `host:9092`; a bare IPv6 address has no port.
            Some((h, p)) if !h.contains(':') || h.ends_with(']') => (h, Some(p)),
            _ => (hostport, None),
        };
        if host.is_empty() {
            return Err(fail(format!("entry {entry:?} has no host")));
        }
        if let Some(p) = port
            && !p.parse::<u16>().is_ok_and(|p| p > 0)
        {
            return Err(fail(format!("entry {entry:?}: {p:?} is not a port")));
        }
    }
    Ok(())
}

/// Logs librdkafka's messages and errors through `tracing` (naming the
/// client), and keeps the last broker failure so that callers can say what
/// went wrong rather than only that it timed out. Clones share the record.
#[derive(Clone)]
pub struct KafkaContext {
    role: Role,
    last_failure: Arc<Mutex<Option<String>>>,
    /// Built by [`check_clients`]: the missing bootstrap servers are intended.
    check: bool,
}

impl KafkaContext {
    pub fn new(role: Role) -> Self {
        Self {
            role,
            last_failure: Arc::new(Mutex::new(None)),
            check: false,
        }
    }

    /// The last broker failure librdkafka reported (connect, TLS, SASL…).
    pub fn last_failure(&self) -> Option<String> {
        self.last_failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The last failure, if it was a TLS or SASL failure.
    pub fn security_failure(&self) -> Option<String> {
        self.last_failure().filter(|f| is_security_failure(f))
    }

    fn record(&self, failure: &str) {
        *self.last_failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(failure.to_string());
    }
}

/// librdkafka's wording for TLS and SASL failures ("SSL handshake failed",
/// "SASL authentication error", "certificate verify failed"…).
fn is_security_failure(text: &str) -> bool {
    ["SSL", "TLS", "SASL", "certificate", "uthentication"]
        .iter()
        .any(|w| text.contains(w))
}

impl ClientContext for KafkaContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, message: &str) {
        let severe = matches!(
            level,
            RDKafkaLogLevel::Emerg
                | RDKafkaLogLevel::Alert
                | RDKafkaLogLevel::Critical
                | RDKafkaLogLevel::Error
        );
        // FAIL: a broker connection failed (connect refused, TLS handshake,
        // SASL), logged from the broker thread whether or not anyone polls.
        if fac == "FAIL" || (severe && is_security_failure(message)) {
            self.record(message);
        }
        if self.check && fac == "CONFWARN" && message.contains("bootstrap.servers") {
            return;
        }
        let client = self.role.name();
        // One property map serves every client: a producer property on the
        // consumer (or the reverse) is expected, not worth a warning.
        let shared = fac == "CONFWARN" && message.contains("will be ignored by this");
        match level {
            _ if shared => tracing::debug!(client, facility = fac, "librdkafka: {message}"),
            _ if severe => tracing::error!(client, facility = fac, "librdkafka: {message}"),
            RDKafkaLogLevel::Warning => {
                tracing::warn!(client, facility = fac, "librdkafka: {message}")
            }
            RDKafkaLogLevel::Debug => {
                tracing::debug!(client, facility = fac, "librdkafka: {message}")
            }
            _ => tracing::info!(client, facility = fac, "librdkafka: {message}"),
        }
    }

    fn error(&self, error: KafkaError, reason: &str) {
        // `msgx tail` asks for end-of-partition notices; they are expected.
        if error.rdkafka_error_code() == Some(RDKafkaErrorCode::PartitionEOF) {
            tracing::debug!(client = self.role.name(), reason, "End of partition");
            return;
        }
        if matches!(
            error.rdkafka_error_code(),
            Some(
                RDKafkaErrorCode::SSL
                    | RDKafkaErrorCode::Authentication
                    | RDKafkaErrorCode::SaslAuthenticationFailed
            )
        ) {
            self.record(reason);
        }
        tracing::warn!(client = self.role.name(), error = %error, reason, "Kafka client error");
    }
}

impl ConsumerContext for KafkaContext {}

/// For the producer-type handles that never produce (checks, metadata); the
/// delivery producer is a `FutureProducer`, which reports deliveries itself.
impl ProducerContext for KafkaContext {
    type DeliveryOpaque = ();
    fn delivery(&self, _: &DeliveryResult<'_>, _: ()) {}
}

/// Builds every client `cfg` describes without connecting (no bootstrap
/// servers, no Kerberos `kinit`), so librdkafka refuses what it cannot do:
/// an unknown property or value, an unsupported SASL mechanism, a CA,
/// certificate or key file it cannot load, a feature missing from the build.
/// One issue per distinct refusal, naming the clients it applies to.
pub fn check_clients(cfg: &config::Kafka) -> Result<(), Vec<ConfigIssue>> {
    let mut issues = Vec::new();
    if let Err(e) = check_brokers(&cfg.brokers) {
        issues.push(ConfigIssue {
            key: "msgx.kafka.brokers".into(),
            rule: e.to_string(),
        });
    }
    let files = unreadable_files(cfg);
    let any_file_issue = !files.is_empty();
    issues.extend(files);
    if any_file_issue {
        // librdkafka would only repeat it, in shorter words.
        return Err(issues);
    }
    let mut refusals: Vec<(String, Vec<Role>)> = Vec::new();
    for role in Role::ALL {
        if let Err(reason) = build_offline(cfg, role) {
            match refusals.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, roles)) => roles.push(role),
                None => refusals.push((reason, vec![role])),
            }
        }
    }
    for (reason, roles) in refusals {
        let names: Vec<&str> = roles.iter().map(|r| r.name()).collect();
        issues.push(ConfigIssue {
            key: "msgx.kafka.properties".into(),
            rule: format!("librdkafka refuses the {}: {reason}", names.join(", ")),
        });
    }
    if issues.is_empty() {
        Ok(())
    } else {
        Err(issues)
    }
}

/// Properties that name a file librdkafka loads when the client is built.
const FILE_PROPERTIES: &[&str] = &[
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.crl.location",
    "ssl.keystore.location",
    "sasl.kerberos.keytab",
    "https.ca.location",
];

/// A file property whose file msgx cannot read, with the OS's reason
/// (librdkafka reports only an OpenSSL error code for a missing CA file).
fn unreadable_files(cfg: &config::Kafka) -> Vec<ConfigIssue> {
    let mut out = Vec::new();
    for key in FILE_PROPERTIES {
        let Some(path) = cfg.properties.get(*key) else {
            continue;
        };
        // `probe`: librdkafka searches the usual system CA locations.
        if *key == "ssl.ca.location" && path == "probe" {
            continue;
        }
        let readable = std::fs::metadata(path).and_then(|m| {
            if m.is_dir() {
                std::fs::read_dir(path).map(drop)
            } else {
                std::fs::File::open(path).map(drop)
            }
        });
        if let Err(e) = readable {
            out.push(ConfigIssue {
                key: "msgx.kafka.properties".into(),
                rule: format!("{key} = {path:?}: cannot read it: {e}"),
            });
        }
    }
    out
}

/// Where a checked OIDC client would fetch its token: nothing listens there.
const CHECK_TOKEN_URL: &str = "http://127.0.0.1:1/msgx-config-check";

fn build_offline(cfg: &config::Kafka, role: Role) -> Result<(), String> {
    let mut cc = role_settings(cfg, role).map_err(|e| e.to_string())?;
    let gssapi = ["sasl.mechanism", "sasl.mechanisms"]
        .iter()
        .any(|k| cfg.properties.get(*k).is_some_and(|m| m.trim() == "GSSAPI"));
    if gssapi {
        // kinit would contact the KDC; building the client is the check.
        cc.set("sasl.kerberos.min.time.before.relogin", "0");
    }
    if cfg
        .properties
        .get("sasl.oauthbearer.method")
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("oidc"))
    {
        // The built client fetches a token at once: point it at a closed
        // loopback port, so the check never contacts the identity provider.
        cc.set("sasl.oauthbearer.token.endpoint.url", CHECK_TOKEN_URL)
            .set("sasl.oauthbearer.metadata.authentication.type", "none");
    }
    let ctx = KafkaContext {
        check: true,
        ..KafkaContext::new(role)
    };
    // One poll hands librdkafka's configuration warnings to the log.
    let created = match role {
        Role::Producer | Role::Metadata => cc
            .create_with_context::<_, BaseProducer<KafkaContext>>(ctx)
            .map(|p| {
                p.poll(Duration::ZERO);
            }),
        Role::Tail => cc
            .create_with_context::<_, BaseConsumer<KafkaContext>>(ctx)
            .map(|c| {
                let _ = c.poll(Duration::ZERO);
            }),
    };
    created.map_err(|e| creation_reason(&e))
}

/// librdkafka's own words for a refused configuration.
fn creation_reason(e: &KafkaError) -> String {
    match e {
        KafkaError::ClientCreation(reason) | KafkaError::ClientConfig(_, reason, _, _) => {
            reason.clone()
        }
        other => other.to_string(),
    }
}

/// A client-creation error for `role`.
pub fn create_error(role: Role, e: &KafkaError) -> KafkaClientError {
    KafkaClientError::Create {
        role,
        reason: creation_reason(e),
    }
}

/// How long one metadata request may wait before msgx looks at what the
/// client reported meanwhile: a TLS/SASL failure ends the wait at once.
const METADATA_SLICE: Duration = Duration::from_millis(500);

/// A metadata-only client (`msgx doctor`, `msgx tail`'s partition lookup):
/// the same settings as every other client, polled between requests so that
/// librdkafka's broker failures reach its [`KafkaContext`] (rdkafka queues
/// logs until the client is polled).
pub struct MetadataClient {
    client: BaseProducer<KafkaContext>,
    context: KafkaContext,
    brokers: String,
}

impl MetadataClient {
    /// Builds the client (connects on the first request).
    pub fn create(cfg: &config::Kafka) -> Result<Self, KafkaClientError> {
        let context = KafkaContext::new(Role::Metadata);
        let client = client_config(cfg, Role::Metadata)?
            .create_with_context(context.clone())
            .map_err(|e| create_error(Role::Metadata, &e))?;
        Ok(Self {
            client,
            context,
            brokers: cfg.brokers.clone(),
        })
    }

    /// Metadata of `topic` (all topics: `None`) within `timeout`. Blocking.
    /// A TLS/SASL failure is [`KafkaClientError::Security`] as soon as the
    /// client reports it; no answer at all is [`KafkaClientError::Unreachable`]
    /// with the last broker failure.
    pub fn fetch(
        &self,
        topic: Option<&str>,
        timeout: Duration,
    ) -> Result<Metadata, KafkaClientError> {
        let slices = timeout
            .as_millis()
            .div_ceil(METADATA_SLICE.as_millis())
            .max(1);
        for _ in 0..slices {
            match self
                .client
                .client()
                .fetch_metadata(topic, METADATA_SLICE.min(timeout))
            {
                Ok(m) => return Ok(m),
                Err(KafkaError::MetadataFetch(
                    RDKafkaErrorCode::OperationTimedOut
                    | RDKafkaErrorCode::RequestTimedOut
                    | RDKafkaErrorCode::BrokerTransportFailure
                    | RDKafkaErrorCode::AllBrokersDown
                    | RDKafkaErrorCode::SSL
                    | RDKafkaErrorCode::Authentication,
                )) => {
                    self.client.poll(Duration::ZERO);
                    if let Some(failure) = self.context.security_failure() {
                        return Err(KafkaClientError::Security(failure));
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.client.poll(Duration::ZERO);
        Err(KafkaClientError::Unreachable {
            brokers: self.brokers.clone(),
            waited: timeout,
            last: self.context.last_failure(),
        })
    }

    /// The partition IDs of `topic`; `None` when the cluster does not know it.
    pub fn partitions(
        &self,
        topic: &str,
        timeout: Duration,
    ) -> Result<Option<Vec<i32>>, KafkaClientError> {
        let md = self.fetch(Some(topic), timeout)?;
        Ok(md
            .topics()
            .iter()
            .find(|t| t.name() == topic)
            .filter(|t| t.error().is_none() && !t.partitions().is_empty())
            .map(|t| t.partitions().iter().map(|p| p.id()).collect()))
    }
}

/// Partitions of one configured topic as the cluster reports them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TopicPartitions {
    pub topic: String,
    /// `None`: the cluster does not know the topic.
    pub partitions: Option<usize>,
}

/// Connects with the metadata client and reports `msgx.kafka.topic-msg`,
/// `topic-schd`, `topic-season` and `topic-audit` (for `msgx doctor`). Blocking: call it from
/// `spawn_blocking` in async code.
pub fn configured_topics(cfg: &config::Kafka) -> Result<Vec<TopicPartitions>, KafkaClientError> {
    let client = MetadataClient::create(cfg)?;
    let mut out = Vec::new();
    for topic in [
        &cfg.topic_msg,
        &cfg.topic_schd,
        &cfg.topic_season,
        &cfg.topic_audit,
    ] {
        let partitions = client.partitions(topic, cfg.call_timeout.std())?;
        out.push(TopicPartitions {
            topic: topic.clone(),
            partitions: partitions.map(|p| p.len()),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(props: &[(&str, &str)]) -> config::Kafka {
        let mut cfg = config::Kafka::default();
        for (k, v) in props {
            cfg.properties.insert(k.to_string(), v.to_string());
        }
        cfg
    }

    /// A CA certificate file librdkafka can load.
    fn ca_file() -> tempfile::NamedTempFile {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = params.self_signed(&key).expect("self-signed CA");
        let file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(file.path(), cert.pem()).expect("write CA");
        file
    }

    fn rules(r: Result<(), Vec<ConfigIssue>>) -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .into_iter()
            .map(|i| i.to_string())
            .collect()
    }

    #[test]
    fn scram_over_sasl_ssl_with_a_private_ca_builds() {
        // The production example (docs/production/kafka.md); the old build
        // refused it ("Current build options: PLAIN").
        let ca = ca_file();
        let ca = ca.path().to_str().expect("utf-8 path");
        for mechanism in ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"] {
            let cfg = with(&[
                ("security.protocol", "SASL_SSL"),
                ("sasl.mechanism", mechanism),
                ("sasl.username", "msgx"),
                ("sasl.password", "secret"),
                ("ssl.ca.location", ca),
                ("ssl.endpoint.identification.algorithm", "https"),
            ]);
            assert_eq!(check_clients(&cfg), Ok(()), "{mechanism}");
        }
    }

    #[test]
    fn gssapi_and_oauthbearer_build() {
        let gssapi = with(&[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "GSSAPI"),
            ("sasl.kerberos.service.name", "kafka"),
            ("sasl.kerberos.principal", "msgx@EXAMPLE.ORG"),
        ]);
        assert_eq!(check_clients(&gssapi), Ok(()));
        let oidc = with(&[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "OAUTHBEARER"),
            ("sasl.oauthbearer.method", "oidc"),
            ("sasl.oauthbearer.client.id", "msgx"),
            ("sasl.oauthbearer.client.secret", "secret"),
            (
                "sasl.oauthbearer.token.endpoint.url",
                "https://127.0.0.1:1/token",
            ),
        ]);
        assert_eq!(check_clients(&oidc), Ok(()));
    }

    #[test]
    fn an_unsupported_mechanism_is_refused_once_for_every_client() {
        let cfg = with(&[("security.protocol", "SASL_SSL"), ("sasl.mechanism", "FOO")]);
        assert_eq!(
            rules(check_clients(&cfg)),
            [
                "msgx.kafka.properties: librdkafka refuses the producer, tail consumer, \
              metadata client: Unsupported SASL mechanism: FOO"
            ]
        );
    }

    #[test]
    fn unreadable_or_invalid_files_and_unknown_properties_are_refused() {
        let cfg = with(&[
            ("security.protocol", "SSL"),
            ("ssl.ca.location", "/nonexistent/ca.pem"),
        ]);
        assert_eq!(
            rules(check_clients(&cfg)),
            [
                "msgx.kafka.properties: ssl.ca.location = \"/nonexistent/ca.pem\": \
              cannot read it: No such file or directory (os error 2)"
            ]
        );
        let garbage = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(garbage.path(), "not a certificate").expect("write");
        let cfg = with(&[
            ("security.protocol", "SSL"),
            ("ssl.ca.location", garbage.path().to_str().expect("utf-8")),
        ]);
        let r = rules(check_clients(&cfg));
        assert!(
            r.len() == 1 && r[0].contains("ssl.ca.location failed"),
            "{r:?}"
        );
        let r = rules(check_clients(&with(&[
            ("sasl.mechanisms", "PLAIN"),
            ("no.such", "1"),
        ])));
        assert!(
            r.len() == 1 && r[0].contains("No such configuration property: \"no.such\""),
            "{r:?}"
        );
        // A value librdkafka cannot parse.
        let r = rules(check_clients(&with(&[("security.protocol", "TLS")])));
        assert!(r.len() == 1 && r[0].contains("security.protocol"), "{r:?}");
    }

    #[test]
    fn broker_lists_are_checked() {
        for ok in ["k:9092", "a:1, b:2", "SSL://k:9093", "[::1]:9092", "k"] {
            assert!(check_brokers(ok).is_ok(), "{ok}");
        }
        for bad in ["", " ", "k:", "k:abc", ":9092", "k:0", "a:1,,b:2"] {
            assert!(check_brokers(bad).is_err(), "{bad:?}");
        }
        let cfg = config::Kafka {
            brokers: "k:x".into(),
            ..Default::default()
        };
        assert_eq!(
            rules(check_clients(&cfg)),
            ["msgx.kafka.brokers: msgx.kafka.brokers \"k:x\": entry \"k:x\": \"x\" is not a port"]
        );
    }

    #[test]
    fn every_client_gets_the_same_security_settings_and_its_own_role() {
        let mut cfg = with(&[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
        ]);
        cfg.brokers = "k1:9093,k2:9093".into();
        for role in Role::ALL {
            let cc = client_config(&cfg, role).expect("config");
            assert_eq!(cc.get("bootstrap.servers"), Some("k1:9093,k2:9093"));
            assert_eq!(cc.get("security.protocol"), Some("SASL_SSL"));
            assert_eq!(cc.get("sasl.mechanism"), Some("SCRAM-SHA-512"));
            assert_eq!(cc.get("reconnect.backoff.max.ms"), Some("1000"));
            assert_eq!(cc.get("client.id"), Some(role.client_id()));
        }
        let p = client_config(&cfg, Role::Producer).expect("producer");
        assert_eq!(p.get("enable.idempotence"), Some("true"));
        assert_eq!(p.get("acks"), Some("all"));
        assert_eq!(p.get("message.timeout.ms"), Some("300000"));
        assert_eq!(p.get("linger.ms"), Some(PRODUCER_LINGER_MS));
        let t = client_config(&cfg, Role::Tail).expect("tail");
        assert_eq!(t.get("enable.auto.commit"), Some("false"));
        assert_eq!(t.get("acks"), None);
        assert_eq!(t.get("linger.ms"), None);
        let m = client_config(&cfg, Role::Metadata).expect("metadata");
        assert_eq!(m.get("allow.auto.create.topics"), Some("false"));
        // A configured client.id wins (brokers may key ACLs on it).
        cfg.properties
            .insert("client.id".into(), "aodb-msgx".into());
        let p = client_config(&cfg, Role::Producer).expect("producer");
        assert_eq!(p.get("client.id"), Some("aodb-msgx"));
        cfg.properties.insert("acks".into(), "1".into());
        for role in Role::ALL {
            assert!(matches!(
                client_config(&cfg, role),
                Err(KafkaClientError::ReservedProperty(k)) if k == "acks"
            ));
        }
    }

    #[test]
    fn the_operator_may_set_the_linger_under_either_name() {
        for key in LINGER_KEYS {
            let p = client_config(&with(&[(key, "20")]), Role::Producer).expect("producer");
            assert_eq!(p.get(key), Some("20"), "{key}");
            let other = LINGER_KEYS.iter().find(|k| **k != key).copied();
            assert_eq!(
                other.and_then(|k| p.get(k)),
                None,
                "{key}: ours not set too"
            );
        }
    }

    #[test]
    fn secrets_come_from_the_environment() {
        let mut cfg = with(&[("sasl.password", "from-file")]);
        let env = |k: &str| match k {
            "MSGX_KAFKA_SASL_PASSWORD" => Some("from-env".to_string()),
            "MSGX_KAFKA_SSL_KEY_PASSWORD" => Some(String::new()),
            _ => None,
        };
        cfg.apply_env(&env);
        assert_eq!(
            cfg.properties.get("sasl.password").map(String::as_str),
            Some("from-env")
        );
        assert_eq!(cfg.properties.get("ssl.key.password"), None);
    }

    #[test]
    fn tls_and_sasl_failures_are_told_apart_from_other_failures() {
        for security in [
            "ssl://localhost:9093/bootstrap: SSL handshake failed: error:0A000086:SSL routines::\
             certificate verify failed: broker certificate could not be verified",
            "sasl_ssl://k:9093/1: SASL authentication error: Authentication failed during \
             authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
        ] {
            assert!(is_security_failure(security), "{security}");
        }
        assert!(!is_security_failure(
            "localhost:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: Connection refused"
        ));
    }
}
