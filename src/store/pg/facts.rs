//! Read model of `msgx status` and `/metrics`:
//! the counts and ages both report, read by the same statements.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgPool, Row};
use std::collections::BTreeMap;

/// INBOX_CURSOR as the status shows it.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Cursor {
    pub w: i64,
    pub hole_since: Option<DateTime<Utc>>,
    pub seeded_at: Option<DateTime<Utc>>,
    pub updated_at: Option<DateTime<Utc>>,
}

/// The cursor row (the default before the first round).
pub async fn cursor(pool: &PgPool) -> Result<Cursor, sqlx::Error> {
    let c =
        sqlx::query("SELECT w, hole_since, seeded_at, updated_at FROM inbox_cursor WHERE id = 1")
            .fetch_optional(pool)
            .await?;
    Ok(match c {
        Some(r) => Cursor {
            w: r.try_get("w")?,
            hole_since: r.try_get("hole_since")?,
            seeded_at: r.try_get("seeded_at")?,
            updated_at: r.try_get("updated_at")?,
        },
        None => Cursor::default(),
    })
}

/// Released holes (INBOX_HOLE rows) by the rule that released them
/// (`max-commit-delay`, `no-live-transaction`).
pub async fn holes_by_reason(pool: &PgPool) -> Result<BTreeMap<String, i64>, sqlx::Error> {
    let mut by_reason = BTreeMap::new();
    for r in sqlx::query("SELECT reason, count(*) AS n FROM inbox_hole GROUP BY reason")
        .fetch_all(pool)
        .await?
    {
        by_reason.insert(r.try_get::<String, _>("reason")?, r.try_get::<i64, _>("n")?);
    }
    Ok(by_reason)
}

/// Late rows found behind released holes (INBOX_LATE_ROW rows).
pub async fn late_rows_count(pool: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM inbox_late_row")
        .fetch_one(pool)
        .await
}

/// PROC_STATE rows by state text (ARCHIVED included).
pub async fn states_count(pool: &PgPool) -> Result<BTreeMap<String, i64>, sqlx::Error> {
    let mut by_state = BTreeMap::new();
    for r in sqlx::query("SELECT state, count(*) AS n FROM proc_state GROUP BY state")
        .fetch_all(pool)
        .await?
    {
        by_state.insert(r.try_get::<String, _>("state")?, r.try_get::<i64, _>("n")?);
    }
    Ok(by_state)
}

/// When the oldest unfinished row was enqueued (§5.1): live PENDING/FAILED
/// rows, ARCHIVED shadows excluded explicitly (§9.3).
pub async fn backlog_oldest(pool: &PgPool) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT min(enqueued_at) FROM proc_state \
         WHERE state IN ('PENDING', 'FAILED') AND state <> 'ARCHIVED'",
    )
    .fetch_one(pool)
    .await
}

/// MSG_EVENT rows by target, then status.
pub async fn events_count(
    pool: &PgPool,
) -> Result<BTreeMap<String, BTreeMap<String, i64>>, sqlx::Error> {
    let mut outbox: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for r in
        sqlx::query("SELECT target, status, count(*) AS n FROM msg_event GROUP BY target, status")
            .fetch_all(pool)
            .await?
    {
        outbox
            .entry(r.try_get("target")?)
            .or_default()
            .insert(r.try_get("status")?, r.try_get("n")?);
    }
    Ok(outbox)
}

/// When the oldest PENDING event of each target was created.
pub async fn events_oldest_pending(
    pool: &PgPool,
) -> Result<BTreeMap<String, DateTime<Utc>>, sqlx::Error> {
    let mut oldest = BTreeMap::new();
    for r in sqlx::query(
        "SELECT target, min(created_at) AS oldest FROM msg_event WHERE status = 'PENDING' GROUP BY target",
    )
    .fetch_all(pool)
    .await?
    {
        oldest.insert(r.try_get("target")?, r.try_get("oldest")?);
    }
    Ok(oldest)
}

/// Per bucket of `bucket_seconds` since `since`: messages finished and the
/// largest enqueue-to-finish time in seconds (the console's lag chart; live
/// rows only, archived ones left PROC_STATE with their times).
pub async fn finish_lag_per_bucket(
    pool: &PgPool,
    since: DateTime<Utc>,
    bucket_seconds: i64,
) -> Result<Vec<(DateTime<Utc>, i64, f64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT to_timestamp(floor(extract(epoch FROM finished_at) / $2) * $2) AS bucket, \
                count(*), \
                COALESCE(max(extract(epoch FROM finished_at - enqueued_at)), 0)::float8 \
         FROM proc_state WHERE finished_at >= $1 AND state <> 'ARCHIVED' \
         GROUP BY bucket ORDER BY bucket",
    )
    .bind(since)
    .bind(bucket_seconds as f64)
    .fetch_all(pool)
    .await
}

/// DEAD messages by error class (the console's Overview).
pub async fn dead_by_class(pool: &PgPool) -> Result<BTreeMap<String, i64>, sqlx::Error> {
    let rows: Vec<(Option<String>, i64)> = sqlx::query_as(
        "SELECT error_class, count(*) FROM proc_state WHERE state = 'DEAD' GROUP BY error_class",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(c, n)| (c.unwrap_or_else(|| "-".into()), n))
        .collect())
}
