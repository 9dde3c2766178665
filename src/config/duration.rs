//! Human-readable durations in the config file (`30s`, `5m`, `24h`, `7d`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A config duration, written as `30s`, `1m`, `24h`, `7d`, `1h 30m`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Dur(pub Duration);

impl Dur {
    /// Milliseconds.
    pub const fn millis(ms: u64) -> Self {
        Dur(Duration::from_millis(ms))
    }
    /// Seconds.
    pub const fn secs(s: u64) -> Self {
        Dur(Duration::from_secs(s))
    }
    /// Minutes.
    pub const fn mins(m: u64) -> Self {
        Dur(Duration::from_secs(m * 60))
    }
    /// Hours.
    pub const fn hours(h: u64) -> Self {
        Dur(Duration::from_secs(h * 3600))
    }
    /// Days.
    pub const fn days(d: u64) -> Self {
        Dur(Duration::from_secs(d * 86_400))
    }
    /// As a `std` duration.
    pub fn std(self) -> Duration {
        self.0
    }
    /// As a chrono duration (saturating at chrono's range).
    pub fn chrono(self) -> chrono::Duration {
        chrono::Duration::from_std(self.0).unwrap_or(chrono::Duration::MAX)
    }
    /// True for a zero duration (rejected by validation).
    pub fn is_zero(self) -> bool {
        self.0.is_zero()
    }
    /// The spelling an operator writes: one number in the largest unit that
    /// holds it exactly (`180d`, `90m`, `61s`, `250ms`); anything finer than
    /// a millisecond as [`Display`](fmt::Display) writes it.
    pub fn short(self) -> String {
        let ms = self.0.as_millis();
        if !self.0.subsec_nanos().is_multiple_of(1_000_000) {
            return self.to_string();
        }
        [
            (86_400_000, "d"),
            (3_600_000, "h"),
            (60_000, "m"),
            (1_000, "s"),
        ]
        .into_iter()
        .find(|(unit, _)| ms > 0 && ms.is_multiple_of(*unit))
        .map_or_else(
            || format!("{ms}ms"),
            |(unit, name)| format!("{}{name}", ms / unit),
        )
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_duration(self.0))
    }
}

impl fmt::Debug for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for Dur {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        humantime::parse_duration(s.trim())
            .map(Dur)
            .map_err(|e| format!("invalid duration {s:?}: {e} (write e.g. 30s, 5m, 24h, 7d)"))
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A string in the `duration` format: `docs/configuration.md` names the
/// type, and a JSON Schema validator may check it.
impl schemars::JsonSchema for Dur {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "format": "duration" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_operator_units() {
        assert_eq!("30s".parse::<Dur>().unwrap(), Dur::secs(30));
        assert_eq!("1m".parse::<Dur>().unwrap(), Dur::mins(1));
        assert_eq!("24h".parse::<Dur>().unwrap(), Dur::hours(24));
        assert_eq!("7d".parse::<Dur>().unwrap(), Dur::days(7));
        assert!("seven days".parse::<Dur>().is_err());
        assert!("".parse::<Dur>().is_err());
    }

    #[test]
    fn the_short_spelling_is_exact_and_parses_back() {
        let ms = |n| Dur(Duration::from_millis(n));
        for (d, text) in [
            (Dur::days(180), "180d"),
            (Dur::hours(24), "1d"),
            (Dur::hours(48), "2d"),
            (Dur::mins(90), "90m"),
            (Dur::secs(60), "1m"),
            (Dur::secs(61), "61s"),
            (ms(250), "250ms"),
            (ms(1500), "1500ms"),
            (Dur::secs(0), "0ms"),
        ] {
            assert_eq!(d.short(), text);
            assert_eq!(text.parse::<Dur>().unwrap(), d);
        }
    }

    #[test]
    fn display_round_trips() {
        for d in [Dur::secs(2), Dur::mins(15), Dur::days(400)] {
            assert_eq!(d.to_string().parse::<Dur>().unwrap(), d);
        }
    }
}
