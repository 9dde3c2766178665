//! JOB_PAUSE (migration 0025): the jobs an operator paused, with who, when
//! and why. The daemon (and a standby that takes over) reads it before every
//! start, so a pause holds across processes and restarts. Each pause and
//! resume is written in one transaction with its OPERATOR_ACTION row, so a
//! change is never unaudited.

use super::operator_action::{self, NewAction};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;

/// A paused job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Pause {
    pub job: String,
    pub paused_by: String,
    pub paused_at: DateTime<Utc>,
    pub reason: String,
}

/// The pause of `job`, if it is paused.
pub async fn get(pool: &PgPool, job: &str) -> Result<Option<Pause>, sqlx::Error> {
    sqlx::query_as("SELECT job, paused_by, paused_at, reason FROM job_pause WHERE job = $1")
        .bind(job)
        .fetch_optional(pool)
        .await
}

/// Every paused job, by name.
pub async fn all(pool: &PgPool) -> Result<Vec<Pause>, sqlx::Error> {
    sqlx::query_as("SELECT job, paused_by, paused_at, reason FROM job_pause ORDER BY job")
        .fetch_all(pool)
        .await
}

/// What a pause or resume came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Change {
    /// Done, recorded as OPERATOR_ACTION `action_id`.
    Applied { pause: Pause, action_id: i64 },
    /// Nothing to do: the job was already in the asked state (`pause` is
    /// the standing pause when pausing, `None` when resuming).
    Unchanged { pause: Option<Pause> },
}

/// Pauses `p.job` and records `JOB_PAUSE` with target `job:<name>`; a job
/// already paused keeps its first pause (who and why stay true).
pub async fn pause(pool: &PgPool, p: &Pause) -> Result<Change, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let inserted = sqlx::query(
        "INSERT INTO job_pause (job, paused_by, paused_at, reason) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (job) DO NOTHING",
    )
    .bind(&p.job)
    .bind(&p.paused_by)
    .bind(p.paused_at)
    .bind(&p.reason)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if inserted == 0 {
        let standing: Option<Pause> = sqlx::query_as(
            "SELECT job, paused_by, paused_at, reason FROM job_pause WHERE job = $1",
        )
        .bind(&p.job)
        .fetch_optional(&mut *tx)
        .await?;
        tx.rollback().await?;
        return Ok(Change::Unchanged { pause: standing });
    }
    let action_id = audit(&mut tx, "JOB_PAUSE", p, serde_json::json!({})).await?;
    tx.commit().await?;
    Ok(Change::Applied {
        pause: p.clone(),
        action_id,
    })
}

/// Resumes `r.job` (`r` says who, when and why) and records `JOB_RESUME`
/// with the pause it ended in its detail.
pub async fn resume(pool: &PgPool, r: &Pause) -> Result<Change, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let ended: Option<Pause> = sqlx::query_as(
        "DELETE FROM job_pause WHERE job = $1 RETURNING job, paused_by, paused_at, reason",
    )
    .bind(&r.job)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(ended) = ended else {
        tx.rollback().await?;
        return Ok(Change::Unchanged { pause: None });
    };
    let detail = serde_json::json!({ "ended_pause": ended });
    let action_id = audit(&mut tx, "JOB_RESUME", r, detail).await?;
    tx.commit().await?;
    Ok(Change::Applied {
        pause: ended,
        action_id,
    })
}

async fn audit(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    action: &str,
    p: &Pause,
    detail: serde_json::Value,
) -> Result<i64, sqlx::Error> {
    let target = format!("job:{}", p.job);
    let row = NewAction {
        at: p.paused_at,
        actor: &p.paused_by,
        action,
        target: &target,
        reason: Some(&p.reason),
        detail,
    };
    operator_action::insert(tx, &row).await
}
