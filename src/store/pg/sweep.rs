//! One sweep statement family: the LIMITed count and change that every purge
//! and retention job repeats in bounded batches (jobs/batch.rs runs the
//! loop; the statements live here with their tables).

use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// Rows older than a cutoff: how many there are, and change a batch of them.
#[derive(Debug, Clone, Copy)]
pub struct SweepSql {
    /// Counts candidates: `$1` = cutoff.
    pub count: &'static str,
    /// Changes at most `$2` candidates: `$1` = cutoff, `$2` = limit, `$3` = now.
    pub apply: &'static str,
}

impl SweepSql {
    /// The candidates older than `cutoff` (a dry run reports this).
    pub async fn count(&self, pool: &PgPool, cutoff: DateTime<Utc>) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar(self.count)
            .bind(cutoff)
            .fetch_one(pool)
            .await
    }

    /// Changes at most `limit` candidates older than `cutoff`; returns the
    /// rows changed.
    pub async fn apply(
        &self,
        pool: &PgPool,
        cutoff: DateTime<Utc>,
        limit: i64,
        now: DateTime<Utc>,
    ) -> Result<u64, sqlx::Error> {
        Ok(sqlx::query(self.apply)
            .bind(cutoff)
            .bind(limit)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected())
    }
}
