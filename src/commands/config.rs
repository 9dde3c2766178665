//! `msgx config check|show|docs`: validate the effective configuration,
//! print it with its secrets masked, or print the key reference generated
//! from the code.

use super::target::{self, Needs};
use crate::config::Loaded;
use crate::exit::Exit;
use crate::store::pg;
use std::path::Path;

/// `msgx config check`: exit 2 naming the key and rule on failure.
pub fn check(loaded: &Loaded) -> Exit {
    let source = loaded
        .source
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "built-in defaults".into());
    // Build (without connecting) every client the config describes, so an
    // unusable TLS file or option is refused here too.
    let m = &loaded.config.msgx;
    let mut unusable = Vec::new();
    if !m.postgres.url.is_empty()
        && let Err(e) = pg::writer_targets(&m.postgres.url)
    {
        unusable.push(format!("msgx.postgres.url: {e}"));
    }
    if let Err(e) = crate::store::mailbox::tls::ssl_opts(&m.mailbox.tls) {
        unusable.push(format!("msgx.mailbox.tls: {e}"));
    }
    if let Err(issues) = crate::kafka::check_clients(&m.kafka) {
        unusable.extend(issues.iter().map(ToString::to_string));
    }
    // The console's files as the daemon would read them: a users file that
    // would keep the console from starting fails here, not first in a running
    // daemon.
    if let Err(e) = crate::console::preflight(&loaded.config) {
        unusable.push(e.to_string());
    }
    // The ACRIS API's tokens and TLS files likewise.
    if let Err(e) = crate::acris::preflight(&loaded.config) {
        unusable.push(e.to_string());
    }
    if !unusable.is_empty() {
        eprintln!("msgx: config is invalid:");
        for u in &unusable {
            eprintln!("  - {u}");
        }
        return Exit::Config;
    }
    println!("config OK ({source})");
    for d in loaded.config.deprecations() {
        eprintln!("warning: {d}");
    }
    for unset in target::missing(&loaded.config, Needs::BOTH) {
        eprintln!("note: {unset} is not set; commands that need it refuse until it is");
    }
    Exit::Ok
}

/// `msgx config show`.
pub fn show(loaded: &Loaded) -> Exit {
    print!("{}", loaded.config.to_masked_toml());
    Exit::Ok
}

/// `msgx config docs [--write FILE | --check FILE]`: the key reference
/// (`config::docs`) to stdout, into FILE's generated block, or compared
/// with it (exit 1 when they differ).
pub fn docs(write: Option<&Path>, check: Option<&Path>) -> Exit {
    let table = crate::config::docs::markdown();
    let Some(path) = write.or(check) else {
        print!("{table}");
        return Exit::Ok;
    };
    let document = match std::fs::read_to_string(path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("msgx config docs: cannot read {}: {e}", path.display());
            return Exit::Failure;
        }
    };
    let updated = match crate::config::docs::replace_generated(&document, &table) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("msgx config docs: {}: {e}", path.display());
            return Exit::Failure;
        }
    };
    if check.is_some() {
        if updated == document {
            println!("{}: the key table matches the code", path.display());
            return Exit::Ok;
        }
        eprintln!(
            "msgx config docs: {}: the key table differs from the code; regenerate it with \
             `msgx config docs --write {}`",
            path.display(),
            path.display()
        );
        return Exit::Failure;
    }
    if updated == document {
        println!("{}: unchanged", path.display());
        return Exit::Ok;
    }
    match std::fs::write(path, updated) {
        Ok(()) => {
            println!("{}: key table written", path.display());
            Exit::Ok
        }
        Err(e) => {
            eprintln!("msgx config docs: cannot write {}: {e}", path.display());
            Exit::Failure
        }
    }
}
