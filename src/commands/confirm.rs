//! Confirmation of bulk operator actions: `replay
//! --error-class`, `backfill reopen --all` and `events resend` of more than
//! one ID change many rows at once, so they need a `--reason` (recorded) and
//! either `--yes` or the operator typing the number of rows at a terminal.
//! A script (`--json`, or no terminal on stdin) must pass `--yes`: msgx never
//! waits for an answer nobody can give.

use super::target::Target;
use std::io::{BufRead, IsTerminal, Write};

/// The options every reasoned bulk command takes (`skip`, `events
/// republish`): flattened into its arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct BulkArgs {
    /// Why (required; recorded with the action).
    #[arg(long, required = true)]
    pub reason: String,
    /// Confirm a bulk action without being asked.
    #[arg(long)]
    pub yes: bool,
    /// Show what it would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Who (default: the OS user).
    #[arg(long)]
    pub actor: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// What the operator asked for.
#[derive(Debug, Clone, Copy)]
pub struct Bulk<'a> {
    /// The action in words, e.g. `replay` or `reopen the backfill of`.
    pub what: &'a str,
    /// Rows it would change.
    pub rows: usize,
    pub reason: Option<&'a str>,
    pub yes: bool,
    pub json: bool,
}

/// Why a bulk action did not go ahead (exit 2, nothing changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("--reason is required for a bulk action (it is recorded with the action)")]
    NoReason,
    #[error(
        "this would {what} {rows} row(s) on {target}; pass --yes to confirm (no terminal to ask on)"
    )]
    NeedsYes {
        what: String,
        rows: usize,
        target: String,
    },
    #[error("not confirmed; nothing was changed")]
    NotConfirmed,
}

/// Goes ahead (`Ok`) or says why not. Asks on stderr and reads stdin only
/// when stdin is a terminal and the output is not `--json`.
pub fn bulk(b: Bulk<'_>, target: &Target) -> Result<(), Refused> {
    if b.reason.is_none_or(|r| r.trim().is_empty()) {
        return Err(Refused::NoReason);
    }
    if b.yes || b.rows == 0 {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if b.json || !stdin.is_terminal() {
        return Err(Refused::NeedsYes {
            what: b.what.into(),
            rows: b.rows,
            target: target.line(),
        });
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(
        err,
        "This will {} {} row(s) on {}.\nType {} to confirm: ",
        b.what,
        b.rows,
        target.line(),
        b.rows
    );
    let _ = err.flush();
    let mut answer = String::new();
    match stdin.lock().read_line(&mut answer) {
        Ok(_) if answer.trim() == b.rows.to_string() => Ok(()),
        _ => Err(Refused::NotConfirmed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            postgres: Some("db:5432/msgx".into()),
            mailbox: None,
        }
    }

    #[test]
    fn a_reason_is_always_required() {
        let b = Bulk {
            what: "replay",
            rows: 3,
            reason: Some("  "),
            yes: true,
            json: false,
        };
        assert_eq!(bulk(b, &target()), Err(Refused::NoReason));
    }

    #[test]
    fn json_without_yes_is_refused_naming_the_target() {
        let b = Bulk {
            what: "replay",
            rows: 3,
            reason: Some("fixed"),
            yes: false,
            json: true,
        };
        let e = bulk(b, &target()).unwrap_err();
        assert!(e.to_string().contains("db:5432/msgx") && e.to_string().contains("--yes"));
        assert_eq!(bulk(Bulk { yes: true, ..b }, &target()), Ok(()));
    }
}
