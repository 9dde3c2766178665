//! CONSOLE_SESSION (migration 0010): the operator console's login sessions
//! (issue 21; docs/console.md "Security model"). Keyed by the SHA-256 of the
//! cookie value, never the value itself.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// A live session.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Session {
    pub user_name: String,
    pub csrf_token: String,
    pub expires_at: DateTime<Utc>,
}

/// Stores a new session.
pub async fn insert(
    pool: &PgPool,
    id_sha256: &str,
    user_name: &str,
    csrf_token: &str,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO console_session (id_sha256, user_name, csrf_token, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(id_sha256)
    .bind(user_name)
    .bind(csrf_token)
    .bind(now)
    .bind(expires_at)
    .execute(pool)
    .await?;
    Ok(())
}

/// The session with this id hash, unless it has expired at `now`.
pub async fn find(
    pool: &PgPool,
    id_sha256: &str,
    now: DateTime<Utc>,
) -> Result<Option<Session>, sqlx::Error> {
    sqlx::query_as(
        "SELECT user_name, csrf_token, expires_at FROM console_session \
         WHERE id_sha256 = $1 AND expires_at > $2",
    )
    .bind(id_sha256)
    .bind(now)
    .fetch_optional(pool)
    .await
}

/// Ends one session (logout).
pub async fn delete(pool: &PgPool, id_sha256: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM console_session WHERE id_sha256 = $1")
        .bind(id_sha256)
        .execute(pool)
        .await?;
    Ok(())
}

/// Drops the sessions expired at `now` (run at each login: the table stays
/// as small as the number of people logged in).
pub async fn delete_expired(pool: &PgPool, now: DateTime<Utc>) -> Result<u64, sqlx::Error> {
    Ok(
        sqlx::query("DELETE FROM console_session WHERE expires_at <= $1")
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected(),
    )
}
