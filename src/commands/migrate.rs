//! `msgx migrate`: apply the embedded PostgreSQL migrations (idempotent).

use crate::config::Config;
use crate::exit::Exit;
use crate::store::pg;

/// Applies the pending migrations and says what the schema is now.
pub async fn run(config: &Config) -> Exit {
    let pool = match pg::connect(&config.msgx.postgres).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx migrate: cannot connect to PostgreSQL: {e}");
            return Exit::Failure;
        }
    };
    match pg::migrate(&pool).await {
        Ok(applied) if applied.is_empty() => {
            println!("schema is current (v{})", pg::expected_version());
            Exit::Ok
        }
        Ok(applied) => {
            println!(
                "applied migrations {applied:?}; schema is now v{}",
                pg::expected_version()
            );
            Exit::Ok
        }
        Err(e) => {
            eprintln!("msgx migrate: {e}");
            Exit::Failure
        }
    }
}
