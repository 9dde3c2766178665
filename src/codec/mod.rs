//! SIS XML codec (design §2; sis-format.md). Pure: no I/O, no clock.

pub mod error;
pub mod model;

pub use error::DecodeError;
pub use model::*;
