//! `msgx doctor [--json]`: the preflight an operator (and the systemd unit,
//! as `ExecStartPre`) runs before the daemon. It connects
//! to PostgreSQL, the mailbox and Kafka with the effective configuration and
//! prints one line per check, `ok`, `warn` or `FAIL` with the reason; any
//! FAIL exits 1. A check that depends on a failed one is not run (its line
//! is not printed), so the first FAIL is the one to fix.
//!
//! | check | fails when |
//! |---|---|
//! | `config` | a connection URL is not set |
//! | `postgres.connect` | PostgreSQL cannot be reached or refuses (TLS, auth) |
//! | `postgres.tls` | never; says whether the session is encrypted |
//! | `postgres.hosts` | no host of `msgx.postgres.url` takes writes (warn: a listed host does not answer); says what each host is |
//! | `postgres.replication` | never; lists the standbys streaming from the server msgx writes to (state, replay lag) or says the role may not see them (warn: a host list but no standby streams) |
//! | `postgres.schema` | the schema is not at this binary's migration |
//! | `postgres.role` | the role lacks SELECT/INSERT/UPDATE/DELETE on a msgx table (warn: SUPERUSER) |
//! | `postgres.identity` | `msgx.identity.include-day-boundary` differs from the value the database recorded at its first start (§2) |
//! | `mailbox.connect`, `mailbox.tls` | as for PostgreSQL |
//! | `mailbox.inbox`, `mailbox.outbox` | the table or a column msgx uses is missing |
//! | `mailbox.privileges` | no SELECT on the inbox, no UPDATE of the mark column, no SELECT/INSERT on the outbox (warn: UPDATE of the whole inbox) |
//! | `mailbox.hole-evidence` | never; warns when holes cannot be released on transaction evidence (no PROCESS privilege, `msgx.pipeline.hole-evidence = false`, or the server is not the ID-allocating primary: a replica, a Galera node, read-only, or the replication status is not readable) |
//! | `kafka.client` | a producer or consumer cannot be created with the settings (unsupported security option, missing file) |
//! | `kafka.metadata` | no broker answers within `msgx.kafka.call-timeout` |
//! | `kafka.topic.msg`, `kafka.topic.schd`, `kafka.topic.season`, `kafka.topic.audit` | the topic does not exist |

use crate::commands::target::{self, Needs, Target};
use crate::config::Config;
use crate::exit::Exit;
use crate::store::mailbox::Mailbox;
use crate::store::pg;
use serde::Serialize;
use std::io::Write;
use std::time::Duration;

/// One check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub ok: bool,
    pub target: Target,
    pub checks: Vec<Check>,
}

#[derive(Default)]
struct Checks(Vec<Check>);

impl Checks {
    fn add(&mut self, name: &str, status: Status, detail: impl Into<String>) -> bool {
        self.0.push(Check {
            name: name.into(),
            status,
            detail: detail.into(),
        });
        status != Status::Fail
    }
    fn ok(&mut self, name: &str, detail: impl Into<String>) -> bool {
        self.add(name, Status::Ok, detail)
    }
    fn fail(&mut self, name: &str, detail: impl Into<String>) -> bool {
        self.add(name, Status::Fail, detail)
    }
}

/// Runs every check (see the module docs) and returns the report.
pub async fn diagnose(config: &Config) -> Report {
    let mut c = Checks::default();
    let absent = target::missing(config, Needs::BOTH);
    if absent.is_empty() {
        c.ok("config", "connection URLs set");
    } else {
        c.fail("config", format!("not set: {}", absent.join("; ")));
    }
    if !config.msgx.postgres.url.trim().is_empty() {
        postgres(config, &mut c).await;
    }
    if !config.msgx.mailbox.url.trim().is_empty() {
        mailbox(config, &mut c).await;
    }
    kafka(config, &mut c).await;
    Report {
        ok: c.0.iter().all(|x| x.status != Status::Fail),
        target: Target::of(config, Needs::BOTH),
        checks: c.0,
    }
}

async fn postgres(config: &Config, c: &mut Checks) {
    let cfg = &config.msgx.postgres;
    let bound = cfg.acquire_timeout.std() + Duration::from_secs(5);
    let pool = match tokio::time::timeout(bound, pg::connect(cfg)).await {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            c.fail("postgres.connect", e.to_string());
            return;
        }
        Err(_) => {
            c.fail("postgres.connect", format!("no answer within {bound:?}"));
            return;
        }
    };
    c.ok("postgres.connect", target::location(&cfg.url));
    match pg::tls_in_use(&pool).await {
        Ok(Some(v)) => c.ok("postgres.tls", format!("encrypted ({v})")),
        Ok(None) => c.ok("postgres.tls", "not encrypted (sslmode allows plaintext)"),
        Err(e) => c.fail("postgres.tls", e.to_string()),
    };
    let listed = hosts(cfg, c).await;
    replication(&pool, listed, c).await;
    let current = match pg::ensure_schema_current(&pool).await {
        Ok(v) => c.ok("postgres.schema", format!("migration {v}, current")),
        Err(e) => c.fail("postgres.schema", e.to_string()),
    };
    if !current {
        pool.close().await;
        return;
    }
    match pg::preflight::role_check(&pool).await {
        Ok(r) if !r.missing.is_empty() => c.fail(
            "postgres.role",
            format!(
                "role {} lacks SELECT, INSERT, UPDATE or DELETE on: {}",
                r.role,
                r.missing.join(", ")
            ),
        ),
        Ok(r) if r.superuser => c.add(
            "postgres.role",
            Status::Warn,
            format!(
                "role {} is SUPERUSER: more than msgx needs (docs/operations.md gives the GRANTs)",
                r.role
            ),
        ),
        Ok(r) => c.ok(
            "postgres.role",
            format!("role {} holds what msgx needs", r.role),
        ),
        Err(e) => c.fail("postgres.role", e.to_string()),
    };
    identity(config, &pool, c).await;
    pool.close().await;
}

/// `postgres.hosts`: what each host of the URL is, in list order, and the
/// one msgx writes to (the first that takes writes, as the pool chose).
/// Returns how many hosts the URL lists.
async fn hosts(cfg: &crate::config::Postgres, c: &mut Checks) -> usize {
    let targets = match pg::connect_targets(&cfg.url) {
        Ok(t) => t,
        Err(e) => {
            c.fail("postgres.hosts", e.to_string());
            return 0;
        }
    };
    let survey = targets.survey(cfg.acquire_timeout.std()).await;
    let mut writer = None;
    let mut silent = 0;
    let lines: Vec<String> = survey
        .iter()
        .map(|(host, r)| match r {
            Ok(role) => {
                if writer.is_none() && role.writable() {
                    writer = Some(host.clone());
                }
                format!("{host} {role}")
            }
            Err(e) => {
                silent += 1;
                format!(
                    "{host} does not answer ({})",
                    crate::error_text::cut(&e.to_string())
                )
            }
        })
        .collect();
    let detail = lines.join("; ");
    match writer {
        None => c.fail("postgres.hosts", format!("no host takes writes: {detail}")),
        Some(w) if silent > 0 => c.add(
            "postgres.hosts",
            Status::Warn,
            format!("msgx writes to {w}; {detail}"),
        ),
        Some(w) => c.ok("postgres.hosts", format!("msgx writes to {w}; {detail}")),
    };
    survey.len()
}

/// `postgres.replication`: the standbys streaming from the server msgx
/// writes to, as far as the role may see them. Informational; warns when
/// the URL lists several hosts but no standby streams (a failover would
/// find no replica).
async fn replication(pool: &sqlx::PgPool, listed: usize, c: &mut Checks) {
    let r = match pg::preflight::replication(pool).await {
        Ok(r) => r,
        Err(e) => {
            c.add("postgres.replication", Status::Warn, e.to_string());
            return;
        }
    };
    if r.standbys.is_empty() {
        let hidden = if r.permitted {
            ""
        } else {
            " (the role may see no replication details: not permitted without pg_monitor or \
             pg_read_all_stats)"
        };
        let (status, detail) = if listed > 1 {
            (
                Status::Warn,
                "no standby streams from this server, though msgx.postgres.url lists several hosts",
            )
        } else {
            (Status::Ok, "no standby streams from this server")
        };
        c.add("postgres.replication", status, format!("{detail}{hidden}"));
        return;
    }
    let standbys: Vec<String> = r
        .standbys
        .iter()
        .map(|s| {
            if !r.permitted {
                return format!("{} (details not permitted)", s.application_name);
            }
            let lag = s
                .replay_lag
                .map(|l| format!("replay lag {l:.3}s"))
                .unwrap_or_else(|| "replay lag none".into());
            format!(
                "{} from {} {} {lag}",
                s.application_name,
                s.client_addr.as_deref().unwrap_or("local socket"),
                s.state.as_deref().unwrap_or("unknown"),
            )
        })
        .collect();
    let note = if r.permitted {
        ""
    } else {
        "; client address, state and lag not permitted (grant pg_monitor or pg_read_all_stats)"
    };
    c.ok(
        "postgres.replication",
        format!(
            "{} standby(s): {}{note}",
            r.standbys.len(),
            standbys.join(", ")
        ),
    );
}

/// `postgres.identity`: the configured identity algorithm against the one
/// recorded (read only: the doctor records nothing).
async fn identity(config: &Config, pool: &sqlx::PgPool, c: &mut Checks) {
    use crate::pipeline::identity::{SETTING, check};
    let configured = config.msgx.identity.include_day_boundary;
    match pg::setting::get(pool, SETTING).await {
        Ok(None) => c.ok(
            "postgres.identity",
            format!(
                "include-day-boundary = {configured}; not recorded yet (the first daemon start \
                 or pump-drain run records it)"
            ),
        ),
        Ok(Some(r)) => match check(configured, &r) {
            Ok(()) => c.ok(
                "postgres.identity",
                format!(
                    "include-day-boundary = {configured}, as recorded ({}, {})",
                    r.recorded_by,
                    r.recorded_at.format("%Y-%m-%d %H:%M:%S UTC")
                ),
            ),
            Err(e) => c.fail("postgres.identity", e.to_string()),
        },
        Err(e) => c.fail("postgres.identity", e.to_string()),
    };
}

async fn mailbox(config: &Config, c: &mut Checks) {
    let cfg = &config.msgx.mailbox;
    let mb = match Mailbox::new(cfg) {
        Ok(m) => m,
        Err(e) => {
            c.fail("mailbox.connect", e.to_string());
            return;
        }
    };
    match mb.tls_in_use().await {
        Ok(v) => {
            c.ok("mailbox.connect", target::location(&cfg.url));
            match v {
                Some(v) => c.ok("mailbox.tls", format!("encrypted ({v})")),
                None => c.ok("mailbox.tls", "not encrypted"),
            };
        }
        Err(e) => {
            c.fail("mailbox.connect", e.to_string());
            mb.close().await;
            return;
        }
    }
    let inbox = match mb.inbox().await {
        Ok(t) => c.ok(
            "mailbox.inbox",
            format!("{t} ({} columns)", t.columns.len()),
        ),
        Err(e) => c.fail("mailbox.inbox", e.to_string()),
    };
    let outbox = match mb.outbox().await {
        Ok(t) => c.ok(
            "mailbox.outbox",
            format!("{t} ({} columns)", t.columns.len()),
        ),
        Err(e) => c.fail("mailbox.outbox", e.to_string()),
    };
    if inbox && outbox {
        match mb.grants().await {
            Ok(g) => {
                let writes = !cfg.shadow;
                let mut lacking = Vec::new();
                if !g.inbox_select {
                    lacking.push("SELECT on the inbox".to_string());
                }
                if writes && !g.mark_update {
                    lacking.push(format!("UPDATE ({}) on the inbox", cfg.processed_column));
                }
                if !g.outbox_select {
                    lacking.push("SELECT on the outbox".to_string());
                }
                if writes && !g.outbox_insert {
                    lacking.push("INSERT on the outbox".to_string());
                }
                if writes && config.msgx.http.compat_listen.is_some() && !g.inbox_insert {
                    lacking.push("INSERT on the inbox (msgx.http.compat-listen is set)".into());
                }
                if !lacking.is_empty() {
                    c.fail(
                        "mailbox.privileges",
                        format!("{} lacks {}", g.user, lacking.join(", ")),
                    );
                } else if g.inbox_update_all {
                    c.add(
                        "mailbox.privileges",
                        Status::Warn,
                        format!(
                            "{} may UPDATE every inbox column; msgx needs only {} (docs/operations.md)",
                            g.user, cfg.processed_column
                        ),
                    );
                } else {
                    c.ok(
                        "mailbox.privileges",
                        format!("{} holds what msgx needs", g.user),
                    );
                }
            }
            Err(e) => {
                c.fail("mailbox.privileges", e.to_string());
            }
        }
    }
    hole_evidence(config, &mb, c).await;
    mb.close().await;
}

/// `mailbox.hole-evidence`: whether
/// holes are released on transaction evidence — the read and the server's
/// role, as `msgx status` reads them; never a FAIL: without it the time
/// rule still holds.
async fn hole_evidence(config: &Config, mb: &Mailbox, c: &mut Checks) {
    let e = crate::status::hole_evidence(config, Some(mb)).await;
    let status = if e.valid { Status::Ok } else { Status::Warn };
    c.add("mailbox.hole-evidence", status, e.detail);
}

async fn kafka(config: &Config, c: &mut Checks) {
    let cfg = config.msgx.kafka.clone();
    let security = cfg
        .properties
        .get("security.protocol")
        .map(String::as_str)
        .unwrap_or("plaintext")
        .to_string();
    if let Err(issues) = crate::kafka::check_clients(&cfg) {
        let text: Vec<String> = issues.iter().map(ToString::to_string).collect();
        c.fail("kafka.client", text.join("; "));
        return;
    }
    c.ok(
        "kafka.client",
        format!("every client created (security.protocol {security})"),
    );
    let probe = cfg.clone();
    let topics =
        match tokio::task::spawn_blocking(move || crate::kafka::configured_topics(&probe)).await {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                c.fail("kafka.metadata", e.to_string());
                return;
            }
            Err(e) => {
                c.fail("kafka.metadata", e.to_string());
                return;
            }
        };
    c.ok("kafka.metadata", format!("brokers {} answer", cfg.brokers));
    for (name, t) in [
        "kafka.topic.msg",
        "kafka.topic.schd",
        "kafka.topic.season",
        "kafka.topic.audit",
    ]
    .into_iter()
    .zip(topics)
    {
        match t.partitions {
            Some(n) => c.ok(name, format!("{}: {n} partition(s)", t.topic)),
            None => c.fail(
                name,
                format!("topic {} does not exist (or is not visible)", t.topic),
            ),
        };
    }
}

/// Prints the report; returns the exit code (1 on any FAIL).
pub fn print(report: &Report, json: bool, out: &mut impl Write) -> Exit {
    let written = if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(report).unwrap_or_else(|_| "{}".into())
        )
    } else {
        report.checks.iter().try_for_each(|c| {
            let status = match c.status {
                Status::Ok => "ok",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            writeln!(out, "{status:<4}  {:<20}  {}", c.name, c.detail)
        })
    };
    if written.is_err() {
        return Exit::Failure;
    }
    if report.ok { Exit::Ok } else { Exit::Failure }
}
