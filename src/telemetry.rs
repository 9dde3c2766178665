//! Logging (issue 2, item 7): tracing to stdout (daemon) or stderr (one-shot
//! commands, so `--json` output stays clean), plus daily rolling files under
//! `msgx.log.dir` for the daemon.

use crate::config::Log;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::{EnvFilter, Layer, fmt, layer::SubscriberExt, util::SubscriberInitExt};

/// Where a process logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogTarget {
    /// The daemon: stdout and rolling files.
    Daemon,
    /// A one-shot command: stderr only.
    Command,
}

/// Installs the global subscriber. Keep the returned guard alive until exit
/// so buffered file lines are flushed.
pub fn init(cfg: &Log, target: LogTarget) -> Option<WorkerGuard> {
    let filter = || {
        EnvFilter::try_from_default_env()
            .or_else(|_| EnvFilter::try_new(format!("{},sqlx::postgres::notice=warn", cfg.level)))
            .unwrap_or_else(|_| EnvFilter::new("info"))
    };
    let json = cfg.format == "json";
    // Colours only on a terminal: under systemd the journal would keep the escapes.
    use std::io::IsTerminal;
    let console = match (target, json) {
        (LogTarget::Daemon, false) => fmt::layer()
            .with_ansi(std::io::stdout().is_terminal())
            .with_writer(std::io::stdout)
            .boxed(),
        (LogTarget::Daemon, true) => fmt::layer().json().with_writer(std::io::stdout).boxed(),
        (LogTarget::Command, false) => fmt::layer()
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .boxed(),
        (LogTarget::Command, true) => fmt::layer().json().with_writer(std::io::stderr).boxed(),
    };
    let (file_layer, guard) = if target == LogTarget::Daemon && !cfg.dir.is_empty() {
        match std::fs::create_dir_all(&cfg.dir) {
            Ok(()) => {
                let appender = tracing_appender::rolling::daily(&cfg.dir, "msgx.log");
                let (writer, guard) = tracing_appender::non_blocking(appender);
                (
                    Some(
                        fmt::layer()
                            .with_ansi(false)
                            .with_writer(writer)
                            .with_filter(filter()),
                    ),
                    Some(guard),
                )
            }
            Err(e) => {
                eprintln!(
                    "msgx: cannot create log dir {}: {e}; logging to stdout only",
                    cfg.dir
                );
                (None, None)
            }
        }
    } else {
        (None, None)
    };
    let _ = tracing_subscriber::registry()
        .with(console.with_filter(filter()))
        .with(file_layer)
        .try_init();
    guard
}
