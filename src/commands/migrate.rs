//! `msgx migrate`: apply the embedded PostgreSQL migrations (idempotent).

use crate::config::Config;
use crate::exit::Exit;
use crate::store::pg::{self, SchemaStatus};

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

/// `msgx migrate --check`: reads how the schema stands against this binary
/// and applies nothing. Exit 0 only when this binary can run on it as it is
/// (`SchemaStatus::Current`); the package's upgrade step restarts a running
/// daemon only then.
pub async fn check(config: &Config, json: bool) -> Exit {
    let pool = match pg::connect(&config.msgx.postgres).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx migrate --check: cannot connect to PostgreSQL: {e}");
            return Exit::Failure;
        }
    };
    let status = match pg::schema_status(&pool).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("msgx migrate --check: {e}");
            return Exit::Failure;
        }
    };
    if json {
        match serde_json::to_string(&status) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("msgx migrate --check: {e}");
                return Exit::Failure;
            }
        }
    } else {
        println!("{}", describe(&status));
    }
    Exit::from_success(status.is_current())
}

/// One line for an operator: where the schema is and what to do.
fn describe(status: &SchemaStatus) -> String {
    match status {
        SchemaStatus::Current { version } => {
            format!("schema is current (v{version}): this msgx can run on it")
        }
        SchemaStatus::Unmigrated { expected, .. } => {
            format!("schema is unmigrated (this msgx needs v{expected}): run `msgx migrate`")
        }
        SchemaStatus::Behind {
            applied,
            expected,
            pending,
        } => format!(
            "schema is behind (v{applied}, this msgx needs v{expected}; pending {pending:?}): run `msgx migrate`"
        ),
        SchemaStatus::Newer { applied, expected } => format!(
            "schema is newer (v{applied}) than this msgx knows (v{expected}): a newer msgx migrated it; run that version (never downgrade a live schema)"
        ),
    }
}
