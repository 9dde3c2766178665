//! msgx (msgexchange-v2): reads the shared SIS mailbox in ID order, keeps the
//! authoritative flight current state in PostgreSQL, and publishes events to
//! Kafka through a transactional outbox — as a suite of bounded, idempotent,
//! scheduled jobs.
//!
//! Layout: `codec` and `domain` are pure (no I/O, no clock); `store` talks to
//! PostgreSQL and the mailbox; `pipeline`, `delivery`, `maintenance` and
//! `requests` hold the jobs; `scheduler` runs them; `cli` and `commands` are
//! the command line.

pub mod backfill;
pub mod cli;
pub mod clock;
pub mod codec;
pub mod commands;
pub mod config;
pub mod delivery;
pub mod domain;
pub mod http;
pub mod instance_lock;
pub mod jobs;
pub mod maintenance;
pub mod pipeline;
pub mod prometheus;
pub mod requests;
pub mod scheduler;
pub mod status;
pub mod store;
pub mod telemetry;
