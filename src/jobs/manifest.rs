//! Job manifests (`jobs/<name>.toml`): name, purpose, class, lock and default
//! per-run bounds. Embedded at build time so the binary and the daemon read
//! the same single source.

use crate::config::Dur;
use serde::{Deserialize, Serialize};

/// Pipeline jobs take the instance lock; maintenance jobs a per-job lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobClass {
    Pipeline,
    Maintenance,
}

/// Which advisory lock a run takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockKind {
    /// The instance lock: one active writer for the whole pipeline.
    Instance,
    /// A lock of this job only, so a cron-window run may go beside the daemon.
    Job,
}

/// Default per-run bounds; `msgx run --max-items` overrides `max_items`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Bounds {
    /// Items (rows, messages, events) one run handles at most.
    pub max_items: u64,
    /// Wall-clock budget of one run; the run stops between batches after it.
    pub time_budget: Dur,
    /// Rows per statement for maintenance jobs.
    #[serde(default)]
    pub batch: Option<u32>,
}

/// One `jobs/<name>.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub purpose: String,
    pub class: JobClass,
    pub lock: LockKind,
    pub bounds: Bounds,
}

/// The embedded manifests, in the order `msgx jobs` lists them.
pub const MANIFEST_SOURCES: &[(&str, &str)] = &[
    ("ingest-sweep", include_str!("../../jobs/ingest-sweep.toml")),
    ("pump-drain", include_str!("../../jobs/pump-drain.toml")),
    ("dispatch-msg", include_str!("../../jobs/dispatch-msg.toml")),
    ("schd-flush", include_str!("../../jobs/schd-flush.toml")),
    ("season-flush", include_str!("../../jobs/season-flush.toml")),
    (
        "backfill-scan",
        include_str!("../../jobs/backfill-scan.toml"),
    ),
    (
        "event-cleanup",
        include_str!("../../jobs/event-cleanup.toml"),
    ),
    (
        "archive-proc-state",
        include_str!("../../jobs/archive-proc-state.toml"),
    ),
    (
        "flight-history-clean",
        include_str!("../../jobs/flight-history-clean.toml"),
    ),
    (
        "snaplog-purge",
        include_str!("../../jobs/snaplog-purge.toml"),
    ),
    (
        "request-expiry",
        include_str!("../../jobs/request-expiry.toml"),
    ),
    ("retention", include_str!("../../jobs/retention.toml")),
];

/// Parses every embedded manifest. A broken manifest is a build defect, caught
/// by the test below, so callers may treat an error here as fatal.
pub fn all() -> Result<Vec<Manifest>, String> {
    MANIFEST_SOURCES
        .iter()
        .map(|(file, text)| {
            let m: Manifest = toml::from_str(text).map_err(|e| format!("jobs/{file}.toml: {e}"))?;
            if m.name != *file {
                return Err(format!(
                    "jobs/{file}.toml: name {:?} differs from the file name",
                    m.name
                ));
            }
            Ok(m)
        })
        .collect()
}

/// The manifest of `name`.
pub fn find(name: &str) -> Option<Manifest> {
    all().ok()?.into_iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_manifest_parses_and_matches_its_file() {
        let all = all().expect("manifests parse");
        assert_eq!(all.len(), 12);
        for m in &all {
            let expected = if m.class == JobClass::Pipeline {
                LockKind::Instance
            } else {
                LockKind::Job
            };
            assert_eq!(m.lock, expected, "{}", m.name);
            assert!(
                m.bounds.max_items > 0 && !m.bounds.time_budget.is_zero(),
                "{}",
                m.name
            );
        }
    }

    #[test]
    fn every_file_in_jobs_dir_is_embedded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .expect("jobs/ exists")
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".toml")
                    .map(String::from)
            })
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = MANIFEST_SOURCES
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }
}
