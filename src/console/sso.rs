//! The OIDC sign-in's two requests (docs/console.md "Single sign-on
//! (OIDC)"): `/oidc/login` sends the browser to the provider, and
//! `/oidc/callback` takes it back. What the callback needs (nonce, PKCE
//! verifier) is stored in PostgreSQL under the SHA-256 of the `state`,
//! bound to the browser by a random cookie, and taken (deleted) by the
//! first callback that presents that `state`: a replayed or foreign
//! `state` finds nothing and is refused.

use super::access::{sha256_hex, valid_user_name};
use super::pages::{self, login_page, unavailable};
use super::session;
use super::state::{ConsoleState, Transport};
use crate::log_text::for_log;
use crate::store::pg::console_session::{self, OidcLogin};
use axum::Extension;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;

/// How long a sign-in may take at the provider.
const SIGN_IN_SECONDS: i64 = 600;

/// `/oidc/login`: a fresh `state`, `nonce` and PKCE verifier, stored and
/// bound to this browser; then off to the provider.
pub async fn begin(
    State(s): State<ConsoleState>,
    transport: Option<Extension<Transport>>,
    headers: HeaderMap,
) -> Response {
    let https = pages::https(transport);
    let Some(oidc) = s.oidc.clone() else {
        return (StatusCode::NOT_FOUND, "single sign-on is not configured").into_response();
    };
    let begun = match oidc.begin().await {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "Console: single sign-on could not start");
            let error = Some("the sign-in provider could not be reached (see the msgx log)".into());
            return login_page(&s, StatusCode::BAD_GATEWAY, error, https, &headers);
        }
    };
    let browser = match session::random_token() {
        Ok(b) => b,
        Err(e) => return unavailable("sign-in", e),
    };
    let now = s.clock.now();
    let login = OidcLogin {
        browser_sha256: sha256_hex(browser.as_bytes()),
        nonce: begun.nonce,
        pkce_verifier: begun.pkce_verifier,
        expires_at: now + chrono::Duration::seconds(SIGN_IN_SECONDS),
    };
    let state_hash = sha256_hex(begun.state.as_bytes());
    if let Err(e) = console_session::insert_oidc_login(&s.pg, &state_hash, &login, now).await {
        return unavailable("sign-in", e);
    }
    let cookie =
        session::set_lax_cookie(session::OIDC_COOKIE_NAME, &browser, https, SIGN_IN_SECONDS);
    with_cookies(Redirect::to(&begun.url).into_response(), &[cookie])
}

/// The provider's answer.
#[derive(Debug, Deserialize)]
pub struct Callback {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// `/oidc/callback`: takes the sign-in of `state` (once), checks it came
/// from this browser, exchanges the code, checks the ID token, maps the
/// role, and opens a session. Every refusal is the login page with the
/// reason, 403, and a WARN line.
pub async fn callback(
    State(s): State<ConsoleState>,
    transport: Option<Extension<Transport>>,
    headers: HeaderMap,
    Query(q): Query<Callback>,
) -> Response {
    let https = pages::https(transport);
    let refuse = |status: StatusCode, why: String, user: &str| {
        tracing::warn!(user = %for_log(user), why = %for_log(&why), "Console: single sign-on refused");
        let spent = session::set_lax_cookie(session::OIDC_COOKIE_NAME, "", https, 0);
        with_cookies(login_page(&s, status, Some(why), https, &headers), &[spent])
    };
    let Some(oidc) = s.oidc.clone() else {
        return (StatusCode::NOT_FOUND, "single sign-on is not configured").into_response();
    };
    if let Some(e) = q.error {
        let why = format!(
            "the sign-in provider refused: {}",
            crate::error_text::cut(&e)
        );
        return refuse(StatusCode::FORBIDDEN, why, "");
    }
    let (Some(code), Some(state)) = (q.code, q.state) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the provider's answer has no code or state".into(),
            "",
        );
    };
    let login = match console_session::take_oidc_login(&s.pg, &sha256_hex(state.as_bytes())).await {
        Ok(Some(l)) => l,
        Ok(None) => {
            let why = "this sign-in is unknown or was already used (state); sign in again".into();
            return refuse(StatusCode::FORBIDDEN, why, "");
        }
        Err(e) => return unavailable("sign-in", e),
    };
    let now = s.clock.now();
    let browser = session::read_cookie(&headers, session::OIDC_COOKIE_NAME, https)
        .map(|b| sha256_hex(b.as_bytes()));
    if !session::csrf_matches(&login.browser_sha256, browser.as_deref()) {
        let why = "this sign-in was begun in another browser; sign in again".into();
        return refuse(StatusCode::FORBIDDEN, why, "");
    }
    if login.expires_at <= now {
        return refuse(
            StatusCode::FORBIDDEN,
            "this sign-in took too long; sign in again".into(),
            "",
        );
    }
    let identity = match oidc
        .finish(&code, &login.pkce_verifier, &login.nonce, now)
        .await
    {
        Ok(i) => i,
        Err(e) => return refuse(StatusCode::FORBIDDEN, format!("sign-in refused: {e}"), ""),
    };
    if !valid_user_name(&identity.user) {
        let why = "the provider's user name is empty, too long or holds a control character".into();
        return refuse(StatusCode::FORBIDDEN, why, "");
    }
    let Some(role) = identity.role else {
        let why = format!(
            "no access: you signed in as {} but your account has none of the groups that give a \
             role in this console; ask your administrator",
            identity.user
        );
        return refuse(StatusCode::FORBIDDEN, why, &identity.user);
    };
    let opened = super::actions::open_session(
        &s,
        &identity.user,
        "oidc",
        Some((role.as_str(), &identity.id_token)),
        https,
    )
    .await;
    let (session_cookie, ended) = match opened {
        Ok(o) => o,
        Err(r) => return r,
    };
    tracing::info!(user = %for_log(&identity.user), role = role.as_str(), ended_oldest = ended, "Console: single sign-on");
    // A page, not a redirect: the session cookie is SameSite=Strict, and a
    // browser does not send it on a redirect chain that began at the
    // provider's site; the page's own navigation to / is same-site.
    let body = Html(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"0; url=/\"><title>Signed in · msgx</title></head>\
         <body><p id=\"signed-in\">Signed in. <a id=\"continue\" href=\"/\">Continue</a></p></body></html>",
    );
    let cookies = [
        session_cookie,
        session::set_lax_cookie(session::OIDC_COOKIE_NAME, "", https, 0),
    ];
    with_cookies(body.into_response(), &cookies)
}

fn with_cookies(mut r: Response, cookies: &[String]) -> Response {
    for c in cookies {
        if let Ok(v) = HeaderValue::from_str(c) {
            r.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    r
}
