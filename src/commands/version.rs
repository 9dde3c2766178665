//! `msgx version`: what this binary is (`crate::build_info`), as the lines
//! `msgx --version` prints or as one JSON object.

use crate::build_info;
use crate::exit::Exit;
use std::io::Write;

/// Writes the build facts to `out`; a failed write is a failure.
pub fn run(json: bool, out: &mut impl Write) -> Exit {
    let info = build_info::get();
    let written = if json {
        serde_json::to_string_pretty(info)
            .map_err(std::io::Error::other)
            .and_then(|text| writeln!(out, "{text}"))
    } else {
        writeln!(out, "msgx {}", info.long_text())
    };
    match written {
        Ok(()) => Exit::Ok,
        Err(e) => {
            eprintln!("msgx version: cannot write: {e}");
            Exit::Failure
        }
    }
}
