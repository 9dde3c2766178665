//! One run's passes, whatever the job's report type: `run_once` repeated as
//! the run's options ask, each pass contained (a panic becomes a FAILED run),
//! the typed reports added up. The job kernel's, so the registry can hand out
//! jobs and the runner can drive them without knowing each other's insides
//! (docs/architecture.md).

use super::{Job, JobContext, JobError, RunBounds, RunReport};
use std::sync::Arc;

/// A callback told the running total after each bounded pass (the CLI's
/// progress bar for `--until-empty`).
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// Per-run options from the CLI (the daemon uses the defaults).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Told the running item count after each pass.
    pub progress: Option<Progress>,
    /// Overrides the manifest's `max-items`.
    pub max_items: Option<u64>,
    /// Repeat `run_once` while it reports more work.
    pub until_empty: bool,
    /// Report only.
    pub dry_run: bool,
    /// Run even when the job is paused (`msgx run --force`).
    pub force: bool,
    /// The daemon's start of the next stage after each commit.
    pub handoff: super::Handoff,
}

/// The passes of one run, its report rendered ([`RunReport::rendered`]).
pub struct Passes {
    pub items: u64,
    pub more: bool,
    pub details: serde_json::Map<String, serde_json::Value>,
    /// The error that ended the run, if one did.
    pub failure: Option<JobError>,
}

/// A job behind the runner's one path, whatever its report type: the
/// registry hands these out (`Job` has a typed report, so it is not
/// object-safe itself).
#[async_trait::async_trait]
pub trait AnyJob: Send + Sync {
    /// `run_once` repeated as `opts` asks (`--until-empty`), the passes'
    /// reports added up, each pass contained ([`contained`]).
    async fn run_passes(
        &self,
        name: &str,
        ctx: &JobContext,
        bounds: &RunBounds,
        opts: &RunOptions,
    ) -> Passes;
}

#[async_trait::async_trait]
impl<J: Job> AnyJob for J {
    async fn run_passes(
        &self,
        name: &str,
        ctx: &JobContext,
        bounds: &RunBounds,
        opts: &RunOptions,
    ) -> Passes {
        let mut total = RunReport::<J::Details>::default();
        let mut failure = None;
        loop {
            match contained(name, self.run_once(ctx, bounds)).await {
                Ok(report) => {
                    let (items, more) = (report.items, report.more);
                    total.absorb(report);
                    if let Some(Progress(tell)) = &opts.progress {
                        tell(total.items);
                    }
                    let stop = !opts.until_empty
                        || !more
                        || items == 0
                        || opts.dry_run
                        || !ctx.guard.is_active()
                        || *ctx.shutdown.borrow();
                    if stop {
                        break;
                    }
                }
                // The work a failed pass did still counts.
                Err(JobError::AfterWork { error, done }) => {
                    if let Some(report) = done.take::<J::Details>() {
                        total.absorb(report);
                    }
                    failure = Some(*error);
                    break;
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        Passes {
            items: total.items,
            more: total.more,
            details: total.rendered(),
            failure,
        }
    }
}

/// Awaits one bounded pass, turning a panic inside it into
/// [`JobError::Panicked`]: the run is then recorded FAILED
/// with the panic message like any failure, and the next tick runs again.
/// Counted in `msgx_job_panics_total` and logged at error.
///
/// Unwind safety: a pass's writes are transactions that roll back when
/// dropped, and its in-memory state dies with the pass; what outlives it (the
/// pools, the shared producer, the lock guard) is only touched through
/// poison-tolerant locks.
async fn contained<F, D>(job: &str, pass: F) -> Result<RunReport<D>, JobError>
where
    F: std::future::Future<Output = Result<RunReport<D>, JobError>>,
{
    use futures_util::FutureExt;
    let pass = async {
        crate::fault::hit("job", job);
        pass.await
    };
    match std::panic::AssertUnwindSafe(pass).catch_unwind().await {
        Ok(result) => result,
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            metrics::counter!("msgx_job_panics_total", "job" => job.to_string()).increment(1);
            tracing::error!(job, panic = %message, "Job run panicked; recorded FAILED, the next tick runs again");
            Err(JobError::Panicked(message))
        }
    }
}

/// The text of a panic payload (`panic!` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".to_string())
}
