//! MSG_EVENT, the transactional outbox (design §1.2, §8): the statements of
//! the processors' appends, the delivery jobs and the operator's DLQ
//! commands, one function each.
//!
//! Appends: KAFKA:msg rows are appended (EVENT_ID from the global sequence =
//! delivery order); KAFKA:schd is one row per FLID, replaced only by a version
//! ≥ the stored one, with a fresh EVENT_ID as the write generation, reset to
//! PENDING (§8.2).

use super::sweep::SweepSql;
use crate::domain::delivery::FailureUpdate;
use crate::domain::{DomainEvent, EventTarget};
use crate::telemetry::trace_context::TraceParent;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgPool};

/// A PENDING row as a delivery job reads it (the batch is frozen at this read).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PendingEvent {
    pub event_id: i64,
    /// `KAFKA:msg`, … (the dispatcher routes by it: KAFKA:audit rows ride
    /// with KAFKA:msg).
    pub target: String,
    /// The FLID (the series key on KAFKA:season, the user on KAFKA:audit).
    pub partition_key: String,
    /// `UPSERT` or `TOMBSTONE`.
    pub event_type: String,
    pub state_version: i64,
    /// `None` = send a null value.
    pub payload: Option<Vec<u8>>,
    pub attempts: i32,
    pub first_failure_at: Option<DateTime<Utc>>,
    /// Commit time of this version (the start of the delivery latency).
    pub created_at: DateTime<Utc>,
    /// The `traceparent` of the message that wrote this row (migration
    /// 0011): the record's header. `None` for rows older than that.
    pub traceparent: Option<String>,
}

impl PendingEvent {
    /// The row's trace context; `None` without one or when the stored text
    /// does not parse (then the record goes without the header rather than
    /// with an invalid one).
    pub fn trace(&self) -> Option<TraceParent> {
        self.traceparent
            .as_deref()
            .and_then(|t| TraceParent::parse(t).ok())
    }
}

/// [`fetch_due_msg`]'s statement ($1 now, $2 limit, $3 after): walked
/// through `msg_event_dispatch_idx` (migration 0029), which holds exactly
/// the PENDING rows of these targets in EVENT_ID order.
pub const DUE_MSG_SQL: &str = "SELECT e.event_id, e.target, e.partition_key, e.event_type, e.state_version, e.payload, \
                e.attempts, e.first_failure_at, e.created_at, e.traceparent \
         FROM msg_event e \
         WHERE e.target IN ('KAFKA:msg', 'KAFKA:audit') AND e.status = 'PENDING' \
           AND (e.next_attempt_at IS NULL OR e.next_attempt_at <= $1) \
           AND e.event_id > $3 \
           AND NOT EXISTS (SELECT 1 FROM msg_event h \
                           WHERE h.target = e.target AND h.status = 'PENDING' \
                             AND h.partition_key = e.partition_key \
                             AND h.event_id < e.event_id \
                             AND h.next_attempt_at > $1) \
         ORDER BY e.event_id \
         LIMIT $2";

/// Due rows of the appended targets (KAFKA:msg, and KAFKA:audit keyed by
/// user, which the same Dispatcher delivers) with EVENT_ID > `after`, in
/// EVENT_ID order, leaving out every row of a key whose earlier PENDING row
/// of the same target is still backing off (§8.1: a failed head pauses its
/// FLID, across runs too).
pub async fn fetch_due_msg(
    pool: &PgPool,
    now: DateTime<Utc>,
    after: i64,
    limit: i64,
) -> Result<Vec<PendingEvent>, sqlx::Error> {
    sqlx::query_as(DUE_MSG_SQL)
        .bind(now)
        .bind(limit)
        .bind(after)
        .fetch_all(pool)
        .await
}

/// Due KAFKA:schd rows (one per FLID by the schema) with EVENT_ID > `after`,
/// oldest generation first (§8.2).
pub async fn fetch_due_schd(
    pool: &PgPool,
    now: DateTime<Utc>,
    after: i64,
    limit: i64,
) -> Result<Vec<PendingEvent>, sqlx::Error> {
    fetch_due_latest(pool, EventTarget::KafkaSchd, now, after, limit).await
}

/// Due rows of a one-row-per-key target (KAFKA:schd per FLID, KAFKA:season
/// per series key) with EVENT_ID > `after`, oldest generation first.
pub async fn fetch_due_latest(
    pool: &PgPool,
    target: EventTarget,
    now: DateTime<Utc>,
    after: i64,
    limit: i64,
) -> Result<Vec<PendingEvent>, sqlx::Error> {
    sqlx::query_as(
        "SELECT event_id, target, partition_key, event_type, state_version, payload, attempts, first_failure_at, \
                created_at, traceparent \
         FROM msg_event \
         WHERE target = $4 AND status = 'PENDING' \
           AND (next_attempt_at IS NULL OR next_attempt_at <= $1) \
           AND event_id > $3 \
         ORDER BY event_id \
         LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .bind(after)
    .bind(target.as_str())
    .fetch_all(pool)
    .await
}

/// A KAFKA:msg row that [`mark_msg_sent`] moved to SENT, with the start
/// times of its message's end-to-end latency, read in the
/// same statement. Both are `None` for an event without a message or whose
/// PROC_STATE row is gone or archived (a shadow row keeps neither).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SentMsg {
    pub event_id: i64,
    /// PROC_STATE.ENQUEUED_AT: msgx's own clock.
    pub enqueued_at: Option<DateTime<Utc>>,
    /// PROC_STATE.RECEIVED_AT of a mailbox row (`source = 'poller'`): the
    /// AODB's clock. `None` for the compat entry, whose RECEIVED_AT is msgx's.
    pub received_at: Option<DateTime<Utc>>,
}

/// Marks confirmed KAFKA:msg (and KAFKA:audit) rows SENT with SENT_AT in
/// the same statement (§1.2). Returns the rows changed — only PENDING rows move, so an event is
/// returned once however often it was sent — each with its message's
/// ENQUEUED_AT and RECEIVED_AT, joined on PROC_STATE's primary key.
pub async fn mark_msg_sent(
    conn: &mut PgConnection,
    event_ids: &[i64],
    now: DateTime<Utc>,
) -> Result<Vec<SentMsg>, sqlx::Error> {
    // The BETWEEN bounds let any plan use an index range, also without table
    // statistics (an ANY() filter alone may scan every PENDING row).
    let (Some(lo), Some(hi)) = (event_ids.iter().min(), event_ids.iter().max()) else {
        return Ok(Vec::new());
    };
    sqlx::query_as(
        "WITH sent AS ( \
           UPDATE msg_event SET status = 'SENT', sent_at = $2, next_attempt_at = NULL \
           WHERE event_id = ANY($1) AND event_id BETWEEN $3 AND $4 \
             AND status = 'PENDING' AND target IN ('KAFKA:msg', 'KAFKA:audit') \
           RETURNING event_id, msg_id) \
         SELECT s.event_id, p.enqueued_at, \
                CASE WHEN p.source = 'poller' THEN p.received_at END AS received_at \
         FROM sent s LEFT JOIN proc_state p ON p.msg_id = s.msg_id",
    )
    .bind(event_ids)
    .bind(now)
    .bind(lo)
    .bind(hi)
    .fetch_all(conn)
    .await
}

/// Marks confirmed KAFKA:schd rows SENT only where both the generation
/// (EVENT_ID) and the STATE_VERSION are still the ones read (§8.2): a row
/// replaced meanwhile stays PENDING for the next round. Returns the marked IDs.
pub async fn mark_schd_sent(
    conn: &mut PgConnection,
    sent: &[(i64, i64)],
    now: DateTime<Utc>,
) -> Result<Vec<i64>, sqlx::Error> {
    mark_latest_sent(conn, EventTarget::KafkaSchd, sent, now).await
}

/// [`mark_schd_sent`] for any one-row-per-key target (KAFKA:season too).
pub async fn mark_latest_sent(
    conn: &mut PgConnection,
    target: EventTarget,
    sent: &[(i64, i64)],
    now: DateTime<Utc>,
) -> Result<Vec<i64>, sqlx::Error> {
    let ids: Vec<i64> = sent.iter().map(|(id, _)| *id).collect();
    let versions: Vec<i64> = sent.iter().map(|(_, v)| *v).collect();
    // SKIP LOCKED (burst catch-up): a row locked now is being
    // replaced by a pump transaction (the upsert of a newer version), which
    // took the rows in its own order; waiting for it deadlocked under a
    // 1,000 msg/s burst (PostgreSQL aborted one side after
    // `deadlock_timeout`, 1 s, and a pump group rolled back). Skipped, the
    // row is either replaced (a newer version, PENDING) or, if that
    // transaction rolls back, stays PENDING and is sent again: a duplicate of
    // the same version, which at-least-once delivery allows.
    sqlx::query_scalar(
        "WITH locked AS ( \
           SELECT m.event_id FROM msg_event m \
           JOIN unnest($1::bigint[], $2::bigint[]) AS r(event_id, state_version) \
             ON m.event_id = r.event_id AND m.state_version = r.state_version \
           WHERE m.status = 'PENDING' AND m.target = $4 \
           FOR UPDATE OF m SKIP LOCKED) \
         UPDATE msg_event m SET status = 'SENT', sent_at = $3, next_attempt_at = NULL \
         FROM locked l WHERE m.event_id = l.event_id \
         RETURNING m.event_id",
    )
    .bind(&ids)
    .bind(&versions)
    .bind(now)
    .bind(target.as_str())
    .fetch_all(conn)
    .await
}

/// Records a failed send on the row read (same EVENT_ID and STATE_VERSION,
/// still PENDING), with its class in ERROR_CLASS (migration 0005). Returns
/// false when the row changed meanwhile.
pub async fn record_failure(
    conn: &mut PgConnection,
    event_id: i64,
    state_version: i64,
    update: &FailureUpdate,
    error: &str,
) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query(
        "UPDATE msg_event SET status = $3, attempts = $4, next_attempt_at = $5, \
                first_failure_at = $6, last_error = $7, error_class = $8 \
         WHERE event_id = $1 AND state_version = $2 AND status = 'PENDING'",
    )
    .bind(event_id)
    .bind(state_version)
    .bind(update.status().as_str())
    .bind(update.attempts)
    .bind(update.next_attempt_at)
    .bind(update.first_failure_at)
    .bind(crate::error_text::cut(error).as_ref())
    .bind(update.class.as_str())
    .execute(conn)
    .await?
    .rows_affected()
        == 1)
}

/// A DEAD row, as `msgx events dead` shows it (payload reduced to its size).
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct DeadEvent {
    pub event_id: i64,
    pub target: String,
    pub partition_key: String,
    pub event_type: String,
    pub state_version: i64,
    pub msg_id: Option<i64>,
    pub attempts: i32,
    pub first_failure_at: Option<DateTime<Utc>>,
    /// The class it died of: `MESSAGE_SPECIFIC`, `TRANSIENT` or `IN_DOUBT`
    /// (`None` for a row that died before migration 0005 without a known class).
    pub error_class: Option<String>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Payload size in bytes; `None` for a null value.
    pub payload_bytes: Option<i32>,
    /// The payload itself (not shown by `events dead`; recorded on discard).
    #[serde(skip)]
    pub payload: Option<Vec<u8>>,
}

const DEAD_COLUMNS: &str = "event_id, target, partition_key, event_type, state_version, msg_id, \
     attempts, first_failure_at, error_class, last_error, created_at, octet_length(payload) AS payload_bytes, payload";

/// DEAD rows (the DLQ, §8.3), oldest first.
pub async fn list_dead(pool: &PgPool, limit: i64) -> Result<Vec<DeadEvent>, sqlx::Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {DEAD_COLUMNS} FROM msg_event WHERE status = 'DEAD' ORDER BY event_id LIMIT $1"
    )))
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// DEAD → PENDING with a fresh retry budget (§9.1 replay rules: attempts,
/// next attempt and error reset). Returns the row as it was, or `None` when
/// `event_id` is not a DEAD row.
pub async fn resend_dead(
    conn: &mut PgConnection,
    event_id: i64,
) -> Result<Option<DeadEvent>, sqlx::Error> {
    let before: Option<DeadEvent> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {DEAD_COLUMNS} FROM msg_event WHERE event_id = $1 AND status = 'DEAD' FOR UPDATE"
    )))
    .bind(event_id)
    .fetch_optional(&mut *conn)
    .await?;
    if before.is_some() {
        sqlx::query(
            "UPDATE msg_event SET status = 'PENDING', attempts = 0, next_attempt_at = NULL, \
                    first_failure_at = NULL, last_error = NULL, error_class = NULL \
             WHERE event_id = $1 AND status = 'DEAD'",
        )
        .bind(event_id)
        .execute(&mut *conn)
        .await?;
    }
    Ok(before)
}

/// Deletes a DEAD row (the operator resolved it). Returns the row as it was,
/// or `None` when `event_id` is not a DEAD row.
pub async fn delete_dead(
    conn: &mut PgConnection,
    event_id: i64,
) -> Result<Option<DeadEvent>, sqlx::Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "DELETE FROM msg_event WHERE event_id = $1 AND status = 'DEAD' RETURNING {DEAD_COLUMNS}"
    )))
    .bind(event_id)
    .fetch_optional(conn)
    .await
}

/// Rows per INSERT of [`append_many`].
const APPEND_CHUNK: usize = 1000;

/// Stores the events of one decision, in order: all KAFKA:msg rows first
/// (EVENT_IDs allocated in list order), then the KAFKA:schd upserts (a
/// decision writes each flight once, so one row per FLID).
pub async fn append(
    conn: &mut PgConnection,
    events: &[DomainEvent],
    msg_id: Option<i64>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    append_many(conn, &[(msg_id, events)], now).await
}

/// [`append`] for the decisions of several consecutive messages (the pump's
/// group commit), in one statement whose rows get their
/// EVENT_IDs in exactly the order the messages one by one would have: per
/// message its KAFKA:msg rows, then its KAFKA:schd upserts. A FLID upserted
/// by several messages is sent once, by the occurrence that one-by-one
/// processing leaves in place (the last with a STATE_VERSION at least that of
/// the earlier ones); one statement cannot update a row twice.
pub async fn append_many(
    conn: &mut PgConnection,
    batch: &[(Option<i64>, &[DomainEvent])],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    // The surviving KAFKA:schd occurrence per FLID: (message index, event index).
    let mut schd: std::collections::HashMap<i64, (usize, usize, i64)> =
        std::collections::HashMap::new();
    for (m, (_, events)) in batch.iter().enumerate() {
        for (i, e) in events.iter().enumerate() {
            if e.target() == EventTarget::KafkaSchd {
                let v = e.state_version();
                schd.entry(e.partition_key())
                    .and_modify(|kept| {
                        if v >= kept.2 {
                            *kept = (m, i, v);
                        }
                    })
                    .or_insert((m, i, v));
            }
        }
    }
    let mut rows: Vec<(&'static str, Option<i64>, &DomainEvent)> = Vec::new();
    for (m, (msg_id, events)) in batch.iter().enumerate() {
        for e in events
            .iter()
            .filter(|e| e.target() == EventTarget::KafkaMsg)
        {
            rows.push(("KAFKA:msg", *msg_id, e));
        }
        for (i, e) in events.iter().enumerate() {
            if e.target() == EventTarget::KafkaSchd
                && schd
                    .get(&e.partition_key())
                    .is_some_and(|k| (k.0, k.1) == (m, i))
            {
                rows.push(("KAFKA:schd", *msg_id, e));
            }
        }
    }
    if rows.is_empty() {
        return Ok(());
    }
    // In statements of at most APPEND_CHUNK rows, in order (EVENT_IDs stay
    // in list order across them), so a 20,000-flight schedule never encodes
    // all its payloads into one buffer. A FLID occurs at
    // most once in `rows`, so no statement updates a row a previous one wrote.
    for chunk in rows.chunks(APPEND_CHUNK) {
        let targets: Vec<&str> = chunk.iter().map(|r| r.0).collect();
        let keys: Vec<String> = chunk
            .iter()
            .map(|r| r.2.partition_key().to_string())
            .collect();
        let types: Vec<&str> = chunk
            .iter()
            .map(|r| match r.2.event_type() {
                crate::domain::EventType::Upsert => "UPSERT",
                crate::domain::EventType::Tombstone => "TOMBSTONE",
            })
            .collect();
        let versions: Vec<i64> = chunk.iter().map(|r| r.2.state_version()).collect();
        let msg_ids: Vec<Option<i64>> = chunk.iter().map(|r| r.1).collect();
        let payloads: Vec<Option<Vec<u8>>> = chunk.iter().map(|r| r.2.to_bytes()).collect();
        // KAFKA:msg rows are outside the partial unique index, so the ON
        // CONFLICT clause only ever applies to KAFKA:schd rows (§8.2: replaced
        // only forward in STATE_VERSION, with a fresh EVENT_ID as generation).
        // The leading comment marks msgx's own appends: the test harness
        // checks exactly these rows against schemas/ (tests/it/common), not
        // rows a test inserts by hand. Each row takes its
        // message's trace context from PROC_STATE.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "/* msgx:outbox-append */ INSERT INTO msg_event (target, partition_key, event_type, state_version, msg_id, payload, created_at, traceparent) \
             SELECT g, k, t, v, m, p, $7, {TRACE_OF_M} \
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bytea[]) \
                  WITH ORDINALITY AS x(g, k, t, v, m, p, n) \
             ORDER BY n {}",
            replace_forward(EventTarget::KafkaSchd)
        )))
        .bind(&targets)
        .bind(&keys)
        .bind(&types)
        .bind(&versions)
        .bind(&msg_ids)
        .bind(&payloads)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The trace context of the appended row's message `m` (NULL without one).
const TRACE_OF_M: &str = "(SELECT ps.traceparent FROM proc_state ps WHERE ps.msg_id = m)";

/// The conflict clause of a one-row-per-key target (KAFKA:schd per FLID,
/// KAFKA:season per series, §8.2): the row is replaced only forward in
/// STATE_VERSION, with a fresh EVENT_ID as generation, reset to PENDING, and
/// with the trace of the message that replaced it.
fn replace_forward(target: EventTarget) -> String {
    format!(
        "ON CONFLICT (partition_key) WHERE target = '{}' DO UPDATE SET \
               event_id = EXCLUDED.event_id, event_type = EXCLUDED.event_type, \
               state_version = EXCLUDED.state_version, msg_id = EXCLUDED.msg_id, \
               traceparent = EXCLUDED.traceparent, \
               payload = EXCLUDED.payload, status = 'PENDING', attempts = 0, next_attempt_at = NULL, \
               first_failure_at = NULL, last_error = NULL, error_class = NULL, \
               created_at = EXCLUDED.created_at, sent_at = NULL \
             WHERE msg_event.state_version <= EXCLUDED.state_version",
        target.as_str()
    )
}

/// Stores the `season` records of one stored SCHS, in
/// order: one KAFKA:season row per record key, replaced only forward in
/// STATE_VERSION (the season revision) with a fresh EVENT_ID as generation
/// and reset to PENDING, exactly as KAFKA:schd per FLID (§8.2). A key occurs
/// at most once in `events` (the domain guarantees unique series keys).
pub async fn append_season(
    conn: &mut PgConnection,
    events: &[crate::domain::season::SeasonEvent],
    msg_id: i64,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    for chunk in events.chunks(APPEND_CHUNK) {
        let keys: Vec<&str> = chunk.iter().map(|e| e.key.as_str()).collect();
        let types: Vec<&str> = chunk
            .iter()
            .map(|e| {
                if e.payload.is_some() {
                    "UPSERT"
                } else {
                    "TOMBSTONE"
                }
            })
            .collect();
        let versions: Vec<i64> = chunk.iter().map(|e| e.revision).collect();
        let payloads: Vec<Option<&[u8]>> = chunk.iter().map(|e| e.payload.as_deref()).collect();
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "/* msgx:outbox-append */ INSERT INTO msg_event (target, partition_key, event_type, state_version, msg_id, payload, created_at, traceparent) \
             SELECT 'KAFKA:season', k, t, v, m, p, $6, {TRACE_OF_M} \
             FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::bytea[]) WITH ORDINALITY AS x(k, t, v, p, n) \
             CROSS JOIN (SELECT $5::bigint AS m) AS msg \
             ORDER BY n {}",
            replace_forward(EventTarget::KafkaSeason)
        )))
        .bind(&keys)
        .bind(&types)
        .bind(&versions)
        .bind(&payloads)
        .bind(msg_id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// One write of a flight as its KAFKA:msg notification recorded it
/// (`msgx flight show`), with the processing outcome of the message.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct FlightChange {
    pub event_id: i64,
    pub state_version: i64,
    pub msg_id: Option<i64>,
    /// `TYPE-STYP`, from the notification.
    pub kind: Option<String>,
    /// `UPSERT` or `DELETE`.
    pub change: Option<String>,
    pub changed_fields: Option<serde_json::Value>,
    /// The field-level changes (docs/events.md "Field-level changes"; absent
    /// in notifications older than issue 36). Not in `flight show --json`.
    #[serde(skip)]
    pub changes: Option<serde_json::Value>,
    /// CREATE, UPDATE, DELETE, MERGE or REQUEST (absent before issue 36).
    #[serde(skip)]
    pub event_kind: Option<String>,
    /// The write's audit time.
    pub at: Option<String>,
    /// The message's PROC_STATE (from PROC_STATE_HST once archived).
    pub outcome: Option<String>,
    pub received_at: Option<DateTime<Utc>>,
}

/// The writes of flight `flid` still in the outbox (SENT rows are kept for
/// `msgx.pipeline.event-retention`), newest first.
pub async fn flight_changes(
    pool: &PgPool,
    flid: i64,
    limit: i64,
) -> Result<Vec<FlightChange>, sqlx::Error> {
    flight_changes_before(pool, flid, None, limit).await
}

/// [`flight_changes`] below the keyset cursor `before` = (STATE_VERSION,
/// EVENT_ID) of the last row of the previous page (the console's flight
/// history pages through every version still in the outbox).
pub async fn flight_changes_before(
    pool: &PgPool,
    flid: i64,
    before: Option<(i64, i64)>,
    limit: i64,
) -> Result<Vec<FlightChange>, sqlx::Error> {
    sqlx::query_as(
        "SELECT e.event_id, e.state_version, e.msg_id, n.doc->>'msg_kind' AS kind, \
                n.doc->>'change' AS change, n.doc->'changed_fields' AS changed_fields, \
                n.doc->'changes' AS changes, n.doc->>'event_kind' AS event_kind, \
                n.doc->>'updated_at' AS at, \
                COALESCE(h.state, p.state) AS outcome, COALESCE(h.received_at, p.received_at) AS received_at \
         FROM msg_event e \
         CROSS JOIN LATERAL (SELECT convert_from(e.payload, 'UTF8')::jsonb AS doc) n \
         LEFT JOIN proc_state p ON p.msg_id = e.msg_id \
         LEFT JOIN proc_state_hst h ON h.msg_id = e.msg_id \
         WHERE e.target = 'KAFKA:msg' AND e.partition_key = $1 \
           AND ($3::bigint IS NULL OR (e.state_version, e.event_id) < ($3, $4)) \
         ORDER BY e.state_version DESC, e.event_id DESC \
         LIMIT $2",
    )
    .bind(flid.to_string())
    .bind(limit)
    .bind(before.map(|b| b.0))
    .bind(before.map(|b| b.1))
    .fetch_all(pool)
    .await
}

/// The flights (FLID, version) one message wrote, in write order.
pub async fn flights_of_message(
    pool: &PgPool,
    msg_id: i64,
) -> Result<Vec<(String, i64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT partition_key, state_version FROM msg_event \
         WHERE target = 'KAFKA:msg' AND msg_id = $1 ORDER BY event_id",
    )
    .bind(msg_id)
    .fetch_all(pool)
    .await
}

/// SENT rows past `msgx.pipeline.event-retention` (§8.3).
pub const SENT_PURGE: SweepSql = SweepSql {
    count: "SELECT count(*) FROM msg_event WHERE status = 'SENT' AND sent_at < $1",
    apply: "DELETE FROM msg_event WHERE event_id IN (SELECT event_id FROM msg_event \
            WHERE status = 'SENT' AND sent_at < $1 ORDER BY sent_at LIMIT $2) \
            AND status = 'SENT' AND $3::timestamptz IS NOT NULL",
};
