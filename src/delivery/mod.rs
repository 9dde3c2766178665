//! Event delivery (design §8).

pub mod dead_letters;
pub mod dispatcher;
pub mod event_cleanup;
pub mod latency;
mod outbox;
pub mod retry;
pub mod schd_flush;
pub mod season_flush;

pub use outbox::{DeliveryConfig, DeliveryCounts, DeliveryReport};
