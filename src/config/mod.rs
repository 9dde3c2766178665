//! Configuration: one TOML file, every parameter under its documented key
//! (`msgx.pipeline.claim-batch`, …), environment overrides for connection
//! secrets, and a startup self-check (design §9.1, §9.3).
//!
//! Resolution order: `--config FILE`, else `MSGX_CONFIG`, else
//! `config/msgx.toml` when it exists, else built-in defaults. Then
//! `MSGX_DATABASE_URL`, `MSGX_MAILBOX_URL` and `MSGX_KAFKA_BROKERS` replace
//! the file's connection settings. Every field is documented in
//! `config/msgx.toml` and `docs/configuration.md`.
//!
//! Every default is a named constant in an `impl` beside its struct
//! (`Pipeline::DEFAULT_CLAIM_BATCH`, …), and the `Default` impls use only
//! those. A key that defaults to unset (`None`), to an empty list or map, or
//! that has no default (the connection URLs) has no constant.

mod console_access;
mod console_live;
pub mod docs;
mod duration;
mod mailbox_tls;
mod poll_interval;
mod postgres_url;
mod validate;

pub use console_access::{
    ConsoleOidc, ConsoleRights, OIDC_CALLBACK_PATH, OIDC_CLIENT_SECRET_ENV, ROLE_NAMES, Right,
    oidc_issues,
};
pub use console_live::{ConsoleLive, live_issues};
pub use duration::Dur;
pub use mailbox_tls::{mailbox_tls_issues, url_params};
pub use poll_interval::PollInterval;
pub use postgres_url::{POSTGRES_URL_PARAMETERS, unknown_postgres_url_parameters};
pub use validate::ConfigIssue;

/// librdkafka properties msgx sets from its own keys; `msgx.kafka.properties`
/// may not override them (they carry the delivery guarantees).
pub const RESERVED_KAFKA_PROPERTIES: &[&str] = &[
    "bootstrap.servers",
    "metadata.broker.list",
    "enable.idempotence",
    "acks",
    "request.required.acks",
    "message.timeout.ms",
    "delivery.timeout.ms",
    "reconnect.backoff.max.ms",
];

/// The environment variable holding the compat endpoint's bearer token
/// (wins over `msgx.http.compat-token-file`).
pub const COMPAT_TOKEN_ENV: &str = "MSGX_COMPAT_TOKEN";

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a configuration could not be used. Exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path} is not valid: {message}")]
    Parse { path: String, message: String },
    #[error("config is invalid:\n{}", .0.iter().map(|i| format!("  - {i}")).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<ConfigIssue>),
}

/// The whole file: everything lives under `[msgx]`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub msgx: Msgx,
}

/// `[msgx]`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Msgx {
    pub postgres: Postgres,
    pub mailbox: Mailbox,
    pub kafka: Kafka,
    pub pipeline: Pipeline,
    pub dispatch: Dispatch,
    pub schd: Schd,
    pub season: Season,
    pub identity: Identity,
    /// TYPE, TYPE-STYP or TYPE-* rules, case-insensitive: a matching message is
    /// SKIPPED as `ignored:<rule>` after decoding (design §2).
    pub ignore: Vec<String>,
    pub airport: Airport,
    pub archive: Archive,
    pub snaplog: Snaplog,
    pub flight_history: FlightHistory,
    pub request: Request,
    pub job_run: JobRun,
    pub daemon: Daemon,
    pub log: Log,
    pub telemetry: Telemetry,
    pub http: Http,
    pub console: Console,
    pub acris: Acris,
}

impl Msgx {
    /// `ignore`: the predecessor's unprocessed types.
    pub const DEFAULT_IGNORE: &[&str] = &["LDM", "REGN", "RSTA", "EROR"];
}

impl Default for Msgx {
    fn default() -> Self {
        Self {
            postgres: Postgres::default(),
            mailbox: Mailbox::default(),
            kafka: Kafka::default(),
            pipeline: Pipeline::default(),
            dispatch: Dispatch::default(),
            schd: Schd::default(),
            season: Season::default(),
            identity: Identity::default(),
            ignore: strings(Self::DEFAULT_IGNORE),
            airport: Airport::default(),
            archive: Archive::default(),
            snaplog: Snaplog::default(),
            flight_history: FlightHistory::default(),
            request: Request::default(),
            job_run: JobRun::default(),
            daemon: Daemon::default(),
            log: Log::default(),
            telemetry: Telemetry::default(),
            http: Http::default(),
            console: Console::default(),
            acris: Acris::default(),
        }
    }
}

/// `[msgx.postgres]`: msgx's own database (the state authority).
#[derive(Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Postgres {
    /// msgx's own database, as a URL (TLS as libpq's URL parameters:
    /// docs/production/databases.md); env `MSGX_DATABASE_URL` replaces it. No
    /// default (config/msgx.toml sets the local one): a command that needs it
    /// refuses (exit 2) while it is unset, and a writing command names it first
    /// (docs/operations.md §7).
    pub url: String,
    /// Size of the jobs' pool; the instance lock uses its own session.
    pub max_connections: u32,
    /// How long to wait for a pooled connection.
    pub acquire_timeout: Dur,
    /// `statement_timeout` of every pooled session: the server cancels a longer
    /// statement and the job run is FAILED naming this key; `msgx migrate` runs
    /// without it.
    ///
    /// A hung query fails its run instead of wedging it; a migration may rewrite
    /// a large table, so its own session lifts the bound.
    pub statement_timeout: Dur,
    /// `lock_timeout` of every pooled session: a statement waiting longer for a
    /// lock fails (55P03) and the run is FAILED naming this key.
    ///
    /// Nothing waits forever behind a stuck session. The lifecycle gate sets its
    /// own wait.
    pub lock_timeout: Dur,
    /// `idle_in_transaction_session_timeout` of every pooled session: the server
    /// ends a session idle inside an open transaction this long, releasing its
    /// locks. Longer than `msgx.mailbox.timeout`; not set on the instance-lock
    /// session.
    ///
    /// The backfill scan holds its gate transaction across one mailbox call. The
    /// instance-lock session is idle outside any transaction for the daemon's
    /// whole life.
    pub idle_in_transaction_timeout: Dur,
    /// With a host list or `target_session_attrs` in the URL: how long a
    /// pooled session's server may go unchecked; the next session taken from
    /// the pool after that (or after a connection or read-only error) is
    /// re-checked, and one on a server now read-only or in recovery is
    /// discarded and the host chosen again.
    ///
    /// Bounds how long msgx keeps using a demoted primary that still answers;
    /// the check is one query, so it runs at most this often, never on every
    /// acquire.
    pub recheck_interval: Dur,
    /// The pump analyzes a table of msgx's schema once it holds twice the
    /// rows PostgreSQL's statistics last counted (and at least 1,000), at
    /// most once a second, so cached plans follow a young table's growth;
    /// false leaves statistics to autovacuum alone.
    ///
    /// Needs the tables' owner (or a superuser) as the msgx role; others are
    /// skipped. docs/configuration.md "Planning".
    pub analyze_grown_tables: bool,
}

impl Postgres {
    pub const DEFAULT_MAX_CONNECTIONS: u32 = 8;
    pub const DEFAULT_ACQUIRE_TIMEOUT: Dur = Dur::secs(5);
    pub const DEFAULT_STATEMENT_TIMEOUT: Dur = Dur::secs(60);
    pub const DEFAULT_LOCK_TIMEOUT: Dur = Dur::secs(10);
    pub const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT: Dur = Dur::secs(60);
    pub const DEFAULT_RECHECK_INTERVAL: Dur = Dur::secs(10);
    pub const DEFAULT_ANALYZE_GROWN_TABLES: bool = true;
}

impl Default for Postgres {
    fn default() -> Self {
        Self {
            url: String::new(),
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            acquire_timeout: Self::DEFAULT_ACQUIRE_TIMEOUT,
            statement_timeout: Self::DEFAULT_STATEMENT_TIMEOUT,
            lock_timeout: Self::DEFAULT_LOCK_TIMEOUT,
            idle_in_transaction_timeout: Self::DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT,
            recheck_interval: Self::DEFAULT_RECHECK_INTERVAL,
            analyze_grown_tables: Self::DEFAULT_ANALYZE_GROWN_TABLES,
        }
    }
}

/// `[msgx.mailbox]`: the shared MySQL mailbox (CMINMSGS / COUTMSGS).
#[derive(Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Mailbox {
    /// The shared mailbox, as a `mysql://` URL; env `MSGX_MAILBOX_URL` replaces
    /// it. No default, like `msgx.postgres.url`; TLS is set in
    /// `[msgx.mailbox.tls]`, never in the URL.
    pub url: String,
    /// Inbound table as the predecessor's DDL spells it, matched
    /// case-insensitively against the server's tables (`CMINMSGS` works too); a
    /// missing table or column stops the daemon at start.
    pub inbox_table: String,
    /// Outbound table, matched the same way.
    pub outbox_table: String,
    /// The processing mark backfill writes (sis-format §6.1).
    pub processed_column: String,
    /// R_keep: the mailbox owner's raw retention, used only to validate:
    /// `msgx.pipeline.backfill-deadline` ≤ R_keep ≤ `msgx.archive.dedup-memory`
    /// and `hst-retention` (design §9.3).
    pub raw_retention: Dur,
    /// true: never write to the mailbox (no processing marks, no COUTMSGS rows).
    pub shadow: bool,
    /// Client-side bound on every mailbox call, connecting included.
    pub timeout: Dur,
    /// Server-side bound on every mailbox statement (MariaDB
    /// `max_statement_time`; MySQL `max_execution_time` for reads;
    /// `lock_wait_timeout` and `innodb_lock_wait_timeout`, whole seconds, for
    /// lock waits); shorter than `timeout`.
    ///
    /// The server stops the statement itself, so nothing keeps running on the
    /// shared mailbox after msgx gave up, and its error arrives before the
    /// client's.
    pub statement_timeout: Dur,
    /// `[msgx.mailbox.tls]`.
    pub tls: MailboxTls,
}

impl Mailbox {
    pub const DEFAULT_INBOX_TABLE: &str = "cminmsgs";
    pub const DEFAULT_OUTBOX_TABLE: &str = "coutmsgs";
    pub const DEFAULT_PROCESSED_COLUMN: &str = "CMINMSGS_DATE_PROCESSED";
    pub const DEFAULT_RAW_RETENTION: Dur = Dur::days(7);
    pub const DEFAULT_SHADOW: bool = false;
    pub const DEFAULT_TIMEOUT: Dur = Dur::secs(10);
    pub const DEFAULT_STATEMENT_TIMEOUT: Dur = Dur::secs(5);
}

impl Default for Mailbox {
    fn default() -> Self {
        Self {
            url: String::new(),
            inbox_table: Self::DEFAULT_INBOX_TABLE.into(),
            outbox_table: Self::DEFAULT_OUTBOX_TABLE.into(),
            processed_column: Self::DEFAULT_PROCESSED_COLUMN.into(),
            raw_retention: Self::DEFAULT_RAW_RETENTION,
            shadow: Self::DEFAULT_SHADOW,
            timeout: Self::DEFAULT_TIMEOUT,
            statement_timeout: Self::DEFAULT_STATEMENT_TIMEOUT,
            tls: MailboxTls::default(),
        }
    }
}

/// `msgx.mailbox.tls.mode`, named like MySQL's `--ssl-mode`. There is no
/// `preferred`: mysql_async cannot fall back to plaintext, and a silent
/// fallback is what TLS to the mailbox must rule out.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum MailboxTlsMode {
    /// Plaintext. The default, so a config without this table keeps working
    /// as before; `preferred` (MySQL's client default) is not offered, see
    /// above. Production: verify-identity.
    #[default]
    #[serde(alias = "DISABLED")]
    Disabled,
    /// Encrypted; the server's certificate is not checked.
    #[serde(alias = "REQUIRED")]
    Required,
    /// Encrypted; the certificate must chain to `ca-file` (or the built-in
    /// roots). See docs/production/databases.md on the host name.
    #[serde(alias = "VERIFY_CA")]
    VerifyCa,
    /// As verify-ca, and the certificate must name the URL's host (or
    /// `server-name`). Use this in production.
    #[serde(alias = "VERIFY_IDENTITY")]
    VerifyIdentity,
}

/// `[msgx.mailbox.tls]`: TLS to the mailbox server
/// (docs/production/databases.md). Turned into mysql_async's options by
/// `store::mailbox::tls`; rules checked at load (`validate`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct MailboxTls {
    /// TLS to the mailbox server, named like MySQL's `--ssl-mode`; there is no
    /// `preferred`, so never a plaintext fallback. Production: `verify-identity`
    /// (docs/production/databases.md).
    pub mode: MailboxTlsMode,
    /// PEM CA bundle for `verify-ca` and `verify-identity`; when set, only it is
    /// trusted. Unset: the built-in (Mozilla) roots.
    pub ca_file: Option<PathBuf>,
    /// PEM client certificate (chain), for a server user created `REQUIRE X509`;
    /// set with `key-file`.
    pub cert_file: Option<PathBuf>,
    /// PEM private key of `cert-file`.
    pub key_file: Option<PathBuf>,
    /// The name checked in the server's certificate instead of the URL's host
    /// (through a tunnel, or connecting by IP address).
    pub server_name: Option<String>,
}

/// `[msgx.kafka]`.
#[derive(Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Kafka {
    /// Bootstrap servers; env `MSGX_KAFKA_BROKERS` replaces it.
    pub brokers: String,
    /// Topic of the change notifications (design §8.1). Each topic is a legal
    /// Kafka name (letters, digits, `.`, `_`, `-`), and the four are different.
    pub topic_msg: String,
    /// Topic of the latest full state per flight, keyed by FLID and compacted
    /// (design §8.2). Never the season topic: in one compacted topic, the keys
    /// of one would compact the other's records away.
    pub topic_schd: String,
    /// Topic of the seasonal schedules, one record per series keyed by series
    /// key, compacted (docs/season.md).
    pub topic_season: String,
    /// Topic of the audit trail: one CloudEvent per applied operator action,
    /// keyed by the acting user, delivered by `dispatch-msg`; create it with
    /// `cleanup.policy=delete` (not compacted; docs/events.md "KAFKA:audit").
    pub topic_audit: String,
    /// librdkafka `message.timeout.ms`: how long a send may take in total.
    pub message_timeout: Dur,
    /// Bound on each blocking Kafka call (the delivery-report wait beyond
    /// `message-timeout`, metadata).
    pub call_timeout: Dur,
    /// librdkafka `reconnect.backoff.max.ms`: low values make recovery after a
    /// broker outage fast (1s recovers in about a second; librdkafka's 10 s
    /// default in ten or more).
    pub reconnect_backoff_max: Dur,
    /// librdkafka properties for every Kafka client msgx builds (producer,
    /// `msgx tail`, metadata): security and tuning, by librdkafka's own names
    /// (docs/production/kafka.md). They may not override bootstrap.servers,
    /// enable.idempotence, acks, the message and delivery timeouts or
    /// reconnect.backoff.max.ms; `msgx config check` builds each client with
    /// them.
    pub properties: BTreeMap<String, String>,
}

impl Default for Kafka {
    fn default() -> Self {
        Self {
            brokers: Self::DEFAULT_BROKERS.into(),
            topic_msg: Self::DEFAULT_TOPIC_MSG.into(),
            topic_schd: Self::DEFAULT_TOPIC_SCHD.into(),
            topic_season: Self::DEFAULT_TOPIC_SEASON.into(),
            topic_audit: Self::DEFAULT_TOPIC_AUDIT.into(),
            message_timeout: Self::DEFAULT_MESSAGE_TIMEOUT,
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
            reconnect_backoff_max: Self::DEFAULT_RECONNECT_BACKOFF_MAX,
            properties: BTreeMap::new(),
        }
    }
}

impl Kafka {
    pub const DEFAULT_BROKERS: &str = "127.0.0.1:9092";
    pub const DEFAULT_TOPIC_MSG: &str = "msg";
    pub const DEFAULT_TOPIC_SCHD: &str = "schd";
    pub const DEFAULT_TOPIC_SEASON: &str = "season";
    pub const DEFAULT_TOPIC_AUDIT: &str = "audit";
    pub const DEFAULT_MESSAGE_TIMEOUT: Dur = Dur::mins(5);
    pub const DEFAULT_CALL_TIMEOUT: Dur = Dur::secs(30);
    pub const DEFAULT_RECONNECT_BACKOFF_MAX: Dur = Dur::secs(1);

    /// Environment variables that set a secret librdkafka property, so the
    /// secret can live in the unit's env file instead of the TOML
    /// (docs/production/kafka.md).
    pub const SECRET_ENV: &[(&str, &str)] = &[
        ("MSGX_KAFKA_SASL_PASSWORD", "sasl.password"),
        ("MSGX_KAFKA_SSL_KEY_PASSWORD", "ssl.key.password"),
        (
            "MSGX_KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET",
            "sasl.oauthbearer.client.secret",
        ),
    ];

    /// Applies [`Kafka::SECRET_ENV`]: a non-empty variable replaces the property.
    pub fn apply_env(&mut self, get: &impl Fn(&str) -> Option<String>) {
        for (var, property) in Self::SECRET_ENV {
            if let Some(v) = get(var).filter(|v| !v.is_empty()) {
                self.properties.insert(property.to_string(), v);
            }
        }
    }
}

/// Where the pipeline starts on a fresh instance (design §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutoverWatermark {
    /// Read everything currently in the mailbox (W = MIN(ID) − 1).
    Min,
    /// Start at W = 0 under the normal hole rules.
    Zero,
    /// Skip everything currently visible (W = MAX(ID)).
    Max,
    /// Start right after this ID.
    Id(i64),
}

impl std::str::FromStr for CutoverWatermark {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "min" => Ok(Self::Min),
            "zero" => Ok(Self::Zero),
            "max" => Ok(Self::Max),
            other => other
                .parse::<i64>()
                .ok()
                .filter(|id| *id >= 0)
                .map(Self::Id)
                .ok_or_else(|| format!("{s:?} is not min, zero, max or a non-negative ID")),
        }
    }
}

/// `[msgx.pipeline]` (design §4, §5, §6).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Pipeline {
    /// Mailbox rows read per ingest round.
    pub claim_batch: u32,
    /// A hole older than this is permanent (§4.1).
    pub max_commit_delay: Dur,
    /// Release a hole at once when the mailbox server shows no open transaction
    /// that started before the hole was first seen (docs/pipeline.md "Transaction
    /// evidence"); otherwise, or with false, every hole waits `max-commit-delay`.
    /// Needs the mailbox user's global PROCESS privilege, SLAVE MONITOR (MariaDB)
    /// or REPLICATION CLIENT (MySQL), and a mailbox URL that reaches the
    /// ID-allocating primary (`msgx doctor`, check `mailbox.hole-evidence`).
    pub hole_evidence: bool,
    /// The cadence of the jobs a schedule profile runs at `"poll"` (§5.1:
    /// sleep by the polling interval): busy after a run that handled
    /// items, doubling up to idle while runs find nothing.
    pub poll_interval: PollInterval,
    /// `[msgx.pipeline.retry.<class>]`: one retry schedule per FAILED class
    /// (§9.1).
    pub retry: RetrySchedules,
    /// Removed: one limit for every class held an unsupported
    /// head ~21 min and let an outage exhaust heads. Kept only so that a
    /// file still setting it is refused with a pointer to
    /// `msgx.pipeline.retry` instead of "unknown field".
    #[serde(rename = "max-attempts", default, skip_serializing)]
    #[schemars(skip)]
    pub removed_max_attempts: Option<serde::de::IgnoredAny>,
    /// Removed with `max-attempts` (see there).
    #[serde(rename = "retry-backoff", default, skip_serializing)]
    #[schemars(skip)]
    pub removed_retry_backoff: Option<serde::de::IgnoredAny>,
    /// `/readyz` turns unready (check `head`) once the head has been failing this
    /// long; `msgx_pipeline_head_blocked_seconds` shows the time.
    pub head_blocked_alert: Dur,
    /// Raw texts the pump reads ahead of the head, in bytes (8 MiB; and 200 rows
    /// at most); the head itself is always read. Lengths are asked first
    /// (`LENGTH()`), so no more is ever held.
    pub read_ahead_bytes: u64,
    /// A raw text longer than this many bytes, measured in the mailbox before it
    /// is read, is DEAD(MALFORMED, `too-large:<bytes>`); the default is the
    /// predecessor's MEDIUMTEXT limit.
    pub max_message_bytes: u64,
    /// Each released hole is re-checked for late rows at most once per this (the
    /// check queries the shared mailbox).
    pub late_row_recheck: Dur,
    /// Rows per backfill scan.
    pub backfill_batch: u32,
    /// Backfill retry tiers; the last tier repeats.
    pub backfill_backoff: Vec<Dur>,
    /// R: the forced re-mark window and transient-abandon deadline (§6.3); ≤
    /// `msgx.mailbox.raw-retention`.
    pub backfill_deadline: Dur,
    /// Backfill attempts that raise the alert; an alert threshold only, never an
    /// abandonment (§6.3).
    pub backfill_max_attempts: u32,
    /// Where a fresh instance starts (§4.3): `min`, `zero`, `max` or a mailbox
    /// ID; unset = no seeding.
    pub cutover_watermark: Option<String>,
    /// SENT events are kept this long.
    pub event_retention: Dur,
    /// Consecutive FLOP/FDEL (and ignored, duplicate or malformed) head messages
    /// committed in one transaction, each with its own outcome (docs/pipeline.md
    /// "Group commit"); 1 = off.
    ///
    /// Any error falls back to one message per transaction.
    pub group_commit: u32,
}

impl Pipeline {
    pub const DEFAULT_CLAIM_BATCH: u32 = 500;
    pub const DEFAULT_MAX_COMMIT_DELAY: Dur = Dur::secs(30);
    pub const DEFAULT_HOLE_EVIDENCE: bool = true;
    pub const DEFAULT_HEAD_BLOCKED_ALERT: Dur = Dur::mins(5);
    /// 8 MiB.
    pub const DEFAULT_READ_AHEAD_BYTES: u64 = 8 << 20;
    /// The predecessor's MEDIUMTEXT limit.
    pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 16_777_215;
    pub const DEFAULT_LATE_ROW_RECHECK: Dur = Dur::mins(1);
    pub const DEFAULT_BACKFILL_BATCH: u32 = 200;
    pub const DEFAULT_BACKFILL_BACKOFF: &[Dur] =
        &[Dur::secs(30), Dur::mins(2), Dur::mins(10), Dur::hours(1)];
    pub const DEFAULT_BACKFILL_DEADLINE: Dur = Dur::hours(24);
    pub const DEFAULT_BACKFILL_MAX_ATTEMPTS: u32 = 20;
    pub const DEFAULT_EVENT_RETENTION: Dur = Dur::days(7);
    pub const DEFAULT_GROUP_COMMIT: u32 = 50;
}

impl Default for Pipeline {
    fn default() -> Self {
        Self {
            claim_batch: Self::DEFAULT_CLAIM_BATCH,
            max_commit_delay: Self::DEFAULT_MAX_COMMIT_DELAY,
            hole_evidence: Self::DEFAULT_HOLE_EVIDENCE,
            poll_interval: PollInterval::default(),
            retry: RetrySchedules::default(),
            removed_max_attempts: None,
            removed_retry_backoff: None,
            head_blocked_alert: Self::DEFAULT_HEAD_BLOCKED_ALERT,
            read_ahead_bytes: Self::DEFAULT_READ_AHEAD_BYTES,
            max_message_bytes: Self::DEFAULT_MAX_MESSAGE_BYTES,
            late_row_recheck: Self::DEFAULT_LATE_ROW_RECHECK,
            backfill_batch: Self::DEFAULT_BACKFILL_BATCH,
            backfill_backoff: Self::DEFAULT_BACKFILL_BACKOFF.to_vec(),
            backfill_deadline: Self::DEFAULT_BACKFILL_DEADLINE,
            backfill_max_attempts: Self::DEFAULT_BACKFILL_MAX_ATTEMPTS,
            cutover_watermark: None,
            event_retention: Self::DEFAULT_EVENT_RETENTION,
            group_commit: Self::DEFAULT_GROUP_COMMIT,
        }
    }
}

impl Pipeline {
    /// The parsed cutover choice (validated at load).
    pub fn cutover(&self) -> Option<CutoverWatermark> {
        self.cutover_watermark
            .as_deref()
            .and_then(|s| s.parse().ok())
    }
}

/// `[msgx.pipeline.retry]`: how long each FAILED class holds the head.
/// The queue is strictly FIFO, so a failing head holds
/// every later message: a message-specific failure (UNSUPPORTED,
/// CODEC_ERROR, DATA) gives up fast and is replayed once fixed; an outage (INFRA)
/// is waited out, never turned DEAD(EXHAUSTED). docs/configuration.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct RetrySchedules {
    /// INFRA (mailbox or PostgreSQL failing): no max-attempts (refused by
    /// the self-check); the last tier repeats forever.
    pub infra: RetrySchedule,
    /// CODEC_ERROR: a codec fix is a release away; give up within a minute.
    pub codec_error: RetrySchedule,
    /// UNSUPPORTED: likewise.
    pub unsupported: RetrySchedule,
    /// DATA: a database error the message's own data provokes (a data
    /// exception, a constraint, a program limit). A few attempts
    /// over minutes (a conflicting row may be corrected meanwhile), ending
    /// DEAD(EXHAUSTED) before the head-blocked alert.
    pub data: RetrySchedule,
}

impl RetrySchedules {
    /// INFRA has no max-attempts: unlimited.
    pub const DEFAULT_INFRA_BACKOFF: &[Dur] = &[Dur::secs(5), Dur::secs(15), Dur::mins(1)];
    pub const DEFAULT_CODEC_ERROR_MAX_ATTEMPTS: u32 = 3;
    pub const DEFAULT_CODEC_ERROR_BACKOFF: &[Dur] = &[Dur::secs(10), Dur::secs(30)];
    pub const DEFAULT_UNSUPPORTED_MAX_ATTEMPTS: u32 = 3;
    pub const DEFAULT_UNSUPPORTED_BACKOFF: &[Dur] = &[Dur::secs(10), Dur::secs(30)];
    pub const DEFAULT_DATA_MAX_ATTEMPTS: u32 = 3;
    pub const DEFAULT_DATA_BACKOFF: &[Dur] = &[Dur::secs(30), Dur::mins(2)];
}

impl Default for RetrySchedules {
    fn default() -> Self {
        let limited = |attempts: u32, backoff: &[Dur]| RetrySchedule {
            max_attempts: Some(attempts),
            backoff: backoff.to_vec(),
        };
        Self {
            infra: RetrySchedule {
                max_attempts: None,
                backoff: Self::DEFAULT_INFRA_BACKOFF.to_vec(),
            },
            codec_error: limited(
                Self::DEFAULT_CODEC_ERROR_MAX_ATTEMPTS,
                Self::DEFAULT_CODEC_ERROR_BACKOFF,
            ),
            unsupported: limited(
                Self::DEFAULT_UNSUPPORTED_MAX_ATTEMPTS,
                Self::DEFAULT_UNSUPPORTED_BACKOFF,
            ),
            data: limited(Self::DEFAULT_DATA_MAX_ATTEMPTS, Self::DEFAULT_DATA_BACKOFF),
        }
    }
}

impl RetrySchedules {
    /// Each schedule with its TOML key, in the order the docs list them.
    pub fn by_key(&self) -> [(&'static str, &RetrySchedule); 4] {
        [
            ("infra", &self.infra),
            ("codec-error", &self.codec_error),
            ("unsupported", &self.unsupported),
            ("data", &self.data),
        ]
    }
}

/// One class's schedule. A table that is given is taken as written (no
/// per-key defaults), and the self-check judges it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RetrySchedule {
    /// Attempts before DEAD(EXHAUSTED), which is replayable; `backoff` then has
    /// exactly max-attempts − 1 tiers (§9.1). Required for `codec-error`,
    /// `unsupported` and `data`; never set for `infra`, which is unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// The wait before retry n is tier n; `infra` repeats its last tier forever.
    /// A table that is present is taken as written, with no per-key defaults (see
    /// "Retry schedules").
    #[serde(default)]
    pub backoff: Vec<Dur>,
}

/// `[msgx.dispatch]` (design §8.1).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Dispatch {
    /// Events per dispatch round (a frozen batch); a run repeats rounds up to its
    /// max-items (docs/delivery.md).
    pub batch: u32,
    /// Message-specific delivery failures before DEAD.
    pub max_attempts: u32,
    /// Transient and in-doubt failures count toward `max-attempts` only after
    /// this (docs/delivery.md).
    pub transient_deadline: Dur,
    /// An in-doubt failure (the record may be in the topic) is re-sent until this
    /// long after the row's first failure, then the row is DEAD with class
    /// IN_DOUBT (the DLQ; `msgx events resend`); until then its FLID waits.
    ///
    /// So one always-timing-out record cannot hold its FLID forever.
    pub in_doubt_deadline: Dur,
    /// Delivery backoff, one tier per counted retry: exactly `max-attempts` − 1
    /// tiers (§9.1). An uncounted (transient, in-doubt) failure waits the first
    /// tier; an in-doubt row counted past `max-attempts` the last.
    pub retry_backoff: Vec<Dur>,
}

impl Dispatch {
    pub const DEFAULT_BATCH: u32 = 500;
    pub const DEFAULT_MAX_ATTEMPTS: u32 = 10;
    pub const DEFAULT_TRANSIENT_DEADLINE: Dur = Dur::hours(1);
    pub const DEFAULT_IN_DOUBT_DEADLINE: Dur = Dur::hours(1);
    /// `DEFAULT_MAX_ATTEMPTS` − 1 tiers.
    pub const DEFAULT_RETRY_BACKOFF: &[Dur] = &[
        Dur::secs(10),
        Dur::secs(30),
        Dur::mins(1),
        Dur::mins(2),
        Dur::mins(5),
        Dur::mins(5),
        Dur::mins(10),
        Dur::mins(10),
        Dur::mins(10),
    ];
}

impl Default for Dispatch {
    fn default() -> Self {
        Self {
            batch: Self::DEFAULT_BATCH,
            max_attempts: Self::DEFAULT_MAX_ATTEMPTS,
            transient_deadline: Self::DEFAULT_TRANSIENT_DEADLINE,
            in_doubt_deadline: Self::DEFAULT_IN_DOUBT_DEADLINE,
            retry_backoff: Self::DEFAULT_RETRY_BACKOFF.to_vec(),
        }
    }
}

/// What SCHD DNLD/RESP does with a field the package lacks (Q13).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AbsentFieldPolicy {
    /// Keep the stored value (design §12.1).
    #[default]
    Preserve,
    /// Clear it (the SIS rule, SIS:3.16-note-4).
    Clear,
}

/// `[msgx.schd]` (design §8.2).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Schd {
    /// Deprecated, does nothing: `schd-flush` runs at its
    /// cron line in the schedule profile (§8.2's aggregation period). Still
    /// accepted for one release; `msgx config check` warns.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub flush_interval: Option<Dur>,
    /// FLIDs per `schd-flush` round.
    pub flush_limit: u32,
    /// What a SCHD DNLD/RESP does with a field its package lacks: `preserve`
    /// keeps the stored value, `clear` clears it (Q13).
    pub absent_field_policy: AbsentFieldPolicy,
    /// FLTRs of a larger SCHD DNLD/RESP decided and written together, so only one
    /// slice's flight states and events are in memory (still one transaction; a
    /// master and its shares stay in one slice; docs/pipeline.md "Large
    /// schedules").
    pub apply_slice: u32,
}

impl Schd {
    pub const DEFAULT_FLUSH_LIMIT: u32 = 500;
    pub const DEFAULT_ABSENT_FIELD_POLICY: AbsentFieldPolicy = AbsentFieldPolicy::Preserve;
    pub const DEFAULT_APPLY_SLICE: u32 = 1000;
}

impl Default for Schd {
    fn default() -> Self {
        Self {
            flush_interval: None,
            flush_limit: Self::DEFAULT_FLUSH_LIMIT,
            absent_field_policy: Self::DEFAULT_ABSENT_FIELD_POLICY,
            apply_slice: Self::DEFAULT_APPLY_SLICE,
        }
    }
}

/// `[msgx.season]`: the seasonal schedule SCHS (docs/season.md).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Season {
    /// Seasonal schedules (SCHS) kept stored, the most recent by SDAT, then EDAT
    /// (the predecessor kept two): storing a newer one deletes the oldest and
    /// tombstones its series on the season topic, and a SCHS older than all kept
    /// ones is not stored (docs/season.md).
    pub keep: u32,
    /// Series records per `season-flush` round.
    pub flush_limit: u32,
}

impl Season {
    pub const DEFAULT_KEEP: u32 = 2;
    pub const DEFAULT_FLUSH_LIMIT: u32 = 500;
}

impl Default for Season {
    fn default() -> Self {
        Self {
            keep: Self::DEFAULT_KEEP,
            flush_limit: Self::DEFAULT_FLUSH_LIMIT,
        }
    }
}

/// `[msgx.identity]` (design §2, C-20).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Identity {
    /// Add DTTM's date to the message identity (§2, C-20). Never change it after
    /// go-live.
    pub include_day_boundary: bool,
}

impl Identity {
    pub const DEFAULT_INCLUDE_DAY_BOUNDARY: bool = false;
}

impl Default for Identity {
    fn default() -> Self {
        Self {
            include_day_boundary: Self::DEFAULT_INCLUDE_DAY_BOUNDARY,
        }
    }
}

/// `[msgx.airport]` (design §11.2).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Airport {
    /// IANA time zone of the airport (as chrono-tz knows it), for the operation
    /// day.
    pub timezone: String,
    /// Local time `HH:MM` at which an operation day starts.
    pub day_cutover: String,
    /// IATA code of the home airport (3 letters): the one airport of the ACRIS
    /// API's `/flight/{airport}/…` routes and the home side of every ACRIS
    /// flight (docs/acris.md).
    pub iata: String,
}

impl Default for Airport {
    fn default() -> Self {
        Self {
            timezone: Self::DEFAULT_TIMEZONE.into(),
            day_cutover: Self::DEFAULT_DAY_CUTOVER.into(),
            iata: Self::DEFAULT_IATA.into(),
        }
    }
}

impl Airport {
    pub const DEFAULT_TIMEZONE: &str = "Asia/Shanghai";
    pub const DEFAULT_DAY_CUTOVER: &str = "00:00";
    /// The design's home airport (sis-format §2.4, `flight.home-airport`).
    pub const DEFAULT_IATA: &str = "CTU";

    /// The zone (validated at load; UTC if somehow unparsable).
    pub fn tz(&self) -> chrono_tz::Tz {
        self.timezone.parse().unwrap_or(chrono_tz::UTC)
    }
    /// The cutover time (validated at load).
    pub fn cutover(&self) -> chrono::NaiveTime {
        chrono::NaiveTime::parse_from_str(&self.day_cutover, "%H:%M").unwrap_or_default()
    }
}

/// `[msgx.archive]` (design §9.3).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Archive {
    /// A processing record is archived this long after its terminal state has
    /// settled its backfill (counted from UPDATED_AT).
    pub after: Dur,
    /// ARCHIVED shadow rows are kept this long, so a late duplicate is still
    /// found; ≥ `msgx.mailbox.raw-retention` (INV-9).
    pub dedup_memory: Dur,
    /// PROC_STATE_HST rows are kept this long; ≥ `dedup-memory` and ≥
    /// `msgx.mailbox.raw-retention` (see "The time constants"). An archived
    /// abandoned row is kept at least R_keep past its abandonment in any case.
    pub hst_retention: Dur,
}

impl Archive {
    pub const DEFAULT_AFTER: Dur = Dur::days(3);
    pub const DEFAULT_DEDUP_MEMORY: Dur = Dur::days(30);
    pub const DEFAULT_HST_RETENTION: Dur = Dur::days(180);
}

impl Default for Archive {
    fn default() -> Self {
        Self {
            after: Self::DEFAULT_AFTER,
            dedup_memory: Self::DEFAULT_DEDUP_MEMORY,
            hst_retention: Self::DEFAULT_HST_RETENTION,
        }
    }
}

/// `[msgx.snaplog]`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Snaplog {
    /// SCHD_SNAP_LOG rows are kept this long.
    pub retention: Dur,
}

impl Snaplog {
    pub const DEFAULT_RETENTION: Dur = Dur::days(30);
}

impl Default for Snaplog {
    fn default() -> Self {
        Self {
            retention: Self::DEFAULT_RETENTION,
        }
    }
}

/// `[msgx.flight-history]` (design §12.5).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct FlightHistory {
    /// A flight not DELETED leaves the current state only after no update for
    /// this long (and `min-age`).
    pub quiet_period: Dur,
    /// A flight leaves the current state for the flight history
    /// (`flight-history-clean`) once its operation day ended more than this ago.
    pub min_age: Dur,
    /// FLIGHT_HISTORY rows are kept this long.
    pub hst_retention: Dur,
}

impl FlightHistory {
    pub const DEFAULT_QUIET_PERIOD: Dur = Dur::hours(48);
    pub const DEFAULT_MIN_AGE: Dur = Dur::days(3);
    pub const DEFAULT_HST_RETENTION: Dur = Dur::days(400);
}

impl Default for FlightHistory {
    fn default() -> Self {
        Self {
            quiet_period: Self::DEFAULT_QUIET_PERIOD,
            min_age: Self::DEFAULT_MIN_AGE,
            hst_retention: Self::DEFAULT_HST_RETENTION,
        }
    }
}

/// `[msgx.request]` (design §7.2).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Request {
    /// A SENT request with no matching RESP after this is EXPIRED by
    /// `request-expiry`; a PENDING one never written to COUTMSGS is expired by
    /// compensation after this (docs/requests.md).
    pub expiry: Dur,
    /// Closed requests are kept this long.
    pub retention: Dur,
    /// Tolerance of the degraded RESP match: a RESP whose DTTM is earlier than
    /// the request's send time by more than this is
    /// `resp-unmatched:older-than-request` (Q5; docs/requests.md).
    pub clock_skew: Dur,
    /// SNDR of outbound RQFD/RQRD; 1–4 letters or digits (sis-format §5).
    pub sndr: String,
    /// COUTMSGS ROUTINGID of schedule requests (RQFD); 1–23 letters or digits.
    pub routing_rqfd: String,
    /// COUTMSGS ROUTINGID of reference-data requests (RQRD); 1–23 letters or
    /// digits.
    pub routing_rqrd: String,
}

impl Request {
    pub const DEFAULT_EXPIRY: Dur = Dur::mins(10);
    pub const DEFAULT_RETENTION: Dur = Dur::days(30);
    pub const DEFAULT_CLOCK_SKEW: Dur = Dur::mins(2);
    pub const DEFAULT_SNDR: &str = "VIEW";
    pub const DEFAULT_ROUTING_RQFD: &str = "VIEWRQFD";
    pub const DEFAULT_ROUTING_RQRD: &str = "VIEWRQRD";
}

impl Default for Request {
    fn default() -> Self {
        Self {
            expiry: Self::DEFAULT_EXPIRY,
            retention: Self::DEFAULT_RETENTION,
            clock_skew: Self::DEFAULT_CLOCK_SKEW,
            sndr: Self::DEFAULT_SNDR.into(),
            routing_rqfd: Self::DEFAULT_ROUTING_RQFD.into(),
            routing_rqrd: Self::DEFAULT_ROUTING_RQRD.into(),
        }
    }
}

/// `[msgx.job-run]`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct JobRun {
    /// JOB_RUN rows are kept this long.
    pub retention: Dur,
}

impl JobRun {
    pub const DEFAULT_RETENTION: Dur = Dur::days(30);
}

impl Default for JobRun {
    fn default() -> Self {
        Self {
            retention: Self::DEFAULT_RETENTION,
        }
    }
}

/// `[msgx.daemon]`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Daemon {
    /// Schedule profile: a name under `schedules/` (`daemon`,
    /// `maintenance-window`) or a profile file; every job must exist and every
    /// cron expression parse.
    pub schedule: String,
    /// How often the lock holder re-checks its lock session.
    pub lock_check_interval: Dur,
    /// How often a standby tries to take the lock.
    pub standby_poll_interval: Dur,
    /// On SIGINT/SIGTERM, how long the running batch may take to finish.
    pub shutdown_timeout: Dur,
    /// `/readyz` check `jobs` names a scheduled job that has not completed a run
    /// (SUCCEEDED or SKIPPED_LOCKED) by its next cron time after the last
    /// completion + its `time-budget` + this; a run that keeps failing or
    /// panicking, or hangs, shows there.
    ///
    /// See `jobs::supervision`.
    pub job_overdue_margin: Dur,
}

impl Daemon {
    pub const DEFAULT_SCHEDULE: &str = "daemon";
    pub const DEFAULT_LOCK_CHECK_INTERVAL: Dur = Dur::secs(2);
    pub const DEFAULT_STANDBY_POLL_INTERVAL: Dur = Dur::secs(2);
    pub const DEFAULT_SHUTDOWN_TIMEOUT: Dur = Dur::secs(30);
    pub const DEFAULT_JOB_OVERDUE_MARGIN: Dur = Dur::secs(60);
}

impl Default for Daemon {
    fn default() -> Self {
        Self {
            schedule: Self::DEFAULT_SCHEDULE.into(),
            lock_check_interval: Self::DEFAULT_LOCK_CHECK_INTERVAL,
            standby_poll_interval: Self::DEFAULT_STANDBY_POLL_INTERVAL,
            shutdown_timeout: Self::DEFAULT_SHUTDOWN_TIMEOUT,
            job_overdue_margin: Self::DEFAULT_JOB_OVERDUE_MARGIN,
        }
    }
}

/// `[msgx.log]`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Log {
    /// tracing filter, e.g. `info` or `msgx=debug,info`; env `RUST_LOG` wins.
    pub level: String,
    /// Directory of the daemon's daily rolling files (created 0640); "" = stdout
    /// only.
    pub dir: String,
    /// Format of the stdout lines: `text` or `json`.
    pub format: String,
    /// Daily files older than this are deleted; whole days, at least 1d.
    pub retention: Dur,
}

impl Log {
    pub const DEFAULT_LEVEL: &str = "info";
    pub const DEFAULT_DIR: &str = "var/log";
    pub const DEFAULT_FORMAT: &str = "text";
    pub const DEFAULT_RETENTION: Dur = Dur::days(14);
}

impl Default for Log {
    fn default() -> Self {
        Self {
            level: Self::DEFAULT_LEVEL.into(),
            dir: Self::DEFAULT_DIR.into(),
            format: Self::DEFAULT_FORMAT.into(),
            retention: Self::DEFAULT_RETENTION,
        }
    }
}

/// `[msgx.telemetry]`: trace export (docs/pipeline.md
/// "Trace context"). Every message has its W3C trace context whatever is set
/// here; this only decides whether spans leave the process.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Telemetry {
    /// OTLP/HTTP collector URL (`http://…/v1/traces`) the message and delivery
    /// spans are exported to; unset = no export. Needs a binary built with
    /// `--features otlp`, else `config check` fails (docs/pipeline.md "Trace
    /// context").
    pub otlp_endpoint: Option<String>,
}

/// `[msgx.http]`: optional listeners, off by default (docs/production/http.md).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Http {
    /// Address `IP:PORT` of the compat entry `POST /cminmsgs/send` (§4.4); unset
    /// = off. Needs a token or a client CA on every address, or the development
    /// mode on loopback (docs/production/http.md).
    pub compat_listen: Option<String>,
    /// Compat entry body limit in bytes (413 beyond it).
    pub compat_max_body: usize,
    /// File with one compat bearer token (≥ 16 visible ASCII characters) that may
    /// send `compat-allowed-senders`; env `MSGX_COMPAT_TOKEN` wins; mode 0600.
    /// Set = required on every request (401), loopback too.
    pub compat_token_file: Option<PathBuf>,
    /// TOML file of `[[token]]` entries (name, sha256 of the token, senders): one
    /// bearer token per client, each bound to the SNDRs it may send; mode 0600 (a
    /// group- or world-readable file stops the start).
    pub compat_tokens_file: Option<PathBuf>,
    /// true: the compat entry without authentication, on a loopback address only,
    /// logged at start. For a developer's machine; never in production.
    pub compat_development_mode: bool,
    /// COMPAT_REQUEST records (one per compat request) are kept this long by the
    /// `retention` job; those whose mailbox row has not bound its identity stay.
    pub compat_record_retention: Dur,
    /// PEM certificate chain: with `compat-tls-key`, the compat entry speaks
    /// HTTPS (set both or neither).
    pub compat_tls_cert: Option<PathBuf>,
    /// PEM private key of `compat-tls-cert`.
    pub compat_tls_key: Option<PathBuf>,
    /// PEM CA certificates: mutual TLS, every client needs a certificate issued
    /// by one of them. Needs `compat-tls-cert` and `compat-tls-key`.
    pub compat_tls_client_ca: Option<PathBuf>,
    /// META/SNDR values the single token, client certificates and the development
    /// mode may send, exact match (others 403); not empty, each 1–4 letters or
    /// digits.
    pub compat_allowed_senders: Vec<String>,
    /// Address of `/metrics`, `/healthz` and `/readyz`, served by the daemon;
    /// unset = off. Loopback addresses only (the endpoints are not
    /// authenticated); port 0 = a free port (logged). docs/metrics.md.
    pub metrics_listen: Option<String>,
    /// `/healthz` answers 503 once the scheduler heartbeat is older than this;
    /// longer than `msgx.daemon.standby-poll-interval`.
    pub health_max_age: Dur,
    /// Bound on each `/readyz` check and on the database reads of a `/metrics`
    /// scrape.
    pub probe_timeout: Dur,
    /// `/readyz` answers 503 when mailbox rows wait beyond W and W has not moved
    /// for this long; longer than `msgx.pipeline.max-commit-delay` (waiting out a
    /// hole is not a stall).
    pub watermark_stall: Dur,
    /// Each listener: a request head (or TLS handshake) not received within this
    /// closes the connection.
    pub header_read_timeout: Dur,
    /// Each listener: a request body not fully received within this after its
    /// head fails (compat: 408) and closes the connection, however steadily it
    /// trickles.
    pub body_timeout: Dur,
    /// Each listener: requests in progress at once; beyond it 503 at once.
    pub max_concurrent_requests: usize,
    /// Each listener: requests accepted per second; beyond it 429 at once.
    pub requests_per_second: u64,
    /// Each listener: open connections; beyond it new ones wait in the kernel's
    /// accept backlog (file descriptors stay for the database pools).
    pub max_connections: usize,
    /// Each listener, per client address: open connections; beyond it a new
    /// connection is closed at once, so one client cannot hold the others' slots.
    /// Trusted proxies are exempt (their connections carry many clients).
    pub max_connections_per_client: usize,
    /// Each listener, per client: requests accepted per second; beyond it 429,
    /// before the listener's `requests-per-second` is charged.
    pub requests_per_second_per_client: u64,
    /// Reverse proxies whose `X-Forwarded-For` is believed: a request from one is
    /// counted under the right-most hop that is not itself a trusted proxy; [] =
    /// the header is ignored and the direct peer is the client. A TLS-terminating
    /// proxy of the console is declared here.
    ///
    /// See `crate::http::client::resolve`.
    pub trusted_proxies: Vec<std::net::IpAddr>,
}

impl Http {
    /// 1 MiB.
    pub const DEFAULT_COMPAT_MAX_BODY: usize = 1 << 20;
    pub const DEFAULT_COMPAT_DEVELOPMENT_MODE: bool = false;
    pub const DEFAULT_COMPAT_RECORD_RETENTION: Dur = Dur::days(90);
    pub const DEFAULT_COMPAT_ALLOWED_SENDERS: &[&str] = &["AODB"];
    pub const DEFAULT_HEALTH_MAX_AGE: Dur = Dur::secs(15);
    pub const DEFAULT_PROBE_TIMEOUT: Dur = Dur::secs(5);
    pub const DEFAULT_WATERMARK_STALL: Dur = Dur::mins(2);
    pub const DEFAULT_HEADER_READ_TIMEOUT: Dur = Dur::secs(10);
    pub const DEFAULT_BODY_TIMEOUT: Dur = Dur::secs(30);
    pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 64;
    pub const DEFAULT_REQUESTS_PER_SECOND: u64 = 100;
    pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
    pub const DEFAULT_MAX_CONNECTIONS_PER_CLIENT: usize = 16;
    pub const DEFAULT_REQUESTS_PER_SECOND_PER_CLIENT: u64 = 50;
}

impl Default for Http {
    fn default() -> Self {
        Self {
            compat_listen: None,
            compat_max_body: Self::DEFAULT_COMPAT_MAX_BODY,
            compat_token_file: None,
            compat_tokens_file: None,
            compat_development_mode: Self::DEFAULT_COMPAT_DEVELOPMENT_MODE,
            compat_record_retention: Self::DEFAULT_COMPAT_RECORD_RETENTION,
            compat_tls_cert: None,
            compat_tls_key: None,
            compat_tls_client_ca: None,
            compat_allowed_senders: strings(Self::DEFAULT_COMPAT_ALLOWED_SENDERS),
            metrics_listen: None,
            health_max_age: Self::DEFAULT_HEALTH_MAX_AGE,
            probe_timeout: Self::DEFAULT_PROBE_TIMEOUT,
            watermark_stall: Self::DEFAULT_WATERMARK_STALL,
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            max_concurrent_requests: Self::DEFAULT_MAX_CONCURRENT_REQUESTS,
            requests_per_second: Self::DEFAULT_REQUESTS_PER_SECOND,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: Self::DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
            requests_per_second_per_client: Self::DEFAULT_REQUESTS_PER_SECOND_PER_CLIENT,
            trusted_proxies: Vec::new(),
        }
    }
}

/// `[msgx.console]`: the operator console (docs/console.md),
/// served by the daemon or by `msgx console`, on the limits of `msgx.http`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Console {
    /// Address `IP:PORT` of the operator console (docs/console.md); unset = off.
    /// A non-loopback address needs `users-file` and HTTPS (`tls-cert`/`tls-key`,
    /// or a TLS-terminating proxy in `msgx.http.trusted-proxies`), a wildcard
    /// address `allowed-hosts`; port 0 = a free port (logged).
    pub listen: Option<String>,
    /// TOML file of `[[user]]` (name, role `viewer`/`operator`/`admin`, argon2
    /// `password-hash`) and `[[token]]` (name, role, `sha256` of a bearer token);
    /// mode 0600 or stricter (refused otherwise). Unset only with `oidc` or
    /// `anonymous-viewer = true`.
    pub users_file: Option<PathBuf>,
    /// true: no users file; loopback visitors read every page and act on nothing.
    /// Refused with a users file or off loopback.
    ///
    /// Off by default: a console without login must be asked for by name, never
    /// be the result of a missing setting.
    pub anonymous_viewer: bool,
    /// Host names the console answers to (the `Host` header, port ignored; others
    /// 421, against DNS rebinding); [] = `localhost`. The listen address is
    /// always allowed.
    pub allowed_hosts: Vec<String>,
    /// A login session ends this long after it began, however active.
    pub session_lifetime: Dur,
    /// A login session ends after this long without a request.
    pub session_idle_timeout: Dur,
    /// Sessions one user may hold at once; a new login beyond it ends the oldest;
    /// ≥ 1.
    pub sessions_per_user: u32,
    /// Failed logins allowed per user name within `login-window`; beyond it that
    /// user's logins answer 429 until the window passes (other users of the same
    /// address are not affected).
    pub login_attempts: u32,
    /// Failed logins and wrong bearer tokens allowed per client address within
    /// `login-window`; beyond it every login and token from that client answers
    /// 429. At least `login-attempts`, so one user's typos do not lock out the
    /// others behind the same address.
    pub login_attempts_per_client: u32,
    /// The window of `login-attempts` and `login-attempts-per-client`.
    pub login_window: Dur,
    /// PEM certificate chain: with `tls-key`, the console speaks HTTPS itself
    /// (set both or neither); or put it behind a TLS proxy (docs/console.md).
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of `tls-cert`.
    pub tls_key: Option<PathBuf>,
    /// Sessions of the console's own PostgreSQL pool (`application_name` `msgx
    /// console`): pages never use the jobs' pool, so a costly page cannot take
    /// the pipeline's connections; ≥ 1.
    pub pool_size: u32,
    /// `statement_timeout` of the console's sessions: a page query (or an
    /// operator action) running longer is cancelled by the server, and the page
    /// says so.
    pub statement_timeout: Dur,
    /// Per-role allow-lists of actions (docs/console.md "Roles and rights").
    pub rights: ConsoleRights,
    /// OpenID Connect sign-in (docs/console.md "Single sign-on (OIDC)"); unset = off.
    pub oidc: Option<ConsoleOidc>,
    /// The live view's bounds (docs/console.md "Live view").
    pub live: ConsoleLive,
}

impl Console {
    pub const DEFAULT_ANONYMOUS_VIEWER: bool = false;
    pub const DEFAULT_SESSION_LIFETIME: Dur = Dur::hours(8);
    pub const DEFAULT_SESSION_IDLE_TIMEOUT: Dur = Dur::mins(30);
    pub const DEFAULT_SESSIONS_PER_USER: u32 = 5;
    pub const DEFAULT_LOGIN_ATTEMPTS: u32 = 5;
    pub const DEFAULT_LOGIN_ATTEMPTS_PER_CLIENT: u32 = 50;
    pub const DEFAULT_LOGIN_WINDOW: Dur = Dur::mins(15);
    pub const DEFAULT_POOL_SIZE: u32 = 4;
    pub const DEFAULT_STATEMENT_TIMEOUT: Dur = Dur::secs(5);
}

impl Default for Console {
    fn default() -> Self {
        Self {
            listen: None,
            users_file: None,
            anonymous_viewer: Self::DEFAULT_ANONYMOUS_VIEWER,
            allowed_hosts: Vec::new(),
            session_lifetime: Self::DEFAULT_SESSION_LIFETIME,
            session_idle_timeout: Self::DEFAULT_SESSION_IDLE_TIMEOUT,
            sessions_per_user: Self::DEFAULT_SESSIONS_PER_USER,
            login_attempts: Self::DEFAULT_LOGIN_ATTEMPTS,
            login_attempts_per_client: Self::DEFAULT_LOGIN_ATTEMPTS_PER_CLIENT,
            login_window: Self::DEFAULT_LOGIN_WINDOW,
            tls_cert: None,
            tls_key: None,
            pool_size: Self::DEFAULT_POOL_SIZE,
            statement_timeout: Self::DEFAULT_STATEMENT_TIMEOUT,
            rights: ConsoleRights::default(),
            oidc: None,
            live: ConsoleLive::default(),
        }
    }
}

/// `[msgx.acris]`: the read-only ACRIS flight API (docs/acris.md), served by
/// the daemon (standby included) on its own listener, on the limits of
/// `msgx.http`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Acris {
    /// Address `IP:PORT` of the ACRIS flight API (docs/acris.md); unset = off. A
    /// non-loopback address needs HTTPS (`tls-cert`/`tls-key`, or a
    /// TLS-terminating proxy in `msgx.http.trusted-proxies`); port 0 = a free
    /// port (logged).
    pub listen: Option<String>,
    /// TOML file of `[[token]]` entries (name, role, `sha256` of a bearer token), the
    /// format of `msgx.console.users-file` (its `[[user]]` entries are not used);
    /// mode 0600 or stricter. Required with `listen`: every request needs a token.
    pub tokens_file: Option<PathBuf>,
    /// PEM certificate chain: with `tls-key`, the API speaks HTTPS itself (set
    /// both or neither).
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of `tls-cert`.
    pub tls_key: Option<PathBuf>,
    /// Sessions of the API's own PostgreSQL pool (`application_name` `msgx
    /// acris`): clients never use the jobs' pool; ≥ 1.
    pub pool_size: u32,
    /// `statement_timeout` of the API's sessions: a request whose query runs
    /// longer answers 503.
    pub statement_timeout: Dur,
}

impl Acris {
    pub const DEFAULT_POOL_SIZE: u32 = 4;
    pub const DEFAULT_STATEMENT_TIMEOUT: Dur = Dur::secs(5);
}

impl Default for Acris {
    fn default() -> Self {
        Self {
            listen: None,
            tokens_file: None,
            tls_cert: None,
            tls_key: None,
            pool_size: Self::DEFAULT_POOL_SIZE,
            statement_timeout: Self::DEFAULT_STATEMENT_TIMEOUT,
        }
    }
}

/// Owned copies of a constant list of strings (a default of a list key).
fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Where the config came from, for `config show`.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// `None` = built-in defaults.
    pub source: Option<PathBuf>,
}

impl Config {
    /// Parses TOML text (no env overrides, no validation).
    pub fn from_toml(text: &str, origin: &str) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: origin.to_string(),
            message: parse_error_without_values(&e, text),
        })
    }

    /// Resolves the file (see module docs), applies env overrides and
    /// validates. Errors name the key and the rule.
    pub fn load(explicit: Option<&Path>) -> Result<Loaded, ConfigError> {
        Self::load_checked(explicit, |_| Vec::new())
    }

    /// [`load`](Self::load) with the rules of upper layers added after this
    /// module's own (the schedule profile needs the job catalogue:
    /// `jobs::profile::config_issues`); config imports nothing above it
    /// (docs/architecture.md).
    pub fn load_checked(
        explicit: Option<&Path>,
        more: impl Fn(&Config) -> Vec<ConfigIssue>,
    ) -> Result<Loaded, ConfigError> {
        let path = explicit
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("MSGX_CONFIG").map(PathBuf::from))
            .or_else(|| {
                let local = PathBuf::from("config/msgx.toml");
                local.exists().then_some(local)
            });
        let mut config = match &path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.clone(),
                    source,
                })?;
                Config::from_toml(&text, &p.display().to_string())?
            }
            None => Config::default(),
        };
        config.apply_env(|k| std::env::var(k).ok());
        let mut issues = config.validate().err().unwrap_or_default();
        issues.extend(more(&config));
        if !issues.is_empty() {
            return Err(ConfigError::Invalid(issues));
        }
        Ok(Loaded {
            config,
            source: path,
        })
    }

    /// `MSGX_DATABASE_URL`, `MSGX_MAILBOX_URL`, `MSGX_KAFKA_BROKERS` replace
    /// the connection settings, so secrets need not sit in the file.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) {
        if let Some(v) = get("MSGX_DATABASE_URL").filter(|v| !v.is_empty()) {
            self.msgx.postgres.url = v;
        }
        if let Some(v) = get("MSGX_MAILBOX_URL").filter(|v| !v.is_empty()) {
            self.msgx.mailbox.url = v;
        }
        if let Some(v) = get("MSGX_KAFKA_BROKERS").filter(|v| !v.is_empty()) {
            self.msgx.kafka.brokers = v;
        }
        self.msgx.kafka.apply_env(&get);
    }

    /// The effective config as TOML with every secret masked (`config
    /// show`): see [`mask_value`].
    pub fn to_masked_toml(&self) -> String {
        match toml::Value::try_from(self) {
            Ok(mut v) => {
                mask_value("", &mut v);
                toml::to_string_pretty(&v).unwrap_or_else(|e| format!("# cannot render: {e}\n"))
            }
            Err(e) => format!("# cannot render: {e}\n"),
        }
    }
}

/// A TOML error as `line L, column C (key K): message`, without the source
/// line the toml crate quotes: that line may be
/// `url = "postgres://u:password@…` or `"sasl.password" = …`. The key name
/// stays, so the error still says what to fix; the message's quoted values
/// are hidden when the key holds a secret or a URL.
fn parse_error_without_values(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim();
    let Some(span) = e.span() else {
        return hide_literals(message);
    };
    let before = &text[..span.start.min(text.len())];
    let (line_no, column) = line_and_column(before);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let table = before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    let sensitive = line.contains("://")
        || key
            .as_deref()
            .is_some_and(|k| is_secret_key(k) || k == "url" || k.ends_with("-url"));
    let message = if sensitive {
        hide_literals(message)
    } else {
        message.to_string()
    };
    let named = match (table, key) {
        (Some(t), Some(k)) => format!(" (key {t}.{k})"),
        (None, Some(k)) => format!(" (key {k})"),
        _ => String::new(),
    };
    format!("line {line_no}, column {column}{named}: {message}")
}

/// A TOML error in a file of secrets (the console's users file, the compat
/// tokens): where it is and what kind of error, with every quoted literal
/// hidden and no line of the file (toml's own message
/// quotes the offending line, a password hash among them).
pub fn toml_error_without_text(e: &toml::de::Error, text: &str) -> String {
    let message = hide_literals(e.message().trim());
    match e.span() {
        Some(span) => {
            let (line, column) = line_and_column(&text[..span.start.min(text.len())]);
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

/// A secrets file's permission bits when its group or others have any
/// (`None`: private to its owner). The console's users file and the compat
/// token files are refused rather than used when others may read them.
pub fn shared_file_mode(path: &std::path::Path) -> std::io::Result<Option<u32>> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o7777;
    Ok((mode & 0o077 != 0).then_some(mode))
}

/// 1-based line and column of the position right after `before`.
fn line_and_column(before: &str) -> (usize, usize) {
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before.len() - line_start + 1,
    )
}

/// Replaces every `"…"`, `'…'` and `` `…` `` literal in a message by `…`.
fn hide_literals(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut open: Option<char> = None;
    for c in message.chars() {
        match open {
            Some(q) if c == q => {
                out.push(c);
                open = None;
            }
            Some(_) => {}
            None if matches!(c, '"' | '\'' | '`') => {
                out.push(c);
                out.push('…');
                open = Some(c);
            }
            None => out.push(c),
        }
    }
    out
}

/// True for a key whose value is a secret: passwords, secrets, tokens, the
/// OAUTHBEARER config and inline private keys (`sasl.password`,
/// `ssl.key.password`, `sasl.oauthbearer.config`, `ssl.key.pem`, …). Paths
/// to key files are not secrets and stay visible.
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    let path_like = k.ends_with(".location") || k.ends_with("-file") || k.ends_with("_file");
    !path_like
        && (k.contains("password")
            || k.contains("secret")
            || k.contains("token")
            || k.contains("oauthbearer.config")
            || k.ends_with("key.pem")
            || k.ends_with("passphrase"))
}

/// Masks, in place, every secret in a config tree: values under
/// [`is_secret_key`] keys become `****`, and URLs (`url`, `…-url`) lose
/// their password ([`mask_url`]).
pub fn mask_value(key: &str, v: &mut toml::Value) {
    match v {
        toml::Value::String(s) if is_secret_key(key) && !s.is_empty() => *s = "****".into(),
        toml::Value::String(s) if key == "url" || key.ends_with("-url") => *s = mask_url(s),
        toml::Value::Table(t) => t.iter_mut().for_each(|(k, v)| mask_value(k, v)),
        toml::Value::Array(a) => a.iter_mut().for_each(|v| mask_value(key, v)),
        toml::Value::String(_)
        | toml::Value::Integer(_)
        | toml::Value::Float(_)
        | toml::Value::Boolean(_)
        | toml::Value::Datetime(_) => {}
    }
}

/// `Debug` for the connection sections through the same masking as
/// `config show`, so a `{:?}` in a log line never prints a secret, whatever
/// fields the section gains.
macro_rules! masked_debug {
    ($($t:ty),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match toml::Value::try_from(self) {
                    Ok(mut v) => {
                        mask_value("", &mut v);
                        write!(f, "{} {}", stringify!($t), v)
                    }
                    Err(_) => f.write_str(concat!(stringify!($t), " { … }")),
                }
            }
        }
    )*};
}
masked_debug!(Postgres, Mailbox, Kafka);

/// `scheme://user:secret@host/db?password=x` → `scheme://user:****@host/db?password=****`:
/// the user-info password and every secret-like query parameter
/// (`password`, `sslpassword`, `token`, …) are masked.
pub fn mask_url(url: &str) -> String {
    let (head, query) = match url.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (url, None),
    };
    let mut out = match head.find("://") {
        Some(scheme_end) => {
            let rest = &head[scheme_end + 3..];
            match rest.rfind('@') {
                Some(at) => {
                    let creds = &rest[..at];
                    match creds.find(':') {
                        Some(colon) => format!(
                            "{}://{}:****{}",
                            &head[..scheme_end],
                            &creds[..colon],
                            &rest[at..]
                        ),
                        None => head.to_string(),
                    }
                }
                None => head.to_string(),
            }
        }
        None => head.to_string(),
    };
    if let Some(q) = query {
        let masked: Vec<String> = q
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if is_secret_key(k) => format!("{k}=****"),
                _ => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&masked.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_fast_schedules_give_up_within_a_minute() {
        let all = RetrySchedules::default();
        for s in [&all.unsupported, &all.codec_error] {
            let waited: chrono::Duration = s.backoff.iter().map(|d| d.chrono()).sum();
            assert!(waited < chrono::Duration::minutes(1), "{s:?}");
            assert!(s.max_attempts.is_some());
        }
        // DATA gives up within minutes, before the head-blocked alert (5m).
        let waited: chrono::Duration = all.data.backoff.iter().map(|d| d.chrono()).sum();
        assert_eq!(all.data.max_attempts, Some(3));
        assert!(waited < p_head_blocked_alert(), "{:?}", all.data);
    }

    fn p_head_blocked_alert() -> chrono::Duration {
        Pipeline::default().head_blocked_alert.chrono()
    }

    #[test]
    fn defaults_match_the_parameter_table() {
        let c = Config::default();
        let p = &c.msgx.pipeline;
        assert_eq!(p.claim_batch, 500);
        assert_eq!(p.max_commit_delay, Dur::secs(30));
        assert_eq!(p.retry.infra.max_attempts, None, "INFRA never exhausts");
        assert_eq!(p.retry.unsupported.max_attempts, Some(3));
        assert_eq!(p.retry.codec_error.backoff, [Dur::secs(10), Dur::secs(30)]);
        assert_eq!(p.read_ahead_bytes, 8 * 1024 * 1024);
        assert_eq!(p.max_message_bytes, 16_777_215);
        assert_eq!(p.backfill_deadline, Dur::hours(24));
        assert_eq!(c.msgx.mailbox.raw_retention, Dur::days(7));
        assert_eq!(c.msgx.archive.dedup_memory, Dur::days(30));
        assert_eq!(c.msgx.ignore, vec!["LDM", "REGN", "RSTA", "EROR"]);
        assert_eq!(c.msgx.airport.timezone, "Asia/Shanghai");
        assert_eq!(c.msgx.schd.absent_field_policy, AbsentFieldPolicy::Preserve);
        assert!(c.validate().is_ok());
    }

    #[test]
    fn documented_local_config_equals_the_defaults() {
        // config/msgx.toml is the local development config: it sets the
        // connection URLs of scripts/services.sh, which have no built-in
        // default; every other key shows its default.
        let mut local =
            Config::from_toml(include_str!("../../config/msgx.toml"), "config/msgx.toml")
                .expect("config/msgx.toml parses");
        assert_eq!(
            local.msgx.postgres.url,
            "postgres://msgx:msgx@127.0.0.1:5432/msgx"
        );
        assert_eq!(
            local.msgx.mailbox.url,
            "mysql://msgx:msgx@127.0.0.1:3306/msgx_mailbox"
        );
        local.msgx.postgres.url.clear();
        local.msgx.mailbox.url.clear();
        assert_eq!(local.to_masked_toml(), Config::default().to_masked_toml());
    }

    #[test]
    fn no_connection_has_a_built_in_target() {
        let c = Config::default();
        assert_eq!(c.msgx.postgres.url, "");
        assert_eq!(c.msgx.mailbox.url, "");
    }

    #[test]
    fn env_overrides_connection_settings() {
        let mut c = Config::default();
        c.apply_env(|k| match k {
            "MSGX_DATABASE_URL" => Some("postgres://a@b/c".into()),
            "MSGX_KAFKA_BROKERS" => Some("k:1".into()),
            _ => None,
        });
        assert_eq!(c.msgx.postgres.url, "postgres://a@b/c");
        assert_eq!(c.msgx.kafka.brokers, "k:1");
        assert_eq!(c.msgx.mailbox.url, Config::default().msgx.mailbox.url);
    }

    #[test]
    fn masks_passwords() {
        assert_eq!(mask_url("mysql://u:pw@h:1/db"), "mysql://u:****@h:1/db");
        assert_eq!(mask_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(mask_url("postgres://u:p@ss@h/db"), "postgres://u:****@h/db");
        assert_eq!(
            mask_url("postgres://h/db?user=u&password=pw&sslmode=require"),
            "postgres://h/db?user=u&password=****&sslmode=require"
        );
        assert_eq!(
            mask_url("mysql://u@h/db?sslpassword=x&token=y"),
            "mysql://u@h/db?sslpassword=****&token=****"
        );
    }

    /// Every secret form, in `config show` and in `Debug`.
    #[test]
    fn config_show_and_debug_mask_every_secret_form() {
        let mut c = Config::default();
        c.msgx.postgres.url = "postgres://msgx:pg-secret-1@db/msgx?password=pg-secret-2".into();
        c.msgx.mailbox.url = "mysql://mb:mb-secret-3@mb/mailbox".into();
        for (k, v) in [
            ("sasl.password", "kafka-secret-4"),
            (
                "sasl.oauthbearer.config",
                "principal=x secret=kafka-secret-5",
            ),
            ("ssl.key.password", "kafka-secret-6"),
            ("ssl.key.location", "/etc/msgx/kafka.key"),
        ] {
            c.msgx.kafka.properties.insert(k.into(), v.into());
        }
        let shown = c.to_masked_toml();
        let debug = format!("{c:?}");
        for out in [&shown, &debug] {
            for secret in 1..=6 {
                assert!(
                    !out.contains(&format!("secret-{secret}")),
                    "secret {secret} in:\n{out}"
                );
            }
            assert!(out.contains("msgx:****@db/msgx?password=****"), "{out}");
            assert!(
                out.contains("/etc/msgx/kafka.key"),
                "paths stay visible: {out}"
            );
        }
    }

    #[test]
    fn a_toml_error_never_echoes_the_line() {
        let text = "[msgx.postgres]\nurl = \"postgres://u:hunter2@h/db\nmax-connections = 1\n";
        let err = Config::from_toml(text, "t").unwrap_err().to_string();
        assert!(!err.contains("hunter2"), "{err}");
        assert!(err.contains("line 2"), "{err}");
        let text = "[msgx.kafka.properties]\n\"sasl.password\" = 123456789\n";
        let err = Config::from_toml(text, "t").unwrap_err().to_string();
        assert!(!err.contains("123456789"), "{err}");
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let err = Config::from_toml("[msgx.pipeline]\nclaim-batchh = 1\n", "t").unwrap_err();
        assert!(err.to_string().contains("claim-batchh"), "{err}");
    }

    #[test]
    fn cutover_values_parse() {
        assert_eq!("MIN".parse::<CutoverWatermark>(), Ok(CutoverWatermark::Min));
        assert_eq!(
            "42".parse::<CutoverWatermark>(),
            Ok(CutoverWatermark::Id(42))
        );
        assert!("-1".parse::<CutoverWatermark>().is_err());
        assert!("latest".parse::<CutoverWatermark>().is_err());
    }
}
