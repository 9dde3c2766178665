//! Operator and developer commands behind the CLI (`src/cli.rs` wires them).

pub mod backfill;
pub mod confirm;
pub mod decode;
pub mod dev_kafka;
pub mod doctor;
pub mod events;
pub mod generate;
pub mod inspect;
pub mod request;
pub mod season;
pub mod skip;
pub mod tail;
pub mod target;
