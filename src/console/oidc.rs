//! OpenID Connect sign-in (docs/console.md "Single sign-on (OIDC)"): the
//! authorization code flow with PKCE, `state` and `nonce`, through the
//! maintained `openidconnect` crate (no JWT code of our own).
//!
//! The provider's discovery document and its JWKS are fetched at the first
//! sign-in and kept; an ID token signed with a key the kept JWKS does not
//! hold makes one refetch (the provider rotated its keys) before it is
//! refused. The ID token's signature, `iss`, `aud`, `exp`, `iat` and
//! `nonce` are checked by the crate, with `clock-skew` of tolerance on the
//! times and the console's [`crate::clock`] as "now". The role comes from
//! one claim ([`role_from_claim`]): no configured value, no access.

use super::access::Role;
use crate::config::{ConsoleOidc, Dur, OIDC_CLIENT_SECRET_ENV};
use chrono::{DateTime, Utc};
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreGenderClaim, CoreJsonWebKey,
    CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm,
};
use openidconnect::{
    AdditionalClaims, AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret,
    CsrfToken, IdToken, IdTokenVerifier, IssuerUrl, Nonce, PkceCodeChallenge, PkceCodeVerifier,
    ProviderMetadataWithLogout, RedirectUrl, Scope, SignatureVerificationError, TokenResponse,
};
use serde::{Deserialize, Serialize};
use std::path::Path;
use tokio::sync::RwLock;

/// Why a sign-in failed or the OIDC settings cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    #[error("{key}: {problem}")]
    Config { key: String, problem: String },
    #[error("the OpenID Provider's discovery document or keys could not be read: {0}")]
    Discovery(String),
    #[error("the provider's token endpoint refused the code: {0}")]
    Exchange(String),
    #[error("the provider's answer holds no ID token")]
    NoIdToken,
    #[error("the ID token was refused: {0}")]
    Token(String),
}

/// Every claim of the ID token beyond the standard ones (the role claim,
/// e.g. `groups`, is one).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExtraClaims {
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}
impl AdditionalClaims for ExtraClaims {}

/// The ID token as the console reads it.
pub type ConsoleIdToken = IdToken<
    ExtraClaims,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;

/// A sign-in begun: where to send the browser, and what the callback needs.
#[derive(Debug)]
pub struct Begun {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// Who signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The `user-claim` (else `sub`).
    pub user: String,
    /// `None`: the role claim holds no configured value (no access).
    pub role: Option<Role>,
    /// The ID token as received (the `id_token_hint` of the logout).
    pub id_token: String,
}

/// The console's OIDC client.
pub struct Oidc {
    config: ConsoleOidc,
    issuer: IssuerUrl,
    redirect: RedirectUrl,
    secret: Option<ClientSecret>,
    roles: Vec<(Role, Vec<String>)>,
    http: openidconnect::reqwest::Client,
    provider: RwLock<Option<ProviderMetadataWithLogout>>,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("issuer", &self.config.issuer)
            .field("client_id", &self.config.client_id)
            .finish_non_exhaustive()
    }
}

/// Reads the client secret: env `MSGX_CONSOLE_OIDC_CLIENT_SECRET` wins over
/// `client-secret-file` (mode 0600, refused otherwise); neither = a public
/// client.
pub fn client_secret(
    c: &ConsoleOidc,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<String>, OidcError> {
    if let Some(v) = env(OIDC_CLIENT_SECRET_ENV).filter(|v| !v.trim().is_empty()) {
        return Ok(Some(v.trim().to_string()));
    }
    let Some(path) = &c.client_secret_file else {
        return Ok(None);
    };
    read_secret_file(path).map(Some)
}

fn read_secret_file(path: &Path) -> Result<String, OidcError> {
    let problem = |problem: String| OidcError::Config {
        key: "msgx.console.oidc.client-secret-file".into(),
        problem: format!("{}: {problem}", path.display()),
    };
    match crate::config::shared_file_mode(path) {
        Ok(Some(mode)) => {
            return Err(problem(format!(
                "mode {mode:04o} lets the group or others read it: chmod 600 it"
            )));
        }
        Ok(None) => {}
        Err(e) => return Err(problem(e.to_string())),
    }
    let text = std::fs::read_to_string(path).map_err(|e| problem(e.to_string()))?;
    let secret = text.trim();
    if secret.is_empty() {
        return Err(problem("empty".into()));
    }
    Ok(secret.to_string())
}

/// The role whose configured values the claim holds, the highest if
/// several: the claim is a string or a list of strings; anything else, or
/// no match, is no role.
pub fn role_from_claim(
    claim: Option<&serde_json::Value>,
    mapping: &[(Role, Vec<String>)],
) -> Option<Role> {
    let values: Vec<&str> = match claim {
        Some(serde_json::Value::String(s)) => vec![s.as_str()],
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_str()).collect(),
        _ => return None,
    };
    [Role::Admin, Role::Operator, Role::Viewer]
        .into_iter()
        .find(|role| {
            mapping
                .iter()
                .filter(|(r, _)| r == role)
                .any(|(_, wanted)| wanted.iter().any(|w| values.contains(&w.as_str())))
        })
}

/// The mapping of `[msgx.console.oidc.roles]` (its names checked by
/// [`crate::config::oidc_issues`]).
fn role_mapping(c: &ConsoleOidc) -> Vec<(Role, Vec<String>)> {
    c.roles
        .iter()
        .filter_map(|(name, values)| Role::parse(name).map(|r| (r, values.clone())))
        .collect()
}

impl Oidc {
    /// Checks the settings; contacts nobody (the provider is asked at the
    /// first sign-in, so a console starts while its provider is down).
    pub fn new(config: &ConsoleOidc, secret: Option<String>) -> Result<Oidc, OidcError> {
        if let Some(issue) = crate::config::oidc_issues(config).into_iter().next() {
            return Err(OidcError::Config {
                key: issue.key,
                problem: issue.rule,
            });
        }
        let bad = |key: &str, e: &dyn std::fmt::Display| OidcError::Config {
            key: format!("msgx.console.oidc.{key}"),
            problem: e.to_string(),
        };
        let issuer = IssuerUrl::new(config.issuer.clone()).map_err(|e| bad("issuer", &e))?;
        let redirect =
            RedirectUrl::new(config.redirect_uri.clone()).map_err(|e| bad("redirect-uri", &e))?;
        let roles = role_mapping(config);
        let http = openidconnect::reqwest::ClientBuilder::new()
            // The spec's advice: never follow redirects (SSRF).
            .redirect(openidconnect::reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(10))
            // No kept-alive connections: the provider is asked rarely, and a
            // connection kept across its restart fails the next request.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| bad("issuer", &e))?;
        Ok(Oidc {
            config: config.clone(),
            issuer,
            redirect,
            secret: secret.map(ClientSecret::new),
            roles,
            http,
            provider: RwLock::new(None),
        })
    }

    /// The button's text on the login page.
    pub fn label(&self) -> &str {
        &self.config.label
    }

    /// The discovery document (with its JWKS), fetched once; `refresh`
    /// fetches it again (keys rotated).
    async fn provider(&self, refresh: bool) -> Result<ProviderMetadataWithLogout, OidcError> {
        if !refresh && let Some(p) = self.provider.read().await.as_ref() {
            return Ok(p.clone());
        }
        let p = ProviderMetadataWithLogout::discover_async(self.issuer.clone(), &self.http)
            .await
            .map_err(|e| OidcError::Discovery(error_chain(&e)))?;
        *self.provider.write().await = Some(p.clone());
        Ok(p)
    }

    fn client(
        &self,
        p: ProviderMetadataWithLogout,
    ) -> CoreClient<
        openidconnect::EndpointSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointMaybeSet,
        openidconnect::EndpointMaybeSet,
    > {
        CoreClient::from_provider_metadata(
            p,
            ClientId::new(self.config.client_id.clone()),
            self.secret.clone(),
        )
        .set_redirect_uri(self.redirect.clone())
    }

    /// Starts a sign-in: the provider's authorization URL with a fresh
    /// `state`, `nonce` and PKCE (S256) challenge.
    pub async fn begin(&self) -> Result<Begun, OidcError> {
        let client = self.client(self.provider(false).await?);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .set_pkce_challenge(challenge);
        for scope in &self.config.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.url();
        Ok(Begun {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    /// Ends a sign-in: exchanges `code` (with the PKCE verifier) for the
    /// tokens and checks the ID token at `now`.
    pub async fn finish(
        &self,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
        now: DateTime<Utc>,
    ) -> Result<Identity, OidcError> {
        let client = self.client(self.provider(false).await?);
        let response = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| OidcError::Exchange(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_string()))
            .request_async(&self.http)
            .await
            .map_err(|e| OidcError::Exchange(error_chain(&e)))?;
        let raw = response.id_token().ok_or(OidcError::NoIdToken)?.to_string();
        self.verify_id_token(&raw, nonce, now).await
    }

    /// Checks a raw ID token against the provider's keys (refetched once
    /// when none matches its `kid`), this client's id, the issuer, `nonce`
    /// and the times at `now` with the configured skew; maps its role.
    pub async fn verify_id_token(
        &self,
        raw: &str,
        nonce: &str,
        now: DateTime<Utc>,
    ) -> Result<Identity, OidcError> {
        let token: ConsoleIdToken = raw
            .parse()
            .map_err(|e: serde_json::Error| OidcError::Token(e.to_string()))?;
        let nonce = Nonce::new(nonce.to_string());
        let mut refreshed = false;
        loop {
            let p = self.provider(refreshed).await?;
            match self.check(&token, &p, &nonce, now) {
                Err(ClaimsVerificationError::SignatureVerification(
                    SignatureVerificationError::NoMatchingKey,
                )) if !refreshed => refreshed = true,
                Err(e) => return Err(OidcError::Token(error_chain(&e))),
                Ok(claims) => return Ok(self.identity(claims, raw)),
            }
        }
    }

    fn check(
        &self,
        token: &ConsoleIdToken,
        p: &ProviderMetadataWithLogout,
        nonce: &Nonce,
        now: DateTime<Utc>,
    ) -> Result<serde_json::Value, ClaimsVerificationError> {
        let skew = skew(self.config.clock_skew);
        let verifier = IdTokenVerifier::<CoreJsonWebKey>::new_public_client(
            ClientId::new(self.config.client_id.clone()),
            self.issuer.clone(),
            p.jwks().clone(),
        )
        // `exp` may lie up to `skew` in the past …
        .set_time_fn(move || now - skew)
        // … and `iat` up to `skew` in the future.
        .set_issue_time_verifier_fn(move |iat| {
            if iat <= now + skew {
                Ok(())
            } else {
                Err(format!("issued in the future ({iat}, now {now})"))
            }
        });
        let claims = token.claims(&verifier, nonce)?;
        Ok(serde_json::to_value(claims).unwrap_or_default())
    }

    fn identity(&self, claims: serde_json::Value, raw: &str) -> Identity {
        let user = claims
            .get(&self.config.user_claim)
            .or_else(|| claims.get("sub"))
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        Identity {
            user,
            role: role_from_claim(claims.get(&self.config.role_claim), &self.roles),
            id_token: raw.to_string(),
        }
    }

    /// The provider's logout URL (RP-initiated logout) when its discovery
    /// document offers `end_session_endpoint`, with the ID token as hint and
    /// the console's `/login` (the redirect URI's sibling) as where to come back.
    pub async fn logout_url(&self, id_token: &str) -> Option<String> {
        let post_logout = self.post_logout_uri();
        let p = self.provider(false).await.ok()?;
        let end = p.additional_metadata().end_session_endpoint.as_ref()?;
        let mut url = end.url().clone();
        url.query_pairs_mut()
            .append_pair("id_token_hint", id_token)
            .append_pair("client_id", &self.config.client_id)
            .append_pair("post_logout_redirect_uri", &post_logout);
        Some(url.to_string())
    }
}

impl Oidc {
    /// Where the provider sends the browser after its logout: the console's
    /// login page (register it at the provider beside the redirect URI).
    pub fn post_logout_uri(&self) -> String {
        let base = self
            .config
            .redirect_uri
            .strip_suffix(CALLBACK_PATH)
            .unwrap_or(&self.config.redirect_uri);
        format!("{base}/login")
    }
}

/// The console's callback path (`redirect-uri` ends in it).
pub const CALLBACK_PATH: &str = crate::config::OIDC_CALLBACK_PATH;

fn skew(d: Dur) -> chrono::Duration {
    chrono::Duration::from_std(d.std()).unwrap_or(chrono::Duration::zero())
}

/// An error with its sources, on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mapping() -> Vec<(Role, Vec<String>)> {
        vec![
            (Role::Admin, vec!["msgx-admins".into()]),
            (Role::Operator, vec!["msgx-operators".into()]),
            (Role::Viewer, vec!["msgx-viewers".into(), "staff".into()]),
        ]
    }

    #[test]
    fn the_highest_matching_role_wins_and_no_match_is_no_access() {
        let m = mapping();
        let role = |v| role_from_claim(Some(&v), &m);
        assert_eq!(
            role(json!(["staff", "msgx-operators"])),
            Some(Role::Operator)
        );
        assert_eq!(
            role(json!(["msgx-admins", "msgx-operators"])),
            Some(Role::Admin)
        );
        assert_eq!(role(json!("staff")), Some(Role::Viewer));
        assert_eq!(role(json!(["others"])), None);
        assert_eq!(role(json!(42)), None);
        assert_eq!(role_from_claim(None, &m), None);
    }

    fn config(roles: &[(&str, &[&str])]) -> ConsoleOidc {
        let text = format!(
            "issuer = \"https://idp.example.org\"\nclient-id = \"msgx\"\n\
             redirect-uri = \"https://console.example.org/oidc/callback\"\n[roles]\n{}",
            roles
                .iter()
                .map(|(r, v)| format!("{r} = {v:?}\n"))
                .collect::<String>()
        );
        toml::from_str(&text).expect("parses")
    }

    #[test]
    fn the_settings_are_checked_before_any_request() {
        assert!(Oidc::new(&config(&[("operator", &["ops"])]), None).is_ok());
        let err = |c: &ConsoleOidc| Oidc::new(c, None).err().map(|e| e.to_string());
        assert!(err(&config(&[("root", &["x"])])).is_some_and(|e| e.contains("no role")));
        assert!(err(&config(&[])).is_some_and(|e| e.contains("nobody could sign in")));
        let mut c = config(&[("viewer", &["x"])]);
        c.redirect_uri = "https://console.example.org/callback".into();
        assert!(err(&c).is_some_and(|e| e.contains("/oidc/callback")));
    }

    #[test]
    fn the_secret_comes_from_the_environment_before_the_file() {
        use std::os::unix::fs::PermissionsExt;
        let file = tempfile::NamedTempFile::new().expect("tmp");
        std::fs::write(file.path(), "from-file\n").expect("write");
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600))
            .expect("chmod");
        let mut c = config(&[("viewer", &["x"])]);
        c.client_secret_file = Some(file.path().to_path_buf());
        let none = |_: &str| None;
        assert_eq!(
            client_secret(&c, none).ok().flatten().as_deref(),
            Some("from-file")
        );
        let env = |_: &str| Some("from-env".to_string());
        assert_eq!(
            client_secret(&c, env).ok().flatten().as_deref(),
            Some("from-env")
        );
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644))
            .expect("chmod");
        assert!(
            client_secret(&c, none).is_err(),
            "a readable file is refused"
        );
    }
}
