//! The three generic write helpers every rule uses (INV-20): apply one
//! three-valued field, replace a list, merge a list by key. No rule writes a
//! field or list any other way.

use crate::codec::{Collection, Field, ScalarTag};
use crate::domain::error::DomainError;
use crate::domain::flight_state::{FlightState, FlightValue, Ordinal, renumber};

/// What an *absent* element means for the rule at hand. An empty element
/// always clears; a value always sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnAbsent {
    /// Keep the stored value (SCHD `preserve`, ADFT set-only).
    Keep,
    /// Clear the stored value (SCHD `clear`; FLOP clearable scalars, sis-format §3.2).
    Clear,
}

/// Resolves a field: `None` = leave the slot alone, `Some(None)` = clear,
/// `Some(Some(v))` = set.
pub fn resolve<T>(field: Field<T>, on_absent: OnAbsent) -> Option<Option<T>> {
    match field {
        Field::Value(v) => Some(Some(v)),
        Field::Empty => Some(None),
        Field::Absent => match on_absent {
            OnAbsent::Keep => None,
            OnAbsent::Clear => Some(None),
        },
    }
}

/// Applies `field` to the optional slot `slot` under `on_absent`.
pub fn apply<T>(slot: &mut Option<T>, field: Field<T>, on_absent: OnAbsent) {
    if let Some(v) = resolve(field, on_absent) {
        *slot = v;
    }
}

/// Applies `field` to the scalar `tag` of `st` under `on_absent`.
pub fn apply_scalar(
    st: &mut FlightState,
    tag: ScalarTag,
    field: Field<FlightValue>,
    on_absent: OnAbsent,
) {
    if let Some(v) = resolve(field, on_absent) {
        st.set_scalar(tag, v);
    }
}

/// Replace semantics for a list: items replace the whole list (renumbered
/// 1..n, never deduplicated, §11.3); a bare element clears it; absent follows
/// `on_absent`.
pub fn apply_replace<T: Ordinal>(list: &mut Vec<T>, coll: Collection<T>, on_absent: OnAbsent) {
    match coll {
        Collection::Items(mut items) => {
            renumber(&mut items);
            *list = items;
        }
        Collection::ClearAll => list.clear(),
        Collection::Absent => {
            if on_absent == OnAbsent::Clear {
                list.clear();
            }
        }
    }
}

/// Merge semantics: each incoming item replaces, in place, the **first**
/// stored item with the same key, or is appended. Other stored items (also
/// ones sharing the key) are kept; nothing is deduplicated. Renumbers.
pub fn merge_by_key<T: Ordinal, K: PartialEq>(
    list: &mut Vec<T>,
    incoming: Vec<T>,
    key: impl Fn(&T) -> K,
) {
    for item in incoming {
        let k = key(&item);
        match list.iter().position(|x| key(x) == k) {
            Some(i) => list[i] = item,
            None => list.push(item),
        }
    }
    renumber(list);
}

/// Removes the first stored item whose key is `k` (no-op when none). Renumbers.
pub fn remove_first_by_key<T: Ordinal, K: PartialEq>(
    list: &mut Vec<T>,
    k: &K,
    key: impl Fn(&T) -> K,
) {
    if let Some(i) = list.iter().position(|x| key(x) == *k) {
        list.remove(i);
    }
    renumber(list);
}

/// Converts every item of a codec collection, keeping absent / clear-all.
pub fn convert_collection<T, U>(
    coll: &Collection<T>,
    f: impl Fn(&T) -> Result<U, DomainError>,
) -> Result<Collection<U>, DomainError> {
    Ok(match coll {
        Collection::Absent => Collection::Absent,
        Collection::ClearAll => Collection::ClearAll,
        Collection::Items(items) => {
            Collection::Items(items.iter().map(f).collect::<Result<Vec<_>, _>>()?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::flight_state::DelayItem;

    fn d(code: &str, comment: &str) -> DelayItem {
        DelayItem {
            ordinal: 0,
            source_seq: None,
            code: Some(code.into()),
            strt: None,
            dura_minutes: None,
            comment: Some(comment.into()),
        }
    }

    #[test]
    fn resolve_follows_the_clear_rule() {
        assert_eq!(resolve(Field::Value(1), OnAbsent::Keep), Some(Some(1)));
        assert_eq!(resolve::<i32>(Field::Empty, OnAbsent::Keep), Some(None));
        assert_eq!(resolve::<i32>(Field::Absent, OnAbsent::Keep), None);
        assert_eq!(resolve::<i32>(Field::Absent, OnAbsent::Clear), Some(None));
    }

    #[test]
    fn replace_renumbers_and_keeps_duplicates() {
        let mut list = vec![d("A", "old")];
        apply_replace(
            &mut list,
            Collection::Items(vec![d("B", "1"), d("B", "2")]),
            OnAbsent::Keep,
        );
        assert_eq!(list.len(), 2);
        assert_eq!((list[0].ordinal, list[1].ordinal), (1, 2));
        apply_replace(&mut list, Collection::Absent, OnAbsent::Keep);
        assert_eq!(list.len(), 2);
        apply_replace(&mut list, Collection::Absent, OnAbsent::Clear);
        assert!(list.is_empty());
    }

    #[test]
    fn merge_updates_first_match_in_place_and_appends_new_keys() {
        let mut list = vec![d("A", "a1"), d("B", "b"), d("A", "a2")];
        renumber(&mut list);
        merge_by_key(&mut list, vec![d("A", "new"), d("C", "c")], |x| {
            x.code.clone()
        });
        let got: Vec<_> = list
            .iter()
            .map(|x| {
                (
                    x.ordinal,
                    x.code.clone().unwrap_or_default(),
                    x.comment.clone().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "A".into(), "new".into()),
                (2, "B".into(), "b".into()),
                (3, "A".into(), "a2".into()),
                (4, "C".into(), "c".into())
            ]
        );
        remove_first_by_key(&mut list, &Some("B".to_string()), |x| x.code.clone());
        assert_eq!(list.len(), 3);
        assert_eq!(list[1].code.as_deref(), Some("A"));
        assert_eq!(list[1].ordinal, 2);
    }
}
