//! The message lifecycle as a type (design §3, §9.1): the
//! PROC_STATE states and error classes, the FailureScheduler (when a failed
//! message may be retried), the ReplayService's whitelist and refusals, and
//! the predicates the queue, the backfill and the archive select by. Pure:
//! no I/O, no sqlx; the store maps the enums to SQL with [`ProcState::as_str`]
//! and [`ErrorClass::as_str`].
//!
//! ```text
//! PENDING / FAILED → SUCCEEDED | SKIPPED | FAILED (backoff) | DEAD
//! ```
//!
//! SUCCEEDED, SKIPPED and DEAD are terminal; FAILED is not (it holds the
//! head). ARCHIVED is no processing state: it is the dedup shadow a terminal
//! row leaves after its archive (§9.3), never the head, never backfilled.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

pub use super::stored_name::UnknownName;
use super::stored_name::stored_names;

stored_names! {
    /// PROC_STATE.STATE (design §3, §9.3). Serialised as the stored text.
    #[derive(PartialOrd, Ord, Serialize, Deserialize)]
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum ProcState ("PROC_STATE state") {
        Pending = "PENDING",
        Failed = "FAILED",
        Succeeded = "SUCCEEDED",
        Skipped = "SKIPPED",
        Dead = "DEAD",
        /// The dedup shadow of an archived terminal row (§9.3).
        Archived = "ARCHIVED",
    }
}

impl ProcState {
    /// PENDING or FAILED: the row may still be processed, and the smallest
    /// such row is the head (§5.1). Every processor write requires it.
    pub const fn is_unfinished(self) -> bool {
        matches!(self, ProcState::Pending | ProcState::Failed)
    }

    /// SUCCEEDED, SKIPPED or DEAD (§3): no longer blocks later messages,
    /// and never retried by the pump.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            ProcState::Succeeded | ProcState::Skipped | ProcState::Dead
        )
    }

    /// A row in this state carries a backfill intent (§6.1): every terminal
    /// state, and not an ARCHIVED shadow (§9.3: excluded explicitly).
    pub const fn takes_backfill(self) -> bool {
        self.is_terminal()
    }

    /// A row in this state may be archived (§9.3: terminal only; its
    /// backfill must be settled too, which the store checks).
    pub const fn may_archive(self) -> bool {
        self.is_terminal()
    }

    /// FAILED and DEAD are the states a replay takes back to PENDING (§9.1).
    pub const fn may_replay(self) -> bool {
        matches!(self, ProcState::Failed | ProcState::Dead)
    }
}

/// Error classes (design §3; reference.md, error classes and replay whitelist). Serialised
/// as the stored text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorClass {
    Malformed,
    CodecError,
    Infra,
    Unsupported,
    Protocol,
    Exhausted,
    /// A database error of the message's own statement that is not an
    /// outage (a data exception, a constraint, a program limit):
    /// [`database_error_class`]. Retried on a finite schedule, then
    /// EXHAUSTED (§3, §5.1: the attempt limit is the terminal rule).
    Data,
}

impl ErrorClass {
    /// The stored text.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Malformed => "MALFORMED",
            ErrorClass::CodecError => "CODEC_ERROR",
            ErrorClass::Infra => "INFRA",
            ErrorClass::Unsupported => "UNSUPPORTED",
            ErrorClass::Protocol => "PROTOCOL",
            ErrorClass::Exhausted => "EXHAUSTED",
            ErrorClass::Data => "DATA",
        }
    }

    /// Every class, in stored-text order of design §3, DATA last.
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::Malformed,
        ErrorClass::CodecError,
        ErrorClass::Infra,
        ErrorClass::Unsupported,
        ErrorClass::Protocol,
        ErrorClass::Exhausted,
        ErrorClass::Data,
    ];

    /// The class stored as `text` (case-insensitive), if any.
    pub fn parse(text: &str) -> Option<ErrorClass> {
        ErrorClass::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(text))
    }

    /// True for the classes a FAILED row may carry (they have a retry
    /// schedule); MALFORMED, PROTOCOL and EXHAUSTED go straight to DEAD.
    pub const fn retries(self) -> bool {
        matches!(
            self,
            ErrorClass::Infra | ErrorClass::CodecError | ErrorClass::Unsupported | ErrorClass::Data
        )
    }

    /// Replays without force (the replay whitelist of reference.md).
    pub fn replays_freely(self) -> bool {
        REPLAY_WHITELIST.contains(&self)
    }

    /// Replays only with `--force --reason` (recorded as `REPLAY_FORCED`).
    pub fn replays_forced_only(self) -> bool {
        REPLAY_FORCE_ONLY.contains(&self)
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::str::FromStr for ErrorClass {
    type Err = UnknownName;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ErrorClass::parse(text).ok_or_else(|| UnknownName(text.to_string(), "error class"))
    }
}

/// Classes that replay without force (design §9.1). DATA too: the message
/// was well-formed and its statement failed on the database; once the cause
/// is fixed (a schema limit, a conflicting row) it may simply run again.
pub const REPLAY_WHITELIST: [ErrorClass; 5] = [
    ErrorClass::CodecError,
    ErrorClass::Infra,
    ErrorClass::Unsupported,
    ErrorClass::Exhausted,
    ErrorClass::Data,
];

/// Classes that replay only with `--force --reason`.
pub const REPLAY_FORCE_ONLY: [ErrorClass; 2] = [ErrorClass::Malformed, ErrorClass::Protocol];

/// The classes a replay under `force` may move: the whitelist, and with
/// force the force-only classes too (the replay UPDATE's class filter).
pub fn replayable_classes(force: bool) -> Vec<ErrorClass> {
    let mut classes = REPLAY_WHITELIST.to_vec();
    if force {
        classes.extend(REPLAY_FORCE_ONLY);
    }
    classes
}

/// Why a replay is refused, and whether `--force --reason` would lift it
/// (the console offers its "force" box only then).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayRefusal {
    pub why: String,
    pub forceable: bool,
}

impl ReplayRefusal {
    fn fixed(why: String) -> ReplayRefusal {
        ReplayRefusal {
            why,
            forceable: false,
        }
    }
}

/// Why a row in `state` whose ERROR_CLASS reads `class` (`None`: none
/// recorded, or a text that names no class) may not replay under `force`;
/// `None` when it may (design §9.1).
pub fn replay_refusal(
    state: ProcState,
    class: Option<ErrorClass>,
    force: bool,
) -> Option<ReplayRefusal> {
    if !state.may_replay() {
        return Some(ReplayRefusal::fixed(format!(
            "state {state} does not replay (only FAILED and DEAD; SUCCEEDED and SKIPPED never)"
        )));
    }
    match class {
        Some(c) => class_refusal(c, force),
        None => Some(ReplayRefusal::fixed("no error class recorded".into())),
    }
}

/// Why every FAILED/DEAD row of `class` may not replay under `force`
/// (`msgx replay --class`), or `None` when they may.
pub fn class_refusal(class: ErrorClass, force: bool) -> Option<ReplayRefusal> {
    if class.replays_freely() || (class.replays_forced_only() && force) {
        None
    } else if class.replays_forced_only() {
        Some(ReplayRefusal {
            why: format!("error class {class} replays only with --force --reason"),
            forceable: true,
        })
    } else {
        Some(ReplayRefusal::fixed(format!(
            "error class {class} is not replayable"
        )))
    }
}

/// The class of a database error raised by a message's own statement (the
/// identity binding, a processor's transaction), by its SQLSTATE (`None`:
/// no server error at all — connection lost, I/O, TLS, pool timeout).
/// Design §3, §5.1: INFRA is for outages and never exhausts, so only what
/// a wait can cure is INFRA; an error the message's data provokes every
/// time is DATA, which has a finite schedule (docs/pipeline.md "Database
/// errors" gives each class's reason).
///
/// INFRA: no SQLSTATE; `08` connection; `53` insufficient resources; `57`
/// operator intervention (shutdown, statement timeout); `58` system error;
/// `XX` internal error; `40001` serialization failure, `40P01` deadlock,
/// `40003` completion unknown; `55P03` lock timeout; `25` transaction state
/// (read-only after a failover, idle timeout); `28` authorization, `3D`
/// database, `3F` schema and `42` syntax/access (a missing grant, table or
/// migration fails every message alike). DATA: everything else — `22` data
/// exception, `23` integrity violation, `54` program limit, `21`
/// cardinality, `40002` deferred constraint, `P0` a trigger's RAISE, and any
/// class not listed.
pub fn database_error_class(sqlstate: Option<&str>) -> ErrorClass {
    let Some(code) = sqlstate else {
        return ErrorClass::Infra;
    };
    const INFRA_CODES: [&str; 4] = ["40001", "40P01", "40003", "55P03"];
    const INFRA_CLASSES: [&str; 10] = ["08", "53", "57", "58", "XX", "25", "28", "3D", "3F", "42"];
    let class = code.get(..2).unwrap_or(code);
    if INFRA_CODES.contains(&code) || INFRA_CLASSES.contains(&class) {
        ErrorClass::Infra
    } else {
        ErrorClass::Data
    }
}

/// One class's retry schedule (`msgx.pipeline.retry.<class>`), as plain
/// values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Attempts before DEAD(EXHAUSTED); `None` = unlimited (INFRA).
    pub max_attempts: Option<u32>,
    /// The wait before retry n is tier n; unlimited: the last tier repeats.
    pub backoff: Vec<Duration>,
}

impl Schedule {
    /// True when a FAILED head with `attempts` failures of this schedule's
    /// class is at its limit (never for an unlimited schedule).
    pub fn exhausted(&self, attempts: i32) -> bool {
        self.max_attempts
            .is_some_and(|max| i64::from(attempts) >= i64::from(max))
    }

    /// The next attempt time after `attempts` failures (1-based): tier
    /// `attempts − 1`, the last tier repeating; at the limit of a limited
    /// schedule, `now` (due for EXHAUSTED).
    pub fn next_attempt_at(&self, attempts: i32, now: DateTime<Utc>) -> DateTime<Utc> {
        if self.exhausted(attempts) {
            return now;
        }
        let index = usize::try_from(attempts.max(1) - 1).unwrap_or(0);
        let tier = self
            .backoff
            .get(index)
            .or(self.backoff.last())
            .copied()
            .unwrap_or_else(Duration::zero);
        now + tier
    }
}

/// The FailureScheduler (design §9.1): when a failed message may be retried,
/// with one schedule per retryable class.
///
/// - A limited schedule (CODEC_ERROR, UNSUPPORTED, DATA) has one tier per retry
///   (exactly max-attempts − 1, checked at startup). At the limit the head is
///   due at once, and the pump turns it into DEAD(EXHAUSTED) (§5.1 step 3).
/// - The INFRA schedule is unlimited: its last tier repeats, and the head is
///   never exhausted, so a mailbox or PostgreSQL outage of any length leaves
///   the head FAILED (and visible: `msgx_pipeline_head_blocked_seconds`,
///   `/readyz` check `head`), never DEAD.
/// - `ATTEMPTS` counts the consecutive failures of the class recorded last:
///   a failure of another class starts that class's schedule at its first
///   tier. Otherwise an hour of INFRA failures would leave an unsupported
///   message no retry at all once the mailbox is back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureScheduler {
    pub infra: Schedule,
    pub codec_error: Schedule,
    pub unsupported: Schedule,
    pub data: Schedule,
}

impl FailureScheduler {
    /// The schedule of a FAILED class; `None` for the classes that never
    /// retry (MALFORMED, PROTOCOL and EXHAUSTED are terminal).
    pub fn schedule(&self, class: ErrorClass) -> Option<&Schedule> {
        match class {
            ErrorClass::Infra => Some(&self.infra),
            ErrorClass::CodecError => Some(&self.codec_error),
            ErrorClass::Unsupported => Some(&self.unsupported),
            ErrorClass::Data => Some(&self.data),
            ErrorClass::Malformed | ErrorClass::Protocol | ErrorClass::Exhausted => None,
        }
    }

    /// The attempt count after a failure of `class`, when the row had
    /// `stored` attempts and last failed with `stored_class`.
    pub fn attempts_after(stored: i32, stored_class: Option<ErrorClass>, class: ErrorClass) -> i32 {
        if stored_class == Some(class) {
            stored.saturating_add(1)
        } else {
            1
        }
    }

    /// True when a head in `state`, whose last failure was of `class`, has
    /// used up its class's attempts: the pump turns it DEAD(EXHAUSTED).
    pub fn exhausted(&self, state: ProcState, class: Option<ErrorClass>, attempts: i32) -> bool {
        state == ProcState::Failed
            && class
                .and_then(|c| self.schedule(c))
                .is_some_and(|s| s.exhausted(attempts))
    }

    /// When a message that just failed with `class` (now its `attempts`-th
    /// consecutive failure of that class) may be tried again; `now` for a
    /// class without a schedule.
    pub fn next_attempt_at(
        &self,
        class: ErrorClass,
        attempts: i32,
        now: DateTime<Utc>,
    ) -> DateTime<Utc> {
        match self.schedule(class) {
            Some(s) => s.next_attempt_at(attempts, now),
            None => now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::<Utc>::UNIX_EPOCH + Duration::seconds(s)
    }

    fn secs(v: &[i64]) -> Vec<Duration> {
        v.iter().map(|s| Duration::seconds(*s)).collect()
    }

    /// The shape of the default configuration (config tests check that the
    /// defaults are these).
    fn scheduler() -> FailureScheduler {
        let fast = Schedule {
            max_attempts: Some(3),
            backoff: secs(&[10, 30]),
        };
        FailureScheduler {
            infra: Schedule {
                max_attempts: None,
                backoff: secs(&[5, 15, 60]),
            },
            codec_error: fast.clone(),
            unsupported: fast,
            data: Schedule {
                max_attempts: Some(3),
                backoff: secs(&[30, 120]),
            },
        }
    }

    #[test]
    fn outages_are_infra_and_what_the_data_provokes_is_data() {
        use ErrorClass::{Data, Infra};
        let table: [(Option<&str>, ErrorClass, &str); 28] = [
            (
                None,
                Infra,
                "no server error: connection lost, pool timeout",
            ),
            (Some("08006"), Infra, "connection failure"),
            (Some("08P01"), Infra, "protocol violation"),
            (Some("53100"), Infra, "disk full"),
            (Some("53300"), Infra, "too many connections"),
            (Some("57014"), Infra, "statement timeout"),
            (Some("57P01"), Infra, "admin shutdown"),
            (Some("57P03"), Infra, "cannot connect now"),
            (Some("58030"), Infra, "I/O error"),
            (Some("XX000"), Infra, "internal error"),
            (Some("40001"), Infra, "serialization failure"),
            (Some("40P01"), Infra, "deadlock"),
            (Some("40003"), Infra, "statement completion unknown"),
            (Some("55P03"), Infra, "lock timeout"),
            (Some("25006"), Infra, "read-only transaction: a failover"),
            (Some("25P03"), Infra, "idle-in-transaction timeout"),
            (Some("28P01"), Infra, "authentication"),
            (Some("3D000"), Infra, "database gone"),
            (Some("42501"), Infra, "a revoked grant"),
            (Some("42P01"), Infra, "a missing table (migration)"),
            (Some("22001"), Data, "string too long"),
            (Some("22003"), Data, "numeric out of range"),
            (Some("23505"), Data, "unique violation"),
            (Some("23514"), Data, "check violation"),
            (Some("54000"), Data, "index row too large"),
            (Some("21000"), Data, "a row affected twice"),
            (Some("40002"), Data, "deferred constraint"),
            (Some("P0001"), Data, "a trigger's RAISE"),
        ];
        for (code, class, what) in table {
            assert_eq!(database_error_class(code), class, "{code:?} {what}");
        }
        assert_eq!(
            database_error_class(Some("")),
            Data,
            "no class: not an outage"
        );
    }

    #[test]
    fn a_limited_schedule_has_one_tier_per_retry_then_is_due_at_the_limit() {
        let s = scheduler().unsupported;
        assert_eq!(s.next_attempt_at(1, at(0)), at(10));
        assert_eq!(s.next_attempt_at(2, at(0)), at(30));
        assert!(!s.exhausted(2));
        assert!(s.exhausted(3));
        assert_eq!(s.next_attempt_at(3, at(0)), at(0), "due for EXHAUSTED");
    }

    #[test]
    fn infra_repeats_its_last_tier_and_never_exhausts() {
        let s = scheduler().infra;
        assert_eq!(s.next_attempt_at(1, at(0)), at(5));
        assert_eq!(s.next_attempt_at(2, at(0)), at(15));
        assert_eq!(s.next_attempt_at(3, at(0)), at(60));
        assert_eq!(s.next_attempt_at(10_000, at(0)), at(60));
        assert!(!s.exhausted(i32::MAX));
    }

    #[test]
    fn a_new_class_starts_its_own_schedule() {
        use ErrorClass::*;
        let after = FailureScheduler::attempts_after;
        assert_eq!(after(0, None, Unsupported), 1);
        assert_eq!(after(1, Some(Unsupported), Unsupported), 2);
        assert_eq!(after(40, Some(Infra), Unsupported), 1);
        assert_eq!(after(2, Some(Unsupported), Infra), 1);
        assert_eq!(after(i32::MAX, Some(Infra), Infra), i32::MAX);
    }

    #[test]
    fn only_the_retryable_classes_have_a_schedule() {
        let all = scheduler();
        for c in ErrorClass::ALL {
            assert_eq!(all.schedule(c).is_some(), c.retries(), "{c:?}");
            let retryable = matches!(
                c,
                ErrorClass::Infra
                    | ErrorClass::CodecError
                    | ErrorClass::Unsupported
                    | ErrorClass::Data
            );
            assert_eq!(c.retries(), retryable, "{c:?}");
        }
        assert_eq!(
            all.next_attempt_at(ErrorClass::Malformed, 1, at(7)),
            at(7),
            "no schedule: due at once"
        );
    }

    #[test]
    fn only_a_failed_head_exhausts() {
        let s = scheduler();
        let class = Some(ErrorClass::Unsupported);
        assert!(s.exhausted(ProcState::Failed, class, 3));
        assert!(!s.exhausted(ProcState::Failed, class, 2));
        assert!(!s.exhausted(ProcState::Failed, None, 99));
        assert!(!s.exhausted(ProcState::Failed, Some(ErrorClass::Infra), 99));
        for state in ProcState::ALL
            .into_iter()
            .filter(|s| *s != ProcState::Failed)
        {
            assert!(!s.exhausted(state, class, 99), "{state}");
        }
    }

    #[test]
    fn whitelist_replays_force_only_classes_need_force() {
        for c in REPLAY_WHITELIST {
            for state in [ProcState::Dead, ProcState::Failed] {
                assert_eq!(replay_refusal(state, Some(c), false), None, "{c}");
            }
            assert_eq!(class_refusal(c, false), None, "{c}");
        }
        for c in REPLAY_FORCE_ONLY {
            assert!(
                replay_refusal(ProcState::Dead, Some(c), false).is_some(),
                "{c}"
            );
            assert_eq!(replay_refusal(ProcState::Dead, Some(c), true), None, "{c}");
            assert_eq!(
                class_refusal(c, false),
                Some(ReplayRefusal {
                    why: format!("error class {c} replays only with --force --reason"),
                    forceable: true
                })
            );
        }
        assert_eq!(replayable_classes(false), REPLAY_WHITELIST.to_vec());
        assert_eq!(replayable_classes(true).len(), 7);
        assert!(
            ErrorClass::Data.replays_freely(),
            "DATA replays after a fix"
        );
    }

    #[test]
    fn finished_and_unfinished_states_never_replay() {
        for s in [
            ProcState::Succeeded,
            ProcState::Skipped,
            ProcState::Pending,
            ProcState::Archived,
        ] {
            assert!(
                replay_refusal(s, Some(ErrorClass::Infra), true).is_some(),
                "{s}"
            );
        }
        assert!(replay_refusal(ProcState::Dead, None, true).is_some_and(|r| !r.forceable));
        assert!(replay_refusal(ProcState::Succeeded, None, false).is_some_and(|r| !r.forceable));
    }

    #[test]
    fn the_predicates_partition_the_states() {
        for s in ProcState::ALL {
            let shadow = s == ProcState::Archived;
            assert_eq!(
                s.is_unfinished() as u8 + s.is_terminal() as u8 + shadow as u8,
                1,
                "{s}"
            );
            assert_eq!(s.takes_backfill(), s.is_terminal(), "{s}");
            assert_eq!(s.may_archive(), s.is_terminal(), "{s}");
            assert_eq!(
                s.may_replay(),
                matches!(s, ProcState::Failed | ProcState::Dead),
                "{s}"
            );
        }
        assert!(!ProcState::Archived.takes_backfill(), "§9.3");
    }

    #[test]
    fn every_state_and_class_round_trips_through_its_text() {
        for s in ProcState::ALL {
            assert_eq!(s.as_str().parse::<ProcState>(), Ok(s));
            assert_eq!(ProcState::try_from(s.to_string()), Ok(s));
            let json = serde_json::to_string(&s).expect("serializes");
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<ProcState>(&json).ok(), Some(s));
        }
        for c in ErrorClass::ALL {
            assert_eq!(c.as_str().parse::<ErrorClass>(), Ok(c));
            assert_eq!(ErrorClass::parse(&c.as_str().to_lowercase()), Some(c));
            let json = serde_json::to_string(&c).expect("serializes");
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(serde_json::from_str::<ErrorClass>(&json).ok(), Some(c));
        }
        assert!(
            "pending".parse::<ProcState>().is_err(),
            "stored text is exact"
        );
        assert!("NOPE".parse::<ErrorClass>().is_err());
        assert_eq!(format!("{:<9}|", ProcState::Dead), "DEAD     |");
    }

    #[test]
    fn the_codec_names_its_classes_as_the_store_does() {
        use crate::codec::DecodeError;
        let malformed = DecodeError::malformed("MSG", "r");
        let codec = DecodeError::codec("MSG", "r");
        assert_eq!(malformed.class(), ErrorClass::Malformed.as_str());
        assert_eq!(codec.class(), ErrorClass::CodecError.as_str());
    }

    proptest! {
        /// Whatever the INFRA schedule and however many failures, the next
        /// attempt lies within one capped tier and the head never exhausts.
        #[test]
        fn infra_waits_capped_and_forever(tiers in proptest::collection::vec(1i64..600, 1..6),
                                          attempts in 1i32..i32::MAX) {
            let s = Schedule { max_attempts: None, backoff: secs(&tiers) };
            let wait = s.next_attempt_at(attempts, at(0)) - at(0);
            let cap = *tiers.iter().max().expect("non-empty");
            prop_assert!(wait > Duration::zero());
            prop_assert!(wait <= Duration::seconds(cap));
            prop_assert!(!s.exhausted(attempts));
        }

        /// Below the limit the wait never shrinks as the attempts grow
        /// (with non-decreasing tiers), and it is capped by the last tier.
        #[test]
        fn the_wait_is_monotone_and_capped(mut tiers in proptest::collection::vec(1i64..600, 1..6),
                                           a in 1i32..50, b in 1i32..50) {
            tiers.sort_unstable();
            let s = Schedule { max_attempts: None, backoff: secs(&tiers) };
            let (lo, hi) = (a.min(b), a.max(b));
            prop_assert!(s.next_attempt_at(lo, at(0)) <= s.next_attempt_at(hi, at(0)));
            prop_assert!(s.next_attempt_at(hi, at(0)) <= at(*tiers.last().expect("non-empty")));
        }

        /// A class without a schedule (the terminal classes) is never
        /// retried later than now, and no state but FAILED ever exhausts.
        #[test]
        fn terminal_classes_never_wait(attempts in 0i32..1000, i in 0usize..7, j in 0usize..6) {
            let s = scheduler();
            let class = ErrorClass::ALL[i];
            if !class.retries() {
                prop_assert_eq!(s.next_attempt_at(class, attempts, at(3)), at(3));
                prop_assert!(!s.exhausted(ProcState::Failed, Some(class), attempts));
            }
            let state = ProcState::ALL[j];
            if state.is_terminal() {
                prop_assert!(!s.exhausted(state, Some(class), attempts));
            }
        }
    }
}
