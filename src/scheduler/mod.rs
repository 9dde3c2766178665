//! The scheduler daemon and its schedule profiles.

pub mod daemon;
pub mod registry;
pub mod runner;
/// The schedule profiles live in the job kernel (`jobs::profile`); re-exported
/// where the daemon reads them.
pub use crate::jobs::profile;
