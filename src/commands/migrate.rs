//! `msgx migrate`: apply the embedded PostgreSQL migrations (idempotent).

use super::exit;
use crate::config::Config;
use crate::store::pg;

/// Applies the pending migrations and says what the schema is now.
pub async fn run(config: &Config) -> i32 {
    let pool = match pg::connect(&config.msgx.postgres).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx migrate: cannot connect to PostgreSQL: {e}");
            return exit::FAILURE;
        }
    };
    match pg::migrate(&pool).await {
        Ok(applied) if applied.is_empty() => {
            println!("schema is current (v{})", pg::expected_version());
            exit::OK
        }
        Ok(applied) => {
            println!(
                "applied migrations {applied:?}; schema is now v{}",
                pg::expected_version()
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("msgx migrate: {e}");
            exit::FAILURE
        }
    }
}
