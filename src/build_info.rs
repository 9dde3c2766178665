//! What this binary is: version, git commit, build date, target, cargo
//! features, rustc and the linked librdkafka. One source for `msgx --version`,
//! `msgx version --json`, the `msgx_build_info` metric and the console footer,
//! so the three always agree. The build-time facts come from `build.rs`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use std::sync::OnceLock;

/// The crate version (`Cargo.toml`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git commit built (12 hex digits), or `unknown` outside a checkout.
pub const COMMIT: &str = env!("MSGX_BUILD_COMMIT");
/// The target triple built for.
pub const TARGET: &str = env!("MSGX_BUILD_TARGET");
/// `rustc --version` of the compiler that built msgx.
pub const RUSTC: &str = env!("MSGX_BUILD_RUSTC");
/// The build time as Unix seconds: `SOURCE_DATE_EPOCH`, else the commit
/// time; empty when neither was known.
const EPOCH: &str = env!("MSGX_BUILD_EPOCH");

/// The cargo features compiled in (optional ones only).
pub const FEATURES: &[&str] = &[
    #[cfg(feature = "otlp")]
    "otlp",
];

/// Everything `msgx version --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct BuildInfo {
    pub version: &'static str,
    pub commit: &'static str,
    /// RFC 3339 UTC, or `unknown`.
    pub build_date: String,
    pub target: &'static str,
    pub features: Vec<&'static str>,
    pub rustc: &'static str,
    /// The librdkafka linked in, as it reports itself at run time.
    pub librdkafka: String,
}

/// This binary's build facts (computed once).
pub fn get() -> &'static BuildInfo {
    static INFO: OnceLock<BuildInfo> = OnceLock::new();
    INFO.get_or_init(|| BuildInfo {
        version: VERSION,
        commit: COMMIT,
        build_date: build_date(EPOCH),
        target: TARGET,
        features: FEATURES.to_vec(),
        rustc: RUSTC,
        librdkafka: rdkafka::util::get_rdkafka_version().1,
    })
}

/// The build date for a Unix-seconds string: RFC 3339 in UTC, or `unknown`
/// when the string is no valid time.
fn build_date(epoch: &str) -> String {
    epoch
        .trim()
        .parse::<i64>()
        .ok()
        .and_then(|s| DateTime::<Utc>::from_timestamp(s, 0))
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

impl BuildInfo {
    /// The features as one word list (`none` when no optional one is on).
    pub fn features_text(&self) -> String {
        if self.features.is_empty() {
            "none".to_string()
        } else {
            self.features.join(",")
        }
    }

    /// The lines `msgx --version` prints after `msgx VERSION`.
    pub fn long_text(&self) -> String {
        format!(
            "{}\ncommit:     {}\nbuild-date: {}\ntarget:     {}\nfeatures:   {}\nrustc:      {}\nlibrdkafka: {}",
            self.version,
            self.commit,
            self.build_date,
            self.target,
            self.features_text(),
            self.rustc,
            self.librdkafka,
        )
    }

    /// One line for the console footer.
    pub fn one_line(&self) -> String {
        format!(
            "msgx {} · commit {} · built {} · {} · features {} · {} · librdkafka {}",
            self.version,
            self.commit,
            self.build_date,
            self.target,
            self.features_text(),
            self.rustc,
            self.librdkafka,
        )
    }
}

/// `msgx --version`'s text (clap prefixes the command name).
pub fn long_version() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| get().long_text())
}

/// `msgx -V`'s text: version and commit.
pub fn short_version() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| format!("{VERSION} ({COMMIT})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_date_is_the_epoch_in_utc_or_unknown() {
        assert_eq!(build_date("1765000000"), "2025-12-06T05:46:40Z");
        assert_eq!(build_date(" 0 "), "1970-01-01T00:00:00Z");
        assert_eq!(build_date(""), "unknown");
        assert_eq!(build_date("yesterday"), "unknown");
    }

    #[test]
    fn every_fact_is_known() {
        let info = get();
        for (name, value) in [
            ("version", info.version),
            ("commit", info.commit),
            ("target", info.target),
            ("rustc", info.rustc),
            ("librdkafka", info.librdkafka.as_str()),
        ] {
            assert!(!value.trim().is_empty(), "{name} is empty");
        }
        assert!(info.rustc.starts_with("rustc "), "{}", info.rustc);
        assert!(long_version().contains(&info.librdkafka));
    }
}
