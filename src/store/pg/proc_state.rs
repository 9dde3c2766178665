//! PROC_STATE statements (design §1.2, §3, §5). Every non-business terminal
//! state is one UPDATE that also registers the backfill intent
//! (`BACKFILL_NEXT_AT`), so a terminal row can never lack it (§5.3).

use crate::domain::proc_state::{ErrorClass, ProcState};
use crate::telemetry::trace_context::TraceParent;
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool, Row};

/// The head of the queue (§5.1): the smallest unfinished message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub msg_id: i64,
    /// `PENDING` or `FAILED` ([`ProcState::is_unfinished`]).
    pub state: ProcState,
    pub attempts: i32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The class of the last failure (a FAILED row's schedule).
    pub error_class: Option<ErrorClass>,
    pub identity_key: Option<String>,
    /// The watermark W read in the same statement (§5.1 step 2).
    pub w: i64,
    /// The message's trace context: `None` for a row
    /// enqueued before migration 0011 (or one whose stored value does not
    /// parse: a trace is for following a message, never a reason to stop it).
    pub trace: Option<TraceParent>,
    /// The compat client that wrote this row through `POST /cminmsgs/send`
    /// (COMPAT_REQUEST by MSG_ID, migration 0020); `None` for a row the
    /// mailbox's own writers wrote. Scopes the identity.
    pub compat_principal: Option<String>,
}

/// A row's state and attempt count as the pump read them with its head:
/// the guard of the pump's failure and terminal writes (compare-and-set).
/// A replay or skip that commits between the pump's read
/// and its write changes one of them, so the write finds nothing to change
/// and the replay stands (§9.1: the replay reset the attempts; an attempt
/// count computed before it must not undo that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsRead {
    pub state: ProcState,
    pub attempts: i32,
}

impl Head {
    /// The guard of this head's writes ([`AsRead`]).
    pub fn as_read(&self) -> AsRead {
        AsRead {
            state: self.state,
            attempts: self.attempts,
        }
    }
}

/// The head: the smallest PENDING/FAILED MSG_ID. Terminal rows are left out
/// by the state list and ARCHIVED shadows by an explicit `state <>
/// 'ARCHIVED'` beside it (§9.3: not by the list alone).
pub async fn head(pool: &PgPool) -> Result<Option<Head>, sqlx::Error> {
    Ok(unfinished(pool, 1).await?.into_iter().next())
}

/// The `limit` smallest unfinished rows in MSG_ID order (the head first),
/// each with the watermark W read in the same statement: the pump's tick and
/// its group commit in one round trip.
pub async fn unfinished(pool: &PgPool, limit: i64) -> Result<Vec<Head>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT msg_id, state, attempts, next_attempt_at, error_class, identity_key, traceparent, \
                (SELECT w FROM inbox_cursor WHERE id = 1) AS w, \
                (SELECT COALESCE(c.principal, '') FROM compat_request c WHERE c.msg_id = p.msg_id) \
                  AS compat_principal \
         FROM proc_state p \
         WHERE state IN ('PENDING', 'FAILED') AND state <> 'ARCHIVED' ORDER BY msg_id LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Head {
                msg_id: r.try_get("msg_id")?,
                state: state_of(r)?,
                attempts: r.try_get("attempts")?,
                next_attempt_at: r.try_get("next_attempt_at")?,
                error_class: r
                    .try_get::<Option<String>, _>("error_class")?
                    .as_deref()
                    .and_then(ErrorClass::parse),
                identity_key: r.try_get("identity_key")?,
                w: r.try_get::<Option<i64>, _>("w")?.unwrap_or(0),
                trace: r
                    .try_get::<Option<String>, _>("traceparent")?
                    .and_then(|t| TraceParent::parse(&t).ok()),
                compat_principal: r.try_get("compat_principal")?,
            })
        })
        .collect()
}

/// A FAILED head at the attempt limit → DEAD(EXHAUSTED), with the backfill
/// intent, in one UPDATE (§5.1 step 3). ERROR_CLASS is overwritten;
/// LAST_ERROR keeps the reason text (§3). Only while the row is still the
/// FAILED row with `attempts` the pump read ([`AsRead`]): false when a
/// replay came between.
pub async fn mark_exhausted(
    pool: &PgPool,
    msg_id: i64,
    attempts: i32,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let n = sqlx::query(
        "UPDATE proc_state SET state = 'DEAD', error_class = 'EXHAUSTED', next_attempt_at = NULL, \
         updated_at = $2, finished_at = $2, backfill_next_at = $2 \
         WHERE msg_id = $1 AND state = 'FAILED' AND attempts = $3",
    )
    .bind(msg_id)
    .bind(now)
    .bind(attempts)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// A non-business terminal state (SKIPPED, or DEAD with a class) and the
/// backfill intent in one UPDATE (§5.3). Only the row as the pump read it
/// moves ([`AsRead`]): false when it changed since (a replay or a skip).
pub async fn finish_non_business<'e, E>(
    pool: E,
    msg_id: i64,
    read: AsRead,
    state: ProcState,
    class: Option<ErrorClass>,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Postgres>,
{
    let reason = crate::error_text::cut(reason);
    let (outcome, error) = if class.is_some() {
        (None, Some(reason.as_ref()))
    } else {
        (Some(reason.as_ref()), None)
    };
    let n = sqlx::query(
        "UPDATE proc_state SET state = $2, error_class = COALESCE($3, error_class), \
         last_error = COALESCE($4, last_error), outcome_reason = $5, next_attempt_at = NULL, \
         updated_at = $6, finished_at = $6, backfill_next_at = $6 \
         WHERE msg_id = $1 AND state = $7 AND attempts = $8",
    )
    .bind(msg_id)
    .bind(state.as_str())
    .bind(class.map(ErrorClass::as_str))
    .bind(error)
    .bind(outcome)
    .bind(now)
    .bind(read.state.as_str())
    .bind(read.attempts)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// One failed attempt as ProcFailure records it (§9.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure<'a> {
    pub class: ErrorClass,
    pub reason: &'a str,
    /// The attempt count after this failure
    /// ([`FailureScheduler::attempts_after`](crate::domain::FailureScheduler::attempts_after)).
    pub attempts: i32,
    pub next_attempt_at: DateTime<Utc>,
    /// True when the row was not FAILED before: a new failure streak starts
    /// (the head-blocked time counts from it).
    pub first: bool,
    /// The row as the attempt read it: the write's guard ([`AsRead`]).
    pub read: AsRead,
}

/// Records a failed attempt (ProcFailure, §9.1): FAILED with the attempt
/// count, class, reason (cut, crate::error_text) and retry time, and — in
/// the same statement — when the head's failure streak began (HEAD_FAILURE,
/// read by `msgx_pipeline_head_blocked_seconds` and `/readyz`). Returns false
/// when the row was no longer the one the attempt read (nothing written).
pub async fn record_failure(
    pool: &PgPool,
    msg_id: i64,
    f: &Failure<'_>,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let n = sqlx::query(
        "WITH failed AS (UPDATE proc_state SET state = 'FAILED', attempts = $6, error_class = $2, \
           last_error = $3, next_attempt_at = $4, updated_at = $5 \
           WHERE msg_id = $1 AND state = $8 AND attempts = $9 RETURNING msg_id) \
         INSERT INTO head_failure (id, msg_id, since) SELECT 1, msg_id, $5 FROM failed \
         ON CONFLICT (id) DO UPDATE SET msg_id = EXCLUDED.msg_id, since = CASE \
           WHEN $7 OR head_failure.msg_id <> EXCLUDED.msg_id THEN EXCLUDED.since \
           ELSE head_failure.since END",
    )
    .bind(msg_id)
    .bind(f.class.as_str())
    .bind(crate::error_text::cut(f.reason).as_ref())
    .bind(f.next_attempt_at)
    .bind(now)
    .bind(f.attempts)
    .bind(f.first)
    .bind(f.read.state.as_str())
    .bind(f.read.attempts)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// The head while it is FAILED: since when its current
/// failure streak runs, with its class and reason.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct HeadFailure {
    pub msg_id: i64,
    pub error_class: Option<String>,
    pub attempts: i32,
    pub last_error: Option<String>,
    /// HEAD_FAILURE.SINCE for this message; its UPDATED_AT when a failure
    /// was recorded before HEAD_FAILURE existed.
    pub since: DateTime<Utc>,
}

/// The failing head, if the head (the smallest unfinished row) is FAILED.
pub async fn head_failure(pool: &PgPool) -> Result<Option<HeadFailure>, sqlx::Error> {
    sqlx::query_as(
        "SELECT p.msg_id, p.error_class, p.attempts, p.last_error, \
                COALESCE(h.since, p.updated_at) AS since \
         FROM (SELECT msg_id, state, error_class, attempts, last_error, updated_at FROM proc_state \
               WHERE state IN ('PENDING', 'FAILED') ORDER BY msg_id LIMIT 1) p \
         LEFT JOIN head_failure h ON h.msg_id = p.msg_id \
         WHERE p.state = 'FAILED'",
    )
    .fetch_optional(pool)
    .await
}

/// Result of binding the business identity (§2, §5.2 step 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityBinding {
    /// This message holds the identity (now or from an earlier attempt).
    Ours,
    /// Another message holds it.
    DuplicateOf(i64),
}

/// Binds IDENTITY_KEY in one idempotent statement (`WHERE IDENTITY_KEY IS
/// NULL`), outside any business transaction. A retry keeps its binding.
pub async fn bind_identity(
    pool: &PgPool,
    msg_id: i64,
    identity: &str,
    msg_type: &str,
    msg_styp: &str,
) -> Result<IdentityBinding, sqlx::Error> {
    // The common case first: one UPDATE binds a free identity; a retry finds
    // its own binding (0 rows, IDENTITY_KEY already set: never re-bound).
    let bound = sqlx::query(
        "UPDATE proc_state SET identity_key = $2, msg_type = $3, msg_styp = $4 \
         WHERE msg_id = $1 AND identity_key IS NULL",
    )
    .bind(msg_id)
    .bind(identity)
    .bind(msg_type)
    .bind(msg_styp)
    .execute(pool)
    .await;
    match bound {
        // 1 row: bound now. 0 rows: bound by an earlier attempt of this
        // message (kept as is). Another holder would be a unique violation.
        Ok(_) => Ok(IdentityBinding::Ours),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            let id: i64 =
                sqlx::query_scalar("SELECT msg_id FROM proc_state WHERE identity_key = $1")
                    .bind(identity)
                    .fetch_one(pool)
                    .await?;
            Ok(IdentityBinding::DuplicateOf(id))
        }
        Err(e) => Err(e),
    }
}

/// Binds the identity inside an open transaction (group commit): asks for a
/// holder first, so a duplicate is an answer, not a unique violation that
/// would abort the whole group's transaction.
pub async fn bind_identity_in(
    conn: &mut PgConnection,
    msg_id: i64,
    identity: &str,
    msg_type: &str,
    msg_styp: &str,
) -> Result<IdentityBinding, sqlx::Error> {
    let holder: Option<i64> = sqlx::query_scalar(
        "SELECT msg_id FROM proc_state WHERE identity_key = $1 AND msg_id <> $2",
    )
    .bind(identity)
    .bind(msg_id)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(other) = holder {
        return Ok(IdentityBinding::DuplicateOf(other));
    }
    sqlx::query(
        "UPDATE proc_state SET identity_key = $2, msg_type = $3, msg_styp = $4 \
         WHERE msg_id = $1 AND identity_key IS NULL",
    )
    .bind(msg_id)
    .bind(identity)
    .bind(msg_type)
    .bind(msg_styp)
    .execute(conn)
    .await?;
    Ok(IdentityBinding::Ours)
}

/// Inside a processor transaction: locks the row and returns its state.
pub async fn lock_row(
    conn: &mut PgConnection,
    msg_id: i64,
) -> Result<Option<ProcState>, sqlx::Error> {
    let state: Option<String> =
        sqlx::query_scalar("SELECT state FROM proc_state WHERE msg_id = $1 FOR UPDATE")
            .bind(msg_id)
            .fetch_optional(conn)
            .await?;
    state.map(parse_state).transpose()
}

/// The stored state text as a [`ProcState`] (the column's CHECK admits only
/// these; anything else is a decode error, not a silent default).
fn parse_state(text: String) -> Result<ProcState, sqlx::Error> {
    text.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// The `state` column of a row.
fn state_of(row: &sqlx::postgres::PgRow) -> Result<ProcState, sqlx::Error> {
    parse_state(row.try_get("state")?)
}

/// Inside a processor transaction: SUCCEEDED with the backfill intent (§5.2
/// step 6). Returns false when the row was not unfinished (the caller rolls
/// back).
pub async fn mark_succeeded(
    conn: &mut PgConnection,
    msg_id: i64,
    note: Option<&str>,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let n = sqlx::query(
        "UPDATE proc_state SET state = 'SUCCEEDED', outcome_reason = $2, error_class = NULL, \
         next_attempt_at = NULL, updated_at = $3, finished_at = $3, backfill_next_at = $3 \
         WHERE msg_id = $1 AND state IN ('PENDING', 'FAILED')",
    )
    .bind(msg_id)
    .bind(note)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// Marks the transaction as msgx's flight writer (`msgx.writer =
/// 'flight_store'` until it ends), in the statement that takes
/// `PIPELINE_LOCK`: every transaction that writes flights takes that lock
/// first and writes them only through `FlightStore`, which upserts each
/// flight's row, so the detail-table triggers of migration 0013 need not
/// touch the row again (the pump's writes cost no extra row update). An SQL expression, evaluated once per returned row.
macro_rules! flight_writer {
    () => {
        "set_config('msgx.writer', 'flight_store', true)"
    };
}

/// The opening statement of every processor transaction, in one round trip:
/// takes `PIPELINE_LOCK` (§5.3, INV-18), locks the rows of `msg_ids` (one
/// message, or a group commit's), checks the instance-lock fence on the
/// server (`fence` = the holder's lock parts, its backend pid last; `None` =
/// no lock to check) and marks the transaction as the flight writer
/// (`flight_writer!`). Returns the rows that exist, in MSG_ID order.
pub async fn open_group(
    conn: &mut PgConnection,
    msg_ids: &[i64],
    fence: Option<(i32, i32, i32)>,
) -> Result<Vec<OpenedRow>, sqlx::Error> {
    let (ns, id, pid) = fence.unwrap_or((0, 0, 0));
    let rows = sqlx::query(concat!(
        "SELECT p.msg_id, p.state, ($2 = 0 OR EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
           AND classid = $3::int::oid AND objid = $4::int::oid AND objsubid = 2 AND pid = $2 AND granted)) AS fenced, ",
        flight_writer!(),
        " FROM pipeline_lock l, proc_state p WHERE l.id = 1 AND p.msg_id = ANY($1) ORDER BY p.msg_id FOR UPDATE",
    ))
    .bind(msg_ids)
    .bind(pid)
    .bind(ns)
    .bind(id)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(OpenedRow {
                msg_id: r.try_get("msg_id")?,
                state: state_of(r)?,
                fenced: r.try_get("fenced")?,
            })
        })
        .collect()
}

/// A row [`open_group`] locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenedRow {
    pub msg_id: i64,
    pub state: ProcState,
    /// The instance-lock fence held when the row was locked.
    pub fenced: bool,
}

/// Who holds each of these identities now: `(IDENTITY_KEY, MSG_ID)`. The
/// group commit decides duplicates with this answer (under PIPELINE_LOCK and
/// the instance lock nothing else binds identities), so no unique violation
/// aborts the group's transaction.
pub async fn identity_holders(
    conn: &mut PgConnection,
    identities: &[&str],
) -> Result<Vec<(String, i64)>, sqlx::Error> {
    if identities.is_empty() {
        return Ok(Vec::new());
    }
    sqlx::query_as("SELECT identity_key, msg_id FROM proc_state WHERE identity_key = ANY($1)")
        .bind(identities)
        .fetch_all(conn)
        .await
}

/// One message's recorded outcome in a group commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupOutcome {
    pub msg_id: i64,
    /// `SUCCEEDED`, `SKIPPED` or `DEAD`.
    pub state: ProcState,
    /// With DEAD: the class, and the reason goes to LAST_ERROR; otherwise the
    /// reason (or the SUCCEEDED note) goes to OUTCOME_REASON.
    pub class: Option<ErrorClass>,
    pub reason: Option<String>,
    /// `(identity, TYPE, STYP)` to bind now (the row had none and no other
    /// message holds it).
    pub bind: Option<(String, String, String)>,
}

/// The terminal states of a whole group in one UPDATE, column for column
/// what [`bind_identity`] plus [`mark_succeeded`] or [`finish_non_business`]
/// write for one message (§5.3: the terminal state and the backfill intent
/// together). Only unfinished rows move; returns the rows changed.
pub async fn finish_group(
    conn: &mut PgConnection,
    outcomes: &[GroupOutcome],
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let ids: Vec<i64> = outcomes.iter().map(|o| o.msg_id).collect();
    let states: Vec<&str> = outcomes.iter().map(|o| o.state.as_str()).collect();
    let classes: Vec<Option<&str>> = outcomes
        .iter()
        .map(|o| o.class.map(ErrorClass::as_str))
        .collect();
    let reasons: Vec<Option<std::borrow::Cow<'_, str>>> = outcomes
        .iter()
        .map(|o| o.reason.as_deref().map(crate::error_text::cut))
        .collect();
    let reasons: Vec<Option<&str>> = reasons.iter().map(|r| r.as_deref()).collect();
    let bind = |f: fn(&(String, String, String)) -> &str| -> Vec<Option<&str>> {
        outcomes.iter().map(|o| o.bind.as_ref().map(f)).collect()
    };
    let (keys, types, styps) = (bind(|b| &b.0), bind(|b| &b.1), bind(|b| &b.2));
    Ok(sqlx::query(
        "UPDATE proc_state p SET state = r.state, \
           error_class = CASE WHEN r.state = 'SUCCEEDED' THEN NULL ELSE COALESCE(r.class, p.error_class) END, \
           last_error = CASE WHEN r.class IS NULL THEN p.last_error ELSE COALESCE(r.reason, p.last_error) END, \
           outcome_reason = CASE WHEN r.class IS NULL THEN r.reason END, \
           identity_key = CASE WHEN p.identity_key IS NULL AND r.key IS NOT NULL THEN r.key ELSE p.identity_key END, \
           msg_type = CASE WHEN p.identity_key IS NULL AND r.key IS NOT NULL THEN r.type ELSE p.msg_type END, \
           msg_styp = CASE WHEN p.identity_key IS NULL AND r.key IS NOT NULL THEN r.styp ELSE p.msg_styp END, \
           next_attempt_at = NULL, updated_at = $8, finished_at = $8, backfill_next_at = $8 \
         FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) \
              AS r(msg_id, state, class, reason, key, type, styp) \
         WHERE p.msg_id = r.msg_id AND p.state IN ('PENDING', 'FAILED')",
    )
    .bind(&ids)
    .bind(&states)
    .bind(&classes)
    .bind(&reasons)
    .bind(&keys)
    .bind(&types)
    .bind(&styps)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected())
}

/// `PIPELINE_LOCK` (§5.3, INV-18): taken first in every processor
/// transaction; marks the transaction as the flight writer (`flight_writer!`).
pub async fn take_pipeline_lock(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query(concat!(
        "SELECT id, ",
        flight_writer!(),
        " FROM pipeline_lock WHERE id = 1 FOR UPDATE"
    ))
    .execute(conn)
    .await?;
    Ok(())
}

/// A row as replay (design §9.1) and skip (§5.4) examine it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct ReplayRow {
    pub msg_id: i64,
    #[sqlx(try_from = "String")]
    pub state: ProcState,
    pub error_class: Option<String>,
    pub last_error: Option<String>,
    /// Set when the mailbox mark of the old terminal state was confirmed.
    pub backfill_at: Option<DateTime<Utc>>,
}

impl ReplayRow {
    /// The recorded error class (`None`: none, or a text that names none).
    pub fn class(&self) -> Option<ErrorClass> {
        self.error_class.as_deref().and_then(ErrorClass::parse)
    }
}

/// Locks the rows among `ids` (any state, so refusals can be explained).
pub async fn lock_for_replay(
    conn: &mut PgConnection,
    ids: &[i64],
) -> Result<Vec<ReplayRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT msg_id, state, error_class, last_error, backfill_at FROM proc_state \
         WHERE msg_id = ANY($1) ORDER BY msg_id FOR UPDATE",
    )
    .bind(ids)
    .fetch_all(conn)
    .await
}

/// Locks every FAILED/DEAD row of one error class.
pub async fn lock_class_for_replay(
    conn: &mut PgConnection,
    class: ErrorClass,
) -> Result<Vec<ReplayRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT msg_id, state, error_class, last_error, backfill_at FROM proc_state \
         WHERE state IN ('FAILED', 'DEAD') AND error_class = $1 ORDER BY msg_id FOR UPDATE",
    )
    .bind(class.as_str())
    .fetch_all(conn)
    .await
}

/// Replay (design §9.1, §5.3: one batch statement): FAILED/DEAD rows of the allowed
/// classes back to PENDING in one statement. Resets the attempt count, the
/// retry instant, the error and outcome, FINISHED_AT, and every backfill
/// field of the old terminal state, so the next terminal state registers a
/// fresh intent (a mark already written stays in the mailbox; the next scan
/// then finds it "already marked" and confirms without overwriting it).
/// Keeps IDENTITY_KEY, so the message is not a duplicate of itself.
pub async fn replay(
    conn: &mut PgConnection,
    ids: &[i64],
    classes: &[ErrorClass],
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let classes: Vec<&str> = classes.iter().map(|c| c.as_str()).collect();
    Ok(sqlx::query(
        "UPDATE proc_state SET state = 'PENDING', attempts = 0, next_attempt_at = NULL, \
         error_class = NULL, last_error = NULL, outcome_reason = NULL, finished_at = NULL, \
         updated_at = $3, backfill_next_at = NULL, backfill_at = NULL, backfill_attempts = 0, \
         backfill_last_error = NULL, backfill_abandoned_at = NULL, \
         backfill_abandoned_reason = NULL, backfill_reconciled_at = NULL, \
         backfill_reconciled_note = NULL, backfill_failing_since = NULL \
         WHERE msg_id = ANY($1) AND state IN ('FAILED', 'DEAD') AND error_class = ANY($2)",
    )
    .bind(ids)
    .bind(&classes)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected())
}

/// `msgx skip --range` (§5.4): locks the PENDING/FAILED rows with
/// `first <= MSG_ID <= last` (ARCHIVED shadows excluded explicitly, §9.3).
pub async fn lock_unfinished_between(
    conn: &mut PgConnection,
    first: i64,
    last: i64,
) -> Result<Vec<ReplayRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT msg_id, state, error_class, last_error, backfill_at FROM proc_state \
         WHERE msg_id BETWEEN $1 AND $2 AND state IN ('PENDING', 'FAILED') \
         AND state <> 'ARCHIVED' ORDER BY msg_id FOR UPDATE",
    )
    .bind(first)
    .bind(last)
    .fetch_all(conn)
    .await
}

/// Rows with `first <= MSG_ID <= last` by state (what `skip --range` leaves
/// alone, and how many IDs of the range have no row).
pub async fn count_states_between(
    conn: &mut PgConnection,
    first: i64,
    last: i64,
) -> Result<Vec<(ProcState, i64)>, sqlx::Error> {
    let counts: Vec<(String, i64)> = sqlx::query_as(
        "SELECT state, count(*) FROM proc_state WHERE msg_id BETWEEN $1 AND $2 \
         GROUP BY state ORDER BY state",
    )
    .bind(first)
    .bind(last)
    .fetch_all(conn)
    .await?;
    counts
        .into_iter()
        .map(|(state, n)| Ok((parse_state(state)?, n)))
        .collect()
}

/// Operator skip (§5.4, C-27): PENDING/FAILED rows → SKIPPED with `reason`
/// in OUTCOME_REASON and the backfill intent, in one statement, like every
/// non-business terminal state (§5.3). ERROR_CLASS and LAST_ERROR stay:
/// they say what the row was. Returns the rows changed.
pub async fn skip(
    conn: &mut PgConnection,
    ids: &[i64],
    reason: &str,
    now: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(
        "UPDATE proc_state SET state = 'SKIPPED', outcome_reason = $2, next_attempt_at = NULL, \
         updated_at = $3, finished_at = $3, backfill_next_at = $3 \
         WHERE msg_id = ANY($1) AND state IN ('PENDING', 'FAILED')",
    )
    .bind(ids)
    .bind(reason)
    .bind(now)
    .execute(conn)
    .await?
    .rows_affected())
}

/// Everything PROC_STATE keeps about one message (`msgx msg show`).
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct MessageRecord {
    pub msg_id: i64,
    #[sqlx(try_from = "String")]
    pub state: ProcState,
    pub identity_key: Option<String>,
    pub msg_type: Option<String>,
    pub msg_styp: Option<String>,
    pub attempts: i32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub error_class: Option<String>,
    pub last_error: Option<String>,
    pub outcome_reason: Option<String>,
    pub source: String,
    pub received_at: Option<DateTime<Utc>>,
    pub enqueued_at: Option<DateTime<Utc>>,
    pub updated_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub backfill_next_at: Option<DateTime<Utc>>,
    pub backfill_at: Option<DateTime<Utc>>,
    pub backfill_attempts: i32,
    pub backfill_last_error: Option<String>,
    pub backfill_abandoned_at: Option<DateTime<Utc>>,
    pub backfill_abandoned_reason: Option<String>,
    pub backfill_reconciled_at: Option<DateTime<Utc>>,
    pub backfill_reconciled_note: Option<String>,
    /// Since when its backfill attempts have been failing (migration 0014;
    /// `None` when the last attempt did not fail).
    pub backfill_failing_since: Option<DateTime<Utc>>,
    /// The message's W3C `traceparent` (migration 0011; `None` before it).
    pub traceparent: Option<String>,
    /// Set when the row comes from PROC_STATE_HST (archived, §9.3).
    pub archived_at: Option<DateTime<Utc>>,
}

/// Every PROC_STATE column, in table order: `msgx msg show` reads them and
/// the archive copies them to PROC_STATE_HST by name (proc_state_hst.rs).
pub(super) const COLUMNS: &str = "msg_id, state, identity_key, msg_type, msg_styp, attempts, next_attempt_at, \
     error_class, last_error, outcome_reason, source, received_at, enqueued_at, updated_at, \
     finished_at, backfill_next_at, backfill_at, backfill_attempts, backfill_last_error, \
     backfill_abandoned_at, backfill_abandoned_reason, backfill_reconciled_at, backfill_reconciled_note, \
     traceparent, backfill_failing_since";

/// The message's record: the live row, or its PROC_STATE_HST row once it is
/// archived (the live table keeps only an ARCHIVED shadow then).
pub async fn record(pool: &PgPool, msg_id: i64) -> Result<Option<MessageRecord>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS}, archived_at FROM proc_state_hst WHERE msg_id = $1 \
         UNION ALL \
         SELECT {COLUMNS}, NULL::timestamptz FROM proc_state WHERE msg_id = $1 AND state <> 'ARCHIVED' \
         LIMIT 1"
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(msg_id)
        .fetch_optional(pool)
        .await
}
