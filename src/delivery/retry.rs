//! What a failed send does to its outbox row (design §3 delivery states, §8.1,
//! §9.1): pure, no I/O, no clock (the caller passes `now`). docs/delivery.md
//! has the table.
//!
//! - [`FailureClass::MessageSpecific`] counts one attempt; at
//!   `msgx.dispatch.max-attempts` the row becomes DEAD (kept as the DLQ).
//! - [`FailureClass::Transient`] and [`FailureClass::InDoubt`] do not count
//!   while `now − first_failure_at < msgx.dispatch.transient-deadline`; after
//!   that they count too. A transient row may then become DEAD at
//!   max-attempts.
//! - An in-doubt row (it may already be in the topic) never becomes DEAD by
//!   its count: it is re-sent with the idempotent producer until
//!   `now − first_failure_at ≥ msgx.dispatch.in-doubt-deadline`, then it is
//!   DEAD with class IN_DOUBT, so one record that always
//!   times out ends in the DLQ instead of holding its FLID forever.
//! - Backoff: `msgx.dispatch.retry-backoff`, tier = counted attempts − 1 (the
//!   last tier repeats, for in-doubt rows counted past max-attempts); an
//!   uncounted failure uses the first tier.

use crate::config::Config;
use crate::domain::delivery::{FailureClass, FailureUpdate};
use chrono::{DateTime, Duration, Utc};

/// The retry rules of the delivery jobs.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// `msgx.dispatch.max-attempts`.
    pub max_attempts: u32,
    /// `msgx.dispatch.transient-deadline`.
    pub transient_deadline: Duration,
    /// `msgx.dispatch.in-doubt-deadline`.
    pub in_doubt_deadline: Duration,
    /// `msgx.dispatch.retry-backoff` (never empty here: with max-attempts 1
    /// the check allows no tier, and a 10 s tier stands in for the uncounted
    /// failures).
    pub backoff: Vec<Duration>,
}

impl RetryPolicy {
    /// The policy of `config`.
    pub fn from_config(config: &Config) -> Self {
        let d = &config.msgx.dispatch;
        let mut backoff: Vec<Duration> = d.retry_backoff.iter().map(|t| t.chrono()).collect();
        if backoff.is_empty() {
            backoff.push(Duration::seconds(10));
        }
        Self {
            max_attempts: d.max_attempts,
            transient_deadline: d.transient_deadline.chrono(),
            in_doubt_deadline: d.in_doubt_deadline.chrono(),
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
        let failing_for = now - first;
        let counted = match class {
            FailureClass::MessageSpecific => true,
            FailureClass::Transient | FailureClass::InDoubt => {
                failing_for >= self.transient_deadline
            }
        };
        let attempts = if counted {
            attempts.saturating_add(1)
        } else {
            attempts
        };
        let limit = i32::try_from(self.max_attempts).unwrap_or(i32::MAX);
        let dead = match class {
            FailureClass::MessageSpecific | FailureClass::Transient => counted && attempts >= limit,
            FailureClass::InDoubt => failing_for >= self.in_doubt_deadline,
        };
        let tier = if counted {
            usize::try_from(attempts.saturating_sub(1)).unwrap_or(0)
        } else {
            0
        };
        let wait = self.backoff[tier.min(self.backoff.len() - 1)];
        FailureUpdate {
            dead,
            class,
            attempts,
            counted,
            next_attempt_at: (!dead).then(|| now + wait),
            first_failure_at: first,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 3,
            transient_deadline: Duration::hours(1),
            in_doubt_deadline: Duration::hours(3),
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
                class: FailureClass::MessageSpecific,
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
    fn in_doubt_counts_after_the_transient_deadline_but_never_dies_by_count() {
        let p = policy();
        let past = t0() + Duration::hours(2);
        let u = p.on_failure(10, Some(t0()), FailureClass::InDoubt, past);
        assert!(u.counted);
        assert_eq!(u.attempts, 11, "past max-attempts (3)");
        assert!(!u.dead);
        assert_eq!(
            u.next_attempt_at,
            Some(past + Duration::minutes(1)),
            "the last tier repeats"
        );
    }

    #[test]
    fn in_doubt_is_dead_at_its_deadline_since_the_first_failure() {
        let p = policy();
        let u = p.on_failure(0, None, FailureClass::InDoubt, t0());
        assert!(!u.dead && !u.counted);
        assert_eq!(u.next_attempt_at, Some(t0() + Duration::seconds(10)));
        let just_before = t0() + Duration::hours(3) - Duration::seconds(1);
        let u = p.on_failure(4, Some(t0()), FailureClass::InDoubt, just_before);
        assert!(!u.dead, "{u:?}");
        let at = t0() + Duration::hours(3);
        let u = p.on_failure(4, Some(t0()), FailureClass::InDoubt, at);
        assert!(u.dead, "{u:?}");
        assert_eq!(u.class, FailureClass::InDoubt);
        assert_eq!(u.next_attempt_at, None);
        assert_eq!(u.first_failure_at, t0(), "the window is not restarted");
    }

    #[test]
    fn in_doubt_deadline_shorter_than_the_transient_one_ends_uncounted() {
        let p = RetryPolicy {
            in_doubt_deadline: Duration::minutes(10),
            ..policy()
        };
        let u = p.on_failure(
            0,
            Some(t0()),
            FailureClass::InDoubt,
            t0() + Duration::minutes(10),
        );
        assert!(u.dead && !u.counted && u.attempts == 0, "{u:?}");
        // A transient failure of the same row is not bound by it.
        let u = p.on_failure(
            0,
            Some(t0()),
            FailureClass::Transient,
            t0() + Duration::minutes(10),
        );
        assert!(!u.dead, "{u:?}");
    }

    #[test]
    fn delivery_uses_its_own_backoff_key() {
        let mut c = Config::default();
        c.msgx.dispatch.retry_backoff = vec!["3s".parse().expect("duration"); 9];
        c.msgx.dispatch.in_doubt_deadline = "20m".parse().expect("duration");
        let p = RetryPolicy::from_config(&c);
        assert_eq!(p.backoff, vec![Duration::seconds(3); 9]);
        assert_eq!(p.in_doubt_deadline, Duration::minutes(20));
        let d = RetryPolicy::from_config(&Config::default());
        assert_eq!(d.backoff.len(), 9, "max-attempts 10 − 1");
        assert_eq!(d.in_doubt_deadline, d.transient_deadline, "1 h both");
    }
}
