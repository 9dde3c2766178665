//! Login sessions and CSRF (docs/console.md "Security
//! model"). The cookie holds 32 random bytes from the operating system
//! (`getrandom`); the server keeps the session row (CONSOLE_SESSION, keyed
//! by the value's SHA-256) so logout and expiry end it at once and a
//! standby console shares it. Each session has its own random CSRF token;
//! every form carries it and every POST is compared in constant time.

use super::access::sha256_hex;
use axum::http::HeaderMap;
use axum::http::header::COOKIE;
use subtle::ConstantTimeEq;

/// The session cookie's name over plain HTTP (loopback, or a development
/// console behind no proxy).
pub const COOKIE_NAME: &str = "msgx_console";

/// Why no random value could be made (the OS source failed).
#[derive(Debug, thiserror::Error)]
#[error("no randomness from the operating system: {0}")]
pub struct RandomError(String);

/// 32 random bytes, hex: a session id or a CSRF token.
pub fn random_token() -> Result<String, RandomError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| RandomError(e.to_string()))?;
    Ok(hex::encode(bytes))
}

/// The key of a session id in CONSOLE_SESSION.
pub fn id_hash(session_id: &str) -> String {
    sha256_hex(session_id.as_bytes())
}

/// The login form's CSRF cookie: a random value set
/// with the form and posted back in it (double submit), so a page of
/// another site cannot log a browser in as the attacker's user.
pub const LOGIN_COOKIE_NAME: &str = "msgx_login";

/// Over HTTPS a cookie's name carries the `__Host-` prefix: the browser
/// keeps it only if it is `Secure`, has `Path=/` and no `Domain`, so no
/// other host of the domain (and no plain-HTTP page) can set or shadow it.
fn cookie_name(base: &str, secure: bool) -> String {
    if secure {
        format!("__Host-{base}")
    } else {
        base.to_string()
    }
}

/// The value of the cookie `base` (named as [`cookie_name`] does for
/// `secure`) from the request, if any.
pub fn read_cookie(headers: &HeaderMap, base: &str, secure: bool) -> Option<String> {
    let name = cookie_name(base, secure);
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.to_string())
        .filter(|v| !v.is_empty())
}

/// The session cookie's value from the request, if any.
pub fn session_cookie(headers: &HeaderMap, secure: bool) -> Option<String> {
    read_cookie(headers, COOKIE_NAME, secure)
}

/// The `Set-Cookie` value of the cookie `base`: `HttpOnly` (no script reads
/// it), `SameSite=Strict` (no other site's page sends it), `Path=/`, and
/// over HTTPS `Secure` with the `__Host-` prefix; `Max-Age` in seconds.
pub fn set_named_cookie(base: &str, value: &str, secure: bool, max_age_seconds: i64) -> String {
    format!(
        "{}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age_seconds}{}",
        cookie_name(base, secure),
        if secure { "; Secure" } else { "" }
    )
}

/// The cookie that binds an OIDC sign-in under way to the browser that
/// began it (its SHA-256 is stored with the `state`).
pub const OIDC_COOKIE_NAME: &str = "msgx_oidc";

/// As [`set_named_cookie`] but `SameSite=Lax`: the provider's redirect back
/// to the callback is a top-level navigation from another site, on which a
/// browser sends a Lax cookie and never a Strict one.
pub fn set_lax_cookie(base: &str, value: &str, secure: bool, max_age_seconds: i64) -> String {
    set_named_cookie(base, value, secure, max_age_seconds)
        .replace("SameSite=Strict", "SameSite=Lax")
}

/// The `Set-Cookie` value of a new session (`Max-Age` = its lifetime).
pub fn set_cookie(session_id: &str, secure: bool, max_age_seconds: i64) -> String {
    set_named_cookie(COOKIE_NAME, session_id, secure, max_age_seconds)
}

/// The `Set-Cookie` value that removes the session cookie (logout).
pub fn clear_cookie(secure: bool) -> String {
    set_cookie("", secure, 0)
}

/// Whether the request reached the console over HTTPS: its own TLS, or a
/// trusted proxy (`msgx.http.trusted-proxies`, `from_proxy`) that says
/// `X-Forwarded-Proto: https`. Anyone else's header is not believed.
pub fn is_https(headers: &HeaderMap, own_tls: bool, from_proxy: bool) -> bool {
    own_tls
        || from_proxy
            && headers
                .get("x-forwarded-proto")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
}

/// The presented CSRF token equals the session's, in constant time (the
/// comparison does not stop at the first differing byte).
pub fn csrf_matches(expected: &str, presented: Option<&str>) -> bool {
    let Some(presented) = presented else {
        return false;
    };
    let (e, p) = (expected.as_bytes(), presented.as_bytes());
    !e.is_empty() && bool::from(e.len().ct_eq(&p.len())) && bool::from(e.ct_eq(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn csrf_needs_the_exact_token() {
        let t = random_token().expect("random");
        assert_eq!(t.len(), 64);
        assert!(csrf_matches(&t, Some(&t)));
        assert!(!csrf_matches(&t, None));
        assert!(!csrf_matches(&t, Some("")));
        assert!(!csrf_matches(&t, Some(&t[..63])));
        assert!(!csrf_matches(&t, Some(&format!("{t}0"))));
        assert!(!csrf_matches("", Some("")));
        assert_ne!(t, random_token().expect("random"));
    }

    #[test]
    fn the_cookie_is_read_among_others_and_carries_its_attributes() {
        let mut h = HeaderMap::new();
        h.insert(
            COOKIE,
            HeaderValue::from_static("a=1; msgx_console=abc; b=2; __Host-msgx_console=tls"),
        );
        assert_eq!(session_cookie(&h, false).as_deref(), Some("abc"));
        assert_eq!(session_cookie(&h, true).as_deref(), Some("tls"));
        let c = set_cookie("abc", true, 60);
        assert!(c.starts_with("__Host-msgx_console=abc;"), "{c}");
        for part in [
            "HttpOnly",
            "SameSite=Strict",
            "Secure",
            "Max-Age=60",
            "Path=/",
        ] {
            assert!(c.contains(part), "{c}");
        }
        let plain = set_cookie("abc", false, 60);
        assert!(plain.starts_with("msgx_console=abc;") && !plain.contains("Secure"));
        h.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert!(is_https(&h, false, true));
        assert!(
            !is_https(&h, false, false),
            "only a trusted proxy is believed"
        );
        assert!(!is_https(&HeaderMap::new(), false, true));
        assert!(is_https(&HeaderMap::new(), true, false));
    }
}
