//! Private TLS-enabled PostgreSQL and MariaDB servers for `tests/it/tls.rs`,
//! with certificates generated here (rcgen): a CA, a server certificate for
//! `localhost` and 127.0.0.1 signed by it, a client certificate for the user
//! `msgx_cert`, and an unrelated second CA.
//!
//! Four servers, each listening on 127.0.0.1 and 127.0.0.2 (127.0.0.2 is not
//! in the server certificate, so it exercises host-name checks):
//! - `pg_tls`: PostgreSQL 15 with `ssl = on`, only `hostssl` lines (plaintext
//!   refused), `cert` authentication for `msgx_cert`, trust for `msgx`;
//! - `pg_plain`: the same cluster copied, `ssl = off` (offers no TLS);
//! - `my_tls`: MariaDB with `--ssl-*` and `--require-secure-transport`,
//!   users `msgx` and `msgx_cert` (`REQUIRE X509`), password `msgx`;
//! - `my_plain`: the same datadir copied, `--skip-ssl`.
//!
//! A fifth, `quiet_mariadb` (plain, no TLS, in a directory of its own), is
//! for tests that read the server's global state — status counters, the
//! InnoDB transaction list (issue 20): only the test holding its
//! [`QuietMariaDb`] lease talks to it, so those counts are the test's own.
//! A pair, `replica_pair` (issue 31 item 7), is a primary with its binary
//! log on and a replica of it, leased the same way, for what msgx may trust
//! when it reads a replica. `pg_pair` is the same for PostgreSQL: a primary
//! and a streaming replica of it (`pg_basebackup -R`), for the host lists
//! of `msgx.postgres.url`.
//!
//! They start once per test run, not per test: nextest runs every test in
//! its own process, so the first process to take `<dir>/lock` starts them
//! and writes `<dir>/ready`; the others read the ports from it. The
//! directory is keyed by `NEXTEST_RUN_ID` (else by this process). A watcher
//! process, started before any server, waits for the test runner (nextest,
//! else this process) to exit, then stops the servers it finds recorded and
//! removes the directory, so nothing is left in /tmp. Every wait is bounded.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The generated certificates and keys (PEM files).
#[derive(Debug, Clone)]
pub struct Pki {
    /// The CA that signs the servers' and the client's certificates.
    pub ca: PathBuf,
    /// A CA that signed nothing here (the "wrong CA").
    pub other_ca: PathBuf,
    /// Client certificate and key for the user `msgx_cert` (CN = msgx_cert).
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

/// The running servers.
#[derive(Debug, Clone)]
pub struct Servers {
    pub dir: PathBuf,
    pub pki: Pki,
    pub pg_tls: u16,
    pub pg_plain: u16,
    pub my_tls: u16,
    pub my_plain: u16,
}

/// The private servers, started on first use in this test run.
pub fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(|| match shared() {
        Ok(s) => s,
        Err(e) => panic!("private TLS servers: {e}"),
    })
}

const PGBIN: &str = "/usr/lib/postgresql/15/bin";
/// Bound on every server start and readiness wait.
const START_TIMEOUT: Duration = Duration::from_secs(60);

fn pgbin(tool: &str) -> PathBuf {
    std::env::var_os("MSGX_TEST_PGBIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(PGBIN))
        .join(tool)
}

fn shared() -> Result<Servers, String> {
    let (key, watch_pid) = match std::env::var("NEXTEST_RUN_ID") {
        Ok(run) => (run, std::os::unix::process::parent_id()),
        Err(_) => (format!("pid{}", std::process::id()), std::process::id()),
    };
    let dir = std::env::temp_dir().join(format!("msgx_tls_{key}"));
    fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let lock = fs::File::create(dir.join("lock")).map_err(|e| format!("lock file: {e}"))?;
    lock.lock().map_err(|e| format!("lock: {e}"))?;
    let pki = Pki {
        ca: dir.join("pki/ca.pem"),
        other_ca: dir.join("pki/other-ca.pem"),
        client_cert: dir.join("pki/client.pem"),
        client_key: dir.join("pki/client.key"),
    };
    if let Ok(failed) = fs::read_to_string(dir.join("failed")) {
        return Err(format!("an earlier start in this run failed: {failed}"));
    }
    if !dir.join("ready").exists()
        && let Err(e) = start_all(&dir, watch_pid)
    {
        let _ = fs::write(dir.join("failed"), &e);
        return Err(e);
    }
    let ready = fs::read_to_string(dir.join("ready")).map_err(|e| format!("ready file: {e}"))?;
    let port = |name: &str| -> Result<u16, String> {
        ready
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("no {name} port in the ready file"))
    };
    Ok(Servers {
        pg_tls: port("pg_tls")?,
        pg_plain: port("pg_plain")?,
        my_tls: port("my_tls")?,
        my_plain: port("my_plain")?,
        dir,
        pki,
    })
}

/// True when running as root: the servers then run as `postgres`/`mysql`.
fn is_root() -> bool {
    fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("free port: {e}"))
}

/// Runs a command to completion; an error carries its output.
fn run_cmd(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `cmd` as `user` when root (`runuser`), else as it is.
fn as_user(user: &str, program: impl AsRef<std::ffi::OsStr>) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", user, "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// Gives `path` to `user` when root (the server must own its files).
fn give(path: &Path, user: &str) -> Result<(), String> {
    if is_root() {
        run_cmd(
            Command::new("chown")
                .args(["-R", &format!("{user}:{user}")])
                .arg(path),
        )?;
    }
    Ok(())
}

fn write_file(path: &Path, text: &str, mode: u32) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("chmod {}: {e}", path.display()))
}

fn start_all(dir: &Path, watch_pid: u32) -> Result<(), String> {
    // The servers run as other users and write sockets, pid files and logs
    // here (sticky, as /tmp).
    fs::set_permissions(dir, fs::Permissions::from_mode(0o1777)).map_err(|e| e.to_string())?;
    spawn_watcher(dir, watch_pid)?;
    let certs = generate_pki(dir)?;
    let pg_tls = free_port()?;
    let pg_plain = free_port()?;
    let my_tls = free_port()?;
    let my_plain = free_port()?;
    std::thread::scope(|scope| {
        let pg = scope.spawn(|| start_postgres(dir, &certs, pg_tls, pg_plain));
        let my = start_mariadb(dir, &certs, my_tls, my_plain);
        pg.join()
            .unwrap_or_else(|_| Err("PostgreSQL start panicked".into()))
            .and(my)
    })?;
    fs::write(
        dir.join("ready"),
        format!("pg_tls={pg_tls}\npg_plain={pg_plain}\nmy_tls={my_tls}\nmy_plain={my_plain}\n"),
    )
    .map_err(|e| format!("ready file: {e}"))
}

/// The names under which the private MariaDB servers record their process
/// (`<dir>/<name>.child`), for the watcher.
const MARIADB_NAMES: [&str; 4] = ["my_tls", "my_plain", "my_primary", "my_replica"];

/// The names of the private PostgreSQL clusters (`<dir>/<name>`), for the
/// watcher.
const PG_NAMES: [&str; 4] = ["pg_tls", "pg_plain", "pg_primary", "pg_replica"];

/// Stops whatever `dir` records once `watch_pid` is gone, then removes `dir`.
fn spawn_watcher(dir: &Path, watch_pid: u32) -> Result<(), String> {
    let d = dir.display();
    let pg_ctl = pgbin("pg_ctl");
    let as_pg = if is_root() {
        "runuser -u postgres -- "
    } else {
        ""
    };
    let script = format!(
        r#"
while kill -0 {watch_pid} 2>/dev/null; do sleep 0.5; done
for c in {pg}; do
  [ -f "{d}/$c/postmaster.pid" ] && {as_pg}{pg_ctl} -D "{d}/$c" -m immediate -w -t 20 stop >/dev/null 2>&1
done
for c in {my}; do
  [ -f "{d}/$c.child" ] && kill -TERM "$(cat "{d}/$c.child")" 2>/dev/null
done
for _ in $(seq 1 200); do
  alive=0
  for c in {my}; do
    [ -f "{d}/$c.child" ] && kill -0 "$(cat "{d}/$c.child")" 2>/dev/null && alive=1
  done
  [ $alive = 0 ] && break
  sleep 0.1
done
for c in {my}; do
  [ -f "{d}/$c.child" ] && kill -KILL "$(cat "{d}/$c.child")" 2>/dev/null
done
rm -rf "{d}"
"#,
        pg_ctl = pg_ctl.display(),
        pg = PG_NAMES.join(" "),
        my = MARIADB_NAMES.join(" ")
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map(drop)
        .map_err(|e| format!("watcher: {e}"))
}

/// Server certificate and key PEM (written into each server's own dir).
struct ServerCert {
    cert: String,
    key: String,
}

fn generate_pki(dir: &Path) -> Result<ServerCert, String> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
        KeyPair, KeyUsagePurpose,
    };
    let e = |e: rcgen::Error| format!("rcgen: {e}");
    let ca = |name: &str| -> Result<(String, Issuer<'static, KeyPair>), String> {
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().map_err(e)?;
        let cert = params.self_signed(&key).map_err(e)?;
        Ok((cert.pem(), Issuer::new(params, key)))
    };
    let leaf = |sans: Vec<String>,
                cn: &str,
                usage: ExtendedKeyUsagePurpose,
                issuer: &Issuer<'static, KeyPair>|
     -> Result<(String, String), String> {
        let mut params = CertificateParams::new(sans).map_err(e)?;
        params.distinguished_name.push(DnType::CommonName, cn);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().map_err(e)?;
        let cert = params.signed_by(&key, issuer).map_err(e)?;
        Ok((cert.pem(), key.serialize_pem()))
    };
    let (ca_pem, issuer) = ca("msgx test CA")?;
    let (other_pem, _) = ca("msgx unrelated CA")?;
    let (server_cert, server_key) = leaf(
        vec!["localhost".into(), "127.0.0.1".into()],
        "localhost",
        ExtendedKeyUsagePurpose::ServerAuth,
        &issuer,
    )?;
    let (client_cert, client_key) = leaf(
        Vec::new(),
        "msgx_cert",
        ExtendedKeyUsagePurpose::ClientAuth,
        &issuer,
    )?;
    let pki = dir.join("pki");
    fs::create_dir_all(&pki).map_err(|e| e.to_string())?;
    fs::set_permissions(&pki, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    write_file(&pki.join("ca.pem"), &ca_pem, 0o644)?;
    write_file(&pki.join("other-ca.pem"), &other_pem, 0o644)?;
    write_file(&pki.join("client.pem"), &client_cert, 0o644)?;
    write_file(&pki.join("client.key"), &client_key, 0o600)?;
    Ok(ServerCert {
        cert: server_cert,
        key: server_key,
    })
}

fn start_postgres(dir: &Path, certs: &ServerCert, tls: u16, plain: u16) -> Result<(), String> {
    let ca = fs::read_to_string(dir.join("pki/ca.pem")).map_err(|e| e.to_string())?;
    let base = dir.join("pg_tls");
    fs::create_dir(&base).map_err(|e| e.to_string())?;
    fs::set_permissions(&base, fs::Permissions::from_mode(0o700)).map_err(|e| e.to_string())?;
    give(&base, "postgres")?;
    run_cmd(
        as_user("postgres", pgbin("initdb"))
            .arg("-D")
            .arg(&base)
            .args(["--auth=trust", "-U", "postgres", "-E", "UTF8", "--no-sync"]),
    )?;
    run_cmd(
        Command::new("cp")
            .arg("-a")
            .arg(&base)
            .arg(dir.join("pg_plain")),
    )?;
    for (name, port) in [("pg_tls", tls), ("pg_plain", plain)] {
        let data = dir.join(name);
        let with_tls = name == "pg_tls";
        let mut conf = format!(
            "\nport = {port}\nlisten_addresses = '127.0.0.1,127.0.0.2'\n\
             unix_socket_directories = '{}'\nfsync = off\nmax_connections = 40\n\
             shared_buffers = 16MB\n",
            dir.display()
        );
        let hba = if with_tls {
            write_file(&data.join("server.pem"), &certs.cert, 0o644)?;
            write_file(&data.join("server.key"), &certs.key, 0o600)?;
            write_file(&data.join("ca.pem"), &ca, 0o644)?;
            conf.push_str(
                "ssl = on\nssl_cert_file = 'server.pem'\nssl_key_file = 'server.key'\n\
                 ssl_ca_file = 'ca.pem'\n",
            );
            "local all all trust\n\
             hostssl all msgx_cert 127.0.0.0/8 cert\n\
             hostssl all all 127.0.0.0/8 trust\n"
        } else {
            conf.push_str("ssl = off\n");
            "local all all trust\nhost all all 127.0.0.0/8 trust\n"
        };
        let mut existing =
            fs::read_to_string(data.join("postgresql.conf")).map_err(|e| e.to_string())?;
        existing.push_str(&conf);
        write_file(&data.join("postgresql.conf"), &existing, 0o600)?;
        write_file(&data.join("pg_hba.conf"), hba, 0o600)?;
        give(&data, "postgres")?;
        run_cmd(
            as_user("postgres", pgbin("pg_ctl"))
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(dir.join(format!("{name}.log")))
                .args(["-w", "-t", &START_TIMEOUT.as_secs().to_string(), "start"]),
        )
        .map_err(|e| {
            let log = fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default();
            format!("{e}\n{name}.log:\n{log}")
        })?;
        run_cmd(
            Command::new(pgbin("psql"))
                .args(["-h"])
                .arg(dir)
                .args([
                    "-p",
                    &port.to_string(),
                    "-U",
                    "postgres",
                    "-d",
                    "postgres",
                    "-qX",
                ])
                .args([
                    "-c",
                    "CREATE ROLE msgx LOGIN SUPERUSER PASSWORD 'msgx'",
                    "-c",
                    "CREATE ROLE msgx_cert LOGIN SUPERUSER",
                ]),
        )?;
    }
    Ok(())
}

/// A small InnoDB (16 MB pool, 4 MB redo log): quicker to create and copy.
const MARIADB_SMALL: &[&str] = &["--innodb-buffer-pool-size=16M", "--innodb-log-file-size=4M"];

/// A fresh small MariaDB data directory at `data`, owned by `mysql`.
fn install_mariadb(data: &Path) -> Result<(), String> {
    fs::create_dir(data).map_err(|e| e.to_string())?;
    give(data, "mysql")?;
    let mut install = Command::new("mariadb-install-db");
    install
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg("--skip-test-db");
    install.args(MARIADB_SMALL);
    if is_root() {
        install.args(["--user=mysql", "--auth-root-authentication-method=socket"]);
    } else {
        install.arg("--auth-root-authentication-method=normal");
    }
    run_cmd(&mut install).map(|_| ())
}

fn start_mariadb(dir: &Path, certs: &ServerCert, tls: u16, plain: u16) -> Result<(), String> {
    let base = dir.join("my_tls");
    install_mariadb(&base)?;
    run_cmd(
        Command::new("cp")
            .arg("-a")
            .arg(&base)
            .arg(dir.join("my_plain")),
    )?;
    let keys = dir.join("my_keys");
    fs::create_dir_all(&keys).map_err(|e| e.to_string())?;
    write_file(&keys.join("server.pem"), &certs.cert, 0o644)?;
    write_file(&keys.join("server.key"), &certs.key, 0o600)?;
    give(&keys, "mysql")?;
    for (name, port) in [("my_tls", tls), ("my_plain", plain)] {
        let sock = dir.join(format!("{name}.sock"));
        let mut cmd = Command::new("mariadbd");
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join(name).display()))
            .arg(format!("--socket={}", sock.display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1,127.0.0.2")
            .arg(format!(
                "--pid-file={}",
                dir.join(format!("{name}.pid")).display()
            ))
            .arg(format!(
                "--log-error={}",
                dir.join(format!("{name}.err")).display()
            ))
            .arg("--skip-name-resolve")
            .args(MARIADB_SMALL);
        if is_root() {
            cmd.arg("--user=mysql");
        }
        if name == "my_tls" {
            cmd.arg(format!("--ssl-ca={}", dir.join("pki/ca.pem").display()))
                .arg(format!("--ssl-cert={}", keys.join("server.pem").display()))
                .arg(format!("--ssl-key={}", keys.join("server.key").display()))
                .arg("--require-secure-transport=ON");
        } else {
            cmd.arg("--skip-ssl");
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("mariadbd: {e}"))?;
        fs::write(dir.join(format!("{name}.child")), child.id().to_string())
            .map_err(|e| e.to_string())?;
    }
    // Both start at once; then wait for each and add the users.
    let started = Instant::now();
    for name in ["my_tls", "my_plain"] {
        let sock = dir.join(format!("{name}.sock"));
        let admin = |args: &[&str]| {
            let mut c = Command::new("mariadb");
            c.arg("--no-defaults")
                .arg(format!("--socket={}", sock.display()))
                .arg("-uroot")
                .args(args);
            c
        };
        while run_cmd(&mut admin(&["-e", "SELECT 1"])).is_err() {
            if started.elapsed() > START_TIMEOUT {
                let log = fs::read_to_string(dir.join(format!("{name}.err"))).unwrap_or_default();
                return Err(format!(
                    "{name} did not start within {START_TIMEOUT:?}:\n{log}"
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        run_cmd(&mut admin(&[
            "-e",
            "CREATE USER 'msgx'@'%' IDENTIFIED BY 'msgx'; GRANT ALL ON *.* TO 'msgx'@'%'; \
             CREATE USER 'msgx_cert'@'%' IDENTIFIED BY 'msgx' REQUIRE X509; \
             GRANT ALL ON *.* TO 'msgx_cert'@'%';",
        ]))?;
    }
    Ok(())
}

impl Servers {
    /// A PostgreSQL URL on `port` and `host` (database `postgres`) with
    /// `query` appended (e.g. `sslmode=verify-full&sslrootcert=…`).
    pub fn pg_url(&self, user: &str, host: &str, port: u16, query: &str) -> String {
        format!("postgres://{user}@{host}:{port}/postgres?{query}")
    }

    /// A mailbox URL (user `user`, password `msgx`) on `port` and `host`.
    pub fn my_url(&self, user: &str, host: &str, port: u16, db: &str) -> String {
        format!("mysql://{user}:msgx@{host}:{port}/{db}")
    }

    /// Runs SQL on a private MariaDB as root through its socket.
    pub fn my_admin(&self, port: u16, sql: &str) {
        let name = if port == self.my_tls {
            "my_tls"
        } else {
            "my_plain"
        };
        let out = Command::new("mariadb")
            .arg("--no-defaults")
            .arg(format!(
                "--socket={}",
                self.dir.join(format!("{name}.sock")).display()
            ))
            .args(["-uroot", "-e", sql])
            .stdin(Stdio::null())
            .output()
            .expect("run mariadb");
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The quiet private MariaDB, leased to one test at a time (an exclusive
/// file lock held until drop): nobody else talks to the server meanwhile.
pub struct QuietMariaDb {
    pub port: u16,
    dir: PathBuf,
    _lease: fs::File,
}

/// Leases the quiet MariaDB, starting it on first use in this test run
/// (blocks while another test holds it).
pub fn quiet_mariadb() -> QuietMariaDb {
    match quiet_shared() {
        Ok(q) => q,
        Err(e) => panic!("quiet private MariaDB: {e}"),
    }
}

fn quiet_shared() -> Result<QuietMariaDb, String> {
    let (dir, ready, lease) = lease("msgx_quiet", start_quiet)?;
    let port = ready
        .trim()
        .parse()
        .map_err(|e| format!("ready file: {e}"))?;
    wait_for_no_clients(&dir.join("my_plain.sock"))?;
    Ok(QuietMariaDb {
        port,
        dir,
        _lease: lease,
    })
}

/// A set of private servers in `<tmp>/<prefix>_<run>`, started by `start`
/// once per test run (the first process to take `<dir>/lock`; `start`
/// writes `<dir>/ready`) and leased to one test at a time: the returned
/// file holds `<dir>/lease` exclusively until dropped. Returns the
/// directory and the ready file's text.
fn lease(
    prefix: &str,
    start: fn(&Path, u32) -> Result<(), String>,
) -> Result<(PathBuf, String, fs::File), String> {
    let (key, watch_pid) = match std::env::var("NEXTEST_RUN_ID") {
        Ok(run) => (run, std::os::unix::process::parent_id()),
        Err(_) => (format!("pid{}", std::process::id()), std::process::id()),
    };
    let dir = std::env::temp_dir().join(format!("{prefix}_{key}"));
    fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    {
        let guard = fs::File::create(dir.join("lock")).map_err(|e| format!("lock file: {e}"))?;
        guard.lock().map_err(|e| format!("lock: {e}"))?;
        if let Ok(failed) = fs::read_to_string(dir.join("failed")) {
            return Err(format!("an earlier start in this run failed: {failed}"));
        }
        if !dir.join("ready").exists()
            && let Err(e) = start(&dir, watch_pid)
        {
            let _ = fs::write(dir.join("failed"), &e);
            return Err(e);
        }
    }
    let ready = fs::read_to_string(dir.join("ready")).map_err(|e| format!("ready file: {e}"))?;
    let lease = fs::File::create(dir.join("lease")).map_err(|e| format!("lease file: {e}"))?;
    lease.lock().map_err(|e| format!("lease: {e}"))?;
    Ok((dir, ready, lease))
}

/// Waits (bounded) until no client but this one is connected to the
/// MariaDB at `sock`: the test before may still be closing its connections
/// (a pool resets a returned one in the background). A replica's binary
/// log reader on a primary is not a client.
fn wait_for_no_clients(sock: &Path) -> Result<(), String> {
    let started = Instant::now();
    loop {
        let others = mariadb_admin(
            sock,
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
             WHERE ID <> CONNECTION_ID() AND USER <> 'system user' AND COMMAND <> 'Daemon' \
             AND COMMAND NOT LIKE 'Binlog Dump%'",
        )?;
        if others.trim() == "0" {
            return Ok(());
        }
        if started.elapsed() > START_TIMEOUT {
            return Err(format!(
                "{} connection(s) of an earlier test still open",
                others.trim()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts `mariadbd` on a fresh data directory `<dir>/<name>` (plain, no
/// TLS, 127.0.0.1:`port`, socket `<dir>/<name>.sock`) with `extra`
/// arguments, records its process for the watcher and waits (bounded)
/// until root can connect through the socket.
fn start_private_mariadb(dir: &Path, name: &str, port: u16, extra: &[&str]) -> Result<(), String> {
    let data = dir.join(name);
    install_mariadb(&data)?;
    let sock = dir.join(format!("{name}.sock"));
    let err_log = dir.join(format!("{name}.err"));
    let mut cmd = Command::new("mariadbd");
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", sock.display()))
        .arg(format!("--port={port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!(
            "--pid-file={}",
            dir.join(format!("{name}.pid")).display()
        ))
        .arg(format!("--log-error={}", err_log.display()))
        .arg("--skip-name-resolve")
        .arg("--skip-ssl")
        .args(MARIADB_SMALL)
        .args(extra);
    if is_root() {
        cmd.arg("--user=mysql");
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("mariadbd: {e}"))?;
    fs::write(dir.join(format!("{name}.child")), child.id().to_string())
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    while mariadb_admin(&sock, "SELECT 1").is_err() {
        if started.elapsed() > START_TIMEOUT {
            let log = fs::read_to_string(&err_log).unwrap_or_default();
            return Err(format!(
                "MariaDB {name} did not start within {START_TIMEOUT:?}:\n{log}"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// One MariaDB in `<dir>/my_plain` (the watcher of [`spawn_watcher`] stops
/// it by that name), user `msgx` (password `msgx`, every privilege).
fn start_quiet(dir: &Path, watch_pid: u32) -> Result<(), String> {
    fs::set_permissions(dir, fs::Permissions::from_mode(0o1777)).map_err(|e| e.to_string())?;
    spawn_watcher(dir, watch_pid)?;
    let port = free_port()?;
    start_private_mariadb(dir, "my_plain", port, &[])?;
    quiet_admin(
        dir,
        "CREATE USER 'msgx'@'%' IDENTIFIED BY 'msgx'; GRANT ALL ON *.* TO 'msgx'@'%';",
    )?;
    fs::write(dir.join("ready"), port.to_string()).map_err(|e| format!("ready file: {e}"))
}

/// Runs SQL as root through the socket `sock`; its output (tab-separated,
/// no headers).
fn mariadb_admin(sock: &Path, sql: &str) -> Result<String, String> {
    run_cmd(
        Command::new("mariadb")
            .arg("--no-defaults")
            .arg(format!("--socket={}", sock.display()))
            .args(["-uroot", "-N", "-B", "-e", sql]),
    )
}

/// Runs SQL as root through the quiet server's socket; its output.
fn quiet_admin(dir: &Path, sql: &str) -> Result<String, String> {
    mariadb_admin(&dir.join("my_plain.sock"), sql)
}

impl QuietMariaDb {
    /// A URL for `user` (password `pw`) and database `db`.
    pub fn url(&self, user: &str, pw: &str, db: &str) -> String {
        format!("mysql://{user}:{pw}@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs SQL as root (through the socket: no TCP client is added).
    pub fn admin(&self, sql: &str) -> String {
        match quiet_admin(&self.dir, sql) {
            Ok(out) => out,
            Err(e) => panic!("{e}"),
        }
    }
}

/// A private MariaDB primary (binary log on, `--server-id=1`) and a replica
/// of it (`--server-id=2`, replicating everything from the primary's first
/// binary log event, so users and databases created on the primary exist
/// on the replica too), for what msgx may trust on a replica (issue 31
/// item 7). Leased like [`QuietMariaDb`]: only the holder talks to them, so
/// the primary's open transactions are the test's own. User `msgx`
/// (password `msgx`, every privilege) on both.
pub struct ReplicaPair {
    pub primary: u16,
    pub replica: u16,
    dir: PathBuf,
    _lease: fs::File,
}

/// Which server of a [`ReplicaPair`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Primary,
    Replica,
}

/// Bound on waiting for the replica to apply what the primary committed.
const REPLICATION_TIMEOUT: Duration = Duration::from_secs(30);

/// Leases the primary/replica pair, starting it on first use in this test
/// run (blocks while another test holds it).
pub fn replica_pair() -> ReplicaPair {
    match replica_pair_shared() {
        Ok(p) => p,
        Err(e) => panic!("private MariaDB primary and replica: {e}"),
    }
}

fn replica_pair_shared() -> Result<ReplicaPair, String> {
    let (dir, ready, lease) = lease("msgx_replica", start_replica_pair)?;
    let port = |name: &str| -> Result<u16, String> {
        ready
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("no {name} port in the ready file"))
    };
    let pair = ReplicaPair {
        primary: port("primary")?,
        replica: port("replica")?,
        dir,
        _lease: lease,
    };
    wait_for_no_clients(&pair.sock(Side::Primary))?;
    wait_for_no_clients(&pair.sock(Side::Replica))?;
    Ok(pair)
}

/// Starts both servers, creates the users on the primary, points the
/// replica at it and waits (bounded) until it has applied them.
fn start_replica_pair(dir: &Path, watch_pid: u32) -> Result<(), String> {
    fs::set_permissions(dir, fs::Permissions::from_mode(0o1777)).map_err(|e| e.to_string())?;
    spawn_watcher(dir, watch_pid)?;
    let primary = free_port()?;
    let replica = free_port()?;
    let bin_log = format!("--log-bin={}", dir.join("my_primary/binlog").display());
    start_private_mariadb(dir, "my_primary", primary, &[&bin_log, "--server-id=1"])?;
    start_private_mariadb(dir, "my_replica", replica, &["--server-id=2"])?;
    let primary_sock = dir.join("my_primary.sock");
    let replica_sock = dir.join("my_replica.sock");
    mariadb_admin(
        &primary_sock,
        "CREATE USER 'msgx'@'%' IDENTIFIED BY 'msgx'; GRANT ALL ON *.* TO 'msgx'@'%'; \
         CREATE USER 'repl'@'%' IDENTIFIED BY 'repl'; \
         GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';",
    )?;
    mariadb_admin(
        &replica_sock,
        &format!(
            "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {primary}, \
             MASTER_USER = 'repl', MASTER_PASSWORD = 'repl', MASTER_USE_GTID = slave_pos; \
             START SLAVE;"
        ),
    )?;
    catch_up(&primary_sock, &replica_sock)?;
    fs::write(
        dir.join("ready"),
        format!("primary={primary}\nreplica={replica}\n"),
    )
    .map_err(|e| format!("ready file: {e}"))
}

/// Waits until the replica has applied everything the primary committed so
/// far (its GTID position), at most [`REPLICATION_TIMEOUT`]: the server
/// itself waits (`MASTER_GTID_WAIT`).
fn catch_up(primary: &Path, replica: &Path) -> Result<(), String> {
    let pos = mariadb_admin(primary, "SELECT @@gtid_binlog_pos")?;
    let waited = mariadb_admin(
        replica,
        &format!(
            "SELECT MASTER_GTID_WAIT('{}', {})",
            pos.trim(),
            REPLICATION_TIMEOUT.as_secs()
        ),
    )?;
    if waited.trim() == "0" {
        return Ok(());
    }
    let status = mariadb_admin(replica, "SHOW SLAVE STATUS\\G").unwrap_or_default();
    Err(format!(
        "the replica did not reach {} within {REPLICATION_TIMEOUT:?}:\n{status}",
        pos.trim()
    ))
}

impl ReplicaPair {
    fn sock(&self, side: Side) -> PathBuf {
        self.dir.join(match side {
            Side::Primary => "my_primary.sock",
            Side::Replica => "my_replica.sock",
        })
    }

    fn port(&self, side: Side) -> u16 {
        match side {
            Side::Primary => self.primary,
            Side::Replica => self.replica,
        }
    }

    /// `mysql://msgx:msgx@127.0.0.1:<port>` (no database): an admin URL
    /// for `TestMailbox::on_server` (on the primary).
    pub fn admin_url(&self, side: Side) -> String {
        format!("mysql://msgx:msgx@127.0.0.1:{}", self.port(side))
    }

    /// A URL for `user` (password `pw`) and database `db` on `side`.
    pub fn url(&self, side: Side, user: &str, pw: &str, db: &str) -> String {
        format!("mysql://{user}:{pw}@127.0.0.1:{}/{db}", self.port(side))
    }

    /// Runs SQL as root on `side` (through its socket); its output.
    pub fn admin(&self, side: Side, sql: &str) -> String {
        match mariadb_admin(&self.sock(side), sql) {
            Ok(out) => out,
            Err(e) => panic!("{e}"),
        }
    }

    /// Waits (bounded) until the replica has applied everything committed
    /// on the primary so far.
    pub fn sync(&self) {
        if let Err(e) = catch_up(&self.sock(Side::Primary), &self.sock(Side::Replica)) {
            panic!("{e}");
        }
    }
}

/// A private PostgreSQL 15 primary and a streaming replica of it
/// (`pg_basebackup -R`, asynchronous), for the host lists of
/// `msgx.postgres.url`. Leased like [`QuietMariaDb`]: tests change the
/// servers' state (the primary turned read-only), so one test at a time;
/// dropping the lease turns the primary back read-write. Users `msgx`
/// (password `msgx`, SUPERUSER) and `msgx_plain` (password `msgx`, no
/// special privileges); database `postgres`.
pub struct PgPair {
    pub primary: u16,
    pub replica: u16,
    dir: PathBuf,
    _lease: fs::File,
}

/// Leases the PostgreSQL primary/replica pair, starting it on first use in
/// this test run (blocks while another test holds it).
pub fn pg_pair() -> PgPair {
    match pg_pair_shared() {
        Ok(p) => p,
        Err(e) => panic!("private PostgreSQL primary and replica: {e}"),
    }
}

fn pg_pair_shared() -> Result<PgPair, String> {
    let (dir, ready, lease) = lease("msgx_pgpair", start_pg_pair)?;
    let port = |name: &str| -> Result<u16, String> {
        ready
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("no {name} port in the ready file"))
    };
    let pair = PgPair {
        primary: port("primary")?,
        replica: port("replica")?,
        dir,
        _lease: lease,
    };
    // A test before may have died between turning the primary read-only
    // and its lease's drop.
    pair.set_read_only(false);
    Ok(pair)
}

/// Runs SQL as `postgres` through the socket in `dir` on `port`; its output
/// (unaligned, no headers).
fn pg_admin(dir: &Path, port: u16, sql: &str) -> Result<String, String> {
    run_cmd(
        Command::new(pgbin("psql"))
            .arg("-h")
            .arg(dir)
            .args(["-p", &port.to_string(), "-U", "postgres", "-d", "postgres"])
            .args(["-qXAt", "-v", "ON_ERROR_STOP=1", "-c", sql]),
    )
}

/// initdb, a primary that accepts replication connections, a base backup
/// of it started as its streaming replica; waits (bounded) until the
/// replica streams.
fn start_pg_pair(dir: &Path, watch_pid: u32) -> Result<(), String> {
    fs::set_permissions(dir, fs::Permissions::from_mode(0o1777)).map_err(|e| e.to_string())?;
    spawn_watcher(dir, watch_pid)?;
    let primary = free_port()?;
    let replica = free_port()?;
    let data = dir.join("pg_primary");
    fs::create_dir(&data).map_err(|e| e.to_string())?;
    fs::set_permissions(&data, fs::Permissions::from_mode(0o700)).map_err(|e| e.to_string())?;
    give(&data, "postgres")?;
    run_cmd(
        as_user("postgres", pgbin("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["--auth=trust", "-U", "postgres", "-E", "UTF8", "--no-sync"]),
    )?;
    let mut conf = fs::read_to_string(data.join("postgresql.conf")).map_err(|e| e.to_string())?;
    conf.push_str(&format!(
        "\nport = {primary}\nlisten_addresses = '127.0.0.1'\n\
         unix_socket_directories = '{}'\nfsync = off\nmax_connections = 40\n\
         shared_buffers = 16MB\nwal_level = replica\nmax_wal_senders = 4\nhot_standby = on\n",
        dir.display()
    ));
    write_file(&data.join("postgresql.conf"), &conf, 0o600)?;
    write_file(
        &data.join("pg_hba.conf"),
        "local all all trust\nlocal replication all trust\n\
         host all all 127.0.0.0/8 trust\nhost replication all 127.0.0.0/8 trust\n",
        0o600,
    )?;
    give(&data, "postgres")?;
    let start = |name: &str| -> Result<(), String> {
        run_cmd(
            as_user("postgres", pgbin("pg_ctl"))
                .arg("-D")
                .arg(dir.join(name))
                .arg("-l")
                .arg(dir.join(format!("{name}.log")))
                .args(["-w", "-t", &START_TIMEOUT.as_secs().to_string(), "start"]),
        )
        .map(drop)
        .map_err(|e| {
            let log = fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default();
            format!("{e}\n{name}.log:\n{log}")
        })
    };
    start("pg_primary")?;
    pg_admin(
        dir,
        primary,
        "CREATE ROLE msgx LOGIN SUPERUSER PASSWORD 'msgx'; \
         CREATE ROLE msgx_plain LOGIN PASSWORD 'msgx'",
    )?;
    // The replica: a base backup with its standby.signal and
    // primary_conninfo (-R: over TCP, as in production), on a port of its own.
    let standby = dir.join("pg_replica");
    run_cmd(
        as_user("postgres", pgbin("pg_basebackup"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &primary.to_string(),
                "-U",
                "postgres",
                "-D",
            ])
            .arg(&standby)
            .args(["-R", "-X", "stream", "--no-sync", "-c", "fast"]),
    )?;
    let mut conf =
        fs::read_to_string(standby.join("postgresql.conf")).map_err(|e| e.to_string())?;
    conf.push_str(&format!("\nport = {replica}\n"));
    write_file(&standby.join("postgresql.conf"), &conf, 0o600)?;
    give(&standby, "postgres")?;
    start("pg_replica")?;
    let started = Instant::now();
    while pg_admin(
        dir,
        primary,
        "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
    )?
    .trim()
        != "1"
    {
        if started.elapsed() > START_TIMEOUT {
            let log = fs::read_to_string(dir.join("pg_replica.log")).unwrap_or_default();
            return Err(format!(
                "the replica did not stream within {START_TIMEOUT:?}:\n{log}"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    fs::write(
        dir.join("ready"),
        format!("primary={primary}\nreplica={replica}\n"),
    )
    .map_err(|e| format!("ready file: {e}"))
}

impl PgPair {
    fn port(&self, side: Side) -> u16 {
        match side {
            Side::Primary => self.primary,
            Side::Replica => self.replica,
        }
    }

    /// `postgres://msgx:msgx@127.0.0.1:<p1>,127.0.0.1:<p2>,…/postgres?<query>`.
    pub fn url(&self, ports: &[u16], query: &str) -> String {
        let hosts: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        format!("postgres://msgx:msgx@{}/postgres?{query}", hosts.join(","))
    }

    /// Runs SQL as `postgres` on `side` (through its socket); its output.
    pub fn admin(&self, side: Side, sql: &str) -> String {
        match pg_admin(&self.dir, self.port(side), sql) {
            Ok(out) => out,
            Err(e) => panic!("{e}"),
        }
    }

    /// Turns the primary's `default_transaction_read_only` on or off
    /// (`ALTER SYSTEM`, reloaded): as on a primary being demoted.
    pub fn set_read_only(&self, on: bool) {
        let set = if on {
            "ALTER SYSTEM SET default_transaction_read_only = on"
        } else {
            "ALTER SYSTEM RESET default_transaction_read_only"
        };
        self.admin(Side::Primary, set);
        self.admin(Side::Primary, "SELECT pg_reload_conf()");
    }
}

impl Drop for PgPair {
    /// The next test gets a read-write primary, whatever this one did.
    fn drop(&mut self) {
        let _ = pg_admin(
            &self.dir,
            self.primary,
            "ALTER SYSTEM RESET default_transaction_read_only",
        )
        .and_then(|_| pg_admin(&self.dir, self.primary, "SELECT pg_reload_conf()"));
    }
}
