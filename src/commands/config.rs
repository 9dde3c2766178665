//! `msgx config check|show|docs` (issue 2, item 5; issue 16, item 3):
//! validate the effective configuration, print it with its secrets masked,
//! or print the key reference generated from the code.

use super::exit;
use super::target::{self, Needs};
use crate::config::Loaded;
use crate::store::pg;
use std::path::Path;

/// `msgx config check`: exit 2 naming the key and rule on failure.
pub fn check(loaded: &Loaded) -> i32 {
    let source = loaded
        .source
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "built-in defaults".into());
    // Build (without connecting) every client the config describes, so an
    // unusable TLS file or option is refused here too (issue 16, item 3).
    let m = &loaded.config.msgx;
    let mut unusable = Vec::new();
    if !m.postgres.url.is_empty()
        && let Err(e) = pg::connect_options(&m.postgres.url)
    {
        unusable.push(format!("msgx.postgres.url: {e}"));
    }
    if let Err(e) = crate::store::mailbox::tls::ssl_opts(&m.mailbox.tls) {
        unusable.push(format!("msgx.mailbox.tls: {e}"));
    }
    if let Err(issues) = crate::kafka::check_clients(&m.kafka) {
        unusable.extend(issues.iter().map(ToString::to_string));
    }
    // The console's files as the daemon would read them (issue 32 item 8,
    // M8): a users file that would keep the console from starting fails
    // here, not first in a running daemon.
    if let Err(e) = crate::console::preflight(&loaded.config) {
        unusable.push(e.to_string());
    }
    if !unusable.is_empty() {
        eprintln!("msgx: config is invalid:");
        for u in &unusable {
            eprintln!("  - {u}");
        }
        return exit::CONFIG;
    }
    println!("config OK ({source})");
    for d in loaded.config.deprecations() {
        eprintln!("warning: {d}");
    }
    for unset in target::missing(&loaded.config, Needs::BOTH) {
        eprintln!("note: {unset} is not set; commands that need it refuse until it is");
    }
    exit::OK
}

/// `msgx config show`.
pub fn show(loaded: &Loaded) -> i32 {
    print!("{}", loaded.config.to_masked_toml());
    exit::OK
}

/// `msgx config docs [--write FILE | --check FILE]`: the key reference
/// (`config::docs`) to stdout, into FILE's generated block, or compared
/// with it (exit 1 when they differ).
pub fn docs(write: Option<&Path>, check: Option<&Path>) -> i32 {
    let table = crate::config::docs::markdown();
    let Some(path) = write.or(check) else {
        print!("{table}");
        return exit::OK;
    };
    let document = match std::fs::read_to_string(path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("msgx config docs: cannot read {}: {e}", path.display());
            return exit::FAILURE;
        }
    };
    let updated = match crate::config::docs::replace_generated(&document, &table) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("msgx config docs: {}: {e}", path.display());
            return exit::FAILURE;
        }
    };
    if check.is_some() {
        if updated == document {
            println!("{}: the key table matches the code", path.display());
            return exit::OK;
        }
        eprintln!(
            "msgx config docs: {}: the key table differs from the code; regenerate it with \
             `msgx config docs --write {}`",
            path.display(),
            path.display()
        );
        return exit::FAILURE;
    }
    if updated == document {
        println!("{}: unchanged", path.display());
        return exit::OK;
    }
    match std::fs::write(path, updated) {
        Ok(()) => {
            println!("{}: key table written", path.display());
            exit::OK
        }
        Err(e) => {
            eprintln!("msgx config docs: cannot write {}: {e}", path.display());
            exit::FAILURE
        }
    }
}
