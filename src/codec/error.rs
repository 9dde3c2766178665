//! Decode errors (design §2, §5.2): two classes with a precise reason.

use serde::Serialize;

/// Why a message could not be decoded. `Malformed` is never retried;
/// `Codec` is retried and replayable after a codec fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "class")]
pub enum DecodeError {
    /// Not well-formed XML, no META, a missing SNDR/TYPE/STYP/SEQN, or a
    /// value the format forbids.
    #[error("MALFORMED at {path}: {reason}")]
    #[serde(rename = "MALFORMED")]
    Malformed {
        /// Element path, e.g. `MSG/FLOP/FLID`.
        path: String,
        reason: String,
    },
    /// Well-formed and plausible, but this codec version cannot represent it
    /// (e.g. a time in an unexpected layout).
    #[error("CODEC_ERROR at {path}: {reason}")]
    #[serde(rename = "CODEC_ERROR")]
    Codec { path: String, reason: String },
}

impl DecodeError {
    /// Shorthand for a [`DecodeError::Malformed`].
    pub fn malformed(path: impl Into<String>, reason: impl Into<String>) -> Self {
        DecodeError::Malformed {
            path: path.into(),
            reason: reason.into(),
        }
    }
    /// Shorthand for a [`DecodeError::Codec`].
    pub fn codec(path: impl Into<String>, reason: impl Into<String>) -> Self {
        DecodeError::Codec {
            path: path.into(),
            reason: reason.into(),
        }
    }
    /// The error class name stored in PROC_STATE.ERROR_CLASS.
    pub fn class(&self) -> &'static str {
        match self {
            DecodeError::Malformed { .. } => "MALFORMED",
            DecodeError::Codec { .. } => "CODEC_ERROR",
        }
    }
}

/// Why a single value was rejected, before the caller adds its path. Here,
/// below both `fields` and `time`, so that only `fields` imports `time`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ValueError {
    /// The format forbids the value.
    Malformed(String),
    /// Plausible, but this codec version cannot represent it.
    Codec(String),
}

impl ValueError {
    pub fn malformed(reason: impl Into<String>) -> Self {
        ValueError::Malformed(reason.into())
    }
    pub fn codec(reason: impl Into<String>) -> Self {
        ValueError::Codec(reason.into())
    }
    /// Attaches the element or attribute path.
    pub fn at(self, path: String) -> DecodeError {
        match self {
            ValueError::Malformed(r) => DecodeError::malformed(path, r),
            ValueError::Codec(r) => DecodeError::codec(path, r),
        }
    }
}
