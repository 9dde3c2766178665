//! The compat HTTP entry `POST /cminmsgs/send` (design §4.4; issue 5 item 6;
//! issue 16 item 4) against a real MariaDB mailbox and PostgreSQL, over real
//! sockets: authentication (bearer token, mutual TLS with certificates made
//! here), the SNDR allow-list, 400 for every decode error, error bodies
//! without internals, and the listener limits on both the compat entry and
//! the metrics listener (slow clients, concurrency, rate, connections).

use crate::common;

use common::*;
use msgx::config::{Config, Http};
use msgx::http::compat::{self, CompatError, CompatState};
use msgx::http::ops::{Heartbeat, LockSlot, OpsState};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

const MSG: &str = "<MSG><META><SNDR>AODB</SNDR><SEQN>77</SEQN><DTTM>20261201080000</DTTM><TYPE>FLOP</TYPE>\
                   <STYP>APPT</STYP></META><FLOP><FLID>1</FLID><APPT>01DEC260830</APPT></FLOP></MSG>";

const TOKEN: &str = "s3cret-compat-token-0123456789";

/// Headers for [`post_with`]: no `Authorization` at all.
const NO_AUTH: [(&str, &str); 1] = [("Authorization", "")];

/// A body that decodes to MALFORMED at once (no META): cheap requests that
/// never write, for the limit tests.
const NO_META: &str = "<MSG/>";

/// A running compat entry; dropping it stops the server.
struct Entry {
    addr: SocketAddr,
    _stop: watch::Sender<bool>,
}

fn state(db: &TestDb, cfg: &Config) -> CompatState {
    let (_clock, shared) = manual_clock();
    CompatState {
        pg: db.pool.clone(),
        mailbox: msgx::store::mailbox::Mailbox::new(&cfg.msgx.mailbox).unwrap(),
        clock: shared,
        tz: cfg.msgx.airport.tz(),
        ignore: cfg.msgx.ignore.clone(),
    }
}

/// Binds the entry on `listen` with `http` adjusted by `tweak` and `env` as
/// the environment, and serves it in the background.
async fn try_start(
    db: &TestDb,
    mailbox_url: &str,
    listen: &str,
    env: Option<&str>,
    tweak: impl FnOnce(&mut Http),
) -> Result<Entry, CompatError> {
    let mut cfg = db.config();
    cfg.msgx.mailbox.url = mailbox_url.to_string();
    tweak(&mut cfg.msgx.http);
    let env = env.map(str::to_string);
    let server = compat::bind(listen, &cfg.msgx.http, state(db, &cfg), move |k| {
        (k == compat::TOKEN_ENV).then(|| env.clone()).flatten()
    })
    .await?;
    let addr = server.local_addr();
    let (tx, rx) = watch::channel(false);
    tokio::spawn(server.serve(rx));
    Ok(Entry { addr, _stop: tx })
}

/// The entry on loopback with [`TOKEN`] as `MSGX_COMPAT_TOKEN` (the
/// entry needs authentication on every address, issue 32 item 4).
async fn start(db: &TestDb, mailbox_url: &str, tweak: impl FnOnce(&mut Http)) -> Entry {
    try_start(db, mailbox_url, "127.0.0.1:0", Some(TOKEN), tweak)
        .await
        .expect("the compat entry starts")
}

/// One HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: String,
}

/// Sends `req` on `s` and reads the answer until the server closes.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    req: &[u8],
) -> std::io::Result<Answer> {
    s.write_all(req).await?;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            // A TLS peer that closes without close_notify, after a full answer.
            Err(e) if !out.is_empty() && e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e),
        }
    }
    let text = String::from_utf8_lossy(&out).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Ok(Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    })
}

/// A POST of `body` with `headers`; `Authorization: Bearer` [`TOKEN`]
/// unless the headers name `Authorization` themselves ([`NO_AUTH`]: none).
/// A header with an empty value is left out.
fn http_request(headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut req = format!(
        "POST /cminmsgs/send HTTP/1.1\r\nHost: x\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    {
        req.push_str(&format!("Authorization: Bearer {TOKEN}\r\n"));
    }
    for (k, v) in headers.iter().filter(|(_, v)| !v.is_empty()) {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    req.into_bytes()
}

/// POST /cminmsgs/send with extra headers, over plain TCP.
async fn post_with(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    exchange(&mut s, &http_request(headers, body))
        .await
        .expect("an HTTP answer")
}

async fn post(addr: SocketAddr, body: &str) -> Answer {
    post_with(addr, &[], body).await
}

/// Nothing reached the mailbox or PROC_STATE.
async fn assert_nothing_written(db: &TestDb, mb: &TestMailbox) {
    let mut cfg = db.config();
    cfg.msgx.mailbox.url = mb.url.clone();
    let mailbox = msgx::store::mailbox::Mailbox::new(&cfg.msgx.mailbox).unwrap();
    assert_eq!(
        mailbox.id_range().await.unwrap(),
        (None, None),
        "the mailbox is empty"
    );
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM proc_state")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(n, 0, "nothing enqueued");
}

fn token_file(token: &str) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), format!("{token}\n")).unwrap();
    f
}

#[tokio::test]
async fn a_message_is_written_to_the_mailbox_and_enqueued_beyond_w() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let entry = start(&db, &mb.url, |_| {}).await;
    let a = post(entry.addr, MSG).await;
    assert_eq!(a.status, 200, "{a:?}");
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    let id = v["id"].as_i64().unwrap();
    assert_eq!(v["enqueued"], true);
    let row: (String, String) =
        sqlx::query_as("SELECT state, source FROM proc_state WHERE msg_id = $1")
            .bind(id)
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(row, ("PENDING".into(), "compat".into()));
    use mysql_async::prelude::Queryable;
    let mut conn = mb.pool.get_conn().await.unwrap();
    let stored: Option<(String, String, String)> = conn
        .exec_first(
            "SELECT CMINMSGS_SUBSYSTEM_TYPE, CMINMSGS_SUBSYSTEM_SUBTYPE, CMINMSGS_STATUS FROM cminmsgs WHERE CMINMSGS_ID = ?",
            (id,),
        )
        .await
        .unwrap();
    assert_eq!(stored, Some(("FLOP".into(), "APPT".into(), "VALID".into())));
}

#[tokio::test]
async fn deterministic_decode_errors_are_400_and_write_nothing() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let entry = start(&db, &mb.url, |_| {}).await;
    let doctype = format!("<!DOCTYPE MSG>{MSG}");
    let gbk = format!("<?xml version=\"1.0\" encoding=\"GBK\"?>{MSG}");
    let control = MSG.replace("<FLID>1</FLID>", "<FLID>1</FLID><X>\u{1}</X>");
    let cases: [(&str, &str, &str); 5] = [
        ("not well-formed", "<MSG><META>", "MALFORMED"),
        ("no META", NO_META, "MALFORMED"),
        ("DOCTYPE", &doctype, "CODEC_ERROR"),
        ("declared GBK", &gbk, "CODEC_ERROR"),
        ("a control character", &control, "MALFORMED"),
    ];
    for (what, body, class) in cases {
        let a = post(entry.addr, body).await;
        assert_eq!(a.status, 400, "{what}: {a:?}");
        let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(v["class"], class, "{what}: {a:?}");
        assert!(
            v["error"].as_str().unwrap().starts_with(class),
            "{what}: {a:?}"
        );
    }
    // Bytes that are not UTF-8 at all (a GBK body sent as is).
    let mut s = TcpStream::connect(entry.addr).await.unwrap();
    let mut raw = MSG.as_bytes().to_vec();
    raw.splice(0..0, [0xB2, 0xE2, 0xCA, 0xD4]);
    let mut req = format!(
        "POST /cminmsgs/send HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n\
         Authorization: Bearer {TOKEN}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        raw.len()
    )
    .into_bytes();
    req.extend_from_slice(&raw);
    let a = exchange(&mut s, &req).await.unwrap();
    assert_eq!(a.status, 400, "{a:?}");
    assert!(a.body.contains("not UTF-8"), "{a:?}");
    assert_nothing_written(&db, &mb).await;
}

/// Issue 17 item 5: an error body is cut to 512 characters with a marker,
/// however much of the input the decode error quotes (a 1 MiB FLID here).
#[tokio::test]
async fn a_huge_decode_error_is_cut_in_the_answer() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let entry = start(&db, &mb.url, |h| h.compat_max_body = 2 << 20).await;
    let huge = MSG.replace(
        "<FLID>1</FLID>",
        &format!("<FLID>{}</FLID>", "9".repeat(1 << 20)),
    );
    let a = post(entry.addr, &huge).await;
    assert_eq!(a.status, 400, "{}", a.status);
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    let error = v["error"].as_str().unwrap_or_default();
    assert_eq!(
        error.chars().count(),
        msgx::error_text::MAX_CHARS,
        "{}",
        a.body.len()
    );
    assert!(error.starts_with("MALFORMED at MSG/FLOP/FLID"), "{error}");
    assert!(error.contains("… [cut, "), "{error}");
    assert_eq!(v["class"], "MALFORMED");
    assert_nothing_written(&db, &mb).await;
}

/// Issue 31 item 8: five such POSTs held a genuine message behind them for
/// 33 s (each FAILED(UNSUPPORTED) at the head for its retry schedule). The
/// entry now refuses what the pump would not process, and writes nothing.
#[tokio::test]
async fn a_type_msgx_does_not_handle_is_422_and_writes_nothing_unless_ignored() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let entry = start(&db, &mb.url, |_| {}).await;
    // A SCHS subtype msgx does not know (DNLD and RESP it handles), and a
    // type it has never heard of.
    let schs = "<MSG><META><SNDR>AODB</SNDR><SEQN>5</SEQN><TYPE>SCHS</TYPE><STYP>ADD</STYP></META><SCHS/></MSG>";
    let xyz = "<MSG><META><SNDR>AODB</SNDR><SEQN>6</SEQN><TYPE>XYZW</TYPE><STYP>UPD</STYP></META><XYZW/></MSG>";
    for body in [schs, xyz] {
        let a = post(entry.addr, body).await;
        assert_eq!(a.status, 422, "the pump would hold it UNSUPPORTED: {a:?}");
        let v: serde_json::Value = serde_json::from_str(&a.body).expect("JSON");
        assert_eq!(v["class"], "UNSUPPORTED", "{a:?}");
        assert!(
            v["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("unsupported")),
            "{a:?}"
        );
    }
    assert_nothing_written(&db, &mb).await;

    // Named by `msgx.ignore`: accepted, the pump skips it at once.
    let mut cfg = db.config();
    cfg.msgx.mailbox.url = mb.url.clone();
    cfg.msgx.ignore = vec!["XYZW".into()];
    let env = |k: &str| (k == compat::TOKEN_ENV).then(|| TOKEN.to_string());
    let server = compat::bind("127.0.0.1:0", &cfg.msgx.http, state(&db, &cfg), env)
        .await
        .expect("binds");
    let addr = server.local_addr();
    let (_stop, rx) = watch::channel(false);
    tokio::spawn(server.serve(rx));
    let a = post(addr, xyz).await;
    assert_eq!(
        a.status, 200,
        "an ignored type is the pump's to skip: {a:?}"
    );
}

#[tokio::test]
async fn an_oversized_body_is_413_and_writes_nothing() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let entry = start(&db, &mb.url, |h| h.compat_max_body = 64).await;
    let a = post(entry.addr, MSG).await;
    assert_eq!(a.status, 413, "{a:?}");
    assert!(a.body.contains("msgx.http.compat-max-body"), "{a:?}");
    // Chunked, so no Content-Length tells it in advance.
    let mut s = TcpStream::connect(entry.addr).await.unwrap();
    let req = format!(
        "POST /cminmsgs/send HTTP/1.1\r\nHost: x\r\nContent-Type: application/xml\r\n\
         Authorization: Bearer {TOKEN}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{MSG}\r\n0\r\n\r\n",
        MSG.len()
    );
    let a = exchange(&mut s, req.as_bytes()).await.unwrap();
    assert_eq!(a.status, 413, "{a:?}");
    assert_nothing_written(&db, &mb).await;
}

/// The body of a failed write names nothing of the database.
fn assert_opaque(a: &Answer, secrets: &[&str]) {
    assert_eq!(a.status, 503, "{a:?}");
    assert_eq!(
        a.body, r#"{"error":"mailbox unavailable"}"#,
        "a fixed text, nothing from the driver"
    );
    for s in secrets {
        assert!(
            !a.head.contains(s) && !a.body.contains(s),
            "{s} leaked: {a:?}"
        );
    }
}

#[tokio::test]
async fn an_unreachable_mailbox_is_503_without_the_url_or_password() {
    let db = TestDb::migrated().await;
    let url = "mysql://mbuser:Pw-s3cret-42@127.0.0.1:1/none_db";
    let entry = start(&db, url, |_| {}).await;
    let a = post(entry.addr, MSG).await;
    assert_opaque(
        &a,
        &["Pw-s3cret-42", "mbuser", "127.0.0.1:1", "none_db", "mysql"],
    );
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM proc_state")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn a_mailbox_without_its_table_is_503_without_the_sql_error() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    mb.exec("DROP TABLE IF EXISTS CMINMSGS, cminmsgs").await;
    let entry = start(&db, &mb.url, |_| {}).await;
    let a = post(entry.addr, MSG).await;
    assert_opaque(
        &a,
        &[
            &mb.name, "CMINMSGS", "cminmsgs", "exist", "1146", "SQL", "msgx:", "3306",
        ],
    );
}

#[tokio::test]
async fn a_failed_enqueue_after_the_mailbox_write_is_202() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    db.fail_inserts("proc_state", "pg down (test)").await;
    let entry = start(&db, &mb.url, |_| {}).await;
    let a = post(entry.addr, MSG).await;
    assert_eq!(a.status, 202, "{a:?}");
    assert!(!a.body.contains("pg down"), "{a:?}");
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(v["enqueued"], false);
    assert!(
        v["id"].as_i64().unwrap() > 0,
        "the mailbox row exists for the poller"
    );
}

#[tokio::test]
async fn a_configured_token_is_required_even_on_loopback() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let file = token_file(TOKEN);
    let path = file.path().to_path_buf();
    let entry = start(&db, &mb.url, |h| h.compat_token_file = Some(path)).await;

    let a = post_with(entry.addr, &NO_AUTH, MSG).await;
    assert_eq!(a.status, 401, "no token: {a:?}");
    assert!(
        a.head.contains("www-authenticate: Bearer realm=\"msgx\""),
        "{a:?}"
    );
    assert!(a.body.contains("missing bearer token"), "{a:?}");
    for wrong in [
        "Bearer s3cret-compat-token-012345678",
        "Bearer s3cret-compat-token-01234567890",
        "Bearer S3cret-compat-token-0123456789",
        "Basic czNjcmV0LWNvbXBhdC10b2tlbi0wMTIzNDU2Nzg5",
        "s3cret-compat-token-0123456789",
    ] {
        let a = post_with(entry.addr, &[("Authorization", wrong)], MSG).await;
        assert_eq!(a.status, 401, "{wrong}: {a:?}");
        assert!(a.head.contains("www-authenticate: Bearer"), "{a:?}");
    }
    let a = post_with(
        entry.addr,
        &[("Authorization", "Bearer invalid-token-000000000")],
        MSG,
    )
    .await;
    assert!(a.head.contains("error=\"invalid_token\""), "{a:?}");
    assert_nothing_written(&db, &mb).await;

    let right = format!("Bearer {TOKEN}");
    let a = post_with(entry.addr, &[("Authorization", &right)], MSG).await;
    assert_eq!(a.status, 200, "{a:?}");
    // The scheme is case-insensitive (RFC 7235).
    let lower = format!("bearer {TOKEN}");
    let a = post_with(entry.addr, &[("Authorization", &lower)], MSG).await;
    assert_eq!(a.status, 200, "{a:?}");
}

#[tokio::test]
async fn the_environment_token_wins_over_the_file() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let file = token_file("file-token-0123456789abcdef");
    let path = file.path().to_path_buf();
    let env_token = "env-token-0123456789abcdef";
    let entry = try_start(&db, &mb.url, "127.0.0.1:0", Some(env_token), |h| {
        h.compat_token_file = Some(path)
    })
    .await
    .unwrap();
    let file_auth = "Bearer file-token-0123456789abcdef";
    assert_eq!(
        post_with(entry.addr, &[("Authorization", file_auth)], MSG)
            .await
            .status,
        401
    );
    let env_auth = format!("Bearer {env_token}");
    assert_eq!(
        post_with(entry.addr, &[("Authorization", &env_auth)], MSG)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn a_sender_outside_the_allow_list_is_403_and_writes_nothing() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let entry = start(&db, &mb.url, |_| {}).await;
    for sndr in ["VIEW", "aodb", "AODBX"] {
        let body = MSG.replace("<SNDR>AODB</SNDR>", &format!("<SNDR>{sndr}</SNDR>"));
        let a = post(entry.addr, &body).await;
        assert_eq!(a.status, 403, "{sndr}: {a:?}");
        assert!(a.body.contains("msgx.http.compat-allowed-senders"), "{a:?}");
    }
    // Issue 32 item 2: the refused SNDR is logged escaped, never raw.
    let (logs, guard) = common::capture_logs();
    let body = MSG.replace("<SNDR>AODB</SNDR>", "<SNDR>AO\u{2028}\u{202e}DB</SNDR>");
    assert_eq!(post(entry.addr, &body).await.status, 403);
    drop(guard);
    let text = logs.text();
    assert!(text.contains("sndr=AO\\u{2028}\\u{202e}DB"), "{text}");
    assert!(!text.contains(['\u{2028}', '\u{202e}']), "{text:?}");
    assert_nothing_written(&db, &mb).await;

    let entry = start(&db, &mb.url, |h| {
        h.compat_allowed_senders = vec!["AODB".into(), "TEST".into()]
    })
    .await;
    let body = MSG.replace("<SNDR>AODB</SNDR>", "<SNDR>TEST</SNDR>");
    assert_eq!(post(entry.addr, &body).await.status, 200);
}

#[tokio::test]
async fn a_non_loopback_address_without_authentication_is_refused_at_start() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    for listen in ["0.0.0.0:0", "[::]:0"] {
        let err = try_start(&db, &mb.url, listen, None, |_| {})
            .await
            .err()
            .expect("refused");
        assert!(matches!(err, CompatError::Unauthenticated(_)), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("msgx.http.compat-listen") && text.contains("compat-token-file"),
            "{text}"
        );
    }
    // With a token it starts, and the token is required.
    let entry = try_start(&db, &mb.url, "0.0.0.0:0", Some(TOKEN), |_| {})
        .await
        .expect("starts with a token");
    let local = SocketAddr::from(([127, 0, 0, 1], entry.addr.port()));
    assert_eq!(post_with(local, &NO_AUTH, MSG).await.status, 401);
    // An unreadable token file stops the start too (the file is read there).
    let err = try_start(&db, &mb.url, "127.0.0.1:0", None, |h| {
        h.compat_token_file = Some("/nonexistent/compat.token".into())
    })
    .await
    .err()
    .expect("refused");
    assert!(
        err.to_string().contains("/nonexistent/compat.token"),
        "{err}"
    );
}

/// `msgx config check` on `toml_text`, with `env` as MSGX_COMPAT_TOKEN.
fn config_check(toml_text: &str, env: Option<&str>) -> std::process::Output {
    let f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    let urls = "[msgx.postgres]\nurl = \"postgres://u:p@127.0.0.1:5432/x\"\n\
                [msgx.mailbox]\nurl = \"mysql://u:p@127.0.0.1:3306/x\"\n";
    std::fs::write(f.path(), format!("{urls}{toml_text}")).unwrap();
    let mut cmd = std::process::Command::new(msgx_bin());
    cmd.arg("--config")
        .arg(f.path())
        .args(["config", "check"])
        .env_remove("MSGX_CONFIG")
        .env_remove("MSGX_DATABASE_URL")
        .env_remove("MSGX_MAILBOX_URL")
        .env_remove("MSGX_KAFKA_BROKERS")
        .env_remove(compat::TOKEN_ENV);
    if let Some(v) = env {
        cmd.env(compat::TOKEN_ENV, v);
    }
    cmd.output().unwrap()
}

#[test]
fn config_check_refuses_a_non_loopback_entry_without_authentication() {
    let open = "[msgx.http]\ncompat-listen = \"0.0.0.0:8088\"\n";
    let out = config_check(open, None);
    assert_eq!(code(&out), 2, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("msgx.http.compat-listen") && err.contains("no authentication"),
        "{err}"
    );
    let out = config_check(open, Some(TOKEN));
    assert_eq!(code(&out), 0, "MSGX_COMPAT_TOKEN counts: {}", text(&out));
    let with_file = format!("{open}compat-token-file = \"/etc/msgx/compat.token\"\n");
    assert_eq!(code(&config_check(&with_file, None)), 0);
    let mtls = format!(
        "{open}compat-tls-cert = \"/c.pem\"\ncompat-tls-key = \"/k.pem\"\ncompat-tls-client-ca = \"/ca.pem\"\n"
    );
    assert_eq!(code(&config_check(&mtls, None)), 0);
    // TLS without client certificates is encryption, not authentication.
    let tls_only = format!("{open}compat-tls-cert = \"/c.pem\"\ncompat-tls-key = \"/k.pem\"\n");
    assert_eq!(code(&config_check(&tls_only, None)), 2);
    let out = config_check(
        "[msgx.http]\ncompat-tls-client-ca = \"/ca.pem\"\ncompat-allowed-senders = []\n",
        None,
    );
    assert_eq!(code(&out), 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("msgx.http.compat-tls-client-ca")
            && err.contains("msgx.http.compat-allowed-senders"),
        "{err}"
    );
}

/// A CA, a server certificate for localhost, and client certificates from
/// the CA and from a stranger CA, as PEM files in a temp dir.
struct Pki {
    dir: tempfile::TempDir,
    ca_der: rustls_pki_types::CertificateDer<'static>,
    client: (Vec<rustls_pki_types::CertificateDer<'static>>, Vec<u8>),
    stranger: (Vec<rustls_pki_types::CertificateDer<'static>>, Vec<u8>),
}

impl Pki {
    fn new() -> Pki {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
            KeyPair, KeyUsagePurpose,
        };
        fn ca(name: &str) -> (rcgen::Certificate, Issuer<'static, KeyPair>) {
            let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
            p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            p.distinguished_name.push(DnType::CommonName, name);
            p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
            let key = KeyPair::generate().unwrap();
            let cert = p.self_signed(&key).unwrap();
            (cert, Issuer::new(p, key))
        }
        fn leaf(
            issuer: &Issuer<'static, KeyPair>,
            names: &[&str],
            usage: ExtendedKeyUsagePurpose,
        ) -> (rcgen::Certificate, KeyPair) {
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            let mut p = CertificateParams::new(names.clone()).unwrap();
            p.distinguished_name
                .push(DnType::CommonName, names[0].clone());
            p.extended_key_usages = vec![usage];
            let key = KeyPair::generate().unwrap();
            (p.signed_by(&key, issuer).unwrap(), key)
        }
        let dir = tempfile::tempdir().unwrap();
        let (ca_cert, issuer) = ca("msgx test compat CA");
        let (server, server_key) = leaf(
            &issuer,
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let (client, client_key) = leaf(
            &issuer,
            &["aodb-client"],
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        let (_, other) = ca("a stranger CA");
        let (stranger, stranger_key) = leaf(
            &other,
            &["aodb-client"],
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        std::fs::write(dir.path().join("ca.pem"), ca_cert.pem()).unwrap();
        std::fs::write(dir.path().join("server.pem"), server.pem()).unwrap();
        std::fs::write(dir.path().join("server.key"), server_key.serialize_pem()).unwrap();
        Pki {
            dir,
            ca_der: ca_cert.der().clone(),
            client: (vec![client.der().clone()], client_key.serialize_der()),
            stranger: (vec![stranger.der().clone()], stranger_key.serialize_der()),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn mtls(&self, h: &mut Http) {
        h.compat_tls_cert = Some(self.path("server.pem"));
        h.compat_tls_key = Some(self.path("server.key"));
        h.compat_tls_client_ca = Some(self.path("ca.pem"));
    }

    /// A TLS client trusting the CA, presenting `cert` when given.
    fn connector(
        &self,
        cert: Option<&(Vec<rustls_pki_types::CertificateDer<'static>>, Vec<u8>)>,
    ) -> tokio_rustls::TlsConnector {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca_der.clone()).unwrap();
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots);
        let config = match cert {
            Some((chain, key)) => builder
                .with_client_auth_cert(
                    chain.clone(),
                    rustls_pki_types::PrivatePkcs8KeyDer::from(key.clone()).into(),
                )
                .unwrap(),
            None => builder.with_no_client_auth(),
        };
        tokio_rustls::TlsConnector::from(Arc::new(config))
    }
}

/// POST MSG over TLS; the error text when the TLS session fails.
async fn post_tls(
    addr: SocketAddr,
    connector: &tokio_rustls::TlsConnector,
) -> Result<Answer, String> {
    let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    // TLS 1.3: the client's handshake ends before the server has judged
    // its certificate; a refusal arrives as an alert on the first read.
    exchange(&mut tls, &http_request(&[], MSG))
        .await
        .map_err(|e| format!("after handshake: {e}"))
}

#[tokio::test]
async fn mutual_tls_admits_clients_with_a_certificate_from_the_configured_ca_only() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let pki = Pki::new();
    // Non-loopback: mutual TLS alone is enough authentication.
    let entry = try_start(&db, &mb.url, "0.0.0.0:0", None, |h| pki.mtls(h))
        .await
        .expect("starts with a client CA");
    let addr = SocketAddr::from(([127, 0, 0, 1], entry.addr.port()));

    let a = post_tls(addr, &pki.connector(Some(&pki.client)))
        .await
        .expect("a client certificate from the CA is admitted");
    assert_eq!(a.status, 200, "{a:?}");

    let e = post_tls(addr, &pki.connector(None))
        .await
        .expect_err("no client certificate: refused");
    assert!(e.contains("CertificateRequired"), "{e}");
    let e = post_tls(addr, &pki.connector(Some(&pki.stranger)))
        .await
        .expect_err("a certificate from another CA: refused");
    assert!(
        e.contains("UnknownCA") || e.contains("BadCertificate"),
        "{e}"
    );
    // Plain HTTP on the TLS port gets no HTTP answer.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let plain = exchange(&mut s, &http_request(&[], MSG)).await;
    assert!(plain.map(|a| a.status).unwrap_or(0) == 0);

    let mut cfg = db.config();
    cfg.msgx.mailbox.url = mb.url.clone();
    let mailbox = msgx::store::mailbox::Mailbox::new(&cfg.msgx.mailbox).unwrap();
    let (min, max) = mailbox.id_range().await.unwrap();
    assert_eq!(min, max, "only the admitted client's message was written");
}

#[tokio::test]
async fn tls_with_a_token_needs_both_and_bad_tls_files_stop_the_start() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let pki = Pki::new();
    let entry = try_start(&db, &mb.url, "127.0.0.1:0", Some(TOKEN), |h| pki.mtls(h))
        .await
        .unwrap();
    let tcp = TcpStream::connect(entry.addr).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = pki
        .connector(Some(&pki.client))
        .connect(name, tcp)
        .await
        .unwrap();
    let a = exchange(&mut tls, &http_request(&NO_AUTH, MSG))
        .await
        .unwrap();
    assert_eq!(
        a.status, 401,
        "a certificate does not replace the token: {a:?}"
    );

    let err = try_start(&db, &mb.url, "127.0.0.1:0", None, |h| {
        pki.mtls(h);
        h.compat_tls_key = Some(pki.path("ca.pem"));
    })
    .await
    .err()
    .expect("a certificate file as the key is refused");
    assert!(
        err.to_string().contains("msgx.http.compat-tls-key"),
        "{err}"
    );
}

/// Serves the ops endpoints for `db` with `http` adjusted by `tweak`; the
/// heartbeat is fresh, so `/healthz` answers 200.
async fn start_ops(
    db: &TestDb,
    mailbox_url: &str,
    tweak: impl FnOnce(&mut Http),
) -> (SocketAddr, watch::Sender<bool>) {
    let mut cfg = db.config();
    cfg.msgx.mailbox.url = mailbox_url.to_string();
    cfg.msgx.http.probe_timeout = "3s".parse().unwrap();
    tweak(&mut cfg.msgx.http);
    let (_clock, clock) = manual_clock();
    let heartbeat = Arc::new(Heartbeat::default());
    heartbeat.beat(clock.now());
    let state = OpsState {
        pg: db.pool.clone(),
        mailbox: msgx::store::mailbox::Mailbox::new(&cfg.msgx.mailbox).unwrap(),
        clock,
        config: Arc::new(cfg),
        heartbeat,
        lock: LockSlot::default(),
        jobs: Default::default(),
        console: Default::default(),
        metrics: msgx::prometheus::install().expect("recorder installs"),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = watch::channel(false);
    tokio::spawn(msgx::http::ops::serve(listener, state, rx));
    (addr, tx)
}

/// Opens a connection that sends part of a request head and then holds.
async fn slow_client(addr: SocketAddr) -> TcpStream {
    slow_client_from("127.0.0.1".parse().expect("address"), addr).await
}

/// [`slow_client`] from the source address `from`.
async fn slow_client_from(from: std::net::IpAddr, addr: SocketAddr) -> TcpStream {
    let mut s = connect_from(from, addr).await;
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .expect("partial head");
    s
}

/// Waits (bounded) until the server closes `s`; false if it stays open.
async fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 512];
    let until = Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(until.into(), s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue, // an error answer before the close
        }
    }
}

#[tokio::test]
async fn slow_clients_do_not_stop_healthz_or_the_compat_entry_and_are_cut_off() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let header_timeout = Duration::from_secs(2);
    let (ops, _ops_stop) = start_ops(&db, &mb.url, |h| {
        h.header_read_timeout = "2s".parse().unwrap()
    })
    .await;
    let entry = start(&db, &mb.url, |h| {
        h.header_read_timeout = "2s".parse().unwrap()
    })
    .await;
    let opened = Instant::now();
    let mut slow = Vec::new();
    // 200 clients (one address each, so that the per-client connection
    // budget does not close them at once).
    for i in 0..200u8 {
        let from = std::net::Ipv4Addr::new(127, 0, 1, i + 1).into();
        slow.push(slow_client_from(from, ops).await);
        slow.push(slow_client_from(from, entry.addr).await);
    }

    let asked = Instant::now();
    let (status, body) =
        tokio::time::timeout(Duration::from_secs(1), http(ops, "GET", "/healthz", ""))
            .await
            .expect("/healthz answers within 1 s despite 200 slow connections");
    assert_eq!(status, 200, "{body}");
    assert!(asked.elapsed() < Duration::from_secs(1));
    let a = tokio::time::timeout(Duration::from_secs(2), post(entry.addr, MSG))
        .await
        .expect("the compat entry answers despite 200 slow connections");
    assert_eq!(a.status, 200, "{a:?}");

    // Still open while within the header timeout…
    assert!(opened.elapsed() < header_timeout);
    assert!(!closed_within(&mut slow[0], Duration::from_millis(50)).await);
    // …and cut off once it has passed, on both listeners.
    for s in &mut slow {
        assert!(
            closed_within(s, header_timeout + Duration::from_secs(3)).await,
            "a slow connection outlived the header timeout"
        );
    }
    assert!(opened.elapsed() >= header_timeout);
}

#[tokio::test]
async fn a_stalled_body_holds_the_only_slot_until_its_body_timeout() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let entry = start(&db, &mb.url, |h| {
        h.max_concurrent_requests = 1;
        h.body_timeout = "3s".parse().unwrap();
    })
    .await;
    let mut stalled = TcpStream::connect(entry.addr).await.unwrap();
    let head = format!(
        "POST /cminmsgs/send HTTP/1.1\r\nHost: x\r\nContent-Type: application/xml\r\n\
         Authorization: Bearer {TOKEN}\r\nContent-Length: 100\r\nConnection: close\r\n\r\n<MSG>"
    );
    stalled.write_all(head.as_bytes()).await.unwrap();
    let stalled_at = Instant::now();
    // NO_META answers 400 when the slot is free, 503 while the stalled
    // request holds it.
    wait_until(
        "the stalled request to hold the slot",
        Duration::from_secs(2),
        || async { post(entry.addr, NO_META).await.status == 503 },
    )
    .await;
    let a = post(entry.addr, NO_META).await;
    assert_eq!(a.status, 503, "{a:?}");
    assert!(
        a.body.contains("msgx.http.max-concurrent-requests"),
        "{a:?}"
    );

    let a = exchange(&mut stalled, b"").await.unwrap();
    assert_eq!(a.status, 408, "{a:?}");
    assert!(a.body.contains("msgx.http.body-timeout"), "{a:?}");
    assert!(stalled_at.elapsed() >= Duration::from_millis(2900));
    assert_eq!(
        post(entry.addr, NO_META).await.status,
        400,
        "the slot is free again"
    );
    assert_nothing_written(&db, &mb).await;
}

#[tokio::test]
async fn requests_beyond_the_rate_are_429_on_both_listeners() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let entry = start(&db, &mb.url, |h| h.requests_per_second = 3).await;
    let (ops, _stop) = start_ops(&db, &mb.url, |h| h.requests_per_second = 3).await;
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(post(entry.addr, NO_META).await.status);
    }
    assert_eq!(statuses, [400, 400, 400, 429], "three per second, then 429");
    let a = post(entry.addr, NO_META).await;
    assert_eq!(a.status, 429);
    assert!(a.body.contains("msgx.http.requests-per-second"), "{a:?}");
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(http(ops, "GET", "/healthz", "").await.0);
    }
    assert_eq!(statuses, [200, 200, 200, 429]);
    // The next second admits requests again.
    wait_until("the next rate window", Duration::from_secs(3), || async {
        post(entry.addr, NO_META).await.status == 400
    })
    .await;
}

#[tokio::test]
async fn the_connection_limit_makes_new_clients_wait_for_a_free_slot() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (ops, _stop) = start_ops(&db, &mb.url, |h| {
        h.max_connections = 1;
        h.header_read_timeout = "1s".parse().unwrap();
    })
    .await;
    let mut hog = slow_client(ops).await;
    let started = Instant::now();
    let waiting =
        tokio::spawn(async move { (http(ops, "GET", "/healthz", "").await, Instant::now()) });
    assert!(closed_within(&mut hog, Duration::from_secs(4)).await);
    let hog_closed = Instant::now();
    let ((status, _), answered) = waiting.await.unwrap();
    assert_eq!(status, 200);
    assert!(
        answered >= hog_closed - Duration::from_millis(50)
            && started.elapsed() >= Duration::from_millis(900),
        "the second client was served only after the first was cut off"
    );
}

#[tokio::test]
async fn the_daemon_serves_the_entry_with_its_token_and_refuses_to_start_without_its_file() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let file = token_file(TOKEN);
    let profile = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    std::fs::write(
        profile.path(),
        "description = \"test\"\n[jobs]\ningest-sweep = \"* * * * * *\"\n",
    )
    .unwrap();
    let cfg = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.daemon.schedule = profile.path().display().to_string();
        c.msgx.http.compat_listen = Some("127.0.0.1:0".into());
        c.msgx.http.compat_token_file = Some(file.path().to_path_buf());
    });
    let daemon = Daemon::spawn(cfg.path(), &[]);
    let limit = Duration::from_secs(30);
    let address = |d: &Daemon| -> Option<SocketAddr> {
        let log = d.output();
        let line = log.lines().find(|l| l.contains("Compat entry POST"))?;
        let at = line.find("listen=")? + "listen=".len();
        line[at..].split_whitespace().next()?.parse().ok()
    };
    wait_until("the compat address in the log", limit, || async {
        address(&daemon).is_some()
    })
    .await;
    let addr = address(&daemon).unwrap();
    assert_eq!(post_with(addr, &NO_AUTH, MSG).await.status, 401);
    let auth = format!("Bearer {TOKEN}");
    assert_eq!(
        post_with(addr, &[("Authorization", &auth)], MSG)
            .await
            .status,
        200
    );
    drop(daemon);

    let missing = db.config_file_with(|c| {
        c.msgx.mailbox.url = mb.url.clone();
        c.msgx.daemon.schedule = profile.path().display().to_string();
        c.msgx.http.compat_listen = Some("127.0.0.1:0".into());
        c.msgx.http.compat_token_file = Some(Path::new("/nonexistent/compat.token").into());
    });
    let mut daemon = Daemon::spawn(missing.path(), &[]);
    assert_eq!(daemon.wait_exit(limit).await, 1, "{}", daemon.output());
    assert!(
        daemon
            .output()
            .contains("msgx.http.compat-token-file /nonexistent/compat.token"),
        "{}",
        daemon.output()
    );
}

/// Refusals and dropped connections leave a visible signal:
/// `msgx_http_responses_total{status}` and
/// `msgx_http_connections_dropped_total{reason}` (docs/metrics.md).
#[tokio::test]
async fn refusals_and_cut_off_connections_are_counted() {
    let metrics = msgx::prometheus::install().expect("recorder");
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let file = token_file(TOKEN);
    let path = file.path().to_path_buf();
    let entry = start(&db, &mb.url, |h| {
        h.compat_token_file = Some(path);
        h.header_read_timeout = "1s".parse().unwrap();
    })
    .await;
    assert_eq!(post_with(entry.addr, &NO_AUTH, MSG).await.status, 401);
    assert_eq!(post_with(entry.addr, &NO_AUTH, MSG).await.status, 401);
    let mut slow = slow_client(entry.addr).await;
    assert!(closed_within(&mut slow, Duration::from_secs(5)).await);
    let page = metrics.render();
    let line = |needle: &str| {
        page.lines()
            .find(|l| l.starts_with(needle))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{needle} not in:\n{page}"))
    };
    assert_eq!(
        line("msgx_http_responses_total{listener=\"compat\",status=\"401\"}"),
        2.0
    );
    assert_eq!(
        line("msgx_http_connections_dropped_total{listener=\"compat\",reason=\"header-timeout\"}"),
        1.0
    );
}

// ------------------------------------------------------ issue 32 item 4 --

/// PROC_STATE of `msg_id`: (STATE, OUTCOME_REASON, IDENTITY_KEY).
async fn outcome(db: &TestDb, msg_id: i64) -> (String, Option<String>, Option<String>) {
    sqlx::query_as("SELECT state, outcome_reason, identity_key FROM proc_state WHERE msg_id = $1")
        .bind(msg_id)
        .fetch_one(&db.pool)
        .await
        .unwrap()
}

/// The id of a 200 answer.
fn accepted_id(a: &Answer) -> i64 {
    assert_eq!(a.status, 200, "{a:?}");
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    v["id"].as_i64().unwrap()
}

/// H4: a message posted through compat holds an identity scoped to its
/// client, so the AODB's own message with the same SNDR/TYPE/STYP/SEQN
/// (and another content), arriving later through the mailbox, is processed
/// and changes the flight (before: SKIPPED `duplicate-of` the compat row).
/// A client's retry of its own message is still a duplicate (§4.4).
#[tokio::test]
async fn a_compat_message_never_takes_an_identity_from_the_aodb() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (_clock, shared) = manual_clock();
    let (runner, _stop) = common::runner(&db, Some(&mb), shared, |_| {});
    let schd = mb.insert(&sis::schd_one_flight(1, 9001)).await;
    let flop = MSG.replace("<FLID>1</FLID>", "<FLID>9001</FLID>");
    let entry = start(&db, &mb.url, |_| {}).await;
    let compat_first = accepted_id(&post(entry.addr, &flop).await);
    let compat_retry = accepted_id(&post(entry.addr, &flop).await);
    let genuine = mb.insert(&flop.replace("01DEC260830", "01DEC260845")).await;
    common::jobs::drain(&runner).await;

    assert_eq!(outcome(&db, schd).await.0, "SUCCEEDED");
    let (first_state, first_reason, first_key) = outcome(&db, compat_first).await;
    assert_eq!((first_state.as_str(), first_reason), ("SUCCEEDED", None));
    assert_eq!(
        first_key.as_deref(),
        Some("compat:MSGX_COMPAT_TOKEN|AODB|FLOP|APPT|77")
    );
    let (retry_state, retry_reason, _) = outcome(&db, compat_retry).await;
    assert_eq!(
        (retry_state.as_str(), retry_reason),
        ("SKIPPED", Some(format!("duplicate-of:{compat_first}"))),
        "a client's own retry is a duplicate"
    );
    let (state, reason, key) = outcome(&db, genuine).await;
    assert_eq!(key.as_deref(), Some("AODB|FLOP|APPT|77"));
    assert_eq!(
        (state.as_str(), reason),
        ("SUCCEEDED", None),
        "the AODB's message is processed and changes the flight, no duplicate of the compat one"
    );
}

/// A browser page cannot post here: a request with an `Origin` header is
/// 403, one whose content type is not XML (a `text/plain` form, none at
/// all) 415; nothing is written, every refusal is recorded.
#[tokio::test]
async fn cross_site_posts_and_non_xml_bodies_are_refused() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let entry = start(&db, &mb.url, |_| {}).await;
    let a = post_with(entry.addr, &[("Origin", "https://evil.example")], MSG).await;
    assert_eq!(a.status, 403, "{a:?}");
    assert!(a.body.contains("Origin"), "{a:?}");
    let a = post_with(entry.addr, &[("Origin", "null")], MSG).await;
    assert_eq!(a.status, 403, "{a:?}");
    // A text/plain "simple request" (no preflight), as a cross-site form
    // would send it, and a body without any content type.
    for content_type in ["text/plain", ""] {
        let mut req = format!(
            "POST /cminmsgs/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Length: {}\r\nConnection: close\r\n",
            MSG.len()
        );
        if !content_type.is_empty() {
            req += &format!("Content-Type: {content_type}\r\n");
        }
        req += "\r\n";
        req += MSG;
        let mut s = TcpStream::connect(entry.addr).await.unwrap();
        let a = exchange(&mut s, req.as_bytes()).await.unwrap();
        assert_eq!(a.status, 415, "{content_type:?}: {a:?}");
    }
    assert_nothing_written(&db, &mb).await;
    let recorded: Vec<(i16, String, Option<String>)> =
        sqlx::query_as("SELECT status, outcome, principal FROM compat_request ORDER BY id")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    let tok = Some(compat::TOKEN_ENV.to_string());
    assert_eq!(
        recorded,
        [
            (403, "REFUSED".into(), None),
            (403, "REFUSED".into(), None),
            (415, "REFUSED".into(), tok.clone()),
            (415, "REFUSED".into(), tok),
        ]
    );
}

/// A private tokens file of `(name, token, senders)`.
fn tokens_file(entries: &[(&str, &str, &[&str])]) -> tempfile::NamedTempFile {
    use sha2::Digest;
    let mut text = String::new();
    for (name, token, senders) in entries {
        let hash = hex::encode(sha2::Sha256::digest(token.as_bytes()));
        let senders: Vec<String> = senders.iter().map(|s| format!("{s:?}")).collect();
        text += &format!(
            "[[token]]\nname = \"{name}\"\nsha256 = \"{hash}\"\nsenders = [{}]\n",
            senders.join(", ")
        );
    }
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), text).unwrap();
    f
}

/// Each token may send only its own senders, and every request is
/// recorded with its client, SNDR, body digest, status and outcome, the
/// written ones with their MSG_ID.
#[tokio::test]
async fn each_token_sends_only_its_senders_and_every_request_is_recorded() {
    use sha2::Digest;
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let bridge = "bridge-token-0123456789";
    let bhs = "bhs-token-0123456789abc";
    let file = tokens_file(&[("bridge", bridge, &["AODB"]), ("bhs", bhs, &["BHS"])]);
    let path = file.path().to_path_buf();
    let entry = try_start(&db, &mb.url, "127.0.0.1:0", None, |h| {
        h.compat_tokens_file = Some(path)
    })
    .await
    .expect("starts with a tokens file");
    let as_bhs = format!("Bearer {bhs}");
    let as_bridge = format!("Bearer {bridge}");
    let from_bhs = MSG.replace("<SNDR>AODB</SNDR>", "<SNDR>BHS</SNDR>");
    let a = post_with(entry.addr, &[("Authorization", &as_bhs)], MSG).await;
    assert_eq!(a.status, 403, "bhs may not send AODB: {a:?}");
    let written = accepted_id(&post_with(entry.addr, &[("Authorization", &as_bridge)], MSG).await);
    let other = accepted_id(&post_with(entry.addr, &[("Authorization", &as_bhs)], &from_bhs).await);
    assert_eq!(
        post(entry.addr, MSG).await.status,
        401,
        "the env token is not configured"
    );
    assert_eq!(post_with(entry.addr, &NO_AUTH, MSG).await.status, 401);
    let a = post_with(entry.addr, &[("Authorization", &as_bridge)], NO_META).await;
    assert_eq!(a.status, 400);

    let rows: Vec<CompatRow> = sqlx::query_as(
        "SELECT status, outcome, principal, sndr, payload_sha256, msg_id, peer \
         FROM compat_request ORDER BY id",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap();
    let digest = |b: &str| Some(hex::encode(sha2::Sha256::digest(b.as_bytes())));
    let s = |v: &str| Some(v.to_string());
    let summary: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r.0,
                r.1.as_str(),
                r.2.clone(),
                r.3.clone(),
                r.4.clone(),
                r.5,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (403, "REFUSED", s("bhs"), s("AODB"), digest(MSG), None),
            (
                200,
                "ACCEPTED",
                s("bridge"),
                s("AODB"),
                digest(MSG),
                Some(written)
            ),
            (
                200,
                "ACCEPTED",
                s("bhs"),
                s("BHS"),
                digest(&from_bhs),
                Some(other)
            ),
            (401, "REFUSED", None, None, None, None),
            (401, "REFUSED", None, None, None, None),
            (400, "REFUSED", s("bridge"), None, digest(NO_META), None),
        ]
    );
    assert!(
        rows.iter().all(|r| r.6.starts_with("127.0.0.1:")),
        "{rows:?}"
    );
}

/// A COMPAT_REQUEST row: (status, outcome, principal, sndr,
/// payload_sha256, msg_id, peer).
type CompatRow = (
    i16,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
    String,
);

/// When the request cannot be recorded in PostgreSQL, the mailbox row is
/// rolled back: no compat-written row is ever without its record (the pump
/// could not scope its identity).
#[tokio::test]
async fn a_request_that_cannot_be_recorded_writes_no_mailbox_row() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    db.fail_inserts("compat_request", "pg refuses (test)").await;
    let entry = start(&db, &mb.url, |_| {}).await;
    let a = post(entry.addr, MSG).await;
    assert_eq!(a.status, 503, "{a:?}");
    assert!(!a.body.contains("pg refuses"), "{a:?}");
    assert_nothing_written(&db, &mb).await;
}

/// Authentication on every address: loopback without any is refused at
/// start, unless the development mode is asked for, which only loopback
/// may, and which says so in the log.
#[tokio::test]
async fn loopback_needs_authentication_unless_the_development_mode_is_named() {
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let err = try_start(&db, &mb.url, "127.0.0.1:0", None, |_| {})
        .await
        .err()
        .expect("refused");
    assert!(matches!(err, CompatError::Unauthenticated(_)), "{err}");
    let err = try_start(&db, &mb.url, "0.0.0.0:0", None, |h| {
        h.compat_development_mode = true
    })
    .await
    .err()
    .expect("refused off loopback");
    assert!(
        matches!(err, CompatError::DevelopmentOffLoopback(_)),
        "{err}"
    );
    let (logs, guard) = common::capture_logs();
    let entry = try_start(&db, &mb.url, "127.0.0.1:0", None, |h| {
        h.compat_development_mode = true
    })
    .await
    .expect("the development mode starts on loopback");
    drop(guard);
    assert!(logs.text().contains("DEVELOPMENT MODE"), "{}", logs.text());
    let id = accepted_id(&post_with(entry.addr, &NO_AUTH, MSG).await);
    let principal: Option<String> =
        sqlx::query_scalar("SELECT principal FROM compat_request WHERE msg_id = $1")
            .bind(id)
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(principal.as_deref(), Some(compat::DEVELOPMENT_CLIENT));
    // A token file others may read is refused, as the console's users file.
    use std::os::unix::fs::PermissionsExt;
    let file = token_file(TOKEN);
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let path = file.path().to_path_buf();
    let err = try_start(&db, &mb.url, "127.0.0.1:0", None, |h| {
        h.compat_token_file = Some(path)
    })
    .await
    .err()
    .expect("refused");
    assert!(err.to_string().contains("mode 0644"), "{err}");
}

/// `retention` deletes compat records past `compat-record-retention`, but
/// keeps one whose mailbox row has not bound its (scoped) identity yet: the
/// pump still needs it.
#[tokio::test]
async fn retention_keeps_the_records_a_message_still_needs_for_its_identity() {
    use msgx::clock::Clock as _;
    use msgx::store::pg::compat_request::{self, NewRequest, Outcome};
    let (db, mb) = (TestDb::migrated().await, TestMailbox::new().await);
    let (clock, shared) = manual_clock();
    let (runner, _stop) = common::runner(&db, Some(&mb), shared, |_| {});
    let old = clock.now() - chrono::Duration::days(91);
    let r = NewRequest {
        peer: "127.0.0.1:1".into(),
        principal: Some("bridge"),
        ..Default::default()
    };
    let refused = compat_request::record(&db.pool, old, &r, 401, Outcome::Refused)
        .await
        .unwrap();
    let bound = compat_request::begin_write(&db.pool, old, &r, 101)
        .await
        .unwrap();
    let unbound = compat_request::begin_write(&db.pool, old, &r, 102)
        .await
        .unwrap();
    let recent = compat_request::record(&db.pool, clock.now(), &r, 401, Outcome::Refused)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO proc_state (msg_id, state, received_at, enqueued_at, updated_at, identity_key) \
         VALUES (101, 'FAILED', $1, $1, $1, 'compat:bridge|AODB|FLOP|APPT|1'), \
                (102, 'PENDING', $1, $1, $1, NULL)",
    )
    .bind(old)
    .execute(&db.pool)
    .await
    .unwrap();
    let s = common::jobs::run_ok(&runner, "retention").await;
    assert_eq!(
        common::jobs::detail(&s, "compat_request_deleted"),
        2,
        "{s:?}"
    );
    let left: Vec<i64> = sqlx::query_scalar("SELECT id FROM compat_request ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .unwrap();
    assert_eq!(left, [unbound, recent], "deleted: {refused}, {bound}");
}
