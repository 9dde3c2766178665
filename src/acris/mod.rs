//! The ACRIS flight API (issue 36 item 3; docs/acris.md): ACI's ACRIS
//! "API for Flight" (RAML 1.0, `ACRISFlight` draft-03 schemas), read-only,
//! over the stored flight state, on its own optional listener
//! (`msgx.acris.listen`) with bearer tokens.
//!
//! - [`view`]: the pure mapping of a stored flight to an `ACRISFlight`
//!   (field mapping, status mapping, flight-number split).
//! - [`server`]: the listener, authentication, routes and parameters.
//! - [`openapi`]: the OpenAPI 3.1 document generated from the handlers and
//!   the view types (served at `/acris/v1/openapi.json`, exported to
//!   `schemas/acris-openapi.json` by `msgx contract export`).

pub mod openapi;
pub mod server;
pub mod view;

pub use server::{AcrisError, AcrisServer, preflight};

/// Binds the API on `listen` ([`server::bind`]) with the generated OpenAPI
/// document. `pg` is the API's own pool ([`crate::store::pg::connect_acris`]).
pub async fn bind(
    listen: &str,
    config: &crate::config::Config,
    pg: sqlx::PgPool,
    clock: crate::clock::SharedClock,
) -> Result<AcrisServer, AcrisError> {
    server::bind(listen, config, pg, clock, openapi::text()).await
}
