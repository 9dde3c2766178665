//! The startup self-check through the binary (issue 2, item 2): each broken
//! rule exits 2 and names its key.

use crate::common;

use common::*;
use std::io::Write;

fn check_toml(toml_text: &str) -> std::process::Output {
    let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    f.write_all(toml_text.as_bytes()).unwrap();
    msgx(f.path(), &["config", "check"])
}

fn assert_rejected(toml_text: &str, key: &str) {
    let out = check_toml(toml_text);
    assert_eq!(code(&out), 2, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(key), "stderr must name {key}: {err}");
}

#[test]
fn a_valid_file_passes() {
    let out = check_toml("[msgx.pipeline]\nclaim-batch = 100\n");
    assert_eq!(code(&out), 0, "{}", text(&out));
}

/// Issue 17, item 6: keys that never did anything are still accepted for one
/// release, with a warning; §9.3's HST retention rule is enforced.
#[test]
fn dead_keys_warn_and_the_hst_retention_rule_is_enforced() {
    let out = check_toml(
        "[msgx.pipeline]\npoll-interval = \"1s\"\n[msgx.schd]\nflush-interval = \"2s\"\n",
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: msgx.schd.flush-interval: deprecated and ignored"),
        "{err}"
    );
    // Issue 20: poll-interval is read again (the adaptive poll cadence).
    assert!(!err.contains("msgx.pipeline.poll-interval"), "{err}");
    assert_rejected(
        "[msgx.archive]\nhst-retention = \"10d\"\n",
        "msgx.archive.hst-retention",
    );
    assert_rejected(
        "[msgx.mailbox]\nstatement-timeout = \"1m\"\n",
        "msgx.mailbox.statement-timeout",
    );
}

/// Issue 16, item 5: no built-in database target. A command that needs one
/// refuses with exit 2 and says what to set; `config check` notes it.
#[test]
fn without_urls_commands_refuse_and_say_what_to_set() {
    let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    f.write_all(b"[msgx.log]\ndir = \"\"\n").unwrap();
    for args in [
        &["status"][..],
        &["run", "retention"],
        &["migrate"],
        &["replay", "1"],
    ] {
        let out = msgx(f.path(), args);
        assert_eq!(code(&out), 2, "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("msgx.postgres.url") && err.contains("MSGX_DATABASE_URL"),
            "{err}"
        );
    }
    let out = msgx(f.path(), &["run", "ingest-sweep"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("MSGX_MAILBOX_URL"));
    let out = msgx(f.path(), &["config", "check"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("msgx.postgres.url"));
}

#[test]
fn retry_tiers_must_be_max_attempts_minus_one() {
    assert_rejected(
        "[msgx.pipeline.retry.codec-error]\nmax-attempts = 5\nbackoff = [\"10s\"]\n",
        "msgx.pipeline.retry.codec-error.backoff",
    );
}

#[test]
fn infra_retries_may_not_be_limited_and_the_old_keys_are_refused() {
    assert_rejected(
        "[msgx.pipeline.retry.infra]\nmax-attempts = 5\nbackoff = [\"5s\", \"1m\", \"1m\", \"1m\"]\n",
        "msgx.pipeline.retry.infra.max-attempts",
    );
    assert_rejected(
        "[msgx.pipeline]\nmax-attempts = 5\nretry-backoff = [\"10s\", \"1m\", \"5m\", \"15m\"]\n",
        "msgx.pipeline.retry-backoff",
    );
}

#[test]
fn delivery_retry_tiers_must_be_dispatch_max_attempts_minus_one() {
    // Issue 17 item 3: delivery has its own tiers, checked as the pipeline's (§9.1).
    assert_rejected(
        "[msgx.dispatch]\nmax-attempts = 4\nretry-backoff = [\"10s\", \"1m\"]\n",
        "msgx.dispatch.retry-backoff",
    );
}

#[test]
fn r_must_not_exceed_r_keep() {
    assert_rejected(
        "[msgx.pipeline]\nbackfill-deadline = \"10d\"\n",
        "msgx.pipeline.backfill-deadline",
    );
}

#[test]
fn dedup_memory_must_cover_r_keep() {
    assert_rejected(
        "[msgx.archive]\ndedup-memory = \"1d\"\n",
        "msgx.archive.dedup-memory",
    );
}

#[test]
fn durations_must_be_positive() {
    assert_rejected("[msgx.request]\nexpiry = \"0s\"\n", "msgx.request.expiry");
}

#[test]
fn timezone_must_exist() {
    assert_rejected(
        "[msgx.airport]\ntimezone = \"Asia/Atlantis\"\n",
        "msgx.airport.timezone",
    );
}

#[test]
fn every_cron_expression_must_parse() {
    let mut profile = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    profile
        .write_all(b"[jobs]\nretention = \"every tuesday\"\n")
        .unwrap();
    let path = profile.path().display().to_string();
    assert_rejected(
        &format!("[msgx.daemon]\nschedule = \"{path}\"\n"),
        "msgx.daemon.schedule",
    );
}

#[test]
fn unknown_keys_and_bad_values_are_config_errors() {
    assert_rejected("[msgx.pipeline]\nclaim-bach = 1\n", "claim-bach");
    assert_rejected(
        "[msgx.schd]\nabsent-field-policy = \"drop\"\n",
        "absent-field-policy",
    );
}

#[test]
fn show_masks_secrets_and_env_overrides_urls() {
    let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    f.write_all(b"[msgx.postgres]\nurl = \"postgres://u:topsecret@h/db\"\n")
        .unwrap();
    let out = std::process::Command::new(msgx_bin())
        .args([
            "--config",
            &f.path().display().to_string(),
            "config",
            "show",
        ])
        .env("MSGX_MAILBOX_URL", "mysql://m:hidden@mb/x")
        .env_remove("MSGX_DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("postgres://u:****@h/db"), "{shown}");
    assert!(
        shown.contains("mysql://m:****@mb/x"),
        "env override applied and masked: {shown}"
    );
    assert!(!shown.contains("topsecret") && !shown.contains("hidden"));
}

/// `config check` builds every client without connecting (issue 16, item 3):
/// a CA file that does not exist is refused there, naming the key.
#[test]
fn config_check_refuses_an_unusable_tls_file() {
    assert_rejected(
        "[msgx.postgres]\nurl = \"postgres://msgx@127.0.0.1/msgx?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem\"\n",
        "msgx.postgres.url",
    );
    assert_rejected(
        "[msgx.mailbox.tls]\nmode = \"verify-identity\"\nca-file = \"/nonexistent/ca.pem\"\n",
        "msgx.mailbox.tls",
    );
}

/// Issue 32 item 9 (L3): sqlx logs a URL parameter it does not know with its
/// value (`sslpassword=KEYPASS`) and connects without it. `config check`
/// refuses the URL naming only the parameter, and so does every connect,
/// before sqlx sees the URL: the value appears in no output and no log line.
#[test]
fn an_unknown_postgres_url_parameter_is_refused_and_its_value_never_shown() {
    let url = "postgres://msgx:msgx@127.0.0.1:5432/msgx?sslmode=disable&sslpassword=KEYPASS";
    let out = check_toml(&format!("[msgx.postgres]\nurl = \"{url}\"\n"));
    assert_eq!(code(&out), 2, "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains("msgx.postgres.url") && all.contains("sslpassword"),
        "{all}"
    );
    assert!(!all.contains("KEYPASS"), "{all}");

    let (logs, _guard) = capture_logs();
    let refused = msgx::store::pg::connect_options(url);
    assert!(
        matches!(
            &refused,
            Err(msgx::store::pg::StoreError::UnknownUrlParameters(k)) if k == "sslpassword"
        ),
        "{refused:?}"
    );
    let said = format!("{}{:?}", logs.text(), refused.err());
    assert!(!said.contains("KEYPASS"), "{said}");
}

/// `msgx config docs` needs no usable config (the table comes from the
/// code): it prints the key table, `--check` accepts docs/configuration.md
/// and refuses a copy whose table drifted, naming the command that
/// regenerates it, and `--write` repairs the copy in place.
#[test]
fn config_docs_prints_checks_and_rewrites_the_key_table() {
    let mut broken = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    broken
        .write_all(b"[msgx.pipeline]\nclaim-batch = 0\n")
        .unwrap();
    let out = msgx(broken.path(), &["config", "docs"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(table, msgx::config::docs::markdown());
    assert!(table.contains("| `msgx.pipeline.claim-batch` | integer | `500` |"));

    let document = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md");
    let document_arg = document.display().to_string();
    let out = msgx(broken.path(), &["config", "docs", "--check", &document_arg]);
    assert_eq!(code(&out), 0, "{}", text(&out));

    let original = std::fs::read_to_string(&document).unwrap();
    let drifted = original.replace(
        "| `msgx.pipeline.claim-batch` | integer | `500` |",
        "| `msgx.pipeline.claim-batch` | integer | `501` |",
    );
    assert_ne!(drifted, original);
    let mut copy = tempfile::Builder::new().suffix(".md").tempfile().unwrap();
    copy.write_all(drifted.as_bytes()).unwrap();
    let copy_arg = copy.path().display().to_string();
    let out = msgx(broken.path(), &["config", "docs", "--check", &copy_arg]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("msgx config docs --write"),
        "{}",
        text(&out)
    );
    let out = msgx(broken.path(), &["config", "docs", "--write", &copy_arg]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(std::fs::read_to_string(copy.path()).unwrap(), original);
}
