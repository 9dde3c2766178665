//! What every console handler shares: the state and who is asking.

use super::access::{LogLimiter, LoginLimiter, Role, Users};
use super::oidc::Oidc;
use super::rights::{self, Granted, MissingRight, Rights};
use crate::clock::SharedClock;
use crate::config::Config;
use crate::config::Right;
use crate::store::mailbox::Mailbox;
use sqlx::PgPool;
use std::sync::Arc;

/// What the handlers share.
#[derive(Clone)]
pub struct ConsoleState {
    pub pg: PgPool,
    pub mailbox: Mailbox,
    pub clock: SharedClock,
    pub config: Arc<Config>,
    /// `None`: no users file (loopback only): anonymous read-only access.
    pub users: Option<Arc<Users>>,
    pub limiter: Arc<LoginLimiter>,
    /// Failed-login WARN lines per client address.
    pub login_log: Arc<LogLimiter>,
    /// The console terminates TLS itself (cookies are `Secure`).
    pub tls: bool,
    /// Host names the console answers to, lower case, without port
    /// (`msgx.console.allowed-hosts`, else the listen address and localhost).
    pub allowed_hosts: Arc<Vec<String>>,
    /// "Run now" on the Jobs page; `None` = not offered.
    pub launcher: Option<Arc<dyn JobLauncher>>,
    /// Each role's rights (`msgx.console.rights`).
    pub rights: Rights,
    /// OpenID Connect sign-in; `None` = off.
    pub oidc: Option<Arc<Oidc>>,
    /// The live view's change source and open streams.
    pub live: super::live::Live,
}

/// Runs a job once for the console's "run now". The composition root
/// supplies it: the job runner lives in the scheduler, above the console.
#[async_trait::async_trait]
pub trait JobLauncher: Send + Sync {
    /// One run of `job` exactly as `msgx run <job>` does it (manifest
    /// bounds, the same locks); the run's summary, or why it did not run.
    async fn run_now(&self, job: &str) -> Result<String, String>;
}

/// How the request reached the console, resolved once per request by the
/// outermost layer: over HTTPS (the console's own TLS, or a trusted proxy's
/// `X-Forwarded-Proto: https`). Decides the cookies' `Secure` flag and
/// `__Host-` prefix.
#[derive(Debug, Clone, Copy)]
pub struct Transport {
    pub https: bool,
}

/// Who is asking, resolved once per request.
#[derive(Debug, Clone)]
pub enum Principal {
    /// No users file: a loopback visitor, read-only.
    Anonymous,
    /// Logged in (the form or single sign-on); the CSRF token of the session.
    Session {
        user: String,
        role: Role,
        granted: Granted,
        csrf: String,
    },
    /// A bearer token (scripts): no cookie, so no CSRF token needed.
    Token {
        name: String,
        role: Role,
        granted: Granted,
    },
}

impl Principal {
    /// The name recorded as the actor of an action.
    pub fn name(&self) -> &str {
        match self {
            Principal::Anonymous => "anonymous",
            Principal::Session { user, .. } => user,
            Principal::Token { name, .. } => name,
        }
    }
    pub fn role(&self) -> Role {
        match self {
            Principal::Anonymous => Role::Viewer,
            Principal::Session { role, .. } | Principal::Token { role, .. } => *role,
        }
    }
    /// The rights of the principal's role (none for an anonymous viewer).
    pub fn granted(&self) -> Granted {
        match self {
            Principal::Anonymous => Granted::NONE,
            Principal::Session { granted, .. } | Principal::Token { granted, .. } => *granted,
        }
    }
    /// [`rights::may`] for this principal: `right` on `count` items.
    pub fn may(&self, right: Right, count: i64) -> Result<(), MissingRight> {
        rights::may(self.granted(), self.role(), right, count)
    }
    /// The session's CSRF token (empty for others: they render no forms
    /// that need one, or need none).
    pub fn csrf(&self) -> &str {
        match self {
            Principal::Session { csrf, .. } => csrf,
            _ => "",
        }
    }
}
