//! W3C Trace Context `traceparent` (<https://www.w3.org/TR/trace-context/>
//! §3.2): the value ingest gives every message and that travels on its
//! Kafka records. Pure: formatting, parsing and a fresh random context.
//!
//! `traceparent` = `version "-" trace-id "-" parent-id "-" trace-flags`, all
//! lower-case hex: `00-<32 hex>-<16 hex>-<2 hex>`. msgx writes version `00`
//! with the sampled flag (`01`); it reads any version but `ff` the way the
//! spec asks (a future version is parsed by its version-00 prefix).

use std::fmt;
use std::str::FromStr;

/// One W3C trace context: the trace a message belongs to and the span that
/// stands for it (the ingest of that message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    flags: u8,
}

/// Why a `traceparent` value is not valid (the forms W3C §3.2 rejects).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceParentError {
    #[error("traceparent has {0} characters; version 00 has exactly 55")]
    Length(usize),
    #[error("traceparent {0} is not two lower-case hex digits")]
    Field(&'static str),
    #[error("traceparent is missing the '-' after its {0}")]
    Separator(&'static str),
    #[error("traceparent version ff is invalid")]
    VersionFf,
    #[error("traceparent trace-id is all zeros")]
    ZeroTraceId,
    #[error("traceparent parent-id is all zeros")]
    ZeroSpanId,
}

/// The sampled bit of trace-flags.
const SAMPLED: u8 = 0x01;
/// Length of a version-00 `traceparent`.
const LEN: usize = 55;

impl TraceParent {
    /// A context from its parts; `None` for an all-zero ID (invalid, §3.2.2).
    pub fn new(trace_id: [u8; 16], span_id: [u8; 8], flags: u8) -> Option<Self> {
        (trace_id != [0; 16] && span_id != [0; 8]).then_some(Self {
            trace_id,
            span_id,
            flags,
        })
    }

    /// A new trace with a random trace-id and span-id (the thread-local
    /// CSPRNG of `rand`, seeded from the OS), sampled. An all-zero draw
    /// (probability 2⁻⁶⁴ at worst) is drawn again.
    pub fn random() -> Self {
        loop {
            if let Some(t) = Self::new(rand::random(), rand::random(), SAMPLED) {
                return t;
            }
        }
    }

    /// The 16-byte trace-id.
    pub fn trace_id(&self) -> [u8; 16] {
        self.trace_id
    }

    /// The 8-byte parent-id (this context's span).
    pub fn span_id(&self) -> [u8; 8] {
        self.span_id
    }

    /// The trace-flags byte.
    pub fn flags(&self) -> u8 {
        self.flags
    }

    /// The trace-id as 32 lower-case hex digits: the `trace_id` field of the
    /// log lines and the ID an OTLP backend shows.
    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// Parses a `traceparent` header value (§3.2).
    pub fn parse(s: &str) -> Result<Self, TraceParentError> {
        let b = s.as_bytes();
        if b.len() < LEN {
            return Err(TraceParentError::Length(b.len()));
        }
        let version = field::<1>(&b[0..2], "version")?[0];
        if version == 0xff {
            return Err(TraceParentError::VersionFf);
        }
        // Version 00 is exactly 55 characters; a later version may append
        // fields after a '-' (§3.2.4, "Versioning of traceparent").
        if (version == 0 && b.len() != LEN) || (b.len() > LEN && b[LEN] != b'-') {
            return Err(TraceParentError::Length(b.len()));
        }
        sep(b, 2, "version")?;
        let trace_id = field::<16>(&b[3..35], "trace-id")?;
        sep(b, 35, "trace-id")?;
        let span_id = field::<8>(&b[36..52], "parent-id")?;
        sep(b, 52, "parent-id")?;
        let flags = field::<1>(&b[53..55], "trace-flags")?[0];
        if trace_id == [0; 16] {
            return Err(TraceParentError::ZeroTraceId);
        }
        if span_id == [0; 8] {
            return Err(TraceParentError::ZeroSpanId);
        }
        Ok(Self {
            trace_id,
            span_id,
            flags,
        })
    }
}

impl fmt::Display for TraceParent {
    /// Always version 00 (the only version msgx writes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            hex(&self.trace_id),
            hex(&self.span_id),
            self.flags
        )
    }
}

impl FromStr for TraceParent {
    type Err = TraceParentError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// `N` bytes from `2N` lower-case hex digits (upper case is invalid, §3.2.2).
fn field<const N: usize>(digits: &[u8], name: &'static str) -> Result<[u8; N], TraceParentError> {
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        match (nibble(pair[0]), nibble(pair[1])) {
            (Some(h), Some(l)) => out[i] = (h << 4) | l,
            _ => return Err(TraceParentError::Field(name)),
        }
    }
    Ok(out)
}

fn sep(b: &[u8], at: usize, after: &'static str) -> Result<(), TraceParentError> {
    if b[at] == b'-' {
        Ok(())
    } else {
        Err(TraceParentError::Separator(after))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_spec_example_parses_and_formats_back() {
        let t = TraceParent::parse(VALID).expect("valid");
        assert_eq!(t.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.span_id()[0], 0x00);
        assert_eq!(t.span_id()[7], 0xb7);
        assert_eq!(t.flags(), 1);
        assert_eq!(t.to_string(), VALID);
        assert_eq!(VALID.parse::<TraceParent>(), Ok(t));
    }

    #[test]
    fn the_invalid_forms_of_the_spec_are_rejected() {
        use TraceParentError as E;
        let cases: [(&str, E); 10] = [
            (
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                E::ZeroTraceId,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                E::ZeroSpanId,
            ),
            (
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                E::VersionFf,
            ),
            (
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                E::Field("trace-id"),
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
                E::Field("parent-id"),
            ),
            (
                "0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                E::Field("version"),
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
                E::Length(54),
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
                E::Length(56),
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e47360-0f067aa0ba902b7-01",
                E::Separator("trace-id"),
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
                E::Field("trace-flags"),
            ),
        ];
        for (s, err) in cases {
            assert_eq!(TraceParent::parse(s), Err(err), "{s}");
        }
        assert_eq!(TraceParent::parse(""), Err(E::Length(0)));
    }

    #[test]
    fn a_later_version_is_read_by_its_version_00_prefix() {
        let later =
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-brings";
        let t = TraceParent::parse(later).expect("future version");
        assert_eq!(t.to_string(), VALID);
        // …but only when a '-' separates what follows.
        assert!(TraceParent::parse(&format!("{}x", &later[..55])).is_err());
    }

    #[test]
    fn random_contexts_are_valid_sampled_and_distinct() {
        let a = TraceParent::random();
        let b = TraceParent::random();
        assert_ne!(a.trace_id(), b.trace_id());
        assert_eq!(a.flags(), 1);
        assert_eq!(TraceParent::parse(&a.to_string()), Ok(a));
        assert_eq!(TraceParent::new([0; 16], [1; 8], 1), None);
        assert_eq!(TraceParent::new([1; 16], [0; 8], 1), None);
    }

    proptest! {
        /// format → parse is the identity for every valid context.
        #[test]
        fn formatting_round_trips(
            trace_id in any::<[u8; 16]>().prop_filter("non-zero", |t| *t != [0; 16]),
            span_id in any::<[u8; 8]>().prop_filter("non-zero", |s| *s != [0; 8]),
            flags in any::<u8>(),
        ) {
            let t = TraceParent::new(trace_id, span_id, flags).expect("non-zero ids");
            let text = t.to_string();
            prop_assert_eq!(text.len(), 55);
            prop_assert_eq!(TraceParent::parse(&text), Ok(t));
        }

        /// Upper-casing any hex letter makes the value invalid.
        #[test]
        fn upper_case_hex_is_rejected(
            trace_id in any::<[u8; 16]>().prop_filter("non-zero", |t| *t != [0; 16]),
            span_id in any::<[u8; 8]>().prop_filter("non-zero", |s| *s != [0; 8]),
            pick in any::<prop::sample::Index>(),
        ) {
            let text = TraceParent::new(trace_id, span_id, 1).expect("non-zero ids").to_string();
            let letters: Vec<usize> = text.char_indices()
                .filter(|(_, c)| c.is_ascii_lowercase()).map(|(i, _)| i).collect();
            prop_assume!(!letters.is_empty());
            let at = letters[pick.index(letters.len())];
            let mut upper = text.into_bytes();
            upper[at] = upper[at].to_ascii_uppercase();
            let upper = String::from_utf8(upper).expect("ascii");
            prop_assert!(TraceParent::parse(&upper).is_err(), "{}", upper);
        }
    }
}
