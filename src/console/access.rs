//! Who may use the console (docs/console.md "Users
//! file"): users with argon2 password hashes and bearer tokens, each with a
//! role, read from `msgx.console.users-file`; and the login rate limit.
//!
//! Passwords are low-entropy, so they are stored as argon2id hashes (slow
//! by design). Tokens are 32+ random bytes: their SHA-256 is enough (no
//! guessing is feasible) and is checked on every scripted request without
//! argon2's cost.

use crate::http::client::{FailureLimiter, TRACKED_CLIENTS};
use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use subtle::ConstantTimeEq;

/// What a principal may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Every page, no action, no secret.
    Viewer,
    /// Every page and the everyday actions (docs/console.md "Roles and rights").
    Operator,
    /// Everything: bulk actions, job pause, republish, session revocation.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }

    /// The role named `name` (`viewer`, `operator`, `admin`).
    pub fn parse(name: &str) -> Option<Role> {
        [Role::Viewer, Role::Operator, Role::Admin]
            .into_iter()
            .find(|r| r.as_str() == name)
    }
}

/// Why the users file cannot be used (the console does not start).
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("{key} {path}: {source}")]
    Read {
        key: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{key} {path}: {message}")]
    Parse {
        key: &'static str,
        path: PathBuf,
        message: String,
    },
    #[error(
        "{key} {path}: mode {mode:04o} lets the group or others read or write \
         it (password hashes and token hashes): chmod 600 it, owned by the user msgx runs as"
    )]
    Mode {
        key: &'static str,
        path: PathBuf,
        mode: u32,
    },
    #[error("{key} {path}: {what} {name:?}: {problem}")]
    Entry {
        key: &'static str,
        path: PathBuf,
        what: &'static str,
        name: String,
        problem: String,
    },
    #[error("cannot hash the password: {0}")]
    Hash(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    user: Vec<UserEntry>,
    #[serde(default)]
    token: Vec<TokenEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct UserEntry {
    name: String,
    role: Role,
    password_hash: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct TokenEntry {
    name: String,
    role: Role,
    /// Hex SHA-256 of the token.
    sha256: String,
}

/// The loaded users file.
#[derive(Debug)]
pub struct Users {
    users: Vec<UserEntry>,
    tokens: Vec<([u8; 32], String, Role)>,
    /// Verified against when the user name is unknown, so a wrong name
    /// costs the same time as a wrong password.
    dummy: String,
}

/// Hex SHA-256 of `bytes` (token hashes, session id hashes).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl Users {
    /// Reads and checks `msgx.console.users-file` ([`Users::load_as`]).
    pub fn load(path: &Path) -> Result<Users, AccessError> {
        Users::load_as(path, "msgx.console.users-file")
    }

    /// Reads and checks the file: private to its owner (no group or other
    /// permission bit), names unique, hashes well-formed. Errors name it as
    /// the config key `key` (another listener, e.g. `msgx.acris.tokens-file`,
    /// reads the same format).
    pub fn load_as(path: &Path, key: &'static str) -> Result<Users, AccessError> {
        let read = |source| AccessError::Read {
            key,
            path: path.to_path_buf(),
            source,
        };
        let mode = crate::config::shared_file_mode(path).map_err(read)?;
        if let Some(mode) = mode {
            return Err(AccessError::Mode {
                key,
                path: path.to_path_buf(),
                mode,
            });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        Users::parse(&text, path, key)
    }

    /// A parse error names the line and column, never the line's text (it
    /// may hold a hash).
    fn parse(text: &str, path: &Path, key: &'static str) -> Result<Users, AccessError> {
        let file: File = toml::from_str(text).map_err(|e| AccessError::Parse {
            key,
            path: path.to_path_buf(),
            message: crate::config::toml_error_without_text(&e, text),
        })?;
        let entry = |what, name: &str, problem: String| AccessError::Entry {
            key,
            path: path.to_path_buf(),
            what,
            name: name.to_string(),
            problem,
        };
        let mut seen = std::collections::HashSet::new();
        for u in &file.user {
            if !seen.insert(u.name.as_str()) || u.name.trim().is_empty() {
                return Err(entry("user", &u.name, "empty or repeated name".into()));
            }
            if !valid_user_name(&u.name) {
                let problem = format!(
                    "longer than {MAX_USER_CHARS} characters or holds a control character: \
                     no login could give it"
                );
                return Err(entry("user", &u.name, problem));
            }
            PasswordHash::new(&u.password_hash).map_err(|e| {
                entry(
                    "user",
                    &u.name,
                    format!(
                        "password-hash is not a PHC string ({e}); use `msgx console hash-password`"
                    ),
                )
            })?;
        }
        let mut tokens = Vec::with_capacity(file.token.len());
        for t in &file.token {
            let mut digest = [0u8; 32];
            hex::decode_to_slice(t.sha256.trim(), &mut digest).map_err(|_| {
                entry(
                    "token",
                    &t.name,
                    "sha256 must be 64 hex digits (printf %s \"$TOKEN\" | sha256sum)".into(),
                )
            })?;
            tokens.push((digest, t.name.clone(), t.role));
        }
        let dummy = hash_password("msgx console dummy password")?;
        Ok(Users {
            users: file.user,
            tokens,
            dummy,
        })
    }

    /// The number of `[[token]]` entries.
    pub fn token_count(&self) -> usize {
        self.tokens.len()
    }

    /// No user and no token: nobody could log in.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && self.tokens.is_empty()
    }

    /// The role of `name` when `password` is theirs. CPU-heavy (argon2):
    /// call it off the async threads.
    pub fn verify_password(&self, name: &str, password: &str) -> Option<Role> {
        let user = self.users.iter().find(|u| u.name == name);
        let hash = user.map_or(self.dummy.as_str(), |u| u.password_hash.as_str());
        let ok = PasswordHash::new(hash).is_ok_and(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        });
        user.filter(|_| ok).map(|u| u.role)
    }

    /// The name and role of the bearer token `presented`, compared in
    /// constant time against every configured hash.
    pub fn verify_token(&self, presented: &str) -> Option<(String, Role)> {
        let digest = Sha256::digest(presented.as_bytes());
        let mut found = None;
        for (hash, name, role) in &self.tokens {
            if bool::from(hash.ct_eq(&digest[..])) {
                found = Some((name.clone(), *role));
            }
        }
        found
    }

    /// The current role of a logged-in user (`None` once removed from the file).
    pub fn role_of(&self, name: &str) -> Option<Role> {
        self.users.iter().find(|u| u.name == name).map(|u| u.role)
    }

    /// What a session of `name` is bound to: the SHA-256 of the user's role
    /// and password hash as the file has them now. A session stores it at
    /// login and ends once it differs: a changed
    /// password or role ends every session of the user at the next request,
    /// also across a restart. `None` once the user is removed.
    pub fn credential_of(&self, name: &str) -> Option<String> {
        self.users
            .iter()
            .find(|u| u.name == name)
            .map(|u| sha256_hex(format!("{}\0{}", u.role.as_str(), u.password_hash).as_bytes()))
    }
}

/// The shortest password `hash-password` accepts, in characters.
pub const MIN_PASSWORD_CHARS: usize = 12;

/// Passwords refused whatever their length (assets/common-passwords.txt,
/// compiled in; lower case).
const COMMON_PASSWORDS: &str = include_str!("../../assets/common-passwords.txt");

/// Why `password` may not be used for a console user: shorter than
/// [`MIN_PASSWORD_CHARS`], or on the shipped list of common passwords
/// (compared without case). `None`: acceptable.
pub fn password_problem(password: &str) -> Option<String> {
    let chars = password.chars().count();
    if chars < MIN_PASSWORD_CHARS {
        return Some(format!(
            "it has {chars} characters; at least {MIN_PASSWORD_CHARS} are needed"
        ));
    }
    let lower = password.to_lowercase();
    let common = COMMON_PASSWORDS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .any(|l| l == lower);
    common.then(|| "it is on the list of common passwords that guessers try first".into())
}

/// An argon2id hash (default parameters, random salt) in PHC form, for the
/// users file (`msgx console hash-password`).
pub fn hash_password(password: &str) -> Result<String, AccessError> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| AccessError::Hash(e.to_string()))
}

/// Failed logins, in two separate maps so
/// that a user named like an address counts against that user only:
///
/// - per user name: `login-attempts` in `login-window`; beyond it, that
///   user's logins answer 429 (an online guess at one password);
/// - per client address ([`crate::http::client::Client`], the forwarded
///   address behind a trusted proxy): `login-attempts-per-client`, much
///   larger, also charged by wrong bearer tokens; beyond it, every login
///   and token from the client answers 429 (guesses spread over users).
///
/// A locked-out user therefore does not lock out the other users of the
/// same address, and an address is locked out only by many failures. Each
/// map keeps at most [`TRACKED_CLIENTS`] keys (bounded memory whatever the
/// names tried); in memory only, so a restart forgets.
#[derive(Debug)]
pub struct LoginLimiter {
    users: FailureLimiter<String>,
    clients: FailureLimiter<IpAddr>,
}

impl LoginLimiter {
    pub fn new(per_user: u32, per_client: u32, window: Duration) -> LoginLimiter {
        LoginLimiter::with_capacity(per_user, per_client, window, TRACKED_CLIENTS)
    }

    /// As [`LoginLimiter::new`] with `capacity` keys per map.
    pub fn with_capacity(
        per_user: u32,
        per_client: u32,
        window: Duration,
        capacity: usize,
    ) -> LoginLimiter {
        LoginLimiter {
            users: FailureLimiter::new(per_user, window, capacity),
            clients: FailureLimiter::new(per_client, window, capacity),
        }
    }

    /// Whether a login as `user` from `client` may be tried at `now`.
    /// `user` is `None` for a name that cannot be valid: it is never a key
    /// (no 2 MB name kept), the attempt counts against the client only.
    pub fn allowed(&self, user: Option<&str>, client: IpAddr, now: DateTime<Utc>) -> bool {
        self.clients.allowed(&client, now) && user.is_none_or(|u| self.users.allowed(u, now))
    }

    /// Counts a failed login against the client and the user name.
    pub fn failed(&self, user: Option<&str>, client: IpAddr, now: DateTime<Utc>) {
        self.clients.failed(&client, now);
        if let Some(u) = user {
            self.users.failed(u, now);
        }
    }

    /// A successful login clears the user name's count (not the client's:
    /// one good password must not reset guessing at the others).
    pub fn succeeded(&self, user: &str) {
        self.users.clear(user);
    }

    /// Whether `client` may present a bearer token (or a password) at `now`.
    pub fn client_allowed(&self, client: IpAddr, now: DateTime<Utc>) -> bool {
        self.clients.allowed(&client, now)
    }

    /// Counts a wrong bearer token against `client`.
    pub fn client_failed(&self, client: IpAddr, now: DateTime<Utc>) {
        self.clients.failed(&client, now);
    }

    /// Keys held: (user names, client addresses).
    pub fn len(&self) -> (usize, usize) {
        (self.users.len(), self.clients.len())
    }
}

/// The longest user name a login may give, in characters. A longer name,
/// or one with a control character, is refused in the users file and, from
/// a login form, before any look-up (see [`valid_user_name`]).
pub const MAX_USER_CHARS: usize = 64;

/// Whether a login's user name may be used at all: 1 to
/// [`MAX_USER_CHARS`] characters, none a control character. Checked before
/// the look-up and the rate limiter, so a 2 MB name is never stored or
/// compared.
pub fn valid_user_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 4 * MAX_USER_CHARS
        && name.chars().count() <= MAX_USER_CHARS
        && !name.chars().any(char::is_control)
}

/// At most `max` log lines per key (a client address) per `window`; the
/// lines beyond it are counted, not written, so a password guesser cannot
/// flood the log. Each window starts at its key's first
/// line. A window that has ended is reported by the next call from any key:
/// [`LogLimiter::admit`] returns its count of suppressed lines. At most
/// `capacity` keys are tracked; beyond them, new keys share one.
#[derive(Debug)]
pub struct LogLimiter {
    max: u32,
    window: Duration,
    capacity: usize,
    windows: Mutex<HashMap<String, Window>>,
}

/// One key's window of [`LogLimiter`].
#[derive(Debug)]
struct Window {
    since: DateTime<Utc>,
    written: u32,
    suppressed: u64,
}

/// The key of the addresses [`LogLimiter`] has no room left for.
pub const OTHER_ADDRESSES: &str = "other addresses";

/// What [`LogLimiter::admit`] decided.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Admit {
    /// Write the line.
    pub write: bool,
    /// The keys whose window ended with lines suppressed, and how many.
    pub ended: Vec<(String, u64)>,
}

impl LogLimiter {
    /// The failed-login lines' limit: 5 per client address and minute,
    /// 4,096 addresses tracked (a few hundred KB at most).
    pub fn failed_logins() -> LogLimiter {
        LogLimiter::new(5, Duration::minutes(1), 4096)
    }

    pub fn new(max: u32, window: Duration, capacity: usize) -> LogLimiter {
        LogLimiter {
            max,
            window,
            capacity: capacity.max(1),
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a line for `key` may be written at `now`, and the windows
    /// that have ended (the key's own included) with their suppressed count.
    pub fn admit(&self, key: &str, now: DateTime<Utc>) -> Admit {
        let mut map = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let mut ended = Vec::new();
        map.retain(|k, w| {
            let open = now - w.since < self.window;
            if !open && w.suppressed > 0 {
                ended.push((k.clone(), w.suppressed));
            }
            open
        });
        let key = if map.contains_key(key) || map.len() < self.capacity {
            key
        } else {
            OTHER_ADDRESSES
        };
        let w = map.entry(key.to_string()).or_insert(Window {
            since: now,
            written: 0,
            suppressed: 0,
        });
        let write = w.written < self.max;
        if write {
            w.written += 1;
        } else {
            w.suppressed += 1;
        }
        Admit { write, ended }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn users(text: &str) -> Result<Users, AccessError> {
        Users::parse(text, Path::new("users.toml"), "msgx.console.users-file")
    }

    #[test]
    fn a_password_verifies_only_against_its_own_hash() {
        let hash = hash_password("correct horse").expect("hash");
        let text = format!(
            "[[user]]\nname = \"alice\"\nrole = \"operator\"\npassword-hash = \"{hash}\"\n"
        );
        let u = users(&text).expect("loads");
        assert_eq!(
            u.verify_password("alice", "correct horse"),
            Some(Role::Operator)
        );
        assert_eq!(u.verify_password("alice", "wrong"), None);
        assert_eq!(u.verify_password("bob", "correct horse"), None);
        assert_eq!(u.role_of("alice"), Some(Role::Operator));
    }

    #[test]
    fn tokens_match_by_sha256_and_bad_entries_are_refused() {
        let token = "0123456789abcdef0123456789abcdef";
        let text = format!(
            "[[token]]\nname = \"ci\"\nrole = \"viewer\"\nsha256 = \"{}\"\n",
            sha256_hex(token.as_bytes())
        );
        let u = users(&text).expect("loads");
        assert_eq!(u.verify_token(token), Some(("ci".into(), Role::Viewer)));
        assert_eq!(u.verify_token("other"), None);
        assert!(users("[[token]]\nname = \"x\"\nrole = \"viewer\"\nsha256 = \"zz\"\n").is_err());
        assert!(
            users("[[user]]\nname = \"x\"\nrole = \"root\"\npassword-hash = \"$argon2id$\"\n")
                .is_err()
        );
        assert!(
            users("[[user]]\nname = \"x\"\nrole = \"viewer\"\npassword-hash = \"plain\"\n")
                .is_err()
        );
    }

    #[test]
    fn users_and_addresses_are_limited_apart_and_the_maps_are_bounded() {
        let t0 = Utc
            .with_ymd_and_hms(2026, 12, 1, 8, 0, 0)
            .single()
            .expect("valid");
        let ip = |s: &str| -> IpAddr { s.parse().expect("address") };
        let l = LoginLimiter::with_capacity(2, 4, Duration::minutes(15), 8);
        let (here, there) = (ip("127.0.0.1"), ip("10.0.0.9"));
        assert!(l.allowed(Some("alice"), here, t0));
        l.failed(Some("alice"), here, t0);
        l.failed(Some("alice"), here, t0 + Duration::minutes(1));
        let later = t0 + Duration::minutes(2);
        assert!(!l.allowed(Some("alice"), here, later));
        assert!(!l.allowed(Some("alice"), there, later), "per user");
        assert!(l.allowed(Some("bob"), here, later), "bob is not alice");
        // A user named like an address is not that address.
        l.failed(Some("10.0.0.9"), here, later);
        l.failed(Some("10.0.0.9"), ip("10.0.0.8"), later);
        assert!(!l.allowed(Some("10.0.0.9"), here, later));
        assert!(l.allowed(Some("bob"), there, later));
        // The address's own, larger budget: 4 failures from `here`.
        l.failed(None, here, later);
        assert!(!l.allowed(Some("bob"), here, later));
        assert!(!l.client_allowed(here, later));
        assert!(l.allowed(Some("alice"), there, t0 + Duration::minutes(15)));
        assert!(l.allowed(Some("bob"), here, t0 + Duration::minutes(15)));
        // Many names and addresses: never more than the capacity each.
        for i in 0..10_000u32 {
            let name = format!("user-{i}");
            l.failed(Some(&name), IpAddr::from(i.to_be_bytes()), later);
        }
        assert_eq!(l.len(), (8, 8));
    }

    #[test]
    fn passwords_are_long_and_not_common() {
        assert!(password_problem("a").is_some_and(|p| p.contains("at least 12")));
        assert!(password_problem("elevenchars").is_some());
        assert!(password_problem("Password1234").is_some_and(|p| p.contains("common")));
        assert!(password_problem("QWERTYUIOP123").is_some());
        assert!(password_problem("tarmac-gate-B17-night").is_none());
        assert!(
            password_problem("ÉÉÉÉÉÉÉÉÉÉÉÉ").is_none(),
            "characters, not bytes"
        );
        let listed = COMMON_PASSWORDS
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .count();
        assert!(listed >= 300, "a few hundred entries: {listed}");
    }

    #[test]
    fn a_session_credential_changes_with_the_password_hash_and_the_role() {
        let entry = |role: &str, hash: &str| {
            format!("[[user]]\nname = \"alice\"\nrole = \"{role}\"\npassword-hash = \"{hash}\"\n")
        };
        let (h1, h2) = (
            hash_password("first password").expect("hash"),
            hash_password("second password").expect("hash"),
        );
        let of = |text: String| users(&text).expect("loads").credential_of("alice");
        let first = of(entry("operator", &h1));
        assert!(first.is_some());
        assert_eq!(first, of(entry("operator", &h1)), "stable");
        assert_ne!(first, of(entry("operator", &h2)), "new password");
        assert_ne!(first, of(entry("viewer", &h1)), "new role");
        assert_eq!(
            users(&entry("viewer", &h1))
                .expect("loads")
                .credential_of("bob"),
            None
        );
    }

    #[test]
    fn a_parse_error_names_the_place_never_the_line() {
        let text = "[[user]]\nname = \"alice\"\npassword-hash = \"$argon2id$v=19$secret-part\" x\n";
        let err = users(text).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("line 3"), "{err}");
        assert!(
            !err.contains("secret-part") && !err.contains("argon2id"),
            "{err}"
        );
    }

    #[test]
    fn a_users_file_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let file = tempfile::NamedTempFile::new().expect("tmp");
        std::fs::write(file.path(), "").expect("write");
        for (mode, refused) in [(0o600, false), (0o400, false), (0o640, true), (0o604, true)] {
            std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode))
                .expect("chmod");
            let err = Users::load(file.path()).err().map(|e| e.to_string());
            assert_eq!(
                err.as_deref().is_some_and(|e| e.contains("chmod 600")),
                refused,
                "{mode:o}: {err:?}"
            );
        }
    }

    #[test]
    fn user_names_are_short_and_free_of_control_characters() {
        assert!(valid_user_name("alice"));
        assert!(valid_user_name(&"é".repeat(MAX_USER_CHARS)));
        assert!(!valid_user_name(&"a".repeat(MAX_USER_CHARS + 1)));
        assert!(!valid_user_name(""));
        assert!(!valid_user_name("mallory\nConsole: login user=alice"));
        assert!(!valid_user_name("\x1b[31malice"));
        let long = "a".repeat(MAX_USER_CHARS + 1);
        let text =
            format!("[[user]]\nname = \"{long}\"\nrole = \"viewer\"\npassword-hash = \"x\"\n");
        let err = users(&text)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("longer than 64 characters"), "{err}");
    }

    #[test]
    fn log_lines_are_limited_per_key_and_the_rest_reported_when_the_window_ends() {
        let t0 = Utc
            .with_ymd_and_hms(2026, 12, 1, 8, 0, 0)
            .single()
            .expect("valid");
        let l = LogLimiter::new(2, Duration::minutes(1), 2);
        let writes = |key, at| l.admit(key, at).write;
        assert!(writes("10.0.0.1", t0));
        assert!(writes("10.0.0.1", t0));
        assert!(!writes("10.0.0.1", t0 + Duration::seconds(30)));
        assert!(!writes("10.0.0.1", t0 + Duration::seconds(59)));
        assert!(writes("10.0.0.2", t0), "another key has its own budget");
        assert!(writes("10.0.0.3", t0), "no room: the shared key");
        assert!(writes("10.0.0.4", t0 + Duration::seconds(1)));
        assert!(!writes("10.0.0.5", t0 + Duration::seconds(2)));
        let next = l.admit("10.0.0.2", t0 + Duration::minutes(1));
        assert!(next.write);
        let mut ended = next.ended;
        ended.sort();
        assert_eq!(
            ended,
            vec![("10.0.0.1".into(), 2), (OTHER_ADDRESSES.into(), 1)]
        );
        assert!(
            l.admit("10.0.0.1", t0 + Duration::minutes(2))
                .ended
                .is_empty()
        );
    }
}
