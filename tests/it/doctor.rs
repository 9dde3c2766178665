//! `msgx doctor` (issue 16, item 3) against the real local PostgreSQL and
//! MariaDB and librdkafka's mock cluster: every check passes on a healthy
//! set-up, and each broken thing fails the check that names it.

use crate::common;

use common::*;
use mysql_async::prelude::Queryable;

/// Runs `msgx doctor --json` with `cfg`; returns (exit code, report).
fn doctor(cfg: &std::path::Path) -> (i32, serde_json::Value, String) {
    let out = msgx(cfg, &["doctor", "--json"]);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (code(&out), report, text(&out))
}

/// The status and detail of the check `name` in a `msgx doctor --json` report.
pub(crate) fn check_row(report: &serde_json::Value, name: &str) -> (String, String) {
    report["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == name))
        .map(|c| {
            (
                c["status"].as_str().unwrap_or_default().to_string(),
                c["detail"].as_str().unwrap_or_default().to_string(),
            )
        })
        .unwrap_or_else(|| ("absent".into(), report.to_string()))
}

#[tokio::test]
async fn a_healthy_setup_passes_every_check() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let kafka = mock_kafka(1);
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        fast_kafka(c, &kafka.bootstrap_servers());
    });
    let (code, report, out) = doctor(cfg.path());
    assert_eq!(code, 0, "{out}");
    assert_eq!(report["ok"], true);
    for name in [
        "config",
        "postgres.connect",
        "postgres.tls",
        "postgres.hosts",
        "postgres.replication",
        "postgres.schema",
        "postgres.identity",
        "mailbox.connect",
        "mailbox.tls",
        "mailbox.inbox",
        "mailbox.outbox",
        "mailbox.hole-evidence",
        "kafka.client",
        "kafka.metadata",
        "kafka.topic.msg",
        "kafka.topic.schd",
        "kafka.topic.season",
        "kafka.topic.audit",
    ] {
        assert_eq!(check_row(&report, name).0, "ok", "{name}: {out}");
    }
    // The local test roles are deliberately broad: reported, not failed.
    assert_eq!(check_row(&report, "postgres.role").0, "warn", "{out}");
    assert!(check_row(&report, "postgres.role").1.contains("SUPERUSER"));
    assert_eq!(check_row(&report, "mailbox.privileges").0, "warn", "{out}");
    assert!(
        check_row(&report, "mailbox.inbox")
            .1
            .contains(&format!("{}.cminmsgs", mb.name))
    );
    assert!(
        check_row(&report, "kafka.topic.msg")
            .1
            .contains("3 partition(s)")
    );
    // The human form: one line per check.
    let out = msgx(cfg.path(), &["doctor"]);
    let lines = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(lines.lines().count(), 20, "{lines}");
    assert!(
        lines
            .lines()
            .all(|l| l.starts_with("ok ") || l.starts_with("warn ")),
        "{lines}"
    );
}

#[tokio::test]
async fn a_missing_table_fails_the_inbox_check() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.exec("DROP TABLE cminmsgs").await;
    let kafka = mock_kafka(1);
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        fast_kafka(c, &kafka.bootstrap_servers());
    });
    let (code, report, out) = doctor(cfg.path());
    assert_eq!(code, 1, "{out}");
    let (status, detail) = check_row(&report, "mailbox.inbox");
    assert_eq!(status, "fail", "{out}");
    assert!(detail.contains("no table `cminmsgs`"), "{detail}");
    assert_eq!(check_row(&report, "mailbox.outbox").0, "ok");
}

/// A mailbox user with SELECT only (no UPDATE of the mark, no INSERT on the
/// outbox) fails the privilege check, naming what is missing.
#[tokio::test]
async fn a_missing_privilege_fails_naming_it() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let user = unique_name("mbro");
    let admin = mysql_async::Pool::from_url(mysql_admin_url()).expect("admin url");
    let mut conn = admin.get_conn().await.expect("connect");
    for sql in [
        format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'"),
        format!("GRANT SELECT ON `{}`.`cminmsgs` TO '{user}'@'%'", mb.name),
        format!("GRANT SELECT ON `{}`.`coutmsgs` TO '{user}'@'%'", mb.name),
    ] {
        conn.query_drop(sql).await.expect("grant");
    }
    let kafka = mock_kafka(1);
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = format!("mysql://{user}:pw@127.0.0.1:3306/{}", mb.name);
        fast_kafka(c, &kafka.bootstrap_servers());
    });
    let (code, report, out) = doctor(cfg.path());
    let _ = conn.query_drop(format!("DROP USER '{user}'@'%'")).await;
    drop(conn);
    let _ = admin.disconnect().await;
    assert_eq!(code, 1, "{out}");
    let (status, detail) = check_row(&report, "mailbox.privileges");
    assert_eq!(status, "fail", "{out}");
    assert!(
        detail.contains("UPDATE (CMINMSGS_DATE_PROCESSED) on the inbox")
            && detail.contains("INSERT on the outbox"),
        "{detail}"
    );
    assert!(!detail.contains("SELECT on"), "SELECT is granted: {detail}");
    assert!(!out.contains(":pw@"), "no password in the output: {out}");
}

/// The local PostgreSQL serves TLS with Debian's snakeoil certificate; a CA
/// of our own does not sign it, so verify-full must fail the connect check
/// with a certificate error (never fall back to plaintext).
#[tokio::test]
async fn a_wrong_ca_fails_the_connect_check() {
    let db = TestDb::migrated().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = rcgen::generate_simple_self_signed(vec!["msgx-test-ca".into()]).expect("ca");
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.cert.pem()).expect("write ca");
    let kafka = mock_kafka(1);
    let cfg = db.config_file_with(|c| {
        c.msgx.postgres.url = format!(
            "{}?sslmode=verify-full&sslrootcert={}",
            db.url,
            ca_file.display()
        );
        fast_kafka(c, &kafka.bootstrap_servers());
    });
    let (code, report, out) = doctor(cfg.path());
    assert_eq!(code, 1, "{out}");
    let (status, detail) = check_row(&report, "postgres.connect");
    assert_eq!(status, "fail", "{out}");
    assert!(detail.to_lowercase().contains("certificate"), "{detail}");
    assert_eq!(
        check_row(&report, "postgres.schema").0,
        "absent",
        "not run after a failed connect"
    );
}

#[tokio::test]
async fn an_unreachable_broker_fails_the_metadata_check() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        fast_kafka(c, "127.0.0.1:1");
        c.msgx.kafka.call_timeout = "2s".parse().expect("duration");
    });
    let (code, report, out) = doctor(cfg.path());
    assert_eq!(code, 1, "{out}");
    assert_eq!(check_row(&report, "kafka.client").0, "ok");
    let (status, detail) = check_row(&report, "kafka.metadata");
    assert_eq!(status, "fail", "{out}");
    assert!(detail.contains("127.0.0.1:1"), "{detail}");
    assert_eq!(
        check_row(&report, "postgres.schema").0,
        "ok",
        "the rest still checked"
    );
}

#[tokio::test]
async fn without_urls_the_config_check_fails_first() {
    let db = TestDb::migrated().await;
    let cfg = db.config_file_with(|c| {
        c.msgx.postgres.url.clear();
        c.msgx.mailbox.url.clear();
        fast_kafka(c, "127.0.0.1:1");
        c.msgx.kafka.call_timeout = "1s".parse().expect("duration");
    });
    let (code, report, out) = doctor(cfg.path());
    assert_eq!(code, 1, "{out}");
    let (status, detail) = check_row(&report, "config");
    assert_eq!(status, "fail");
    assert!(detail.contains("MSGX_DATABASE_URL") && detail.contains("MSGX_MAILBOX_URL"));
}
