//! HTTP listeners (off by default): the compat entry (§4.4) and the
//! operator endpoints `/metrics`, `/healthz`, `/readyz` (issue 10), both
//! served through [`listener`] (timeouts, limits, TLS; issue 16), with
//! per-client budgets keyed by [`client`] (issue 32 item 5).

pub mod client;
pub mod compat;
pub mod listener;
pub mod ops;
