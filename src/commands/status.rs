//! `msgx status [--json]`: the watermark, backlog, outbox, active instance
//! and last job runs (`crate::status` collects and renders them).

use super::exit;
use crate::clock::SharedClock;
use crate::config::Config;
use crate::store::mailbox::Mailbox;
use crate::store::pg;

/// Prints the status; the mailbox is optional (its backlog is then unknown).
pub async fn run(config: &Config, clock: SharedClock, json: bool) -> i32 {
    let pool = match pg::connect(&config.msgx.postgres).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx status: cannot connect to PostgreSQL: {e}");
            return exit::FAILURE;
        }
    };
    let mailbox = Mailbox::new(&config.msgx.mailbox).ok();
    match crate::status::collect(&pool, mailbox.as_ref(), &clock, config).await {
        Ok(s) if json => {
            println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
            exit::OK
        }
        Ok(s) => {
            print!("{}", crate::status::render(&s));
            exit::OK
        }
        Err(e) => {
            eprintln!("msgx status: {e}");
            exit::FAILURE
        }
    }
}
