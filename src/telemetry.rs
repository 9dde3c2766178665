//! Logging: tracing to stdout (daemon) or stderr (one-shot
//! commands, so `--json` output stays clean), plus daily rolling files under
//! `msgx.log.dir` for the daemon. The files may hold message contents and
//! host names, so they are created 0640 (the daemon's umask becomes 0027),
//! and rotated files beyond `msgx.log.retention` days are deleted.

//!
//! Trace context: every message carries a W3C
//! `traceparent` ([`trace_context`]); [`message_span`] and [`event_span`] put
//! its trace-id on every log line about the message. With the cargo feature
//! `otlp` and `msgx.telemetry.otlp-endpoint` set, the same spans are exported
//! over OTLP as children of the message's context ([`otlp`]).

#[cfg(feature = "otlp")]
pub mod otlp;
pub mod request;
pub mod trace_context;

use crate::config::{Log, Telemetry};
use trace_context::TraceParent;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::{EnvFilter, Layer, fmt, layer::SubscriberExt, util::SubscriberInitExt};

/// What must live until exit: the log file writer (flushes buffered lines)
/// and, with the `otlp` feature, the span exporter (flushes queued spans).
#[derive(Default)]
pub struct TelemetryGuard {
    _files: Option<WorkerGuard>,
    #[cfg(feature = "otlp")]
    _export: Option<otlp::Export>,
}

/// The span of one message in the pump (processOne, its place in a group
/// commit, the head checks): `msg_id` and, when the message has a trace
/// context, `trace_id`, on every line logged inside it, in the text and
/// JSON formats alike. ERROR level so that any filter that shows a line of
/// the message also enables its span (a span's level only filters it).
pub fn message_span(msg_id: i64, trace: Option<&TraceParent>) -> tracing::Span {
    let span = tracing::error_span!("message", msg_id, trace_id = tracing::field::Empty);
    follow(&span, trace);
    span
}

/// The span of one outbox row's delivery (a Kafka record of `msg_id`'s
/// events): `event_id`, `flid` (the record key) and the message's
/// `trace_id` when the row has one.
pub fn event_span(event_id: i64, key: &str, trace: Option<&TraceParent>) -> tracing::Span {
    let span = tracing::error_span!(
        "event",
        event_id,
        flid = %key,
        trace_id = tracing::field::Empty
    );
    follow(&span, trace);
    span
}

/// Records the trace-id on `span` and, when exporting, makes the span a
/// child of the message's context, so a collector shows one trace per message.
fn follow(span: &tracing::Span, trace: Option<&TraceParent>) {
    if let Some(t) = trace {
        // Display, not Debug: `trace_id=4bf9…` unquoted in the text format.
        span.record("trace_id", tracing::field::display(t.trace_id_hex()));
        #[cfg(feature = "otlp")]
        otlp::set_parent(span, t);
    }
}

/// Where a process logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogTarget {
    /// The daemon: stdout and rolling files.
    Daemon,
    /// A one-shot command: stderr only.
    Command,
}

/// Installs the global subscriber. Keep the returned guard alive until exit
/// so buffered file lines (and queued spans) are flushed. `telemetry` is
/// validated already: an endpoint set in a build without `otlp` never gets
/// here.
pub fn init(cfg: &Log, telemetry: &Telemetry, target: LogTarget) -> TelemetryGuard {
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
    #[cfg(feature = "otlp")]
    let (export_layer, export) = match telemetry.otlp_endpoint.as_deref().map(otlp::layer) {
        Some(Ok((layer, export))) => (Some(layer.with_filter(filter())), Some(export)),
        Some(Err(e)) => {
            eprintln!("msgx: cannot export spans over OTLP: {e}; logging only");
            (None, None)
        }
        None => (None, None),
    };
    #[cfg(not(feature = "otlp"))]
    let _ = telemetry;
    let registry = tracing_subscriber::registry()
        .with(console.with_filter(filter()))
        .with(file_layer);
    #[cfg(feature = "otlp")]
    let registry = registry.with(export_layer);
    let _ = registry.try_init();
    TelemetryGuard {
        _files: guard,
        #[cfg(feature = "otlp")]
        _export: export,
    }
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
