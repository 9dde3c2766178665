//! FailureScheduler (design §9.1): when a failed message may be retried,
//! with one schedule per error class (`msgx.pipeline.retry.<class>`, issue
//! 17 item 4). Pure.
//!
//! - A limited schedule (CODEC_ERROR, UNSUPPORTED) has one tier per retry
//!   (exactly max-attempts − 1, checked at startup). At the limit the head is
//!   due at once, and the pump turns it into DEAD(EXHAUSTED) (§5.1 step 3).
//! - The INFRA schedule is unlimited: its last tier repeats, and the head is
//!   never exhausted, so a mailbox or PostgreSQL outage of any length leaves
//!   the head FAILED (and visible: `msgx_pipeline_head_blocked_seconds`,
//!   `/readyz` check `head`), never DEAD.
//! - `ATTEMPTS` counts the consecutive failures of the class recorded last:
//!   a failure of another class starts that class's schedule at its first
//!   tier. Otherwise an hour of INFRA failures would leave an unsupported
//!   message no retry at all once the mailbox is back.

use crate::config::{RetrySchedule, RetrySchedules};
use crate::store::pg::proc_state::ErrorClass;
use chrono::{DateTime, Utc};

/// The schedule of a FAILED class; `None` for the classes that never retry
/// (MALFORMED, PROTOCOL and EXHAUSTED are terminal).
pub fn schedule_for(schedules: &RetrySchedules, class: ErrorClass) -> Option<&RetrySchedule> {
    match class {
        ErrorClass::Infra => Some(&schedules.infra),
        ErrorClass::CodecError => Some(&schedules.codec_error),
        ErrorClass::Unsupported => Some(&schedules.unsupported),
        ErrorClass::Malformed | ErrorClass::Protocol | ErrorClass::Exhausted => None,
    }
}

/// The attempt count after a failure of `class`, when the row had `stored`
/// attempts and last failed with `stored_class` (see the module docs).
pub fn attempts_after(stored: i32, stored_class: Option<ErrorClass>, class: ErrorClass) -> i32 {
    if stored_class == Some(class) {
        stored.saturating_add(1)
    } else {
        1
    }
}

/// True when a FAILED head with `attempts` failures of this schedule's class
/// is at its limit (never for an unlimited schedule).
pub fn exhausted(attempts: i32, schedule: &RetrySchedule) -> bool {
    schedule
        .max_attempts
        .is_some_and(|max| i64::from(attempts) >= i64::from(max))
}

/// The next attempt time after `attempts` failures (1-based) of this
/// schedule's class: tier `attempts − 1`, the last tier repeating; at the
/// limit of a limited schedule, `now` (due for EXHAUSTED).
pub fn next_attempt_at(
    attempts: i32,
    schedule: &RetrySchedule,
    now: DateTime<Utc>,
) -> DateTime<Utc> {
    if exhausted(attempts, schedule) {
        return now;
    }
    let index = usize::try_from(attempts.max(1) - 1).unwrap_or(0);
    let tier = schedule
        .backoff
        .get(index)
        .or(schedule.backoff.last())
        .map(|d| d.chrono())
        .unwrap_or_else(chrono::Duration::zero);
    now + tier
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Dur;
    use proptest::prelude::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::seconds(s)
    }

    #[test]
    fn a_limited_schedule_has_one_tier_per_retry_then_is_due_at_the_limit() {
        let s = RetrySchedules::default().unsupported;
        assert_eq!(next_attempt_at(1, &s, at(0)), at(10));
        assert_eq!(next_attempt_at(2, &s, at(0)), at(30));
        assert!(!exhausted(2, &s));
        assert!(exhausted(3, &s));
        assert_eq!(next_attempt_at(3, &s, at(0)), at(0), "due for EXHAUSTED");
    }

    #[test]
    fn the_default_fast_schedules_give_up_within_a_minute() {
        let all = RetrySchedules::default();
        for s in [&all.unsupported, &all.codec_error] {
            let waited: chrono::Duration = s.backoff.iter().map(|d| d.chrono()).sum();
            assert!(waited < chrono::Duration::minutes(1), "{s:?}");
            assert!(s.max_attempts.is_some());
        }
    }

    #[test]
    fn infra_repeats_its_last_tier_and_never_exhausts() {
        let s = RetrySchedules::default().infra;
        assert_eq!(next_attempt_at(1, &s, at(0)), at(5));
        assert_eq!(next_attempt_at(2, &s, at(0)), at(15));
        assert_eq!(next_attempt_at(3, &s, at(0)), at(60));
        assert_eq!(next_attempt_at(10_000, &s, at(0)), at(60));
        assert!(!exhausted(i32::MAX, &s));
    }

    #[test]
    fn a_new_class_starts_its_own_schedule() {
        use ErrorClass::*;
        assert_eq!(attempts_after(0, None, Unsupported), 1);
        assert_eq!(attempts_after(1, Some(Unsupported), Unsupported), 2);
        assert_eq!(attempts_after(40, Some(Infra), Unsupported), 1);
        assert_eq!(attempts_after(2, Some(Unsupported), Infra), 1);
        assert_eq!(attempts_after(i32::MAX, Some(Infra), Infra), i32::MAX);
    }

    #[test]
    fn only_the_retryable_classes_have_a_schedule() {
        let all = RetrySchedules::default();
        for c in ErrorClass::ALL {
            let retryable = matches!(
                c,
                ErrorClass::Infra | ErrorClass::CodecError | ErrorClass::Unsupported
            );
            assert_eq!(schedule_for(&all, c).is_some(), retryable, "{c:?}");
        }
    }

    proptest! {
        /// Whatever the INFRA schedule and however many failures, the next
        /// attempt lies within one capped tier and the head never exhausts.
        #[test]
        fn infra_waits_capped_and_forever(tiers in proptest::collection::vec(1u64..600, 1..6),
                                          attempts in 1i32..i32::MAX) {
            let s = RetrySchedule { max_attempts: None, backoff: tiers.iter().map(|t| Dur::secs(*t)).collect() };
            let wait = next_attempt_at(attempts, &s, at(0)) - at(0);
            let cap = *tiers.iter().max().expect("non-empty");
            prop_assert!(wait > chrono::Duration::zero());
            prop_assert!(wait <= chrono::Duration::seconds(cap as i64));
            prop_assert!(!exhausted(attempts, &s));
        }
    }
}
