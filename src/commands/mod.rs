//! Operator and developer commands behind the CLI: one file per command
//! family. `src/cli.rs` parses the arguments and dispatches here; nothing in
//! here imports the CLI.

pub mod backfill;
pub mod config;
pub mod confirm;
pub mod console;
pub mod contract;
pub mod decode;
pub mod dev;
pub mod dev_kafka;
pub mod doctor;
pub mod events;
pub mod generate;
pub mod inspect;
pub mod jobs;
pub mod mailbox;
pub mod manual;
pub mod migrate;
pub mod request;
pub mod season;
pub mod skip;
pub mod status;
pub mod tail;
pub mod target;
pub mod version;

use crate::config::Config;
use crate::exit::Exit;
use crate::store::mailbox::Mailbox;
use crate::store::pg;
use std::io::Write;

/// Connects to msgx's PostgreSQL and refuses an unmigrated or newer schema,
/// printing why (`msgx <what>: …`); the error is the exit code.
pub(crate) async fn connect_current(config: &Config, what: &str) -> Result<sqlx::PgPool, Exit> {
    let pool = pg::connect(&config.msgx.postgres).await.map_err(|e| {
        eprintln!("msgx {what}: cannot connect to PostgreSQL: {e}");
        Exit::Failure
    })?;
    pg::ensure_schema_current(&pool).await.map_err(|e| {
        eprintln!("msgx {what}: {e}");
        Exit::Failure
    })?;
    Ok(pool)
}

/// The configured mailbox client (it connects lazily); an unusable URL or
/// TLS option is printed (`msgx <what>: …`) and is exit code 2.
pub(crate) fn open_mailbox(config: &Config, what: &str) -> Result<Mailbox, Exit> {
    Mailbox::new(&config.msgx.mailbox).map_err(|e| {
        eprintln!("msgx {what}: {e}");
        Exit::Config
    })
}

/// Writes a command's whole output; a failed write (a closed pipe) is a
/// failure exit.
pub(crate) fn emit(out: &mut dyn Write, text: &str) -> Exit {
    match out.write_all(text.as_bytes()) {
        Ok(()) => Exit::Ok,
        Err(_) => Exit::Failure,
    }
}
