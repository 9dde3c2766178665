//! `msgx --version` and `msgx version --json` through the binary: every build
//! fact is present and non-empty, and the two agree.

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
