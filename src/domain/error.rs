//! Why the flight domain rejects a message (error class PROTOCOL, design §3,
//! §7.1, INV-19). Every variant names the offending element so the reason
//! stored in PROC_STATE.LAST_ERROR is actionable.

use chrono::NaiveDate;

/// A PROTOCOL rejection: the message is well-formed XML but breaks a flight
/// domain rule. The message ends DEAD(PROTOCOL) and no state is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum DomainError {
    /// §7.1: RECS must equal the number of FLTR.
    #[error("RECS is {} but the SCHD carries {count} FLTR", recs.map_or_else(|| "missing".to_string(), |n| n.to_string()))]
    RecsMismatch { recs: Option<i64>, count: usize },
    /// §12.1: every FLTR needs FLID (1-based FLTR position).
    #[error("FLTR #{index} has no FLID")]
    MissingFlid { index: usize },
    /// §12.1: DNLD/RESP need a parsable SODT in every FLTR.
    #[error("FLTR #{index} (FLID {flid}) has no parsable SODT")]
    MissingSodt { index: usize, flid: i64 },
    /// sis-format §2.1: a FLTR lacks a mandatory schedule field (ALCD, FLNO,
    /// MVIN, FLTY, FLIN, ACFT), or a SCHD tries to clear one.
    #[error(
        "FLTR #{index} (FLID {flid}) has no {field}: it is mandatory in a SCHD and cannot be cleared"
    )]
    MissingMandatory {
        index: usize,
        flid: i64,
        field: &'static str,
    },
    /// §11.2: the operation day cannot be derived from SODT.
    #[error("FLID {flid}: operation day cannot be derived from SODT {sodt}")]
    OperationDayUnderivable { flid: i64, sodt: String },
    /// INV-12 / INV-19: a FLID keeps its operation day.
    #[error("FLID {flid}: stored operation day {stored} differs from derived {derived}")]
    OperationDayConflict {
        flid: i64,
        stored: NaiveDate,
        derived: NaiveDate,
    },
    /// A coded value outside its code list (DDIR, ARES, REID, POID, MVIN, FLIN, CHID).
    #[error("{field} has invalid value {value:?}; allowed: {}", allowed.join(", "))]
    InvalidCode {
        field: &'static str,
        value: String,
        allowed: &'static [&'static str],
    },
    /// A mandatory element or attribute is missing or empty.
    #[error("{field} is mandatory here: {context}")]
    Missing {
        field: &'static str,
        context: &'static str,
    },
    /// A scalar whose decoded value kind does not match its tag (codec contract breach).
    #[error("{field} carries a {found} value, expected {expected}")]
    WrongValueKind {
        field: &'static str,
        found: &'static str,
        expected: &'static str,
    },
    /// FDEL must be an empty element (sis-format §3.2).
    #[error("FDEL for FLID {flid} is missing or has content")]
    FdelNotEmpty { flid: i64 },
    /// Only SCHD DNLD/RESP/ADFT, FLOP and FDEL reach the flight domain.
    #[error("not a flight-domain message: {what}")]
    NotFlightMessage { what: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_name_the_element_and_the_allowed_codes() {
        let e = DomainError::InvalidCode {
            field: "FDIV@DDIR",
            value: "TOO".into(),
            allowed: &["TO", "FROM"],
        };
        assert_eq!(
            e.to_string(),
            r#"FDIV@DDIR has invalid value "TOO"; allowed: TO, FROM"#
        );
        let e = DomainError::RecsMismatch {
            recs: Some(3),
            count: 2,
        };
        assert_eq!(e.to_string(), "RECS is 3 but the SCHD carries 2 FLTR");
    }
}
