//! What a failed send is, as plain data (design §3 delivery states, §8.1, §9.1): the
//! class the producer decides (kafka/producer.rs `classify`) and the new
//! values of the outbox row that delivery/retry.rs computes and the store
//! writes. Here, below both, so the store needs nothing from delivery/.

use super::stored_name::stored_names;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

stored_names! {
    /// MSG_EVENT.STATUS (design §3, delivery): PENDING → SENT, PENDING again after
    /// a backoff, or DEAD (retries used up; the row stays as the DLQ).
    /// Serialised as the stored text.
    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum EventStatus ("MSG_EVENT status") {
        Pending = "PENDING",
        Sent = "SENT",
        Dead = "DEAD",
    }
}

/// How a failed send is handled (docs/delivery.md has the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureClass {
    /// The broker (or librdkafka, before sending) definitively rejected this
    /// record: too large, invalid, not authorised for the topic. Counts toward
    /// `msgx.dispatch.max-attempts`, then DEAD. Not persisted.
    MessageSpecific,
    /// The record was certainly not persisted (queue full, no leader, not
    /// enough replicas…). Backs off uncounted until
    /// `msgx.dispatch.transient-deadline`, then counts toward DEAD.
    Transient,
    /// The record may have been persisted (timed out after being sent,
    /// connection lost mid-request, purged in flight, unknown). Stays PENDING
    /// and is re-sent (at-least-once), counting after the transient deadline;
    /// DEAD (class IN_DOUBT) only after `msgx.dispatch.in-doubt-deadline`:
    /// until then its FLID waits, so a later event never
    /// overtakes a copy that may already be in the topic.
    InDoubt,
}

impl FailureClass {
    /// The stored name (`MSG_EVENT.ERROR_CLASS`, the `LAST_ERROR` prefix).
    pub const fn as_str(self) -> &'static str {
        match self {
            FailureClass::MessageSpecific => "MESSAGE_SPECIFIC",
            FailureClass::Transient => "TRANSIENT",
            FailureClass::InDoubt => "IN_DOUBT",
        }
    }
}

/// The new values of a failed row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureUpdate {
    /// DEAD (kept as the DLQ) instead of PENDING.
    pub dead: bool,
    /// The class of this failure (`MSG_EVENT.ERROR_CLASS`; for a DEAD row,
    /// the class it died of).
    pub class: FailureClass,
    pub attempts: i32,
    /// Whether this failure counted toward `max-attempts`.
    pub counted: bool,
    /// When the row may be tried again (`None` when DEAD).
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub first_failure_at: DateTime<Utc>,
}

impl FailureUpdate {
    /// The row's status after this failure.
    pub const fn status(&self) -> EventStatus {
        if self.dead {
            EventStatus::Dead
        } else {
            EventStatus::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_round_trips_through_its_text() {
        for s in EventStatus::ALL {
            assert_eq!(s.as_str().parse::<EventStatus>(), Ok(s));
            let json = serde_json::to_string(&s).expect("serializes");
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<EventStatus>(&json).ok(), Some(s));
        }
        assert!(
            "sent".parse::<EventStatus>().is_err(),
            "stored text is exact"
        );
    }
}
