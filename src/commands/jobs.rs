//! `msgx jobs [--json]` and `msgx run JOB`: list the jobs with their
//! manifests, and run one now through the job runner (the same locks the
//! daemon takes). Exit codes: 0 succeeded, 1 failed, 2 unknown job or
//! config, 3 not implemented yet, 4 lock held elsewhere or lost.

use super::target::{Needs, Target};
use crate::clock::SharedClock;
use crate::config::Config;
use crate::exit::Exit;
use crate::jobs::manifest;
use crate::jobs::profile::Profile;
use crate::scheduler::daemon;
use crate::scheduler::registry;
use crate::scheduler::runner::{JobRunner, Progress, RunError, RunOptions};
use crate::store::pg::job_run::Outcome;
use std::sync::Arc;

/// `msgx jobs`: the manifests, with the daemon profile's schedule.
pub fn list(json: bool) -> Exit {
    let manifests = match manifest::all() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("msgx jobs: {e}");
            return Exit::Failure;
        }
    };
    let daemon = Profile::resolve("daemon").ok();
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
            })
        })
        .collect();
    if json {
        println!("{}", serde_json::Value::Array(rows));
        return Exit::Ok;
    }
    println!(
        "{:<22} {:<12} {:<9} {:<12} {:>10} {:>8}  PURPOSE",
        "JOB", "CLASS", "LOCK", "STATUS", "MAX-ITEMS", "BUDGET"
    );
    for m in &manifests {
        println!(
            "{:<22} {:<12} {:<9} {:<12} {:>10} {:>8}  {}",
            m.name,
            format!("{:?}", m.class).to_lowercase(),
            format!("{:?}", m.lock).to_lowercase(),
            if registry::is_implemented(&m.name) {
                "ready"
            } else {
                "not-yet"
            },
            m.bounds.max_items,
            m.bounds.time_budget.to_string(),
            m.purpose
        );
    }
    Exit::Ok
}

/// `msgx run JOB [--max-items N] [--until-empty] [--dry-run] [--json]`,
/// with a progress spinner for `--until-empty` on a terminal.
pub async fn run(
    config: Config,
    clock: SharedClock,
    job: &str,
    max_items: Option<u64>,
    until_empty: bool,
    dry_run: bool,
    json: bool,
) -> Exit {
    let bar = progress_bar(until_empty && !json);
    let opts = RunOptions {
        max_items,
        until_empty,
        dry_run,
        progress: bar.clone().map(|b| {
            Progress(Arc::new(move |n| {
                b.set_position(n);
            }))
        }),
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
