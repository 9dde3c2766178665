//! COMPAT_REQUEST (migration 0020): every request to the compat entry
//! `POST /cminmsgs/send` (docs/production/http.md). A
//! request that writes the mailbox is recorded with its MSG_ID before the
//! mailbox transaction commits ([`begin_write`]), so the pump can always
//! tell a compat-written row by its MSG_ID and scope its identity
//! (docs/pipeline.md "Compat identities").

use super::sweep::SweepSql;
use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// What the entry answered, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Written to the mailbox and enqueued (200).
    Accepted,
    /// Written to the mailbox; the PostgreSQL enqueue failed (202).
    NotEnqueued,
    /// Recorded with its MSG_ID, the mailbox transaction not yet committed.
    Writing,
    /// The mailbox write or its commit failed (503).
    MailboxFailed,
    /// Refused before anything was written (4xx, or 503 in shadow mode).
    Refused,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Accepted => "ACCEPTED",
            Outcome::NotEnqueued => "NOT_ENQUEUED",
            Outcome::Writing => "WRITING",
            Outcome::MailboxFailed => "MAILBOX_FAILED",
            Outcome::Refused => "REFUSED",
        }
    }
}

/// One request to record.
#[derive(Debug, Clone, Default)]
pub struct NewRequest<'a> {
    pub peer: String,
    /// The authenticated client (token or certificate name); `None` when
    /// authentication failed.
    pub principal: Option<&'a str>,
    pub sndr: Option<&'a str>,
    pub payload_sha256: Option<&'a str>,
    /// Why it was refused (the answer's error text, cut).
    pub detail: Option<&'a str>,
}

/// A recorded request, for the console and `msgx`'s readers.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize)]
pub struct CompatRequest {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub peer: String,
    pub principal: Option<String>,
    pub sndr: Option<String>,
    pub payload_sha256: Option<String>,
    pub status: i16,
    pub outcome: String,
    pub detail: Option<String>,
    pub msg_id: Option<i64>,
}

/// Records a request answered without a mailbox write (`status`, e.g. 401,
/// 403, 415, 400, 422).
pub async fn record(
    pool: &PgPool,
    at: DateTime<Utc>,
    r: &NewRequest<'_>,
    status: u16,
    outcome: Outcome,
) -> Result<i64, sqlx::Error> {
    insert(pool, at, r, status, outcome, None).await
}

/// Records a request whose mailbox row `msg_id` is written but not yet
/// committed (outcome WRITING); [`finish`] sets the answer once it is.
/// The caller commits the mailbox transaction only after this succeeded.
pub async fn begin_write(
    pool: &PgPool,
    at: DateTime<Utc>,
    r: &NewRequest<'_>,
    msg_id: i64,
) -> Result<i64, sqlx::Error> {
    insert(pool, at, r, 0, Outcome::Writing, Some(msg_id)).await
}

async fn insert(
    pool: &PgPool,
    at: DateTime<Utc>,
    r: &NewRequest<'_>,
    status: u16,
    outcome: Outcome,
    msg_id: Option<i64>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO compat_request (at, peer, principal, sndr, payload_sha256, status, outcome, detail, msg_id) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(at)
    .bind(&r.peer)
    .bind(r.principal)
    .bind(r.sndr)
    .bind(r.payload_sha256)
    .bind(i16::try_from(status).unwrap_or(i16::MAX))
    .bind(outcome.as_str())
    .bind(r.detail)
    .bind(msg_id)
    .fetch_one(pool)
    .await
}

/// The answer of a request recorded by [`begin_write`].
pub async fn finish(
    pool: &PgPool,
    id: i64,
    status: u16,
    outcome: Outcome,
    detail: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE compat_request SET status = $2, outcome = $3, detail = $4 WHERE id = $1")
        .bind(id)
        .bind(i16::try_from(status).unwrap_or(i16::MAX))
        .bind(outcome.as_str())
        .bind(detail)
        .execute(pool)
        .await?;
    Ok(())
}

/// The newest `limit` requests, newest first.
pub async fn list(pool: &PgPool, limit: i64) -> Result<Vec<CompatRequest>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, at, peer, principal, sndr, payload_sha256, status, outcome, detail, msg_id \
         FROM compat_request ORDER BY id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// `retention`: records older than `msgx.http.compat-record-retention`,
/// except one whose mailbox row may still need it to scope its identity:
/// kept while that row is in PROC_STATE without a bound identity, or not
/// yet enqueued at all (beyond W). Once bound, the scoped identity lives in
/// IDENTITY_KEY and survives retries and replays.
macro_rules! freed {
    () => {
        "(c.msg_id IS NULL \
         OR EXISTS (SELECT 1 FROM proc_state p WHERE p.msg_id = c.msg_id AND p.identity_key IS NOT NULL) \
         OR (NOT EXISTS (SELECT 1 FROM proc_state p WHERE p.msg_id = c.msg_id) \
             AND c.msg_id <= (SELECT w FROM inbox_cursor WHERE id = 1)))"
    };
}

/// The retention sweep of COMPAT_REQUEST (see `freed!`).
pub const RETENTION_PURGE: SweepSql = SweepSql {
    count: concat!(
        "SELECT count(*) FROM compat_request c WHERE c.at < $1 AND ",
        freed!()
    ),
    apply: concat!(
        "DELETE FROM compat_request WHERE id IN (SELECT c.id FROM compat_request c \
         WHERE c.at < $1 AND ",
        freed!(),
        " ORDER BY c.at LIMIT $2) AND $3::timestamptz IS NOT NULL"
    ),
};
