//! Backfill (design §6) and the operator recovery around it (§9.1, §9.2):
//!
//! - [`scan`]: the `backfill-scan` job — the exact §6.1 predicate and the
//!   four §6.2 outcomes;
//! - [`gate`]: `MessageLifecycleGate`, the PostgreSQL advisory lock by which
//!   replay and backfill exclude each other;
//! - [`replay`]: `ReplayService`, FAILED/DEAD back to PENDING;
//! - [`ops`]: the abandoned list, `reopen` and `reconcile`;
//! - [`skip`]: `SkipService`, backlog rows set SKIPPED by an operator (§5.4).
//!
//! Every operator action is recorded in BACKFILL_ACTION. docs/backfill.md is
//! the operator's guide.

pub mod gate;
pub mod ops;
pub mod replay;
pub mod scan;
pub mod skip;

/// One requested message that an operator command refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    /// The message (0 when the refusal concerns the whole request).
    pub msg_id: i64,
    pub why: String,
    /// `--force --reason` would lift this refusal.
    pub forceable: bool,
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

/// Sorted MSG_IDs in runs, e.g. `5-7 9 12-13`: a skip of a range stays one
/// readable line.
pub fn id_ranges(ids: &[i64]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for id in sorted {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == id => *last = id,
            _ => runs.push((id, id)),
        }
    }
    runs.iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The IDs of `ids` that are not among `found`, in `ids` order, in linear
/// time: an operator's explicit list was checked in O(n²) while the lifecycle
/// gate and the rows' locks were held (200,000 IDs took 80 s).
pub(crate) fn not_found(ids: &[i64], found: impl IntoIterator<Item = i64>) -> Vec<i64> {
    let found: std::collections::HashSet<i64> = found.into_iter().collect();
    ids.iter()
        .copied()
        .filter(|id| !found.contains(id))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_shown_in_runs() {
        assert_eq!(super::id_ranges(&[9, 5, 6, 7, 13, 12, 7]), "5-7 9 12-13");
        assert_eq!(super::id_ranges(&[]), "");
    }

    #[test]
    fn not_found_keeps_the_requested_order_and_is_linear() {
        assert_eq!(super::not_found(&[5, 1, 9, 1], [1, 7]), vec![5, 9]);
        // 200,000 requested, 200,000 found: linear, not 4·10¹⁰ comparisons.
        let ids: Vec<i64> = (1..=200_000).collect();
        assert!(super::not_found(&ids, ids.iter().copied()).is_empty());
    }
}
