//! OPERATOR_ACTION (migration 0002): an append-only record of what an
//! operator did to which row, and why.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

/// One recorded action.
#[derive(Debug, Clone)]
pub struct NewAction<'a> {
    pub at: DateTime<Utc>,
    pub actor: &'a str,
    /// One of the actions migration 0010's CHECK lists (`EVENT_RESEND`,
    /// `REPLAY`, `REQUEST_SEND`, …).
    pub action: &'a str,
    /// The row acted on, e.g. `msg_event:4711`.
    pub target: &'a str,
    pub reason: Option<&'a str>,
    /// What the row was.
    pub detail: serde_json::Value,
}

/// Appends `a`; returns its id.
pub async fn insert(conn: &mut PgConnection, a: &NewAction<'_>) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO operator_action (at, actor, action, target, reason, detail) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(a.at)
    .bind(a.actor)
    .bind(a.action)
    .bind(a.target)
    .bind(a.reason)
    .bind(&a.detail)
    .fetch_one(conn)
    .await
}
