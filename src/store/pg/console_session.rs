//! CONSOLE_SESSION (migrations 0010, 0019, 0026): the operator console's login
//! sessions (docs/console.md "Sessions"). Keyed
//! by the SHA-256 of the cookie value, never the value itself. A session
//! ends at its absolute `expires_at`, after `idle` without a request, when
//! its user's credential changes, at logout and at `msgx console revoke`.

use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;

/// A live session.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Session {
    pub user_name: String,
    pub csrf_token: String,
    pub expires_at: DateTime<Utc>,
    /// What the session is bound to (`Users::credential_of` at login).
    pub credential_sha256: String,
    /// `password` or `oidc`.
    pub auth_method: String,
    /// An OIDC session's role (mapped from its ID token at sign-in).
    pub role: Option<String>,
    /// An OIDC session's ID token, the `id_token_hint` of the provider's logout.
    pub id_token: Option<String>,
}

/// The columns of a [`Session`] (a macro, so the statements stay literals).
macro_rules! session_columns {
    () => {
        "user_name, csrf_token, expires_at, credential_sha256, auth_method, role, id_token"
    };
}

/// A session to store at login.
#[derive(Debug, Clone)]
pub struct NewSession<'a> {
    pub id_sha256: &'a str,
    pub user_name: &'a str,
    pub csrf_token: &'a str,
    pub credential_sha256: &'a str,
    pub now: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// An OIDC session's role and ID token; `None`: a password session.
    pub oidc: Option<(&'a str, &'a str)>,
}

/// Stores a new session and ends the user's oldest beyond `per_user`
/// (the newest `per_user` are kept, this one among them); returns how
/// many were ended.
pub async fn insert(pool: &PgPool, s: &NewSession<'_>, per_user: u32) -> Result<u64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO console_session \
         (id_sha256, user_name, csrf_token, credential_sha256, created_at, last_seen_at, expires_at, \
          auth_method, role, id_token) \
         VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9)",
    )
    .bind(s.id_sha256)
    .bind(s.user_name)
    .bind(s.csrf_token)
    .bind(s.credential_sha256)
    .bind(s.now)
    .bind(s.expires_at)
    .bind(if s.oidc.is_some() { "oidc" } else { "password" })
    .bind(s.oidc.map(|(role, _)| role))
    .bind(s.oidc.map(|(_, token)| token))
    .execute(&mut *tx)
    .await?;
    // The new session is kept whatever the clock says; of the others the
    // newest `per_user - 1` stay.
    let ended = sqlx::query(
        "DELETE FROM console_session WHERE id_sha256 IN ( \
           SELECT id_sha256 FROM console_session WHERE user_name = $1 AND id_sha256 <> $2 \
           ORDER BY created_at DESC, last_seen_at DESC OFFSET $3)",
    )
    .bind(s.user_name)
    .bind(s.id_sha256)
    .bind(i64::from(per_user.saturating_sub(1)))
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    Ok(ended)
}

/// The session with this id hash, unless it has expired at `now` or been
/// idle for `idle` or longer; a live one's `last_seen_at` moves to `now`
/// (one statement).
pub async fn touch(
    pool: &PgPool,
    id_sha256: &str,
    now: DateTime<Utc>,
    idle: Duration,
) -> Result<Option<Session>, sqlx::Error> {
    live_session(
        pool,
        concat!(
            "UPDATE console_session SET last_seen_at = $2 \
             WHERE id_sha256 = $1 AND expires_at > $2 AND last_seen_at > $3 RETURNING ",
            session_columns!()
        ),
        (id_sha256, now, idle),
    )
    .await
}

/// [`touch`] without moving `last_seen_at`: the live view's requests,
/// which a page left open sends by itself, do not keep a session alive.
pub async fn peek(
    pool: &PgPool,
    id_sha256: &str,
    now: DateTime<Utc>,
    idle: Duration,
) -> Result<Option<Session>, sqlx::Error> {
    live_session(
        pool,
        concat!(
            "SELECT ",
            session_columns!(),
            " FROM console_session WHERE id_sha256 = $1 AND expires_at > $2 AND last_seen_at > $3"
        ),
        (id_sha256, now, idle),
    )
    .await
}

/// Runs `sql` (`$1` the id hash, `$2` now, `$3` the idle bound) for one session.
async fn live_session(
    pool: &PgPool,
    sql: &'static str,
    (id_sha256, now, idle): (&str, DateTime<Utc>, Duration),
) -> Result<Option<Session>, sqlx::Error> {
    sqlx::query_as(sql)
        .bind(id_sha256)
        .bind(now)
        .bind(now - idle)
        .fetch_optional(pool)
        .await
}

/// Ends one session (logout, or a session whose credential changed);
/// the ID token of an OIDC session (for the provider's logout).
pub async fn delete(pool: &PgPool, id_sha256: &str) -> Result<Option<String>, sqlx::Error> {
    let token: Option<(Option<String>,)> =
        sqlx::query_as("DELETE FROM console_session WHERE id_sha256 = $1 RETURNING id_token")
            .bind(id_sha256)
            .fetch_optional(pool)
            .await?;
    Ok(token.and_then(|(t,)| t))
}

/// An OIDC sign-in under way (CONSOLE_OIDC_LOGIN, migration 0026).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OidcLogin {
    pub browser_sha256: String,
    pub nonce: String,
    pub pkce_verifier: String,
    pub expires_at: DateTime<Utc>,
}

/// Stores a sign-in under way, keyed by its `state`'s SHA-256; drops the
/// expired ones.
pub async fn insert_oidc_login(
    pool: &PgPool,
    state_sha256: &str,
    login: &OidcLogin,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM console_oidc_login WHERE expires_at <= $1")
        .bind(now)
        .execute(pool)
        .await?;
    sqlx::query(
        "INSERT INTO console_oidc_login \
         (state_sha256, browser_sha256, nonce, pkce_verifier, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(state_sha256)
    .bind(&login.browser_sha256)
    .bind(&login.nonce)
    .bind(&login.pkce_verifier)
    .bind(now)
    .bind(login.expires_at)
    .execute(pool)
    .await?;
    Ok(())
}

/// Takes the sign-in of this `state` (deleted in the same statement, so a
/// `state` is used at most once).
pub async fn take_oidc_login(
    pool: &PgPool,
    state_sha256: &str,
) -> Result<Option<OidcLogin>, sqlx::Error> {
    sqlx::query_as(
        "DELETE FROM console_oidc_login WHERE state_sha256 = $1 \
         RETURNING browser_sha256, nonce, pkce_verifier, expires_at",
    )
    .bind(state_sha256)
    .fetch_optional(pool)
    .await
}

/// Ends every session of `user_name` (`msgx console revoke`) and records
/// it in OPERATOR_ACTION (`SESSION_REVOKE`, target `console_user:<name>`),
/// in one transaction; how many sessions ended.
pub async fn revoke(
    pool: &PgPool,
    user_name: &str,
    actor: &str,
    reason: Option<&str>,
    at: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let ended = sqlx::query("DELETE FROM console_session WHERE user_name = $1")
        .bind(user_name)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    let target = format!("console_user:{user_name}");
    super::operator_action::insert(
        &mut tx,
        &super::operator_action::NewAction {
            at,
            actor,
            action: "SESSION_REVOKE",
            target: &target,
            reason,
            detail: serde_json::json!({ "sessions_ended": ended }),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(ended)
}

/// Drops the sessions ended at `now` by their lifetime or by `idle` (run at
/// each login: the table stays as small as the number of people logged in).
pub async fn delete_expired(
    pool: &PgPool,
    now: DateTime<Utc>,
    idle: Duration,
) -> Result<u64, sqlx::Error> {
    Ok(
        sqlx::query("DELETE FROM console_session WHERE expires_at <= $1 OR last_seen_at <= $2")
            .bind(now)
            .bind(now - idle)
            .execute(pool)
            .await?
            .rows_affected(),
    )
}
