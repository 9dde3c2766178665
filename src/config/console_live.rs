//! `[msgx.console.live]`: the bounds of the console's live view
//! (docs/console.md "Live view"). The view itself lives in `console::live`.

use super::Dur;
use serde::{Deserialize, Serialize};

/// `[msgx.console.live]`: the Overview and a message's page refresh their
/// fragments through server-sent events (`/live/…`), fed by one poller
/// shared by every viewer.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct ConsoleLive {
    /// Live streams one user (a login name or a token name) may hold open at
    /// once, across tabs; beyond it a new stream answers 429 and the page
    /// stays as rendered; ≥ 1.
    pub connections_per_user: u32,
    /// How often the console's single poller asks PostgreSQL what changed, for
    /// all viewers together (one cheap statement pair per interval, none while
    /// nobody watches); from 100ms to 1s, so a change reaches an open page
    /// within about a second.
    pub poll_interval: Dur,
    /// A stream with nothing to say for this long sends an SSE comment, so
    /// proxies keep the connection and a vanished client is noticed (its
    /// stream and slot end at the next write).
    pub keep_alive: Dur,
    /// A stream ends this long after it opened; the browser reconnects by
    /// itself, through the session check again, so a logged-out or revoked
    /// session stops receiving within this bound.
    pub max_lifetime: Dur,
}

impl ConsoleLive {
    pub const DEFAULT_CONNECTIONS_PER_USER: u32 = 4;
    pub const DEFAULT_POLL_INTERVAL: Dur = Dur::millis(500);
    pub const DEFAULT_KEEP_ALIVE: Dur = Dur::secs(15);
    pub const DEFAULT_MAX_LIFETIME: Dur = Dur::mins(5);
    /// The fastest poll allowed.
    pub const MIN_POLL_INTERVAL: Dur = Dur::millis(100);
    /// The slowest poll allowed: a change must reach a page within about a second.
    pub const MAX_POLL_INTERVAL: Dur = Dur::secs(1);
}

impl Default for ConsoleLive {
    fn default() -> Self {
        Self {
            connections_per_user: Self::DEFAULT_CONNECTIONS_PER_USER,
            poll_interval: Self::DEFAULT_POLL_INTERVAL,
            keep_alive: Self::DEFAULT_KEEP_ALIVE,
            max_lifetime: Self::DEFAULT_MAX_LIFETIME,
        }
    }
}

/// The rules of `[msgx.console.live]`: `(key, rule)` of each broken one.
pub fn live_issues(l: &ConsoleLive) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if l.connections_per_user == 0 {
        out.push((
            "msgx.console.live.connections-per-user",
            "must be at least 1 (0 would refuse every live page its stream)".into(),
        ));
    }
    if l.poll_interval < ConsoleLive::MIN_POLL_INTERVAL
        || l.poll_interval > ConsoleLive::MAX_POLL_INTERVAL
    {
        out.push((
            "msgx.console.live.poll-interval",
            format!(
                "must be from {} to {} (every viewer's changes come from this one poll)",
                ConsoleLive::MIN_POLL_INTERVAL.short(),
                ConsoleLive::MAX_POLL_INTERVAL.short()
            ),
        ));
    }
    if l.keep_alive.is_zero() {
        out.push(("msgx.console.live.keep-alive", "must be more than 0".into()));
    }
    if l.max_lifetime < l.keep_alive {
        out.push((
            "msgx.console.live.max-lifetime",
            "must be at least keep-alive".into(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_pass_and_each_bound_is_named() {
        assert!(live_issues(&ConsoleLive::default()).is_empty());
        let bad = ConsoleLive {
            connections_per_user: 0,
            poll_interval: Dur::secs(2),
            keep_alive: Dur::secs(0),
            max_lifetime: Dur::secs(0),
        };
        let keys: Vec<_> = live_issues(&bad).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [
                "msgx.console.live.connections-per-user",
                "msgx.console.live.poll-interval",
                "msgx.console.live.keep-alive"
            ]
        );
        let slow = ConsoleLive {
            max_lifetime: Dur::secs(5),
            ..ConsoleLive::default()
        };
        let keys: Vec<_> = live_issues(&slow).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["msgx.console.live.max-lifetime"]);
        let fast = ConsoleLive {
            poll_interval: Dur::millis(50),
            ..ConsoleLive::default()
        };
        assert_eq!(live_issues(&fast).len(), 1);
    }
}
