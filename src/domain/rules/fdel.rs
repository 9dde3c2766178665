//! FDEL: business delete (design §12.3, sis-format §3.2).
//!
//! ACTIVE → DELETED keeps every detail; the engine bumps the version, emits a
//! tombstone and runs the master/share cascade (§11.4). A repeated FDEL or
//! one for an unknown flight is an idempotent success without event. An FDEL
//! with content (or without the element) is rejected.

use crate::codec::Fdel;
use crate::domain::error::DomainError;
use crate::domain::flight_state::{FlightSet, FlightState, FlightStatus};

/// What an FDEL does to the loaded flights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FdelOutcome {
    /// The flight's next state (DELETED).
    Delete(Box<FlightState>),
    /// The flight is not loaded (unknown).
    Unknown,
    /// The flight is already DELETED.
    AlreadyDeleted,
}

/// Decides an FDEL.
pub fn delete(fdel: &Fdel, current: &FlightSet) -> Result<FdelOutcome, DomainError> {
    if !fdel.fdel_empty {
        return Err(DomainError::FdelNotEmpty { flid: fdel.flid });
    }
    Ok(match current.get(fdel.flid) {
        None => FdelOutcome::Unknown,
        Some(f) if !f.is_active() => FdelOutcome::AlreadyDeleted,
        Some(f) => FdelOutcome::Delete(Box::new(deleted(f))),
    })
}

/// The business delete of an ACTIVE flight (§12.3): DELETED with every
/// detail and the operation day kept (the engine bumps the version). FDEL,
/// SCHD DEL and the cascade to a deleted master's shares all use it.
pub fn deleted(f: &FlightState) -> FlightState {
    let mut next = f.clone();
    next.state = FlightStatus::Deleted;
    next
}
