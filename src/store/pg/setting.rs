//! MSGX_SETTING (migration 0007): a setting msgx records once, at first
//! use, and then holds its configuration to (design §2: the identity
//! algorithm may not change after go-live).

use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// A recorded setting.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct Recorded {
    pub value: String,
    pub recorded_at: DateTime<Utc>,
    /// Who recorded it, e.g. `daemon host:pid`.
    pub recorded_by: String,
}

/// Records `value` under `key` unless a value is recorded already; returns
/// the recorded one (the new one or the earlier). One statement, no write
/// when the key exists.
pub async fn record_once(
    pool: &PgPool,
    key: &str,
    value: &str,
    now: DateTime<Utc>,
    by: &str,
) -> Result<Recorded, sqlx::Error> {
    sqlx::query_as(
        "WITH ins AS (INSERT INTO msgx_setting (key, value, recorded_at, recorded_by) \
           VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING \
           RETURNING value, recorded_at, recorded_by) \
         SELECT value, recorded_at, recorded_by FROM ins \
         UNION ALL SELECT value, recorded_at, recorded_by FROM msgx_setting WHERE key = $1 \
         LIMIT 1",
    )
    .bind(key)
    .bind(value)
    .bind(now)
    .bind(by)
    .fetch_one(pool)
    .await
}

/// The value recorded under `key`, if any (read only: `msgx doctor`).
pub async fn get(pool: &PgPool, key: &str) -> Result<Option<Recorded>, sqlx::Error> {
    sqlx::query_as("SELECT value, recorded_at, recorded_by FROM msgx_setting WHERE key = $1")
        .bind(key)
        .fetch_optional(pool)
        .await
}
