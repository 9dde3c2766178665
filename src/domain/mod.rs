//! The flight domain (design §11–§12): pure rules that turn the current
//! flight states and a decoded SIS message into the next states and the
//! events to store. No I/O, no async, no clock reads. Beside it, the other
//! pure rules the layers above share: the message lifecycle
//! ([`proc_state`], §3, §9.1), the watermark ([`watermark`], §4.1), where
//! transaction evidence for holes is valid ([`evidence`]), the delivery
//! failure data ([`delivery`], §8.1) and the chaos drain's comparison of two
//! runs ([`run_compare`]).
//!
//! Rules and decisions: docs/domain.md. Event JSON: docs/events.md.

pub mod acdm;
pub mod audit;
pub mod changes;
pub mod config;
pub mod delivery;
pub mod engine;
pub mod error;
pub mod events;
pub mod evidence;
pub mod flight_state;
pub mod mafl;
pub mod milestones;
pub mod operation_day;
pub mod proc_state;
pub mod request_state;
pub mod rules;
pub mod run_compare;
pub mod season;
pub mod slices;
pub mod stored_name;
pub mod watermark;

#[cfg(test)]
mod tests;

pub use changes::{ChangeOp, FieldChange};
pub use config::{AbsentFieldPolicy, DomainConfig};
pub use engine::{ApplyContext, Decision, FlightStateEngine, NoChangeReason, NoMatchReason};
pub use error::DomainError;
pub use events::{
    ChangeKind, ChangeNotification, DomainEvent, EventKind, EventTarget, EventType, Provenance,
    SchdEvent, SchdPayload, SchdProjection, WriteFacts, schd_projection,
};
pub use flight_state::{FlightSet, FlightState, FlightStatus, FlightValue};
pub use mafl::MaflEntry;
pub use proc_state::{ErrorClass, FailureScheduler, ProcState};
