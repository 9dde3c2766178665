//! MSG_EVENT writes inside processor transactions (design §8): KAFKA:msg rows
//! are appended (EVENT_ID from the global sequence = delivery order);
//! KAFKA:schd is one row per FLID, replaced only by a version ≥ the stored
//! one, with a fresh EVENT_ID as the write generation, reset to PENDING (§8.2).

use crate::domain::{DomainEvent, EventTarget};
use chrono::{DateTime, Utc};
use sqlx::PgConnection;

/// Stores the events of one decision, in order.
pub async fn append(
    conn: &mut PgConnection,
    events: &[DomainEvent],
    msg_id: Option<i64>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    for e in events {
        let key = e.partition_key().to_string();
        let event_type = match e.event_type() {
            crate::domain::EventType::Upsert => "UPSERT",
            crate::domain::EventType::Tombstone => "TOMBSTONE",
        };
        let sql = match e.target() {
            EventTarget::KafkaMsg => {
                "INSERT INTO msg_event (target, partition_key, event_type, state_version, msg_id, payload, created_at) \
                 VALUES ('KAFKA:msg', $1, $2, $3, $4, $5, $6)"
            }
            EventTarget::KafkaSchd => {
                "INSERT INTO msg_event (target, partition_key, event_type, state_version, msg_id, payload, created_at) \
                 VALUES ('KAFKA:schd', $1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (partition_key) WHERE target = 'KAFKA:schd' DO UPDATE SET \
                   event_id = EXCLUDED.event_id, event_type = EXCLUDED.event_type, \
                   state_version = EXCLUDED.state_version, msg_id = EXCLUDED.msg_id, \
                   payload = EXCLUDED.payload, status = 'PENDING', attempts = 0, next_attempt_at = NULL, \
                   first_failure_at = NULL, last_error = NULL, created_at = EXCLUDED.created_at, sent_at = NULL \
                 WHERE msg_event.state_version <= EXCLUDED.state_version"
            }
        };
        sqlx::query(sql)
            .bind(key)
            .bind(event_type)
            .bind(e.state_version())
            .bind(msg_id)
            .bind(e.to_bytes())
            .bind(now)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}
