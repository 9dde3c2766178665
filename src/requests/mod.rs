//! Upstream requests (design §7.2): the REQ_TRACK lifecycle ([`track`]),
//! the pure RESP matching rules ([`matching`]) and the expiry job.

pub mod expiry;
pub mod matching;
pub mod track;
