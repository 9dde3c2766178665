//! Backfill (design §6) and the operator recovery around it (§9.1, §9.2):
//!
//! - [`scan`]: the `backfill-scan` job — the exact §6.1 predicate and the
//!   four §6.2 outcomes;
//! - [`gate`]: `MessageLifecycleGate`, the PostgreSQL advisory lock by which
//!   replay and backfill exclude each other;
//! - [`replay`]: `ReplayService`, FAILED/DEAD back to PENDING;
//! - [`ops`]: the abandoned list, `reopen` and `reconcile`.
//!
//! Every operator action is recorded in BACKFILL_ACTION. docs/backfill.md is
//! the operator's guide.

pub mod gate;
pub mod ops;
pub mod replay;
pub mod scan;

/// One requested message that an operator command refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    /// The message (0 when the refusal concerns the whole request).
    pub msg_id: i64,
    pub why: String,
}

/// The actor recorded for an operator action: `--actor`, else the OS user
/// (`$USER`, `$LOGNAME`, `$USERNAME`), else `unknown`.
pub fn actor(explicit: Option<&str>) -> String {
    explicit
        .map(str::to_string)
        .filter(|a| !a.trim().is_empty())
        .or_else(|| {
            ["USER", "LOGNAME", "USERNAME"]
                .iter()
                .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        })
        .unwrap_or_else(|| "unknown".into())
}
