//! The whole integration suite as one test binary (issue 33 item 1): one
//! module per area, the shared helpers in `common`. One binary links once;
//! 36 binaries of ~100 MB each were most of a cold build. nextest still runs
//! every test in its own process, so process-wide state (the metrics
//! recorder, log capture, environment) stays per test; `.config/nextest.toml`
//! groups the tests that start private servers or a browser.
//!
//! Run one area with a filter: `cargo nextest run -E 'test(/^compat::/)'`.

mod common;

mod acris;
mod architecture;
mod archive;
mod backfill;
mod browser_harness;
mod chaos_compare;
mod codec_fixtures;
mod codec_proptest;
mod compat;
mod config_cli;
mod console;
mod console_sso;
mod contract;
mod daemon;
mod db_timeouts;
mod decode_cli;
mod delivery;
mod deploy;
mod doctor;
mod flight_store;
mod generate_cli;
mod history;
mod hole_evidence;
mod identity;
mod ingest;
mod job_pause;
mod kafka_tls;
mod locks;
mod maintenance_jobs;
mod observability;
mod operability;
mod pg_hosts;
mod pipeline;
mod poison;
mod requests;
mod schema;
mod season;
mod skip;
mod tls;
mod trace_context;
mod traceability;
mod version_cli;
