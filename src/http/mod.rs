//! HTTP listeners (off by default): the compat entry (§4.4) and the
//! operator endpoints `/metrics`, `/healthz`, `/readyz` (issue 10).

pub mod compat;
pub mod ops;
