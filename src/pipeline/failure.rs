//! FailureScheduler (design §9.1): when a failed message may be retried.
//! One tier per retry (`msgx.pipeline.retry-backoff`, exactly max-attempts − 1
//! tiers, checked at startup). At the limit the head is due at once, so the
//! pump turns it into DEAD(EXHAUSTED) (§5.1 step 3). Pure.

use chrono::{DateTime, Utc};

/// The next attempt time after `attempts` failed attempts (1-based).
pub fn next_attempt_at(
    attempts: i32,
    max_attempts: u32,
    tiers: &[crate::config::Dur],
    now: DateTime<Utc>,
) -> DateTime<Utc> {
    let attempts = u32::try_from(attempts.max(1)).unwrap_or(1);
    if attempts >= max_attempts {
        return now;
    }
    let tier = tiers
        .get((attempts - 1) as usize)
        .or(tiers.last())
        .map(|d| d.chrono())
        .unwrap_or_else(chrono::Duration::zero);
    now + tier
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Dur;

    #[test]
    fn one_tier_per_retry_then_due_at_the_limit() {
        let tiers = [Dur::secs(10), Dur::mins(1), Dur::mins(5), Dur::mins(15)];
        let now = DateTime::<Utc>::UNIX_EPOCH;
        assert_eq!(
            next_attempt_at(1, 5, &tiers, now),
            now + chrono::Duration::seconds(10)
        );
        assert_eq!(
            next_attempt_at(4, 5, &tiers, now),
            now + chrono::Duration::minutes(15)
        );
        assert_eq!(
            next_attempt_at(5, 5, &tiers, now),
            now,
            "at the limit: due for EXHAUSTED"
        );
    }
}
