//! `msgx status [--json]`: the watermark, backlog, outbox, active instance
//! and last job runs (`crate::status` collects and renders them).

use crate::clock::SharedClock;
use crate::config::Config;
use crate::exit::Exit;
use crate::store::mailbox::Mailbox;
use crate::store::pg;

/// Prints the status; the mailbox is optional (its backlog is then unknown).
pub async fn run(config: &Config, clock: SharedClock, json: bool) -> Exit {
    let pool = match pg::connect(&config.msgx.postgres).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx status: cannot connect to PostgreSQL: {e}");
            return Exit::Failure;
        }
    };
    let mailbox = Mailbox::new(&config.msgx.mailbox).ok();
    match crate::status::collect(&pool, mailbox.as_ref(), &clock, config).await {
        Ok(s) if json => {
            println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
            Exit::Ok
        }
        Ok(s) => {
            print!("{}", crate::status::render(&s));
            Exit::Ok
        }
        Err(e) => {
            eprintln!("msgx status: {e}");
            Exit::Failure
        }
    }
}
