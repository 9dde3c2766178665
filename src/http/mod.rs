//! HTTP listeners (off by default): the compat entry (§4.4) and the
//! operator endpoints `/metrics`, `/healthz`, `/readyz`, both
//! served through [`listener`] (timeouts, limits, TLS), with
//! per-client budgets keyed by [`client`].

pub mod client;
pub mod compat;
pub mod listener;
pub mod ops;
