//! SIS XML codec (design §2; sis-format.md). Pure: no I/O, no clock.
//!
//! `decode` turns one mailbox message into a [`DecodedMessage`] or a
//! classified [`DecodeError`]; `encode` writes the outbound RQRD/RQFD
//! requests. The error-class rules are tabled in docs/codec.md.

mod decode;
mod encode;
pub mod error;
mod fields;
mod flop;
mod fltr;
mod groups;
pub mod model;
mod refdata;
mod schs;
mod time;
mod xml;

pub use decode::{
    DecodedWindow, MAX_MESSAGE_BYTES, TWO_LEVEL_ABOVE, decode, decode_window, decode_with,
    too_large,
};
pub use encode::{OutboundRequest, decode_request, encode_rqfd, encode_rqrd, format_sis_time};
pub use error::DecodeError;
pub use model::*;
