//! Compat HTTP entry `POST /cminmsgs/send` (design §4.4, C-28).
//!
//! Writes the mailbox row first, then registers it in PROC_STATE — two steps,
//! not one transaction. The registered row is beyond W, so the pump takes it
//! only once ingest has caught up: order is kept, at the cost of waiting for
//! the poller. Responses:
//!
//! | status | when | body |
//! |---|---|---|
//! | 200 | mailbox row written and enqueued | `{"id": N, "enqueued": true}` |
//! | 202 | mailbox row written, PostgreSQL enqueue failed (the poller picks it up) | `{"id": N, "enqueued": false, "warning": …}` |
//! | 400 | the body is not a well-formed SIS message | `{"error": "MALFORMED at …"}` |
//! | 413 | the body exceeds `msgx.http.compat-max-body` | — |
//! | 503 | the mailbox write failed, or shadow mode | `{"error": …}` |
//!
//! A client that retries after an error may write the mailbox twice; the
//! business identity makes the second copy a `duplicate-of` skip (§4.4).

use crate::clock::SharedClock;
use crate::codec::{self, DecodeError};
use crate::store::mailbox::Mailbox;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;
use sqlx::PgPool;

/// What the handler needs.
#[derive(Clone)]
pub struct CompatState {
    pub pg: PgPool,
    pub mailbox: Mailbox,
    pub clock: SharedClock,
    pub tz: chrono_tz::Tz,
}

/// The router, with the body limit.
pub fn router(state: CompatState, max_body: usize) -> Router {
    Router::new()
        .route("/cminmsgs/send", post(send))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state)
}

async fn send(State(s): State<CompatState>, body: axum::body::Bytes) -> Response {
    let meta = match codec::decode(&body) {
        Ok(m) => Some(m.meta),
        Err(e @ DecodeError::Malformed { .. }) => {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": e.to_string()})),
            )
                .into_response();
        }
        // Well-formed but not representable yet: accepted; processing records CODEC_ERROR.
        Err(DecodeError::Codec { .. }) => None,
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "body is not UTF-8"})),
        )
            .into_response();
    };
    let now = s.clock.now();
    let received = now.with_timezone(&s.tz).naive_local();
    let id = match s
        .mailbox
        .insert_message(text, received, meta.as_ref())
        .await
    {
        Ok(id) => id,
        Err(e) => {
            tracing::error!(error = %e, "Compat entry: mailbox write failed");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(json!({"error": e.to_string()})),
            )
                .into_response();
        }
    };
    let enqueue = sqlx::query(
        "INSERT INTO proc_state (msg_id, state, received_at, enqueued_at, updated_at, source) \
         VALUES ($1, 'PENDING', $2, $2, $2, 'compat') ON CONFLICT (msg_id) DO NOTHING",
    )
    .bind(id)
    .bind(now)
    .execute(&s.pg)
    .await;
    match enqueue {
        Ok(_) => (
            StatusCode::OK,
            axum::Json(json!({"id": id, "enqueued": true})),
        )
            .into_response(),
        Err(e) => {
            tracing::warn!(id, error = %e, "Compat entry: enqueue failed; the poller will pick the row up");
            (
                StatusCode::ACCEPTED,
                axum::Json(json!({"id": id, "enqueued": false, "warning": "stored in the mailbox; ingest will pick it up"})),
            )
                .into_response()
        }
    }
}

/// Serves the compat entry on `listen` until `stop` turns true.
pub async fn serve(
    listen: &str,
    state: CompatState,
    max_body: usize,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    tracing::info!(%listen, "Compat entry POST /cminmsgs/send listening");
    axum::serve(listener, router(state, max_body))
        .with_graceful_shutdown(async move {
            let _ = stop.wait_for(|v| *v).await;
        })
        .await
}
