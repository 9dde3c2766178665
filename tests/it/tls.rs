//! TLS to PostgreSQL (sqlx, URL `sslmode`…) and to the mailbox
//! (`[msgx.mailbox.tls]`, mysql_async) against private TLS-enabled servers
//! with certificates made by the test (tests/it/common/servers.rs;
//! docs/production/databases.md). The servers listen on 127.0.0.1 and
//! 127.0.0.2; their certificate names `localhost` and 127.0.0.1 only.

use crate::common;

use common::servers::{Servers, servers};
use common::{TestDb, code, msgx, text, unique_name, write_config};
use msgx::config::{Mailbox as MailboxConfig, MailboxTls, MailboxTlsMode, Postgres};
use msgx::instance_lock::{AdvisoryLock, LockKey};
use msgx::store::mailbox::{Mailbox, MailboxError};
use msgx::store::pg;
use mysql_async::prelude::Queryable;
use std::path::Path;

// ---- PostgreSQL ----

fn pg_cfg(url: String) -> Postgres {
    Postgres {
        url,
        max_connections: 2,
        ..Postgres::default()
    }
}

/// `sslmode=MODE&sslrootcert=CA` (plus `extra`).
fn pg_query(mode: &str, ca: &Path, extra: &str) -> String {
    format!("sslmode={mode}&sslrootcert={}{extra}", ca.display())
}

async fn pg_tls_version(s: &Servers, user: &str, host: &str, query: &str) -> Option<String> {
    let pool = pg::connect(&pg_cfg(s.pg_url(user, host, s.pg_tls, query)))
        .await
        .unwrap_or_else(|e| panic!("connect {host} {query}: {e}"));
    let v = pg::tls_in_use(&pool).await.expect("pg_stat_ssl");
    pool.close().await;
    v
}

async fn pg_error(url: String) -> String {
    match pg::connect(&pg_cfg(url.clone())).await {
        Ok(_) => panic!("{url} connected"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn pg_verify_full_and_verify_ca_with_the_right_ca_connect_over_tls() {
    let s = servers();
    for host in ["localhost", "127.0.0.1"] {
        let v = pg_tls_version(s, "msgx", host, &pg_query("verify-full", &s.pki.ca, "")).await;
        assert_eq!(v.as_deref(), Some("TLSv1.3"), "verify-full via {host}");
    }
    // verify-ca checks the chain, not the name: 127.0.0.2 is not in the certificate.
    let v = pg_tls_version(
        s,
        "msgx",
        "127.0.0.2",
        &pg_query("verify-ca", &s.pki.ca, ""),
    )
    .await;
    assert_eq!(v.as_deref(), Some("TLSv1.3"));
}

#[tokio::test]
async fn pg_verify_full_refuses_a_certificate_for_another_host_name() {
    let s = servers();
    let e = pg_error(s.pg_url(
        "msgx",
        "127.0.0.2",
        s.pg_tls,
        &pg_query("verify-full", &s.pki.ca, ""),
    ))
    .await;
    assert!(
        e.starts_with("PostgreSQL TLS (sslmode=verify-full): certificate verification failed")
            && e.contains("does not name the host")
            && e.contains("127.0.0.2"),
        "{e}"
    );
}

#[tokio::test]
async fn pg_a_wrong_ca_fails_naming_certificate_verification() {
    let s = servers();
    for mode in ["verify-full", "verify-ca"] {
        let e = pg_error(s.pg_url(
            "msgx",
            "localhost",
            s.pg_tls,
            &pg_query(mode, &s.pki.other_ca, ""),
        ))
        .await;
        assert!(
            e.starts_with(&format!(
                "PostgreSQL TLS (sslmode={mode}): certificate verification failed"
            )) && e.contains("not signed by a trusted CA"),
            "{e}"
        );
    }
    // require with a root certificate verifies the CA (libpq's rule), so it fails too.
    let e = pg_error(s.pg_url(
        "msgx",
        "localhost",
        s.pg_tls,
        &pg_query("require", &s.pki.other_ca, ""),
    ))
    .await;
    assert!(
        e.contains("(sslmode=verify-ca): certificate verification failed"),
        "{e}"
    );
}

#[tokio::test]
async fn pg_require_and_verify_never_fall_back_to_a_plaintext_server() {
    let s = servers();
    for query in [
        "sslmode=require".to_string(),
        pg_query("verify-ca", &s.pki.ca, ""),
        pg_query("verify-full", &s.pki.ca, ""),
    ] {
        let e = pg_error(s.pg_url("msgx", "localhost", s.pg_plain, &query)).await;
        assert!(
            e.contains("the server does not offer TLS; msgx never falls back to plaintext"),
            "{query}: {e}"
        );
    }
    // prefer is libpq's opportunistic mode: it does fall back (documented).
    let pool = pg::connect(&pg_cfg(s.pg_url(
        "msgx",
        "localhost",
        s.pg_plain,
        "sslmode=prefer",
    )))
    .await
    .expect("prefer connects to a plaintext server");
    assert_eq!(pg::tls_in_use(&pool).await.unwrap(), None);
}

#[tokio::test]
async fn pg_require_encrypts_without_checking_the_certificate() {
    let s = servers();
    // Neither the CA (not in any trust store) nor the name (127.0.0.2) would pass a check.
    let v = pg_tls_version(s, "msgx", "127.0.0.2", "sslmode=require").await;
    assert_eq!(v.as_deref(), Some("TLSv1.3"));
    // The TLS-only server refuses plaintext: TLS really is what connected above.
    let e = pg_error(s.pg_url("msgx", "localhost", s.pg_tls, "sslmode=disable")).await;
    assert!(e.contains("no encryption"), "{e}");
}

#[tokio::test]
async fn pg_client_certificate_authenticates_a_cert_user() {
    let s = servers();
    let client = format!(
        "&sslcert={}&sslkey={}",
        s.pki.client_cert.display(),
        s.pki.client_key.display()
    );
    let v = pg_tls_version(
        s,
        "msgx_cert",
        "localhost",
        &pg_query("verify-full", &s.pki.ca, &client),
    )
    .await;
    assert_eq!(v.as_deref(), Some("TLSv1.3"));
    let e = pg_error(s.pg_url(
        "msgx_cert",
        "localhost",
        s.pg_tls,
        &pg_query("verify-full", &s.pki.ca, ""),
    ))
    .await;
    assert!(
        e.contains("certificate"),
        "without a client certificate: {e}"
    );
}

#[tokio::test]
async fn pg_the_instance_lock_session_uses_the_same_tls_options() {
    let s = servers();
    let url = s.pg_url(
        "msgx",
        "localhost",
        s.pg_tls,
        &pg_query("verify-full", &s.pki.ca, ""),
    );
    let pool = pg::connect(&pg_cfg(url.clone())).await.expect("pool");
    let lock = AdvisoryLock::try_acquire(&url, LockKey::job("tls-test"), "msgx tls test")
        .await
        .expect("lock session")
        .expect("lock free");
    let ssl: Option<bool> = sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = $1")
        .bind(lock.pid())
        .fetch_optional(&pool)
        .await
        .unwrap();
    assert_eq!(ssl, Some(true), "the lock session is encrypted");
    lock.release().await;
    let wrong = s.pg_url(
        "msgx",
        "localhost",
        s.pg_tls,
        &pg_query("verify-full", &s.pki.other_ca, ""),
    );
    let e = AdvisoryLock::try_acquire(&wrong, LockKey::job("tls-test"), "msgx tls test")
        .await
        .expect_err("wrong CA")
        .to_string();
    assert!(
        e.starts_with("cannot open the lock session: PostgreSQL TLS"),
        "{e}"
    );
    assert!(e.contains("certificate verification failed"), "{e}");
}

#[tokio::test]
async fn pg_msgx_migrate_runs_over_verify_full() {
    let s = servers();
    let admin = pg::connect(&pg_cfg(s.pg_url(
        "msgx",
        "localhost",
        s.pg_tls,
        &pg_query("verify-full", &s.pki.ca, ""),
    )))
    .await
    .expect("admin");
    let name = unique_name("msgx_tls");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&admin)
        .await
        .unwrap();
    let mut config = msgx::config::Config::default();
    config.msgx.postgres.url = format!(
        "postgres://msgx@localhost:{}/{name}?{}",
        s.pg_tls,
        pg_query("verify-full", &s.pki.ca, "")
    );
    config.msgx.log.dir = String::new();
    let file = write_config(&config);
    let out = msgx(file.path(), &["migrate"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let wrong = config.msgx.postgres.url.replace(
        &s.pki.ca.display().to_string(),
        &s.pki.other_ca.display().to_string(),
    );
    config.msgx.postgres.url = wrong;
    let out = msgx(write_config(&config).path(), &["migrate"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("certificate verification failed"),
        "{}",
        text(&out)
    );
}

// ---- the mailbox (MariaDB) ----

fn tls(mode: MailboxTlsMode, ca: Option<&Path>) -> MailboxTls {
    MailboxTls {
        mode,
        ca_file: ca.map(Path::to_path_buf),
        ..MailboxTls::default()
    }
}

fn mb_cfg(url: String, tls: MailboxTls) -> MailboxConfig {
    MailboxConfig {
        url,
        tls,
        timeout: "10s".parse().unwrap(),
        ..MailboxConfig::default()
    }
}

async fn mb_tls_version(url: String, tls: MailboxTls) -> Result<Option<String>, MailboxError> {
    let mailbox = Mailbox::new(&mb_cfg(url, tls))?;
    let v = mailbox.tls_in_use().await;
    mailbox.close().await;
    v
}

#[tokio::test]
async fn mailbox_verify_identity_with_the_right_ca_connects_over_tls() {
    let s = servers();
    for host in ["localhost", "127.0.0.1"] {
        let v = mb_tls_version(
            s.my_url("msgx", host, s.my_tls, ""),
            tls(MailboxTlsMode::VerifyIdentity, Some(&s.pki.ca)),
        )
        .await
        .unwrap_or_else(|e| panic!("{host}: {e}"));
        assert_eq!(v.as_deref(), Some("TLSv1.3"), "{host}");
    }
}

#[tokio::test]
async fn mailbox_a_wrong_ca_fails_naming_certificate_verification() {
    let s = servers();
    for mode in [MailboxTlsMode::VerifyIdentity, MailboxTlsMode::VerifyCa] {
        let e = mb_tls_version(
            s.my_url("msgx", "localhost", s.my_tls, ""),
            tls(mode, Some(&s.pki.other_ca)),
        )
        .await
        .expect_err("wrong CA")
        .to_string();
        assert!(
            e.starts_with("mailbox: TLS: certificate verification failed")
                && e.contains("not signed by a trusted CA"),
            "{mode:?}: {e}"
        );
    }
    // Without ca-file only the built-in public roots are trusted: the test CA is not one.
    let e = mb_tls_version(
        s.my_url("msgx", "localhost", s.my_tls, ""),
        tls(MailboxTlsMode::VerifyIdentity, None),
    )
    .await
    .expect_err("unknown CA")
    .to_string();
    assert!(e.contains("certificate verification failed"), "{e}");
}

#[tokio::test]
async fn mailbox_tls_modes_never_fall_back_to_a_plaintext_server() {
    let s = servers();
    for mode in [
        MailboxTlsMode::Required,
        MailboxTlsMode::VerifyCa,
        MailboxTlsMode::VerifyIdentity,
    ] {
        let e = mb_tls_version(
            s.my_url("msgx", "localhost", s.my_plain, ""),
            tls(mode, None),
        )
        .await
        .expect_err("plaintext-only server")
        .to_string();
        assert!(
            e.contains("the server does not offer TLS")
                && e.contains("never falls back to plaintext"),
            "{mode:?}: {e}"
        );
    }
    // The plaintext server itself works in plaintext.
    let v = mb_tls_version(
        s.my_url("msgx", "localhost", s.my_plain, ""),
        MailboxTls::default(),
    )
    .await
    .expect("plaintext");
    assert_eq!(v, None);
}

#[tokio::test]
async fn mailbox_verify_identity_refuses_a_certificate_for_another_host_name() {
    let s = servers();
    let e = mb_tls_version(
        s.my_url("msgx", "127.0.0.2", s.my_tls, ""),
        tls(MailboxTlsMode::VerifyIdentity, Some(&s.pki.ca)),
    )
    .await
    .expect_err("name mismatch")
    .to_string();
    assert!(
        e.starts_with("mailbox: TLS: certificate verification failed")
            && e.contains("does not name the host")
            && e.contains("127.0.0.2"),
        "{e}"
    );
    // server-name names the certificate's host when connecting by another address.
    let mut named = tls(MailboxTlsMode::VerifyIdentity, Some(&s.pki.ca));
    named.server_name = Some("localhost".into());
    let v = mb_tls_version(s.my_url("msgx", "127.0.0.2", s.my_tls, ""), named)
        .await
        .expect("server-name");
    assert_eq!(v.as_deref(), Some("TLSv1.3"));
}

/// Pins mysql_async 0.37.1's inert `verify-ca` (mysql_async#404, fixed by
/// #408, unreleased): the host name is still checked. When this fails after
/// an upgrade, verify-ca works as MySQL's; update docs/production/databases.md.
#[tokio::test]
async fn mailbox_verify_ca_still_checks_the_host_name_with_mysql_async_0_37() {
    let s = servers();
    let e = mb_tls_version(
        s.my_url("msgx", "127.0.0.2", s.my_tls, ""),
        tls(MailboxTlsMode::VerifyCa, Some(&s.pki.ca)),
    )
    .await
    .expect_err("mysql_async#404 still present")
    .to_string();
    assert!(e.contains("does not name the host"), "{e}");
    let v = mb_tls_version(
        s.my_url("msgx", "localhost", s.my_tls, ""),
        tls(MailboxTlsMode::VerifyCa, Some(&s.pki.ca)),
    )
    .await
    .expect("verify-ca with a matching name");
    assert_eq!(v.as_deref(), Some("TLSv1.3"));
}

#[tokio::test]
async fn mailbox_required_encrypts_without_checking_the_certificate() {
    let s = servers();
    let v = mb_tls_version(
        s.my_url("msgx", "127.0.0.2", s.my_tls, ""),
        tls(MailboxTlsMode::Required, None),
    )
    .await
    .expect("required");
    assert_eq!(v.as_deref(), Some("TLSv1.3"));
    // The server requires secure transport: it refuses plaintext (MariaDB
    // 10.11 answers "Access denied" rather than naming the transport).
    let e = mb_tls_version(
        s.my_url("msgx", "localhost", s.my_tls, ""),
        MailboxTls::default(),
    )
    .await
    .expect_err("plaintext to a TLS-only server")
    .to_string();
    assert!(
        e.contains("insecure transport") || e.contains("Access denied"),
        "{e}"
    );
}

#[tokio::test]
async fn mailbox_client_certificate_for_a_require_x509_user() {
    let s = servers();
    let mut with_cert = tls(MailboxTlsMode::VerifyIdentity, Some(&s.pki.ca));
    with_cert.cert_file = Some(s.pki.client_cert.clone());
    with_cert.key_file = Some(s.pki.client_key.clone());
    let v = mb_tls_version(s.my_url("msgx_cert", "localhost", s.my_tls, ""), with_cert)
        .await
        .expect("client certificate");
    assert_eq!(v.as_deref(), Some("TLSv1.3"));
    let e = mb_tls_version(
        s.my_url("msgx_cert", "localhost", s.my_tls, ""),
        tls(MailboxTlsMode::VerifyIdentity, Some(&s.pki.ca)),
    )
    .await
    .expect_err("no client certificate")
    .to_string();
    assert!(e.contains("Access denied"), "{e}");
}

#[tokio::test]
async fn mailbox_a_missing_ca_file_is_a_clear_error() {
    let s = servers();
    let missing = s.dir.join("pki/absent.pem");
    let e = Mailbox::new(&mb_cfg(
        s.my_url("msgx", "localhost", s.my_tls, ""),
        tls(MailboxTlsMode::VerifyIdentity, Some(&missing)),
    ))
    .expect_err("missing CA file")
    .to_string();
    assert_eq!(
        e,
        format!(
            "mailbox TLS: msgx.mailbox.tls.ca-file = {}: cannot read it: No such file or directory (os error 2)",
            missing.display()
        )
    );
}

/// A mailbox database on the TLS server with the predecessor's DDL.
fn tls_mailbox_db(s: &Servers) -> String {
    let name = unique_name("msgx_tls_mb");
    let ddl = include_str!("../../migrations/mailbox/0001_mailbox.sql");
    s.my_admin(
        s.my_tls,
        &format!("CREATE DATABASE `{name}` CHARACTER SET utf8mb4; USE `{name}`; {ddl}"),
    );
    name
}

#[tokio::test]
async fn ingest_sweep_reads_the_mailbox_over_verify_identity() {
    let s = servers();
    let name = tls_mailbox_db(s);
    let db = TestDb::migrated().await;
    let mb_tls = tls(MailboxTlsMode::VerifyIdentity, Some(&s.pki.ca));
    let url = s.my_url("msgx", "localhost", s.my_tls, &name);
    let mailbox = Mailbox::new(&mb_cfg(url.clone(), mb_tls.clone())).unwrap();
    let xml =
        std::fs::read_to_string("tests/fixtures/sis/003-SCHD-DNLD-three-flights.xml").unwrap();
    mailbox
        .insert_raw(&xml, None)
        .await
        .expect("insert over TLS");
    mailbox.close().await;
    let file = db.config_file_with(|c| {
        c.msgx.mailbox.url = url;
        c.msgx.mailbox.tls = mb_tls;
    });
    let out = msgx(file.path(), &["run", "ingest-sweep", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(summary["outcome"], "SUCCEEDED", "{summary}");
    assert_eq!(summary["items"], 1, "{summary}");
    s.my_admin(s.my_tls, &format!("DROP DATABASE `{name}`"));
}

#[tokio::test]
async fn ingest_sweep_with_a_mailbox_tls_error_fails_and_records_a_failed_run() {
    let s = servers();
    let db = TestDb::migrated().await;
    let file = db.config_file_with(|c| {
        c.msgx.mailbox.url = s.my_url("msgx", "localhost", s.my_tls, "msgx_mailbox");
        c.msgx.mailbox.tls = tls(MailboxTlsMode::VerifyIdentity, Some(&s.pki.other_ca));
    });
    let out = msgx(file.path(), &["run", "ingest-sweep"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mailbox: TLS: certificate verification failed"),
        "{}",
        text(&out)
    );
    let (outcome, error): (String, Option<String>) =
        sqlx::query_as("SELECT outcome, error FROM job_run WHERE job = 'ingest-sweep'")
            .fetch_one(&db.pool)
            .await
            .expect("one job_run row");
    assert_eq!(outcome, "FAILED");
    let error = error.unwrap_or_default();
    assert!(
        error.contains("mailbox: TLS: certificate verification failed"),
        "{error}"
    );

    // A missing CA file is a configuration error: exit 2 before any run.
    let missing = s.dir.join("pki/absent.pem");
    let file = db.config_file_with(|c| {
        c.msgx.mailbox.url = s.my_url("msgx", "localhost", s.my_tls, "msgx_mailbox");
        c.msgx.mailbox.tls = tls(MailboxTlsMode::VerifyIdentity, Some(&missing));
    });
    let out = msgx(file.path(), &["run", "ingest-sweep"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("msgx.mailbox.tls.ca-file"),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn config_check_refuses_tls_in_the_mailbox_url() {
    let db = TestDb::empty().await;
    let file = db.config_file_with(|c| {
        c.msgx.mailbox.url =
            "mysql://msgx:msgx@127.0.0.1:3306/msgx_mailbox?require_ssl=true".into();
    });
    let out = msgx(file.path(), &["config", "check"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        text(&out).contains("msgx.mailbox.url: TLS is set in [msgx.mailbox.tls]"),
        "{}",
        text(&out)
    );
}

/// mysql_async would move a session to the Unix socket path the server
/// reports when that path exists here (as it does for these private
/// servers): a different server when two share the default path. msgx keeps
/// the TCP connection the URL names unless the URL asks for the socket.
#[tokio::test]
async fn mailbox_sessions_stay_on_the_tcp_connection_the_url_names() {
    let s = servers();
    // The options Mailbox::new builds, on a pool of our own to ask the server.
    let user_of = |url: String| async move {
        let opts = mysql_async::Opts::from_url(&url).unwrap();
        let opts = msgx::store::mailbox::tls::apply(opts, &mb_cfg(url, MailboxTls::default()))
            .expect("options");
        let pool = mysql_async::Pool::new(opts);
        let mut conn = pool.get_conn().await.expect("connect");
        let user: Option<String> = conn.query_first("SELECT USER()").await.unwrap();
        drop(conn);
        pool.disconnect().await.unwrap();
        user.unwrap_or_default()
    };
    let tcp = user_of(s.my_url("msgx", "127.0.0.1", s.my_plain, "")).await;
    assert_eq!(tcp, "msgx@127.0.0.1");
    let url = s.my_url("msgx", "127.0.0.1", s.my_plain, "") + "?prefer_socket=true";
    assert_eq!(
        user_of(url).await,
        "msgx@localhost",
        "the URL may ask for the socket"
    );
}
