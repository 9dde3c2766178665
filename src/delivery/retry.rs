//! What a failed send does to its outbox row (design §3 "投递", §8.1, §9.1):
//! pure, no I/O, no clock (the caller passes `now`). docs/delivery.md has the
//! table.
//!
//! - [`FailureClass::MessageSpecific`] counts one attempt; at
//!   `msgx.dispatch.max-attempts` the row becomes DEAD (kept as the DLQ).
//! - [`FailureClass::Transient`] and [`FailureClass::InDoubt`] do not count
//!   while `now − first_failure_at < msgx.dispatch.transient-deadline`; after
//!   that they count too. A transient row may then become DEAD; an in-doubt
//!   row never does (it may already be in the topic: it stays PENDING and is
//!   re-sent, at-least-once).
//! - Backoff: [`BACKOFF`], tier = counted attempts − 1 (the last tier
//!   repeats); an uncounted failure uses the first tier.

use super::producer::FailureClass;
use crate::config::Config;
use chrono::{DateTime, Duration, Utc};

/// The retry rules of the delivery jobs.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// `msgx.dispatch.max-attempts`.
    pub max_attempts: u32,
    /// `msgx.dispatch.transient-deadline`.
    pub transient_deadline: Duration,
    /// [`BACKOFF`].
    pub backoff: Vec<Duration>,
}

/// The delivery backoff tiers: the values `msgx.pipeline.retry-backoff` had
/// by default, which delivery shared until issue 17 replaced that key by
/// per-class pipeline schedules (delivery gets its own key there, item 3).
pub const BACKOFF: [std::time::Duration; 4] = [
    std::time::Duration::from_secs(10),
    std::time::Duration::from_secs(60),
    std::time::Duration::from_secs(300),
    std::time::Duration::from_secs(900),
];

impl RetryPolicy {
    /// The policy of `config`.
    pub fn from_config(config: &Config) -> Self {
        let backoff: Vec<Duration> = BACKOFF
            .iter()
            .map(|d| Duration::from_std(*d).unwrap_or(Duration::MAX))
            .collect();
        Self {
            max_attempts: config.msgx.dispatch.max_attempts,
            transient_deadline: config.msgx.dispatch.transient_deadline.chrono(),
            backoff,
        }
    }

    /// The row's next state after a failure of class `class` at `now`.
    pub fn on_failure(
        &self,
        attempts: i32,
        first_failure_at: Option<DateTime<Utc>>,
        class: FailureClass,
        now: DateTime<Utc>,
    ) -> FailureUpdate {
        let first = first_failure_at.unwrap_or(now);
        let counted = match class {
            FailureClass::MessageSpecific => true,
            FailureClass::Transient | FailureClass::InDoubt => {
                now - first >= self.transient_deadline
            }
        };
        let attempts = if counted {
            attempts.saturating_add(1)
        } else {
            attempts
        };
        let limit = i32::try_from(self.max_attempts).unwrap_or(i32::MAX);
        let dead = counted && attempts >= limit && class != FailureClass::InDoubt;
        let tier = if counted {
            usize::try_from(attempts.saturating_sub(1)).unwrap_or(0)
        } else {
            0
        };
        let wait = self.backoff[tier.min(self.backoff.len() - 1)];
        FailureUpdate {
            dead,
            attempts,
            counted,
            next_attempt_at: (!dead).then(|| now + wait),
            first_failure_at: first,
        }
    }
}

/// The new values of a failed row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureUpdate {
    /// DEAD (kept as the DLQ) instead of PENDING.
    pub dead: bool,
    pub attempts: i32,
    /// Whether this failure counted toward `max-attempts`.
    pub counted: bool,
    /// When the row may be tried again (`None` when DEAD).
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub first_failure_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 3,
            transient_deadline: Duration::hours(1),
            backoff: vec![Duration::seconds(10), Duration::minutes(1)],
        }
    }

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0).unwrap()
    }

    #[test]
    fn message_specific_counts_and_dies_at_the_limit() {
        let p = policy();
        let u1 = p.on_failure(0, None, FailureClass::MessageSpecific, t0());
        assert_eq!(
            u1,
            FailureUpdate {
                dead: false,
                attempts: 1,
                counted: true,
                next_attempt_at: Some(t0() + Duration::seconds(10)),
                first_failure_at: t0(),
            }
        );
        let u2 = p.on_failure(1, Some(t0()), FailureClass::MessageSpecific, t0());
        assert_eq!(u2.next_attempt_at, Some(t0() + Duration::minutes(1)));
        let u3 = p.on_failure(2, Some(t0()), FailureClass::MessageSpecific, t0());
        assert!(u3.dead);
        assert_eq!(u3.attempts, 3);
        assert_eq!(u3.next_attempt_at, None);
    }

    #[test]
    fn transient_is_free_until_the_deadline_then_counts_and_may_die() {
        let p = policy();
        let u = p.on_failure(0, None, FailureClass::Transient, t0());
        assert!(!u.counted && !u.dead && u.attempts == 0);
        assert_eq!(u.first_failure_at, t0());
        let later = t0() + Duration::minutes(59);
        let u = p.on_failure(0, Some(t0()), FailureClass::Transient, later);
        assert!(!u.counted);
        assert_eq!(
            u.first_failure_at,
            t0(),
            "the window starts at the first failure"
        );
        let past = t0() + Duration::hours(1);
        let u = p.on_failure(2, Some(t0()), FailureClass::Transient, past);
        assert!(u.counted && u.dead && u.attempts == 3);
    }

    #[test]
    fn in_doubt_counts_after_the_deadline_but_never_dies() {
        let p = policy();
        let past = t0() + Duration::hours(2);
        let u = p.on_failure(10, Some(t0()), FailureClass::InDoubt, past);
        assert!(u.counted);
        assert_eq!(u.attempts, 11);
        assert!(!u.dead);
        assert_eq!(u.next_attempt_at, Some(past + Duration::minutes(1)));
    }
}
