//! The startup self-check (design §9.1, and §9.3: the time constants in
//! their order).
//! Each issue names the TOML key and the rule it breaks.

use super::COMPAT_TOKEN_ENV;
use super::{Config, CutoverWatermark, Dur, Msgx};
use std::fmt;

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    /// The full TOML key, e.g. `msgx.pipeline.retry-backoff`.
    pub key: String,
    /// The rule, in words.
    pub rule: String,
}

impl fmt::Display for ConfigIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.rule)
    }
}

impl Config {
    /// Checks every section, in the order of the file's tables, and returns
    /// every broken rule, each naming its key. A rule that relates two
    /// sections belongs to the section of the key it names.
    pub fn validate(&self) -> Result<(), Vec<ConfigIssue>> {
        let m = &self.msgx;
        let mut out = Issues::default();
        postgres(m, &mut out);
        mailbox(m, &mut out);
        kafka(m, &mut out);
        pipeline(m, &mut out);
        dispatch(m, &mut out);
        schd(m, &mut out);
        season(m, &mut out);
        ignore(m, &mut out);
        airport(m, &mut out);
        archive(m, &mut out);
        retention(m, &mut out);
        request(m, &mut out);
        daemon(m, &mut out);
        log(m, &mut out);
        telemetry(m, &mut out);
        http(m, &mut out);
        console(m, &mut out);
        acris(m, &mut out);
        if out.0.is_empty() { Ok(()) } else { Err(out.0) }
    }

    /// Keys that are still accepted but do nothing, with what to do instead
    /// (`msgx config check` prints them as warnings).
    pub fn deprecations(&self) -> Vec<ConfigIssue> {
        let m = &self.msgx;
        let mut out = Vec::new();
        if m.schd.flush_interval.is_some() {
            out.push(ConfigIssue {
                key: "msgx.schd.flush-interval".into(),
                rule: "deprecated and ignored: schd-flush runs at its cron line in the schedule \
                       profile (schedules/daemon.toml); remove the key"
                    .into(),
            });
        }
        out
    }
}

/// The broken rules found so far, in the order they were found.
#[derive(Default)]
struct Issues(Vec<ConfigIssue>);

impl Issues {
    fn fail(&mut self, key: impl Into<String>, rule: impl Into<String>) {
        self.0.push(ConfigIssue {
            key: key.into(),
            rule: rule.into(),
        });
    }

    fn extend<K: Into<String>>(&mut self, issues: impl IntoIterator<Item = (K, String)>) {
        for (key, rule) in issues {
            self.fail(key, rule);
        }
    }

    /// Every duration must be > 0.
    fn positive_durations<K: Into<String>>(
        &mut self,
        durations: impl IntoIterator<Item = (K, Dur)>,
    ) {
        for (key, d) in durations {
            if d.is_zero() {
                self.fail(key, "every duration must be > 0");
            }
        }
    }

    /// Every duration of a backoff list (`key[i]`) must be > 0.
    fn positive_tiers(&mut self, key: &str, tiers: &[Dur]) {
        self.positive_durations(
            tiers
                .iter()
                .enumerate()
                .map(|(i, d)| (format!("{key}[{i}]"), *d)),
        );
    }

    /// Counts, sizes and limits must be > 0.
    fn positive_counts(&mut self, counts: impl IntoIterator<Item = (&'static str, u64)>) {
        for (key, n) in counts {
            if n == 0 {
                self.fail(key, "must be > 0");
            }
        }
    }
}

/// `[msgx.postgres]`: positive bounds; the idle-in-transaction limit outlasts
/// a mailbox call (the backfill scan holds its gate transaction across one);
/// only URL parameters msgx knows.
fn postgres(m: &Msgx, out: &mut Issues) {
    let p = &m.postgres;
    out.positive_durations([
        ("msgx.postgres.acquire-timeout", p.acquire_timeout),
        ("msgx.postgres.statement-timeout", p.statement_timeout),
        ("msgx.postgres.lock-timeout", p.lock_timeout),
        (
            "msgx.postgres.idle-in-transaction-timeout",
            p.idle_in_transaction_timeout,
        ),
        ("msgx.postgres.recheck-interval", p.recheck_interval),
    ]);
    out.positive_counts([("msgx.postgres.max-connections", p.max_connections.into())]);
    if p.idle_in_transaction_timeout <= m.mailbox.timeout {
        out.fail(
            "msgx.postgres.idle-in-transaction-timeout",
            format!(
                "must be longer than msgx.mailbox.timeout ({}): the backfill scan keeps a \
                 transaction open across one mailbox call; is {}",
                m.mailbox.timeout, p.idle_in_transaction_timeout
            ),
        );
    }
    // The driver would log an unknown parameter with
    // its value (a secret, e.g. `sslpassword`) and go on without it.
    let unknown = super::unknown_postgres_url_parameters(&p.url);
    if !unknown.is_empty() {
        out.fail(
            "msgx.postgres.url",
            format!(
                "unknown URL parameter(s) {}: msgx reads only {} (docs/production/databases.md)",
                unknown.join(", "),
                super::POSTGRES_URL_PARAMETERS.join(", ")
            ),
        );
    }
}

/// `[msgx.mailbox]`: positive bounds; the server's statement bound is
/// shorter than the client's, so the server's error arrives first; plain
/// SQL identifiers; a parsable URL when set; the TLS rules.
fn mailbox(m: &Msgx, out: &mut Issues) {
    let b = &m.mailbox;
    out.positive_durations([
        ("msgx.mailbox.raw-retention", b.raw_retention),
        ("msgx.mailbox.timeout", b.timeout),
        ("msgx.mailbox.statement-timeout", b.statement_timeout),
    ]);
    if b.statement_timeout >= b.timeout {
        out.fail(
            "msgx.mailbox.statement-timeout",
            format!(
                "must be shorter than msgx.mailbox.timeout ({}), so the server stops the \
                 statement before msgx abandons the call; is {}",
                b.timeout, b.statement_timeout
            ),
        );
    }
    for (key, ident) in [
        ("msgx.mailbox.inbox-table", &b.inbox_table),
        ("msgx.mailbox.outbox-table", &b.outbox_table),
        ("msgx.mailbox.processed-column", &b.processed_column),
    ] {
        if ident.is_empty() || !ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.fail(
                key,
                format!("{ident:?} must be a plain SQL identifier (letters, digits, _)"),
            );
        }
    }
    // Unset is valid here: a command that needs the URL refuses then.
    if !b.url.is_empty()
        && let Err(e) = mysql_async::Opts::from_url(&b.url)
    {
        out.fail("msgx.mailbox.url", format!("not a valid mysql:// URL: {e}"));
    }
    out.extend(super::mailbox_tls_issues(b));
}

/// `[msgx.kafka]`: the delivery guarantees come from msgx's own keys, never
/// from `properties`; positive bounds; three legal, distinct topics.
fn kafka(m: &Msgx, out: &mut Issues) {
    let k = &m.kafka;
    for name in k.properties.keys() {
        if super::RESERVED_KAFKA_PROPERTIES.contains(&name.as_str()) {
            out.fail(
                "msgx.kafka.properties",
                format!(
                    "may not set {name:?}: msgx sets it from its own key (delivery guarantees)"
                ),
            );
        }
    }
    out.positive_durations([
        ("msgx.kafka.message-timeout", k.message_timeout),
        ("msgx.kafka.call-timeout", k.call_timeout),
        ("msgx.kafka.reconnect-backoff-max", k.reconnect_backoff_max),
    ]);
    out.extend(topic_issues(k));
}

/// `[msgx.pipeline]`: the retry schedules and the poll cadence; backfill
/// has a tier and R ≤ R_keep (§9.3 (1), C-7); positive bounds and counts; a
/// cutover choice that parses.
fn pipeline(m: &Msgx, out: &mut Issues) {
    let p = &m.pipeline;
    out.extend(retry_issues(p));
    for (class, schedule) in p.retry.by_key() {
        out.positive_tiers(
            &format!("msgx.pipeline.retry.{class}.backoff"),
            &schedule.backoff,
        );
    }
    out.extend(p.poll_interval.problems());
    if p.backfill_backoff.is_empty() {
        out.fail("msgx.pipeline.backfill-backoff", "needs at least one tier");
    }
    out.positive_tiers("msgx.pipeline.backfill-backoff", &p.backfill_backoff);
    if p.backfill_deadline > m.mailbox.raw_retention {
        out.fail(
            "msgx.pipeline.backfill-deadline",
            format!(
                "R ({}) must be ≤ msgx.mailbox.raw-retention R_keep ({})",
                p.backfill_deadline, m.mailbox.raw_retention
            ),
        );
    }
    out.positive_durations([
        ("msgx.pipeline.max-commit-delay", p.max_commit_delay),
        ("msgx.pipeline.backfill-deadline", p.backfill_deadline),
        ("msgx.pipeline.event-retention", p.event_retention),
        ("msgx.pipeline.head-blocked-alert", p.head_blocked_alert),
        ("msgx.pipeline.late-row-recheck", p.late_row_recheck),
    ]);
    out.positive_counts([
        ("msgx.pipeline.claim-batch", p.claim_batch.into()),
        ("msgx.pipeline.backfill-batch", p.backfill_batch.into()),
        ("msgx.pipeline.group-commit", p.group_commit.into()),
        (
            "msgx.pipeline.backfill-max-attempts",
            p.backfill_max_attempts.into(),
        ),
        ("msgx.pipeline.read-ahead-bytes", p.read_ahead_bytes),
        ("msgx.pipeline.max-message-bytes", p.max_message_bytes),
    ]);
    if let Some(w) = &p.cutover_watermark
        && let Err(e) = w.parse::<CutoverWatermark>()
    {
        out.fail("msgx.pipeline.cutover-watermark", e);
    }
}

/// `[msgx.dispatch]`: §9.1 for delivery too, one tier per counted retry of
/// an outbox row; positive bounds, tiers and counts.
fn dispatch(m: &Msgx, out: &mut Issues) {
    let d = &m.dispatch;
    let tiers = d.retry_backoff.len();
    let attempts = d.max_attempts as usize;
    if attempts > 0 && tiers != attempts - 1 {
        out.fail(
            "msgx.dispatch.retry-backoff",
            format!(
                "needs exactly max-attempts − 1 = {} tiers (one per retry), has {tiers}",
                attempts - 1
            ),
        );
    }
    out.positive_durations([
        ("msgx.dispatch.transient-deadline", d.transient_deadline),
        ("msgx.dispatch.in-doubt-deadline", d.in_doubt_deadline),
    ]);
    out.positive_tiers("msgx.dispatch.retry-backoff", &d.retry_backoff);
    out.positive_counts([
        ("msgx.dispatch.batch", d.batch.into()),
        ("msgx.dispatch.max-attempts", d.max_attempts.into()),
    ]);
}

/// `[msgx.schd]`: positive counts.
fn schd(m: &Msgx, out: &mut Issues) {
    out.positive_counts([
        ("msgx.schd.flush-limit", m.schd.flush_limit.into()),
        ("msgx.schd.apply-slice", m.schd.apply_slice.into()),
    ]);
}

/// `[msgx.season]`: positive counts.
fn season(m: &Msgx, out: &mut Issues) {
    out.positive_counts([
        ("msgx.season.keep", m.season.keep.into()),
        ("msgx.season.flush-limit", m.season.flush_limit.into()),
    ]);
}

/// `msgx.ignore`: each rule is TYPE, TYPE-STYP or TYPE-*.
fn ignore(m: &Msgx, out: &mut Issues) {
    for (i, rule) in m.ignore.iter().enumerate() {
        if !valid_ignore_rule(rule) {
            out.fail(
                format!("msgx.ignore[{i}]"),
                format!("{rule:?} is not TYPE, TYPE-STYP or TYPE-* (letters and digits)"),
            );
        }
    }
}

/// `[msgx.airport]`: a chrono-tz zone and a local time HH:MM.
fn airport(m: &Msgx, out: &mut Issues) {
    let a = &m.airport;
    if a.timezone.parse::<chrono_tz::Tz>().is_err() {
        out.fail(
            "msgx.airport.timezone",
            format!(
                "{:?} is not a time zone known to chrono-tz (e.g. Asia/Shanghai)",
                a.timezone
            ),
        );
    }
    if chrono::NaiveTime::parse_from_str(&a.day_cutover, "%H:%M").is_err() {
        out.fail(
            "msgx.airport.day-cutover",
            format!("{:?} is not a local time HH:MM", a.day_cutover),
        );
    }
    if a.iata.len() != 3 || !a.iata.bytes().all(|b| b.is_ascii_uppercase()) {
        out.fail(
            "msgx.airport.iata",
            format!(
                "{:?} is not an IATA airport code (3 upper-case letters, e.g. CTU)",
                a.iata
            ),
        );
    }
}

/// `[msgx.archive]`: positive durations and the time order of §9.3: dedup
/// memory ≥ R_keep (INV-9); the HST copy outlives the dedup memory (a shadow
/// row expires by its copy's age) and R_keep (archived abandoned rows are
/// C-8 evidence for at least R_keep; G-HST-RETENTION).
fn archive(m: &Msgx, out: &mut Issues) {
    let a = &m.archive;
    let r_keep = m.mailbox.raw_retention;
    out.positive_durations([
        ("msgx.archive.after", a.after),
        ("msgx.archive.dedup-memory", a.dedup_memory),
        ("msgx.archive.hst-retention", a.hst_retention),
    ]);
    if a.dedup_memory < r_keep {
        out.fail(
            "msgx.archive.dedup-memory",
            format!(
                "must be ≥ msgx.mailbox.raw-retention R_keep ({r_keep}), is {}",
                a.dedup_memory
            ),
        );
    }
    if a.hst_retention < a.dedup_memory {
        out.fail(
            "msgx.archive.hst-retention",
            format!(
                "must be ≥ msgx.archive.dedup-memory ({}): a shadow row expires by the age of \
                 its PROC_STATE_HST copy, so a copy purged first would keep it forever; is {}",
                a.dedup_memory, a.hst_retention
            ),
        );
    }
    if a.hst_retention < r_keep {
        out.fail(
            "msgx.archive.hst-retention",
            format!(
                "must be ≥ msgx.mailbox.raw-retention R_keep ({r_keep}): the abandoned-backfill \
                 evidence stays queryable for R_keep (§9.3, C-16); is {}",
                a.hst_retention
            ),
        );
    }
}

/// `[msgx.snaplog]`, `[msgx.flight-history]`, `[msgx.job-run]`: positive
/// retention periods.
fn retention(m: &Msgx, out: &mut Issues) {
    let f = &m.flight_history;
    out.positive_durations([
        ("msgx.snaplog.retention", m.snaplog.retention),
        ("msgx.flight-history.quiet-period", f.quiet_period),
        ("msgx.flight-history.min-age", f.min_age),
        ("msgx.flight-history.hst-retention", f.hst_retention),
        ("msgx.job-run.retention", m.job_run.retention),
    ]);
}

/// `[msgx.request]`: positive durations; SNDR is 1–4 letters or digits (the
/// mailbox's SUBSYSTEM_NAME is VARCHAR(4), sis-format §1.2) and ROUTINGID
/// 1–23 (COUTMSGS VARCHAR(23), §5).
fn request(m: &Msgx, out: &mut Issues) {
    let r = &m.request;
    out.positive_durations([
        ("msgx.request.expiry", r.expiry),
        ("msgx.request.retention", r.retention),
        ("msgx.request.clock-skew", r.clock_skew),
    ]);
    let code = |s: &str, max: usize| {
        !s.is_empty() && s.len() <= max && s.chars().all(|c| c.is_ascii_alphanumeric())
    };
    if !code(&r.sndr, 4) {
        out.fail(
            "msgx.request.sndr",
            format!("{:?} must be 1–4 letters or digits (SIS SNDR)", r.sndr),
        );
    }
    for (key, v) in [
        ("msgx.request.routing-rqfd", &r.routing_rqfd),
        ("msgx.request.routing-rqrd", &r.routing_rqrd),
    ] {
        if !code(v, 23) {
            out.fail(
                key,
                format!("{v:?} must be 1–23 letters or digits (COUTMSGS ROUTINGID)"),
            );
        }
    }
}

/// `[msgx.daemon]`: positive intervals. The schedule profile is checked by
/// the job catalogue (`jobs::profile::config_issues`), above this module.
fn daemon(m: &Msgx, out: &mut Issues) {
    let d = &m.daemon;
    out.positive_durations([
        ("msgx.daemon.lock-check-interval", d.lock_check_interval),
        ("msgx.daemon.standby-poll-interval", d.standby_poll_interval),
        ("msgx.daemon.shutdown-timeout", d.shutdown_timeout),
        ("msgx.daemon.job-overdue-margin", d.job_overdue_margin),
    ]);
}

/// `[msgx.log]`: retention of at least one day (daily files); text or json.
fn log(m: &Msgx, out: &mut Issues) {
    let l = &m.log;
    if l.retention < Dur::days(1) {
        out.fail(
            "msgx.log.retention",
            format!("must be at least 1d (daily files), is {}", l.retention),
        );
    }
    if !matches!(l.format.as_str(), "text" | "json") {
        out.fail(
            "msgx.log.format",
            format!("{:?} must be text or json", l.format),
        );
    }
}

/// `[msgx.telemetry]`: see [`otlp_issue`].
fn telemetry(m: &Msgx, out: &mut Issues) {
    if let Some(rule) = otlp_issue(&m.telemetry) {
        out.fail("msgx.telemetry.otlp-endpoint", rule);
    }
}

/// `[msgx.http]`: positive bounds; the ops endpoints are unauthenticated,
/// so loopback only; the compat entry's rules ([`compat_issues`]);
/// the health windows outlast what they wait for (a standby beats once per
/// poll; waiting out a hole is not a stall).
fn http(m: &Msgx, out: &mut Issues) {
    let h = &m.http;
    out.positive_durations([
        ("msgx.http.health-max-age", h.health_max_age),
        ("msgx.http.probe-timeout", h.probe_timeout),
        ("msgx.http.watermark-stall", h.watermark_stall),
        ("msgx.http.header-read-timeout", h.header_read_timeout),
        ("msgx.http.body-timeout", h.body_timeout),
        (
            "msgx.http.compat-record-retention",
            h.compat_record_retention,
        ),
    ]);
    if let Some(addr) = &h.metrics_listen {
        match addr.parse::<std::net::SocketAddr>() {
            Err(_) => out.fail(
                "msgx.http.metrics-listen",
                format!("{addr:?} is not an IP:PORT address"),
            ),
            Ok(a) if !a.ip().is_loopback() => out.fail(
                "msgx.http.metrics-listen",
                format!(
                    "{addr:?} is not a loopback address: the endpoints are not authenticated; \
                     bind 127.0.0.1 or ::1 and put a reverse proxy in front (docs/operations.md)"
                ),
            ),
            Ok(_) => {}
        }
    }
    let env_token = std::env::var_os(COMPAT_TOKEN_ENV).is_some_and(|v| !v.is_empty());
    out.0.extend(compat_issues(h, env_token));
    if h.health_max_age <= m.daemon.standby_poll_interval {
        out.fail(
            "msgx.http.health-max-age",
            format!(
                "must be longer than msgx.daemon.standby-poll-interval ({}): a standby beats once per poll",
                m.daemon.standby_poll_interval
            ),
        );
    }
    if h.watermark_stall <= m.pipeline.max_commit_delay {
        out.fail(
            "msgx.http.watermark-stall",
            format!(
                "must be longer than msgx.pipeline.max-commit-delay ({}): waiting out a hole is not a stall",
                m.pipeline.max_commit_delay
            ),
        );
    }
}

/// `[msgx.console]`: positive durations and the rules of [`console_issues`].
fn console(m: &Msgx, out: &mut Issues) {
    out.positive_durations([
        ("msgx.console.session-lifetime", m.console.session_lifetime),
        ("msgx.console.login-window", m.console.login_window),
    ]);
    out.0.extend(console_issues(&m.console, &m.http));
    if let Some(o) = &m.console.oidc {
        out.0.extend(super::console_access::oidc_issues(o));
    }
}

/// The console parses its address, and a non-loopback console
/// needs users (a console anyone on the network could open would show the
/// feed's internals to everyone and, with a user file added later, invite
/// guessing; refusing is the safe default, as Hangfire's local-only is).
///
/// A console without login only when `anonymous-viewer`
/// asks for it; a non-loopback console only over HTTPS (its own TLS, or a
/// TLS-terminating proxy declared in `msgx.http.trusted-proxies`), since
/// passwords and session cookies cross the network; a wildcard listen
/// address names the hosts it answers to (DNS rebinding).
fn console_issues(c: &super::Console, http: &super::Http) -> Vec<ConfigIssue> {
    let mut out = Vec::new();
    let mut fail = |key: &str, rule: String| {
        out.push(ConfigIssue {
            key: key.to_string(),
            rule,
        })
    };
    // Users log in through the users file, single sign-on, or both.
    let login = c.users_file.is_some() || c.oidc.is_some();
    if let Some(addr) = &c.listen {
        match addr.parse::<std::net::SocketAddr>() {
            Err(_) => fail(
                "msgx.console.listen",
                format!("{addr:?} is not an IP:PORT address"),
            ),
            Ok(a) if !a.ip().is_loopback() && !login => fail(
                "msgx.console.users-file",
                format!(
                    "must be set: msgx.console.listen {addr:?} is not a loopback address, and a \
                     console without users would be open to the network (docs/console.md)"
                ),
            ),
            Ok(_) if !login && !c.anonymous_viewer => fail(
                "msgx.console.users-file",
                "must be set (operators log in), or msgx.console.anonymous-viewer = true for a \
                 read-only console without login on loopback (docs/console.md)"
                    .into(),
            ),
            Ok(a) => {
                let plain = c.tls_cert.is_none() && http.trusted_proxies.is_empty();
                if !a.ip().is_loopback() && plain {
                    fail(
                        "msgx.console.tls-cert",
                        format!(
                            "must be set (with tls-key) for msgx.console.listen {addr:?}: a \
                             non-loopback console over plain HTTP would send passwords and \
                             session cookies in the clear; or declare the TLS-terminating \
                             reverse proxy in msgx.http.trusted-proxies (docs/console.md)"
                        ),
                    );
                }
                if a.ip().is_unspecified() && c.allowed_hosts.is_empty() {
                    fail(
                        "msgx.console.allowed-hosts",
                        format!(
                            "must name the host names operators use: msgx.console.listen \
                             {addr:?} is a wildcard address, so no Host header could be \
                             checked against it (DNS rebinding; docs/console.md)"
                        ),
                    );
                }
            }
        }
    }
    if c.anonymous_viewer && login {
        fail(
            "msgx.console.anonymous-viewer",
            "must be false when users-file or oidc is set: with users, every visitor logs in"
                .into(),
        );
    }
    for h in &c.allowed_hosts {
        let bare = h.trim();
        if bare.is_empty() || bare.contains(['/', ' ', '@', '*']) || bare.contains("://") {
            fail(
                "msgx.console.allowed-hosts",
                format!("{h:?} is not a host name or address (no scheme, path or wildcard)"),
            );
        }
    }
    if c.session_idle_timeout.std().is_zero() {
        fail(
            "msgx.console.session-idle-timeout",
            "must be more than 0".into(),
        );
    }
    if c.sessions_per_user == 0 {
        fail(
            "msgx.console.sessions-per-user",
            "must be at least 1 (0 would end every session at its login)".into(),
        );
    }
    if c.tls_cert.is_some() != c.tls_key.is_some() {
        fail(
            "msgx.console.tls-cert",
            "set tls-cert and tls-key together, or neither".into(),
        );
    }
    if c.login_attempts == 0 {
        fail(
            "msgx.console.login-attempts",
            "must be at least 1 (0 would lock every user out)".into(),
        );
    }
    if c.login_attempts_per_client < c.login_attempts {
        fail(
            "msgx.console.login-attempts-per-client",
            format!(
                "must be at least login-attempts ({}): otherwise one user's typos lock out \
                 every user of the same address",
                c.login_attempts
            ),
        );
    }
    if c.pool_size == 0 {
        fail(
            "msgx.console.pool-size",
            "must be at least 1 (the console's own PostgreSQL sessions)".into(),
        );
    }
    if c.statement_timeout.std().is_zero() {
        fail(
            "msgx.console.statement-timeout",
            "must be more than 0 (0 would let a page query run forever)".into(),
        );
    }
    for (key, rule) in super::live_issues(&c.live) {
        fail(key, rule);
    }
    out
}

/// `[msgx.acris]`: an address, a tokens file with it, HTTPS off
/// loopback (bearer tokens must not cross the network in the clear: its own
/// TLS or a TLS-terminating proxy in `msgx.http.trusted-proxies`, as the
/// console), TLS files in pairs, a pool and a statement timeout.
fn acris(m: &Msgx, out: &mut Issues) {
    let a = &m.acris;
    if let Some(addr) = &a.listen {
        match addr.parse::<std::net::SocketAddr>() {
            Err(_) => out.fail(
                "msgx.acris.listen",
                format!("{addr:?} is not an IP:PORT address"),
            ),
            Ok(sock) => {
                if a.tokens_file.is_none() {
                    out.fail(
                        "msgx.acris.tokens-file",
                        format!(
                            "must be set for msgx.acris.listen {addr:?}: every request needs a \
                             bearer token (docs/acris.md)"
                        ),
                    );
                }
                let plain = a.tls_cert.is_none() && m.http.trusted_proxies.is_empty();
                if !sock.ip().is_loopback() && plain {
                    out.fail(
                        "msgx.acris.tls-cert",
                        format!(
                            "must be set (with tls-key) for msgx.acris.listen {addr:?}: a \
                             non-loopback API over plain HTTP would send bearer tokens in the \
                             clear; or declare the TLS-terminating reverse proxy in \
                             msgx.http.trusted-proxies (docs/acris.md)"
                        ),
                    );
                }
            }
        }
    }
    if a.tls_cert.is_some() != a.tls_key.is_some() {
        out.fail(
            "msgx.acris.tls-cert",
            "set tls-cert and tls-key together, or neither",
        );
    }
    if a.pool_size == 0 {
        out.fail(
            "msgx.acris.pool-size",
            "must be at least 1 (the API's own PostgreSQL sessions)",
        );
    }
    out.positive_durations([("msgx.acris.statement-timeout", a.statement_timeout)]);
}

/// The retry schedules (§9.1): a limited schedule has
/// exactly max-attempts − 1 tiers, so no tier can be configured that never
/// fires; INFRA is unlimited (an outage must never turn a head
/// DEAD(EXHAUSTED)) and repeats its last tier, so it needs one; CODEC_ERROR,
/// UNSUPPORTED and DATA are limited (they hold the FIFO head while they retry).
/// The removed single-schedule keys are refused with a pointer.
fn retry_issues(p: &super::Pipeline) -> Vec<(String, String)> {
    let mut issues = Vec::new();
    for (key, set) in [
        ("max-attempts", p.removed_max_attempts.is_some()),
        ("retry-backoff", p.removed_retry_backoff.is_some()),
    ] {
        if set {
            issues.push((
                format!("msgx.pipeline.{key}"),
                "was removed: set one schedule per class in [msgx.pipeline.retry.infra], \
                 [msgx.pipeline.retry.codec-error], [msgx.pipeline.retry.unsupported] and \
                 [msgx.pipeline.retry.data] (docs/configuration.md)"
                    .into(),
            ));
        }
    }
    for (class, s) in p.retry.by_key() {
        let key = |k: &str| format!("msgx.pipeline.retry.{class}.{k}");
        let tiers = s.backoff.len();
        match (class, s.max_attempts) {
            ("infra", Some(_)) => issues.push((
                key("max-attempts"),
                "INFRA is unlimited: an outage must never turn a head DEAD(EXHAUSTED); remove the key"
                    .into(),
            )),
            ("infra", None) if tiers == 0 => issues.push((
                key("backoff"),
                "needs at least one tier (the last one repeats)".into(),
            )),
            ("infra", None) => {}
            (_, None) => issues.push((
                key("max-attempts"),
                "must be set: this class holds the FIFO head while it retries".into(),
            )),
            (_, Some(0)) => issues.push((key("max-attempts"), "must be at least 1".into())),
            (_, Some(n)) if tiers != n as usize - 1 => issues.push((
                key("backoff"),
                format!(
                    "needs exactly max-attempts − 1 = {} tiers (one per retry), has {tiers}",
                    n - 1
                ),
            )),
            (_, Some(_)) => {}
        }
    }
    issues
}

/// `msgx.telemetry.otlp-endpoint`: an http(s) URL, and
/// only in a binary that can export (the `otlp` cargo feature, off by default
/// because its crates are heavy to build).
fn otlp_issue(t: &super::Telemetry) -> Option<String> {
    let endpoint = t.otlp_endpoint.as_deref()?;
    if !cfg!(feature = "otlp") {
        return Some(format!(
            "{endpoint:?} is set, but this msgx was built without the otlp feature \
             (cargo build --features otlp); unset it or use such a build"
        ));
    }
    let scheme_ok = ["http://", "https://"]
        .iter()
        .any(|p| endpoint.len() > p.len() && endpoint.starts_with(p));
    (!scheme_ok).then(|| format!("{endpoint:?} is not an http:// or https:// URL"))
}

/// The compat entry's rules: its address parses; TLS files
/// come in the pairs that make sense; every address has a token
/// (`env_token`: `MSGX_COMPAT_TOKEN` is set) or a client CA, or a loopback
/// address the development mode; the SNDR
/// allow-list names plausible senders; the listener limits are > 0. Files
/// are not read here: every command validates, and most need not read them.
pub(super) fn compat_issues(h: &super::Http, env_token: bool) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    let mut fail = |key: &str, rule: String| {
        issues.push(ConfigIssue {
            key: key.to_string(),
            rule,
        });
    };
    let token = env_token || h.compat_token_file.is_some() || h.compat_tokens_file.is_some();
    let mtls = h.compat_tls_client_ca.is_some();
    if let Some(addr) = &h.compat_listen {
        match addr.parse::<std::net::SocketAddr>() {
            Err(_) => fail(
                "msgx.http.compat-listen",
                format!("{addr:?} is not an IP:PORT address"),
            ),
            // Authentication on every address; only a
            // development mode asked for by name waives it, on loopback.
            Ok(a) if h.compat_development_mode && !a.ip().is_loopback() => fail(
                "msgx.http.compat-development-mode",
                format!(
                    "is true but msgx.http.compat-listen {addr:?} is not a loopback address: \
                     the development mode (no authentication) is for loopback only"
                ),
            ),
            Ok(_) if !token && !mtls && !h.compat_development_mode => fail(
                "msgx.http.compat-listen",
                format!(
                    "{addr:?} is set and the entry has no authentication: set \
                     msgx.http.compat-tokens-file, msgx.http.compat-token-file (or \
                     {COMPAT_TOKEN_ENV}) or msgx.http.compat-tls-client-ca; on a developer's \
                     loopback only, msgx.http.compat-development-mode = true \
                     (docs/production/http.md)"
                ),
            ),
            Ok(_) => {}
        }
    }
    for (key, path) in [
        ("msgx.http.compat-token-file", &h.compat_token_file),
        ("msgx.http.compat-tokens-file", &h.compat_tokens_file),
        ("msgx.http.compat-tls-cert", &h.compat_tls_cert),
        ("msgx.http.compat-tls-key", &h.compat_tls_key),
        ("msgx.http.compat-tls-client-ca", &h.compat_tls_client_ca),
    ] {
        if path.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
            fail(
                key,
                "must be a file path (omit the key to leave it unset)".into(),
            );
        }
    }
    match (&h.compat_tls_cert, &h.compat_tls_key) {
        (Some(_), None) => fail(
            "msgx.http.compat-tls-key",
            "must be set with msgx.http.compat-tls-cert".into(),
        ),
        (None, Some(_)) => fail(
            "msgx.http.compat-tls-cert",
            "must be set with msgx.http.compat-tls-key".into(),
        ),
        _ => {}
    }
    if mtls && h.compat_tls_cert.is_none() && h.compat_tls_key.is_none() {
        fail(
            "msgx.http.compat-tls-client-ca",
            "needs msgx.http.compat-tls-cert and compat-tls-key (mutual TLS is TLS first)".into(),
        );
    }
    if h.compat_allowed_senders.is_empty() {
        fail(
            "msgx.http.compat-allowed-senders",
            "must name at least one SNDR (e.g. [\"AODB\"])".into(),
        );
    }
    for (i, s) in h.compat_allowed_senders.iter().enumerate() {
        if s.is_empty() || s.len() > 4 || !s.chars().all(|c| c.is_ascii_alphanumeric()) {
            fail(
                &format!("msgx.http.compat-allowed-senders[{i}]"),
                format!("{s:?} must be 1–4 letters or digits (SIS SNDR)"),
            );
        }
    }
    for (key, n) in [
        ("msgx.http.compat-max-body", h.compat_max_body as u64),
        (
            "msgx.http.max-concurrent-requests",
            h.max_concurrent_requests as u64,
        ),
        ("msgx.http.requests-per-second", h.requests_per_second),
        ("msgx.http.max-connections", h.max_connections as u64),
        (
            "msgx.http.max-connections-per-client",
            h.max_connections_per_client as u64,
        ),
        (
            "msgx.http.requests-per-second-per-client",
            h.requests_per_second_per_client,
        ),
    ] {
        if n == 0 {
            fail(key, "must be > 0".into());
        }
    }
    for (i, p) in h.trusted_proxies.iter().enumerate() {
        if p.is_unspecified() || p.is_multicast() {
            fail(
                &format!("msgx.http.trusted-proxies[{i}]"),
                format!("{p} is not the address of a proxy"),
            );
        }
    }
    issues
}

/// The four topics (msg, schd, season, audit): legal Kafka names, and distinct,
/// because the compacted `schd` and `season` topics are keyed differently
/// (FLID, series key) and sharing one would let a key of one compact away a
/// record of the other.
fn topic_issues(k: &super::Kafka) -> Vec<(&'static str, String)> {
    let topics = [
        ("msgx.kafka.topic-msg", &k.topic_msg),
        ("msgx.kafka.topic-schd", &k.topic_schd),
        ("msgx.kafka.topic-season", &k.topic_season),
        ("msgx.kafka.topic-audit", &k.topic_audit),
    ];
    let mut out = Vec::new();
    for (i, (key, name)) in topics.iter().enumerate() {
        let legal = !name.is_empty()
            && name.len() <= 249
            && name.as_str() != "."
            && name.as_str() != ".."
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !legal {
            out.push((
                *key,
                format!(
                    "{name:?} is not a Kafka topic name (1–249 of letters, digits, '.', '_', '-')"
                ),
            ));
        }
        if let Some((other, _)) = topics[..i].iter().find(|(_, n)| n == name) {
            out.push((
                *key,
                format!("{name:?} is also {other}: each topic must be its own"),
            ));
        }
    }
    out
}

/// `TYPE`, `TYPE-STYP` or `TYPE-*` (design §2 ignore rules).
fn valid_ignore_rule(rule: &str) -> bool {
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric());
    match rule.split_once('-') {
        None => word(rule),
        Some((t, s)) => word(t) && (s == "*" || word(s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue_keys(toml_text: &str) -> Vec<String> {
        let c = Config::from_toml(toml_text, "test").expect("parses");
        c.validate()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|i| i.key)
            .collect()
    }

    #[test]
    fn an_otlp_endpoint_needs_the_otlp_feature_and_an_http_url() {
        assert!(issue_keys("").is_empty(), "unset by default");
        let set = |url: &str| {
            let c = Config::from_toml(
                &format!("[msgx.telemetry]\notlp-endpoint = {url:?}\n"),
                "test",
            )
            .expect("parses");
            c.validate().err().unwrap_or_default()
        };
        let issues = set("http://127.0.0.1:4318/v1/traces");
        if cfg!(feature = "otlp") {
            assert!(issues.is_empty(), "{issues:?}");
            assert_eq!(set("127.0.0.1:4318")[0].key, "msgx.telemetry.otlp-endpoint");
        } else {
            assert_eq!(issues.len(), 1, "{issues:?}");
            assert_eq!(issues[0].key, "msgx.telemetry.otlp-endpoint");
            assert!(
                issues[0].rule.contains("built without the otlp feature"),
                "{}",
                issues[0].rule
            );
        }
    }

    #[test]
    fn backoff_tiers_must_match_attempts() {
        let keys = issue_keys(
            "[msgx.pipeline.retry.unsupported]\nmax-attempts = 3\nbackoff = [\"10s\"]\n",
        );
        assert_eq!(keys, vec!["msgx.pipeline.retry.unsupported.backoff"]);
        let keys = issue_keys("[msgx.pipeline.retry.codec-error]\nmax-attempts = 0\n");
        assert_eq!(keys, vec!["msgx.pipeline.retry.codec-error.max-attempts"]);
        assert!(issue_keys("[msgx.pipeline.retry.codec-error]\nmax-attempts = 1\n").is_empty());
    }

    #[test]
    fn infra_is_unlimited_and_the_others_are_not() {
        let keys = issue_keys(
            "[msgx.pipeline.retry.infra]\nmax-attempts = 5\nbackoff = [\"5s\", \"1m\", \"1m\", \"1m\"]\n",
        );
        assert_eq!(keys, vec!["msgx.pipeline.retry.infra.max-attempts"]);
        let keys = issue_keys("[msgx.pipeline.retry.infra]\nbackoff = []\n");
        assert_eq!(keys, vec!["msgx.pipeline.retry.infra.backoff"]);
        let keys = issue_keys("[msgx.pipeline.retry.unsupported]\nbackoff = [\"10s\"]\n");
        assert_eq!(keys, vec!["msgx.pipeline.retry.unsupported.max-attempts"]);
        let keys = issue_keys("[msgx.pipeline.retry.data]\nbackoff = [\"30s\"]\n");
        assert_eq!(keys, vec!["msgx.pipeline.retry.data.max-attempts"]);
        let keys =
            issue_keys("[msgx.pipeline.retry.data]\nmax-attempts = 3\nbackoff = [\"30s\"]\n");
        assert_eq!(keys, vec!["msgx.pipeline.retry.data.backoff"]);
        let keys = issue_keys("[msgx.pipeline.retry.infra]\nbackoff = [\"0s\"]\n");
        assert_eq!(keys, vec!["msgx.pipeline.retry.infra.backoff[0]"]);
    }

    #[test]
    fn the_removed_single_schedule_keys_point_to_the_new_ones() {
        let c = Config::from_toml(
            "[msgx.pipeline]\nmax-attempts = 5\nretry-backoff = [\"10s\", \"1m\", \"5m\", \"15m\"]\n",
            "test",
        )
        .expect("parses");
        let issues = c.validate().unwrap_err();
        let keys: Vec<&str> = issues.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(
            keys,
            ["msgx.pipeline.max-attempts", "msgx.pipeline.retry-backoff"]
        );
        assert!(
            issues[0].rule.contains("[msgx.pipeline.retry.infra]"),
            "{}",
            issues[0]
        );
    }

    #[test]
    fn season_keys_and_topics_are_checked() {
        assert_eq!(
            issue_keys("[msgx.season]\nkeep = 0\n"),
            ["msgx.season.keep"]
        );
        assert_eq!(
            issue_keys("[msgx.season]\nflush-limit = 0\n"),
            ["msgx.season.flush-limit"]
        );
        assert!(issue_keys("[msgx.season]\nkeep = 5\n").is_empty());
        assert_eq!(
            issue_keys("[msgx.kafka]\ntopic-season = \"schd\"\n"),
            ["msgx.kafka.topic-season"]
        );
        assert_eq!(
            issue_keys("[msgx.kafka]\ntopic-season = \"sea son\"\n"),
            ["msgx.kafka.topic-season"]
        );
        assert_eq!(
            issue_keys("[msgx.kafka]\ntopic-msg = \"\"\n"),
            ["msgx.kafka.topic-msg"]
        );
        assert!(issue_keys("[msgx.kafka]\ntopic-season = \"aodb.season_v1\"\n").is_empty());
    }

    #[test]
    fn the_audit_topic_is_a_legal_name_of_its_own() {
        assert_eq!(
            issue_keys("[msgx.kafka]\ntopic-audit = \"msg\"\n"),
            ["msgx.kafka.topic-audit"]
        );
        assert_eq!(
            issue_keys("[msgx.kafka]\ntopic-audit = \"au dit\"\n"),
            ["msgx.kafka.topic-audit"]
        );
        assert!(issue_keys("[msgx.kafka]\ntopic-audit = \"aodb.audit_v1\"\n").is_empty());
    }

    #[test]
    fn delivery_backoff_tiers_must_match_dispatch_attempts() {
        assert!(issue_keys("").is_empty(), "the defaults are valid");
        let keys = issue_keys("[msgx.dispatch]\nmax-attempts = 3\n");
        assert_eq!(keys, vec!["msgx.dispatch.retry-backoff"]);
        let keys =
            issue_keys("[msgx.dispatch]\nmax-attempts = 3\nretry-backoff = [\"1s\", \"2s\"]\n");
        assert!(keys.is_empty(), "{keys:?}");
        let keys = issue_keys("[msgx.dispatch]\nmax-attempts = 1\nretry-backoff = []\n");
        assert!(keys.is_empty(), "one attempt needs no tier: {keys:?}");
        let keys = issue_keys("[msgx.dispatch]\nmax-attempts = 0\nretry-backoff = []\n");
        assert_eq!(keys, vec!["msgx.dispatch.max-attempts"]);
    }

    #[test]
    fn in_doubt_deadline_and_delivery_tiers_must_be_positive() {
        let keys = issue_keys(
            "[msgx.dispatch]\nmax-attempts = 2\nretry-backoff = [\"0s\"]\nin-doubt-deadline = \"0s\"\n",
        );
        assert_eq!(
            keys,
            vec![
                "msgx.dispatch.in-doubt-deadline",
                "msgx.dispatch.retry-backoff[0]"
            ]
        );
    }

    #[test]
    fn r_must_not_exceed_r_keep() {
        let keys = issue_keys("[msgx.pipeline]\nbackfill-deadline = \"8d\"\n");
        assert_eq!(keys, vec!["msgx.pipeline.backfill-deadline"]);
    }

    #[test]
    fn dedup_memory_must_cover_r_keep() {
        let keys = issue_keys("[msgx.archive]\ndedup-memory = \"6d\"\n");
        assert_eq!(keys, vec!["msgx.archive.dedup-memory"]);
    }

    #[test]
    fn hst_retention_must_cover_dedup_memory_and_r_keep() {
        assert_eq!(
            issue_keys("[msgx.archive]\nhst-retention = \"20d\"\n"),
            vec!["msgx.archive.hst-retention"]
        );
        assert_eq!(
            issue_keys(
                "[msgx.mailbox]\nraw-retention = \"40d\"\n[msgx.archive]\ndedup-memory = \"50d\"\n\
                 hst-retention = \"30d\"\n"
            ),
            vec!["msgx.archive.hst-retention", "msgx.archive.hst-retention"]
        );
        assert!(issue_keys("[msgx.archive]\nhst-retention = \"30d\"\n").is_empty());
    }

    #[test]
    fn database_timeouts_are_ordered() {
        assert_eq!(
            issue_keys("[msgx.mailbox]\nstatement-timeout = \"10s\"\n"),
            vec!["msgx.mailbox.statement-timeout"]
        );
        assert_eq!(
            issue_keys("[msgx.postgres]\nidle-in-transaction-timeout = \"10s\"\n"),
            vec!["msgx.postgres.idle-in-transaction-timeout"]
        );
        assert_eq!(
            issue_keys("[msgx.postgres]\nlock-timeout = \"0s\"\n"),
            vec!["msgx.postgres.lock-timeout"]
        );
    }

    #[test]
    fn dead_keys_are_accepted_with_a_deprecation() {
        let c =
            Config::from_toml("[msgx.schd]\nflush-interval = \"2s\"\n", "t").expect("still parses");
        assert!(c.validate().is_ok());
        let keys: Vec<String> = c.deprecations().into_iter().map(|i| i.key).collect();
        assert_eq!(keys, vec!["msgx.schd.flush-interval"]);
        assert!(Config::default().deprecations().is_empty());
    }

    /// `poll-interval` has its meaning again (a fixed interval
    /// when written as one duration), so it is no longer deprecated.
    #[test]
    fn poll_interval_is_a_live_key() {
        let c =
            Config::from_toml("[msgx.pipeline]\npoll-interval = \"1s\"\n", "t").expect("parses");
        assert!(c.validate().is_ok() && c.deprecations().is_empty());
        assert_eq!(c.msgx.pipeline.poll_interval.idle, Dur::secs(1));
        assert_eq!(
            issue_keys("[msgx.pipeline.poll-interval]\nbusy = \"1ms\"\n"),
            vec!["msgx.pipeline.poll-interval.busy"]
        );
    }

    #[test]
    fn zero_durations_are_rejected() {
        let keys = issue_keys("[msgx.snaplog]\nretention = \"0s\"\n");
        assert_eq!(keys, vec!["msgx.snaplog.retention"]);
    }

    /// "Every duration must be > 0" and "counts must be > 0" hold for every
    /// key of those types, a key added later included: each key of the
    /// reference (`config::docs`) set to zero alone is refused, naming it.
    #[test]
    fn every_duration_and_count_refuses_zero() {
        let mut unchecked = Vec::new();
        for k in super::super::docs::keys() {
            let zero = match k.ty.as_str() {
                "duration" => "\"0s\"",
                "[duration]" => "[\"0s\"]",
                "integer" => "0",
                _ => continue,
            };
            let keys = issue_keys(&format!("{} = {zero}\n", k.key));
            if !keys.iter().any(|i| i.starts_with(&k.key)) {
                unchecked.push(format!("{}: {keys:?}", k.key));
            }
        }
        assert!(
            unchecked.is_empty(),
            "zero accepted:\n{}",
            unchecked.join("\n")
        );
    }

    #[test]
    fn request_sndr_and_routing_ids_are_checked() {
        let keys = issue_keys(
            "[msgx.request]\nsndr = \"VIEWX\"\nrouting-rqfd = \"\"\nrouting-rqrd = \"A B\"\n",
        );
        assert_eq!(
            keys,
            vec![
                "msgx.request.sndr",
                "msgx.request.routing-rqfd",
                "msgx.request.routing-rqrd"
            ]
        );
    }

    #[test]
    fn the_acris_api_needs_tokens_and_https_off_loopback() {
        let keys = |t: &str| issue_keys(&format!("[msgx.acris]\n{t}"));
        assert_eq!(
            keys("listen = \"127.0.0.1:8091\"\n"),
            ["msgx.acris.tokens-file"]
        );
        assert!(keys("listen = \"127.0.0.1:8091\"\ntokens-file = \"/t\"\n").is_empty());
        assert_eq!(
            keys("listen = \"10.0.0.5:8091\"\ntokens-file = \"/t\"\n"),
            ["msgx.acris.tls-cert"]
        );
        assert!(
            keys("listen = \"10.0.0.5:8091\"\ntokens-file = \"/t\"\ntls-cert = \"/c\"\ntls-key = \"/k\"\n")
                .is_empty()
        );
        assert_eq!(
            keys("listen = \"acris\"\ntls-key = \"/k\"\npool-size = 0\n"),
            [
                "msgx.acris.listen",
                "msgx.acris.tls-cert",
                "msgx.acris.pool-size"
            ]
        );
        assert_eq!(
            issue_keys("[msgx.airport]\niata = \"ctu\"\n"),
            ["msgx.airport.iata"]
        );
    }

    #[test]
    fn unknown_timezone_is_rejected() {
        let keys = issue_keys("[msgx.airport]\ntimezone = \"Mars/Olympus\"\n");
        assert_eq!(keys, vec!["msgx.airport.timezone"]);
    }

    #[test]
    fn the_metrics_listener_must_be_a_loopback_address() {
        assert!(issue_keys("[msgx.http]\nmetrics-listen = \"127.0.0.1:9187\"\n").is_empty());
        assert!(issue_keys("[msgx.http]\nmetrics-listen = \"[::1]:0\"\n").is_empty());
        assert_eq!(
            issue_keys("[msgx.http]\nmetrics-listen = \"0.0.0.0:9187\"\n"),
            vec!["msgx.http.metrics-listen"]
        );
        assert_eq!(
            issue_keys("[msgx.http]\ncompat-listen = \"localhost\"\n"),
            vec!["msgx.http.compat-listen"]
        );
    }

    #[test]
    fn a_non_loopback_console_needs_users() {
        let open = "[msgx.console]\nlisten = \"0.0.0.0:8090\"\n";
        assert_eq!(issue_keys(open), ["msgx.console.users-file"]);
        let with_users = "[msgx.console]\nlisten = \"10.0.0.5:8090\"\n\
                          users-file = \"/etc/msgx/users.toml\"\ntls-cert = \"c.pem\"\n\
                          tls-key = \"c.key\"\n";
        assert!(issue_keys(with_users).is_empty());
        let anonymous = "[msgx.console]\nlisten = \"127.0.0.1:8090\"\nanonymous-viewer = true\n";
        assert!(issue_keys(anonymous).is_empty());
        assert_eq!(
            issue_keys("[msgx.console]\nlisten = \"localhost\"\n"),
            ["msgx.console.listen"]
        );
    }

    /// No console without login unless asked for by name,
    /// no plain HTTP off loopback without a declared TLS proxy, no wildcard
    /// address without named hosts.
    #[test]
    fn browser_facing_defaults_are_refused_unless_named() {
        assert_eq!(
            issue_keys("[msgx.console]\nlisten = \"127.0.0.1:8090\"\n"),
            ["msgx.console.users-file"]
        );
        let users = "users-file = \"/etc/msgx/users.toml\"\n";
        assert_eq!(
            issue_keys(&format!(
                "[msgx.console]\nlisten = \"127.0.0.1:8090\"\n{users}anonymous-viewer = true\n"
            )),
            ["msgx.console.anonymous-viewer"]
        );
        assert_eq!(
            issue_keys(&format!(
                "[msgx.console]\nlisten = \"10.0.0.5:8090\"\n{users}"
            )),
            ["msgx.console.tls-cert"]
        );
        let proxied = format!(
            "[msgx.http]\ntrusted-proxies = [\"127.0.0.1\"]\n\
             [msgx.console]\nlisten = \"10.0.0.5:8090\"\n{users}"
        );
        assert!(issue_keys(&proxied).is_empty());
        let tls = "tls-cert = \"c.pem\"\ntls-key = \"c.key\"\n";
        assert_eq!(
            issue_keys(&format!(
                "[msgx.console]\nlisten = \"0.0.0.0:8090\"\n{users}{tls}"
            )),
            ["msgx.console.allowed-hosts"]
        );
        assert!(
            issue_keys(&format!(
                "[msgx.console]\nlisten = \"0.0.0.0:8090\"\n{users}{tls}\
                 allowed-hosts = [\"msgx.airport.example\"]\n"
            ))
            .is_empty()
        );
        assert_eq!(
            issue_keys("[msgx.console]\nallowed-hosts = [\"https://x/\"]\nsessions-per-user = 0\n"),
            [
                "msgx.console.allowed-hosts",
                "msgx.console.sessions-per-user"
            ]
        );
    }

    #[test]
    fn a_non_loopback_compat_entry_needs_authentication() {
        let keys = |h: &super::super::Http, env: bool| -> Vec<String> {
            compat_issues(h, env).into_iter().map(|i| i.key).collect()
        };
        let open = super::super::Http {
            compat_listen: Some("0.0.0.0:8088".into()),
            ..Default::default()
        };
        assert_eq!(keys(&open, false), vec!["msgx.http.compat-listen"]);
        assert!(keys(&open, true).is_empty(), "MSGX_COMPAT_TOKEN counts");
        let token = super::super::Http {
            compat_token_file: Some("/etc/msgx/compat.token".into()),
            ..open.clone()
        };
        assert!(keys(&token, false).is_empty());
        let tls_only = super::super::Http {
            compat_tls_cert: Some("/c.pem".into()),
            compat_tls_key: Some("/k.pem".into()),
            ..open.clone()
        };
        assert_eq!(keys(&tls_only, false), vec!["msgx.http.compat-listen"]);
        let mtls = super::super::Http {
            compat_tls_client_ca: Some("/ca.pem".into()),
            ..tls_only.clone()
        };
        assert!(keys(&mtls, false).is_empty());
        let tokens = super::super::Http {
            compat_tokens_file: Some("/etc/msgx/compat-tokens.toml".into()),
            ..open.clone()
        };
        assert!(keys(&tokens, false).is_empty());
        // Loopback needs authentication too, unless the
        // development mode is asked for, which only loopback may.
        let loopback = super::super::Http {
            compat_listen: Some("[::1]:8088".into()),
            ..Default::default()
        };
        assert_eq!(keys(&loopback, false), vec!["msgx.http.compat-listen"]);
        let development = super::super::Http {
            compat_development_mode: true,
            ..loopback.clone()
        };
        assert!(keys(&development, false).is_empty());
        let open_development = super::super::Http {
            compat_development_mode: true,
            ..open.clone()
        };
        assert_eq!(
            keys(&open_development, true),
            vec!["msgx.http.compat-development-mode"]
        );
    }

    #[test]
    fn per_client_budgets_and_trusted_proxies_are_checked() {
        assert!(issue_keys("[msgx.http]\ntrusted-proxies = [\"127.0.0.1\", \"::1\"]\n").is_empty());
        assert_eq!(
            issue_keys("[msgx.http]\ntrusted-proxies = [\"127.0.0.1\", \"0.0.0.0\"]\n"),
            vec!["msgx.http.trusted-proxies[1]"]
        );
        assert_eq!(
            issue_keys("[msgx.http]\nmax-connections-per-client = 0\n"),
            vec!["msgx.http.max-connections-per-client"]
        );
        assert_eq!(
            issue_keys("[msgx.http]\nrequests-per-second-per-client = 0\n"),
            vec!["msgx.http.requests-per-second-per-client"]
        );
        assert_eq!(
            issue_keys("[msgx.console]\nlogin-attempts-per-client = 4\n"),
            vec!["msgx.console.login-attempts-per-client"]
        );
    }

    #[test]
    fn compat_tls_files_pair_and_senders_and_limits_are_checked() {
        assert_eq!(
            issue_keys("[msgx.http]\ncompat-tls-cert = \"/c.pem\"\n"),
            vec!["msgx.http.compat-tls-key"]
        );
        assert_eq!(
            issue_keys("[msgx.http]\ncompat-tls-client-ca = \"/ca.pem\"\n"),
            vec!["msgx.http.compat-tls-client-ca"]
        );
        assert_eq!(
            issue_keys("[msgx.http]\ncompat-token-file = \"\"\n"),
            vec!["msgx.http.compat-token-file"]
        );
        assert_eq!(
            issue_keys("[msgx.http]\ncompat-allowed-senders = [\"AODB\", \"A B\", \"LONGER\"]\n"),
            vec![
                "msgx.http.compat-allowed-senders[1]",
                "msgx.http.compat-allowed-senders[2]"
            ]
        );
        assert_eq!(
            issue_keys("[msgx.http]\ncompat-allowed-senders = []\n"),
            vec!["msgx.http.compat-allowed-senders"]
        );
        assert_eq!(
            issue_keys(
                "[msgx.http]\nmax-concurrent-requests = 0\nrequests-per-second = 0\n\
                 max-connections = 0\nheader-read-timeout = \"0s\"\nbody-timeout = \"0s\"\n"
            ),
            vec![
                "msgx.http.header-read-timeout",
                "msgx.http.body-timeout",
                "msgx.http.max-concurrent-requests",
                "msgx.http.requests-per-second",
                "msgx.http.max-connections"
            ]
        );
    }

    #[test]
    fn health_windows_must_exceed_what_they_wait_for() {
        assert_eq!(
            issue_keys("[msgx.http]\nhealth-max-age = \"2s\"\n"),
            vec!["msgx.http.health-max-age"]
        );
        assert_eq!(
            issue_keys("[msgx.http]\nwatermark-stall = \"30s\"\n"),
            vec!["msgx.http.watermark-stall"]
        );
    }

    #[test]
    fn ignore_rules_are_checked() {
        assert!(valid_ignore_rule("LDM"));
        assert!(valid_ignore_rule("FLOP-*"));
        assert!(valid_ignore_rule("SCHD-ADFT"));
        assert!(!valid_ignore_rule("FLOP-"));
        assert!(!valid_ignore_rule("a b"));
    }

    #[test]
    fn kafka_properties_may_not_weaken_delivery() {
        let mut c = Config::default();
        c.msgx
            .kafka
            .properties
            .insert("enable.idempotence".into(), "false".into());
        let issues = c.validate().unwrap_err();
        assert!(
            issues
                .iter()
                .any(|i| i.key == "msgx.kafka.properties" && i.rule.contains("enable.idempotence")),
            "{issues:?}"
        );
    }
}
