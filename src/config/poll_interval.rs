//! `msgx.pipeline.poll-interval`: the adaptive cadence of
//! the jobs a schedule profile runs at `"poll"` (the mailbox poll,
//! `ingest-sweep`).
//!
//! Written as a table, or as one duration for a fixed interval:
//!
//! ```toml
//! [msgx.pipeline.poll-interval]
//! busy = "10ms"   # after a run that handled items
//! hold = "1s"     # kept at busy this long after the last run with items
//! idle = "250ms"  # the ceiling while runs find nothing
//!
//! # or: poll-interval = "1s"  (busy = hold = idle = 1 s)
//! ```

use super::Dur;
use serde::{Deserialize, Deserializer, Serialize};
use std::time::Duration;

/// The busy and idle intervals of a polled job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub struct PollInterval {
    /// The wait after a run of a `"poll"` job (`ingest-sweep`) that read rows;
    /// at least 10ms and at most `idle`. `poll-interval = "1s"` sets busy and
    /// idle to one fixed interval (see "Poll cadence").
    pub busy: Dur,
    /// How long after the last run that read rows the wait stays at `busy`
    /// before it doubles towards `idle`: a feed with gaps shorter than this
    /// is read within `busy` of each row, at up to one mailbox read per
    /// `busy` while it flows; at least `busy` (`hold = busy`: doubling after
    /// the first empty run) and at most 60s.
    #[serde(default = "PollInterval::default_hold")]
    pub hold: Dur,
    /// The ceiling the wait doubles up to while runs find nothing: the latency of
    /// the first row after a quiet spell; at most 60s. After a failed run the
    /// wait doubles from `idle` up to 2 s.
    pub idle: Dur,
}

impl PollInterval {
    pub const DEFAULT_BUSY: Dur = Dur(Duration::from_millis(10));
    pub const DEFAULT_HOLD: Dur = Dur(Duration::from_secs(1));
    pub const DEFAULT_IDLE: Dur = Dur(Duration::from_millis(250));

    fn default_hold() -> Dur {
        Self::DEFAULT_HOLD
    }
}

impl Default for PollInterval {
    fn default() -> Self {
        Self {
            busy: Self::DEFAULT_BUSY,
            hold: Self::DEFAULT_HOLD,
            idle: Self::DEFAULT_IDLE,
        }
    }
}

/// The two spellings of the key.
#[derive(Deserialize)]
#[serde(untagged)]
enum Spelling {
    Fixed(Dur),
    Table(Table),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    busy: Option<Dur>,
    hold: Option<Dur>,
    idle: Option<Dur>,
}

impl<'de> Deserialize<'de> for PollInterval {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let default = PollInterval::default();
        match Spelling::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "expected a duration (\"250ms\": a fixed interval) or a table \
                 { busy = \"10ms\", hold = \"1s\", idle = \"250ms\" }",
            )
        })? {
            Spelling::Fixed(every) => Ok(PollInterval {
                busy: every,
                hold: every,
                idle: every,
            }),
            Spelling::Table(t) => Ok(PollInterval {
                busy: t.busy.unwrap_or(default.busy),
                hold: t.hold.unwrap_or(default.hold),
                idle: t.idle.unwrap_or(default.idle),
            }),
        }
    }
}

/// The shortest busy interval accepted: below it a busy feed would spin on
/// the shared mailbox.
pub const MIN_BUSY: Duration = Duration::from_millis(10);
/// The longest idle interval accepted: the poll is the feed's latency floor,
/// and `/readyz` counts a polled job overdue after one idle interval.
pub const MAX_IDLE: Duration = Duration::from_secs(60);

impl PollInterval {
    /// The load-time rules: `MIN_BUSY ≤ busy ≤ idle ≤ MAX_IDLE`,
    /// `busy ≤ hold ≤ MAX_IDLE`.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if self.busy.std() < MIN_BUSY {
            out.push((
                "msgx.pipeline.poll-interval.busy",
                format!(
                    "must be at least {}: a shorter wait spins on the shared mailbox",
                    Dur(MIN_BUSY)
                ),
            ));
        }
        if self.idle < self.busy {
            out.push((
                "msgx.pipeline.poll-interval.idle",
                format!("must not be shorter than busy ({})", self.busy),
            ));
        }
        if self.hold < self.busy {
            out.push((
                "msgx.pipeline.poll-interval.hold",
                format!("must not be shorter than busy ({})", self.busy),
            ));
        }
        if self.hold.std() > MAX_IDLE {
            out.push((
                "msgx.pipeline.poll-interval.hold",
                format!(
                    "must be at most {}: the feed's polls stay at busy this long after each row",
                    Dur(MAX_IDLE)
                ),
            ));
        }
        if self.idle.std() > MAX_IDLE {
            out.push((
                "msgx.pipeline.poll-interval.idle",
                format!(
                    "must be at most {}: it is the feed's latency after a quiet spell",
                    Dur(MAX_IDLE)
                ),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        p: PollInterval,
    }

    fn parse(s: &str) -> Result<PollInterval, String> {
        toml::from_str::<Holder>(s)
            .map(|h| h.p)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn both_spellings_parse() {
        let fixed = parse("p = \"1s\"").expect("fixed");
        assert_eq!((fixed.busy, fixed.idle), (Dur::secs(1), Dur::secs(1)));
        assert_eq!(fixed.hold, Dur::secs(1), "a fixed interval: hold = busy");
        let table = parse("p = { idle = \"500ms\" }").expect("table");
        assert_eq!(table.busy, PollInterval::default().busy);
        assert_eq!(table.idle, Dur(Duration::from_millis(500)));
        assert_eq!(table.hold, PollInterval::DEFAULT_HOLD);
        assert!(parse("p = { every = \"1s\" }").is_err(), "unknown key");
        assert!(parse("p = 5").is_err());
    }

    #[test]
    fn the_rules_hold() {
        assert!(PollInterval::default().problems().is_empty());
        let ms = |n| Dur(Duration::from_millis(n));
        let p = PollInterval {
            busy: ms(5),
            hold: ms(5),
            idle: ms(1),
        };
        let keys: Vec<_> = p.problems().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [
                "msgx.pipeline.poll-interval.busy",
                "msgx.pipeline.poll-interval.idle"
            ]
        );
        let short_hold = PollInterval {
            hold: ms(0),
            ..PollInterval::default()
        };
        let keys: Vec<_> = short_hold.problems().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["msgx.pipeline.poll-interval.hold"]);
        let slow = PollInterval {
            busy: ms(50),
            hold: Dur::mins(2),
            idle: Dur::mins(2),
        };
        assert_eq!(slow.problems().len(), 2);
    }
}
