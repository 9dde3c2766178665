//! Job name → implementation, each built from the global config once per run
//! by its validating constructor (issue 19 item 5). A job whose manifest
//! exists but whose code does not yet is listed as not implemented, and
//! `msgx run` says so (exit 3).

use super::JobConfigError;
use super::runner::AnyJob;
use crate::config::Config;
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
    use crate::{backfill, delivery, maintenance, pipeline, requests};
    fn arc<J: AnyJob + 'static>(job: J) -> Arc<dyn AnyJob> {
        Arc::new(job)
    }
    let job = match name {
        "ingest-sweep" => arc(pipeline::inbox_poller::InboxPoller::from_config(config)?),
        "pump-drain" => arc(pipeline::pump::Pump::from_config(config)?),
        "dispatch-msg" => arc(delivery::dispatcher::Dispatcher::from_config(config)?),
        "schd-flush" => arc(delivery::schd_flush::SchdFlush::from_config(config)?),
        "season-flush" => arc(delivery::season_flush::SeasonFlush::from_config(config)?),
        "event-cleanup" => arc(delivery::event_cleanup::EventCleanup::from_config(config)?),
        "snaplog-purge" => arc(maintenance::snaplog_purge::SnaplogPurge::from_config(
            config,
        )?),
        "archive-proc-state" => {
            arc(maintenance::archive_proc_state::ArchiveProcState::from_config(config)?)
        }
        "flight-history-clean" => {
            arc(maintenance::flight_history_clean::FlightHistoryClean::from_config(config)?)
        }
        "retention" => arc(maintenance::retention::Retention::from_config(config)?),
        "request-expiry" => arc(requests::expiry::RequestExpiry::from_config(config)?),
        "backfill-scan" => arc(backfill::scan::BackfillScan::from_config(config)?),
        _ => return Ok(None),
    };
    Ok(Some(job))
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
        let names: Vec<String> = super::super::manifest::all()
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
