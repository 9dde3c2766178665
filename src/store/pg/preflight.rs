//! What `msgx doctor` asks msgx's PostgreSQL: whether
//! the role has what msgx needs and no more than it should, and which
//! standbys stream from the server (whether the session is encrypted:
//! `pg::tls_in_use`; what each listed host is: `pg::ha::Targets::survey`) (docs/operations.md "Connecting to production" gives
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

/// One standby streaming from the server, as `pg_stat_replication` shows it
/// (`None` where the role may not see it).
#[derive(Debug, Clone, PartialEq)]
pub struct Standby {
    pub application_name: String,
    pub client_addr: Option<String>,
    pub state: Option<String>,
    /// Seconds between a commit here and its replay there (`replay_lag`;
    /// `None` when idle or not permitted).
    pub replay_lag: Option<f64>,
}

/// What the server shows of its replication.
#[derive(Debug, Clone, PartialEq)]
pub struct Replication {
    /// The role may read the other columns of `pg_stat_replication`
    /// (superuser, or a member of `pg_read_all_stats`, e.g. `pg_monitor`).
    pub permitted: bool,
    pub standbys: Vec<Standby>,
}

/// A row of `pg_stat_replication`: application name, client address, state,
/// replay lag in seconds.
type StandbyRow = (String, Option<String>, Option<String>, Option<f64>);

/// The standbys streaming from the server of `pool`.
pub async fn replication(pool: &PgPool) -> Result<Replication, sqlx::Error> {
    let permitted: bool = sqlx::query_scalar(
        "SELECT rolsuper OR pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') \
         FROM pg_roles WHERE rolname = current_user",
    )
    .fetch_one(pool)
    .await?;
    let rows: Vec<StandbyRow> = sqlx::query_as(
        "SELECT COALESCE(application_name, ''), host(client_addr), state, \
                EXTRACT(EPOCH FROM replay_lag)::float8 \
         FROM pg_stat_replication ORDER BY application_name, pid",
    )
    .fetch_all(pool)
    .await?;
    Ok(Replication {
        permitted,
        standbys: rows
            .into_iter()
            .map(
                |(application_name, client_addr, state, replay_lag)| Standby {
                    application_name,
                    client_addr,
                    state,
                    replay_lag,
                },
            )
            .collect(),
    })
}
