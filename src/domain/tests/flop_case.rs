//! The case type of the FLOP table tests (`flop_table`, `flop_table_collections`):
//! one file both use, so neither imports the other.

use chrono::NaiveDateTime;

use super::support::t;
use crate::codec::{Field, FlopPayload, ScalarTag};
use crate::domain::FlightState;
use crate::domain::FlightValue;

pub(super) enum Expect {
    /// Applied; these scalars hold these values afterwards.
    Scalars(Vec<(ScalarTag, Option<FlightValue>)>),
    /// Applied; the check passes on the next state.
    Check(fn(&FlightState)),
    /// Rejected; the reason contains this text.
    Rejected(&'static str),
    /// Idempotent: nothing changed.
    NoChange,
}

pub(super) struct Case {
    pub(super) name: &'static str,
    pub(super) payload: FlopPayload,
    pub(super) expect: Expect,
}

pub(super) fn case(name: &'static str, payload: FlopPayload, expect: Expect) -> Case {
    Case {
        name,
        payload,
        expect,
    }
}

pub(super) fn v(x: &str) -> Field<NaiveDateTime> {
    Field::Value(t(x))
}
