//! Upstream requests (design §7.2).

pub mod expiry;
