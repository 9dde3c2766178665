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

use chrono::{DateTime, Duration, Utc};

/// The persisted cursor (INBOX_CURSOR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub w: i64,
    pub hole_since: Option<DateTime<Utc>>,
}

/// A released (permanent) hole: IDs `first..=last` were skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleasedHole {
    pub first_id: i64,
    pub last_id: i64,
    pub first_seen: DateTime<Utc>,
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

/// Plans one round. `ids` are the batch's IDs (`> cursor.w`, ascending).
pub fn plan_round(
    cursor: Cursor,
    ids: &[i64],
    now: DateTime<Utc>,
    max_commit_delay: Duration,
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
    if now - since < max_commit_delay {
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
    // Permanent: skip exactly the hole, then keep counting contiguous rows.
    let hole = ReleasedHole {
        first_id: cursor.w + 1,
        last_id: ids[i1] - 1,
        first_seen: since,
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
                first_seen: t(5)
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
    }
}
