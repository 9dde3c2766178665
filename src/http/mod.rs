//! HTTP listeners (off by default): the compat entry (§4.4).

pub mod compat;
