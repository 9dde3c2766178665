//! Element and attribute → three-valued [`Field`] conversions shared by all
//! families (sis-format §1.5, §3.2), plus the bookkeeping that keeps unknown
//! elements and rejects repeated single elements.
//!
//! Rules applied everywhere:
//! - an element not sent is `Absent`; `<X/>`, `<X></X>` and whitespace-only
//!   text are `Empty`; otherwise the trimmed text is parsed into a `Value`;
//! - an attribute not sent is `Absent`, `X=""` (or blanks) is `Empty`;
//! - a value the format forbids (a non-integer FLID, an impossible date) is
//!   Malformed; a plausible value in a layout this version cannot represent
//!   is a Codec error (see `time.rs` and docs/codec.md);
//! - children or attributes that a leaf element should not have are kept as
//!   [`UnknownElement`]s rather than dropped.

use chrono::NaiveDateTime;

use super::error::{DecodeError, ValueError};
use super::model::{Field, ScalarKind, ScalarValue, UnknownElement};
use super::time;
use super::xml::El;

/// Parses an integer (optional leading `-`, digits only).
pub(crate) fn parse_int(s: &str) -> Result<i64, ValueError> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValueError::malformed(format!(
            "expected an integer, got \"{s}\""
        )));
    }
    // Digits are checked above: accumulate with overflow checks (cheaper
    // than `str::parse`, which re-validates every byte).
    let negative = s.len() != digits.len();
    digits
        .bytes()
        .try_fold(0i64, |acc, d| {
            let d = i64::from(d - b'0');
            acc.checked_mul(10).and_then(|v| {
                if negative {
                    v.checked_sub(d)
                } else {
                    v.checked_add(d)
                }
            })
        })
        .ok_or_else(|| ValueError::malformed(format!("integer out of range: \"{s}\"")))
}

/// Validates a decimal number (`12`, `12.5`, `-0.25`, `.5`) and keeps its text.
pub(crate) fn parse_decimal(s: &str) -> Result<String, ValueError> {
    let body = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let ok = !(int.is_empty() && frac.is_empty())
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
        && !(body.contains('.') && frac.is_empty());
    if ok {
        // Canonical text = PostgreSQL NUMERIC's output (scale kept), so a
        // stored value reads back byte-identical: `.5` → `0.5`, `007` → `7`,
        // `-0` → `0` (byte-identical projections).
        let int = int.trim_start_matches('0');
        let int = if int.is_empty() { "0" } else { int };
        let zero = int == "0" && frac.bytes().all(|b| b == b'0');
        // Built in one exact allocation (`format!` regrows as it writes).
        let mut out = String::with_capacity(int.len() + frac.len() + 2);
        if s.starts_with('-') && !zero {
            out.push('-');
        }
        out.push_str(int);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        Ok(out)
    } else {
        Err(ValueError::malformed(format!(
            "expected a decimal number, got \"{s}\""
        )))
    }
}

#[cfg(test)]
mod decimal_tests {
    #[test]
    fn decimals_take_postgres_numeric_canonical_form() {
        for (given, canonical) in [
            ("12.5", "12.5"),
            ("12.50", "12.50"),
            (".5", "0.5"),
            ("007", "7"),
            ("-0", "0"),
            ("-0.25", "-0.25"),
            ("-0.00", "0.00"),
        ] {
            assert_eq!(
                super::parse_decimal(given).ok().as_deref(),
                Some(canonical),
                "{given}"
            );
        }
        assert!(super::parse_decimal("1.").is_err());
        assert!(super::parse_decimal("1e3").is_err());
    }
}

/// Parses scalar text by its [`ScalarKind`] (sis-format §2.3).
pub(crate) fn parse_scalar(kind: ScalarKind, s: &str) -> Result<ScalarValue, ValueError> {
    Ok(match kind {
        ScalarKind::Text => ScalarValue::Text(s.to_owned()),
        ScalarKind::Int => ScalarValue::Int(parse_int(s)?),
        ScalarKind::Decimal => ScalarValue::Decimal(parse_decimal(s)?),
        ScalarKind::Time => ScalarValue::Time(time::parse_time(s)?),
        ScalarKind::Date => ScalarValue::Date(time::parse_date(s)?),
        ScalarKind::Hhmm => ScalarValue::Hhmm(time::parse_hhmm(s)?),
    })
}

/// Route-point times: SCHD sends `DDMMMYYHHMM`, SCHS `HHMM` (sis-format §2.4).
pub(crate) fn parse_route_time(s: &str) -> Result<ScalarValue, ValueError> {
    if s.len() == 4 {
        time::parse_hhmm(s).map(ScalarValue::Hhmm)
    } else {
        time::parse_time(s).map(ScalarValue::Time)
    }
}

/// Records what a leaf element should not carry (attributes, child
/// elements) as unknown elements, so nothing is dropped silently.
#[inline]
pub(crate) fn leaf_extras(el: El<'_, '_>, unknown: &mut Vec<UnknownElement>) {
    if el.attrs().is_empty() && !el.has_children() {
        return;
    }
    leaf_extras_slow(el, unknown);
}

#[cold]
fn leaf_extras_slow(el: El<'_, '_>, unknown: &mut Vec<UnknownElement>) {
    extra_attrs(el, &[], unknown);
    for c in el.children() {
        unknown.push(unknown_el(c));
    }
}

/// Keeps attributes of `el` not listed in `known` as unknown entries named
/// `@NAME` with path `…/@NAME`.
pub(crate) fn extra_attrs(el: El<'_, '_>, known: &[&str], unknown: &mut Vec<UnknownElement>) {
    for a in el.attrs() {
        if !known.iter().any(|k| a.is(k)) {
            unknown.push(UnknownElement {
                path: el.attr_path(a.name),
                name: format!("@{}", a.name),
                raw: format!("{}=\"{}\"", a.name, a.value),
            });
        }
    }
}

/// Keeps non-whitespace text inside a structure element (one that should
/// only hold children) as an unknown entry named `#text`.
pub(crate) fn stray_text(el: El<'_, '_>, unknown: &mut Vec<UnknownElement>) {
    let t = el.text();
    if !t.is_empty() {
        unknown.push(UnknownElement {
            path: format!("{}/#text", el.path()),
            name: "#text".into(),
            raw: t.to_owned(),
        });
    }
}

/// An unknown element, with its path and raw XML.
pub(crate) fn unknown_el(el: El<'_, '_>) -> UnknownElement {
    UnknownElement {
        path: el.path(),
        name: el.name().to_owned(),
        raw: el.raw().to_owned(),
    }
}

/// Reads a leaf element into a field, parsing non-empty text with `parse`.
pub(crate) fn leaf<T>(
    el: El<'_, '_>,
    unknown: &mut Vec<UnknownElement>,
    parse: impl FnOnce(&str) -> Result<T, ValueError>,
) -> Result<Field<T>, DecodeError> {
    leaf_extras(el, unknown);
    let t = el.text();
    if t.is_empty() {
        return Ok(Field::Empty);
    }
    parse(t).map(Field::Value).map_err(|e| e.at(el.path()))
}

pub(crate) fn text_leaf(
    el: El<'_, '_>,
    unk: &mut Vec<UnknownElement>,
) -> Result<Field<String>, DecodeError> {
    leaf(el, unk, |s| Ok(s.to_owned()))
}

pub(crate) fn int_leaf(
    el: El<'_, '_>,
    unk: &mut Vec<UnknownElement>,
) -> Result<Field<i64>, DecodeError> {
    leaf(el, unk, parse_int)
}

pub(crate) fn time_leaf(
    el: El<'_, '_>,
    unk: &mut Vec<UnknownElement>,
) -> Result<Field<NaiveDateTime>, DecodeError> {
    leaf(el, unk, time::parse_time)
}

/// Reads attribute `name` into a field, parsing non-empty values with `parse`.
pub(crate) fn attr_field<T>(
    el: El<'_, '_>,
    name: &str,
    parse: impl FnOnce(&str) -> Result<T, ValueError>,
) -> Result<Field<T>, DecodeError> {
    match el.attr(name) {
        None => Ok(Field::Absent),
        Some(v) => {
            let v = super::xml::trim_xml(v);
            if v.is_empty() {
                Ok(Field::Empty)
            } else {
                parse(v)
                    .map(Field::Value)
                    .map_err(|e| e.at(el.attr_path(name)))
            }
        }
    }
}

pub(crate) fn attr_text(el: El<'_, '_>, name: &str) -> Field<String> {
    match el.attr(name).map(super::xml::trim_xml) {
        None => Field::Absent,
        Some("") => Field::Empty,
        Some(v) => Field::Value(v.to_owned()),
    }
}

/// A sequence attribute (RTNO, PSNO, GTNO…): the source sequence. Missing or
/// empty is `None`; anything but an integer is forbidden (Malformed).
pub(crate) fn seq_attr(el: El<'_, '_>, name: &str) -> Result<Option<i64>, DecodeError> {
    Ok(attr_field(el, name, |v| {
        parse_int(v).map_err(|_| {
            ValueError::malformed(format!("sequence {name} must be a number, got \"{v}\""))
        })
    })?
    .value()
    .copied())
}

/// Stores `value` in `slot`, refusing a second occurrence of a
/// single-valued element (sis-format §2.3 cardinality `1`).
pub(crate) fn put<T>(
    slot: &mut Field<T>,
    value: Field<T>,
    el: El<'_, '_>,
) -> Result<(), DecodeError> {
    if slot.is_present() {
        return Err(duplicate(el));
    }
    *slot = value;
    Ok(())
}

/// The error for a single-valued element sent twice.
pub(crate) fn duplicate(el: El<'_, '_>) -> DecodeError {
    DecodeError::malformed(
        el.path(),
        format!(
            "<{}> is sent more than once; the format allows it at most once",
            el.name()
        ),
    )
}

/// The text of a bare-or-text element used as free text next to attributes
/// (DELY comment, FDIV/FRET/FLAB reason).
pub(crate) fn inner_text(el: El<'_, '_>) -> Field<String> {
    match el.text() {
        "" => Field::Empty,
        t => Field::Value(t.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::xml::parse;

    #[test]
    fn ints_and_decimals() {
        assert_eq!(parse_int("15"), Ok(15));
        assert_eq!(parse_int("-3"), Ok(-3));
        assert_eq!(parse_int("007"), Ok(7));
        assert_eq!(parse_int("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse_int("-9223372036854775808"), Ok(i64::MIN));
        assert!(parse_int("9223372036854775808").is_err());
        assert!(parse_int("-9223372036854775809").is_err());
        for s in ["", "-", "1.5", "+1", "12a", "99999999999999999999"] {
            assert!(matches!(parse_int(s), Err(ValueError::Malformed(_))), "{s}");
        }
        for s in ["12", "12.5", "-0.25"] {
            assert_eq!(parse_decimal(s), Ok(s.to_owned()));
        }
        for s in ["", ".", "1.", "1.2.3", "1e5", "abc"] {
            assert!(parse_decimal(s).is_err(), "{s}");
        }
    }

    #[test]
    fn leaf_is_three_valued() {
        let d = parse("<R><A/><B></B><C> </C><D> 42 </D><E>x</E></R>").expect("xml");
        let kids: Vec<_> = d.root().children().collect();
        let mut unk = Vec::new();
        assert_eq!(int_leaf(kids[0], &mut unk), Ok(Field::Empty));
        assert_eq!(int_leaf(kids[1], &mut unk), Ok(Field::Empty));
        assert_eq!(int_leaf(kids[2], &mut unk), Ok(Field::Empty));
        assert_eq!(int_leaf(kids[3], &mut unk), Ok(Field::Value(42)));
        let e = int_leaf(kids[4], &mut unk).expect_err("not an int");
        assert_eq!(
            e,
            DecodeError::malformed("R/E", "expected an integer, got \"x\"")
        );
        assert!(unk.is_empty());
    }

    #[test]
    fn leaf_keeps_stray_children_and_attributes() {
        let d = parse(r#"<R><A Q="1">x<Z>9</Z></A></R>"#).expect("xml");
        let a = d.root().children().next().expect("A");
        let mut unk = Vec::new();
        assert_eq!(text_leaf(a, &mut unk), Ok(Field::Value("x".into())));
        assert_eq!(unk.len(), 2);
        assert_eq!(unk[0].path, "R/A/@Q");
        assert_eq!(unk[0].raw, "Q=\"1\"");
        assert_eq!(unk[1].path, "R/A/Z");
        assert_eq!(unk[1].raw, "<Z>9</Z>");
    }

    #[test]
    fn attributes_and_sequences() {
        let d = parse(r#"<R><A N = "1" E="" X="b"/></R>"#).expect("xml");
        let a = d.root().children().next().expect("A");
        assert_eq!(seq_attr(a, "N"), Ok(Some(1)));
        assert_eq!(seq_attr(a, "E"), Ok(None));
        assert_eq!(seq_attr(a, "M"), Ok(None));
        let e = seq_attr(a, "X").expect_err("not a number");
        assert_eq!(
            e,
            DecodeError::malformed("R/A/@X", "sequence X must be a number, got \"b\"")
        );
        assert_eq!(attr_text(a, "E"), Field::Empty);
        assert_eq!(attr_text(a, "M"), Field::Absent);
        assert_eq!(attr_text(a, "X"), Field::Value("b".into()));
    }

    #[test]
    fn put_refuses_duplicates() {
        let d = parse("<R><A>1</A><A>2</A></R>").expect("xml");
        let kids: Vec<_> = d.root().children().collect();
        let mut slot = Field::Absent;
        put(&mut slot, Field::Value(1), kids[0]).expect("first");
        let e = put(&mut slot, Field::Value(2), kids[1]).expect_err("second");
        assert_eq!(
            e.to_string(),
            "MALFORMED at R/A[2]: <A> is sent more than once; the format allows it at most once"
        );
    }
}
