//! `msgx completions SHELL` and `msgx man-pages DIR`: shell completions and
//! man pages, generated from the command line's own definition (the `clap`
//! command the CLI hands over), so they never disagree with `msgx --help`.
//! The Debian package ships both (scripts/package.sh).

use crate::exit::Exit;
use std::io::Write;
use std::path::Path;

/// Writes the completion script for `shell` to `out`.
pub fn completions(
    mut cmd: clap::Command,
    shell: clap_complete::Shell,
    out: &mut impl Write,
) -> Exit {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "msgx", &mut script);
    match out.write_all(&script) {
        Ok(()) => Exit::Ok,
        Err(e) => {
            eprintln!("msgx completions: cannot write: {e}");
            Exit::Failure
        }
    }
}

/// Writes `msgx.1` and one page a visible subcommand (`msgx-status.1`, …)
/// into `dir`, creating it.
pub fn man_pages(cmd: clap::Command, dir: &Path) -> Exit {
    let written = std::fs::create_dir_all(dir).and_then(|()| clap_mangen::generate_to(cmd, dir));
    match written {
        Ok(()) => Exit::Ok,
        Err(e) => {
            eprintln!("msgx man-pages: cannot write to {}: {e}", dir.display());
            Exit::Failure
        }
    }
}
