//! Jobs: the unit the scheduler and `msgx run` invoke, in River's service
//! shape: each job holds a config struct of the settings it
//! uses, built once from the global config by a constructor that validates,
//! and its bounded `run_once` returns a typed report ([`report`]). There is
//! one path: the [`runner::JobRunner`] takes the job's lock, records JOB_RUN and
//! calls `run_once`, for the daemon and the CLI alike.

pub mod batch;
pub mod control;
pub mod manifest;
pub mod passes;
pub mod profile;
pub mod report;
pub mod supervision;

use crate::clock::SharedClock;
use crate::config::Config;
use crate::instance_lock::LockGuard;
use crate::store::mailbox::{Mailbox, MailboxError};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::watch;

pub(crate) use report::job_counts;
pub use report::{Count, Details, RunReport};

/// The shared handles and the run's controls a job uses; its settings are
/// its own (each job's config struct). Passed in; no globals (style §5).
#[derive(Clone)]
pub struct JobContext {
    pub pg: PgPool,
    /// The shared mailbox (connects lazily).
    pub mailbox: Mailbox,
    pub clock: SharedClock,
    /// The lock the run holds; lost = stop before the next write.
    pub guard: LockGuard,
    /// Process shutdown was requested: finish the current batch, then stop.
    pub shutdown: watch::Receiver<bool>,
    /// Report what would be done; change nothing.
    pub dry_run: bool,
    /// The process's Kafka producer, created on first use (delivery jobs).
    pub kafka: crate::kafka::producer::SharedProducer,
    /// Told after each commit that left work for the next stage.
    pub handoff: Handoff,
}

/// Tells the next pipeline stage, right after a commit, that there is work
/// for it: in the daemon it starts the job's `[then]` jobs at once, so a
/// committed row never waits for the end of the run that wrote it (its last
/// empty read and its JOB_RUN row) nor for a tick (issue 38 item 2; design
/// §5.1: the pump processes as soon as there is a head). A no-op elsewhere
/// (`msgx run`, tests), where the stages are run one after another.
#[derive(Clone, Default)]
pub struct Handoff(Option<Arc<HandoffTo>>);

struct HandoffTo {
    start: Box<dyn Fn() + Send + Sync>,
    used: AtomicBool,
}

impl Handoff {
    /// A handoff that calls `start` on every commit.
    pub fn new(start: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(HandoffTo {
            start: Box::new(start),
            used: AtomicBool::new(false),
        })))
    }

    /// A commit left work for the next stage.
    pub fn committed(&self) {
        if let Some(to) = &self.0 {
            to.used.store(true, Ordering::SeqCst);
            (to.start)();
        }
    }

    /// Whether [`Handoff::committed`] was called: the run handed its work
    /// over already, so its end need not start the next stage again.
    pub fn used(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|to| to.used.load(Ordering::SeqCst))
    }
}

impl std::fmt::Debug for Handoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Handoff"
        } else {
            "Handoff(none)"
        })
    }
}

impl JobContext {
    /// Whether the job may start another batch (lock held, no shutdown,
    /// within its time budget).
    pub fn may_continue(&self, deadline: DateTime<Utc>) -> Result<bool, JobError> {
        if !self.guard.is_active() {
            return Err(JobError::LockLost);
        }
        Ok(!*self.shutdown.borrow() && self.clock.now() < deadline)
    }

    /// The hard fence inside a write transaction: proves on the server that
    /// this run's lock session still holds its lock.
    pub async fn fence(&self, conn: &mut sqlx::PgConnection) -> Result<(), JobError> {
        if !self.guard.is_active() {
            return Err(JobError::LockLost);
        }
        match self.guard.fence() {
            Some(f) if !f.verify(&mut *conn).await? => Err(JobError::LockLost),
            _ => Ok(()),
        }
    }
}

/// Per-run limits: from the job's manifest, `--max-items` overriding.
#[derive(Debug, Clone)]
pub struct RunBounds {
    /// Items this run handles at most.
    pub max_items: u64,
    /// The run stops between batches after this.
    pub time_budget: std::time::Duration,
    /// Rows per statement (maintenance jobs).
    pub batch: u32,
}

impl RunBounds {
    /// The instant the budget ends, on the job's clock.
    pub fn deadline(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        now + chrono::Duration::from_std(self.time_budget).unwrap_or(chrono::Duration::MAX)
    }
}

/// A job's config struct: the settings it uses, read from the global config
/// once (scheduler/registry.rs builds each job with it).
pub trait JobSettings: Sized {
    /// The settings as `config` has them.
    fn from_config(config: &Config) -> Self;

    /// The named defaults: those of the config keys (config/mod.rs).
    fn defaults() -> Self {
        Self::from_config(&Config::default())
    }
}

/// A job setting its constructor refused (the config checks normally catch
/// it first: `msgx config check`).
#[derive(Debug, thiserror::Error)]
#[error("{key}: {why}")]
pub struct JobConfigError {
    pub key: &'static str,
    pub why: String,
}

impl JobConfigError {
    /// `Ok` when `n` is at least 1: a batch, round or group size.
    pub fn at_least_one(key: &'static str, n: u64) -> Result<(), JobConfigError> {
        if n == 0 {
            return Err(JobConfigError {
                key,
                why: "must be at least 1".into(),
            });
        }
        Ok(())
    }
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("PostgreSQL: {0}{note}", note = crate::store::pg::timeout_note(.0))]
    Db(sqlx::Error),
    #[error("{0}")]
    Mailbox(#[from] MailboxError),
    #[error("the lock this run holds was lost; stopped before the next write")]
    LockLost,
    #[error("{0}")]
    Other(String),
    /// A panic inside the run, caught at the run boundary.
    #[error("the job panicked: {0}")]
    Panicked(String),
    /// A pass that failed after doing work: the error and
    /// the pass's report so far ([`RunReport::failed_with`]). The run's
    /// passes ([`passes`]) add the report to the run's total and record the
    /// inner error, so JOB_RUN counts what a failed run did; nothing else
    /// sees this variant.
    #[error("{error}")]
    AfterWork {
        error: Box<JobError>,
        done: report::DoneSoFar,
    },
}

/// Every PostgreSQL error a job meets passes here: one that says the
/// server is gone or read-only makes the pool re-check its host
/// ([`crate::store::pg::ha::note_error`]).
impl From<sqlx::Error> for JobError {
    fn from(e: sqlx::Error) -> Self {
        crate::store::pg::ha::note_error(&e);
        JobError::Db(e)
    }
}

/// A schedulable, idempotent, bounded job.
#[async_trait::async_trait]
pub trait Job: Send + Sync {
    /// The job's own counts in its report.
    type Details: Details;

    /// One bounded pass. Must be safe to repeat (idempotent).
    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<Self::Details>, JobError>;
}

/// The domain's view of the config (§11.2, Q13).
pub fn domain_config(config: &Config) -> crate::domain::DomainConfig {
    let a = &config.msgx.airport;
    use crate::config::AbsentFieldPolicy;
    use crate::domain;
    domain::DomainConfig {
        timezone: a.tz(),
        day_cutover: a.cutover(),
        absent_field_policy: match config.msgx.schd.absent_field_policy {
            AbsentFieldPolicy::Preserve => domain::AbsentFieldPolicy::Preserve,
            AbsentFieldPolicy::Clear => domain::AbsentFieldPolicy::Clear,
        },
    }
}

/// The design's FailureScheduler over the configured retry schedules (§9.1):
/// the next-attempt rule lives in the domain, fed these plain values.
pub fn failure_scheduler(retry: &crate::config::RetrySchedules) -> crate::domain::FailureScheduler {
    let schedule = |s: &crate::config::RetrySchedule| crate::domain::proc_state::Schedule {
        max_attempts: s.max_attempts,
        backoff: s.backoff.iter().map(|d| d.chrono()).collect(),
    };
    crate::domain::FailureScheduler {
        infra: schedule(&retry.infra),
        codec_error: schedule(&retry.codec_error),
        unsupported: schedule(&retry.unsupported),
        data: schedule(&retry.data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_fast_schedules_give_up_within_a_minute() {
        let s = failure_scheduler(&crate::config::RetrySchedules::default());
        let t0 = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        assert_eq!(
            s.unsupported.next_attempt_at(1, t0),
            t0 + chrono::Duration::seconds(10)
        );
        assert_eq!(
            s.infra.next_attempt_at(9, t0),
            t0 + chrono::Duration::minutes(1)
        );
        assert!(s.codec_error.exhausted(3));
    }
}
