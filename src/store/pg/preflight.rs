//! What `msgx doctor` asks msgx's PostgreSQL: whether
//! the role has what msgx needs and no more than it should (whether the
//! session is encrypted: `pg::tls_in_use`) (docs/operations.md "Connecting to production" gives
//! the GRANTs).

use sqlx::PgPool;

/// The role's standing: its name, whether it is a superuser, and the msgx
/// tables on which it lacks one of SELECT, INSERT, UPDATE, DELETE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleCheck {
    pub role: String,
    pub superuser: bool,
    pub missing: Vec<String>,
}

/// Checks the privileges msgx needs on every table in its schema (the
/// tables the migrations created, `_sqlx_migrations` included).
pub async fn role_check(pool: &PgPool) -> Result<RoleCheck, sqlx::Error> {
    let (role, superuser): (String, bool) = sqlx::query_as(
        "SELECT current_user::text, rolsuper FROM pg_roles WHERE rolname = current_user",
    )
    .fetch_one(pool)
    .await?;
    let missing: Vec<String> = sqlx::query_scalar(
        "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') \
         AND NOT (has_table_privilege(c.oid, 'SELECT') AND has_table_privilege(c.oid, 'INSERT') \
              AND has_table_privilege(c.oid, 'UPDATE') AND has_table_privilege(c.oid, 'DELETE')) \
         ORDER BY 1",
    )
    .fetch_all(pool)
    .await?;
    Ok(RoleCheck {
        role,
        superuser,
        missing,
    })
}
