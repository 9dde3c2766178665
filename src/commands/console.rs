//! `msgx console`: the operator console on its own, against the
//! configured database (a standby host, or a host that runs the jobs from
//! cron), and `msgx console hash-password` for the users file.

use crate::clock::SharedClock;
use crate::config::Config;
use crate::console::{JobLauncher, access};
use crate::exit::Exit;
use crate::scheduler::runner::JobRunner;
use clap::Subcommand;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

#[derive(Debug, Subcommand)]
pub enum ConsoleAction {
    /// Read a password from standard input (no echo on a terminal) and
    /// print its argon2id hash for `password-hash` in the users file. At
    /// least 12 characters, and none of the common passwords guessers try
    /// first.
    HashPassword,
    /// End every console session of USER at once (recorded as
    /// SESSION_REVOKE). Also do it after editing a user's entry: a changed
    /// password or role ends that user's sessions by itself at their next
    /// request.
    Revoke {
        /// The user name, as in the users file.
        #[arg(value_name = "USER")]
        user: String,
        /// Why (recorded).
        #[arg(long)]
        reason: Option<String>,
        /// Who (default: the OS user).
        #[arg(long)]
        actor: Option<String>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `msgx console revoke USER`: ends the user's sessions, on the configured
/// PostgreSQL.
pub async fn revoke(
    config: &Config,
    clock: SharedClock,
    user: &str,
    reason: Option<&str>,
    actor: Option<&str>,
    json: bool,
) -> Exit {
    let pool = match super::connect_current(config, "console revoke").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let actor = super::events::actor(actor);
    let at = clock.now();
    match crate::store::pg::console_session::revoke(&pool, user, &actor, reason, at).await {
        Ok(ended) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({ "user": user, "sessions_ended": ended, "actor": actor })
                );
            } else {
                println!(
                    "{ended} console session(s) of {} ended",
                    crate::log_text::for_log(user)
                );
            }
            Exit::Ok
        }
        Err(e) => {
            eprintln!("msgx console revoke: {e}");
            Exit::Failure
        }
    }
}

/// `msgx console`: serves `msgx.console.listen` until SIGINT or SIGTERM.
pub async fn serve(config: Config, clock: SharedClock) -> Exit {
    let signal = crate::scheduler::daemon::ShutdownSignal::install();
    let Some(listen) = config.msgx.console.listen.clone() else {
        eprintln!("msgx console: msgx.console.listen is not set (docs/console.md)");
        return Exit::Config;
    };
    let pool = match super::connect_current(&config, "console").await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mailbox = match super::open_mailbox(&config, "console") {
        Ok(m) => m,
        Err(code) => return code,
    };
    let config = Arc::new(config);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let runner = JobRunner::manual(
        pool.clone(),
        mailbox.clone(),
        config.clone(),
        clock.clone(),
        crate::scheduler::daemon::instance_name(),
        stop_rx.clone(),
    );
    let launcher: Arc<dyn JobLauncher> = Arc::new(runner);
    // Pages query on the console's own pool; `pool` serves
    // the jobs an operator runs from it.
    let pages = match crate::store::pg::connect_console(&config.msgx.postgres, &config.msgx.console)
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx console: {e}");
            return Exit::Config;
        }
    };
    let bound = crate::console::bind(&listen, config, pages, mailbox, clock, Some(launcher)).await;
    let server = match bound {
        Ok(s) => s,
        Err(e) => {
            eprintln!("msgx console: {e}");
            return Exit::Config;
        }
    };
    match server.local_addr() {
        Ok(addr) => eprintln!("msgx console: listening on {addr}"),
        Err(e) => eprintln!("msgx console: listening (address unknown: {e})"),
    }
    let serving = tokio::spawn(server.serve(stop_rx));
    signal.received().await;
    let _ = stop_tx.send(true);
    match serving.await {
        Ok(Ok(())) => Exit::Ok,
        Ok(Err(e)) => {
            eprintln!("msgx console: {e}");
            Exit::Failure
        }
        Err(e) => {
            eprintln!("msgx console: {e}");
            Exit::Failure
        }
    }
}

/// Turns terminal echo off while it lives (restored on drop).
struct NoEcho(Option<libc::termios>);

impl NoEcho {
    fn new() -> NoEcho {
        let fd = libc::STDIN_FILENO;
        // SAFETY: tcgetattr/tcsetattr only read and write the termios struct
        // we own, on our own standard input.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &mut t) != 0 {
                return NoEcho(None);
            }
            let saved = t;
            t.c_lflag &= !libc::ECHO;
            if libc::tcsetattr(fd, libc::TCSANOW, &t) != 0 {
                return NoEcho(None);
            }
            NoEcho(Some(saved))
        }
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        if let Some(saved) = &self.0 {
            // SAFETY: as in `new`, restoring the settings read there.
            unsafe {
                libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, saved);
            }
        }
    }
}

/// `msgx console hash-password`: one line from standard input (asked for
/// twice on a terminal), its hash on standard output.
pub fn hash_password() -> Exit {
    let stdin = std::io::stdin();
    let tty = stdin.is_terminal();
    let read = |prompt: &str| -> std::io::Result<String> {
        let _echo = tty.then(NoEcho::new);
        if tty {
            eprint!("{prompt}");
            std::io::stderr().flush()?;
        }
        let mut line = String::new();
        stdin.lock().read_line(&mut line)?;
        if tty {
            eprintln!();
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_string())
    };
    let password = match read("Password: ") {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx console hash-password: {e}");
            return Exit::Failure;
        }
    };
    if tty {
        match read("Again: ") {
            Ok(again) if again == password => {}
            Ok(_) => {
                eprintln!("msgx console hash-password: the passwords differ");
                return Exit::Config;
            }
            Err(e) => {
                eprintln!("msgx console hash-password: {e}");
                return Exit::Failure;
            }
        }
    }
    if let Some(problem) = access::password_problem(&password) {
        eprintln!("msgx console hash-password: password refused: {problem}");
        return Exit::Config;
    }
    match access::hash_password(&password) {
        Ok(h) => {
            println!("{h}");
            Exit::Ok
        }
        Err(e) => {
            eprintln!("msgx console hash-password: {e}");
            Exit::Failure
        }
    }
}
