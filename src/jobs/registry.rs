//! Job name → implementation. A job whose manifest exists but whose code does
//! not yet is listed as not implemented, and `msgx run` says so (exit 3).

use super::Job;
use std::sync::Arc;

/// The implementation of `name`, or `None` when it is not implemented yet.
pub fn get(name: &str) -> Option<Arc<dyn Job>> {
    use crate::{backfill, delivery, maintenance, pipeline, requests};
    let job: Arc<dyn Job> = match name {
        "ingest-sweep" => Arc::new(pipeline::inbox_poller::InboxPoller),
        "pump-drain" => Arc::new(pipeline::pump::Pump),
        "dispatch-msg" => Arc::new(delivery::dispatcher::Dispatcher),
        "schd-flush" => Arc::new(delivery::schd_flush::SchdFlush),
        "season-flush" => Arc::new(delivery::season_flush::SeasonFlush),
        "event-cleanup" => Arc::new(delivery::event_cleanup::EventCleanup),
        "snaplog-purge" => Arc::new(maintenance::snaplog_purge::SnaplogPurge),
        "archive-proc-state" => Arc::new(maintenance::archive_proc_state::ArchiveProcState),
        "flight-history-clean" => Arc::new(maintenance::flight_history_clean::FlightHistoryClean),
        "retention" => Arc::new(maintenance::retention::Retention),
        "request-expiry" => Arc::new(requests::expiry::RequestExpiry),
        "backfill-scan" => Arc::new(backfill::scan::BackfillScan),
        _ => return None,
    };
    Some(job)
}

/// True when `name` has an implementation.
pub fn is_implemented(name: &str) -> bool {
    get(name).is_some()
}

#[cfg(test)]
mod tests {
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
}
