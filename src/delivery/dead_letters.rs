//! The DLQ: DEAD outbox rows stay in MSG_EVENT until an operator resolves
//! them (design §8.3). `resend` puts a DEAD row back to
//! PENDING with a fresh retry budget; `discard` deletes it. Each action is
//! recorded in OPERATOR_ACTION in the same transaction as the change.
//!
//! A resent KAFKA:msg row goes out after later events of its FLID that were
//! delivered while it was DEAD: resending restores delivery, not the original
//! order (as for replay, §9.1). Consumers guard with
//! `(FLID, STATE_VERSION, UPDATED_AT)`.

use crate::store::pg::msg_event::{self, DeadEvent};
use crate::store::pg::operator_action::{self, NewAction};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;

/// What an operator does to a DEAD row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// DEAD → PENDING, attempts reset.
    Resend,
    /// Delete the row (recorded with what it was).
    Discard,
}

impl Resolution {
    fn action(self) -> &'static str {
        match self {
            Resolution::Resend => "EVENT_RESEND",
            Resolution::Discard => "EVENT_DISCARD",
        }
    }
}

/// The result for one requested ID.
#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    pub event_id: i64,
    /// False when the ID is not a DEAD row (nothing changed, nothing recorded).
    pub applied: bool,
    /// The OPERATOR_ACTION id when applied.
    pub action_id: Option<i64>,
}

/// Applies `what` to each of `ids` (each in its own transaction), recording
/// `actor` and `reason`.
pub async fn resolve(
    pool: &PgPool,
    what: Resolution,
    ids: &[i64],
    actor: &str,
    reason: Option<&str>,
    at: DateTime<Utc>,
) -> Result<Vec<Resolved>, sqlx::Error> {
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        let mut tx = pool.begin().await?;
        let row: Option<DeadEvent> = match what {
            Resolution::Resend => msg_event::resend_dead(&mut tx, id).await?,
            Resolution::Discard => msg_event::delete_dead(&mut tx, id).await?,
        };
        let Some(row) = row else {
            tx.rollback().await?;
            out.push(Resolved {
                event_id: id,
                applied: false,
                action_id: None,
            });
            continue;
        };
        let target = format!("msg_event:{id}");
        let mut detail = serde_json::to_value(&row).unwrap_or_default();
        if what == Resolution::Discard
            && let (Some(obj), Some(p)) = (detail.as_object_mut(), &row.payload)
        {
            // The row is gone after this: keep what it carried.
            obj.insert(
                "payload".into(),
                String::from_utf8_lossy(p).into_owned().into(),
            );
        }
        let action_id = operator_action::insert(
            &mut tx,
            &NewAction {
                at,
                actor,
                action: what.action(),
                target: &target,
                reason,
                detail,
            },
        )
        .await?;
        tx.commit().await?;
        tracing::info!(
            event_id = id,
            action = what.action(),
            actor,
            reason,
            "Operator resolved a DEAD outbox event"
        );
        out.push(Resolved {
            event_id: id,
            applied: true,
            action_id: Some(action_id),
        });
    }
    Ok(out)
}

/// The DEAD rows, oldest first (at most `limit`).
pub async fn list(pool: &PgPool, limit: i64) -> Result<Vec<DeadEvent>, sqlx::Error> {
    msg_event::list_dead(pool, limit).await
}
