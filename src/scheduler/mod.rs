//! The scheduler daemon and its schedule profiles.

pub mod daemon;
pub mod profile;
pub mod supervision;
