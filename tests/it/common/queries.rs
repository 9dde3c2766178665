//! Reads of the tables the tests assert on, each query written once
//! (issue 19, item 7). Rows come in a stable order (ID or key), so tests
//! compare whole vectors.

use super::TestDb;
use sqlx::PgConnection;

/// A `SELECT count(*) …` (or any one-`i64` query).
pub async fn count(db: &TestDb, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&db.pool).await.unwrap()
}

/// PROC_STATE: (MSG_ID, STATE).
pub async fn states(db: &TestDb) -> Vec<(i64, String)> {
    sqlx::query_as("SELECT msg_id, state FROM proc_state ORDER BY msg_id")
        .fetch_all(&db.pool)
        .await
        .unwrap()
}

/// PROC_STATE.STATE of one message (`None`: not enqueued).
pub async fn state_of(db: &TestDb, msg_id: i64) -> Option<String> {
    sqlx::query_scalar("SELECT state FROM proc_state WHERE msg_id = $1")
        .bind(msg_id)
        .fetch_optional(&db.pool)
        .await
        .unwrap()
}

/// PROC_STATE: (MSG_ID, STATE, IDENTITY_KEY).
pub async fn states_with_identity(db: &TestDb) -> Vec<(i64, String, Option<String>)> {
    sqlx::query_as("SELECT msg_id, state, identity_key FROM proc_state ORDER BY msg_id")
        .fetch_all(&db.pool)
        .await
        .unwrap()
}

/// PROC_STATE: (MSG_ID, STATE, ERROR_CLASS, why: OUTCOME_REASON, else
/// LAST_ERROR).
pub async fn outcomes(db: &TestDb) -> Vec<(i64, String, Option<String>, Option<String>)> {
    sqlx::query_as(
        "SELECT msg_id, state, error_class, COALESCE(outcome_reason, last_error) FROM proc_state ORDER BY msg_id",
    )
    .fetch_all(&db.pool)
    .await
    .unwrap()
}

/// [`outcomes`] without the MSG_ID, in MSG_ID order.
pub async fn outcomes_in_order(db: &TestDb) -> Vec<(String, Option<String>, Option<String>)> {
    outcomes(db)
        .await
        .into_iter()
        .map(|(_, state, class, why)| (state, class, why))
        .collect()
}

/// BACKFILL_ACTION: (ACTOR, ACTION, TARGET, REASON), in ID order.
pub async fn backfill_actions(db: &TestDb) -> Vec<(String, String, String, Option<String>)> {
    sqlx::query_as("SELECT actor, action, target, reason FROM backfill_action ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .expect("actions")
}

/// [`backfill_actions`] as (ACTION, ACTOR, TARGET, REASON).
pub async fn backfill_actions_by_kind(
    db: &TestDb,
) -> Vec<(String, String, String, Option<String>)> {
    backfill_actions(db)
        .await
        .into_iter()
        .map(|(actor, action, target, reason)| (action, actor, target, reason))
        .collect()
}

/// FLIGHT_SCHD: (FLID, STATE, STATE_VERSION).
pub async fn flights(db: &TestDb) -> Vec<(i64, String, i64)> {
    sqlx::query_as("SELECT flid, state, state_version FROM flight_schd ORDER BY flid")
        .fetch_all(&db.pool)
        .await
        .unwrap()
}

/// How many flights FLIGHT_SCHD holds.
pub async fn flight_count(db: &TestDb) -> i64 {
    count(db, "SELECT count(*) FROM flight_schd").await
}

/// Rows of `table` for `flid` that match `filter` (an SQL condition the
/// test writes), on `conn` (inside the test's transaction).
pub async fn flight_rows(conn: &mut PgConnection, table: &str, filter: &str, flid: i64) -> i64 {
    let sql = format!("SELECT count(*) FROM {table} WHERE flid = $1 AND {filter}");
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(flid)
        .fetch_one(conn)
        .await
        .expect("count")
}
