//! `[msgx.console.rights]` and `[msgx.console.oidc]`: the console's
//! per-action rights and its OpenID Connect sign-in (docs/console.md
//! "Roles and rights", "Single sign-on (OIDC)"). The rule that applies the
//! rights lives in `console::rights`; here only their names and the keys.

use super::Dur;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One right of the console: an action class, or `bulk` (an action on more
/// than `console::rights::BULK_OVER` items, needed beside the action's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Right {
    Replay,
    Skip,
    Resend,
    Discard,
    Reopen,
    Reconcile,
    // Plain comments, not doc comments: schemars would turn documented
    // variants into a `oneOf` the key table cannot show as a list of names.
    // request: send an upstream request (RQFD/RQRD); run-job: run a job now;
    // bulk: an action on more than 100 items; pause-job: pause or resume a
    // job; republish: re-send flights' records; revoke-session: end other
    // users' sessions.
    Request,
    RunJob,
    Bulk,
    PauseJob,
    Republish,
    RevokeSession,
}

impl Right {
    pub const ALL: [Right; 12] = [
        Right::Replay,
        Right::Skip,
        Right::Resend,
        Right::Discard,
        Right::Reopen,
        Right::Reconcile,
        Right::Request,
        Right::RunJob,
        Right::Bulk,
        Right::PauseJob,
        Right::Republish,
        Right::RevokeSession,
    ];

    /// The name in the config and on the 403 page.
    pub const fn as_str(self) -> &'static str {
        match self {
            Right::Replay => "replay",
            Right::Skip => "skip",
            Right::Resend => "resend",
            Right::Discard => "discard",
            Right::Reopen => "reopen",
            Right::Reconcile => "reconcile",
            Right::Request => "request",
            Right::RunJob => "run-job",
            Right::Bulk => "bulk",
            Right::PauseJob => "pause-job",
            Right::Republish => "republish",
            Right::RevokeSession => "revoke-session",
        }
    }

    /// The right named `name`, if any.
    pub fn parse(name: &str) -> Option<Right> {
        Right::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

impl std::fmt::Display for Right {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[msgx.console.rights]`: a list given for a role replaces that role's
/// built-in rights (Oban's `resolve_access` shape), so it can tighten or
/// widen the role; an absent list keeps the built-in one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ConsoleRights {
    /// The viewer role's rights; built in: none (every page, no action).
    pub viewer: Option<Vec<Right>>,
    /// The operator role's rights; built in: replay, skip, resend, discard,
    /// reopen, reconcile, request, run-job.
    pub operator: Option<Vec<Right>>,
    /// The admin role's rights; built in: every right.
    pub admin: Option<Vec<Right>>,
}

/// `[msgx.console.oidc]`: sign-in through an OpenID Provider (authorization
/// code flow with PKCE). Unset = off; the users file may be on beside it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct ConsoleOidc {
    /// The provider's issuer URL; its discovery document is
    /// `<issuer>/.well-known/openid-configuration`, and every ID token's `iss`
    /// must equal it.
    pub issuer: String,
    /// The client id registered at the provider (every ID token's `aud` holds it).
    pub client_id: String,
    /// File holding the client secret (mode 0600); env `MSGX_CONSOLE_OIDC_CLIENT_SECRET`
    /// wins. Neither: a public client (PKCE only).
    pub client_secret_file: Option<PathBuf>,
    /// The console's callback as registered at the provider, ending in
    /// `/oidc/callback`, e.g. `https://console.example.org/oidc/callback`.
    pub redirect_uri: String,
    /// Scopes asked for besides `openid` (default `["profile", "email"]`).
    pub scopes: Vec<String>,
    /// The ID-token claim holding the user's groups or roles, a string or a
    /// list of strings (default `groups`).
    pub role_claim: String,
    /// Claim values per role; a user gets the highest role one of whose values
    /// the claim holds, and no access when none matches.
    pub roles: BTreeMap<String, Vec<String>>,
    /// The ID-token claim shown and recorded as the user's name (default
    /// `preferred_username`; `sub` when absent).
    pub user_claim: String,
    /// Clock skew tolerated on the ID token's `exp` and `iat` (default `60s`).
    pub clock_skew: Dur,
    /// The single sign-on button's text on the login page.
    pub label: String,
}

impl Default for ConsoleOidc {
    /// Unusable as it is (no issuer, client or redirect URI: [`oidc_issues`]
    /// names them); the defaults of the optional keys.
    fn default() -> Self {
        ConsoleOidc {
            issuer: String::new(),
            client_id: String::new(),
            client_secret_file: None,
            redirect_uri: String::new(),
            scopes: default_scopes(),
            role_claim: default_role_claim(),
            roles: BTreeMap::new(),
            user_claim: default_user_claim(),
            clock_skew: default_skew(),
            label: default_label(),
        }
    }
}

fn default_scopes() -> Vec<String> {
    vec!["profile".into(), "email".into()]
}
fn default_role_claim() -> String {
    "groups".into()
}
fn default_user_claim() -> String {
    "preferred_username".into()
}
fn default_skew() -> Dur {
    Dur::secs(60)
}
fn default_label() -> String {
    "Sign in with single sign-on".into()
}

/// The console's OIDC callback path (`redirect-uri` ends in it).
pub const OIDC_CALLBACK_PATH: &str = "/oidc/callback";

/// What makes `[msgx.console.oidc]` unusable: an issuer that is not an
/// `https://` URL (plain `http://` only on loopback, for tests), an empty
/// client id, a redirect URI not ending in [`OIDC_CALLBACK_PATH`], a role
/// name that is none, or a mapping that gives nobody a role.
pub fn oidc_issues(o: &ConsoleOidc) -> Vec<super::ConfigIssue> {
    let mut out = Vec::new();
    let mut fail = |key: &str, rule: String| {
        out.push(super::ConfigIssue {
            key: format!("msgx.console.oidc.{key}"),
            rule,
        })
    };
    let loopback = ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"];
    if !o.issuer.starts_with("https://") && !loopback.iter().any(|l| o.issuer.starts_with(l)) {
        fail(
            "issuer",
            format!(
                "{:?} must be an https:// URL (http:// only on loopback)",
                o.issuer
            ),
        );
    }
    if o.client_id.trim().is_empty() {
        fail("client-id", "must not be empty".into());
    }
    if !o.redirect_uri.ends_with(OIDC_CALLBACK_PATH) || !o.redirect_uri.contains("://") {
        fail(
            "redirect-uri",
            format!(
                "{:?} must be the console's absolute URL ending in {OIDC_CALLBACK_PATH}",
                o.redirect_uri
            ),
        );
    }
    for name in o.roles.keys() {
        if !ROLE_NAMES.contains(&name.as_str()) {
            fail(
                "roles",
                format!("{name:?} is no role (viewer, operator, admin)"),
            );
        }
    }
    if o.roles.values().all(Vec::is_empty) {
        fail(
            "roles",
            "maps no claim value to a role: nobody could sign in".into(),
        );
    }
    if o.clock_skew.std().is_zero() {
        fail(
            "clock-skew",
            "must be more than 0: the provider's and the console's clocks drift (60s is usual)"
                .into(),
        );
    }
    if o.role_claim.trim().is_empty() {
        fail("role-claim", "must not be empty".into());
    }
    out
}

/// The environment variable holding the OIDC client secret (wins over
/// `msgx.console.oidc.client-secret-file`).
pub const OIDC_CLIENT_SECRET_ENV: &str = "MSGX_CONSOLE_OIDC_CLIENT_SECRET";

/// The role names `[msgx.console.oidc.roles]` and the users file accept.
pub const ROLE_NAMES: [&str; 3] = ["viewer", "operator", "admin"];
