//! Configuration: one TOML file, every parameter under its documented key
//! (`msgx.pipeline.claim-batch`, …), environment overrides for connection
//! secrets, and a startup self-check (issue 2; design §9.1, §9.3).
//!
//! Resolution order: `--config FILE`, else `MSGX_CONFIG`, else
//! `config/msgx.toml` when it exists, else built-in defaults. Then
//! `MSGX_DATABASE_URL`, `MSGX_MAILBOX_URL` and `MSGX_KAFKA_BROKERS` replace
//! the file's connection settings. Every field is documented in
//! `config/msgx.toml` and `docs/configuration.md`.

mod duration;
mod validate;

pub use duration::Dur;
pub use validate::ConfigIssue;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a configuration could not be used. Exit code 2 (issue 2, item 2).
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
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub msgx: Msgx,
}

/// `[msgx]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Msgx {
    pub postgres: Postgres,
    pub mailbox: Mailbox,
    pub kafka: Kafka,
    pub pipeline: Pipeline,
    pub dispatch: Dispatch,
    pub schd: Schd,
    pub identity: Identity,
    /// `msgx.ignore`: TYPE or TYPE-STYP rules, case-insensitive (design §2).
    pub ignore: Vec<String>,
    pub airport: Airport,
    pub archive: Archive,
    pub snaplog: Snaplog,
    pub flight_history: FlightHistory,
    pub request: Request,
    pub job_run: JobRun,
    pub daemon: Daemon,
    pub log: Log,
    pub http: Http,
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
            identity: Identity::default(),
            ignore: ["LDM", "REGN", "RSTA", "EROR"].map(String::from).to_vec(),
            airport: Airport::default(),
            archive: Archive::default(),
            snaplog: Snaplog::default(),
            flight_history: FlightHistory::default(),
            request: Request::default(),
            job_run: JobRun::default(),
            daemon: Daemon::default(),
            log: Log::default(),
            http: Http::default(),
        }
    }
}

/// `[msgx.postgres]`: msgx's own database (the state authority).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Postgres {
    /// Connection URL; env `MSGX_DATABASE_URL` overrides it.
    pub url: String,
    /// Pool size for jobs (the instance lock uses its own unpooled session).
    pub max_connections: u32,
    /// How long to wait for a pooled connection.
    pub acquire_timeout: Dur,
}

impl Default for Postgres {
    fn default() -> Self {
        Self {
            url: "postgres://msgx:msgx@127.0.0.1:5432/msgx".into(),
            max_connections: 8,
            acquire_timeout: Dur::secs(5),
        }
    }
}

/// `[msgx.mailbox]`: the shared MySQL mailbox (CMINMSGS / COUTMSGS).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Mailbox {
    /// Connection URL; env `MSGX_MAILBOX_URL` overrides it.
    pub url: String,
    /// Inbound table.
    pub inbox_table: String,
    /// Outbound table.
    pub outbox_table: String,
    /// The processing-mark column written by backfill (sis-format §6.1).
    pub processed_column: String,
    /// `msgx.mailbox.raw-retention` (R_keep): the owner's raw retention; used
    /// only to validate R ≤ R_keep and dedup-memory ≥ R_keep (design §9.3).
    pub raw_retention: Dur,
    /// `msgx.mailbox.shadow`: true = never write to the mailbox.
    pub shadow: bool,
    /// Bound on connecting and on each statement.
    pub timeout: Dur,
}

impl Default for Mailbox {
    fn default() -> Self {
        Self {
            url: "mysql://msgx:msgx@127.0.0.1:3306/msgx_mailbox".into(),
            inbox_table: "CMINMSGS".into(),
            outbox_table: "COUTMSGS".into(),
            processed_column: "CMINMSGS_DATE_PROCESSED".into(),
            raw_retention: Dur::days(7),
            shadow: false,
            timeout: Dur::secs(10),
        }
    }
}

/// `[msgx.kafka]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Kafka {
    /// Bootstrap servers; env `MSGX_KAFKA_BROKERS` overrides it.
    pub brokers: String,
    /// Change notifications (design §8.1).
    pub topic_msg: String,
    /// Latest full state per flight, compacted (design §8.2).
    pub topic_schd: String,
    /// librdkafka `message.timeout.ms`: how long a send may take in total.
    pub message_timeout: Dur,
    /// Bound on each blocking call (flush, metadata).
    pub call_timeout: Dur,
    /// librdkafka `reconnect.backoff.max.ms`; low values make recovery after
    /// a broker outage fast (infra-notes: 1s recovers in ≈1 s, 10 s default in ≥10 s).
    pub reconnect_backoff_max: Dur,
    /// Extra librdkafka properties (e.g. security settings).
    pub properties: BTreeMap<String, String>,
}

impl Default for Kafka {
    fn default() -> Self {
        Self {
            brokers: "127.0.0.1:9092".into(),
            topic_msg: "msg".into(),
            topic_schd: "schd".into(),
            message_timeout: Dur::mins(5),
            call_timeout: Dur::secs(30),
            reconnect_backoff_max: Dur::secs(1),
            properties: BTreeMap::new(),
        }
    }
}

impl Kafka {
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
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Pipeline {
    /// Mailbox rows read per ingest round.
    pub claim_batch: u32,
    /// A hole older than this is permanent (§4.1).
    pub max_commit_delay: Dur,
    /// Pump idle wait.
    pub poll_interval: Dur,
    /// Processing attempts before DEAD(EXHAUSTED).
    pub max_attempts: u32,
    /// One tier per retry: exactly max-attempts − 1 tiers (§9.1).
    pub retry_backoff: Vec<Dur>,
    /// Rows per backfill scan.
    pub backfill_batch: u32,
    /// Backfill retry tiers; the last tier repeats.
    pub backfill_backoff: Vec<Dur>,
    /// R: forced re-mark window and transient-abandon deadline (§6.3). R ≤ R_keep.
    pub backfill_deadline: Dur,
    /// Alert threshold only; never abandons (§6.3).
    pub backfill_max_attempts: u32,
    /// `min` / `zero` / `max` / an ID; unset = no seeding (§4.3).
    pub cutover_watermark: Option<String>,
    /// SENT events are kept this long.
    pub event_retention: Dur,
    /// Group commit: up to this many consecutive FLOP/FDEL head messages in
    /// one transaction, each with its own outcome; any error falls back to
    /// one message per transaction. 1 = off.
    pub group_commit: u32,
}

impl Default for Pipeline {
    fn default() -> Self {
        Self {
            claim_batch: 500,
            max_commit_delay: Dur::secs(30),
            poll_interval: Dur::secs(1),
            max_attempts: 5,
            retry_backoff: vec![Dur::secs(10), Dur::mins(1), Dur::mins(5), Dur::mins(15)],
            backfill_batch: 200,
            backfill_backoff: vec![Dur::secs(30), Dur::mins(2), Dur::mins(10), Dur::hours(1)],
            backfill_deadline: Dur::hours(24),
            backfill_max_attempts: 20,
            cutover_watermark: None,
            event_retention: Dur::days(7),
            group_commit: 50,
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

/// `[msgx.dispatch]` (design §8.1).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Dispatch {
    /// Events per dispatch run.
    pub batch: u32,
    /// Message-specific failures before DEAD.
    pub max_attempts: u32,
    /// Transient failures retry without counting until this long.
    pub transient_deadline: Dur,
}

impl Default for Dispatch {
    fn default() -> Self {
        Self {
            batch: 500,
            max_attempts: 10,
            transient_deadline: Dur::hours(1),
        }
    }
}

/// What SCHD DNLD/RESP does with a field the package lacks (Q13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AbsentFieldPolicy {
    /// Keep the stored value (design §12.1).
    #[default]
    Preserve,
    /// Clear it (the SIS rule, SIS:3.16-note-4).
    Clear,
}

/// `[msgx.schd]` (design §8.2).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Schd {
    /// schd aggregation period.
    pub flush_interval: Dur,
    /// FLIDs per flush.
    pub flush_limit: u32,
    /// preserve | clear.
    pub absent_field_policy: AbsentFieldPolicy,
}

impl Default for Schd {
    fn default() -> Self {
        Self {
            flush_interval: Dur::secs(2),
            flush_limit: 500,
            absent_field_policy: AbsentFieldPolicy::Preserve,
        }
    }
}

/// `[msgx.identity]` (design §2, C-20).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Identity {
    /// Add DTTM's date to the identity. Never change it after go-live.
    pub include_day_boundary: bool,
}

/// `[msgx.airport]` (design §11.2).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Airport {
    /// IANA zone name for the operation day.
    pub timezone: String,
    /// Local time `HH:MM` at which an operation day starts.
    pub day_cutover: String,
}

impl Default for Airport {
    fn default() -> Self {
        Self {
            timezone: "Asia/Shanghai".into(),
            day_cutover: "00:00".into(),
        }
    }
}

impl Airport {
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
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Archive {
    /// After a terminal state that has settled its backfill.
    pub after: Dur,
    /// ARCHIVED shadow rows kept; ≥ R_keep (INV-9).
    pub dedup_memory: Dur,
    /// PROC_STATE_HST rows kept (G-HST-RETENTION).
    pub hst_retention: Dur,
}

impl Default for Archive {
    fn default() -> Self {
        Self {
            after: Dur::days(3),
            dedup_memory: Dur::days(30),
            hst_retention: Dur::days(180),
        }
    }
}

/// `[msgx.snaplog]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Snaplog {
    pub retention: Dur,
}

impl Default for Snaplog {
    fn default() -> Self {
        Self {
            retention: Dur::days(30),
        }
    }
}

/// `[msgx.flight-history]` (design §12.5).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct FlightHistory {
    /// No update for this long, with the operation day past.
    pub quiet_period: Dur,
    /// After the operation day ends.
    pub min_age: Dur,
    /// Flight history rows kept.
    pub hst_retention: Dur,
}

impl Default for FlightHistory {
    fn default() -> Self {
        Self {
            quiet_period: Dur::hours(48),
            min_age: Dur::days(3),
            hst_retention: Dur::days(400),
        }
    }
}

/// `[msgx.request]` (design §7.2).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Request {
    /// A SENT request with no matching RESP after this becomes EXPIRED
    /// (`request-expiry`); so does a PENDING one never written to COUTMSGS.
    pub expiry: Dur,
    /// Closed requests are kept this long.
    pub retention: Dur,
    /// Tolerance for the degraded RESP match (Q5): a RESP whose DTTM is
    /// earlier than the send time by more than this is unmatched.
    pub clock_skew: Dur,
    /// SNDR of outbound requests (1–4 letters or digits; default `VIEW`).
    pub sndr: String,
    /// COUTMSGS ROUTINGID of RQFD rows (default `VIEWRQFD`, sis-format §5).
    pub routing_rqfd: String,
    /// COUTMSGS ROUTINGID of RQRD rows (default `VIEWRQRD`, sis-format §5).
    pub routing_rqrd: String,
}

impl Default for Request {
    fn default() -> Self {
        Self {
            expiry: Dur::mins(10),
            retention: Dur::days(30),
            clock_skew: Dur::mins(2),
            sndr: "VIEW".into(),
            routing_rqfd: "VIEWRQFD".into(),
            routing_rqrd: "VIEWRQRD".into(),
        }
    }
}

/// `[msgx.job-run]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct JobRun {
    /// JOB_RUN rows kept.
    pub retention: Dur,
}

impl Default for JobRun {
    fn default() -> Self {
        Self {
            retention: Dur::days(30),
        }
    }
}

/// `[msgx.daemon]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Daemon {
    /// Schedule profile: a name under `schedules/` (`daemon`,
    /// `maintenance-window`) or a path to a profile file.
    pub schedule: String,
    /// How often the lock holder re-checks its lock session.
    pub lock_check_interval: Dur,
    /// How often a standby tries to take the lock.
    pub standby_poll_interval: Dur,
    /// On SIGINT/SIGTERM, how long the running batch may take to finish.
    pub shutdown_timeout: Dur,
}

impl Default for Daemon {
    fn default() -> Self {
        Self {
            schedule: "daemon".into(),
            lock_check_interval: Dur::secs(2),
            standby_poll_interval: Dur::secs(2),
            shutdown_timeout: Dur::secs(30),
        }
    }
}

/// `[msgx.log]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Log {
    /// tracing filter, e.g. `info` or `msgx=debug,info`; env `RUST_LOG` wins.
    pub level: String,
    /// Directory for daily rolling files; empty = stdout only.
    pub dir: String,
    /// `text` or `json` for the stdout format.
    pub format: String,
}

impl Default for Log {
    fn default() -> Self {
        Self {
            level: "info".into(),
            dir: "var/log".into(),
            format: "text".into(),
        }
    }
}

/// `[msgx.http]`: optional listeners, off by default.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct Http {
    /// Compat entry `POST /cminmsgs/send` (§4.4); unset = off.
    pub compat_listen: Option<String>,
    /// Compat entry body limit in bytes.
    pub compat_max_body: usize,
    /// Prometheus `/metrics`, `/healthz`, `/readyz` served by the daemon;
    /// unset = off. Loopback addresses only (the endpoints are not
    /// authenticated; docs/operations.md). Port 0 = any free port (logged).
    pub metrics_listen: Option<String>,
    /// `/healthz` answers 503 once the scheduler heartbeat is older than this.
    pub health_max_age: Dur,
    /// Bound on each `/readyz` check and on the database reads of a `/metrics` scrape.
    pub probe_timeout: Dur,
    /// `/readyz` answers 503 when the mailbox has rows beyond W and W has not
    /// moved for this long (longer than `msgx.pipeline.max-commit-delay`, so
    /// waiting out a hole is not a stall).
    pub watermark_stall: Dur,
}

impl Default for Http {
    fn default() -> Self {
        Self {
            compat_listen: None,
            compat_max_body: 1 << 20,
            metrics_listen: None,
            health_max_age: Dur::secs(15),
            probe_timeout: Dur::secs(5),
            watermark_stall: Dur::mins(2),
        }
    }
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
            message: e.to_string(),
        })
    }

    /// Resolves the file (see module docs), applies env overrides and
    /// validates. Errors name the key and the rule.
    pub fn load(explicit: Option<&Path>) -> Result<Loaded, ConfigError> {
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
        config.validate().map_err(ConfigError::Invalid)?;
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

    /// The effective config as TOML with passwords masked (`config show`).
    pub fn to_masked_toml(&self) -> String {
        let mut shown = self.clone();
        shown.msgx.postgres.url = mask_url(&shown.msgx.postgres.url);
        shown.msgx.mailbox.url = mask_url(&shown.msgx.mailbox.url);
        for (k, v) in shown.msgx.kafka.properties.iter_mut() {
            let k = k.to_ascii_lowercase();
            if k.contains("password") || k.contains("secret") || k.contains("key") {
                *v = "****".into();
            }
        }
        toml::to_string_pretty(&shown).unwrap_or_else(|e| format!("# cannot render: {e}\n"))
    }
}

/// `scheme://user:secret@host` → `scheme://user:****@host`.
pub fn mask_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let Some(at) = rest.find('@') else {
        return url.to_string();
    };
    let creds = &rest[..at];
    match creds.find(':') {
        Some(colon) => format!(
            "{}://{}:****{}",
            &url[..scheme_end],
            &creds[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_parameter_table() {
        let c = Config::default();
        let p = &c.msgx.pipeline;
        assert_eq!(p.claim_batch, 500);
        assert_eq!(p.max_commit_delay, Dur::secs(30));
        assert_eq!(p.max_attempts, 5);
        assert_eq!(p.retry_backoff.len(), 4);
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
        let local = Config::from_toml(include_str!("../../config/msgx.toml"), "config/msgx.toml")
            .expect("config/msgx.toml parses");
        assert_eq!(local.to_masked_toml(), Config::default().to_masked_toml());
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
        let shown = Config::default().to_masked_toml();
        assert!(shown.contains("msgx:****@127.0.0.1:5432"), "{shown}");
        assert!(!shown.contains("msgx:msgx@"));
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
