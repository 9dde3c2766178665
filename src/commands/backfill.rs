//! `msgx backfill abandoned|reopen|reconcile` and `msgx replay` (design
//! §6.2, §9.1). Exit codes: 0 done (or nothing to do), 1 runtime
//! failure, 2 refused (nothing changed: a message is not eligible, `--confirm`
//! missing, `--force` without `--reason`), 4 the lifecycle gate stayed busy.

use crate::backfill::ops::{self, OpsError, OpsOutcome, Target};
use crate::backfill::replay::{
    ORDERING_WARNING, ReplayError, ReplayRequest, ReplayService, Selection,
};
use crate::backfill::{Refusal, actor, gate};
use crate::clock::SharedClock;
use crate::commands::confirm;
use crate::commands::target::{Needs, Target as WriteTarget};
use crate::config::Config;
use crate::domain::ErrorClass;
use crate::exit::Exit;
use clap::{Args, Subcommand};
use std::io::Write;

/// `msgx backfill …`.
#[derive(Debug, Subcommand)]
pub enum BackfillAction {
    /// List abandoned backfills (marks NOT written) for reconciliation.
    Abandoned {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Clear the abandonment so the scan retries the mark (recorded).
    Reopen {
        /// MSG_IDs to reopen.
        #[arg(
            value_name = "MSG_ID",
            required_unless_present = "all",
            conflicts_with = "all"
        )]
        ids: Vec<i64>,
        /// Every abandoned row (needs --reason, and --yes or a typed confirmation).
        #[arg(long, requires = "reason")]
        all: bool,
        /// Why (recorded).
        #[arg(long)]
        reason: Option<String>,
        /// Confirm a bulk reopen (--all) without being asked.
        #[arg(long)]
        yes: bool,
        /// Who (default: the OS user).
        #[arg(long)]
        actor: Option<String>,
    },
    /// Record that abandoned rows were reconciled with the mailbox owner (recorded).
    Reconcile {
        /// MSG_IDs (abandoned rows).
        #[arg(value_name = "MSG_ID", required = true)]
        ids: Vec<i64>,
        /// Confirm the reconciliation; without it nothing is recorded.
        #[arg(long)]
        confirm: bool,
        /// Note kept with the rows and the action.
        #[arg(long)]
        note: Option<String>,
        /// Who (default: the OS user).
        #[arg(long)]
        actor: Option<String>,
    },
}

/// `msgx replay …`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// MSG_IDs to replay.
    #[arg(
        value_name = "MSG_ID",
        required_unless_present = "error_class",
        conflicts_with = "error_class"
    )]
    pub ids: Vec<i64>,
    /// Every FAILED/DEAD message of this error class (unless --dry-run:
    /// needs --reason, and --yes or a typed confirmation).
    #[arg(long, value_name = "CLASS")]
    pub error_class: Option<String>,
    /// Confirm a bulk replay (--error-class) without being asked.
    #[arg(long)]
    pub yes: bool,
    /// Show what would be replayed; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Allow MALFORMED / PROTOCOL (needs --reason; recorded).
    #[arg(long, requires = "reason")]
    pub force: bool,
    /// Why (required with --force; recorded).
    #[arg(long)]
    pub reason: Option<String>,
    /// Who (default: the OS user).
    #[arg(long)]
    pub actor: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Where these commands write: msgx's PostgreSQL.
fn writes_on(config: &Config) -> WriteTarget {
    WriteTarget::of(config, Needs::POSTGRES)
}

fn print_refusals(what: &str, refused: &[Refusal]) {
    eprintln!("msgx {what}: refused; nothing was changed:");
    for r in refused {
        if r.msg_id == 0 {
            eprintln!("  {}", r.why);
        } else {
            eprintln!("  {}: {}", r.msg_id, r.why);
        }
    }
}

fn ids_text(ids: &[i64]) -> String {
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")
}

/// Runs `msgx backfill <action>`.
pub async fn run(config: &Config, clock: SharedClock, action: BackfillAction) -> Exit {
    let pool = match crate::commands::connect_current(config, "backfill").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let now = clock.now();
    match action {
        BackfillAction::Abandoned { json } => match ops::abandoned(&pool).await {
            Ok(rows) if json => {
                println!("{}", serde_json::to_string(&rows).unwrap_or_default());
                Exit::Ok
            }
            Ok(rows) => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "{:>12}  {:<9} {:<11} {:<18} {:<25} {:>8}  {:<25} LAST ERROR",
                    "MSG_ID", "STATE", "CLASS", "REASON", "ABANDONED AT", "ATTEMPTS", "RECONCILED"
                );
                for r in &rows {
                    let _ = writeln!(
                        out,
                        "{:>12}  {:<9} {:<11} {:<18} {:<25} {:>8}  {:<25} {}",
                        r.msg_id,
                        r.state,
                        r.error_class.as_deref().unwrap_or("-"),
                        r.backfill_abandoned_reason.as_deref().unwrap_or("-"),
                        r.backfill_abandoned_at
                            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
                            .unwrap_or_default(),
                        r.backfill_attempts,
                        r.backfill_reconciled_at
                            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
                            .unwrap_or_else(|| "no".into()),
                        r.backfill_last_error.as_deref().unwrap_or("")
                    );
                }
                let _ = writeln!(out, "{} abandoned row(s)", rows.len());
                Exit::Ok
            }
            Err(e) => {
                eprintln!("msgx backfill abandoned: {e}");
                Exit::Failure
            }
        },
        BackfillAction::Reopen {
            ids,
            all,
            reason,
            yes,
            actor: who,
        } => {
            if all {
                let rows = match ops::abandoned(&pool).await {
                    Ok(rows) => rows.len(),
                    Err(e) => {
                        eprintln!("msgx backfill reopen: {e}");
                        return Exit::Failure;
                    }
                };
                let ask = confirm::Bulk {
                    what: "reopen the abandoned backfill of",
                    rows,
                    reason: reason.as_deref(),
                    yes,
                    json: false,
                };
                if let Err(e) = confirm::bulk(ask, &writes_on(config)) {
                    eprintln!("msgx backfill reopen: {e}");
                    return Exit::Config;
                }
            }
            let target = if all { Target::All } else { Target::Ids(ids) };
            let who = actor(who.as_deref());
            report_ops(
                "backfill reopen",
                "reopened",
                ops::reopen(&pool, now, &target, reason.as_deref(), &who).await,
            )
        }
        BackfillAction::Reconcile {
            ids,
            confirm,
            note,
            actor: who,
        } => {
            if !confirm {
                eprintln!(
                    "msgx backfill reconcile: nothing recorded; reconciling {} states that the \
                     mailbox owner has checked these rows (their marks are NOT written). \
                     Add --confirm to record it.",
                    ids_text(&ids)
                );
                return Exit::Config;
            }
            let who = actor(who.as_deref());
            report_ops(
                "backfill reconcile",
                "reconciled",
                ops::reconcile(&pool, now, &ids, note.as_deref(), &who).await,
            )
        }
    }
}

fn report_ops(what: &str, verb: &str, result: Result<OpsOutcome, OpsError>) -> Exit {
    match result {
        Ok(o) => {
            if o.changed.is_empty() {
                println!("nothing {verb}");
            } else {
                println!(
                    "{verb} {} row(s): {} (action #{})",
                    o.changed.len(),
                    ids_text(&o.changed),
                    o.action_id.unwrap_or_default()
                );
            }
            if !o.unchanged.is_empty() {
                println!("already {verb}, unchanged: {}", ids_text(&o.unchanged));
            }
            Exit::Ok
        }
        Err(OpsError::Refused(r)) => {
            print_refusals(what, &r);
            Exit::Config
        }
        Err(e) => {
            eprintln!("msgx {what}: {e}");
            Exit::Failure
        }
    }
}

/// Runs `msgx replay`.
pub async fn replay(config: &Config, clock: SharedClock, args: ReplayArgs) -> Exit {
    let selection = match &args.error_class {
        Some(text) => match ErrorClass::parse(text) {
            Some(c) => Selection::Class(c),
            None => {
                eprintln!(
                    "msgx replay: unknown error class {text:?}; one of {}",
                    ErrorClass::ALL
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                return Exit::Config;
            }
        },
        None => Selection::Ids(args.ids.clone()),
    };
    let pool = match crate::commands::connect_current(config, "replay").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let service = ReplayService {
        pool: &pool,
        clock: &clock,
        gate_wait: gate::default_wait(config.msgx.mailbox.timeout.std()),
    };
    let request = ReplayRequest {
        selection,
        force: args.force,
        reason: args.reason.clone(),
        actor: actor(args.actor.as_deref()),
        dry_run: args.dry_run,
    };
    eprintln!("{ORDERING_WARNING}");
    if matches!(request.selection, Selection::Class(_)) && !request.dry_run {
        // A bulk replay: count it first (a dry run changes nothing), then ask.
        let plan = ReplayRequest {
            dry_run: true,
            ..request.clone()
        };
        let rows = match service.replay(&plan).await {
            Ok(o) => o.rows.len(),
            Err(e) => return replay_failed(e),
        };
        let ask = confirm::Bulk {
            what: "replay",
            rows,
            reason: request.reason.as_deref(),
            yes: args.yes,
            json: args.json,
        };
        if let Err(e) = confirm::bulk(ask, &writes_on(config)) {
            eprintln!("msgx replay: {e}");
            return Exit::Config;
        }
    }
    match service.replay(&request).await {
        Ok(o) => {
            if args.json {
                let out = writes_on(config).into_json(&o);
                println!("{out}");
            } else if o.rows.is_empty() {
                println!("nothing to replay");
            } else {
                let verb = if o.dry_run {
                    "would replay"
                } else {
                    "replayed"
                };
                println!("{verb} {} message(s) to PENDING:", o.rows.len());
                for r in &o.rows {
                    println!(
                        "  {:>12}  {:<7} {:<11} {}",
                        r.msg_id,
                        r.state,
                        r.error_class.as_deref().unwrap_or("-"),
                        r.last_error.as_deref().unwrap_or("")
                    );
                }
                if let Some(id) = o.action_id {
                    println!("recorded as action #{id}");
                }
            }
            if !o.already_marked.is_empty() {
                eprintln!(
                    "note: the mailbox mark of {} was already written; the owner may have purged \
                     the raw text (C-7). If so, the replay ends DEAD(MALFORMED, raw-missing).",
                    ids_text(&o.already_marked)
                );
            }
            Exit::Ok
        }
        Err(e) => replay_failed(e),
    }
}

/// Prints why a replay (or its bulk count) did not go ahead; the exit code.
fn replay_failed(e: ReplayError) -> Exit {
    match e {
        ReplayError::Refused(r) => {
            print_refusals("replay", &r);
            Exit::Config
        }
        e @ ReplayError::ForceWithoutReason => {
            eprintln!("msgx replay: {e}");
            Exit::Config
        }
        e @ ReplayError::Gate(gate::GateError::Busy { .. }) => {
            eprintln!("msgx replay: {e}");
            Exit::Locked
        }
        e => {
            eprintln!("msgx replay: {e}");
            Exit::Failure
        }
    }
}
