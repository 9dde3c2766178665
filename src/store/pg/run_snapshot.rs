//! The reads of the harnesses' checks (`msgx dev drained`, `snapshot`,
//! `caught-up`, `verify`, `broker-verify`; docs/RESILIENCE.md): how far a
//! run got, its fatal outcomes, its outbox, and its outcome as
//! [`crate::domain::run_compare`] compares it. Read-only.

use crate::domain::delivery::EventStatus;
use crate::domain::proc_state::{ErrorClass, ProcState};
use crate::domain::run_compare::verify::{self, DeadMessage, FatalFacts, OutboxEvent};
use crate::domain::run_compare::{OutboxCount, Outcome, StateCounts};
use serde_json::Value;
use sqlx::{PgPool, Row};
use std::collections::BTreeMap;

/// A stored text that names no state, class or status: a decode error, never
/// a silent default.
fn decode<T: std::str::FromStr>(text: &str) -> Result<T, sqlx::Error>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    text.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// The stored names of the states `keep` selects.
fn states(keep: impl Fn(ProcState) -> bool) -> Vec<&'static str> {
    ProcState::ALL
        .into_iter()
        .filter(|s| keep(*s))
        .map(ProcState::as_str)
        .collect()
}

/// W, the live PROC_STATE rows, the unfinished ones, the PENDING outbox
/// events and the terminal rows whose mark is neither confirmed nor
/// abandoned, in one statement.
pub async fn state_counts(pool: &PgPool) -> Result<StateCounts, sqlx::Error> {
    let row = sqlx::query(
        "SELECT COALESCE((SELECT w FROM inbox_cursor WHERE id = 1), 0) AS w, \
                (SELECT count(*) FROM proc_state WHERE state <> $1) AS live_rows, \
                (SELECT count(*) FROM proc_state WHERE state = ANY($2)) AS unfinished, \
                (SELECT count(*) FROM msg_event WHERE status = $3) AS pending_events, \
                (SELECT count(*) FROM proc_state WHERE state = ANY($4) \
                   AND backfill_at IS NULL AND backfill_abandoned_at IS NULL) AS marks_due",
    )
    .bind(ProcState::Archived.as_str())
    .bind(states(ProcState::is_unfinished))
    .bind(EventStatus::Pending.as_str())
    .bind(states(ProcState::takes_backfill))
    .fetch_one(pool)
    .await?;
    Ok(StateCounts {
        w: row.try_get("w")?,
        live_rows: row.try_get("live_rows")?,
        unfinished: row.try_get("unfinished")?,
        pending_events: row.try_get("pending_events")?,
        marks_due: row.try_get("marks_due")?,
    })
}

/// Every PROC_STATE row's outcome, in MSG_ID order.
pub async fn outcomes(pool: &PgPool) -> Result<Vec<Outcome>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT msg_id, state, identity_key, msg_type, msg_styp, error_class, outcome_reason, \
                backfill_at IS NOT NULL AS marked, backfill_abandoned_reason \
         FROM proc_state ORDER BY msg_id",
    )
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            let class: Option<String> = r.try_get("error_class")?;
            Ok(Outcome {
                msg_id: r.try_get("msg_id")?,
                state: decode::<ProcState>(r.try_get("state")?)?,
                identity_key: r.try_get("identity_key")?,
                msg_type: r.try_get("msg_type")?,
                msg_styp: r.try_get("msg_styp")?,
                error_class: class.as_deref().map(decode::<ErrorClass>).transpose()?,
                outcome_reason: r.try_get("outcome_reason")?,
                marked: r.try_get("marked")?,
                backfill_abandoned_reason: r.try_get("backfill_abandoned_reason")?,
            })
        })
        .collect()
}

/// Outbox events by target and status, in that order.
pub async fn outbox_counts(pool: &PgPool) -> Result<Vec<OutboxCount>, sqlx::Error> {
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT target, status, count(*) FROM msg_event GROUP BY 1, 2 ORDER BY 1, 2",
    )
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|(target, status, n)| {
            Ok(OutboxCount {
                target,
                status: decode(&status)?,
                n,
            })
        })
        .collect()
}

/// Released holes (INBOX_HOLE rows).
pub async fn holes_released(pool: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM inbox_hole")
        .fetch_one(pool)
        .await
}

/// Every row of every flight table (`flight_*` in the schema `public`) as
/// its JSON object (`row_to_json`), by table name, in no particular order.
pub async fn flight_tables(pool: &PgPool) -> Result<BTreeMap<String, Vec<Value>>, sqlx::Error> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_name LIKE 'flight\\_%' ORDER BY table_name",
    )
    .fetch_all(pool)
    .await?;
    let mut out = BTreeMap::new();
    for table in tables {
        // The name comes from the catalogue; quoted as an identifier.
        let sql = format!(
            "SELECT row_to_json(t)::text FROM \"{}\" t",
            table.replace('"', "\"\"")
        );
        let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_all(pool)
            .await?;
        let rows = rows
            .iter()
            .map(|r| serde_json::from_str(r).map_err(|e| sqlx::Error::Decode(Box::new(e))))
            .collect::<Result<Vec<Value>, _>>()?;
        out.insert(table, rows);
    }
    Ok(out)
}

/// The outcomes an outage must never cause, in one statement: the DEAD
/// messages whose class is not [`verify::CAUSED_BY_CONTENT`] (counted, the
/// first few in MSG_ID order), the DEAD outbox events and the abandoned
/// backfill marks.
pub async fn fatal_facts(pool: &PgPool) -> Result<FatalFacts, sqlx::Error> {
    let row = sqlx::query(
        "SELECT (SELECT count(*) FROM proc_state \
                  WHERE state = $1 AND error_class IS DISTINCT FROM $2) AS dead_messages, \
                (SELECT count(*) FROM msg_event WHERE status = $3) AS dead_events, \
                (SELECT count(*) FROM proc_state \
                  WHERE backfill_abandoned_at IS NOT NULL) AS abandoned_marks",
    )
    .bind(ProcState::Dead.as_str())
    .bind(verify::CAUSED_BY_CONTENT.as_str())
    .bind(EventStatus::Dead.as_str())
    .fetch_one(pool)
    .await?;
    let dead_messages: i64 = row.try_get("dead_messages")?;
    let mut dead_examples = Vec::new();
    if dead_messages > 0 {
        let rows: Vec<(i64, Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT msg_id, error_class, last_error FROM proc_state \
             WHERE state = $1 AND error_class IS DISTINCT FROM $2 ORDER BY msg_id LIMIT $3",
        )
        .bind(ProcState::Dead.as_str())
        .bind(verify::CAUSED_BY_CONTENT.as_str())
        .bind(i64::try_from(verify::DEAD_SHOWN).unwrap_or(i64::MAX))
        .fetch_all(pool)
        .await?;
        for (msg_id, class, last_error) in rows {
            dead_examples.push(DeadMessage {
                msg_id,
                error_class: class.as_deref().map(decode::<ErrorClass>).transpose()?,
                last_error,
            });
        }
    }
    Ok(FatalFacts {
        dead_messages,
        dead_examples,
        dead_events: row.try_get("dead_events")?,
        abandoned_marks: row.try_get("abandoned_marks")?,
    })
}

/// Of the messages up to `upto`: the PROC_STATE rows in a terminal state
/// with their backfill mark confirmed, and the outbox events not SENT.
pub async fn catch_up_counts(pool: &PgPool, upto: i64) -> Result<(i64, i64), sqlx::Error> {
    let row = sqlx::query(
        "SELECT (SELECT count(*) FROM proc_state WHERE msg_id <= $1 \
                   AND state = ANY($2) AND backfill_at IS NOT NULL) AS done, \
                (SELECT count(*) FROM msg_event WHERE msg_id <= $1 AND status <> $3) AS unsent",
    )
    .bind(upto)
    .bind(states(ProcState::is_terminal))
    .bind(EventStatus::Sent.as_str())
    .fetch_one(pool)
    .await?;
    Ok((row.try_get("done")?, row.try_get("unsent")?))
}

/// Every PROC_STATE row's MSG_ID (ARCHIVED shadows included), in order.
pub async fn msg_ids(pool: &PgPool) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT msg_id FROM proc_state ORDER BY msg_id")
        .fetch_all(pool)
        .await
}

/// The outbox events of the `msg` topic (target `KAFKA:msg`).
pub async fn msg_events(pool: &PgPool) -> Result<Vec<OutboxEvent>, sqlx::Error> {
    outbox_events(pool, "KAFKA:msg").await
}

/// The outbox rows of the `schd` topic (target `KAFKA:schd`).
pub async fn schd_events(pool: &PgPool) -> Result<Vec<OutboxEvent>, sqlx::Error> {
    outbox_events(pool, "KAFKA:schd").await
}

/// Every outbox event of `target`: FLID, version and payload text (NULL for
/// a tombstone), in event order.
async fn outbox_events(pool: &PgPool, target: &str) -> Result<Vec<OutboxEvent>, sqlx::Error> {
    let rows: Vec<(String, i64, Option<String>)> = sqlx::query_as(
        "SELECT partition_key, state_version, convert_from(payload, 'UTF8') \
         FROM msg_event WHERE target = $1 ORDER BY event_id",
    )
    .bind(target)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(partition_key, state_version, payload)| OutboxEvent {
            partition_key,
            state_version,
            payload,
        })
        .collect())
}
