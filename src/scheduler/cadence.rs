//! PollCadence: how long a polled job waits before its
//! next run, adapting to what the last run found — the pattern of Marten's
//! async daemon and Eventuous: poll at the busy interval while the mailbox
//! returns rows and for the hold after the last one (a feed's next row is
//! then read within one busy interval), then double the wait on each empty
//! run up to the idle interval, and snap back to busy as soon as a run
//! handles items again. Idle, the cost is one read per idle interval; a
//! flowing feed costs up to one read per busy interval (issue 38 item 3,
//! docs/configuration.md "Poll cadence").
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
    hold: Duration,
    idle: Duration,
    wait: Duration,
    /// The waits since the last run that handled items (or was busy): the
    /// hold is measured in them, so the cadence needs no clock.
    quiet: Duration,
}

impl PollCadence {
    /// Starts at the busy interval: the first run after a start finds out.
    pub fn new(interval: PollInterval) -> Self {
        let busy = interval.busy.std();
        let idle = interval.idle.std().max(busy);
        Self {
            busy,
            hold: interval.hold.std(),
            idle,
            wait: busy,
            quiet: Duration::ZERO,
        }
    }

    /// The wait before the next run, after `last`.
    pub fn after(&mut self, last: Polled) -> Duration {
        self.wait = match last {
            Polled::Ran { items } if items > 0 => {
                self.quiet = Duration::ZERO;
                self.busy
            }
            Polled::Busy => {
                self.quiet = Duration::ZERO;
                self.busy
            }
            Polled::Ran { .. } if self.quiet < self.hold => self.busy,
            Polled::Ran { .. } => (self.wait * 2).clamp(self.busy, self.idle),
            Polled::Failed => {
                // Recovery is no flowing feed: no hold after it.
                self.quiet = self.hold;
                (self.wait * 2).clamp(self.idle, FAILURE_CEILING.max(self.idle))
            }
        };
        self.quiet = self.quiet.saturating_add(self.wait);
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
    fn empty_runs_hold_busy_then_grow_the_wait_to_idle_and_rows_snap_it_back() {
        let mut c = cadence();
        // 1 s of 10 ms waits after the start (which counts as rows)…
        let held: Vec<_> = (0..100)
            .map(|_| c.after(Polled::Ran { items: 0 }))
            .collect();
        assert!(held.iter().all(|w| *w == ms(10)), "{held:?}");
        // …then doubling to the idle ceiling.
        let waits: Vec<_> = (0..7).map(|_| c.after(Polled::Ran { items: 0 })).collect();
        assert_eq!(
            waits,
            [ms(20), ms(40), ms(80), ms(160), ms(250), ms(250), ms(250)]
        );
        assert_eq!(c.after(Polled::Ran { items: 3 }), ms(10));
        assert_eq!(c.after(Polled::Ran { items: 0 }), ms(10), "held again");
    }

    #[test]
    fn a_hold_of_one_busy_interval_doubles_after_the_first_empty_run() {
        let mut c = PollCadence::new(PollInterval {
            hold: Dur(ms(10)),
            ..PollInterval::default()
        });
        let waits: Vec<_> = (0..7).map(|_| c.after(Polled::Ran { items: 0 })).collect();
        assert_eq!(
            waits,
            [ms(10), ms(20), ms(40), ms(80), ms(160), ms(250), ms(250)]
        );
    }

    /// The idle cost the default is chosen for (≤ 5 mailbox reads a second,
    /// issue 38 item 3): after the hold, a minute without rows costs at most
    /// one read per idle interval.
    #[test]
    fn an_idle_minute_after_the_hold_costs_four_reads_a_second() {
        let mut c = cadence();
        let mut waited = Duration::ZERO;
        while waited < Duration::from_secs(2) {
            waited += c.after(Polled::Ran { items: 0 });
        }
        let (mut runs, mut minute) = (0u32, Duration::ZERO);
        while minute < Duration::from_secs(60) {
            minute += c.after(Polled::Ran { items: 0 });
            runs += 1;
        }
        assert_eq!(runs, 240);
    }

    #[test]
    fn failures_back_off_to_the_ceiling_and_recover_at_once() {
        let mut c = cadence();
        let waits: Vec<_> = (0..5).map(|_| c.after(Polled::Failed)).collect();
        assert_eq!(waits, [ms(250), ms(500), ms(1000), ms(2000), ms(2000)]);
        assert_eq!(
            c.after(Polled::Ran { items: 0 }),
            ms(250),
            "no hold after failures"
        );
        assert_eq!(c.after(Polled::Ran { items: 1 }), ms(10));
    }

    #[test]
    fn a_fixed_interval_never_changes() {
        let mut c = PollCadence::new(PollInterval {
            busy: Dur::secs(1),
            hold: Dur::secs(5),
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
        fn the_wait_stays_in_bounds(busy in 10u64..500, extra in 0u64..5000, hold in 0u64..2000, runs in proptest::collection::vec(0u8..4, 1..60)) {
            let interval = PollInterval { busy: Dur(ms(busy)), hold: Dur(ms(busy + hold)), idle: Dur(ms(busy + extra)) };
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
