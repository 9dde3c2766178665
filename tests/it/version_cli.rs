//! `msgx --version`, `msgx version --json`, `msgx completions` and
//! `msgx man-pages` through the binary: every build fact is present and
//! non-empty, the two forms agree, and the generated files describe the CLI.

use crate::common;

use common::*;
use std::process::Command;

fn msgx_args(args: &[&str]) -> std::process::Output {
    Command::new(msgx_bin())
        .args(args)
        .output()
        .expect("run msgx")
}

const FIELDS: [&str; 6] = [
    "version",
    "commit",
    "build_date",
    "target",
    "rustc",
    "librdkafka",
];

#[test]
fn version_json_names_every_build_fact() {
    let out = msgx_args(&["version", "--json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for field in FIELDS {
        let value = v[field].as_str().unwrap_or_default();
        assert!(!value.trim().is_empty(), "{field} is empty: {v}");
    }
    assert!(v["features"].is_array(), "{v}");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["commit"], msgx::build_info::COMMIT);
    assert_ne!(v["build_date"], "unknown", "{v}");
    assert!(v["rustc"].as_str().unwrap().starts_with("rustc "), "{v}");
}

#[test]
fn dash_dash_version_prints_the_same_facts_without_a_config() {
    let json = msgx_args(&["version", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    // No config file nor database is needed: a fresh directory and no env.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(msgx_bin())
        .arg("--version")
        .current_dir(dir.path())
        .env_remove("MSGX_CONFIG")
        .output()
        .expect("run msgx --version");
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.starts_with(&format!("msgx {}\n", env!("CARGO_PKG_VERSION"))),
        "{shown}"
    );
    for field in FIELDS {
        assert!(
            shown.contains(v[field].as_str().unwrap()),
            "{field} missing:\n{shown}"
        );
    }
    let plain = msgx_args(&["version"]);
    assert_eq!(code(&plain), 0, "{}", text(&plain));
    assert_eq!(String::from_utf8_lossy(&plain.stdout), shown);
}

#[test]
fn completions_and_man_pages_describe_the_cli() {
    let bash = msgx_args(&["completions", "bash"]);
    assert_eq!(code(&bash), 0, "{}", text(&bash));
    let script = String::from_utf8_lossy(&bash.stdout);
    assert!(
        script.contains("complete -F") && script.contains("doctor"),
        "{script}"
    );

    let dir = tempfile::tempdir().unwrap();
    let out = msgx_args(&["man-pages", dir.path().to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let page = std::fs::read_to_string(dir.path().join("msgx.1")).expect("msgx.1");
    assert!(page.contains(".TH msgx 1"), "{page}");
    assert!(dir.path().join("msgx-doctor.1").exists());
    // Hidden commands get no page.
    assert!(!dir.path().join("msgx-man-pages.1").exists());
}
