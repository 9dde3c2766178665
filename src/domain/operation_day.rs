//! Operation day (design §11.2, INV-12, INV-19).
//!
//! The operation day comes from SODT (naive local airport time, so the time
//! zone is already applied by the sender) and the configured day cutover: a
//! SODT earlier than the cutover belongs to the previous day. It is never the
//! receive day or the store day. Once a flight has a non-NULL operation day it
//! never changes: FLOP and ADFT never touch it, and a SCHD that derives another
//! day is rejected whole (see [`check_unchanged`]).

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

use super::error::DomainError;

/// The operation day of a flight scheduled at local time `sodt`, given the
/// day `cutover`. `None` only when the previous day does not exist
/// (`NaiveDate::MIN`), i.e. the day cannot be derived.
pub fn derive(sodt: NaiveDateTime, cutover: NaiveTime) -> Option<NaiveDate> {
    if sodt.time() < cutover {
        sodt.date().pred_opt()
    } else {
        Some(sodt.date())
    }
}

/// INV-12: a stored non-NULL operation day may not move. `Ok` when nothing is
/// stored yet or the days agree.
pub fn check_unchanged(
    flid: i64,
    stored: Option<NaiveDate>,
    derived: NaiveDate,
) -> Result<(), DomainError> {
    match stored {
        Some(s) if s != derived => Err(DomainError::OperationDayConflict {
            flid,
            stored: s,
            derived,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(d: u32, h: u32, m: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2021, 1, d)
            .and_then(|x| x.and_hms_opt(h, m, 0))
            .expect("valid")
    }
    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2021, 1, d).expect("valid")
    }
    fn hm(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).expect("valid")
    }

    #[test]
    fn midnight_cutover_is_the_calendar_day() {
        assert_eq!(derive(t(23, 0, 0), NaiveTime::MIN), Some(day(23)));
        assert_eq!(derive(t(23, 23, 59), NaiveTime::MIN), Some(day(23)));
    }

    #[test]
    fn time_before_cutover_belongs_to_previous_day() {
        let cut = hm(4, 0);
        assert_eq!(derive(t(23, 3, 59), cut), Some(day(22)));
        assert_eq!(derive(t(23, 4, 0), cut), Some(day(23)));
        assert_eq!(derive(t(23, 5, 35), cut), Some(day(23)));
    }

    #[test]
    fn underivable_day_is_none() {
        let min = NaiveDate::MIN.and_hms_opt(1, 0, 0).expect("valid");
        assert_eq!(derive(min, hm(4, 0)), None);
    }

    #[test]
    fn conflict_only_when_a_different_day_is_stored() {
        assert!(check_unchanged(1, None, day(23)).is_ok());
        assert!(check_unchanged(1, Some(day(23)), day(23)).is_ok());
        assert_eq!(
            check_unchanged(1, Some(day(22)), day(23)),
            Err(DomainError::OperationDayConflict {
                flid: 1,
                stored: day(22),
                derived: day(23)
            })
        );
    }
}
