//! msgx (msgexchange-v2): reads the shared SIS mailbox in ID order, keeps the
//! authoritative flight current state in PostgreSQL, and publishes events to
//! Kafka through a transactional outbox — as a suite of bounded, idempotent,
//! scheduled jobs.
//!
//! Layout: `codec` and `domain` are pure (no I/O, no clock); `store` talks to
//! PostgreSQL and the mailbox; `jobs` and `scheduler` orchestrate.

pub mod clock;
pub mod codec;
pub mod commands;
pub mod domain;
