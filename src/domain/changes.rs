//! Field-level changes of a `msg` record (issue 36 item 1; docs/events.md
//! "Field-level changes"): for each changed path the old and the new value,
//! as the `schd` projection writes them, so a consumer that holds a flight's
//! projection at version N−1 gets version N by applying the changes of
//! notification N ([`apply`]) instead of diffing two full states.
//!
//! - A plain field (STATE, OPERATION_DAY, a scalar, FDIV/FRET/FLAB): one
//!   `SET` with both values (`null` = unset).
//! - A list (ROUT … PSHT, a master's MAFL): compared by position, one change
//!   per differing item: `CHANGED` (both values), `ADDED` past the old end
//!   (`old` null), `REMOVED` past the new end (`new` null); `index` is
//!   0-based.
//! - MAFL switching between `null` (a share) and a list (a master): one
//!   `SET` of the whole value.
//!
//! Pure and deterministic: the order is that of `changed_fields`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::flight_state::{FieldVisitor, FlightState};
use crate::domain::mafl::MaflEntry;

/// How a path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ChangeOp {
    /// A plain field (or a whole MAFL) took a new value.
    Set,
    /// A list item at `index` differs.
    Changed,
    /// A list item appended at `index` (past the old end).
    Added,
    /// A list item at `index` is gone (past the new end).
    Removed,
}

/// One changed path of a flight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FieldChange {
    /// The field's SIS name, as in `changed_fields` (`ETDT`, `STATE`,
    /// `GTDT`, `MAFL`); the `schd` key is its lower case.
    pub field: String,
    /// The list position (0-based) for a list item; `null` for a whole field.
    pub index: Option<usize>,
    pub op: ChangeOp,
    /// The value before, as the `schd` projection writes it (`null` when
    /// unset or ADDED).
    pub old: Value,
    /// The value after (`null` when unset or REMOVED).
    pub new: Value,
}

/// The changes from `old` to `new`; `old_mafl`/`new_mafl` are the flight's
/// MAFL before and after (`None` for a share). A DELETED `new` lists only
/// its content fields: a deleted flight carries no MAFL (its `schd` record is
/// a tombstone).
pub fn changes(
    old: &FlightState,
    new: &FlightState,
    old_mafl: Option<&[MaflEntry]>,
    new_mafl: Option<&[MaflEntry]>,
) -> Vec<FieldChange> {
    let mut out = Collect(Vec::new());
    old.walk_content(new, &mut out);
    if new.is_active() {
        match (old_mafl, new_mafl) {
            (Some(a), Some(b)) => out.list("MAFL", a, b),
            (a, b) => out.value("MAFL", &a, &b),
        }
    }
    out.0
}

/// Collects the [`FieldChange`]s of one walk.
struct Collect(Vec<FieldChange>);

/// Plain data with string keys always serialises.
fn json<T: Serialize + ?Sized>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl FieldVisitor for Collect {
    fn value<T: Serialize + PartialEq>(&mut self, name: &str, old: &T, new: &T) {
        if old != new {
            self.0.push(FieldChange {
                field: name.to_string(),
                index: None,
                op: ChangeOp::Set,
                old: json(old),
                new: json(new),
            });
        }
    }

    fn list<T: Serialize + PartialEq>(&mut self, name: &str, old: &[T], new: &[T]) {
        for index in 0..old.len().max(new.len()) {
            let (op, a, b) = match (old.get(index), new.get(index)) {
                (Some(a), Some(b)) if a == b => continue,
                (Some(a), Some(b)) => (ChangeOp::Changed, json(a), json(b)),
                (Some(a), None) => (ChangeOp::Removed, json(a), Value::Null),
                (None, Some(b)) => (ChangeOp::Added, Value::Null, json(b)),
                (None, None) => continue,
            };
            self.0.push(FieldChange {
                field: name.to_string(),
                index: Some(index),
                op,
                old: a,
                new: b,
            });
        }
    }
}

/// Why [`apply`] refused a change: the projection is not the one the
/// changes were computed from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("the projection is not a JSON object")]
    NotAnObject,
    #[error("{field}: the projection holds {found}, the change says it was {expected}")]
    Mismatch {
        field: String,
        expected: Value,
        found: Value,
    },
    #[error("{field}[{index}]: {op:?} does not fit a list of {len}")]
    BadIndex {
        field: String,
        index: usize,
        op: ChangeOp,
        len: usize,
    },
}

/// Applies `changes` to a `schd` projection (as JSON) of the flight before
/// them, checking every `old` value against it: the reference a consumer's
/// own code can follow (docs/events.md). Lifecycle keys (`state_version`,
/// `last_msg_id`, `updated_at`) are not content; the notification carries
/// them.
pub fn apply(projection: &mut Value, changes: &[FieldChange]) -> Result<(), ApplyError> {
    let map = projection.as_object_mut().ok_or(ApplyError::NotAnObject)?;
    // REMOVED items are checked in place and cut off after the loop, so each
    // is checked against the list as it was (they are past the new end: no
    // CHANGED or ADDED item of the same list comes after them).
    let mut cuts: Vec<(String, usize)> = Vec::new();
    for c in changes {
        let key = c.field.to_ascii_lowercase();
        let slot = map.entry(key).or_insert(Value::Null);
        let mismatch = |found: &Value| ApplyError::Mismatch {
            field: c.field.clone(),
            expected: c.old.clone(),
            found: found.clone(),
        };
        let Some(index) = c.index else {
            if *slot != c.old {
                return Err(mismatch(slot));
            }
            *slot = c.new.clone();
            continue;
        };
        let Some(items) = slot.as_array_mut() else {
            return Err(mismatch(slot));
        };
        let bad = |len: usize| ApplyError::BadIndex {
            field: c.field.clone(),
            index,
            op: c.op,
            len,
        };
        match c.op {
            ChangeOp::Changed | ChangeOp::Removed => {
                let item = items.get(index).ok_or_else(|| bad(items.len()))?;
                if *item != c.old {
                    return Err(ApplyError::Mismatch {
                        field: format!("{}[{index}]", c.field),
                        expected: c.old.clone(),
                        found: item.clone(),
                    });
                }
                if c.op == ChangeOp::Changed {
                    items[index] = c.new.clone();
                } else {
                    cuts.push((c.field.to_ascii_lowercase(), index));
                }
            }
            ChangeOp::Added if index == items.len() => items.push(c.new.clone()),
            ChangeOp::Added | ChangeOp::Set => return Err(bad(items.len())),
        }
    }
    for (key, index) in cuts {
        if let Some(items) = map.get_mut(&key).and_then(Value::as_array_mut) {
            items.truncate(index.min(items.len()));
        }
    }
    Ok(())
}
