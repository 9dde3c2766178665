//! SIS time values (sis-format §1.2, §1.5): the one parser for every family.
//!
//! | Layout        | Where                         | Result                       |
//! |---------------|-------------------------------|------------------------------|
//! | `DDMMMYYHHMM` | FLTR/FLOP times               | `NaiveDateTime`, year 20YY   |
//! | `DDMMMYY`     | SCHS STDT/EDDT, SDAT/EDAT     | `NaiveDate`, year 20YY       |
//! | `yyyyMMddHHmmss` | META DTTM                  | `NaiveDateTime`              |
//! | `HHMM`        | SCHS SCHT and route times     | four digits, kept as text    |
//! | `HHMM` duration | DELY DURA                   | minutes = HH × 60 + MM       |
//!
//! Months are matched case-insensitively (the legacy unit test sends
//! `16Nov20`, sis-format §7.2). Times stay naive: the domain applies the
//! airport time zone.
//!
//! Classification (docs/codec.md): the right shape with impossible values
//! (`31FEB210535`, `23JAN212460`, an unknown month) is forbidden by the
//! format, so [`ValueError::Malformed`]. A value in the wrong shape that is
//! still a valid time in another common layout (ISO 8601, a 4-digit year,
//! a date where a time is expected) is plausible but not representable by
//! this codec version, so [`ValueError::Codec`]. Anything else is Malformed.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime};

use super::error::ValueError;

const MONTHS: [&[u8; 3]; 12] = [
    b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV", b"DEC",
];

fn digits2(b: &[u8]) -> Option<u32> {
    match b {
        [a @ b'0'..=b'9', c @ b'0'..=b'9'] => Some(u32::from(a - b'0') * 10 + u32::from(c - b'0')),
        _ => None,
    }
}

fn month(b: &[u8]) -> Option<u32> {
    // Case folded by setting bit 5: only ASCII letters fold onto letters,
    // so a match still means three letters. One integer compare a month.
    let fold = |m: &[u8]| m.iter().fold(0u32, |k, &c| k << 8 | u32::from(c | 0x20));
    let want = fold(b.get(..3)?);
    MONTHS
        .iter()
        .position(|m| fold(&m[..]) == want)
        .map(|i| i as u32 + 1)
}

/// `DDMMMYY` shape check: two digits, three ASCII letters, two digits.
fn date_shape(b: &[u8]) -> bool {
    b.len() >= 7
        && b[..2].iter().all(u8::is_ascii_digit)
        && b[2..5].iter().all(u8::is_ascii_alphabetic)
        && b[5..7].iter().all(u8::is_ascii_digit)
}

/// Parses the `DDMMMYY` part of a shaped value.
fn ddmmmyy(b: &[u8], s: &str, layout: &str) -> Result<NaiveDate, ValueError> {
    let (Some(d), Some(y)) = (digits2(&b[..2]), digits2(&b[5..7])) else {
        return Err(ValueError::malformed(format!(
            "expected {layout}, got \"{s}\""
        )));
    };
    let Some(m) = month(&b[2..5]) else {
        return Err(ValueError::malformed(format!(
            "expected {layout}, got \"{s}\": unknown month \"{}\"",
            String::from_utf8_lossy(&b[2..5])
        )));
    };
    NaiveDate::from_ymd_opt(2000 + y as i32, m, d).ok_or_else(|| {
        ValueError::malformed(format!("expected {layout}, got \"{s}\": no such date"))
    })
}

/// `DDMMMYYHHMM`, e.g. `23JAN210535` → 2021-01-23 05:35.
pub(crate) fn parse_time(s: &str) -> Result<NaiveDateTime, ValueError> {
    if let Some(t) = valid_time(s.as_bytes()) {
        return Ok(t);
    }
    shaped_time(s).unwrap_or_else(|| Err(misfit(s, TIME_LAYOUT)))
}

/// A valid `DDMMMYYHHMM` in one pass (a SCHD carries ~14 a flight);
/// `None` for anything else, which [`shaped_time`] and [`misfit`] then
/// classify and explain. Same value as the full path (a test checks).
#[inline]
fn valid_time(b: &[u8]) -> Option<NaiveDateTime> {
    if b.len() != 11 {
        return None;
    }
    let two = |i: usize| digits2(b.get(i..i + 2)?);
    let (day, year, hour, minute) = (two(0)?, two(5)?, two(7)?, two(9)?);
    NaiveDate::from_ymd_opt(2000 + year as i32, month(&b[2..5])?, day)?.and_hms_opt(hour, minute, 0)
}

const TIME_LAYOUT: &str = "DDMMMYYHHMM";

/// `None` when `s` does not have the `DDMMMYYHHMM` shape; otherwise the
/// parsed value or why its values are impossible.
fn shaped_time(s: &str) -> Option<Result<NaiveDateTime, ValueError>> {
    let b = s.as_bytes();
    if !(b.len() == 11 && date_shape(b) && b[7..].iter().all(u8::is_ascii_digit)) {
        return None;
    }
    Some(ddmmmyy(b, s, TIME_LAYOUT).and_then(|date| {
        let (Some(h), Some(mi)) = (digits2(&b[7..9]), digits2(&b[9..11])) else {
            return Err(ValueError::malformed(format!(
                "expected {TIME_LAYOUT}, got \"{s}\""
            )));
        };
        let time = NaiveTime::from_hms_opt(h, mi, 0).ok_or_else(|| {
            ValueError::malformed(format!(
                "expected {TIME_LAYOUT}, got \"{s}\": no such time of day"
            ))
        })?;
        Ok(date.and_time(time))
    }))
}

/// `DDMMMYY`, e.g. `14MAR21` → 2021-03-14.
pub(crate) fn parse_date(s: &str) -> Result<NaiveDate, ValueError> {
    const LAYOUT: &str = "DDMMMYY";
    let b = s.as_bytes();
    if b.len() == 7 && date_shape(b) {
        return ddmmmyy(b, s, LAYOUT);
    }
    Err(misfit(s, LAYOUT))
}

/// META DTTM `yyyyMMddHHmmss`, e.g. `20181105223126`.
pub(crate) fn parse_dttm(s: &str) -> Result<NaiveDateTime, ValueError> {
    const LAYOUT: &str = "yyyyMMddHHmmss";
    let b = s.as_bytes();
    if b.len() == 14 && b.iter().all(u8::is_ascii_digit) {
        let n = |r: std::ops::Range<usize>| {
            b[r].iter()
                .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'))
        };
        let date = NaiveDate::from_ymd_opt(n(0..4) as i32, n(4..6), n(6..8));
        let time = NaiveTime::from_hms_opt(n(8..10), n(10..12), n(12..14));
        return match (date, time) {
            (Some(d), Some(t)) => Ok(d.and_time(t)),
            _ => Err(ValueError::malformed(format!(
                "expected {LAYOUT}, got \"{s}\": no such date-time"
            ))),
        };
    }
    Err(misfit(s, LAYOUT))
}

/// SCHS `HHMM` local time of day, kept as its four digits.
pub(crate) fn parse_hhmm(s: &str) -> Result<String, ValueError> {
    let b = s.as_bytes();
    if b.len() == 4
        && let (Some(h), Some(m)) = (digits2(&b[..2]), digits2(&b[2..]))
    {
        if h < 24 && m < 60 {
            return Ok(s.to_owned());
        }
        return Err(ValueError::malformed(format!(
            "expected HHMM, got \"{s}\": no such time of day"
        )));
    }
    Err(misfit(s, "HHMM"))
}

/// DELY DURA `HHMM` duration → minutes (HH × 60 + MM). The predecessor's
/// ×24 is a bug (sis-format §7.3). Not four digits, or MM ≥ 60, is forbidden.
pub(crate) fn parse_duration_minutes(s: &str) -> Result<i64, ValueError> {
    let b = s.as_bytes();
    if b.len() == 4
        && let (Some(h), Some(m)) = (digits2(&b[..2]), digits2(&b[2..]))
    {
        if m < 60 {
            return Ok(i64::from(h) * 60 + i64::from(m));
        }
        return Err(ValueError::malformed(format!(
            "expected an HHMM duration, got \"{s}\": minutes above 59"
        )));
    }
    Err(ValueError::malformed(format!(
        "expected an HHMM duration (4 digits), got \"{s}\""
    )))
}

/// The error for a value that does not have the expected shape: Codec when
/// it is a valid time in another recognised layout, Malformed otherwise.
fn misfit(s: &str, layout: &str) -> ValueError {
    match other_layout(s) {
        Some(name) => ValueError::codec(format!(
            "expected {layout}, got \"{s}\" (a valid {name}, a layout this codec version does not accept)"
        )),
        None => ValueError::malformed(format!("expected {layout}, got \"{s}\"")),
    }
}

/// Names the recognised alternative layout `s` is a valid value of, if any.
fn other_layout(s: &str) -> Option<&'static str> {
    if s.len() > 40 {
        return None;
    }
    const DATETIMES: [(&str, &str); 10] = [
        ("%Y-%m-%dT%H:%M:%S", "ISO-8601 date-time"),
        ("%Y-%m-%dT%H:%M", "ISO-8601 date-time"),
        ("%Y-%m-%d %H:%M:%S", "ISO-8601 date-time"),
        ("%Y-%m-%d %H:%M", "ISO-8601 date-time"),
        ("%Y%m%d%H%M%S", "yyyyMMddHHmmss date-time"),
        ("%Y%m%d%H%M", "yyyyMMddHHmm date-time"),
        ("%d%b%Y%H%M", "DDMMMYYYYHHMM date-time"),
        ("%d%b%y %H%M", "DDMMMYY HHMM date-time"),
        ("%d%b%Y %H%M", "DDMMMYYYY HHMM date-time"),
        ("%d%b%y%H%M%S", "DDMMMYYHHMMSS date-time"),
    ];
    for (fmt, name) in DATETIMES {
        if NaiveDateTime::parse_from_str(s, fmt).is_ok() {
            return Some(name);
        }
    }
    if DateTime::parse_from_rfc3339(s).is_ok() {
        return Some("RFC 3339 date-time");
    }
    const DATES: [(&str, &str); 4] = [
        ("%Y-%m-%d", "ISO-8601 date"),
        ("%Y%m%d", "yyyyMMdd date"),
        ("%d%b%Y", "DDMMMYYYY date"),
        ("%d%b%y", "DDMMMYY date"),
    ];
    for (fmt, name) in DATES {
        if NaiveDate::parse_from_str(s, fmt).is_ok() {
            return Some(name);
        }
    }
    if matches!(shaped_time(s), Some(Ok(_))) {
        return Some("DDMMMYYHHMM date-time");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(y: i32, m: u32, d: u32, h: u32, mi: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .and_then(|x| x.and_hms_opt(h, mi, 0))
            .expect("valid")
    }

    #[test]
    fn parses_ddmmmyyhhmm_any_month_case() {
        assert_eq!(parse_time("23JAN210535"), Ok(dt(2021, 1, 23, 5, 35)));
        assert_eq!(parse_time("16Nov200000"), Ok(dt(2020, 11, 16, 0, 0)));
        assert_eq!(parse_time("01dec992359"), Ok(dt(2099, 12, 1, 23, 59)));
    }

    #[test]
    fn impossible_values_are_malformed() {
        for s in [
            "31FEB210535",
            "23JAN212460",
            "23JAN210560",
            "23XYZ210535",
            "00JAN210535",
        ] {
            let e = parse_time(s).expect_err(s);
            assert!(matches!(e, ValueError::Malformed(_)), "{s}: {e:?}");
        }
        assert!(matches!(
            parse_time("garbage"),
            Err(ValueError::Malformed(_))
        ));
        assert!(matches!(parse_time(""), Err(ValueError::Malformed(_))));
    }

    #[test]
    fn other_plausible_layouts_are_codec_errors() {
        for s in [
            "2021-01-23T05:35",
            "2021-01-23 05:35:00",
            "23JAN20210535",
            "23JAN21",
            "2021-01-23T05:35:00+08:00",
        ] {
            let e = parse_time(s).expect_err(s);
            let ValueError::Codec(reason) = &e else {
                panic!("{s}: expected codec, got {e:?}");
            };
            assert!(
                reason.starts_with(&format!("expected DDMMMYYHHMM, got \"{s}\"")),
                "{reason}"
            );
        }
    }

    #[test]
    fn parses_dates() {
        assert_eq!(
            parse_date("14mar21"),
            NaiveDate::from_ymd_opt(2021, 3, 14).ok_or(ValueError::malformed(""))
        );
        assert!(matches!(
            parse_date("30FEB21"),
            Err(ValueError::Malformed(_))
        ));
        assert!(matches!(
            parse_date("23JAN210535"),
            Err(ValueError::Codec(_))
        ));
        assert!(matches!(
            parse_date("2021-03-14"),
            Err(ValueError::Codec(_))
        ));
    }

    #[test]
    fn parses_dttm() {
        assert_eq!(
            parse_dttm("20181105223126"),
            Ok(dt(2018, 11, 5, 22, 31) + chrono::Duration::seconds(26))
        );
        assert!(matches!(
            parse_dttm("20181305223126"),
            Err(ValueError::Malformed(_))
        ));
        assert!(matches!(
            parse_dttm("2018-11-05T22:31:26"),
            Err(ValueError::Codec(_))
        ));
        assert!(matches!(
            parse_dttm("201811052231"),
            Err(ValueError::Codec(_))
        ));
        assert!(matches!(
            parse_dttm("yesterday"),
            Err(ValueError::Malformed(_))
        ));
    }

    #[test]
    fn durations_are_hours_times_sixty() {
        assert_eq!(parse_duration_minutes("0200"), Ok(120));
        assert_eq!(parse_duration_minutes("0201"), Ok(121));
        assert_eq!(parse_duration_minutes("9959"), Ok(5999));
        for s in ["200", "02:00", "0260", "abcd", "00200"] {
            assert!(
                matches!(parse_duration_minutes(s), Err(ValueError::Malformed(_))),
                "{s}"
            );
        }
    }

    #[test]
    fn hhmm_is_validated() {
        assert_eq!(parse_hhmm("0535"), Ok("0535".to_owned()));
        assert!(matches!(parse_hhmm("2460"), Err(ValueError::Malformed(_))));
        assert!(matches!(parse_hhmm("5:35"), Err(ValueError::Malformed(_))));
    }

    #[test]
    fn valid_time_agrees_with_the_full_parser() {
        // Every month in both cases, impossible days and hours, odd bytes.
        let mut inputs = Vec::new();
        for m in MONTHS {
            let m = std::str::from_utf8(m).unwrap_or("JAN");
            for day in ["01", "29", "30", "31", "00"] {
                for (yy, hhmm) in [
                    ("24", "0000"),
                    ("23", "2359"),
                    ("21", "2400"),
                    ("26", "1260"),
                ] {
                    inputs.push(format!("{day}{m}{yy}{hhmm}"));
                    inputs.push(format!("{day}{}{yy}{hhmm}", m.to_ascii_lowercase()));
                }
            }
        }
        inputs.extend(
            [
                "23J@N210535",
                "23JA\u{e9}1053",
                "2a3JAN21053",
                "23JAN2105355",
                "23JAN21053",
            ]
            .map(String::from),
        );
        for s in &inputs {
            let fast = valid_time(s.as_bytes());
            let full = shaped_time(s).and_then(Result::ok);
            assert_eq!(fast, full, "{s}");
        }
    }

    #[test]
    fn never_panics_on_odd_bytes() {
        for s in ["é", "23JAN21053é", "23ÉAN210535", "12345678901", "\u{0}"] {
            let _ = parse_time(s);
            let _ = parse_date(s);
            let _ = parse_dttm(s);
            let _ = parse_hhmm(s);
            let _ = parse_duration_minutes(s);
        }
    }
}
