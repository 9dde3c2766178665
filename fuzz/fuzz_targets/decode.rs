//! Fuzz target: `msgx::codec::decode` must never panic, and every error
//! must carry a path and a reason (issue 3, item 8).
#![no_main]

use libfuzzer_sys::fuzz_target;
use msgx::codec::{DecodeError, decode};

fuzz_target!(|data: &[u8]| {
    if let Err(DecodeError::Malformed { path, reason } | DecodeError::Codec { path, reason }) =
        decode(data)
    {
        assert!(!path.is_empty() && !reason.is_empty());
    }
});
