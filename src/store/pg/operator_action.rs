//! OPERATOR_ACTION (migration 0002): an append-only record of what an
//! operator did to which row, and why.

use crate::domain::EventTarget;
use crate::domain::audit::{ActionFacts, AuditEvent};
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

/// Appends `a` and, in the same statement, its CloudEvent to the outbox
/// (KAFKA:audit, issue 37 item 3): the record exists exactly when the row
/// does, whether or not the caller holds a transaction. The row's id comes
/// first from its sequence, because the event names it. The record is keyed
/// by the acting user (one operator's actions in order), carries the
/// request's role and trace ([`crate::telemetry::request`]; `system` and no
/// trace outside a request) and the trace as its `traceparent`. Returns the id.
pub async fn insert(conn: &mut PgConnection, a: &NewAction<'_>) -> Result<i64, sqlx::Error> {
    let id: i64 =
        sqlx::query_scalar("SELECT nextval(pg_get_serial_sequence('operator_action', 'id'))")
            .fetch_one(&mut *conn)
            .await?;
    let request = crate::telemetry::request::current();
    let trace_id = request.as_ref().map(|r| r.trace.trace_id_hex());
    let event = AuditEvent::of(&ActionFacts {
        id,
        at: a.at,
        actor: a.actor,
        role: request.as_ref().map_or(SYSTEM_ROLE, |r| r.role.as_str()),
        action: a.action,
        target: a.target,
        reason: a.reason,
        trace_id: trace_id.as_deref(),
        detail: &a.detail,
    });
    // The leading comment marks msgx's own appends (the test harness checks
    // exactly these rows against schemas/).
    sqlx::query(
        "/* msgx:outbox-append */ WITH a AS ( \
           INSERT INTO operator_action (id, at, actor, action, target, reason, detail) \
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id) \
         INSERT INTO msg_event (target, partition_key, event_type, state_version, payload, created_at, traceparent) \
         SELECT $8, $3, 'UPSERT', a.id, $9, $2, $10 FROM a",
    )
    .bind(id)
    .bind(a.at)
    .bind(a.actor)
    .bind(a.action)
    .bind(a.target)
    .bind(a.reason)
    .bind(&a.detail)
    .bind(EventTarget::KafkaAudit.as_str())
    .bind(event.to_bytes())
    .bind(request.map(|r| r.trace.to_string()))
    .execute(conn)
    .await?;
    Ok(id)
}

/// The role of an action outside any request: msgx's own (a RESP matched
/// by the degraded rule).
pub const SYSTEM_ROLE: &str = "system";

/// The Audit page's filter (every field optional; all given must hold).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActionQuery {
    /// The acting user, exactly.
    pub actor: Option<String>,
    /// The action name, exactly (`EVENT_RESEND`, …).
    pub action: Option<String>,
    /// Applied at or after.
    pub from: Option<DateTime<Utc>>,
    /// Applied before.
    pub to: Option<DateTime<Utc>>,
    /// A substring of the target (`msg_event:4711`, `9001`, …).
    pub target: Option<String>,
}

/// One recorded action as the Audit page lists it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RecordedAction {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub reason: Option<String>,
    pub detail: serde_json::Value,
}

/// A page of actions matching `q`, newest first (by ID, which grows with
/// time), at most `limit`, with ID < `before` (the keyset cursor of the
/// next page). The time bounds use OPERATOR_ACTION's AT index.
pub async fn page(
    pool: &sqlx::PgPool,
    q: &ActionQuery,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<RecordedAction>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, at, actor, action, target, reason, detail FROM operator_action \
         WHERE ($1::text IS NULL OR actor = $1) \
           AND ($2::text IS NULL OR action = $2) \
           AND ($3::timestamptz IS NULL OR at >= $3) \
           AND ($4::timestamptz IS NULL OR at < $4) \
           AND ($5::text IS NULL OR strpos(target, $5) > 0) \
           AND ($6::bigint IS NULL OR id < $6) \
         ORDER BY id DESC LIMIT $7",
    )
    .bind(q.actor.as_deref())
    .bind(q.action.as_deref())
    .bind(q.from)
    .bind(q.to)
    .bind(q.target.as_deref())
    .bind(before)
    .bind(limit)
    .fetch_all(pool)
    .await
}
