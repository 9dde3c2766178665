//! Test harness: every test gets its own real PostgreSQL database (and, when
//! it needs one, its own MariaDB mailbox database), created fresh and dropped
//! afterwards, so tests run in parallel without sharing state.
//!
//! Admin URLs come from `MSGX_TEST_PG_ADMIN_URL` and `MSGX_TEST_MYSQL_ADMIN_URL`
//! (defaults match `scripts/services.sh`).
#![allow(dead_code)]

pub mod browser;
pub mod contract;
pub mod jobs;
pub mod queries;
pub mod rust_source;
pub mod servers;
pub mod sis;

use msgx::clock::{ManualClock, SharedClock};
use msgx::config::Config;
use sqlx::{Connection, PgConnection, PgPool};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// The admin URL of the test PostgreSQL (a superuser that may create databases).
pub fn pg_admin_url() -> String {
    std::env::var("MSGX_TEST_PG_ADMIN_URL")
        .unwrap_or_else(|_| "postgres://msgx:msgx@127.0.0.1:5432/postgres".into())
}

/// A unique, lower-case database name.
pub fn unique_name(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}_{}_{n}_{nanos}", std::process::id())
}

fn with_db(url: &str, db: &str) -> String {
    match url.rfind('/') {
        Some(i) => format!("{}/{db}", &url[..i]),
        None => format!("{url}/{db}"),
    }
}

/// A fresh PostgreSQL database, dropped on drop.
pub struct TestDb {
    pub name: String,
    pub url: String,
    pub pool: PgPool,
}

impl TestDb {
    /// Creates an empty database (no migrations).
    pub async fn empty() -> TestDb {
        TestDb::create(None).await
    }

    /// A new database, a copy of `template` when given.
    async fn create(template: Option<&str>) -> TestDb {
        let name = unique_name("msgx_t");
        let mut admin = PgConnection::connect(&pg_admin_url())
            .await
            .expect("connect to test PostgreSQL");
        let from = template.map_or(String::new(), |t| format!(" TEMPLATE \"{t}\""));
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "CREATE DATABASE \"{name}\"{from}"
        )))
        .execute(&mut admin)
        .await
        .expect("create db");
        // A test's commits need not survive a crash of the test server (no
        // test crashes it; the private servers run with fsync off), so
        // COMMIT does not wait for its WAL flush: the suite is bound by
        // CPU, not by the disk's flush rate. Visibility and locking are
        // unchanged.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE \"{name}\" SET synchronous_commit = off"
        )))
        .execute(&mut admin)
        .await
        .expect("alter db");
        let _ = admin.close().await;
        let url = with_db(&pg_admin_url(), &name);
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(5)
            .connect(&url)
            .await
            .expect("connect to the test database");
        TestDb { name, url, pool }
    }

    /// Creates a database with the msgx schema applied, recording every
    /// outbox row msgx appends for the contract check on drop: a copy of
    /// the [`migrated_template`] (`CREATE DATABASE … TEMPLATE`, about a
    /// fifth of the time of migrating each test's database).
    pub async fn migrated() -> TestDb {
        let template = migrated_template().await;
        TestDb::create(Some(&template)).await
    }

    /// Every record msgx appended to the outbox in the database at `url`,
    /// checked against schemas/ (issue 18 item 5); the failures, one line
    /// each. `None` when the database cannot be read any more (a test
    /// closed it to connections).
    pub async fn contract_failures(url: String) -> Option<Vec<String>> {
        let mut conn = PgConnection::connect(&url).await.ok()?;
        let logged: Option<Vec<LoggedEvent>> = sqlx::query_as(
            "SELECT target, partition_key, event_type, payload FROM msgx_test.event_log ORDER BY n",
        )
        .fetch_all(&mut conn)
        .await
        .ok();
        let _ = conn.close().await;
        Some(
            logged?
                .iter()
                .filter_map(|(target, key, event_type, payload)| {
                    contract::check_record(
                        contract::topic_of(target),
                        key.as_bytes(),
                        event_type,
                        payload.as_deref(),
                    )
                    .err()
                })
                .collect(),
        )
    }

    /// A config pointing at this database, with fast lock checks for tests.
    /// The mailbox URL points nowhere useful until [`TestDb::with_mailbox`].
    pub fn config(&self) -> Config {
        let mut c = Config::default();
        c.msgx.postgres.url = self.url.clone();
        c.msgx.mailbox.url = "mysql://msgx:msgx@127.0.0.1:3306/msgx_mailbox".into();
        c.msgx.mailbox.timeout = "3s".parse().expect("duration");
        c.msgx.mailbox.statement_timeout = "2s".parse().expect("duration");
        c.msgx.log.dir = String::new();
        c.msgx.daemon.lock_check_interval = "200ms".parse().expect("duration");
        c.msgx.daemon.standby_poll_interval = "200ms".parse().expect("duration");
        c
    }

    /// Writes this database's config, adjusted by `tweak`, to a temp file
    /// for the binary.
    pub fn config_file_with(&self, tweak: impl FnOnce(&mut Config)) -> tempfile::NamedTempFile {
        let mut config = self.config();
        tweak(&mut config);
        write_config(&config)
    }

    /// Makes every INSERT into `table` fail with `message` (a trigger), to
    /// inject a database fault at one exact step; [`TestDb::allow_inserts`]
    /// undoes it. The fault is an outage: SQLSTATE 53100 `disk_full`, which
    /// the pump records as INFRA (a message's data error would be DATA,
    /// issue 31).
    pub async fn fail_inserts(&self, table: &str, message: &str) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "CREATE FUNCTION fail_{table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '{message}' USING ERRCODE = 'disk_full'; END $$; \
             CREATE TRIGGER fail_{table} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION fail_{table}();"
        )))
        .execute(&self.pool)
        .await
        .expect("fault trigger");
    }

    /// Undoes [`TestDb::fail_inserts`].
    pub async fn allow_inserts(&self, table: &str) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "DROP TRIGGER fail_{table} ON {table}"
        )))
        .execute(&self.pool)
        .await
        .expect("drop fault trigger");
    }

    /// [`TestDb::config_file_with`] without changes.
    pub fn config_file(&self) -> tempfile::NamedTempFile {
        self.config_file_with(|_| {})
    }
}

/// One row of the contract event log: target, key, event type, payload.
type LoggedEvent = (String, String, String, Option<Vec<u8>>);

/// A log of every row msgx's outbox append writes (its statement carries
/// the marker `/* msgx:outbox-append */`; rows a test inserts by hand are
/// not msgx's records and are not logged), kept in a schema of its own so
/// no msgx query sees it. Replaced KAFKA:schd rows stay in the log.
const EVENT_LOG_DDL: &str = "\
    CREATE SCHEMA msgx_test; \
    CREATE TABLE msgx_test.event_log (n bigserial PRIMARY KEY, target text, partition_key text, \
        event_type text, payload bytea); \
    CREATE FUNCTION msgx_test.log_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
        IF current_query() LIKE '%/* msgx:outbox-append */%' THEN \
            INSERT INTO msgx_test.event_log (target, partition_key, event_type, payload) \
            VALUES (NEW.target, NEW.partition_key, NEW.event_type, NEW.payload); \
        END IF; RETURN NULL; END $$; \
    CREATE TRIGGER msgx_test_event_log AFTER INSERT OR UPDATE OF payload, event_type ON msg_event \
        FOR EACH ROW EXECUTE FUNCTION msgx_test.log_event();";

impl Drop for TestDb {
    fn drop(&mut self) {
        // The contract check (issue 18 item 5): only when the test did not
        // fail already, so its own failure is the one reported.
        if !std::thread::panicking() {
            let url = self.url.clone();
            let failures = Arc::new(std::sync::Mutex::new(None));
            let out = failures.clone();
            cleanup(async move {
                let found = TestDb::contract_failures(url).await;
                *out.lock().unwrap_or_else(|e| e.into_inner()) = found;
            });
            let failures = failures.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(f) = failures.filter(|f| !f.is_empty()) {
                self.drop_database();
                panic!(
                    "{} outbox record(s) break the consumer contract (schemas/):\n{}",
                    f.len(),
                    f.join("\n")
                );
            }
        }
        self.drop_database();
    }
}

impl TestDb {
    fn drop_database(&mut self) {
        let name = self.name.clone();
        cleanup(async move {
            if let Ok(mut admin) = PgConnection::connect(&pg_admin_url()).await {
                let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
                )))
                .execute(&mut admin)
                .await;
            }
        });
    }
}

/// The database every [`TestDb::migrated`] copies: msgx's migrations and
/// the contract event log, made once per migration set (named by a hash of
/// the migrations' checksums, so a schema change makes a new one) and
/// marked a template. Test processes run in parallel: an advisory lock on
/// the admin database lets one make it while the others wait.
/// `scripts/test.sh` drops the templates of earlier runs.
async fn migrated_template() -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for m in msgx::store::pg::MIGRATOR.iter() {
        h.update(m.version.to_le_bytes());
        h.update(&m.checksum);
    }
    h.update(EVENT_LOG_DDL.as_bytes());
    let name = format!("msgx_tpl_{}", &hex::encode(h.finalize())[..16]);
    let mut admin = PgConnection::connect(&pg_admin_url())
        .await
        .expect("connect to test PostgreSQL");
    sqlx::query("SELECT pg_advisory_lock(hashtext('msgx test template'))")
        .execute(&mut admin)
        .await
        .expect("template lock");
    let ready: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)",
    )
    .bind(&name)
    .fetch_one(&mut admin)
    .await
    .expect("look for the template");
    if !ready {
        // A half-made one (a test killed while making it) goes first.
        let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&mut admin)
            .await
            .expect("drop a half-made template");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&mut admin)
            .await
            .expect("create the template");
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect(&with_db(&pg_admin_url(), &name))
            .await
            .expect("connect to the template");
        msgx::store::pg::migrate(&pool)
            .await
            .expect("migrations apply");
        sqlx::raw_sql(EVENT_LOG_DDL)
            .execute(&pool)
            .await
            .expect("contract event log");
        pool.close().await;
        let sql =
            format!("ALTER DATABASE \"{name}\" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&mut admin)
            .await
            .expect("mark the template");
    }
    let _ = sqlx::query("SELECT pg_advisory_unlock(hashtext('msgx test template'))")
        .execute(&mut admin)
        .await;
    let _ = admin.close().await;
    name
}

/// The admin URL of the test MariaDB (may create databases).
pub fn mysql_admin_url() -> String {
    std::env::var("MSGX_TEST_MYSQL_ADMIN_URL")
        .unwrap_or_else(|_| "mysql://msgx:msgx@127.0.0.1:3306".into())
}

/// How the mailbox tables are spelled: the predecessor's DDL (`cminmsgs`,
/// the default) or upper case (`CMINMSGS`), as some sites have them. msgx
/// must work with both (issue 16, item 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    Lower,
    Upper,
}

/// A fresh MariaDB mailbox database with the predecessor's DDL, dropped on drop.
pub struct TestMailbox {
    pub name: String,
    pub url: String,
    pub pool: mysql_async::Pool,
    /// The inbound table's name as created (`cminmsgs` or `CMINMSGS`).
    pub inbox: &'static str,
    /// The server's admin URL (without a database).
    admin: String,
}

impl TestMailbox {
    /// The predecessor's DDL as it is (`migrations/mailbox/`).
    pub async fn new() -> TestMailbox {
        TestMailbox::with_spelling(Spelling::Lower).await
    }

    /// The predecessor's DDL with the table names spelled as `spelling` says.
    pub async fn with_spelling(spelling: Spelling) -> TestMailbox {
        TestMailbox::create(spelling, mysql_admin_url()).await
    }

    /// A mailbox on another server (e.g. a private one of `servers.rs`),
    /// reached with `admin_url` (a user that may create databases).
    pub async fn on_server(admin_url: &str) -> TestMailbox {
        TestMailbox::create(Spelling::Lower, admin_url.to_string()).await
    }

    async fn create(spelling: Spelling, admin_url: String) -> TestMailbox {
        use mysql_async::prelude::Queryable;
        let name = unique_name("msgx_mb");
        let admin = mysql_async::Pool::from_url(&admin_url).expect("admin url");
        let mut conn = admin.get_conn().await.expect("connect to test MariaDB");
        conn.query_drop(format!("CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
            .await
            .expect("create db");
        drop(conn);
        let _ = admin.disconnect().await;
        let url = format!("{}/{name}", admin_url.trim_end_matches('/'));
        let pool = mysql_async::Pool::from_url(&url).expect("url");
        let mut ddl: String = include_str!("../../../migrations/mailbox/0001_mailbox.sql")
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .collect::<Vec<_>>()
            .join("\n");
        let inbox = match spelling {
            Spelling::Lower => "cminmsgs",
            Spelling::Upper => {
                ddl = ddl
                    .replace("`cminmsgs`", "`CMINMSGS`")
                    .replace("`coutmsgs`", "`COUTMSGS`");
                "CMINMSGS"
            }
        };
        let mut conn = pool.get_conn().await.expect("connect");
        for stmt in ddl.split(';').filter(|s| s.contains("CREATE TABLE")) {
            conn.query_drop(stmt).await.expect("mailbox DDL");
        }
        TestMailbox {
            name,
            url,
            pool,
            inbox,
            admin: admin_url,
        }
    }

    /// Inserts a message and commits; returns its ID.
    pub async fn insert(&self, xml: &str) -> i64 {
        use mysql_async::prelude::Queryable;
        let mut conn = self.pool.get_conn().await.expect("connect");
        conn.exec_drop(
            format!(
                "INSERT INTO {} (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS) VALUES (?, NOW(), 'VALID')",
                self.inbox
            ),
            (xml,),
        )
        .await
        .expect("insert");
        conn.last_insert_id().expect("id") as i64
    }

    /// Inserts a message inside a transaction that is rolled back, leaving a
    /// permanent hole in the ID sequence; returns the lost ID.
    pub async fn insert_rolled_back(&self, xml: &str) -> i64 {
        use mysql_async::prelude::Queryable;
        let mut conn = self.pool.get_conn().await.expect("connect");
        let mut tx = conn
            .start_transaction(mysql_async::TxOpts::default())
            .await
            .expect("tx");
        tx.exec_drop(
            format!(
                "INSERT INTO {} (CMINMSGS_CLOB_MSG, CMINMSGS_STATUS) VALUES (?, 'VALID')",
                self.inbox
            ),
            (xml,),
        )
        .await
        .expect("insert");
        let id = tx.last_insert_id().expect("id") as i64;
        tx.rollback().await.expect("rollback");
        id
    }

    /// Runs one statement.
    pub async fn exec(&self, sql: &str) {
        use mysql_async::prelude::Queryable;
        let mut conn = self.pool.get_conn().await.expect("connect");
        conn.query_drop(sql).await.expect("statement");
    }
}

impl Drop for TestMailbox {
    fn drop(&mut self) {
        let (name, admin_url) = (self.name.clone(), self.admin.clone());
        cleanup(async move {
            use mysql_async::prelude::Queryable;
            if let Ok(admin) = mysql_async::Pool::from_url(admin_url)
                && let Ok(mut conn) = admin.get_conn().await
            {
                // As PostgreSQL's DROP DATABASE … WITH (FORCE): the test's
                // own pools may still hold a connection whose failed
                // transaction keeps a metadata lock (mysql_async rolls it
                // back on a task this blocked runtime cannot run), and the
                // DROP would wait for it forever.
                let others: Vec<u64> = conn
                    .exec(
                        "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()",
                        (name.as_str(),),
                    )
                    .await
                    .unwrap_or_default();
                for id in others {
                    let _ = conn.query_drop(format!("KILL CONNECTION {id}")).await;
                }
                let _ = conn.query_drop("SET SESSION lock_wait_timeout = 60").await;
                let _ = conn
                    .query_drop(format!("DROP DATABASE IF EXISTS `{name}`"))
                    .await;
                drop(conn);
                let _ = admin.disconnect().await;
            }
        });
    }
}

/// Runs async cleanup from `Drop` (which cannot await) on a separate thread
/// with its own runtime, and waits for it.
fn cleanup(work: impl std::future::Future<Output = ()> + Send + 'static) {
    let _ = std::thread::spawn(move || {
        if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            rt.block_on(work);
        }
    })
    .join();
}

/// An in-process job runner on `db` (and `mailbox` when given), with the
/// config adjusted by `tweak`. Keep the returned sender: it is the shutdown.
pub fn runner(
    db: &TestDb,
    mailbox: Option<&TestMailbox>,
    clock: SharedClock,
    tweak: impl FnOnce(&mut Config),
) -> (
    msgx::scheduler::runner::JobRunner,
    tokio::sync::watch::Sender<bool>,
) {
    let mut config = db.config();
    if let Some(m) = mailbox {
        config.msgx.mailbox.url = m.url.clone();
    }
    tweak(&mut config);
    let (tx, rx) = tokio::sync::watch::channel(false);
    let runner = msgx::scheduler::runner::JobRunner {
        pg: db.pool.clone(),
        mailbox: msgx::store::mailbox::Mailbox::new(&config.msgx.mailbox).expect("mailbox url"),
        config: Arc::new(config),
        clock,
        instance: "test".into(),
        trigger: msgx::scheduler::runner::Trigger::Cli,
        shutdown: rx,
        kafka: Default::default(),
        jobs: Default::default(),
        pauses: Default::default(),
        run_log: None,
    };
    (runner, tx)
}

/// Writes `config` to a temp TOML file for the binary (`--config`).
pub fn write_config(config: &Config) -> tempfile::NamedTempFile {
    let text = toml::to_string(config).expect("config serialises");
    let file = tempfile::Builder::new()
        .suffix(".toml")
        .tempfile()
        .expect("temp file");
    std::fs::write(file.path(), text).expect("write config");
    file
}

/// A manual clock at a fixed, recent instant.
pub fn manual_clock() -> (ManualClock, SharedClock) {
    let start = chrono::DateTime::parse_from_rfc3339("2026-12-01T08:00:00Z")
        .expect("valid instant")
        .with_timezone(&chrono::Utc);
    let clock = ManualClock::new(start);
    let shared: SharedClock = Arc::new(clock.clone());
    (clock, shared)
}

/// The msgx binary built for this test run.
pub fn msgx_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_msgx"))
}

/// Runs `msgx --config <file> args...` to completion, without the caller's
/// MSGX_* environment leaking in.
pub fn msgx(config: &std::path::Path, args: &[&str]) -> Output {
    Command::new(msgx_bin())
        .arg("--config")
        .arg(config)
        .args(args)
        .env_remove("MSGX_CONFIG")
        .env_remove("MSGX_DATABASE_URL")
        .env_remove("MSGX_MAILBOX_URL")
        .env_remove("MSGX_KAFKA_BROKERS")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run msgx")
}

/// Waits (polling, bounded) until `cond` holds. Used only where a separate
/// process must reach a state; logic under test never sleeps for time.
pub async fn wait_until<F, Fut>(what: &str, timeout: std::time::Duration, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = std::time::Instant::now();
    loop {
        if cond().await {
            return;
        }
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The value of the series `name` in a Prometheus text `page` whose labels
/// include `labels`.
pub fn metric_value(page: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    page.lines().find_map(|line| {
        let (series, v) = line.rsplit_once(' ')?;
        let (n, rest) = match series.split_once('{') {
            Some((n, rest)) => (n, rest),
            None => (series, ""),
        };
        if n != name
            || !labels
                .iter()
                .all(|(k, val)| rest.contains(&format!("{k}=\"{val}\"")))
        {
            return None;
        }
        v.parse().ok()
    })
}

/// Exit code of a finished process.
pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// Both output streams, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A `msgx daemon` process whose output goes to a temp file; killed on drop.
/// The log opened for appending, so stdout and stderr (a panic's report)
/// never overwrite each other's lines.
fn append(path: &std::path::Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("log file opens")
}

pub struct Daemon {
    child: std::process::Child,
    log: tempfile::NamedTempFile,
}

impl Daemon {
    pub fn spawn(config: &std::path::Path, extra: &[&str]) -> Daemon {
        Self::spawn_with_env(config, extra, &[])
    }
    /// As [`Daemon::spawn`], with extra environment (e.g. `MSGX_FAULT`).
    pub fn spawn_with_env(
        config: &std::path::Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Daemon {
        let log = tempfile::NamedTempFile::new().unwrap();
        let child = std::process::Command::new(msgx_bin())
            .arg("--config")
            .arg(config)
            .arg("daemon")
            .args(extra)
            .env_remove("MSGX_DATABASE_URL")
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::from(append(log.path())))
            .stderr(std::process::Stdio::from(append(log.path())))
            .spawn()
            .expect("spawn daemon");
        Daemon { child, log }
    }
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    pub fn output(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
    /// The address the daemon logged for its ops endpoints (it binds port 0).
    pub fn ops_address(&self) -> Option<std::net::SocketAddr> {
        let log = self.output();
        let line = log.lines().find(|l| l.contains("Ops endpoints"))?;
        let at = line.find("listen=")? + "listen=".len();
        line[at..].split_whitespace().next()?.parse().ok()
    }
    pub async fn wait_exit(&mut self, timeout: std::time::Duration) -> i32 {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                start.elapsed() < timeout,
                "daemon did not exit; log:\n{}",
                self.output()
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    pub fn terminate(&self) {
        let _ = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP connection to `addr` from the source address `from` (any of
/// 127.0.0.0/8 is loopback on Linux): a distinct client for the listeners'
/// per-client budgets.
pub async fn connect_from(
    from: std::net::IpAddr,
    addr: std::net::SocketAddr,
) -> tokio::net::TcpStream {
    let socket = match from {
        std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
        std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
    }
    .expect("socket");
    socket
        .bind(std::net::SocketAddr::new(from, 0))
        .unwrap_or_else(|e| panic!("bind {from}: {e}"));
    socket
        .connect(addr)
        .await
        .unwrap_or_else(|e| panic!("connect {addr} from {from}: {e}"))
}

/// A minimal HTTP/1.1 request over a real socket; returns (status, body).
pub async fn http(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read");
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

/// librdkafka's in-process mock cluster with the topics `msg`, `schd`,
/// `season` and `audit` (3 partitions each): a real Kafka-protocol broker
/// (infra notes).
pub fn mock_kafka(
    brokers: i32,
) -> rdkafka::mocking::MockCluster<'static, rdkafka::producer::DefaultProducerContext> {
    let cluster = rdkafka::mocking::MockCluster::new(brokers).expect("mock cluster");
    for t in ["msg", "schd", "season", "audit"] {
        cluster
            .create_topic(t, 3, brokers.min(3))
            .expect("create topic");
    }
    cluster
}

/// Everything in `topic` of the mock `cluster` now (every partition to its end).
pub async fn consume(
    cluster: &rdkafka::mocking::MockCluster<'static, rdkafka::producer::DefaultProducerContext>,
    topic: &str,
) -> Vec<msgx::commands::tail::TailRecord> {
    use msgx::commands::tail::{TailOptions, tail};
    let mut cfg = Config::default();
    fast_kafka(&mut cfg, &cluster.bootstrap_servers());
    let mut out = Vec::new();
    let opts = TailOptions {
        from_beginning: true,
        max: None,
        follow: false,
        idle: std::time::Duration::from_secs(10),
    };
    tail(&cfg.msgx.kafka, topic, &opts, |r| out.push(r.clone()))
        .await
        .expect("consume");
    for r in &out {
        check_contract(r);
    }
    out
}

/// Every record a test reads from the topics keeps the consumer contract
/// (docs/asyncapi.yaml, issue 18 item 5): key and value by schemas/, the
/// three headers (and a valid `traceparent` when there is one), and the
/// `state-version` header equal to the value's version (`state_version`, a
/// season record's `revision`, an audit event's `operator_action_id`).
pub fn check_contract(r: &msgx::commands::tail::TailRecord) {
    // The tests use the default topic names, which are the logical ones.
    let event_type = r.headers.get("event-type").map_or("", String::as_str);
    contract::assert_record(
        &r.topic,
        r.key.as_deref().unwrap_or_default().as_bytes(),
        event_type,
        r.value.as_deref().map(str::as_bytes),
    );
    let version = r.header_i64("state-version");
    assert!(
        version.is_some() && r.header_i64("event-id").is_some(),
        "headers: {r:?}"
    );
    // Optional (issue 21 item 5), but valid W3C Trace Context when present.
    if let Some(t) = r.headers.get("traceparent") {
        let parsed = msgx::telemetry::trace_context::TraceParent::parse(t);
        assert!(parsed.is_ok(), "traceparent {t:?}: {parsed:?}");
    }
    if let Some(v) = &r.value {
        let v: serde_json::Value = serde_json::from_str(v).expect("checked JSON");
        let own = v["state_version"]
            .as_i64()
            .or(v["revision"].as_i64())
            .or(v["data"]["operator_action_id"].as_i64());
        assert_eq!(own, version, "{r:?}");
    }
}

/// Fast-failing Kafka settings for tests (infra notes).
pub fn fast_kafka(c: &mut Config, bootstrap: &str) {
    c.msgx.kafka.brokers = bootstrap.to_string();
    c.msgx.kafka.message_timeout = "2s".parse().expect("duration");
    c.msgx.kafka.call_timeout = "5s".parse().expect("duration");
    c.msgx.kafka.reconnect_backoff_max = "200ms".parse().expect("duration");
}

/// What [`capture_logs`] collected: the formatted lines, without colours.
#[derive(Clone, Default)]
pub struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl Logs {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Collects the WARN and higher log lines of this thread while the guard
/// lives (a `#[tokio::test]` runs its tasks on its own thread, so the pump's
/// logs are in it; lines from `spawn_blocking` threads are not).
pub fn capture_logs() -> (Logs, tracing::subscriber::DefaultGuard) {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .with_writer(move || writer.clone())
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}

/// The SQL statements sqlx executed on this thread while the guard of
/// [`record_statements`] lives, each by its first words.
#[derive(Clone, Default)]
pub struct Statements(Arc<std::sync::Mutex<Vec<String>>>);

impl Statements {
    /// The statements recorded so far; starts a new record.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Statements {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Summary(String);
        impl tracing::field::Visit for Summary {
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                if field.name() == "summary" {
                    self.0 = value.to_string();
                }
            }
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "summary" {
                    self.0 = format!("{value:?}");
                }
            }
        }
        if event.metadata().target() == "sqlx::query" {
            let mut summary = Summary(String::new());
            event.record(&mut summary);
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(summary.0);
        }
    }
}

/// Records every statement sqlx executes on this thread while the guard
/// lives: sqlx logs each one as an event of target `sqlx::query` (at DEBUG,
/// or WARN when slow), and a `#[tokio::test]` runs its tasks on its own
/// thread. Pings and connection set-up are not statements and not recorded.
pub fn record_statements() -> (Statements, tracing::subscriber::DefaultGuard) {
    use tracing_subscriber::layer::SubscriberExt;
    let statements = Statements::default();
    let subscriber = tracing_subscriber::registry().with(statements.clone());
    (statements, tracing::subscriber::set_default(subscriber))
}

/// A raw HTTP/1.1 answer read to its end: the status code (0 when the
/// status line is missing), each header as (lower-case name, value) in
/// order, and the body. The console and ACRIS tests speak HTTP by hand.
pub fn parse_http_answer(raw: &[u8]) -> (u16, Vec<(String, String)>, String) {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}
