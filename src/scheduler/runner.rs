//! The single path by which any job runs (daemon tick or `msgx run`): take the
//! job's lock, record JOB_RUN, call `run_once` within the
//! bounds, record the outcome, release.

use super::registry;
use crate::clock::SharedClock;
use crate::config::Config;
use crate::instance_lock::{self, AdvisoryLock, LockError, LockGuard, LockKey};
use crate::jobs::manifest::{self, JobClass, LockKind, Manifest};
pub use crate::jobs::passes::{AnyJob, Passes, Progress, RunOptions};
use crate::jobs::{JobConfigError, JobContext, JobError, RunBounds};
use crate::store::mailbox::Mailbox;
use crate::store::pg::job_pause::{self, Pause};
use crate::store::pg::job_run::{self, Outcome};
use serde::Serialize;
use sqlx::PgPool;
use std::sync::Arc;
use tokio::sync::watch;

/// Who started the run (stored in JOB_RUN.TRIGGER).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Daemon,
    Cli,
}

impl Trigger {
    fn as_str(self) -> &'static str {
        match self {
            Trigger::Daemon => "daemon",
            Trigger::Cli => "cli",
        }
    }
}

/// The result of one run, as `msgx run --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub job: String,
    pub outcome: Outcome,
    pub items: u64,
    pub more: bool,
    pub dry_run: bool,
    pub error: Option<String>,
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// The text output of `msgx run` (its JSON is the serialisation).
impl std::fmt::Display for RunSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = if self.dry_run {
            "would handle"
        } else {
            "handled"
        };
        write!(
            f,
            "{}: {:?}, {verb} {} item(s){}",
            self.job,
            self.outcome,
            self.items,
            if self.more { ", more work left" } else { "" },
        )?;
        if let Some(e) = &self.error {
            write!(f, "; error: {e}")?;
        }
        for (k, v) in &self.details {
            write!(f, "\n  {k}: {v}")?;
        }
        Ok(())
    }
}

/// Why a run did not happen or failed outside the job.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("unknown job {0:?}; `msgx jobs` lists them")]
    UnknownJob(String),
    #[error("job {0} is not implemented yet")]
    NotImplemented(String),
    /// The job is paused (JOB_PAUSE) and the run was not forced.
    #[error("job {job} is {}; `msgx jobs resume {job} --reason …` resumes it, `--force` runs it once anyway", crate::jobs::control::describe(.pause))]
    Paused {
        job: String,
        pause: crate::store::pg::job_pause::Pause,
    },
    #[error("{lock} lock is held by {holder}; {hint}")]
    Locked {
        lock: &'static str,
        holder: String,
        hint: &'static str,
    },
    #[error("job {0}")]
    Config(#[from] JobConfigError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
}

/// Runs jobs for one process.
#[derive(Clone)]
pub struct JobRunner {
    pub pg: PgPool,
    pub mailbox: Mailbox,
    pub config: Arc<Config>,
    pub clock: SharedClock,
    /// This process's name in JOB_RUN and in `pg_stat_activity`.
    pub instance: String,
    pub trigger: Trigger,
    pub shutdown: watch::Receiver<bool>,
    /// The Kafka producer the delivery jobs share (created on first use).
    pub kafka: crate::kafka::producer::SharedProducer,
    /// The jobs, each built from `config` on first use and kept.
    pub jobs: registry::Jobs,
    /// The daemon's view of JOB_PAUSE (see [`JobRunner::pause_of`]).
    pub pauses: PauseBoard,
    /// The daemon's JOB_RUN writer for its pipeline runs (`None`: each run
    /// writes its own row).
    pub run_log: Option<super::run_log::RunLog>,
}

/// JOB_PAUSE as a daemon last read it: when, and every pause then; and
/// the lock one refresh holds, so starts that find the board stale at the
/// same moment (the cron jobs of one tick) wait for one read instead of each
/// reading (issue 38: 2.7 reads a second idle instead of 1).
#[derive(Clone, Default)]
pub struct PauseBoard {
    read: Arc<std::sync::Mutex<Option<PauseRead>>>,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

/// One read of JOB_PAUSE: when, and every pause then.
type PauseRead = (chrono::DateTime<chrono::Utc>, Vec<Pause>);

impl PauseBoard {
    /// `name`'s pause from a read at most [`PAUSE_REFRESH`] old at `now`;
    /// `None` when there is no such read.
    fn cached(&self, name: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Option<Pause>> {
        let fresh = |at: &chrono::DateTime<chrono::Utc>| now >= *at && now - *at < PAUSE_REFRESH;
        match self.read.lock() {
            Ok(board) => board
                .as_ref()
                .filter(|(at, _)| fresh(at))
                .map(|(_, all)| all.iter().find(|p| p.job == name).cloned()),
            Err(_) => None,
        }
    }
}

/// How long a daemon trusts its last read of JOB_PAUSE. The polled
/// pipeline jobs start several times a second; one lookup per start added
/// a statement per poll to the idle cost (docs/BENCHMARKS.md "idle"), so
/// a daemon reads every pause at most once per second and a pause holds
/// within a second everywhere.
const PAUSE_REFRESH: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

impl JobRunner {
    /// A runner for manual runs (`msgx run`, the console's "run now"):
    /// trigger `cli`, fresh job handles; `instance` names the process.
    pub fn manual(
        pg: PgPool,
        mailbox: Mailbox,
        config: Arc<Config>,
        clock: SharedClock,
        instance: String,
        shutdown: watch::Receiver<bool>,
    ) -> JobRunner {
        JobRunner {
            pg,
            mailbox,
            config,
            clock,
            instance,
            trigger: Trigger::Cli,
            shutdown,
            kafka: Default::default(),
            jobs: Default::default(),
            pauses: Default::default(),
            run_log: None,
        }
    }

    /// Runs `name` once (or until empty), under the right lock.
    ///
    /// `instance_guard` is the daemon's instance-lock guard; `None` means this
    /// is a CLI run that must take the instance lock itself for a pipeline job.
    pub async fn run(
        &self,
        name: &str,
        opts: &RunOptions,
        instance_guard: Option<&LockGuard>,
    ) -> Result<RunSummary, RunError> {
        let manifest =
            manifest::find(name).ok_or_else(|| RunError::UnknownJob(name.to_string()))?;
        let lock_name: &'static str = manifest::MANIFEST_SOURCES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, _)| *n)
            .unwrap_or("job");

        // A paused job starts nowhere (daemon, standby, `msgx run`, "run
        // now") unless forced; a daemon's view is at most PAUSE_REFRESH
        // old, so a pause applied in another process holds within it. A dry run changes nothing and may look while paused.
        if !opts.force
            && !opts.dry_run
            && let Some(pause) = self.pause_of(name).await?
        {
            self.record_paused(&manifest, &pause).await;
            return Err(RunError::Paused {
                job: name.to_string(),
                pause,
            });
        }
        // Take the lock first: a refused run must say who holds it (exit 4)
        // before anything else happens.
        let (owned_lock, guard) = match (manifest.lock, instance_guard) {
            (LockKind::Instance, Some(g)) => (None, g.clone()),
            (LockKind::Instance, None) => {
                let lock = self.acquire(LockKey::instance(), &manifest).await?;
                let guard = lock.guard();
                (Some(lock), guard)
            }
            (LockKind::Job, _) => {
                let lock = self.acquire(LockKey::job(lock_name), &manifest).await?;
                let guard = lock.guard();
                (Some(lock), guard)
            }
        };

        let result = match self.jobs.get(name, &self.config) {
            Ok(None) => Err(RunError::NotImplemented(name.to_string())),
            Ok(Some(job)) => Ok(self.run_locked(&manifest, job.as_ref(), opts, guard).await),
            Err(e) => Err(RunError::Config(e)),
        };
        if let Some(lock) = owned_lock {
            lock.release().await;
        }
        result?
    }

    /// The pause of `name`: a manual run reads it; a daemon reads every
    /// pause at most once per [`PAUSE_REFRESH`] (by its clock) and answers
    /// from that.
    async fn pause_of(&self, name: &str) -> Result<Option<Pause>, sqlx::Error> {
        if self.trigger != Trigger::Daemon {
            return job_pause::get(&self.pg, name).await;
        }
        let now = self.clock.now();
        if let Some(pause) = self.pauses.cached(name, now) {
            return Ok(pause);
        }
        let _refresh = self.pauses.refresh.lock().await;
        // Another start may have read it while this one waited.
        if let Some(pause) = self.pauses.cached(name, self.clock.now()) {
            return Ok(pause);
        }
        let all = job_pause::all(&self.pg).await?;
        let pause = all.iter().find(|p| p.job == name).cloned();
        if let Ok(mut board) = self.pauses.read.lock() {
            *board = Some((now, all));
        }
        Ok(pause)
    }

    /// A start refused by a pause: counted (`msgx_job_runs_total`,
    /// outcome SKIPPED_PAUSED) and, for a daemon start, written to JOB_RUN
    /// with who paused it and why, so the history shows each skipped
    /// scheduled run. A polled pipeline job's skips are only counted, as
    /// its idle runs are (a row per poll would bury the history). A refused
    /// `msgx run` is answered on the terminal instead.
    async fn record_paused(&self, manifest: &Manifest, pause: &crate::store::pg::job_pause::Pause) {
        metrics::counter!("msgx_job_runs_total", "job" => manifest.name.clone(), "outcome" => Outcome::SkippedPaused.as_str())
            .increment(1);
        if self.trigger != Trigger::Daemon || self.quiet(manifest) {
            return;
        }
        let who = (
            manifest.name.as_str(),
            self.trigger.as_str(),
            self.instance.as_str(),
        );
        let why = crate::jobs::control::describe(pause);
        let at = self.clock.now();
        if let Err(e) =
            job_run::insert_skipped(&self.pg, who, Outcome::SkippedPaused, at, &why).await
        {
            tracing::error!(job = %manifest.name, error = %e, "Cannot record a paused job's skipped start");
        }
    }

    /// Whether this runner writes `manifest`'s runs only when they did
    /// something: a daemon's pipeline job (see [`JobRunner::run_locked`]).
    fn quiet(&self, manifest: &Manifest) -> bool {
        self.trigger == Trigger::Daemon && manifest.class == JobClass::Pipeline
    }

    async fn acquire(
        &self,
        key: LockKey,
        manifest: &Manifest,
    ) -> Result<Arc<AdvisoryLock>, RunError> {
        let app = format!(
            "msgx {} {} {}",
            self.trigger.as_str(),
            manifest.name,
            self.instance
        );
        match AdvisoryLock::try_acquire(&self.config.msgx.postgres.url, key, &app).await? {
            Some(lock) => {
                let lock = Arc::new(lock);
                tokio::spawn(
                    lock.clone()
                        .watch(self.config.msgx.daemon.lock_check_interval.std()),
                );
                Ok(lock)
            }
            None => {
                let holder = instance_lock::holder(&self.pg, key)
                    .await?
                    .map(|h| h.to_string())
                    .unwrap_or_else(|| "another session".into());
                metrics::counter!("msgx_job_runs_total", "job" => manifest.name.clone(), "outcome" => Outcome::SkippedLocked.as_str())
                    .increment(1);
                let who = (
                    manifest.name.as_str(),
                    self.trigger.as_str(),
                    self.instance.as_str(),
                );
                let _ = job_run::insert_skipped(
                    &self.pg,
                    who,
                    Outcome::SkippedLocked,
                    self.clock.now(),
                    &format!("{} lock held by {holder}", key.name),
                )
                .await;
                let hint = if key == LockKey::instance() {
                    "another msgx instance is active (a daemon, or a `run` of a pipeline job); stop it or let it do the work"
                } else {
                    "another run of this job is in progress; try again when it ends"
                };
                Err(RunError::Locked {
                    lock: key.name,
                    holder,
                    hint,
                })
            }
        }
    }

    async fn run_locked(
        &self,
        manifest: &Manifest,
        job: &dyn AnyJob,
        opts: &RunOptions,
        guard: LockGuard,
    ) -> Result<RunSummary, RunError> {
        let bounds = RunBounds {
            max_items: opts.max_items.unwrap_or(manifest.bounds.max_items),
            time_budget: manifest.bounds.time_budget.std(),
            batch: manifest.bounds.batch.unwrap_or(500),
        };
        let ctx = JobContext {
            pg: self.pg.clone(),
            mailbox: self.mailbox.clone(),
            clock: self.clock.clone(),
            guard,
            shutdown: self.shutdown.clone(),
            dry_run: opts.dry_run,
            kafka: self.kafka.clone(),
            handoff: opts.handoff.clone(),
        };
        let started = self.clock.now();
        // The daemon polls its pipeline jobs several times a second;
        // a JOB_RUN row per idle poll would be most of PostgreSQL's load and
        // bury the history. Such runs are written once, at their end, and
        // only when they handled items or did not succeed; an idle one is
        // counted in `msgx_job_idle_runs_total`. A CLI run and every
        // maintenance run are written at start (RUNNING) as before.
        let quiet = self.quiet(manifest);
        let run_id = if quiet {
            None
        } else {
            Some(
                job_run::insert_started(
                    &self.pg,
                    &manifest.name,
                    self.trigger.as_str(),
                    &self.instance,
                    started,
                )
                .await?,
            )
        };
        let total = job.run_passes(&manifest.name, &ctx, &bounds, opts).await;
        let failure = total.failure;
        let (outcome, error) = match &failure {
            None => (Outcome::Succeeded, None),
            Some(JobError::LockLost) => (Outcome::Aborted, Some(JobError::LockLost.to_string())),
            // Cut once here: JOB_RUN.ERROR, the log line and the summary.
            Some(e) => (
                Outcome::Failed,
                Some(crate::error_text::cut(&e.to_string()).into_owned()),
            ),
        };
        let details = serde_json::Value::Object(total.details.clone());
        let end = job_run::RunEnd {
            at: self.clock.now(),
            outcome,
            items: total.items,
            error: error.as_deref(),
            details: &details,
        };
        let recorded = match run_id {
            Some(id) => job_run::finish(&self.pg, id, &end).await,
            None if outcome == Outcome::Succeeded && total.items == 0 => {
                metrics::counter!("msgx_job_idle_runs_total", "job" => manifest.name.clone())
                    .increment(1);
                Ok(())
            }
            None => {
                let run = job_run::FinishedRun {
                    job: manifest.name.clone(),
                    trigger: self.trigger.as_str().to_string(),
                    instance: self.instance.clone(),
                    started,
                    finished: end.at,
                    outcome,
                    items: total.items,
                    error: error.clone(),
                    details: details.clone(),
                };
                match &self.run_log {
                    // Queued behind the run in the daemon (its next start or
                    // hand-over waits for no commit of bookkeeping).
                    Some(log) => {
                        log.record(run);
                        Ok(())
                    }
                    None => {
                        job_run::insert_finished_many(&self.pg, std::slice::from_ref(&run)).await
                    }
                }
            }
        };
        if let Err(e) = recorded {
            tracing::error!(job = %manifest.name, error = %e, "Cannot record the end of a job run");
        }
        metrics::counter!("msgx_job_runs_total", "job" => manifest.name.clone(), "outcome" => outcome.as_str())
            .increment(1);
        metrics::counter!("msgx_job_items_total", "job" => manifest.name.clone())
            .increment(total.items);
        // The last success per job is read from JOB_RUN on each scrape
        // (crate::prometheus::refresh), so cron runs count too.
        metrics::histogram!("msgx_job_duration_seconds", "job" => manifest.name.clone())
            .record(crate::clock::seconds_between(started, self.clock.now()));
        match outcome {
            Outcome::Succeeded if total.items > 0 => {
                tracing::info!(job = %manifest.name, items = total.items, more = total.more, "Job run finished")
            }
            Outcome::Succeeded => {
                tracing::debug!(job = %manifest.name, "Job run found nothing to do")
            }
            _ => tracing::error!(job = %manifest.name, error = ?error, "Job run did not succeed"),
        }
        Ok(RunSummary {
            job: manifest.name.clone(),
            outcome,
            items: total.items,
            more: total.more,
            dry_run: opts.dry_run,
            error,
            details: total.details,
        })
    }
}

/// The console's "run now": a manual run, as `msgx run <job>` (a pipeline
/// job takes the instance lock itself, so it is refused while a daemon is
/// active).
#[async_trait::async_trait]
impl crate::console::JobLauncher for JobRunner {
    async fn run_now(&self, job: &str) -> Result<String, String> {
        self.run(job, &RunOptions::default(), None)
            .await
            .map(|summary| summary.to_string())
            .map_err(|e| e.to_string())
    }
}
