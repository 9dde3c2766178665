//! Job name → implementation, each built from the global config once per run
//! by its validating constructor. A job whose manifest
//! exists but whose code does not yet is listed as not implemented, and
//! `msgx run` says so (exit 3).

use crate::config::Config;
use crate::jobs::passes::AnyJob;
use crate::jobs::{JobConfigError, JobSettings};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The jobs that have an implementation, by manifest name.
const IMPLEMENTED: &[&str] = &[
    "ingest-sweep",
    "pump-drain",
    "dispatch-msg",
    "schd-flush",
    "season-flush",
    "event-cleanup",
    "snaplog-purge",
    "archive-proc-state",
    "flight-history-clean",
    "retention",
    "request-expiry",
    "backfill-scan",
];

/// The implementation of `name` with its settings from `config`, or `None`
/// when it is not implemented yet.
pub fn build(name: &str, config: &Config) -> Result<Option<Arc<dyn AnyJob>>, JobConfigError> {
    use crate::delivery::{Delivery, DeliveryConfig, Feed};
    use crate::{backfill, delivery, maintenance, pipeline, requests};
    let delivery = |round_size| DeliveryConfig::from_config(config, round_size);
    let m = &config.msgx;
    let job = match name {
        "ingest-sweep" => built(pipeline::inbox_poller::InboxPoller::new, config)?,
        "pump-drain" => built(pipeline::pump::Pump::new, config)?,
        "dispatch-msg" => arc(Delivery::new(Feed::Msg, delivery(m.dispatch.batch))?),
        "schd-flush" => arc(Delivery::new(Feed::Schd, delivery(m.schd.flush_limit))?),
        "season-flush" => arc(Delivery::new(Feed::Season, delivery(m.season.flush_limit))?),
        "event-cleanup" => built(delivery::event_cleanup::EventCleanup::new, config)?,
        "snaplog-purge" => built(maintenance::snaplog_purge::SnaplogPurge::new, config)?,
        "archive-proc-state" => built(
            maintenance::archive_proc_state::ArchiveProcState::new,
            config,
        )?,
        "flight-history-clean" => built(
            maintenance::flight_history_clean::FlightHistoryClean::new,
            config,
        )?,
        "retention" => built(maintenance::retention::Retention::new, config)?,
        "request-expiry" => built(requests::expiry::RequestExpiry::new, config)?,
        "backfill-scan" => built(backfill::scan::BackfillScan::new, config)?,
        _ => return Ok(None),
    };
    Ok(Some(job))
}

fn arc<J: AnyJob + 'static>(job: J) -> Arc<dyn AnyJob> {
    Arc::new(job)
}

/// A job from its validating constructor and its settings read from `config`.
fn built<J: AnyJob + 'static, S: JobSettings>(
    new: fn(S) -> Result<J, JobConfigError>,
    config: &Config,
) -> Result<Arc<dyn AnyJob>, JobConfigError> {
    Ok(arc(new(S::from_config(config))?))
}

/// The jobs one runner built, each once from its config: job state (the
/// pump's one WARN per watermark) lives as long as the runner, not one run.
#[derive(Clone, Default)]
pub struct Jobs(Arc<Mutex<HashMap<String, Arc<dyn AnyJob>>>>);

impl Jobs {
    /// `name`'s job, built from `config` on first use ([`build`]).
    pub fn get(
        &self,
        name: &str,
        config: &Config,
    ) -> Result<Option<Arc<dyn AnyJob>>, JobConfigError> {
        let mut built = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(job) = built.get(name) {
            return Ok(Some(job.clone()));
        }
        let Some(job) = build(name, config)? else {
            return Ok(None);
        };
        built.insert(name.to_string(), job.clone());
        Ok(Some(job))
    }
}

/// True when `name` has an implementation.
pub fn is_implemented(name: &str) -> bool {
    IMPLEMENTED.contains(&name)
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    #[test]
    fn registry_names_are_manifest_names() {
        let names: Vec<String> = crate::jobs::manifest::all()
            .unwrap()
            .into_iter()
            .map(|m| m.name)
            .collect();
        for implemented in [
            "dispatch-msg",
            "schd-flush",
            "season-flush",
            "event-cleanup",
            "snaplog-purge",
            "retention",
            "request-expiry",
            "backfill-scan",
        ] {
            assert!(names.iter().any(|n| n == implemented));
            assert!(super::is_implemented(implemented));
        }
        assert!(!super::is_implemented("no-such-job"));
    }

    #[test]
    fn every_implemented_job_builds_from_the_default_config() {
        let config = Config::default();
        for name in super::IMPLEMENTED {
            assert!(matches!(super::build(name, &config), Ok(Some(_))), "{name}");
        }
        assert!(matches!(super::build("no-such-job", &config), Ok(None)));
    }
}
