//! msgx's own PostgreSQL: connection, embedded migrations and the schema
//! check the daemon runs before starting.

pub mod acris;
pub mod advisory;
pub mod backfill;
pub mod compat_request;
pub mod console_session;
pub mod facts;
pub mod flight;
pub mod flight_history;
pub mod flight_search;
pub mod ha;
pub mod hosts;
pub mod inbox;
pub mod job_pause;
pub mod job_run;
pub mod live_changes;
pub mod message_search;
pub mod msg_event;
pub mod nodelay;
pub mod operator_action;
pub mod preflight;
pub mod proc_state;
pub mod proc_state_hst;
pub mod ref_master;
pub mod republish;
pub mod req_track;
pub mod run_snapshot;
pub mod season;
pub mod setting;
pub mod snap_log;
pub mod statistics;
pub mod sweep;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgSslMode};
use sqlx::{ConnectOptions, PgConnection, PgPool};
use std::path::PathBuf;

/// The embedded migration chain (`migrations/pg`).
pub static MIGRATOR: Migrator = sqlx::migrate!("./migrations/pg");

/// Errors talking to msgx's PostgreSQL.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
    #[error("PostgreSQL TLS: {0}")]
    TlsFile(#[from] crate::tls::FileError),
    #[error("PostgreSQL TLS (sslmode={mode}): {detail}")]
    Tls { mode: &'static str, detail: String },
    #[error(
        "msgx.postgres.url has unknown parameter(s) {0}; msgx refuses them rather than \
         connect without them (docs/production/databases.md)"
    )]
    UnknownUrlParameters(String),
    #[error("msgx.postgres.url: {0} (docs/configuration.md \"Several hosts\")")]
    Url(#[from] hosts::UrlError),
    #[error(
        "msgx.postgres.url asks for target_session_attrs={0}, but this connection writes: it \
         takes only read-write or primary (docs/configuration.md \"Several hosts\")"
    )]
    NotAWriter(hosts::TargetSessionAttrs),
    #[error("no host of msgx.postgres.url is {wanted}: {hosts}")]
    NoHost {
        wanted: hosts::TargetSessionAttrs,
        hosts: String,
    },
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(
        "the database schema is not current: it has version {found:?}, this msgx needs {expected}. {hint}"
    )]
    SchemaMismatch {
        found: Option<i64>,
        expected: i64,
        hint: &'static str,
    },
}

/// One round trip to the server (`/readyz` check `postgres`).
pub async fn server_ping(pool: &PgPool) -> Result<i32, sqlx::Error> {
    sqlx::query_scalar("SELECT 1").fetch_one(pool).await
}

/// The hosts of `url` (one, or a libpq host list: [`hosts`]) with the
/// connect options of each, as every msgx session to PostgreSQL uses them
/// (the job pool, the console's pool, the instance-lock session, the
/// commands). `target_session_attrs` and `connect_timeout` are read here.
///
/// Each host's options come from the URL as libpq reads it: `sslmode`,
/// `sslrootcert`, `sslcert`, `sslkey` parameters, else the
/// `PGSSLMODE`/`PGSSLROOTCERT`/… environment (docs/production/databases.md).
/// Two things are added to what sqlx does by itself: `require` with a root
/// certificate verifies the CA, as libpq does ("verify-ca"), instead of
/// trusting any certificate; and the named files are read up front, so a
/// missing one is an error naming the parameter and the path.
pub fn connect_targets(url: &str) -> Result<ha::Targets, StoreError> {
    crate::tls::init();
    // Before sqlx parses it: sqlx logs an unknown parameter with its value.
    let unknown = crate::config::unknown_postgres_url_parameters(url);
    if !unknown.is_empty() {
        return Err(StoreError::UnknownUrlParameters(unknown.join(", ")));
    }
    let split = hosts::split(url)?;
    let targets = split
        .urls
        .iter()
        .map(|u| host_options(u).map(ha::Target::new))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ha::Targets::new(
        targets,
        split.attrs,
        split.connect_timeout,
    ))
}

/// [`connect_targets`] for a connection that writes (the job pool, the
/// instance-lock session): a URL asking for a server that may refuse
/// writes is a configuration error, not a session that fails later.
pub fn writer_targets(url: &str) -> Result<ha::Targets, StoreError> {
    let targets = connect_targets(url)?;
    let attrs = targets.attrs();
    if targets.checked() && !attrs.writes() {
        return Err(StoreError::NotAWriter(attrs));
    }
    Ok(targets)
}

/// The connect options of the URL's first host (all a single-host URL
/// has), read as [`connect_targets`] reads them.
pub fn connect_options(url: &str) -> Result<PgConnectOptions, StoreError> {
    let targets = connect_targets(url)?;
    targets
        .hosts()
        .first()
        .map(|t| t.options.clone())
        .ok_or_else(|| StoreError::Url(hosts::UrlError::EmptyHost))
}

/// The options of one single-host URL (see [`connect_targets`]).
fn host_options(url: &str) -> Result<PgConnectOptions, StoreError> {
    let mut opts: PgConnectOptions = url.parse()?;
    let files = tls_files(&opts);
    let mode = opts.get_ssl_mode();
    if matches!(mode, PgSslMode::Require) && files.root_cert.is_some() {
        opts = opts.ssl_mode(PgSslMode::VerifyCa);
    }
    let verifies = matches!(
        opts.get_ssl_mode(),
        PgSslMode::VerifyCa | PgSslMode::VerifyFull
    );
    if let (true, Some(path)) = (verifies, &files.root_cert) {
        crate::tls::read_certs("sslrootcert", path)?;
    }
    if !matches!(mode, PgSslMode::Disable | PgSslMode::Allow) {
        if let Some(path) = &files.cert {
            crate::tls::read_certs("sslcert", path)?;
        }
        if let Some(path) = &files.key {
            crate::tls::read_key("sslkey", path)?;
        }
    }
    Ok(opts)
}

/// The certificate files the options name (only file inputs; sqlx takes
/// URL parameters and the environment as paths).
#[derive(Debug, Default, PartialEq)]
struct TlsFiles {
    root_cert: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
}

/// Read back through `to_url_lossy`, the one public view of the effective
/// options: it renders a file input as `file: <path>`, inline PEM as text.
/// On a copy with a plain host name: sqlx 0.9 cannot render an IPv6 host
/// (it panics), and the host plays no part here.
fn tls_files(opts: &PgConnectOptions) -> TlsFiles {
    let mut files = TlsFiles::default();
    let plain = opts.clone().host("localhost");
    for (k, v) in plain.to_url_lossy().query_pairs() {
        if v.trim_start().starts_with("-----BEGIN") {
            continue;
        }
        let path = Some(PathBuf::from(v.strip_prefix("file: ").unwrap_or(&v)));
        match &*k {
            "sslrootcert" => files.root_cert = path,
            "sslcert" => files.cert = path,
            "sslkey" => files.key = path,
            _ => {}
        }
    }
    files
}

fn mode_name(mode: PgSslMode) -> &'static str {
    match mode {
        PgSslMode::Disable => "disable",
        PgSslMode::Allow => "allow",
        PgSslMode::Prefer => "prefer",
        PgSslMode::Require => "require",
        PgSslMode::VerifyCa => "verify-ca",
        PgSslMode::VerifyFull => "verify-full",
    }
}

/// A connect error in words: a TLS failure says what failed and under which
/// sslmode (certificate verification, a plaintext-only server under
/// require/verify-*, a refused client certificate).
fn connect_error(e: sqlx::Error, opts: &PgConnectOptions) -> StoreError {
    let mode = mode_name(opts.get_ssl_mode());
    if let Some(detail) = crate::tls::describe_failure(&e) {
        return StoreError::Tls { mode, detail };
    }
    match e {
        sqlx::Error::Tls(inner) => StoreError::Tls {
            mode,
            detail: if inner.to_string().contains("does not support TLS") {
                "the server does not offer TLS; msgx never falls back to plaintext under \
                 require/verify-ca/verify-full"
                    .into()
            } else {
                inner.to_string()
            },
        },
        other => StoreError::Db(other),
    }
}

/// `cfg`'s server-side bounds as startup parameters of
/// every pooled session, so they hold from its first statement and survive
/// the pool's reuse of it: a hung statement, a lock wait behind a stuck
/// session, or a transaction left open each end in an error the job run
/// records, never a hang. Values in milliseconds. docs/configuration.md.
pub fn with_timeouts(opts: PgConnectOptions, cfg: &crate::config::Postgres) -> PgConnectOptions {
    let ms = |d: crate::config::Dur| d.std().as_millis().max(1);
    opts.options([
        ("statement_timeout", ms(cfg.statement_timeout)),
        ("lock_timeout", ms(cfg.lock_timeout)),
        (
            "idle_in_transaction_session_timeout",
            ms(cfg.idle_in_transaction_timeout),
        ),
    ])
}

/// The setting behind a PostgreSQL timeout error (`None` for any other
/// error), so a failed run names the key to look at.
pub fn timeout_setting(e: &sqlx::Error) -> Option<&'static str> {
    let sqlx::Error::Database(db) = e else {
        return None;
    };
    match db.code().as_deref() {
        Some("57014") if db.message().contains("statement timeout") => {
            Some("msgx.postgres.statement-timeout")
        }
        Some("55P03") if db.message().contains("lock timeout") => {
            Some("msgx.postgres.lock-timeout")
        }
        Some("25P03") => Some("msgx.postgres.idle-in-transaction-timeout"),
        _ => None,
    }
}

/// The SQLSTATE of a server error; `None` for any other error (connection
/// lost, I/O, TLS, pool timeout), which never reached a statement's check.
pub fn sqlstate(e: &sqlx::Error) -> Option<String> {
    match e {
        sqlx::Error::Database(db) => db.code().map(std::borrow::Cow::into_owned),
        _ => None,
    }
}

/// ` (limit: <key>)` after a timeout error, else nothing (for messages).
pub fn timeout_note(e: &sqlx::Error) -> String {
    timeout_setting(e)
        .map(|key| format!(" (the server's limit {key})"))
        .unwrap_or_default()
}

/// The error for a host list none of whose hosts would do: a single host's
/// own connect error as before (TLS failures explained), else every host
/// with why it was passed over.
fn no_host(targets: &ha::Targets, passed: Vec<(String, ha::Passed)>) -> StoreError {
    let options = |name: &str| {
        targets
            .hosts()
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.options.clone())
            .unwrap_or_default()
    };
    let mut passed = passed;
    if targets.hosts().len() == 1
        && passed.len() == 1
        && let Some((name, ha::Passed::Failed(_))) = passed.first()
    {
        let opts = options(name);
        if let Some((_, ha::Passed::Failed(e))) = passed.pop() {
            return connect_error(e, &opts);
        }
    }
    let hosts = passed
        .into_iter()
        .map(|(name, why)| match why {
            ha::Passed::Failed(e) => format!("{name}: {}", connect_error(e, &options(&name))),
            ha::Passed::Unsuitable(r) => format!("{name}: {r}"),
        })
        .collect::<Vec<_>>()
        .join("; ");
    StoreError::NoHost {
        wanted: targets.attrs(),
        hosts,
    }
}

/// `base` as a pool on a single host without `target_session_attrs` has
/// always been: TCP_NODELAY on each new session, sqlx's ping before each
/// acquire.
fn plain_pool(base: PgPoolOptions) -> PgPoolOptions {
    base.after_connect(|_conn, _meta| {
        Box::pin(async {
            nodelay::set_on_all_tcp_sockets();
            Ok(())
        })
    })
}

/// Starts `failover`'s watcher of `pool` ([`ha::Failover::watch`]). Without
/// a runtime (never in msgx: every caller is async) the pool still checks
/// its sessions; it only cannot be re-pointed.
fn watch(failover: std::sync::Arc<ha::Failover>, pool: &PgPool) {
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(failover.watch(pool.clone()));
    }
}

/// Opens the job pool, every session bounded by [`with_timeouts`], on a
/// host that takes writes ([`writer_targets`], [`ha::Failover`]). Sessions
/// keep their statements' generic plans, as PostgreSQL does by default; the
/// pump keeps the statistics behind them current while tables grow
/// ([`statistics`]).
pub async fn connect(cfg: &crate::config::Postgres) -> Result<PgPool, StoreError> {
    let targets = writer_targets(&cfg.url)?.map_options(|o| with_timeouts(o, cfg));
    let base = PgPoolOptions::new()
        .max_connections(cfg.max_connections)
        .acquire_timeout(cfg.acquire_timeout.std());
    if !targets.checked() {
        let opts = targets.hosts()[0].options.clone();
        return plain_pool(base)
            .connect_with(opts.clone())
            .await
            .map_err(|e| connect_error(e, &opts));
    }
    // The host is chosen here, so a URL with no suitable host fails now.
    let chosen = targets.connect().await.map_err(|p| no_host(&targets, p))?;
    let _ = sqlx::Connection::close(chosen.conn).await;
    let failover = ha::Failover::new(targets, chosen.index, cfg.recheck_interval.std());
    let opts = failover.current_options();
    let pool = failover
        .pool_options(base)
        .connect_with(opts.clone())
        .await
        .map_err(|e| connect_error(e, &opts))?;
    watch(failover, &pool);
    Ok(pool)
}

/// Opens the console's own pool: `msgx.console.pool-size`
/// sessions bounded like the jobs' ([`connect`]) but with the console's
/// `statement_timeout`, and named `msgx console` in `pg_stat_activity`. The
/// console never borrows the jobs' pool, so viewers' queries can neither
/// take the pipeline's connections nor run longer than the console allows.
/// Lazy: sessions open on a page's first query, so a database that is down
/// at start fails pages, never the daemon's start. Any
/// `target_session_attrs` is taken (a read-only server serves the pages
/// that only read).
pub fn connect_console(
    pg: &crate::config::Postgres,
    console: &crate::config::Console,
) -> Result<PgPool, StoreError> {
    // Every console query is planned for its own filter values: a cached
    // generic plan of the Messages search could not use the trigram indexes
    // for a rare reason text (migration 0017), and console queries are too
    // few for planning time to matter.
    let reader = Reader {
        pool_size: console.pool_size,
        statement_timeout: console.statement_timeout,
        application: CONSOLE_APPLICATION,
        settings: &[("plan_cache_mode", "force_custom_plan")],
    };
    connect_reader(pg, &reader)
}

/// Opens the ACRIS API's own pool (docs/acris.md): `msgx.acris.pool-size`
/// sessions with `msgx.acris.statement-timeout`, named `msgx acris`, lazy
/// and on any host, as [`connect_console`]. Its few statements keep their
/// generic plans (they are the same for every window).
///
/// JIT is off: the planner's estimate of the flight load for a 1,000-flight
/// page is millions of rows (one join per detail list), so PostgreSQL
/// JIT-compiled it, 2.6 s of its 2.9 s; without JIT it runs in 0.1 s
/// (docs/BENCHMARKS.md "ACRIS API").
pub fn connect_acris(
    pg: &crate::config::Postgres,
    acris: &crate::config::Acris,
) -> Result<PgPool, StoreError> {
    let reader = Reader {
        pool_size: acris.pool_size,
        statement_timeout: acris.statement_timeout,
        application: ACRIS_APPLICATION,
        settings: &[("jit", "off")],
    };
    connect_reader(pg, &reader)
}

/// `application_name` of the ACRIS API's sessions ([`connect_acris`]).
pub const ACRIS_APPLICATION: &str = "msgx acris";

/// A read-side pool of its own ([`connect_console`], [`connect_acris`]).
struct Reader {
    pool_size: u32,
    statement_timeout: crate::config::Dur,
    application: &'static str,
    /// Session settings (startup parameters) of its own.
    settings: &'static [(&'static str, &'static str)],
}

fn connect_reader(pg: &crate::config::Postgres, reader: &Reader) -> Result<PgPool, StoreError> {
    let cfg = crate::config::Postgres {
        max_connections: reader.pool_size,
        statement_timeout: reader.statement_timeout,
        ..pg.clone()
    };
    let targets = connect_targets(&cfg.url)?.map_options(|o| {
        with_timeouts(o, &cfg)
            .options(reader.settings.iter().copied())
            .application_name(reader.application)
    });
    let base = PgPoolOptions::new()
        .max_connections(cfg.max_connections)
        .acquire_timeout(cfg.acquire_timeout.std());
    if !targets.checked() {
        return Ok(plain_pool(base).connect_lazy_with(targets.hosts()[0].options.clone()));
    }
    // Lazy too: the watcher chooses the host in the background; a page
    // arriving first waits for it within the acquire timeout.
    let failover = ha::Failover::new(targets, 0, cfg.recheck_interval.std());
    failover.resolve_soon();
    let pool = failover
        .pool_options(base)
        .connect_lazy_with(failover.current_options());
    watch(failover, &pool);
    Ok(pool)
}

/// `application_name` of the console's sessions ([`connect_console`]).
pub const CONSOLE_APPLICATION: &str = "msgx console";

/// Opens one unpooled session with the connection options of [`connect`]
/// (the instance lock holds its advisory lock on such a session), on a host
/// that takes writes ([`writer_targets`]: hosts in order). It sits
/// idle for the daemon's whole life, so no idle limit may end it: the
/// session turns off `idle_in_transaction_session_timeout` and, on
/// PostgreSQL 14 and later, `idle_session_timeout`, whatever the server or
/// role sets (ending it would release the instance lock).
pub async fn connect_session(url: &str) -> Result<PgConnection, StoreError> {
    let targets = writer_targets(url)?
        .map_options(|o| o.options([("idle_in_transaction_session_timeout", 0)]));
    let mut conn = if targets.checked() {
        targets
            .connect()
            .await
            .map_err(|p| no_host(&targets, p))?
            .conn
    } else {
        let opts = &targets.hosts()[0].options;
        let conn = opts.connect().await.map_err(|e| connect_error(e, opts))?;
        nodelay::set_on_all_tcp_sockets();
        conn
    };
    sqlx::query(
        "SELECT CASE WHEN current_setting('server_version_num')::int >= 140000 \
         THEN set_config('idle_session_timeout', '0', false) END",
    )
    .execute(&mut conn)
    .await?;
    Ok(conn)
}

/// The TLS protocol version of the session that runs the query (e.g.
/// `TLSv1.3`), `None` when it is not encrypted (`pg_stat_ssl`; for `msgx
/// doctor`). On a pool this is one pooled session; all share the options.
pub async fn tls_in_use<'e, E>(executor: E) -> Result<Option<String>, StoreError>
where
    E: sqlx::Executor<'e, Database = sqlx::Postgres>,
{
    Ok(sqlx::query_scalar(
        "SELECT CASE WHEN ssl THEN version END FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
    )
    .fetch_optional(executor)
    .await?
    .flatten())
}

/// Applies pending migrations; idempotent. On a session of its own without
/// `statement_timeout` (a migration may rewrite a large table); its
/// `lock_timeout` stays, so DDL gives up rather than queue behind a long
/// transaction and block everything after it. The session is closed after.
pub async fn migrate(pool: &PgPool) -> Result<Vec<i64>, StoreError> {
    let before = applied_version(pool).await?.unwrap_or(0);
    let mut conn = pool.acquire().await?.detach();
    sqlx::query("SET statement_timeout = 0")
        .execute(&mut conn)
        .await?;
    let ran = MIGRATOR.run(&mut conn).await;
    let _ = sqlx::Connection::close(conn).await;
    ran?;
    Ok(MIGRATOR
        .iter()
        .map(|m| m.version)
        .filter(|v| *v > before)
        .collect())
}

/// The newest migration this binary embeds.
pub fn expected_version() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

/// The newest successfully applied migration, `None` on an unmigrated database.
pub async fn applied_version(pool: &PgPool) -> Result<Option<i64>, StoreError> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(pool)
        .await?;
    if !exists {
        return Ok(None);
    }
    Ok(
        sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
            .fetch_one(pool)
            .await?,
    )
}

/// How a database's schema stands against this binary's migrations: the
/// daemon runs only on `Current` (it refuses an older schema and one migrated
/// by a newer msgx; `msgx migrate --check`, the package's upgrade step).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SchemaStatus {
    /// At this binary's newest migration.
    Current { version: i64 },
    /// No migration applied yet (a new database).
    Unmigrated { expected: i64, pending: Vec<i64> },
    /// Older: `msgx migrate` applies `pending`.
    Behind {
        applied: i64,
        expected: i64,
        pending: Vec<i64>,
    },
    /// Migrated by a newer msgx: this binary must not run on it.
    Newer { applied: i64, expected: i64 },
}

impl SchemaStatus {
    /// Classifies the newest applied migration against the embedded ones.
    pub fn of(applied: Option<i64>, embedded: &[i64]) -> SchemaStatus {
        let expected = embedded.iter().copied().max().unwrap_or(0);
        let after = |v: i64| -> Vec<i64> { embedded.iter().copied().filter(|m| *m > v).collect() };
        match applied {
            Some(v) if v == expected => SchemaStatus::Current { version: v },
            Some(v) if v > expected => SchemaStatus::Newer {
                applied: v,
                expected,
            },
            Some(v) => SchemaStatus::Behind {
                applied: v,
                expected,
                pending: after(v),
            },
            None => SchemaStatus::Unmigrated {
                expected,
                pending: after(0),
            },
        }
    }

    pub fn is_current(&self) -> bool {
        matches!(self, SchemaStatus::Current { .. })
    }

    /// The error the daemon and the commands refuse a non-current schema with.
    pub fn into_result(self) -> Result<i64, StoreError> {
        match self {
            SchemaStatus::Current { version } => Ok(version),
            SchemaStatus::Newer { applied, expected } => Err(StoreError::SchemaMismatch {
                found: Some(applied),
                expected,
                hint: "A newer msgx migrated it; run that version (never downgrade a live schema).",
            }),
            SchemaStatus::Behind {
                applied, expected, ..
            } => Err(StoreError::SchemaMismatch {
                found: Some(applied),
                expected,
                hint: "Run `msgx migrate` first.",
            }),
            SchemaStatus::Unmigrated { expected, .. } => Err(StoreError::SchemaMismatch {
                found: None,
                expected,
                hint: "Run `msgx migrate` first.",
            }),
        }
    }
}

/// Reads how the schema stands (read-only: takes no lock, applies nothing).
pub async fn schema_status(pool: &PgPool) -> Result<SchemaStatus, StoreError> {
    let embedded: Vec<i64> = MIGRATOR.iter().map(|m| m.version).collect();
    Ok(SchemaStatus::of(applied_version(pool).await?, &embedded))
}

/// Refuses an unmigrated database and one migrated by a newer msgx.
pub async fn ensure_schema_current(pool: &PgPool) -> Result<i64, StoreError> {
    schema_status(pool).await?.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ProcState;

    #[test]
    fn the_schema_status_compares_the_newest_applied_migration_with_the_embedded_ones() {
        let embedded = [1, 2, 3];
        assert_eq!(
            SchemaStatus::of(Some(3), &embedded),
            SchemaStatus::Current { version: 3 }
        );
        assert_eq!(
            SchemaStatus::of(Some(1), &embedded),
            SchemaStatus::Behind {
                applied: 1,
                expected: 3,
                pending: vec![2, 3]
            }
        );
        assert_eq!(
            SchemaStatus::of(None, &embedded),
            SchemaStatus::Unmigrated {
                expected: 3,
                pending: vec![1, 2, 3]
            }
        );
        let newer = SchemaStatus::of(Some(4), &embedded);
        assert_eq!(
            newer,
            SchemaStatus::Newer {
                applied: 4,
                expected: 3
            }
        );
        assert!(
            newer
                .into_result()
                .unwrap_err()
                .to_string()
                .contains("newer msgx")
        );
        assert!(SchemaStatus::of(Some(3), &embedded).is_current());
    }

    /// The quoted states `pred` admits, as the SQL lists them.
    fn state_list(pred: fn(ProcState) -> bool) -> String {
        let states: Vec<String> = ProcState::ALL
            .into_iter()
            .filter(|s| pred(*s))
            .map(|s| format!("'{}'", s.as_str()))
            .collect();
        states.join(", ")
    }

    /// The PROC_STATE SQL keeps its state lists as literals (the statement
    /// texts stay as they were); each one is the lifecycle type's predicate
    /// for what it selects, so the two cannot drift.
    #[test]
    fn every_proc_state_list_in_the_sql_is_a_lifecycle_predicate() {
        let unfinished = state_list(ProcState::is_unfinished);
        let replayable = state_list(ProcState::may_replay);
        let files: [(&str, &str, Vec<String>); 4] = [
            (
                "proc_state.rs",
                include_str!("proc_state.rs"),
                vec![unfinished.clone(), replayable],
            ),
            ("facts.rs", include_str!("facts.rs"), vec![unfinished]),
            (
                "backfill.rs",
                include_str!("backfill.rs"),
                vec![state_list(ProcState::takes_backfill)],
            ),
            (
                "proc_state_hst.rs",
                include_str!("proc_state_hst.rs"),
                vec![state_list(ProcState::may_archive)],
            ),
        ];
        let opening = "state IN (";
        for (file, sql, allowed) in files {
            let mut seen = 0;
            for (at, _) in sql.match_indices(opening) {
                let rest = &sql[at + opening.len()..];
                let list = &rest[..rest.find(')').unwrap_or(rest.len())];
                assert!(
                    allowed.iter().any(|a| a == list),
                    "{file}: state IN ({list})"
                );
                seen += 1;
            }
            assert!(seen > 0, "{file} has no state list");
        }
    }

    fn ca_file(dir: &std::path::Path) -> PathBuf {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["ca.test".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let path = dir.join("ca.pem");
        std::fs::write(&path, cert.pem()).unwrap();
        path
    }

    #[test]
    fn certificate_files_are_read_back_from_the_effective_options() {
        let opts: PgConnectOptions =
            "postgres://u@h/db?sslmode=verify-full&sslrootcert=/a/ca.pem&sslcert=/a/c.pem&sslkey=/a/c.key"
                .parse()
                .unwrap();
        assert_eq!(
            tls_files(&opts),
            TlsFiles {
                root_cert: Some("/a/ca.pem".into()),
                cert: Some("/a/c.pem".into()),
                key: Some("/a/c.key".into()),
            }
        );
    }

    #[test]
    fn require_with_a_root_certificate_verifies_the_ca_as_libpq_does() {
        let dir = tempfile::tempdir().unwrap();
        let ca = ca_file(dir.path());
        let url = format!(
            "postgres://u@h/db?sslmode=require&sslrootcert={}",
            ca.display()
        );
        let opts = connect_options(&url).unwrap();
        assert!(matches!(opts.get_ssl_mode(), PgSslMode::VerifyCa));
        let opts = connect_options("postgres://u@h/db?sslmode=require").unwrap();
        assert!(matches!(opts.get_ssl_mode(), PgSslMode::Require));
    }

    #[test]
    fn every_host_of_a_list_gets_its_options_and_writers_refuse_read_only_kinds() {
        let t = connect_targets(
            "postgres://u:pw@[::1]:5433,db2/msgx?sslmode=disable&target_session_attrs=primary",
        )
        .unwrap();
        let names: Vec<&str> = t.hosts().iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["[::1]:5433", "db2:5432"]);
        assert!(t.checked());
        assert_eq!(t.attrs(), hosts::TargetSessionAttrs::Primary);
        assert!(
            t.hosts()
                .iter()
                .all(|h| h.options.get_database() == Some("msgx"))
        );
        // A single host without target_session_attrs is not checked.
        assert!(!connect_targets("postgres://u@h/db").unwrap().checked());
        assert_eq!(
            connect_targets("postgres://u@h1,h2/db").unwrap().attrs(),
            hosts::TargetSessionAttrs::ReadWrite
        );
        for (url, refused) in [
            ("postgres://u@h1,h2/db?target_session_attrs=standby", true),
            ("postgres://u@h1,h2/db?target_session_attrs=any", true),
            ("postgres://u@h/db?target_session_attrs=read-only", true),
            ("postgres://u@h/db?target_session_attrs=any", false),
            ("postgres://u@h1,h2/db?target_session_attrs=primary", false),
            ("postgres://u@h1,h2/db", false),
        ] {
            let r = writer_targets(url);
            assert_eq!(
                matches!(r, Err(StoreError::NotAWriter(_))),
                refused,
                "{url}"
            );
        }
        assert!(matches!(
            connect_targets("postgres://u@h1,h2,h3/db?port=1,2"),
            Err(StoreError::Url(hosts::UrlError::PortCount { .. }))
        ));
    }

    #[test]
    fn a_missing_certificate_file_names_the_parameter() {
        let e = connect_options(
            "postgres://u@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("PostgreSQL TLS: sslrootcert = /nonexistent/ca.pem: cannot read it"),
            "{e}"
        );
        let e = connect_options("postgres://u@h/db?sslmode=require&sslkey=/nonexistent/k.pem")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sslkey = /nonexistent/k.pem"), "{e}");
        // Without TLS the files are not used, so not read.
        assert!(
            connect_options("postgres://u@h/db?sslmode=disable&sslrootcert=/nonexistent/ca.pem")
                .is_ok()
        );
    }
}
