//! INBOX_CURSOR, INBOX_HOLE, INBOX_LATE_ROW and the enqueue into PROC_STATE
//! (design §4.1 step 5: insertIfAbsent and the cursor write in one
//! transaction).

use crate::domain::watermark::{Cursor, ReleasedHole};
use crate::telemetry::trace_context::TraceParent;
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool, Row};

/// The cursor and its seeding fact.
#[derive(Debug, Clone, Copy)]
pub struct CursorRow {
    pub cursor: Cursor,
    pub seeded_at: Option<DateTime<Utc>>,
    /// Last change of W or HOLE_SINCE (`/readyz` judges a stall by it).
    pub updated_at: Option<DateTime<Utc>>,
}

/// Reads the cursor, locking it for the rest of the transaction.
pub async fn load_for_update(conn: &mut PgConnection) -> Result<CursorRow, sqlx::Error> {
    let r = sqlx::query(
        "SELECT w, hole_since, seeded_at, updated_at FROM inbox_cursor WHERE id = 1 FOR UPDATE",
    )
    .fetch_one(conn)
    .await?;
    Ok(CursorRow {
        cursor: Cursor {
            w: r.try_get("w")?,
            hole_since: r.try_get("hole_since")?,
        },
        seeded_at: r.try_get("seeded_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// Reads the cursor.
pub async fn load(pool: &PgPool) -> Result<CursorRow, sqlx::Error> {
    let mut conn = pool.acquire().await?;
    let r =
        sqlx::query("SELECT w, hole_since, seeded_at, updated_at FROM inbox_cursor WHERE id = 1")
            .fetch_one(&mut *conn)
            .await?;
    Ok(CursorRow {
        cursor: Cursor {
            w: r.try_get("w")?,
            hole_since: r.try_get("hole_since")?,
        },
        seeded_at: r.try_get("seeded_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// Writes W and HOLE_SINCE.
pub async fn save(
    conn: &mut PgConnection,
    c: Cursor,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE inbox_cursor SET w = $1, hole_since = $2, updated_at = $3 WHERE id = 1")
        .bind(c.w)
        .bind(c.hole_since)
        .bind(now)
        .execute(conn)
        .await?;
    Ok(())
}

/// Cutover seeding (§4.3): W and SEEDED_AT in one statement, only on a fresh
/// instance (W = 0, never seeded, no processing records). Returns false when
/// the instance is not fresh.
pub async fn seed(
    conn: &mut PgConnection,
    w: i64,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let n = sqlx::query(
        "UPDATE inbox_cursor SET w = $1, hole_since = NULL, seeded_at = $2, updated_at = $2 \
         WHERE id = 1 AND w = 0 AND seeded_at IS NULL AND NOT EXISTS (SELECT 1 FROM proc_state)",
    )
    .bind(w)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// The compat entry's insertIfAbsent (design §4.4): the row it just wrote
/// to the mailbox as PENDING, received now, source `compat`, with a new
/// trace context. An existing MSG_ID (the poller was first) is left as it is,
/// its trace too.
pub async fn enqueue_compat(
    pool: &PgPool,
    msg_id: i64,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO proc_state (msg_id, state, received_at, enqueued_at, updated_at, source, traceparent) \
         VALUES ($1, 'PENDING', $2, $2, $2, 'compat', $3) ON CONFLICT (msg_id) DO NOTHING",
    )
    .bind(msg_id)
    .bind(now)
    .bind(TraceParent::random().to_string())
    .execute(pool)
    .await?;
    Ok(())
}

/// insertIfAbsent: new PENDING rows, each with a new trace context (its
/// `traceparent`); an existing MSG_ID (re-scan, compat
/// entry) is neither counted nor an error, and keeps its trace. Returns the
/// number inserted.
pub async fn enqueue(
    conn: &mut PgConnection,
    ids: &[i64],
    received: &[Option<DateTime<Utc>>],
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    if ids.is_empty() {
        return Ok(0);
    }
    let traces: Vec<String> = ids
        .iter()
        .map(|_| TraceParent::random().to_string())
        .collect();
    Ok(sqlx::query(
        "INSERT INTO proc_state (msg_id, state, received_at, enqueued_at, updated_at, source, traceparent) \
         SELECT id, 'PENDING', r, $3, $3, 'poller', tp \
         FROM UNNEST($1::bigint[], $2::timestamptz[], $4::text[]) AS t(id, r, tp) \
         ON CONFLICT (msg_id) DO NOTHING",
    )
    .bind(ids)
    .bind(received)
    .bind(now)
    .bind(&traces)
    .execute(conn)
    .await?
    .rows_affected())
}

/// Records a released hole with the rule that released it (`h.reason`). Its late-row check time starts at the release: the
/// round that released it found no row inside.
pub async fn record_hole(
    conn: &mut PgConnection,
    h: ReleasedHole,
    now: DateTime<Utc>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO inbox_hole (first_id, last_id, first_seen, released_at, checked_at, reason) \
         VALUES ($1, $2, $3, $4, $4, $5) RETURNING id",
    )
    .bind(h.first_id)
    .bind(h.last_id)
    .bind(h.first_seen)
    .bind(now)
    .bind(h.reason.as_str())
    .fetch_one(conn)
    .await
}

/// A released hole to re-check for late commits.
#[derive(Debug, Clone, Copy)]
pub struct HoleRow {
    pub id: i64,
    pub first_id: i64,
    pub last_id: i64,
}

/// Holes released after `since` whose last late-row check is at or before
/// `checked_before` (or never made), the longest unchecked first, at most
/// `limit`: each hole at most once per recheck interval, and every hole in
/// turn however many there are.
pub async fn holes_due_for_check(
    pool: &PgPool,
    since: DateTime<Utc>,
    checked_before: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<HoleRow>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, first_id, last_id FROM inbox_hole \
         WHERE released_at >= $1 AND (checked_at IS NULL OR checked_at <= $2) \
         ORDER BY checked_at NULLS FIRST, id LIMIT $3",
    )
    .bind(since)
    .bind(checked_before)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(HoleRow {
                id: r.try_get("id")?,
                first_id: r.try_get("first_id")?,
                last_id: r.try_get("last_id")?,
            })
        })
        .collect()
}

/// The oldest late-row check among the holes released after `since` (a
/// hole never checked counts from its release): the poller keeps it in
/// memory so that it asks [`holes_due_for_check`] only when a hole is due.
pub async fn oldest_hole_check(
    pool: &PgPool,
    since: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT min(COALESCE(checked_at, released_at)) FROM inbox_hole WHERE released_at >= $1",
    )
    .bind(since)
    .fetch_one(pool)
    .await
}

/// Records that these holes were re-checked for late rows at `at`.
pub async fn mark_holes_checked(
    pool: &PgPool,
    hole_ids: &[i64],
    at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE inbox_hole SET checked_at = $2 WHERE id = ANY($1)")
        .bind(hole_ids)
        .bind(at)
        .execute(pool)
        .await?;
    Ok(())
}

/// Records a late row; true when it is new.
pub async fn record_late_row(
    pool: &PgPool,
    msg_id: i64,
    hole_id: i64,
    received_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let n = sqlx::query(
        "INSERT INTO inbox_late_row (msg_id, hole_id, detected_at, received_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (msg_id) DO NOTHING",
    )
    .bind(msg_id)
    .bind(hole_id)
    .bind(now)
    .bind(received_at)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// True when any processing record exists.
pub async fn has_proc_state(pool: &PgPool) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM proc_state)")
        .fetch_one(pool)
        .await
}

/// A released hole, for `msgx holes`.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct ReleasedHoleRow {
    pub id: i64,
    pub first_id: i64,
    pub last_id: i64,
    pub first_seen: DateTime<Utc>,
    pub released_at: DateTime<Utc>,
    /// `max-commit-delay` or `no-live-transaction`.
    pub reason: String,
}

/// The newest released holes first.
pub async fn released_holes(
    pool: &PgPool,
    limit: i64,
) -> Result<Vec<ReleasedHoleRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT id, first_id, last_id, first_seen, released_at, reason FROM inbox_hole \
         ORDER BY id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// A late row with what became of it, for `msgx holes`.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct LateRow {
    pub msg_id: i64,
    pub hole_id: Option<i64>,
    pub detected_at: DateTime<Utc>,
    pub received_at: Option<DateTime<Utc>>,
    pub resolution: Option<String>,
    /// Its PROC_STATE when it was re-sent or enqueued by hand since.
    pub state: Option<String>,
}

/// The newest late rows first.
pub async fn late_rows(pool: &PgPool, limit: i64) -> Result<Vec<LateRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT l.msg_id, l.hole_id, l.detected_at, l.received_at, l.resolution, p.state \
         FROM inbox_late_row l LEFT JOIN proc_state p ON p.msg_id = l.msg_id \
         ORDER BY l.msg_id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await
}
