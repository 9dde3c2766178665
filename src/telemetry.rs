//! Logging (issue 2, item 7): tracing to stdout (daemon) or stderr (one-shot
//! commands, so `--json` output stays clean), plus daily rolling files under
//! `msgx.log.dir` for the daemon. The files may hold message contents and
//! host names, so they are created 0640 (the daemon's umask becomes 0027),
//! and rotated files beyond `msgx.log.retention` days are deleted (issue 16,
//! item 7).

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
        match open_log_files(cfg) {
            Ok(appender) => {
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
                    "msgx: cannot open log files in {}: {e}; logging to stdout only",
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

/// The daily rolling files: umask 0027 first (so the files and any later
/// rotation are 0640), existing files narrowed to 0640, and only the newest
/// `retention` days kept (pruned now and at every rotation).
fn open_log_files(
    cfg: &Log,
) -> Result<tracing_appender::rolling::RollingFileAppender, Box<dyn std::error::Error>> {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: umask only sets the process file-mode creation mask; it cannot fail.
    unsafe {
        libc::umask(0o027);
    }
    std::fs::create_dir_all(&cfg.dir)?;
    for entry in std::fs::read_dir(&cfg.dir)?.flatten() {
        if entry.file_name().to_string_lossy().starts_with(LOG_PREFIX) {
            let _ = std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o640));
        }
    }
    let days = (cfg.retention.std().as_secs() / 86_400).max(1);
    Ok(tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix(LOG_PREFIX)
        .max_log_files(usize::try_from(days).unwrap_or(usize::MAX))
        .build(&cfg.dir)?)
}

/// Daily files are `msgx.log.YYYY-MM-DD`.
const LOG_PREFIX: &str = "msgx.log";
