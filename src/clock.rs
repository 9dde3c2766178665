//! The injected clock (design §5.1): every read of "now" goes through a
//! [`Clock`], so tests drive time by hand and never sleep for it.

use chrono::{DateTime, Duration, Utc};
use std::sync::{Arc, Mutex};

/// Source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> DateTime<Utc>;
}

/// A shareable clock handle.
pub type SharedClock = Arc<dyn Clock>;

/// Seconds between two instants of the Clock, for histograms (never negative).
pub fn seconds_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).to_std().map_or(0.0, |d| d.as_secs_f64())
}

/// The wall clock. The only place in msgx that reads system time.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when a test moves it.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }
    /// Moves the clock forward (or back, with a negative duration).
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now += by;
    }
    /// Sets the clock to `to`.
    pub fn set(&self, to: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let clock = ManualClock::new(start);
        assert_eq!(clock.now(), start);
        clock.advance(Duration::seconds(30));
        assert_eq!(clock.now(), start + Duration::seconds(30));
        let shared: SharedClock = Arc::new(clock.clone());
        clock.advance(Duration::seconds(1));
        assert_eq!(shared.now(), start + Duration::seconds(31));
    }

    #[test]
    fn durations_are_never_negative() {
        use chrono::TimeZone;
        let t = Utc
            .with_ymd_and_hms(2026, 12, 1, 8, 0, 0)
            .single()
            .expect("valid");
        assert_eq!(seconds_between(t, t - chrono::Duration::seconds(3)), 0.0);
        assert_eq!(
            seconds_between(t, t + chrono::Duration::milliseconds(1500)),
            1.5
        );
    }
}
