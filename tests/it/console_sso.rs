//! Single sign-on (issue 37 item 1) against a real OpenID Provider:
//! panva's `oidc-provider` (tests/oidc-provider/provider.mjs, installed by
//! scripts/services.sh), started per test on a free port with a test RSA
//! key. The happy path, the replayed `state`, the expired token and the
//! user without a role go through the provider's own login form over HTTP
//! (and in Chromium, where a viewer is refused an action and an admin
//! pauses and resumes a job); the tokens the provider cannot be made to
//! emit (wrong issuer, wrong audience, tampered signature, an unknown key)
//! are signed here with the provider's key material and checked against
//! the provider's own JWKS, and each also reaches `/oidc/callback` in the
//! provider's real token answer, altered in transit by a proxy in front of
//! it.

use crate::common;
use crate::console::Console;
use chrono::{Duration, Utc};
use msgx::config::ConsoleOidc;
use msgx::console::oidc::{ExtraClaims, Oidc};
use openidconnect::core::{CoreJwsSigningAlgorithm, CoreRsaPrivateSigningKey};
use openidconnect::{
    Audience, IdToken, IdTokenClaims, IssuerUrl, JsonWebKeyId, Nonce, StandardClaims,
    SubjectIdentifier,
};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const CLIENT_ID: &str = "msgx-console";
const CLIENT_SECRET: &str = "test-client-secret-0123456789";

/// The provider's users and their groups; `nora` has none.
const USERS: &str = r#"{"ada": {"groups": ["msgx-admins", "staff"]},
  "olga": {"groups": ["msgx-operators"]},
  "victor": {"groups": ["msgx-viewers"]},
  "nora": {"email": "nora@example.org"}}"#;

/// A running oidc-provider.
struct Provider {
    child: Child,
    /// Its standard output, kept open (a closed pipe would end it at its
    /// next line).
    _stdout: BufReader<std::process::ChildStdout>,
    port: u16,
    issuer: String,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn provider_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oidc-provider")
}

/// A fresh RSA key (PKCS#1 PEM, as `openidconnect` signs with it).
fn rsa_key(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let out = Command::new("openssl")
        .args(["genrsa", "-traditional", "-out"])
        .arg(&path)
        .arg("2048")
        .stderr(Stdio::null())
        .status()
        .expect("openssl runs");
    assert!(out.success(), "openssl genrsa");
    path
}

impl Provider {
    /// Starts the provider with `key` (kid `kid`) for a console at
    /// `console` (its base URL); `port` 0 = a free one.
    fn start(key: &Path, kid: &str, console: &str, port: u16, id_token_ttl: u32) -> Provider {
        Provider::start_as(key, kid, console, port, id_token_ttl, None)
    }

    /// [`Provider::start`] with the issuer URL `issuer` (a proxy in front of
    /// it) instead of its own address.
    fn start_as(
        key: &Path,
        kid: &str,
        console: &str,
        port: u16,
        id_token_ttl: u32,
        issuer: Option<&str>,
    ) -> Provider {
        let dir = provider_dir();
        assert!(
            dir.join("node_modules/oidc-provider").is_dir(),
            "oidc-provider is not installed: run scripts/services.sh"
        );
        let clients = serde_json::json!([{
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "redirect_uris": [format!("{console}/oidc/callback")],
            "post_logout_redirect_uris": [format!("{console}/login")],
        }]);
        let mut child = Command::new("node")
            .arg(dir.join("provider.mjs"))
            .current_dir(&dir)
            .env("OP_CLIENTS", clients.to_string())
            .env("OP_USERS", USERS)
            .env("OP_KEY_PEM", key)
            .env("OP_KID", kid)
            .env("OP_PORT", port.to_string())
            .env("OP_ID_TOKEN_TTL", id_token_ttl.to_string())
            .env("OP_ISSUER", issuer.unwrap_or_default())
            .stdout(Stdio::piped())
            // Its log beside its key, in the test's temporary directory.
            .stderr(
                std::fs::File::create(key.with_extension("log"))
                    .map(Stdio::from)
                    .unwrap_or(Stdio::null()),
            )
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        let mut stdout = BufReader::new(stdout);
        stdout
            .read_line(&mut line)
            .expect("the provider's first line");
        let port: u16 = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the provider did not start: {line:?}"));
        Provider {
            child,
            _stdout: stdout,
            port,
            issuer: issuer.map_or_else(|| format!("http://127.0.0.1:{port}"), str::to_string),
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn oidc_config(issuer: &str, console: &str, secret_file: &Path) -> ConsoleOidc {
    let text = format!(
        "issuer = \"{issuer}\"\nclient-id = \"{CLIENT_ID}\"\n\
         client-secret-file = \"{}\"\nredirect-uri = \"{console}/oidc/callback\"\n\
         clock-skew = \"60s\"\n[roles]\nadmin = [\"msgx-admins\"]\n\
         operator = [\"msgx-operators\"]\nviewer = [\"msgx-viewers\"]\n",
        secret_file.display()
    );
    toml::from_str(&text).expect("oidc config")
}

fn secret_file(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("client-secret");
    std::fs::write(&path, CLIENT_SECRET).expect("write secret");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path
}

/// A console with single sign-on (and its users file) and its provider.
struct Sso {
    console: Console,
    provider: Provider,
    dir: tempfile::TempDir,
}

async fn start(id_token_ttl: u32) -> Sso {
    let dir = tempfile::tempdir().expect("temp dir");
    start_in(dir, id_token_ttl, None).await
}

/// [`start`] in `dir` (its key is `k1.pem` there), the provider known by
/// the issuer URL `issuer` when given (a proxy in front of it).
async fn start_in(dir: tempfile::TempDir, id_token_ttl: u32, issuer: Option<&str>) -> Sso {
    let key = rsa_key(dir.path(), "k1.pem");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let provider = Provider::start_as(&key, "k1", &base, 0, id_token_ttl, issuer);
    let oidc = oidc_config(&provider.issuer, &base, &secret_file(dir.path()));
    let console = Console::start(|c| {
        c.msgx.console.listen = Some(format!("127.0.0.1:{port}"));
        c.msgx.console.oidc = Some(oidc);
    })
    .await;
    // The provider stamps its tokens with the real time; the console's
    // clock starts there (the tests move it on from it).
    console.clock.set(Utc::now());
    Sso {
        console,
        provider,
        dir,
    }
}

/// A client with a cookie jar of its own (names only; the provider's
/// cookies are few and distinct), no redirects followed.
struct Agent {
    http: openidconnect::reqwest::Client,
    cookies: BTreeMap<String, String>,
}

impl Agent {
    fn new() -> Agent {
        Agent {
            http: openidconnect::reqwest::ClientBuilder::new()
                .redirect(openidconnect::reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            cookies: BTreeMap::new(),
        }
    }

    async fn send(&mut self, method: &str, url: &str, form: Option<&[(&str, &str)]>) -> Hop {
        let cookie = self
            .cookies
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let mut req = if method == "POST" {
            self.http.post(url).form(&form.unwrap_or_default())
        } else {
            self.http.get(url)
        };
        if !cookie.is_empty() {
            req = req.header("cookie", cookie);
        }
        let r = req.send().await.expect("request");
        for v in r.headers().get_all("set-cookie") {
            let text = v.to_str().unwrap_or_default();
            if let Some((k, rest)) = text.split_once('=') {
                let value = rest.split(';').next().unwrap_or_default();
                self.cookies.insert(k.to_string(), value.to_string());
            }
        }
        let status = r.status().as_u16();
        let location = r
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok())
            .map(str::to_string);
        let body = r.text().await.unwrap_or_default();
        Hop {
            status,
            location,
            body,
        }
    }
}

#[derive(Debug)]
struct Hop {
    status: u16,
    location: Option<String>,
    body: String,
}

/// `location` made absolute against `base`.
fn absolute(base: &str, location: &str) -> String {
    if location.starts_with("http") {
        location.to_string()
    } else {
        format!("{base}{location}")
    }
}

/// Signs in as `user` through the provider's login form up to the
/// provider's redirect back to the console: the callback URL (not
/// followed).
async fn to_callback(agent: &mut Agent, sso: &Sso, user: &str) -> String {
    let console = format!("http://{}", sso.console.addr);
    let hop = agent.send("GET", &format!("{console}/login"), None).await;
    assert!(hop.body.contains("id=\"sso-login\""), "{hop:?}");
    assert!(hop.body.contains("id=\"login-form\""), "both ways: {hop:?}");
    let hop = agent
        .send("GET", &format!("{console}/oidc/login"), None)
        .await;
    assert_eq!(hop.status, 303, "{hop:?}");
    let auth = hop.location.expect("to the provider");
    for part in [
        "code_challenge=",
        "code_challenge_method=S256",
        "state=",
        "nonce=",
        "response_type=code",
    ] {
        assert!(auth.contains(part), "{part}: {auth}");
    }
    let mut url = auth;
    // The provider's own hops: to its login form, the form posted, back
    // through /auth to the console.
    for _ in 0..8 {
        let hop = agent.send("GET", &url, None).await;
        if let Some(l) = &hop.location {
            let next = absolute(&sso.provider.issuer, l);
            if next.starts_with(&console) {
                return next;
            }
            url = next;
            continue;
        }
        assert_eq!(hop.status, 200, "{url}: {hop:?}");
        let action = hop
            .body
            .split("action=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or_else(|| panic!("a login form at {url}: {}", hop.body))
            .to_string();
        let posted = agent
            .send(
                "POST",
                &absolute(&sso.provider.issuer, &action),
                Some(&[("prompt", "login"), ("login", user), ("password", "any")]),
            )
            .await;
        url = absolute(
            &sso.provider.issuer,
            &posted
                .location
                .clone()
                .unwrap_or_else(|| panic!("the login form answers a redirect: {posted:?}")),
        );
    }
    panic!("the provider never sent the browser back");
}

/// The session cookie a callback answer sets.
fn session_of(hop: &Hop, agent: &Agent) -> Option<String> {
    (hop.status == 200)
        .then(|| agent.cookies.get("msgx_console").cloned())
        .flatten()
        .filter(|v| !v.is_empty())
}

/// The full sign-in over HTTP: code flow with PKCE through the provider's
/// login form; the admin sees the overview as `ada`, role admin; the ID
/// token's hint makes the logout end the provider's session too; the same
/// `state` replayed (the callback URL again, same browser) is refused.
#[tokio::test]
async fn a_user_signs_in_through_the_provider_and_a_replayed_state_is_refused() {
    let sso = start(3600).await;
    let console = format!("http://{}", sso.console.addr);
    let mut agent = Agent::new();
    let callback = to_callback(&mut agent, &sso, "ada").await;
    assert!(
        callback.contains("state=") && callback.contains("code="),
        "{callback}"
    );
    let hop = agent.send("GET", &callback, None).await;
    let session = session_of(&hop, &agent).unwrap_or_else(|| panic!("signed in: {hop:?}"));
    let page = sso.console.get("/", Some(&session)).await;
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        page.body.contains("id=\"current-user\">ada<"),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("id=\"current-role\" class=\"role\">admin<"),
        "{}",
        page.body
    );
    let (method, role): (String, Option<String>) =
        sqlx::query_as("SELECT auth_method, role FROM console_session")
            .fetch_one(&sso.console.db.pool)
            .await
            .expect("one session");
    assert_eq!((method.as_str(), role.as_deref()), ("oidc", Some("admin")));

    // The same state again: the sign-in was taken by the first callback.
    let again = agent.send("GET", &callback, None).await;
    assert_eq!(again.status, 403, "{again:?}");
    assert!(again.body.contains("already used"), "{}", again.body);

    // Logout: the provider's end_session_endpoint with the ID token as hint.
    let csrf = crate::console::hidden(&page.body, "csrf").expect("csrf");
    let out = sso
        .console
        .post("/logout", Some(&session), &[("csrf", &csrf)])
        .await;
    assert_eq!(out.status, 303, "{out:?}");
    let to = out.header("location").unwrap_or_default();
    assert!(
        to.starts_with(&format!("{}/session/end?", sso.provider.issuer))
            && to.contains("id_token_hint=")
            && to.contains(&format!(
                "post_logout_redirect_uri={}",
                urlencode(&format!("{console}/login"))
            )),
        "{to}"
    );
    let gone = sso.console.get("/", Some(&session)).await;
    assert_eq!(gone.status, 303, "the session ended: {gone:?}");
}

fn urlencode(s: &str) -> String {
    serde_urlencoded::to_string([("x", s)])
        .expect("encode")
        .trim_start_matches("x=")
        .to_string()
}

/// A callback from another browser (no sign-in cookie) is refused, and
/// its state is spent too.
#[tokio::test]
async fn a_callback_in_another_browser_is_refused() {
    let sso = start(3600).await;
    let mut agent = Agent::new();
    let callback = to_callback(&mut agent, &sso, "olga").await;
    let mut stranger = Agent::new();
    let hop = stranger.send("GET", &callback, None).await;
    assert_eq!(hop.status, 403, "{hop:?}");
    assert!(hop.body.contains("another browser"), "{}", hop.body);
    let hop = agent.send("GET", &callback, None).await;
    assert_eq!(hop.status, 403, "spent: {hop:?}");
}

/// A user the provider knows but whose groups map to no role: signed in at
/// the provider, no access at the console, a page that says so.
#[tokio::test]
async fn a_user_without_a_role_claim_gets_no_access() {
    let sso = start(3600).await;
    let mut agent = Agent::new();
    let callback = to_callback(&mut agent, &sso, "nora").await;
    let hop = agent.send("GET", &callback, None).await;
    assert_eq!(hop.status, 403, "{hop:?}");
    assert!(
        hop.body.contains("no access: you signed in as nora"),
        "{}",
        hop.body
    );
    assert!(
        agent
            .cookies
            .get("msgx_console")
            .is_none_or(String::is_empty)
    );
    let sessions: i64 = sqlx::query_scalar("SELECT count(*) FROM console_session")
        .fetch_one(&sso.console.db.pool)
        .await
        .expect("count");
    assert_eq!(sessions, 0);
}

/// The provider's ID token (60 s lifetime) reaches the console when the
/// console's clock is past its expiry and the 60 s skew: refused as
/// expired. The same with the clock within the skew is accepted.
#[tokio::test]
async fn an_expired_id_token_from_the_provider_is_refused() {
    let sso = start(60).await;
    sso.console
        .clock
        .set(Utc::now() + Duration::seconds(60 + 61));
    let mut agent = Agent::new();
    let callback = to_callback(&mut agent, &sso, "olga").await;
    let hop = agent.send("GET", &callback, None).await;
    assert_eq!(hop.status, 403, "{hop:?}");
    assert!(hop.body.contains("expired"), "{}", hop.body);

    sso.console
        .clock
        .set(Utc::now() + Duration::seconds(60 + 30));
    let mut agent = Agent::new();
    let callback = to_callback(&mut agent, &sso, "olga").await;
    let hop = agent.send("GET", &callback, None).await;
    assert!(
        session_of(&hop, &agent).is_some(),
        "within the skew: {hop:?}"
    );
}

/// What a token signed here says.
struct Claims<'a> {
    issuer: &'a str,
    audience: &'a str,
    expires_in: Duration,
    nonce: &'a str,
}

fn sign(key: &Path, kid: &str, c: &Claims<'_>) -> String {
    let pem = std::fs::read_to_string(key).expect("key");
    let signer = CoreRsaPrivateSigningKey::from_pem(&pem, Some(JsonWebKeyId::new(kid.into())))
        .expect("an RSA key");
    let now = Utc::now();
    let mut extra = ExtraClaims::default();
    extra
        .other
        .insert("groups".into(), serde_json::json!(["msgx-operators"]));
    let claims = IdTokenClaims::new(
        IssuerUrl::new(c.issuer.into()).expect("issuer"),
        vec![Audience::new(c.audience.into())],
        now + c.expires_in,
        now - Duration::seconds(5),
        StandardClaims::new(SubjectIdentifier::new("olga".into())),
        extra,
    )
    .set_nonce(Some(Nonce::new(c.nonce.into())));
    let token: IdToken<_, openidconnect::core::CoreGenderClaim, _, _> = IdToken::<
        ExtraClaims,
        openidconnect::core::CoreGenderClaim,
        openidconnect::core::CoreJweContentEncryptionAlgorithm,
        CoreJwsSigningAlgorithm,
    >::new(
        claims,
        &signer,
        CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
        None,
        None,
    )
    .expect("signed");
    token.to_string()
}

/// Tokens the provider cannot be made to emit, signed here with its own
/// key and checked against its JWKS: a good one passes (the control), a
/// wrong issuer, a wrong audience, an expired one, a tampered signature, a
/// wrong nonce and one signed by a key the provider does not serve are
/// refused; after the provider rotates to a new key (restarted on the same
/// port), a token of the new key passes: the unknown `kid` made the
/// console fetch the JWKS again.
#[tokio::test]
async fn bad_id_tokens_are_refused_and_a_rotated_key_is_fetched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (k1, k2) = (rsa_key(dir.path(), "k1.pem"), rsa_key(dir.path(), "k2.pem"));
    let console = "http://127.0.0.1:9";
    let provider = Provider::start(&k1, "k1", console, 0, 3600);
    let config = oidc_config(&provider.issuer, console, &secret_file(dir.path()));
    let oidc = Oidc::new(&config, Some(CLIENT_SECRET.into())).expect("oidc");
    let issuer = provider.issuer.clone();
    let good = Claims {
        issuer: &issuer,
        audience: CLIENT_ID,
        expires_in: Duration::minutes(5),
        nonce: "n-1",
    };
    let check = |raw: String| {
        let oidc = &oidc;
        async move {
            oidc.verify_id_token(&raw, "n-1", Utc::now())
                .await
                .map(|i| (i.user, i.role.map(|r| r.as_str())))
                .map_err(|e| e.to_string())
        }
    };
    assert_eq!(
        check(sign(&k1, "k1", &good)).await,
        Ok(("olga".to_string(), Some("operator")))
    );
    let refused = [
        (
            "wrong issuer",
            sign(
                &k1,
                "k1",
                &Claims {
                    issuer: "http://127.0.0.1:1",
                    ..good
                },
            ),
            "issuer",
        ),
        (
            "wrong audience",
            sign(
                &k1,
                "k1",
                &Claims {
                    audience: "another-client",
                    ..good
                },
            ),
            "audience",
        ),
        (
            "expired",
            sign(
                &k1,
                "k1",
                &Claims {
                    expires_in: Duration::seconds(-61),
                    ..good
                },
            ),
            "expired",
        ),
        (
            "wrong nonce",
            sign(
                &k1,
                "k1",
                &Claims {
                    nonce: "n-2",
                    ..good
                },
            ),
            "nonce",
        ),
        ("unknown key", sign(&k2, "k2", &good), "key"),
    ];
    for (what, raw, expected) in refused {
        let r = check(raw).await;
        assert!(
            r.as_ref()
                .is_err_and(|e| e.to_ascii_lowercase().contains(expected)),
            "{what}: {r:?}"
        );
    }
    // Within the skew: expired 30 s ago, tolerated 60 s.
    let late = sign(
        &k1,
        "k1",
        &Claims {
            expires_in: Duration::seconds(-30),
            ..good
        },
    );
    assert!(check(late).await.is_ok(), "within the skew");
    // Tampered: the payload's group changed, the signature kept.
    let raw = sign(&k1, "k1", &good);
    let parts: Vec<&str> = raw.split('.').collect();
    let payload = openidconnect_b64_decode(parts[1]);
    let forged = payload.replace("msgx-operators", "msgx-admins");
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        openidconnect_b64_encode(&forged),
        parts[2]
    );
    let r = check(tampered).await;
    assert!(
        r.as_ref().is_err_and(|e| e.contains("ignature")),
        "tampered: {r:?}"
    );

    // Key rotation: the provider now signs with k2 only, on the same port.
    let port = provider.port;
    drop(provider);
    let _rotated = Provider::start(&k2, "k2", console, port, 3600);
    assert_eq!(
        check(sign(&k2, "k2", &good)).await,
        Ok(("olga".to_string(), Some("operator"))),
        "the new key is fetched"
    );
    assert!(
        check(sign(&k1, "k1", &good)).await.is_err(),
        "the old key is gone"
    );
}

fn openidconnect_b64_decode(part: &str) -> String {
    let bytes = base64_url(part);
    String::from_utf8(bytes).expect("JSON payload")
}

/// Unpadded base64url, decoded (a test's few lines; the console itself
/// never parses a token by hand).
fn base64_url(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        _ => 63,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes() {
        acc = (acc << 6) | u32::from(value(c));
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

fn openidconnect_b64_encode(bytes: impl AsRef<[u8]>) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &b in bytes.as_ref() {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(ALPHABET[((acc >> bits) & 63) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((acc << (6 - bits)) & 63) as usize] as char);
    }
    out
}

/// What the proxy in front of the provider does to the ID token in the
/// token endpoint's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alter {
    /// Passes it as the provider made it (the control).
    Keep,
    /// `iss` changed, re-signed with the provider's own key.
    Issuer,
    /// `aud` changed, re-signed with the provider's own key.
    Audience,
    /// The groups changed under the provider's signature.
    Signature,
    /// Re-signed, unchanged, by a key the provider does not serve (kid `k2`).
    UnknownKey,
}

/// The proxy's state: where the provider is, what to do, the keys.
#[derive(Clone)]
struct Front {
    upstream: u16,
    http: openidconnect::reqwest::Client,
    alter: std::sync::Arc<std::sync::Mutex<Alter>>,
    provider_key: PathBuf,
    other_key: PathBuf,
}

/// A loopback proxy in front of the provider (its issuer URL is the
/// proxy's): every request and answer passes as it is, except the
/// `id_token` of the token endpoint's answer, altered as [`Alter`] says.
/// The provider is real; only the token in transit changes.
async fn serve_front(listener: tokio::net::TcpListener, front: Front) {
    let app = axum::Router::new().fallback(forward).with_state(front);
    let _ = axum::serve(listener, app).await;
}

async fn forward(
    axum::extract::State(f): axum::extract::State<Front>,
    req: axum::extract::Request,
) -> axum::response::Response {
    use axum::http::header;
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .expect("the request body");
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut out = f.http.request(
        parts.method.clone(),
        format!("http://127.0.0.1:{}{path}", f.upstream),
    );
    for (k, v) in &parts.headers {
        out = out.header(k, v);
    }
    let answer = out.body(body).send().await.expect("the provider answers");
    let status = answer.status();
    let mut headers = answer.headers().clone();
    let mut bytes = answer.bytes().await.expect("the answer body").to_vec();
    if parts.uri.path() == "/token" && status.is_success() {
        let mut json: serde_json::Value = serde_json::from_slice(&bytes).expect("token JSON");
        let alter = *f.alter.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(token) = json["id_token"].as_str() {
            json["id_token"] = altered(token, alter, &f).into();
        }
        bytes = serde_json::to_vec(&json).expect("JSON");
    }
    for h in [
        header::CONTENT_LENGTH,
        header::TRANSFER_ENCODING,
        header::CONNECTION,
    ] {
        headers.remove(h);
    }
    let mut r = axum::response::Response::new(axum::body::Body::from(bytes));
    *r.status_mut() = status;
    *r.headers_mut() = headers;
    r
}

/// The provider's `token` as `alter` changes it.
fn altered(token: &str, alter: Alter, f: &Front) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    let json = |part: &str| -> serde_json::Value {
        serde_json::from_str(&openidconnect_b64_decode(part)).expect("a JSON part")
    };
    let (header, mut claims) = (json(parts[0]), json(parts[1]));
    match alter {
        Alter::Keep => token.to_string(),
        Alter::Issuer => {
            claims["iss"] = "http://127.0.0.1:1".into();
            resign(header, &claims, &f.provider_key, "k1")
        }
        Alter::Audience => {
            claims["aud"] = "another-client".into();
            resign(header, &claims, &f.provider_key, "k1")
        }
        Alter::Signature => {
            claims["groups"] = serde_json::json!(["msgx-admins"]);
            let payload = openidconnect_b64_encode(claims.to_string());
            format!("{}.{payload}.{}", parts[0], parts[2])
        }
        Alter::UnknownKey => resign(header, &claims, &f.other_key, "k2"),
    }
}

/// `claims` signed RS256 by `key`, announced as `kid`.
fn resign(
    mut header: serde_json::Value,
    claims: &serde_json::Value,
    key: &Path,
    kid: &str,
) -> String {
    use openidconnect::PrivateSigningKey;
    header["kid"] = kid.into();
    let input = format!(
        "{}.{}",
        openidconnect_b64_encode(header.to_string()),
        openidconnect_b64_encode(claims.to_string())
    );
    let pem = std::fs::read_to_string(key).expect("key");
    let signer = CoreRsaPrivateSigningKey::from_pem(&pem, Some(JsonWebKeyId::new(kid.into())))
        .expect("an RSA key");
    let signature = signer
        .sign(
            &CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
            input.as_bytes(),
        )
        .expect("signed");
    format!("{input}.{}", openidconnect_b64_encode(signature))
}

/// Bad ID tokens arriving the way a real one does: the provider's token
/// answer to the console's code exchange, altered in transit by a proxy in
/// front of the real provider. A wrong issuer, a wrong audience, a tampered
/// signature and an unknown key are each refused at `/oidc/callback` with
/// 403, no session and a WARN line giving the reason; the token passed as
/// the provider made it signs in (the control: the proxy is transparent).
#[tokio::test]
async fn bad_id_tokens_through_the_callback_are_refused_with_no_session_and_a_logged_reason() {
    let dir = tempfile::tempdir().expect("temp dir");
    let other_key = rsa_key(dir.path(), "k2.pem");
    let provider_key = dir.path().join("k1.pem");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the proxy");
    let front_url = format!("http://{}", listener.local_addr().expect("address"));
    let sso = start_in(dir, 3600, Some(&front_url)).await;
    let alter = std::sync::Arc::new(std::sync::Mutex::new(Alter::Keep));
    let proxy = tokio::spawn(serve_front(
        listener,
        Front {
            upstream: sso.provider.port,
            http: openidconnect::reqwest::ClientBuilder::new()
                .redirect(openidconnect::reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            alter: alter.clone(),
            provider_key,
            other_key,
        },
    ));
    let sessions = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM console_session")
            .fetch_one(&sso.console.db.pool)
            .await
            .expect("count")
    };
    let (logs, _guard) = common::capture_logs();
    let cases = [
        (Alter::Issuer, "issuer"),
        (Alter::Audience, "audience"),
        (Alter::Signature, "signature"),
        (Alter::UnknownKey, "key"),
    ];
    for (case, reason) in cases {
        *alter.lock().unwrap_or_else(|e| e.into_inner()) = case;
        let mut agent = Agent::new();
        let callback = to_callback(&mut agent, &sso, "olga").await;
        let hop = agent.send("GET", &callback, None).await;
        assert_eq!(hop.status, 403, "{case:?}: {hop:?}");
        assert!(session_of(&hop, &agent).is_none(), "{case:?}: no session");
        assert!(
            hop.body.to_ascii_lowercase().contains(reason),
            "{case:?}: the page says why: {}",
            hop.body
        );
        let refused: Vec<String> = logs
            .text()
            .lines()
            .filter(|l| l.contains("Console: single sign-on refused"))
            .map(str::to_string)
            .collect();
        assert!(
            refused
                .last()
                .is_some_and(|l| l.to_ascii_lowercase().contains(reason)),
            "{case:?}: a WARN line with the reason: {refused:?}"
        );
        assert_eq!(sessions().await, 0, "{case:?}");
    }
    *alter.lock().unwrap_or_else(|e| e.into_inner()) = Alter::Keep;
    let mut agent = Agent::new();
    let callback = to_callback(&mut agent, &sso, "olga").await;
    let hop = agent.send("GET", &callback, None).await;
    assert!(session_of(&hop, &agent).is_some(), "the control: {hop:?}");
    assert_eq!(sessions().await, 1);
    proxy.abort();
}

/// In Chromium, from the console's login page: the single sign-on button,
/// the provider's own login form as `user`, back to the console's Overview.
async fn sign_in_in_browser(b: &common::browser::Browser, base: &str, user: &str) {
    b.goto(&format!("{base}/login")).await;
    b.click("sso-login").await;
    let login = b.wait_for("input[name=login]").await;
    login.send_keys(user).await.expect("type the login");
    let password = b.wait_for("input[name=password]").await;
    password.send_keys("any").await.expect("type the password");
    b.wait_for("button[type=submit]")
        .await
        .click()
        .await
        .expect("sign in");
    b.wait_for("#page-overview").await;
    assert_eq!(b.text_of("#current-user").await, user);
}

/// In Chromium: the login page's single sign-on button, the provider's own
/// login form, back to the console's overview as the operator `olga`.
#[tokio::test]
async fn in_a_browser_a_user_signs_in_through_the_providers_login_page() {
    let Some(b) = common::browser::Browser::start().await else {
        return;
    };
    let sso = start(3600).await;
    let base = format!("http://{}", sso.console.addr);
    sign_in_in_browser(&b, &base, "olga").await;
    assert_eq!(b.text_of("#current-role").await, "operator");
    let _ = &sso.dir;
}

/// The console signed off in a browser, through the real provider's login
/// page: the viewer `victor` (group msgx-viewers) reads every page a viewer
/// may read, is offered no action, and an operator action posted anyway
/// answers the 403 page naming the missing right; then, in a fresh browser
/// session, the admin `ada` pauses a job with a reason on the Jobs page and
/// resumes it.
#[tokio::test]
async fn in_a_browser_a_viewer_is_refused_an_action_and_an_admin_pauses_and_resumes_a_job() {
    let Some(b) = common::browser::Browser::start().await else {
        return;
    };
    let sso = start(3600).await;
    let base = format!("http://{}", sso.console.addr);
    sign_in_in_browser(&b, &base, "victor").await;
    assert_eq!(b.text_of("#current-role").await, "viewer");
    for (path, id) in crate::console::READ_PAGES {
        b.goto(&format!("{base}{path}")).await;
        b.wait_for(&format!("#{id}")).await;
    }
    // The Jobs page offers a viewer neither run nor pause.
    let none = std::time::Duration::from_millis(300);
    for form in ["#pause-retention", "#run-now-retention", "#request-form"] {
        assert!(
            b.wait_for_within(form, none).await.is_none(),
            "a viewer is offered no {form}"
        );
    }
    // "Run now" (an operator's right) posted anyway, with the session's
    // own CSRF token: the 403 page names the right.
    let csrf = b.csrf().await;
    b.post_form(
        "/actions/job-run",
        &[
            ("csrf", &csrf),
            ("step", "apply"),
            ("job", "retention"),
            ("reason", "a viewer tries"),
        ],
    )
    .await;
    assert_eq!(b.text_of("#missing-right").await, "run-job");
    assert_eq!(b.text_of("#forbidden-role").await, "viewer");
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM job_run WHERE job = 'retention'")
        .fetch_one(&sso.console.db.pool)
        .await
        .expect("count");
    assert_eq!(runs, 0, "refused: nothing ran");

    // A new browser session (the console's and the provider's cookies
    // gone: both are on 127.0.0.1): the admin.
    b.clear_cookies().await;
    sign_in_in_browser(&b, &base, "ada").await;
    assert_eq!(b.text_of("#current-role").await, "admin");
    for (form, reason, done) in [
        (
            "pause-retention",
            "incident 42: the archive disk is full",
            "retention paused",
        ),
        ("resume-retention", "disk replaced", "retention resumed"),
    ] {
        b.goto(&format!("{base}/jobs")).await;
        b.click(&format!("{form}-submit")).await;
        b.wait_for("#confirm-form").await;
        b.fill("confirm-reason", reason).await;
        b.click("confirm-submit").await;
        let result = b.text_of("#result").await;
        assert!(result.contains(done), "{form}: {result}");
        if form.starts_with("pause") {
            let (by, why): (String, String) =
                sqlx::query_as("SELECT paused_by, reason FROM job_pause WHERE job = 'retention'")
                    .fetch_one(&sso.console.db.pool)
                    .await
                    .expect("the pause is persisted");
            assert_eq!((by.as_str(), why.as_str()), ("ada", reason));
            b.goto(&format!("{base}/jobs")).await;
            assert!(
                b.text_of("#job-retention").await.contains("paused by ada"),
                "the Jobs page shows the pause"
            );
        }
    }
    let paused: i64 = sqlx::query_scalar("SELECT count(*) FROM job_pause")
        .fetch_one(&sso.console.db.pool)
        .await
        .expect("count");
    assert_eq!(paused, 0, "resumed");
    let audited: Vec<(String, String)> = sqlx::query_as(
        "SELECT action, actor FROM operator_action WHERE action IN ('JOB_PAUSE', 'JOB_RESUME') \
         ORDER BY id",
    )
    .fetch_all(&sso.console.db.pool)
    .await
    .expect("audit rows");
    assert_eq!(
        audited,
        [
            ("JOB_PAUSE".to_string(), "ada".to_string()),
            ("JOB_RESUME".to_string(), "ada".to_string())
        ]
    );
    let _ = &sso.dir;
}
