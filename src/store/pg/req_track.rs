//! REQ_TRACK (design §1.2, §7.2; migrations 0001 and 0004): upstream
//! requests and their replies, PENDING → SENT → DONE | EXPIRED. At most one
//! open (PENDING/SENT) request per (type, operation day, sender), enforced by
//! a partial unique index. Every transition is a guarded UPDATE
//! (`WHERE state = …`), so a closed request is never changed again.

use super::sweep::SweepSql;
use crate::domain::request_state::RequestState;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{PgConnection, PgPool};

/// One REQ_TRACK row.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct ReqRow {
    pub id: i64,
    /// `RQFD` or `RQRD:<RTYP>`.
    pub req_type: String,
    /// The covered operation day (RQFD); `None` for reference data.
    pub operation_day: Option<NaiveDate>,
    pub sender: String,
    #[sqlx(try_from = "String")]
    pub state: RequestState,
    /// The 6-digit SEQN written in the request.
    pub seqn: String,
    pub routing_id: String,
    pub request_xml: String,
    pub coutmsgs_id: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub closed_at: Option<DateTime<Utc>>,
    pub matched_msg_id: Option<i64>,
    /// `EXACT` or `DEGRADED`.
    pub match_mode: Option<String>,
    /// The degraded-match audit text (C-23).
    pub match_audit: Option<String>,
    /// Why the request was closed.
    pub close_note: Option<String>,
}

const COLUMNS: &str = "id, req_type, operation_day, sender, state, seqn, routing_id, request_xml, \
     coutmsgs_id, created_at, sent_at, closed_at, matched_msg_id, match_mode, match_audit, close_note";

/// A request about to be registered.
#[derive(Debug, Clone)]
pub struct NewRequest<'a> {
    pub req_type: &'a str,
    pub operation_day: Option<NaiveDate>,
    pub sender: &'a str,
    pub seqn: &'a str,
    pub routing_id: &'a str,
    pub request_xml: &'a str,
    pub created_at: DateTime<Utc>,
}

/// The next outbound SEQN, 1..=999999 cycling (`request_seqn_seq`; never 0).
pub async fn next_seqn(conn: &mut PgConnection) -> Result<i32, sqlx::Error> {
    sqlx::query_scalar("SELECT nextval('request_seqn_seq')::int")
        .fetch_one(conn)
        .await
}

/// Expires the open request of the same (type, day, sender), if any: a new
/// request supersedes it (§7.2). Returns the expired IDs.
pub async fn expire_open_for_key(
    conn: &mut PgConnection,
    req_type: &str,
    operation_day: Option<NaiveDate>,
    sender: &str,
    now: DateTime<Utc>,
    note: &str,
) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE req_track SET state = 'EXPIRED', closed_at = $4, close_note = $5 \
         WHERE req_type = $1 AND operation_day IS NOT DISTINCT FROM $2 AND sender = $3 \
         AND state IN ('PENDING', 'SENT') RETURNING id",
    )
    .bind(req_type)
    .bind(operation_day)
    .bind(sender)
    .bind(now)
    .bind(note)
    .fetch_all(conn)
    .await
}

/// Inserts a PENDING request; returns the row.
pub async fn insert_pending(
    conn: &mut PgConnection,
    r: &NewRequest<'_>,
) -> Result<ReqRow, sqlx::Error> {
    let sql = format!(
        "INSERT INTO req_track (req_type, operation_day, sender, state, seqn, routing_id, request_xml, created_at) \
         VALUES ($1, $2, $3, 'PENDING', $4, $5, $6, $7) RETURNING {COLUMNS}"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(r.req_type)
        .bind(r.operation_day)
        .bind(r.sender)
        .bind(r.seqn)
        .bind(r.routing_id)
        .bind(r.request_xml)
        .bind(r.created_at)
        .fetch_one(conn)
        .await
}

/// PENDING → SENT, linked to its COUTMSGS row. `false` when the row is no
/// longer PENDING (superseded meanwhile): nothing changed.
pub async fn mark_sent(
    pool: &PgPool,
    id: i64,
    coutmsgs_id: i64,
    sent_at: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let n = sqlx::query(
        "UPDATE req_track SET state = 'SENT', coutmsgs_id = $2, sent_at = $3 \
         WHERE id = $1 AND state = 'PENDING'",
    )
    .bind(id)
    .bind(coutmsgs_id)
    .bind(sent_at)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// PENDING → EXPIRED (compensation found that it was never sent).
pub async fn expire_pending(
    pool: &PgPool,
    id: i64,
    now: DateTime<Utc>,
    note: &str,
) -> Result<bool, sqlx::Error> {
    let n = sqlx::query(
        "UPDATE req_track SET state = 'EXPIRED', closed_at = $2, close_note = $3 \
         WHERE id = $1 AND state = 'PENDING'",
    )
    .bind(id)
    .bind(now)
    .bind(note)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// The PENDING rows, oldest first (compensation).
pub async fn pending(pool: &PgPool, limit: i64) -> Result<Vec<ReqRow>, sqlx::Error> {
    let sql =
        format!("SELECT {COLUMNS} FROM req_track WHERE state = 'PENDING' ORDER BY id LIMIT $1");
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(limit)
        .fetch_all(pool)
        .await
}

/// Requests newest first; only PENDING/SENT with `open_only`.
pub async fn list(pool: &PgPool, open_only: bool, limit: i64) -> Result<Vec<ReqRow>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM req_track WHERE NOT $1 OR state IN ('PENDING', 'SENT') \
         ORDER BY id DESC LIMIT $2"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(open_only)
        .bind(limit)
        .fetch_all(pool)
        .await
}

/// One request by ID.
pub async fn get(pool: &PgPool, id: i64) -> Result<Option<ReqRow>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM req_track WHERE id = $1");
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(pool)
        .await
}

/// The requests a RESP of `req_type` may answer, newest first, locked until
/// the caller's transaction ends (so request-expiry or a new request cannot
/// close one between the match and the snapshot commit). `days` restricts
/// RQFD to the covered operation days; `seqn` (an echoed SEQN) to that SEQN.
/// At most `limit` rows: the newest decide (older ones are long closed).
pub async fn for_match(
    conn: &mut PgConnection,
    req_type: &str,
    days: Option<&[NaiveDate]>,
    seqn: Option<&str>,
    limit: i64,
) -> Result<Vec<ReqRow>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM req_track WHERE req_type = $1 \
         AND ($2::date[] IS NULL OR operation_day = ANY($2)) \
         AND ($3::text IS NULL OR seqn = $3) \
         ORDER BY id DESC LIMIT $4 FOR UPDATE"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(req_type)
        .bind(days.map(<[NaiveDate]>::to_vec))
        .bind(seqn)
        .bind(limit)
        .fetch_all(conn)
        .await
}

/// SENT → DONE with the RESP that answered it, on the caller's transaction
/// (the snapshot's: DONE only once the data is committed, §7.2). `false`
/// when the row is not SENT: nothing changed.
pub async fn complete(
    conn: &mut PgConnection,
    id: i64,
    msg_id: i64,
    mode: &str,
    audit: Option<&str>,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let n = sqlx::query(
        "UPDATE req_track SET state = 'DONE', closed_at = $5, matched_msg_id = $2, \
         match_mode = $3, match_audit = $4, close_note = 'answered by message ' || $2::text \
         WHERE id = $1 AND state = 'SENT'",
    )
    .bind(id)
    .bind(msg_id)
    .bind(mode)
    .bind(audit)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// Closed (DONE / EXPIRED) requests past `msgx.request.retention` (G-REQ-TRACK-RETENTION).
pub const CLOSED_PURGE: SweepSql = SweepSql {
    count: "SELECT count(*) FROM req_track WHERE state IN ('DONE', 'EXPIRED') AND closed_at < $1",
    apply: "DELETE FROM req_track WHERE id IN (SELECT id FROM req_track \
            WHERE state IN ('DONE', 'EXPIRED') AND closed_at < $1 ORDER BY closed_at LIMIT $2) \
            AND $3::timestamptz IS NOT NULL",
};

/// SENT requests without a RESP within `msgx.request.expiry` → EXPIRED.
pub const OVERDUE_EXPIRY: SweepSql = SweepSql {
    count: "SELECT count(*) FROM req_track WHERE state = 'SENT' AND sent_at < $1",
    apply: "UPDATE req_track SET state = 'EXPIRED', closed_at = $3, \
            close_note = 'expired: no RESP within msgx.request.expiry' WHERE id IN \
            (SELECT id FROM req_track WHERE state = 'SENT' AND sent_at < $1 ORDER BY id LIMIT $2) \
            AND state = 'SENT'",
};
