//! `msgx jobs [--json]` and `msgx run JOB`: list the jobs with their
//! manifests, and run one now through the job runner (the same locks the
//! daemon takes), and `msgx jobs pause|resume` ([`crate::jobs::control`]).
//! Exit codes: 0 succeeded, 1 failed, 2 unknown job or config, 3 not
//! implemented yet, 4 lock held elsewhere or lost, 7 paused (`--force`
//! runs it).

use super::target::{Needs, Target};
use crate::clock::SharedClock;
use crate::config::Config;
use crate::exit::Exit;
use crate::jobs::control::{self, Verb};
use crate::jobs::manifest;
use crate::jobs::profile::Profile;
use crate::scheduler::daemon;
use crate::scheduler::registry;
use crate::scheduler::runner::{JobRunner, Progress, RunError, RunOptions};
use crate::store::pg;
use crate::store::pg::job_pause::{self, Pause};
use crate::store::pg::job_run::Outcome;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `msgx jobs pause|resume JOB --reason R`: audited in operator_action
/// (JOB_PAUSE / JOB_RESUME, target `job:<name>`).
#[derive(Debug, clap::Subcommand)]
pub enum JobsAction {
    /// Pause a job: the daemon (and a standby that takes over) skips its
    /// scheduled starts, `msgx run` refuses it (exit 7) unless --force.
    Pause(JobsChange),
    /// Resume a paused job: its next scheduled start runs.
    Resume(JobsChange),
}

/// The arguments of `msgx jobs pause|resume`.
#[derive(Debug, clap::Args)]
pub struct JobsChange {
    /// Job name (see `msgx jobs`).
    pub job: String,
    /// Why (required, recorded and shown with the pause).
    #[arg(long, required = true)]
    pub reason: String,
    /// Who (default: $USER).
    #[arg(long)]
    pub actor: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// What is known of the pauses when listing: read from msgx's PostgreSQL
/// when it is configured; otherwise (or when it cannot be read) unknown,
/// and the listing says so rather than showing every job as running.
enum Pauses {
    Known(BTreeMap<String, Pause>),
    Unknown(String),
}

async fn read_pauses(config: &Config) -> Pauses {
    if !super::target::missing(config, Needs::POSTGRES).is_empty() {
        return Pauses::Unknown("msgx.postgres.url is not set".into());
    }
    let pool = match pg::connect(&config.msgx.postgres).await {
        Ok(p) => p,
        Err(e) => return Pauses::Unknown(e.to_string()),
    };
    match job_pause::all(&pool).await {
        Ok(all) => Pauses::Known(all.into_iter().map(|p| (p.job.clone(), p)).collect()),
        Err(e) => Pauses::Unknown(format!("PostgreSQL: {e}")),
    }
}

/// `msgx jobs`: the manifests, with the daemon profile's schedule and each
/// job's pause (who, since, why) from PostgreSQL.
pub async fn list(config: &Config, json: bool) -> Exit {
    let manifests = match manifest::all() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("msgx jobs: {e}");
            return Exit::Failure;
        }
    };
    let daemon = Profile::resolve("daemon").ok();
    let pauses = read_pauses(config).await;
    let paused = |name: &str| match &pauses {
        Pauses::Known(all) => all
            .get(name)
            .map(|p| serde_json::json!(p))
            .unwrap_or_default(),
        Pauses::Unknown(_) => serde_json::json!("unknown"),
    };
    let rows: Vec<serde_json::Value> = manifests
        .iter()
        .map(|m| {
            serde_json::json!({
                "name": m.name,
                "purpose": m.purpose,
                "class": m.class,
                "lock": m.lock,
                "implemented": registry::is_implemented(&m.name),
                "bounds": m.bounds,
                "daemon_cron": daemon.as_ref().and_then(|p| p.jobs.get(&m.name)),
                "paused": paused(&m.name),
            })
        })
        .collect();
    if json {
        println!("{}", serde_json::Value::Array(rows));
        return Exit::Ok;
    }
    if let Pauses::Unknown(why) = &pauses {
        eprintln!("msgx jobs: pauses unknown ({why}); STATUS does not show them");
    }
    println!(
        "{:<22} {:<12} {:<9} {:<12} {:>10} {:>8}  PURPOSE",
        "JOB", "CLASS", "LOCK", "STATUS", "MAX-ITEMS", "BUDGET"
    );
    for m in &manifests {
        let pause = match &pauses {
            Pauses::Known(all) => all.get(&m.name),
            Pauses::Unknown(_) => None,
        };
        let status = match (pause, registry::is_implemented(&m.name)) {
            (Some(_), _) => "paused",
            (None, true) => "ready",
            (None, false) => "not-yet",
        };
        println!(
            "{:<22} {:<12} {:<9} {:<12} {:>10} {:>8}  {}",
            m.name,
            format!("{:?}", m.class).to_lowercase(),
            format!("{:?}", m.lock).to_lowercase(),
            status,
            m.bounds.max_items,
            m.bounds.time_budget.to_string(),
            m.purpose
        );
        if let Some(p) = pause {
            println!("{:<22} {}", "", control::describe(p));
        }
    }
    Exit::Ok
}

/// `msgx jobs pause|resume JOB --reason R [--actor A] [--json]`: exit 0
/// when applied or already so, 2 for an unknown job or a blank reason, 1
/// when PostgreSQL fails.
pub async fn change(config: &Config, clock: SharedClock, action: JobsAction) -> Exit {
    let (verb, args) = match action {
        JobsAction::Pause(a) => (Verb::Pause, a),
        JobsAction::Resume(a) => (Verb::Resume, a),
    };
    let name = match verb {
        Verb::Pause => "jobs pause",
        Verb::Resume => "jobs resume",
    };
    if let Err(e) = control::validate(&args.job, &args.reason) {
        eprintln!("msgx {name}: {e}");
        return Exit::Config;
    }
    let pool = match super::connect_current(config, name).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let actor = super::events::actor(args.actor.as_deref());
    let request = control::Request {
        verb,
        job: &args.job,
        actor: &actor,
        reason: &args.reason,
        at: clock.now(),
    };
    match control::apply(&pool, &request).await {
        Ok(done) => {
            if args.json {
                println!("{}", serde_json::json!({"job": args.job, "change": done}));
            } else {
                println!("{}", control::outcome_line(verb, &args.job, &done));
            }
            Exit::Ok
        }
        Err(e @ control::ControlError::Db(_)) => {
            eprintln!("msgx {name}: {e}");
            Exit::Failure
        }
        Err(e) => {
            eprintln!("msgx {name}: {e}");
            Exit::Config
        }
    }
}

/// The flags of `msgx run`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunFlags {
    pub max_items: Option<u64>,
    pub until_empty: bool,
    pub dry_run: bool,
    /// Run a paused job anyway.
    pub force: bool,
    pub json: bool,
}

/// `msgx run JOB [--max-items N] [--until-empty] [--dry-run] [--force]
/// [--json]`, with a progress spinner for `--until-empty` on a terminal.
pub async fn run(config: Config, clock: SharedClock, job: &str, how: RunFlags) -> Exit {
    let RunFlags {
        max_items,
        until_empty,
        dry_run,
        force,
        json,
    } = how;
    let bar = progress_bar(until_empty && !json);
    let opts = RunOptions {
        max_items,
        until_empty,
        dry_run,
        force,
        progress: bar.clone().map(|b| {
            Progress(Arc::new(move |n| {
                b.set_position(n);
            }))
        }),
        ..RunOptions::default()
    };
    let code = run_job(Arc::new(config), clock, job, &opts, json).await;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    code
}

async fn run_job(
    config: Arc<Config>,
    clock: SharedClock,
    job: &str,
    opts: &RunOptions,
    json: bool,
) -> Exit {
    if manifest::find(job).is_none() {
        eprintln!("msgx run: unknown job {job:?}; `msgx jobs` lists them");
        return Exit::Config;
    }
    let pool = match super::connect_current(config.as_ref(), "run").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let (_stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mailbox = match super::open_mailbox(&config, "run") {
        Ok(m) => m,
        Err(code) => return code,
    };
    let instance = daemon::instance_name();
    let runner = JobRunner::manual(pool, mailbox, config, clock, instance, stop_rx);
    match runner.run(job, opts, None).await {
        Ok(summary) => {
            if json {
                let out = Target::of(runner.config.as_ref(), Needs::BOTH).into_json(&summary);
                println!("{out}");
            } else {
                println!("{summary}");
            }
            match summary.outcome {
                Outcome::Succeeded => Exit::Ok,
                Outcome::Aborted => Exit::Locked,
                _ => Exit::Failure,
            }
        }
        Err(e @ RunError::NotImplemented(_)) => {
            eprintln!("msgx run: {e}; `msgx jobs` shows which jobs are ready");
            Exit::NotImplemented
        }
        Err(e @ RunError::Locked { .. }) => {
            eprintln!("msgx run: {e}");
            Exit::Locked
        }
        Err(e @ RunError::Paused { .. }) => {
            eprintln!("msgx run: {e}");
            Exit::Paused
        }
        Err(e @ RunError::UnknownJob(_)) => {
            eprintln!("msgx run: {e}");
            Exit::Config
        }
        Err(e) => {
            eprintln!("msgx run: {e}");
            Exit::Failure
        }
    }
}

/// A spinner with the running item count, only when stderr is a terminal.
fn progress_bar(wanted: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {pos} item(s) {per_sec}")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(bar)
}
