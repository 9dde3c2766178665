//! Maintenance jobs (design §9.3): bounded, idempotent, safe for cron windows.

pub mod archive_proc_state;
pub mod flight_history_clean;
pub mod retention;
pub mod snaplog_purge;
