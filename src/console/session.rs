//! Login sessions and CSRF (issue 21 item 4; docs/console.md "Security
//! model"). The cookie holds 32 random bytes from the operating system
//! (`getrandom`); the server keeps the session row (CONSOLE_SESSION, keyed
//! by the value's SHA-256) so logout and expiry end it at once and a
//! standby console shares it. Each session has its own random CSRF token;
//! every form carries it and every POST is compared in constant time.

use super::access::sha256_hex;
use axum::http::HeaderMap;
use axum::http::header::COOKIE;
use subtle::ConstantTimeEq;

/// The session cookie's name.
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

/// The session cookie's value from the request, if any.
pub fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value.to_string())
        .filter(|v| !v.is_empty())
}

/// The `Set-Cookie` value of a new session: `HttpOnly` (no script reads
/// it), `SameSite=Strict` (no other site's page sends it), `Secure` when
/// the console is reached over HTTPS (its own TLS, or a proxy that says
/// `X-Forwarded-Proto: https`), `Max-Age` = the session lifetime.
pub fn set_cookie(session_id: &str, secure: bool, max_age_seconds: i64) -> String {
    format!(
        "{COOKIE_NAME}={session_id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age_seconds}{}",
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that removes the session cookie (logout).
pub fn clear_cookie(secure: bool) -> String {
    set_cookie("", secure, 0)
}

/// Whether the request reached the console over HTTPS.
pub fn is_https(headers: &HeaderMap, own_tls: bool) -> bool {
    own_tls
        || headers
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
            HeaderValue::from_static("a=1; msgx_console=abc; b=2"),
        );
        assert_eq!(session_cookie(&h).as_deref(), Some("abc"));
        let c = set_cookie("abc", true, 60);
        for part in [
            "HttpOnly",
            "SameSite=Strict",
            "Secure",
            "Max-Age=60",
            "Path=/",
        ] {
            assert!(c.contains(part), "{c}");
        }
        assert!(!set_cookie("abc", false, 60).contains("Secure"));
        h.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert!(is_https(&h, false));
        assert!(!is_https(&HeaderMap::new(), false));
    }
}
