//! Operator commands behind the CLI (wired in main.rs by the project lead).

pub mod backfill;
pub mod decode;
