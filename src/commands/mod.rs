//! Operator commands behind the CLI (wired in main.rs by the project lead).

pub mod decode;
pub mod dev_kafka;
pub mod events;
pub mod tail;
