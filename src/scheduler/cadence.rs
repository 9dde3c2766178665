//! PollCadence: how long a polled job waits before its
//! next run, adapting to what the last run found — the pattern of Marten's
//! async daemon and Eventuous: poll at the busy interval while the mailbox
//! returns rows, double the wait on each empty run up to the idle interval,
//! snap back to busy as soon as a run handles items again.
//!
//! A run that failed (the mailbox or PostgreSQL is down) waits at least the
//! idle interval and doubles up to [`FAILURE_CEILING`], so an outage costs
//! one FAILED JOB_RUN row every few seconds rather than four a second, and
//! recovery is still noticed within the ceiling. Pure: the daemon's poll
//! loop sleeps what this returns.

use crate::config::PollInterval;
use std::time::Duration;

/// The longest wait after repeated failures.
pub const FAILURE_CEILING: Duration = Duration::from_secs(2);

/// What the last start of a polled job came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polled {
    /// A run that handled this many items (0 = found nothing).
    Ran { items: u64 },
    /// A run that failed or could not run.
    Failed,
    /// The previous run (a chained start) was still going: nothing ran.
    Busy,
}

/// The adaptive wait of one polled job.
#[derive(Debug, Clone)]
pub struct PollCadence {
    busy: Duration,
    idle: Duration,
    wait: Duration,
}

impl PollCadence {
    /// Starts at the busy interval: the first run after a start finds out.
    pub fn new(interval: PollInterval) -> Self {
        let busy = interval.busy.std();
        let idle = interval.idle.std().max(busy);
        Self {
            busy,
            idle,
            wait: busy,
        }
    }

    /// The wait before the next run, after `last`.
    pub fn after(&mut self, last: Polled) -> Duration {
        self.wait = match last {
            Polled::Ran { items } if items > 0 => self.busy,
            Polled::Busy => self.busy,
            Polled::Ran { .. } => (self.wait * 2).clamp(self.busy, self.idle),
            Polled::Failed => (self.wait * 2).clamp(self.idle, FAILURE_CEILING.max(self.idle)),
        };
        self.wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Dur;
    use proptest::prelude::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn cadence() -> PollCadence {
        PollCadence::new(PollInterval::default())
    }

    #[test]
    fn empty_runs_grow_the_wait_to_idle_and_rows_snap_it_back() {
        let mut c = cadence();
        let waits: Vec<_> = (0..5).map(|_| c.after(Polled::Ran { items: 0 })).collect();
        assert_eq!(waits, [ms(100), ms(200), ms(250), ms(250), ms(250)]);
        assert_eq!(c.after(Polled::Ran { items: 3 }), ms(50));
        assert_eq!(c.after(Polled::Ran { items: 0 }), ms(100));
    }

    #[test]
    fn failures_back_off_to_the_ceiling_and_recover_at_once() {
        let mut c = cadence();
        let waits: Vec<_> = (0..5).map(|_| c.after(Polled::Failed)).collect();
        assert_eq!(waits, [ms(250), ms(500), ms(1000), ms(2000), ms(2000)]);
        assert_eq!(c.after(Polled::Ran { items: 1 }), ms(50));
    }

    #[test]
    fn a_fixed_interval_never_changes() {
        let mut c = PollCadence::new(PollInterval {
            busy: Dur::secs(1),
            idle: Dur::secs(1),
        });
        for last in [
            Polled::Ran { items: 0 },
            Polled::Ran { items: 9 },
            Polled::Busy,
        ] {
            assert_eq!(c.after(last), ms(1000));
        }
    }

    proptest! {
        /// Whatever happens, the wait stays within [busy, max(idle, ceiling)],
        /// and a run that handled items is always followed by the busy wait.
        #[test]
        fn the_wait_stays_in_bounds(busy in 10u64..500, extra in 0u64..5000, runs in proptest::collection::vec(0u8..4, 1..60)) {
            let interval = PollInterval { busy: Dur(ms(busy)), idle: Dur(ms(busy + extra)) };
            let mut c = PollCadence::new(interval);
            for r in runs {
                let last = match r {
                    0 => Polled::Ran { items: 0 },
                    1 => Polled::Ran { items: 1 },
                    2 => Polled::Failed,
                    _ => Polled::Busy,
                };
                let wait = c.after(last);
                prop_assert!(wait >= ms(busy));
                prop_assert!(wait <= ms(busy + extra).max(FAILURE_CEILING));
                if matches!(last, Polled::Ran { items: 1 }) {
                    prop_assert_eq!(wait, ms(busy));
                }
                if matches!(last, Polled::Ran { items: 0 }) {
                    prop_assert!(wait <= ms(busy + extra));
                }
            }
        }
    }
}
