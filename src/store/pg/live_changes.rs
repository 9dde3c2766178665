//! What changed, for the console's live view (docs/console.md "Live
//! view"): the two statements its single poller runs, each a handful of
//! index lookups whatever the size of the tables, so one poll costs the
//! same for one viewer or a hundred.
//!
//! A PROC_STATE row is reported changed by its `(msg_id, xmin)`: `xmin`
//! (the transaction that last wrote the row) differs after every update,
//! so two changes stamped with the same `updated_at` (a clock that did not
//! move) are still told apart.

use crate::domain::proc_state::ProcState;
use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// A PROC_STATE row written at or after the poller's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct ChangedRow {
    pub msg_id: i64,
    pub updated_at: DateTime<Utc>,
    /// The row version: the id of the transaction that last wrote it.
    pub xmin: i64,
}

fn states() -> Vec<String> {
    ProcState::ALL
        .into_iter()
        .map(|s| s.as_str().to_string())
        .collect()
}

/// The latest `updated_at` of PROC_STATE (one backward index step per
/// state on `proc_state_state_updated_idx`); `None` on an empty table.
pub async fn latest_update(pool: &PgPool) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT max(x.m) FROM unnest($1::text[]) AS s(state) \
         CROSS JOIN LATERAL (SELECT max(updated_at) AS m FROM proc_state p \
                             WHERE p.state = s.state) x",
    )
    .bind(states())
    .fetch_one(pool)
    .await
}

/// The rows written at or after `since`, newest first, at most `limit` in
/// all (and per state, so each state reads at most `limit` index entries).
pub async fn rows_since(
    pool: &PgPool,
    since: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<ChangedRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT p.msg_id, p.updated_at, p.xmin FROM unnest($1::text[]) AS s(state) \
         CROSS JOIN LATERAL ( \
           SELECT msg_id, updated_at, xmin::text::bigint AS xmin FROM proc_state q \
           WHERE q.state = s.state AND q.updated_at >= $2 \
           ORDER BY q.updated_at DESC LIMIT $3) p \
         ORDER BY p.updated_at DESC LIMIT $3",
    )
    .bind(states())
    .bind(since)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// A text that differs whenever what the Overview shows beside PROC_STATE
/// has changed: the cursor row's version, the newest operator action,
/// released hole, late row, outbox event and send, the versions of the
/// first pending events of each target, of the latest job runs and of the
/// job pauses. Every part reads an index or a table of a few rows.
pub async fn overview_fingerprint(pool: &PgPool) -> Result<String, sqlx::Error> {
    let targets: Vec<String> = crate::domain::EventTarget::ALL
        .into_iter()
        .map(|t| t.as_str().to_string())
        .collect();
    let text: Option<String> = sqlx::query_scalar(
        "SELECT concat_ws('|', \
           (SELECT xmin::text FROM inbox_cursor WHERE id = 1), \
           (SELECT max(id)::text FROM operator_action), \
           (SELECT max(id)::text FROM inbox_hole), \
           (SELECT count(*)::text FROM inbox_late_row), \
           (SELECT max(event_id)::text FROM msg_event), \
           (SELECT max(sent_at)::text FROM msg_event WHERE status = 'SENT'), \
           (SELECT string_agg(t.target || ':' || coalesce(e.v, ''), ',') \
              FROM unnest($1::text[]) AS t(target) \
              CROSS JOIN LATERAL (SELECT string_agg(event_id::text || '.' || xmin::text, ',') AS v \
                FROM (SELECT event_id, xmin FROM msg_event m \
                      WHERE m.target = t.target AND m.status = 'PENDING' \
                      ORDER BY event_id LIMIT 8) f) e), \
           (SELECT string_agg(id::text || '.' || xmin::text, ',') \
              FROM (SELECT id, xmin FROM job_run ORDER BY started_at DESC LIMIT 16) r), \
           (SELECT string_agg(job || '.' || xmin::text, ',' ORDER BY job) FROM job_pause))",
    )
    .bind(targets)
    .fetch_one(pool)
    .await?;
    Ok(text.unwrap_or_default())
}
