//! `msgx decode` through the binary: exit codes 0 / 5 / 6 and JSON output
//! (issue 3, item 7). Uses the project's own samples only.

use crate::common;

use common::*;
use std::process::Command;

fn decode(args: &[&str]) -> std::process::Output {
    Command::new(msgx_bin())
        .arg("decode")
        .args(args)
        .output()
        .expect("run msgx decode")
}

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sis");

#[test]
fn well_formed_and_unsupported_messages_exit_0() {
    let out = decode(&[
        &format!("{DIR}/022-FLOP-DELY-delays.xml"),
        &format!("{DIR}/025-FLOP-ESTT-unsupported.xml"),
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out));
}

#[test]
fn json_output_is_one_object_per_input() {
    let out = decode(&["--json", &format!("{DIR}/003-SCHD-DNLD-three-flights.xml")]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["message"]["meta"]["msg_type"], "SCHD");
}

#[test]
fn malformed_input_exits_5_with_the_reason() {
    let bad = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(bad.path(), "<MSG><META><SNDR>AODB</SNDR></META>").unwrap();
    let out = decode(&[
        bad.path().to_str().unwrap(),
        &format!("{DIR}/022-FLOP-DELY-delays.xml"),
    ]);
    assert_eq!(code(&out), 5, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("MALFORMED"),
        "{}",
        text(&out)
    );
}

#[test]
fn codec_errors_exit_6() {
    let odd = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        odd.path(),
        "<MSG><META><SNDR>AODB</SNDR><SEQN>1</SEQN><TYPE>FLOP</TYPE><STYP>APPT</STYP></META>\
         <FLOP><FLID>1</FLID><APPT>2026-12-01T08:35</APPT></FLOP></MSG>",
    )
    .unwrap();
    let out = decode(&[odd.path().to_str().unwrap()]);
    assert_eq!(code(&out), 6, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("CODEC_ERROR"),
        "{}",
        text(&out)
    );
}
