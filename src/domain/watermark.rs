//! The watermark and hole rule of design §4.1, as a pure decision.
//!
//! W is the contiguous upper bound of mailbox IDs already read into
//! PostgreSQL. A round reads `ID > W` ascending, counts up from `W+1` and stops
//! at the first missing ID. A missing ID with rows after it is a *hole*: an
//! insert not yet committed, or one rolled back. Rows after a hole are never
//! enqueued while the hole is young (a late commit of the smaller ID would
//! otherwise land behind them and break FIFO). Once the hole has been open for
//! `max-commit-delay`, it is *released*: W jumps to the row before the next
//! existing row, skipping only the hole itself. At most one hole is resolved
//! per round; a hole found after W advanced is timed from that new
//! observation, never inheriting an older wait.
//!
//! Transaction evidence releases a hole earlier: an ID in
//! the hole was allocated before the row after it, so before the hole was
//! first seen, and so by a transaction that started before that sighting.
//! When the mailbox server shows no open transaction that started at or
//! before the sighting ([`no_live_writer`]), nothing can commit into the hole
//! any more and it is released at once (`no-live-transaction`). The times
//! compared are both the mailbox server's, never the injected clock.

use chrono::{DateTime, Duration, Utc};

/// The persisted cursor (INBOX_CURSOR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub w: i64,
    pub hole_since: Option<DateTime<Utc>>,
}

/// Which rule released a hole (INBOX_HOLE.REASON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReleaseReason {
    /// The time rule: open for `msgx.pipeline.max-commit-delay` (§4.1).
    MaxCommitDelay,
    /// Transaction evidence: no transaction that could fill it was alive.
    NoLiveTransaction,
}

impl ReleaseReason {
    pub const ALL: [ReleaseReason; 2] = [Self::MaxCommitDelay, Self::NoLiveTransaction];

    /// The stored and displayed text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxCommitDelay => "max-commit-delay",
            Self::NoLiveTransaction => "no-live-transaction",
        }
    }
}

/// A released (permanent) hole: IDs `first..=last` were skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleasedHole {
    pub first_id: i64,
    pub last_id: i64,
    pub first_seen: DateTime<Utc>,
    pub reason: ReleaseReason,
}

/// The most IDs a released hole may span and still be taken for purged
/// rows ([`purged_after_mark`]); a wider gap is an ID jump, not a purge.
pub const MAX_PURGED_HOLE: i64 = 100_000;

/// Whether a hole being released is rows the mailbox owner purged after
/// msgx had marked them, not IDs that were never committed: the first row
/// after it carries a processing mark (`next_row_marked`). Above W nothing
/// is marked unless msgx's own record of it was rolled back (a restore, a
/// failover to a replica behind the primary), and the owner purges marked
/// rows (C-8), so the gap is most likely messages msgx had processed. They
/// are enqueued instead of released, and the pump, finding no raw text,
/// records each DEAD(MALFORMED, raw-missing): what cannot be rebuilt is
/// named, not skipped. An ID in that gap that was never committed is named
/// the same way; a mailbox msgx only reads (shadow mode, whose marks are
/// another system's) never takes this path.
pub fn purged_after_mark(hole: &ReleasedHole, next_row_marked: bool, shadow: bool) -> bool {
    next_row_marked && !shadow && hole.last_id - hole.first_id < MAX_PURGED_HOLE
}

/// What one round does: enqueue the first `take` rows of the batch and save
/// `next`. `released` is set when a hole was given up this round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundPlan {
    pub take: usize,
    pub next: Cursor,
    pub released: Option<ReleasedHole>,
    /// True when rows after a hole were held back this round.
    pub holding: bool,
}

/// Where and when a hole was first seen, on the mailbox server's clock:
/// the fetch that found rows after the missing IDs `w+1..next_id-1` ran at
/// `at_micros` (server UNIX time, µs). Every ID below `next_id` was
/// allocated before that fetch, since `next_id` was already committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sighting {
    pub w: i64,
    pub next_id: i64,
    pub at_micros: i64,
}

/// One read of the server's open transactions (INNODB_TRX), taken before
/// the round's fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrxSnapshot {
    /// The read shows this very statement of the checking session: InnoDB
    /// serves INNODB_TRX from a cache that is refreshed only after 100 ms
    /// without readers (trx0i_s.cc), so an older copy may lack a
    /// transaction that is open now. Only a fresh read is evidence.
    pub fresh: bool,
    /// The earliest `trx_started` (whole seconds, UNIX time) among the
    /// other sessions' open transactions; `None` when there are none.
    pub oldest_start_secs: Option<i64>,
}

/// How much later than the sighting a transaction may have started and
/// still count as one that could fill the hole. The sighting is the fetch
/// statement's start, a little before its read view, and InnoDB may start
/// an inserting transaction just after it took the auto-increment value;
/// both gaps are far below a second, and `trx_started` is whole seconds
/// anyway. Only transactions that are still open when evidence is read
/// count, so the margin delays a release only while such a transaction
/// lasts.
pub const SIGHTING_MARGIN_MICROS: i64 = 1_000_000;

/// True when no transaction that could still commit an ID of the sighted
/// hole is alive: the read is fresh and every open transaction started
/// after the sighting (plus [`SIGHTING_MARGIN_MICROS`]). A truncated
/// `trx_started` only makes a transaction look older: the safe side.
pub fn no_live_writer(sighting: &Sighting, snapshot: &TrxSnapshot) -> bool {
    snapshot.fresh
        && snapshot.oldest_start_secs.is_none_or(|started| {
            started.saturating_mul(1_000_000)
                > sighting.at_micros.saturating_add(SIGHTING_MARGIN_MICROS)
        })
}

/// Evidence for a round: the hole at `w+1`, as far as it lies below
/// `below`, can no longer be filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cleared {
    pub w: i64,
    pub below: i64,
}

impl Sighting {
    /// The [`Cleared`] input this sighting gives when [`no_live_writer`] holds.
    pub fn cleared(&self) -> Cleared {
        Cleared {
            w: self.w,
            below: self.next_id,
        }
    }
}

/// Plans one round by the time rule alone. `ids` are the batch's IDs
/// (`> cursor.w`, ascending).
pub fn plan_round(
    cursor: Cursor,
    ids: &[i64],
    now: DateTime<Utc>,
    max_commit_delay: Duration,
) -> RoundPlan {
    plan_round_with(cursor, ids, now, max_commit_delay, None)
}

/// Plans one round with transaction evidence: `cleared`, read before this
/// round's fetch, releases the hole at W+1 at once when it is the cleared
/// hole (same W, its last ID below the cleared bound); otherwise the time
/// rule decides as in [`plan_round`].
pub fn plan_round_with(
    cursor: Cursor,
    ids: &[i64],
    now: DateTime<Utc>,
    max_commit_delay: Duration,
    cleared: Option<Cleared>,
) -> RoundPlan {
    let contiguous = |from_w: i64, start: usize| -> (i64, usize) {
        let mut w = from_w;
        let mut i = start;
        while i < ids.len() && ids[i] == w + 1 {
            w += 1;
            i += 1;
        }
        (w, i)
    };
    let (w1, i1) = contiguous(cursor.w, 0);
    if i1 == ids.len() {
        // No row after a gap: nothing is held back, so no hole is observed.
        return RoundPlan {
            take: i1,
            next: Cursor {
                w: w1,
                hole_since: None,
            },
            released: None,
            holding: false,
        };
    }
    // ids[i1] exists beyond a gap at w1 + 1.
    if w1 > cursor.w {
        // W moved: the hole at the new W+1 is a fresh observation (§4.1).
        return RoundPlan {
            take: i1,
            next: Cursor {
                w: w1,
                hole_since: Some(now),
            },
            released: None,
            holding: true,
        };
    }
    let since = cursor.hole_since.unwrap_or(now);
    let hole_last = ids[i1] - 1;
    let reason = if cleared.is_some_and(|c| c.w == cursor.w && hole_last < c.below) {
        ReleaseReason::NoLiveTransaction
    } else if now - since >= max_commit_delay {
        ReleaseReason::MaxCommitDelay
    } else {
        return RoundPlan {
            take: 0,
            next: Cursor {
                w: cursor.w,
                hole_since: Some(since),
            },
            released: None,
            holding: true,
        };
    };
    // Permanent: skip exactly the hole, then keep counting contiguous rows.
    let hole = ReleasedHole {
        first_id: cursor.w + 1,
        last_id: hole_last,
        first_seen: since,
        reason,
    };
    let (w2, i2) = contiguous(hole.last_id, i1);
    let holding = i2 < ids.len();
    RoundPlan {
        take: i2,
        next: Cursor {
            w: w2,
            hole_since: holding.then_some(now),
        },
        released: Some(hole),
        holding,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn only_a_gap_below_a_marked_row_of_a_mailbox_msgx_owns_is_purged_rows() {
        let gap = |first: i64, last: i64| ReleasedHole {
            first_id: first,
            last_id: last,
            first_seen: Utc::now(),
            reason: ReleaseReason::MaxCommitDelay,
        };
        assert!(purged_after_mark(&gap(5, 9), true, false));
        assert!(
            !purged_after_mark(&gap(5, 9), false, false),
            "unmarked: a hole"
        );
        assert!(
            !purged_after_mark(&gap(5, 9), true, true),
            "shadow: not our marks"
        );
        assert!(purged_after_mark(&gap(1, MAX_PURGED_HOLE), true, false));
        assert!(
            !purged_after_mark(&gap(1, MAX_PURGED_HOLE + 1), true, false),
            "an ID jump"
        );
    }
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn t(s: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap() + Duration::seconds(s)
    }
    const DELAY: i64 = 30;

    fn plan(w: i64, since: Option<i64>, ids: &[i64], now: i64) -> RoundPlan {
        plan_round(
            Cursor {
                w,
                hole_since: since.map(t),
            },
            ids,
            t(now),
            Duration::seconds(DELAY),
        )
    }

    #[test]
    fn contiguous_rows_advance_w() {
        let p = plan(0, None, &[1, 2, 3], 0);
        assert_eq!(
            (p.take, p.next.w, p.next.hole_since, p.holding),
            (3, 3, None, false)
        );
    }

    #[test]
    fn a_new_hole_holds_later_rows_and_starts_its_timer() {
        let p = plan(2, None, &[4, 5], 10);
        assert_eq!((p.take, p.next.w, p.next.hole_since), (0, 2, Some(t(10))));
        assert!(p.holding && p.released.is_none());
    }

    #[test]
    fn a_young_hole_keeps_its_first_observation() {
        let p = plan(2, Some(5), &[4, 5], 30);
        assert_eq!((p.take, p.next.hole_since), (0, Some(t(5))));
    }

    #[test]
    fn an_old_hole_is_released_skipping_only_itself() {
        let p = plan(2, Some(5), &[5, 6, 8], 35);
        assert_eq!(
            p.released,
            Some(ReleasedHole {
                first_id: 3,
                last_id: 4,
                first_seen: t(5),
                reason: ReleaseReason::MaxCommitDelay,
            })
        );
        assert_eq!(
            (p.take, p.next.w),
            (2, 6),
            "rows 5 and 6 follow the released hole"
        );
        assert_eq!(
            p.next.hole_since,
            Some(t(35)),
            "the next hole (7) is a new observation"
        );
    }

    #[test]
    fn a_late_commit_inside_the_window_is_taken_in_order() {
        let first = plan(2, None, &[4], 10);
        assert_eq!(first.take, 0);
        let second = plan(
            first.next.w,
            first.next.hole_since.map(|x| (x - t(0)).num_seconds()),
            &[3, 4],
            20,
        );
        assert_eq!(
            (second.take, second.next.w, second.next.hole_since),
            (2, 4, None)
        );
    }

    #[test]
    fn progress_then_hole_restarts_the_timer() {
        let p = plan(0, Some(0), &[1, 2, 4], 100);
        assert_eq!((p.take, p.next.w, p.next.hole_since), (2, 2, Some(t(100))));
        assert!(
            p.released.is_none(),
            "the old hole at 1 was filled, not released"
        );
    }

    const W: i64 = 2;

    fn sighting(at: i64) -> Sighting {
        Sighting {
            w: W,
            next_id: 5,
            at_micros: at,
        }
    }

    fn snapshot(fresh: bool, oldest: Option<i64>) -> TrxSnapshot {
        TrxSnapshot {
            fresh,
            oldest_start_secs: oldest,
        }
    }

    #[test]
    fn evidence_releases_the_sighted_hole_at_once() {
        let cleared = sighting(0).cleared();
        let p = plan_round_with(
            Cursor {
                w: W,
                hole_since: Some(t(5)),
            },
            &[5, 6, 8],
            t(6),
            Duration::seconds(DELAY),
            Some(cleared),
        );
        assert_eq!(
            p.released,
            Some(ReleasedHole {
                first_id: 3,
                last_id: 4,
                first_seen: t(5),
                reason: ReleaseReason::NoLiveTransaction,
            })
        );
        assert_eq!((p.take, p.next.w, p.next.hole_since), (2, 6, Some(t(6))));
    }

    #[test]
    fn evidence_for_another_hole_changes_nothing() {
        let cursor = Cursor {
            w: W,
            hole_since: Some(t(5)),
        };
        let held = plan(W, Some(5), &[5, 6], 6);
        // Cleared at another W, or only below 4 while the hole reaches 4.
        for cleared in [Cleared { w: 1, below: 5 }, Cleared { w: W, below: 4 }] {
            let p = plan_round_with(
                cursor,
                &[5, 6],
                t(6),
                Duration::seconds(DELAY),
                Some(cleared),
            );
            assert_eq!(p, held, "{cleared:?}");
        }
    }

    #[test]
    fn a_transaction_started_at_or_before_the_sighting_keeps_the_hole() {
        let s = sighting(100_000_000); // 100.0 s
        assert!(!no_live_writer(&s, &snapshot(true, Some(99))));
        assert!(!no_live_writer(&s, &snapshot(true, Some(100))));
        // Within the margin: it may have taken its ID just before the sighting.
        assert!(!no_live_writer(&s, &snapshot(true, Some(101))));
        assert!(no_live_writer(&s, &snapshot(true, Some(102))));
        assert!(no_live_writer(&s, &snapshot(true, None)), "none open");
    }

    #[test]
    fn a_stale_read_is_no_evidence() {
        assert!(!no_live_writer(&sighting(0), &snapshot(false, None)));
        assert!(!no_live_writer(&sighting(0), &snapshot(false, Some(1_000))));
    }

    /// The rule as it was before transaction evidence:
    /// without evidence the new rule must decide exactly this.
    fn time_rule_only(
        cursor: Cursor,
        ids: &[i64],
        now: DateTime<Utc>,
        delay: Duration,
    ) -> RoundPlan {
        let contiguous = |from_w: i64, start: usize| -> (i64, usize) {
            let (mut w, mut i) = (from_w, start);
            while i < ids.len() && ids[i] == w + 1 {
                w += 1;
                i += 1;
            }
            (w, i)
        };
        let (w1, i1) = contiguous(cursor.w, 0);
        if i1 == ids.len() {
            return RoundPlan {
                take: i1,
                next: Cursor {
                    w: w1,
                    hole_since: None,
                },
                released: None,
                holding: false,
            };
        }
        if w1 > cursor.w {
            return RoundPlan {
                take: i1,
                next: Cursor {
                    w: w1,
                    hole_since: Some(now),
                },
                released: None,
                holding: true,
            };
        }
        let since = cursor.hole_since.unwrap_or(now);
        if now - since < delay {
            return RoundPlan {
                take: 0,
                next: Cursor {
                    w: cursor.w,
                    hole_since: Some(since),
                },
                released: None,
                holding: true,
            };
        }
        let hole = ReleasedHole {
            first_id: cursor.w + 1,
            last_id: ids[i1] - 1,
            first_seen: since,
            reason: ReleaseReason::MaxCommitDelay,
        };
        let (w2, i2) = contiguous(hole.last_id, i1);
        let holding = i2 < ids.len();
        RoundPlan {
            take: i2,
            next: Cursor {
                w: w2,
                hole_since: holding.then_some(now),
            },
            released: Some(hole),
            holding,
        }
    }

    fn batch(w: i64, gaps: Vec<i64>) -> Vec<i64> {
        let mut ids = Vec::new();
        let mut next = w;
        for g in gaps {
            next += 1 + g;
            ids.push(next);
        }
        ids
    }

    proptest! {
        /// W never moves backwards, never passes an existing unread row, and
        /// every taken row is exactly W+1..=W' in order.
        #[test]
        fn watermark_invariants(w in 0i64..50, gaps in proptest::collection::vec(0i64..3, 0..30),
                                since in proptest::option::of(0i64..100), now in 0i64..200) {
            let mut ids = Vec::new();
            let mut next = w;
            for g in gaps { next += 1 + g; ids.push(next); }
            let p = plan(w, since, &ids, now);
            prop_assert!(p.next.w >= w);
            prop_assert_eq!(&ids[..p.take], &((w + 1)..=p.next.w).filter(|i| ids.contains(i)).collect::<Vec<_>>()[..]);
            if let Some(first_unread) = ids.get(p.take) { prop_assert!(*first_unread > p.next.w); }
            if let Some(h) = p.released {
                prop_assert!(!ids.iter().any(|i| *i >= h.first_id && *i <= h.last_id));
                prop_assert!(t(now) - h.first_seen >= Duration::seconds(DELAY));
            }
        }

        /// Without evidence the time rule is unchanged.
        #[test]
        fn without_evidence_the_time_rule_is_unchanged(w in 0i64..50, gaps in proptest::collection::vec(0i64..3, 0..30),
                                                       since in proptest::option::of(0i64..100), now in 0i64..200) {
            let ids = batch(w, gaps);
            let cursor = Cursor { w, hole_since: since.map(t) };
            prop_assert_eq!(
                plan_round_with(cursor, &ids, t(now), Duration::seconds(DELAY), None),
                time_rule_only(cursor, &ids, t(now), Duration::seconds(DELAY))
            );
        }

        /// Evidence only ever releases the hole it was read for, only below
        /// the row that was seen after it, never an existing row, and
        /// otherwise decides as the time rule.
        #[test]
        fn evidence_releases_only_the_cleared_hole(w in 0i64..50, gaps in proptest::collection::vec(0i64..3, 0..30),
                                                   since in proptest::option::of(0i64..100), now in 0i64..200,
                                                   cw in 0i64..60, below in 0i64..120) {
            let ids = batch(w, gaps);
            let cursor = Cursor { w, hole_since: since.map(t) };
            let cleared = Cleared { w: cw, below };
            let with = plan_round_with(cursor, &ids, t(now), Duration::seconds(DELAY), Some(cleared));
            let without = time_rule_only(cursor, &ids, t(now), Duration::seconds(DELAY));
            match with.released {
                Some(h) if h.reason == ReleaseReason::NoLiveTransaction => {
                    prop_assert_eq!(cw, w);
                    prop_assert_eq!(h.first_id, w + 1);
                    prop_assert!(h.last_id < below);
                    prop_assert!(!ids.iter().any(|i| *i >= h.first_id && *i <= h.last_id));
                    if let Some(t_rel) = without.released {
                        prop_assert_eq!((t_rel.first_id, t_rel.last_id), (h.first_id, h.last_id));
                        prop_assert_eq!((with.take, with.next), (without.take, without.next));
                    }
                }
                _ => prop_assert_eq!(with, without),
            }
        }

        /// A transaction that is open at the (fresh) read and started at or
        /// before the sighting — so it may hold an ID of the hole — always
        /// keeps the hole, whatever the others do.
        #[test]
        fn a_live_older_transaction_always_keeps_the_hole(sighting_at in 0i64..10_000_000_000, fresh in any::<bool>(),
                                                          holder_lead in 0i64..5_000_000_000,
                                                          others in proptest::collection::vec(0i64..20_000_000_000, 0..8)) {
            let s = Sighting { w: 0, next_id: 2, at_micros: sighting_at };
            let holder = sighting_at - holder_lead;
            // INNODB_TRX shows whole seconds, cut down.
            let oldest = others.iter().copied().chain([holder]).min().map(|us| us.div_euclid(1_000_000));
            let snap = TrxSnapshot { fresh, oldest_start_secs: oldest };
            prop_assert!(!no_live_writer(&s, &snap));
        }
    }
}
