//! Running jobs in-process the way the tests drive them, written once
//! (issue 19, item 7): a job to the end, one pass, the ingest + pump drain,
//! and reading a count of the run report.

use chrono::Duration;
use msgx::clock::ManualClock;
use msgx::scheduler::runner::{JobRunner, RunOptions, RunSummary};
use msgx::store::pg::job_run::Outcome;

/// Bounded passes of `job` until no work is left (`msgx run --until-empty`);
/// panics only when the runner refuses to run it (the outcome is the test's).
pub async fn run(r: &JobRunner, job: &str) -> RunSummary {
    let opts = RunOptions {
        until_empty: true,
        ..Default::default()
    };
    r.run(job, &opts, None).await.expect("job runs")
}

/// [`run`] with `--dry-run`: reports what would be done, changes nothing.
pub async fn run_dry(r: &JobRunner, job: &str) -> RunSummary {
    let opts = RunOptions {
        until_empty: true,
        dry_run: true,
        ..Default::default()
    };
    r.run(job, &opts, None).await.expect("job runs")
}

/// One run of `job` with `opts` that must SUCCEED.
pub async fn succeeds(r: &JobRunner, job: &str, opts: RunOptions) -> RunSummary {
    let s = r.run(job, &opts, None).await.expect("job runs");
    assert_eq!(s.outcome, Outcome::Succeeded, "{job}: {:?} {s:?}", s.error);
    s
}

/// [`run`] that must SUCCEED.
pub async fn run_ok(r: &JobRunner, job: &str) -> RunSummary {
    let opts = RunOptions {
        until_empty: true,
        ..Default::default()
    };
    succeeds(r, job, opts).await
}

/// One bounded pass of `job` (the manifest's bounds) that must SUCCEED.
pub async fn pass_ok(r: &JobRunner, job: &str) -> RunSummary {
    succeeds(r, job, RunOptions::default()).await
}

/// Ingest, then pump until nothing can run now; the pump's report.
pub async fn drain(r: &JobRunner) -> RunSummary {
    run(r, "ingest-sweep").await;
    run(r, "pump-drain").await
}

/// [`drain`] in which both jobs must SUCCEED.
pub async fn drain_ok(r: &JobRunner) -> RunSummary {
    run_ok(r, "ingest-sweep").await;
    run_ok(r, "pump-drain").await
}

/// [`drain`] eight times, 20 minutes apart: an Unsupported head (the own
/// sample 025) holds the queue with backoff until it is EXHAUSTED.
pub async fn drain_past_backoff(r: &JobRunner, clock: &ManualClock) {
    for _ in 0..8 {
        drain(r).await;
        clock.advance(Duration::minutes(20));
    }
}

/// A count of the run report (0 when absent).
pub fn detail(s: &RunSummary, name: &str) -> u64 {
    s.details.get(name).and_then(|v| v.as_u64()).unwrap_or(0)
}
