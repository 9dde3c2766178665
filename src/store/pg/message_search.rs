//! The console's Messages page: PROC_STATE rows matching a
//! filter, newest first, in keyset pages by MSG_ID (`msg_id < before`), so
//! page N costs what page 1 costs on a table of millions of rows. A state
//! filter reads `proc_state_state_msg_idx`, a FLID filter
//! `msg_event_flid_msg_idx` (migration 0010); the plans are checked in
//! tests/it/console.rs.

use crate::domain::proc_state::ProcState;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgPool, Postgres, QueryBuilder};

/// What to match; every `None` matches all. ARCHIVED shadows (no type, no
/// error: §9.3) are left out unless `state` asks for them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageQuery {
    pub state: Option<ProcState>,
    pub error_class: Option<String>,
    pub msg_type: Option<String>,
    pub msg_styp: Option<String>,
    /// Messages that wrote a KAFKA:msg event for this flight.
    pub flid: Option<i64>,
    /// Enqueued at or after.
    pub from: Option<DateTime<Utc>>,
    /// Enqueued before.
    pub to: Option<DateTime<Utc>>,
    /// Case-insensitive substring of LAST_ERROR or OUTCOME_REASON.
    pub text: Option<String>,
}

/// One row of the list.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct MessageRow {
    pub msg_id: i64,
    #[sqlx(try_from = "String")]
    pub state: ProcState,
    pub msg_type: Option<String>,
    pub msg_styp: Option<String>,
    pub error_class: Option<String>,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub outcome_reason: Option<String>,
    pub enqueued_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
}

fn where_clause(b: &mut QueryBuilder<Postgres>, q: &MessageQuery) {
    b.push(" WHERE TRUE");
    match &q.state {
        Some(s) => {
            b.push(" AND state = ").push_bind(s.as_str());
        }
        None => {
            b.push(" AND state <> ")
                .push_bind(ProcState::Archived.as_str());
        }
    }
    if let Some(c) = &q.error_class {
        b.push(" AND error_class = ").push_bind(c.clone());
    }
    if let Some(t) = &q.msg_type {
        b.push(" AND msg_type = ").push_bind(t.clone());
    }
    if let Some(s) = &q.msg_styp {
        b.push(" AND msg_styp = ").push_bind(s.clone());
    }
    if let Some(f) = q.flid {
        b.push(
            " AND msg_id IN (SELECT e.msg_id FROM msg_event e \
             WHERE e.target = 'KAFKA:msg' AND e.partition_key = ",
        )
        .push_bind(f.to_string())
        .push(" AND e.msg_id IS NOT NULL)");
    }
    if let Some(t) = q.from {
        b.push(" AND enqueued_at >= ").push_bind(t);
    }
    if let Some(t) = q.to {
        b.push(" AND enqueued_at < ").push_bind(t);
    }
    if let Some(text) = &q.text {
        let pattern = format!("%{}%", like_escaped(text));
        b.push(" AND (last_error ILIKE ")
            .push_bind(pattern.clone())
            .push(" OR outcome_reason ILIKE ")
            .push_bind(pattern)
            .push(")");
    }
}

/// `%`, `_` and `\` in the operator's text match themselves.
fn like_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

const PAGE_COLUMNS: &str = "SELECT msg_id, state, msg_type, msg_styp, error_class, attempts, \
     last_error, outcome_reason, enqueued_at, finished_at FROM proc_state";

fn page_query(
    prefix: &str,
    q: &MessageQuery,
    before: Option<i64>,
    limit: i64,
) -> QueryBuilder<Postgres> {
    let mut b = QueryBuilder::new(format!("{prefix}{PAGE_COLUMNS}"));
    where_clause(&mut b, q);
    if let Some(id) = before {
        b.push(" AND msg_id < ").push_bind(id);
    }
    b.push(" ORDER BY msg_id DESC LIMIT ").push_bind(limit);
    b
}

/// At most `limit` matching rows below `before` (all when `None`), newest first.
pub async fn page(
    pool: &PgPool,
    q: &MessageQuery,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<MessageRow>, sqlx::Error> {
    page_query("", q, before, limit)
        .build_query_as()
        .fetch_all(pool)
        .await
}

/// The plan PostgreSQL picks for [`page`] (`EXPLAIN`, one line per row), so
/// a test can check that paging reads an index.
pub async fn page_plan(
    pool: &PgPool,
    q: &MessageQuery,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<String>, sqlx::Error> {
    page_query("EXPLAIN ", q, before, limit)
        .build_query_scalar()
        .fetch_all(pool)
        .await
}

/// How many rows match (the count a bulk action shows before it is confirmed).
pub async fn count(pool: &PgPool, q: &MessageQuery) -> Result<i64, sqlx::Error> {
    let mut b = QueryBuilder::new("SELECT count(*) FROM proc_state");
    where_clause(&mut b, q);
    b.build_query_scalar().fetch_one(pool).await
}

/// The MSG_IDs of at most `limit` matching rows, oldest first (what a bulk
/// action applies to).
pub async fn ids(pool: &PgPool, q: &MessageQuery, limit: i64) -> Result<Vec<i64>, sqlx::Error> {
    let mut b = QueryBuilder::new("SELECT msg_id FROM proc_state");
    where_clause(&mut b, q);
    b.push(" ORDER BY msg_id LIMIT ").push_bind(limit);
    b.build_query_scalar().fetch_all(pool).await
}
