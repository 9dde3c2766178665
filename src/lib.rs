//! msgx (msgexchange-v2): reads the shared SIS mailbox in ID order, keeps the
//! authoritative flight current state in PostgreSQL, and publishes events to
//! Kafka through a transactional outbox — as a suite of bounded, idempotent,
//! scheduled jobs.
//!
//! Layout: `codec` and `domain` are pure (no I/O, no clock); `store` talks to
//! PostgreSQL and the mailbox; `pipeline`, `delivery`, `maintenance` and
//! `requests` hold the jobs; `scheduler` runs them; `cli` and `commands` are
//! the command line.

/// The global allocator of the `msgx` binary; the codec benchmark and
/// `examples/codec_profile.rs` declare it too (`#[global_allocator]`), so
/// they measure the decoder as production runs it. glibc's malloc hands the
/// heap top back to the kernel whenever a large decoded SCHD is dropped and
/// faults it in again for the next one: measured 1,480 page faults and ~30%
/// of the decode time in the kernel per 1,000-flight SCHD
/// (docs/BENCHMARKS.md, codec). mimalloc keeps its pages, and its small
/// allocations are cheaper too.
pub use mimalloc::MiMalloc as Allocator;

pub mod acris;
pub mod backfill;
pub mod build_info;
pub mod cli;
pub mod clock;
pub mod codec;
pub mod commands;
pub mod config;
pub mod console;
pub mod contract;
pub mod delivery;
pub mod domain;
pub mod error_text;
pub mod exit;
pub mod fault;
pub mod http;
pub mod inspect;
pub mod instance_lock;
pub mod jobs;
pub mod kafka;
pub mod log_text;
pub mod maintenance;
pub mod pipeline;
pub mod prometheus;
pub mod requests;
pub mod scheduler;
pub mod status;
pub mod store;
pub mod telemetry;
pub mod tls;
