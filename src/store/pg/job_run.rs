//! JOB_RUN: one row per job run, written at start (RUNNING) and finished with
//! its outcome, so an operator sees runs that never ended too. A daemon run
//! of a pipeline job is the exception: polled several times a
//! second, it is written once at its end, and only when it handled items or
//! did not succeed.

use super::sweep::SweepSql;
use crate::domain::stored_name::stored_names;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;

stored_names! {
    /// JOB_RUN.OUTCOME: how a run ended (RUNNING while it runs).
    #[derive(Serialize)]
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum Outcome ("JOB_RUN outcome") {
        Running = "RUNNING",
        Succeeded = "SUCCEEDED",
        Failed = "FAILED",
        /// The job's lock was held elsewhere; nothing ran.
        SkippedLocked = "SKIPPED_LOCKED",
        /// Stopped by lock loss or shutdown before it finished.
        Aborted = "ABORTED",
        /// A scheduled start of a paused job (migration 0025); nothing ran,
        /// ERROR says who paused it and why.
        SkippedPaused = "SKIPPED_PAUSED",
    }
}

impl Outcome {
    /// The outcomes of a finished run (every one but RUNNING).
    pub const FINISHED: [Outcome; 5] = [
        Outcome::Succeeded,
        Outcome::Failed,
        Outcome::SkippedLocked,
        Outcome::Aborted,
        Outcome::SkippedPaused,
    ];
}

/// Starts a run; returns its id.
pub async fn insert_started(
    pool: &PgPool,
    job: &str,
    trigger: &str,
    instance: &str,
    at: DateTime<Utc>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO job_run (job, trigger, instance, started_at, outcome) \
         VALUES ($1, $2, $3, $4, 'RUNNING') RETURNING id",
    )
    .bind(job)
    .bind(trigger)
    .bind(instance)
    .bind(at)
    .fetch_one(pool)
    .await
}

/// How a run ended.
#[derive(Debug, Clone, Copy)]
pub struct RunEnd<'a> {
    pub at: DateTime<Utc>,
    pub outcome: Outcome,
    pub items: u64,
    pub error: Option<&'a str>,
    pub details: &'a serde_json::Value,
}

/// Finishes a run written at its start.
pub async fn finish(pool: &PgPool, id: i64, end: &RunEnd<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE job_run SET finished_at = $2, outcome = $3, items = $4, error = $5, details = $6 \
         WHERE id = $1",
    )
    .bind(id)
    .bind(end.at)
    .bind(end.outcome.as_str())
    .bind(i64::try_from(end.items).unwrap_or(i64::MAX))
    .bind(end.error)
    .bind(end.details)
    .execute(pool)
    .await?;
    Ok(())
}

/// A whole run, written at its end: queued by the daemon's `RunLog`
/// (crate::scheduler::run_log), or at once by a run without one.
#[derive(Debug, Clone)]
pub struct FinishedRun {
    pub job: String,
    pub trigger: String,
    pub instance: String,
    pub started: DateTime<Utc>,
    pub finished: DateTime<Utc>,
    pub outcome: Outcome,
    pub items: u64,
    pub error: Option<String>,
    pub details: serde_json::Value,
}

/// Writes `runs` in one statement, their ids in the order given.
pub async fn insert_finished_many(pool: &PgPool, runs: &[FinishedRun]) -> Result<(), sqlx::Error> {
    let col = |f: fn(&FinishedRun) -> String| runs.iter().map(f).collect::<Vec<_>>();
    let started: Vec<DateTime<Utc>> = runs.iter().map(|r| r.started).collect();
    let finished: Vec<DateTime<Utc>> = runs.iter().map(|r| r.finished).collect();
    let items: Vec<i64> = runs
        .iter()
        .map(|r| i64::try_from(r.items).unwrap_or(i64::MAX))
        .collect();
    let errors: Vec<Option<String>> = runs.iter().map(|r| r.error.clone()).collect();
    let details: Vec<serde_json::Value> = runs.iter().map(|r| r.details.clone()).collect();
    sqlx::query(
        "INSERT INTO job_run (job, trigger, instance, started_at, finished_at, outcome, items, error, details) \
         SELECT job, trg, inst, s, f, o, n, e, d \
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], \
                     $6::text[], $7::bigint[], $8::text[], $9::jsonb[]) WITH ORDINALITY \
              AS t(job, trg, inst, s, f, o, n, e, d, ord) \
         ORDER BY ord",
    )
    .bind(col(|r| r.job.clone()))
    .bind(col(|r| r.trigger.clone()))
    .bind(col(|r| r.instance.clone()))
    .bind(started)
    .bind(finished)
    .bind(col(|r| r.outcome.as_str().to_string()))
    .bind(items)
    .bind(errors)
    .bind(details)
    .execute(pool)
    .await?;
    Ok(())
}

/// Records a run that did not start (`outcome` SKIPPED_LOCKED: its lock was
/// held elsewhere; SKIPPED_PAUSED: the job is paused) with `why`
/// (`who` = job, trigger, instance).
pub async fn insert_skipped(
    pool: &PgPool,
    (job, trigger, instance): (&str, &str, &str),
    outcome: Outcome,
    at: DateTime<Utc>,
    why: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO job_run (job, trigger, instance, started_at, finished_at, outcome, error) \
         VALUES ($1, $2, $3, $4, $4, $5, $6)",
    )
    .bind(job)
    .bind(trigger)
    .bind(instance)
    .bind(at)
    .bind(outcome.as_str())
    .bind(why)
    .execute(pool)
    .await?;
    Ok(())
}

/// The last run of each job, for `status`.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct LastRun {
    pub job: String,
    pub trigger: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "String")]
    pub outcome: Outcome,
    pub items: i64,
    pub error: Option<String>,
}

/// The newest row per job.
pub async fn last_runs(pool: &PgPool) -> Result<Vec<LastRun>, sqlx::Error> {
    sqlx::query_as(
        "SELECT DISTINCT ON (job) job, trigger, started_at, finished_at, outcome, items, error \
         FROM job_run ORDER BY job, started_at DESC, id DESC",
    )
    .fetch_all(pool)
    .await
}

/// When each job last succeeded (the `msgx_job_last_success_timestamp_seconds`
/// gauge reads it, so cron runs in other processes count too).
pub async fn last_successes(
    pool: &PgPool,
) -> Result<std::collections::BTreeMap<String, DateTime<Utc>>, sqlx::Error> {
    let rows: Vec<(String, DateTime<Utc>)> = sqlx::query_as(
        "SELECT job, max(COALESCE(finished_at, started_at)) FROM job_run \
         WHERE outcome = 'SUCCEEDED' GROUP BY job",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().collect())
}

/// One run in the console's Jobs history.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct RunRow {
    pub id: i64,
    pub job: String,
    pub trigger: String,
    pub instance: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "String")]
    pub outcome: Outcome,
    pub items: i64,
    pub error: Option<String>,
}

impl RunRow {
    /// How long the run took (`None` while it runs).
    pub fn duration(&self) -> Option<chrono::Duration> {
        self.finished_at.map(|f| f - self.started_at)
    }
}

/// The newest `limit` runs (of `job` when given; only failed ones with
/// `failed_only`), newest first.
pub async fn history(
    pool: &PgPool,
    job: Option<&str>,
    failed_only: bool,
    limit: i64,
) -> Result<Vec<RunRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, job, trigger, instance, started_at, finished_at, outcome, items, error \
         FROM job_run WHERE ($1::text IS NULL OR job = $1) \
           AND (NOT $2 OR outcome IN ('FAILED', 'ABORTED')) \
         ORDER BY started_at DESC, id DESC LIMIT $3",
    )
    .bind(job)
    .bind(failed_only)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// The newest `per_job` runs of each of `jobs`, newest first within a job
/// (the Jobs page's sparklines): one statement for the page, each job read
/// through its (job, started_at) index.
pub async fn recent_per_job(
    pool: &PgPool,
    jobs: &[String],
    per_job: i64,
) -> Result<Vec<RunRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT r.id, r.job, r.trigger, r.instance, r.started_at, r.finished_at, r.outcome, \
                r.items, r.error \
         FROM unnest($1::text[]) AS j(job) CROSS JOIN LATERAL ( \
           SELECT * FROM job_run WHERE job_run.job = j.job \
           ORDER BY started_at DESC, id DESC LIMIT $2) r \
         ORDER BY r.job, r.started_at DESC, r.id DESC",
    )
    .bind(jobs)
    .bind(per_job)
    .fetch_all(pool)
    .await
}

/// Items `job` handled per bucket of `bucket_seconds` since `since` (runs
/// by their start): the console's throughput chart. Buckets without a run
/// are absent.
pub async fn items_per_bucket(
    pool: &PgPool,
    job: &str,
    since: DateTime<Utc>,
    bucket_seconds: i64,
) -> Result<Vec<(DateTime<Utc>, i64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT to_timestamp(floor(extract(epoch FROM started_at) / $3) * $3) AS bucket, \
                sum(items)::bigint \
         FROM job_run WHERE job = $1 AND started_at >= $2 \
         GROUP BY bucket ORDER BY bucket",
    )
    .bind(job)
    .bind(since)
    .bind(bucket_seconds as f64)
    .fetch_all(pool)
    .await
}

/// Finished job runs past `msgx.job-run.retention`.
pub const RETENTION_PURGE: SweepSql = SweepSql {
    count: "SELECT count(*) FROM job_run WHERE started_at < $1 AND outcome <> 'RUNNING'",
    apply: "DELETE FROM job_run WHERE id IN (SELECT id FROM job_run \
            WHERE started_at < $1 AND outcome <> 'RUNNING' ORDER BY started_at LIMIT $2) \
            AND $3::timestamptz IS NOT NULL",
};
