//! The composition root (docs/architecture.md): the daemon, the JobRunner and
//! the registry that builds every job.

pub mod cadence;
pub mod daemon;
pub mod registry;
pub mod run_log;
pub mod runner;
