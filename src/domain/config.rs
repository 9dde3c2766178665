//! Flight-domain configuration (design §11.2, §12.1; `PARAM:msgx.airport.*`,
//! `PARAM:msgx.schd.absent-field-policy`). Pure data: the caller maps its TOML
//! keys onto [`DomainConfig`].

use chrono::{DateTime, Duration, FixedOffset, NaiveDateTime, NaiveTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;

/// Default airport time zone (`msgx.airport.timezone`; the home airport is CTU).
pub const TIMEZONE_DEFAULT: Tz = chrono_tz::Asia::Shanghai;

/// Default day cutover (`msgx.airport.day-cutover`): midnight, i.e. the
/// operation day is the local calendar day of SODT.
pub const DAY_CUTOVER_DEFAULT: NaiveTime = NaiveTime::MIN;

/// What SCHD DNLD/RESP does with a field the FLTR does not carry
/// (`msgx.schd.absent-field-policy`, design §12.1, `Q13`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AbsentFieldPolicy {
    /// Keep the stored value (design §12.1; the default until `Q13` is settled).
    #[default]
    Preserve,
    /// Clear the stored value (the SIS rule `SIS:3.16-note-4`).
    Clear,
}

/// Configuration of the flight state engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainConfig {
    /// Airport time zone applied to every naive SIS time (`msgx.airport.timezone`,
    /// default [`TIMEZONE_DEFAULT`]).
    pub timezone: Tz,
    /// Local time at which a new operation day starts; a SODT before it belongs
    /// to the previous day (`msgx.airport.day-cutover`, default [`DAY_CUTOVER_DEFAULT`]).
    pub day_cutover: NaiveTime,
    /// SCHD DNLD/RESP absent-field rule (`msgx.schd.absent-field-policy`,
    /// default [`AbsentFieldPolicy::Preserve`]).
    pub absent_field_policy: AbsentFieldPolicy,
}

impl Default for DomainConfig {
    fn default() -> Self {
        Self {
            timezone: TIMEZONE_DEFAULT,
            day_cutover: DAY_CUTOVER_DEFAULT,
            absent_field_policy: AbsentFieldPolicy::Preserve,
        }
    }
}

impl DomainConfig {
    /// Applies the airport time zone to a naive local SIS time.
    ///
    /// An ambiguous local time (DST fall-back) takes the **earliest** instant;
    /// a nonexistent one (DST spring-forward gap) is **shifted forward** by the
    /// gap, i.e. read with the offset in force just before the gap
    /// (02:30 in a 02:00→03:00 gap becomes 03:30). Never fails.
    pub fn local_time(&self, local: NaiveDateTime) -> DateTime<FixedOffset> {
        if let Some(t) = self.timezone.from_local_datetime(&local).earliest() {
            return t.fixed_offset();
        }
        // Gap: find the offset of the last valid local time before `local`.
        let before = (1..=96)
            .filter_map(|k| local.checked_sub_signed(Duration::minutes(15 * k)))
            .find_map(|t| self.timezone.from_local_datetime(&t).earliest())
            .map(|t| t.offset().fix())
            .unwrap_or(Utc.fix());
        let instant = local
            .checked_sub_signed(Duration::seconds(i64::from(before.local_minus_utc())))
            .unwrap_or(local);
        self.timezone.from_utc_datetime(&instant).fixed_offset()
    }

    /// Re-expresses a stored instant in the airport time zone. The store must
    /// rebuild [`FlightState`](super::FlightState) times with this after a
    /// round trip through `timestamptz`, so that a reloaded state serialises
    /// byte-identically (INV-13, docs/events.md).
    pub fn airport_time(&self, instant: DateTime<Utc>) -> DateTime<FixedOffset> {
        instant.with_timezone(&self.timezone).fixed_offset()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn at(y: i32, m: u32, d: u32, h: u32, mi: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .and_then(|d| d.and_hms_opt(h, mi, 0))
            .expect("valid test date")
    }

    #[test]
    fn shanghai_times_get_plus_eight() {
        let cfg = DomainConfig::default();
        let t = cfg.local_time(at(2021, 1, 23, 5, 35));
        assert_eq!(t.to_rfc3339(), "2021-01-23T05:35:00+08:00");
    }

    #[test]
    fn ambiguous_local_time_takes_earliest() {
        let cfg = DomainConfig {
            timezone: chrono_tz::Europe::Berlin,
            ..DomainConfig::default()
        };
        // 2021-10-31 02:30 happens twice in Berlin (+02:00 then +01:00).
        let t = cfg.local_time(at(2021, 10, 31, 2, 30));
        assert_eq!(t.to_rfc3339(), "2021-10-31T02:30:00+02:00");
    }

    #[test]
    fn nonexistent_local_time_shifts_forward() {
        let cfg = DomainConfig {
            timezone: chrono_tz::Europe::Berlin,
            ..DomainConfig::default()
        };
        // 2021-03-28 02:30 does not exist in Berlin (02:00 → 03:00).
        let t = cfg.local_time(at(2021, 3, 28, 2, 30));
        assert_eq!(t.to_rfc3339(), "2021-03-28T03:30:00+02:00");
    }

    #[test]
    fn airport_time_round_trips_a_stored_instant() {
        let cfg = DomainConfig::default();
        let t = cfg.local_time(at(2021, 1, 23, 5, 35));
        assert_eq!(cfg.airport_time(t.with_timezone(&Utc)), t);
    }
}
