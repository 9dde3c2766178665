//! Event delivery (design §8).

pub mod event_cleanup;
