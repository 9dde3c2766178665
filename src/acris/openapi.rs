//! The ACRIS API's OpenAPI 3.1 document, derived by utoipa from the
//! handlers' `#[utoipa::path]` attributes and the view types (src/acris/view.rs):
//! served at `/acris/v1/openapi.json` and committed as
//! `schemas/acris-openapi.json` (`msgx contract export`; a test keeps the
//! file equal to what the code generates).

use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use super::server;
use super::view;

/// The file `msgx contract export` writes into `schemas/`.
pub const FILE_NAME: &str = "acris-openapi.json";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "msgx ACRIS flight API",
        description = "ACI ACRIS \"API for Flight\" (RAML 1.0, ACRISFlight draft-03), read-only, over msgx's \
                       stored flight state. docs/acris.md describes the parameters, the field and status \
                       mapping and what SIS cannot provide.",
        version = "v1",
        license(name = "Proprietary")
    ),
    paths(
        server::arrivals,
        server::departures,
        server::flights,
        server::one_flight,
        server::openapi,
    ),
    components(schemas(
        view::AcrisFlight,
        view::Airline,
        view::AircraftType,
        view::FlightNumber,
        view::DepartureInfo,
        view::ArrivalInfo,
        view::Times,
        view::CheckinInfo,
        view::BoardingTime,
        view::BaggageClaim,
        view::Via,
        view::FlightStatus,
        server::ErrorBody,
    )),
    modifiers(&Bearer),
    tags(
        (name = "flight", description = "ACRIS flight resources"),
        (name = "meta", description = "This document")
    )
)]
struct Document;

/// Adds the bearer-token scheme every operation names.
struct Bearer;

impl utoipa::Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let scheme = SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "A token of msgx.acris.tokens-file (its SHA-256 is stored there)",
                ))
                .build(),
        );
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearer", scheme);
    }
}

/// The document as JSON.
pub fn document() -> serde_json::Value {
    serde_json::to_value(Document::openapi()).unwrap_or(serde_json::Value::Null)
}

/// The document's text: pretty JSON with a final newline (the committed file).
pub fn text() -> String {
    let mut s = serde_json::to_string_pretty(&document()).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_openapi_3_1_with_every_route() {
        let d = document();
        assert!(
            d["openapi"].as_str().is_some_and(|v| v.starts_with("3.1")),
            "{}",
            d["openapi"]
        );
        for p in [
            server::paths::ARRIVALS,
            server::paths::DEPARTURES,
            server::paths::FLIGHTS,
            server::paths::FLIGHT,
            server::paths::OPENAPI,
        ] {
            assert!(d["paths"][p]["get"].is_object(), "{p} is documented");
        }
        assert!(d["components"]["schemas"]["AcrisFlight"].is_object());
        assert!(d["components"]["securitySchemes"]["bearer"].is_object());
    }
}
