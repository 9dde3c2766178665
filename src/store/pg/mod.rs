//! msgx's own PostgreSQL: connection, embedded migrations and the schema
//! check the daemon runs before starting (issue 2, item 3).

pub mod backfill;
pub mod flight;
pub mod inbox;
pub mod job_run;
pub mod msg_event;
pub mod operator_action;
pub mod preflight;
pub mod proc_state;
pub mod ref_master;
pub mod req_track;
pub mod snap_log;

use sqlx::PgPool;
use sqlx::migrate::Migrator;
use sqlx::postgres::PgPoolOptions;

/// The embedded migration chain (`migrations/pg`).
pub static MIGRATOR: Migrator = sqlx::migrate!("./migrations/pg");

/// Errors talking to msgx's PostgreSQL.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(
        "the database schema is not current: it has version {found:?}, this msgx needs {expected}. {hint}"
    )]
    SchemaMismatch {
        found: Option<i64>,
        expected: i64,
        hint: &'static str,
    },
}

/// Opens the job pool.
pub async fn connect(cfg: &crate::config::Postgres) -> Result<PgPool, StoreError> {
    Ok(PgPoolOptions::new()
        .max_connections(cfg.max_connections)
        .acquire_timeout(cfg.acquire_timeout.std())
        .connect(&cfg.url)
        .await?)
}

/// Applies pending migrations; idempotent.
pub async fn migrate(pool: &PgPool) -> Result<Vec<i64>, StoreError> {
    let before = applied_version(pool).await?.unwrap_or(0);
    MIGRATOR.run(pool).await?;
    Ok(MIGRATOR
        .iter()
        .map(|m| m.version)
        .filter(|v| *v > before)
        .collect())
}

/// The newest migration this binary embeds.
pub fn expected_version() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

/// The newest successfully applied migration, `None` on an unmigrated database.
pub async fn applied_version(pool: &PgPool) -> Result<Option<i64>, StoreError> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(pool)
        .await?;
    if !exists {
        return Ok(None);
    }
    Ok(
        sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
            .fetch_one(pool)
            .await?,
    )
}

/// Refuses an unmigrated database and one migrated by a newer msgx.
pub async fn ensure_schema_current(pool: &PgPool) -> Result<i64, StoreError> {
    let expected = expected_version();
    match applied_version(pool).await? {
        Some(v) if v == expected => Ok(v),
        Some(v) if v > expected => Err(StoreError::SchemaMismatch {
            found: Some(v),
            expected,
            hint: "A newer msgx migrated it; run that version (never downgrade a live schema).",
        }),
        found => Err(StoreError::SchemaMismatch {
            found,
            expected,
            hint: "Run `msgx migrate` first.",
        }),
    }
}
