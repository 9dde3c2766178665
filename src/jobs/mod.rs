//! Jobs: the unit the scheduler and `msgx run` invoke, in River's service
//! shape (issue 19 item 5): each job holds a config struct of the settings it
//! uses, built once from the global config by a constructor that validates,
//! and its bounded `run_once` returns a typed report ([`report`]). There is
//! one path: the [`runner::Runner`] takes the job's lock, records JOB_RUN and
//! calls `run_once`, for the daemon and the CLI alike.

pub mod manifest;
pub mod registry;
pub mod report;
pub mod runner;

use crate::clock::SharedClock;
use crate::config::Config;
use crate::instance_lock::LockGuard;
use crate::store::mailbox::{Mailbox, MailboxError};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
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
    pub kafka: crate::delivery::producer::SharedProducer,
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

    /// Opens a processor transaction's critical section in one statement
    /// (PIPELINE_LOCK, the message row, the fence): the row's state, or
    /// `None` when it does not exist. Lock lost → [`JobError::LockLost`].
    pub async fn open_processing(
        &self,
        conn: &mut sqlx::PgConnection,
        msg_id: i64,
    ) -> Result<Option<String>, JobError> {
        Ok(self
            .open_group(conn, &[msg_id])
            .await?
            .into_iter()
            .next()
            .map(|(_, state)| state))
    }

    /// [`open_processing`](Self::open_processing) for a group commit: every
    /// row of `msg_ids` locked in the same statement; `(MSG_ID, state)` of
    /// those that exist, in MSG_ID order.
    pub async fn open_group(
        &self,
        conn: &mut sqlx::PgConnection,
        msg_ids: &[i64],
    ) -> Result<Vec<(i64, String)>, JobError> {
        if !self.guard.is_active() {
            return Err(JobError::LockLost);
        }
        let fence = self.guard.fence().map(|f| f.parts());
        let rows = crate::store::pg::proc_state::open_group(conn, msg_ids, fence).await?;
        if rows.iter().any(|(_, _, fenced)| !fenced) {
            return Err(JobError::LockLost);
        }
        Ok(rows.into_iter().map(|(id, state, _)| (id, state)).collect())
    }

    /// The hard fence inside a write transaction: proves on the server that
    /// this run's lock session still holds its lock (issue 2, item 6).
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
/// once (jobs/registry.rs builds each job with it).
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
    Db(#[from] sqlx::Error),
    #[error("{0}")]
    Mailbox(#[from] MailboxError),
    #[error("the lock this run holds was lost; stopped before the next write")]
    LockLost,
    #[error("{0}")]
    Other(String),
    /// A panic inside the run, caught at the run boundary (issue 17, item 1).
    #[error("the job panicked: {0}")]
    Panicked(String),
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
