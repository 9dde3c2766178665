//! The Prometheus side of msgx's metrics (docs/metrics.md lists
//! every metric, and a test keeps that list, [`CATALOG`] and `/metrics` equal).
//!
//! **Naming rule.** `msgx_<area>_<subject>[_<unit>][_total]`: snake_case,
//! base units (`_seconds`, timestamps as `_timestamp_seconds`, counts of
//! mailbox IDs as `_ids`), counters end in `_total`. The area is one of
//! `ingest`, `codec`, `pipeline`, `outbox`, `backfill`, `job`, `instance`,
//! `scheduler`, `collector`, `http`, `console`, `build`. A name the design
//! writes with dots maps by replacing each dot with `_`:
//! `msgx.pipeline.backlog.oldest_unprocessed_seconds` (§5.1) is `msgx_pipeline_backlog_oldest_unprocessed_seconds`.
//!
//! **Two sources.** Counters and histograms are counted where things happen
//! (the pump, the outbox, the job runner, ingest, backfill) in the process
//! that does them. Everything that is a *state* of the database — backlog,
//! counts by state, holes, outbox and backfill counts, last success per job —
//! is read from PostgreSQL by [`refresh`] on every scrape, so it survives
//! restarts and includes the runs of other processes (a cron `msgx run`).

use crate::config::Config;
use crate::delivery::latency::{self, END_TO_END, MAILBOX_TO_KAFKA};
use crate::domain::delivery::EventStatus;
use crate::domain::evidence::EvidenceState;
use crate::domain::watermark::ReleaseReason;
use crate::domain::{ErrorClass, ProcState};
use crate::jobs::manifest;
use crate::status::{self, PgFacts};
use crate::store::mailbox::Mailbox;
use crate::store::pg::backfill::AbandonReason;
use crate::store::pg::job_run::Outcome;
use chrono::{DateTime, Utc};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};
use sqlx::PgPool;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The metric types msgx uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    /// The Prometheus type name (as in `# TYPE` lines and docs/metrics.md).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// One metric: what docs/metrics.md documents.
#[derive(Debug, Clone, Copy)]
pub struct MetricSpec {
    pub name: &'static str,
    pub kind: Kind,
    pub labels: &'static [&'static str],
    pub help: &'static str,
}

const fn m(
    name: &'static str,
    kind: Kind,
    labels: &'static [&'static str],
    help: &'static str,
) -> MetricSpec {
    MetricSpec {
        name,
        kind,
        labels,
        help,
    }
}

use Kind::{Counter, Gauge, Histogram};

/// Every metric msgx exposes.
pub const CATALOG: &[MetricSpec] = &[
    // ingest (§4.1: the cost of holes must be watched)
    m(
        "msgx_ingest_watermark",
        Gauge,
        &[],
        "The watermark W (INBOX_CURSOR).",
    ),
    m(
        "msgx_ingest_watermark_lag_ids",
        Gauge,
        &[],
        "Highest mailbox ID minus W: rows not yet enqueued.",
    ),
    m(
        "msgx_ingest_hole_open",
        Gauge,
        &[],
        "1 while W waits at a hole (HOLE_SINCE set), else 0.",
    ),
    m(
        "msgx_ingest_hole_open_seconds",
        Gauge,
        &[],
        "How long W has waited at the current hole (0 when none).",
    ),
    m(
        "msgx_ingest_holes_released_total",
        Counter,
        &["reason"],
        "Permanent holes released (INBOX_HOLE rows), by the rule that released them.",
    ),
    m(
        "msgx_ingest_hole_evidence",
        Gauge,
        &["state"],
        "1 for the poller's last finding on transaction evidence for holes (valid, or why not: replica, galera, read-only, unverified, split, no-privilege, disabled, unknown), 0 for the others.",
    ),
    m(
        "msgx_ingest_late_rows_total",
        Counter,
        &[],
        "Mailbox rows found inside a released hole (INBOX_LATE_ROW rows).",
    ),
    m(
        "msgx_ingest_late_row_check_failures_total",
        Counter,
        &[],
        "Late-row re-checks of released holes that failed (the ingest run still succeeds).",
    ),
    m(
        "msgx_ingest_enqueued_total",
        Counter,
        &[],
        "Messages enqueued into PROC_STATE by this process.",
    ),
    // pipeline (§5)
    m(
        "msgx_pipeline_backlog_oldest_unprocessed_seconds",
        Gauge,
        &[],
        "Age of the oldest PENDING/FAILED message (design §5.1); 0 when none.",
    ),
    m(
        "msgx_pipeline_head_blocked_seconds",
        Gauge,
        &[],
        "How long the head has been failing (FAILED, backing off); 0 when it is not.",
    ),
    m(
        "msgx_pipeline_messages",
        Gauge,
        &["state"],
        "PROC_STATE rows by state.",
    ),
    m(
        "msgx_pipeline_messages_processed_total",
        Counter,
        &["outcome", "error_class"],
        "Messages processed by this process, by outcome and error class.",
    ),
    m(
        "msgx_pipeline_processing_duration_seconds",
        Histogram,
        &[],
        "Time to process one message (a group commit counts its mean per message).",
    ),
    m(
        "msgx_pipeline_flight_cache_total",
        Counter,
        &["result"],
        "Flights a group commit took from the pump's flight cache (hit) or loaded (miss).",
    ),
    m(
        "msgx_pipeline_tables_analyzed_total",
        Counter,
        &[],
        "Tables the pump analyzed because they doubled since their statistics.",
    ),
    m(
        "msgx_pipeline_analyze_failures_total",
        Counter,
        &[],
        "Growth checks or ANALYZEs of the pump that failed.",
    ),
    // end-to-end latency (crate::delivery::latency)
    m(
        "msgx_pipeline_end_to_end_seconds",
        Histogram,
        &[],
        "ENQUEUED_AT to SENT_AT of each KAFKA:msg event, on msgx's clock (once per event).",
    ),
    m(
        "msgx_pipeline_mailbox_to_kafka_seconds",
        Histogram,
        &["clock"],
        "Mailbox RECEIVED_AT (the AODB's clock, clock=\"external\") to SENT_AT of each KAFKA:msg event.",
    ),
    m(
        "msgx_pipeline_latency_clock_skew_total",
        Counter,
        &["clock"],
        "Latency observations recorded as 0 because their start was after SENT_AT (skewed clocks).",
    ),
    // codec (unknown elements are reported, not dropped)
    m(
        "msgx_codec_unknown_elements_total",
        Counter,
        &["kind", "name"],
        "Unknown elements, attributes (@NAME) and stray text (#text) kept by the codec, by TYPE-STYP and name (bounded labels).",
    ),
    // outbox (§8)
    m(
        "msgx_outbox_events",
        Gauge,
        &["target", "status"],
        "MSG_EVENT rows by target and status (PENDING, SENT, DEAD).",
    ),
    m(
        "msgx_outbox_oldest_unsent_seconds",
        Gauge,
        &["target"],
        "Age of the oldest PENDING event since its commit; 0 when none.",
    ),
    m(
        "msgx_outbox_delivery_latency_seconds",
        Histogram,
        &["target"],
        "From the event's commit to the broker's acknowledgement.",
    ),
    // backfill (§6)
    m(
        "msgx_backfill_pending",
        Gauge,
        &[],
        "Terminal messages whose mailbox mark is not yet written (not abandoned).",
    ),
    m(
        "msgx_backfill_due",
        Gauge,
        &[],
        "Of the pending, the rows the scan would select now.",
    ),
    m(
        "msgx_backfill_overdue",
        Gauge,
        &[],
        "Of the pending, the rows enqueued more than R ago.",
    ),
    m(
        "msgx_backfill_over_max_attempts",
        Gauge,
        &[],
        "Of the pending, the rows at or past backfill-max-attempts.",
    ),
    m(
        "msgx_backfill_abandoned",
        Gauge,
        &["reason"],
        "Abandoned backfills by reason (the mark is NOT written).",
    ),
    m(
        "msgx_backfill_abandoned_unreconciled",
        Gauge,
        &[],
        "Abandoned backfills no operator has reconciled yet.",
    ),
    m(
        "msgx_backfill_abandoned_total",
        Counter,
        &["reason"],
        "Backfills this process abandoned, by reason.",
    ),
    m(
        "msgx_backfill_marks_total",
        Counter,
        &["outcome"],
        "Mailbox marks confirmed by this process (written, already_marked).",
    ),
    m(
        "msgx_backfill_failures_total",
        Counter,
        &[],
        "Mark writes that failed (mailbox unreachable or failing).",
    ),
    m(
        "msgx_backfill_max_attempts_reached_total",
        Counter,
        &[],
        "Rows that reached backfill-max-attempts (still retried: an alert only).",
    ),
    // jobs
    m(
        "msgx_job_runs_total",
        Counter,
        &["job", "outcome"],
        "Job runs of this process by job and outcome.",
    ),
    m(
        "msgx_job_idle_runs_total",
        Counter,
        &["job"],
        "Daemon runs of a pipeline job that succeeded and found nothing: counted here, not written to JOB_RUN.",
    ),
    m(
        "msgx_job_run_write_failures_total",
        Counter,
        &[],
        "Failed writes of the daemon's queued JOB_RUN rows (each drops that write's rows).",
    ),
    m(
        "msgx_job_panics_total",
        Counter,
        &["job"],
        "Panics caught at a job run's boundary (the run is recorded FAILED).",
    ),
    m(
        "msgx_job_items_total",
        Counter,
        &["job"],
        "Items handled by this process's job runs.",
    ),
    m(
        "msgx_job_duration_seconds",
        Histogram,
        &["job"],
        "Duration of a job run.",
    ),
    m(
        "msgx_job_paused",
        Gauge,
        &["job"],
        "1 while an operator has the job paused (JOB_PAUSE, read on each scrape), else 0.",
    ),
    m(
        "msgx_job_last_success_timestamp_seconds",
        Gauge,
        &["job"],
        "When the job last succeeded (JOB_RUN of any process, or an unrecorded idle run of this daemon), Unix time.",
    ),
    // build
    m(
        "msgx_build_info",
        Gauge,
        &[
            "version",
            "commit",
            "build_date",
            "target",
            "features",
            "rustc",
            "librdkafka",
        ],
        "Always 1; the labels say what this binary is (as msgx --version).",
    ),
    // instance
    m(
        "msgx_instance_lock_held",
        Gauge,
        &[],
        "1 while this process holds the instance lock, else 0.",
    ),
    m(
        "msgx_console_up",
        Gauge,
        &[],
        "1 while this daemon's operator console serves, 0 when it is configured but could not start or stopped (the jobs run on).",
    ),
    m(
        "msgx_console_live_clients",
        Gauge,
        &[],
        "Live-view streams (server-sent events) the console holds open.",
    ),
    m(
        "msgx_console_live_refused_total",
        Counter,
        &[],
        "Live-view streams refused because the user already holds msgx.console.live.connections-per-user.",
    ),
    m(
        "msgx_scheduler_heartbeat_timestamp_seconds",
        Gauge,
        &[],
        "Last heartbeat of the scheduler loop, Unix time.",
    ),
    m(
        "msgx_collector_success",
        Gauge,
        &[],
        "1 when this scrape read PostgreSQL and the mailbox, else 0 (gauges are stale).",
    ),
    m(
        "msgx_http_responses_total",
        Counter,
        &["listener", "status"],
        "HTTP responses by listener (compat, ops) and status code, refusals included (401, 403, 408, 413, 429, 503).",
    ),
    m(
        "msgx_http_connections_dropped_total",
        Counter,
        &["listener", "reason"],
        "Connections closed without a response: header-timeout (slow or idle client), tls-handshake (refused or too slow), client-connections (the client holds msgx.http.max-connections-per-client), error.",
    ),
];

/// The HTTP listeners (`src/http/listener.rs` names them).
pub const HTTP_LISTENERS: [&str; 2] = ["compat", "ops"];
/// Why a connection was closed without a response.
pub const HTTP_DROP_REASONS: [&str; 4] = [
    "header-timeout",
    "tls-handshake",
    "client-connections",
    "error",
];

/// Outbox targets (statuses: [`EventStatus::ALL`]).
const TARGETS: [&str; 4] = [
    crate::domain::EventTarget::KafkaMsg.as_str(),
    crate::domain::EventTarget::KafkaSchd.as_str(),
    crate::domain::EventTarget::KafkaSeason.as_str(),
    crate::domain::EventTarget::KafkaAudit.as_str(),
];
/// Histogram buckets in seconds: a message takes milliseconds, a job run up to minutes.
const BUCKETS: [f64; 15] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0, 120.0, 600.0,
];

/// Buckets of the end-to-end latencies: edges at the
/// targets (p99 ≤ 250 ms at 20 msg/s, ≤ 750 ms at 200 msg/s, 1 s for the
/// alert), then seconds to minutes for a catch-up.
const END_TO_END_BUCKETS: [f64; 15] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

static HANDLE: Mutex<Option<PrometheusHandle>> = Mutex::new(None);

/// Installs the process-wide Prometheus recorder (once; later calls return
/// the same handle), describes every metric and registers the series whose
/// labels are known up front at 0, so `/metrics` shows them from the start.
pub fn install() -> Result<PrometheusHandle, BuildError> {
    let mut slot = HANDLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(h) = slot.as_ref() {
        return Ok(h.clone());
    }
    let mut builder = PrometheusBuilder::new().set_buckets(&BUCKETS)?;
    for name in [END_TO_END, MAILBOX_TO_KAFKA] {
        builder =
            builder.set_buckets_for_metric(Matcher::Full(name.into()), &END_TO_END_BUCKETS)?;
    }
    let handle = builder.install_recorder()?;
    describe();
    register_known_series();
    *slot = Some(handle.clone());
    Ok(handle)
}

fn describe() {
    for spec in CATALOG {
        match spec.kind {
            Counter => metrics::describe_counter!(spec.name, spec.help),
            Gauge => metrics::describe_gauge!(spec.name, spec.help),
            Histogram => metrics::describe_histogram!(spec.name, spec.help),
        }
    }
}

/// The processing outcomes with the error classes each can carry.
fn processed_series() -> Vec<(&'static str, &'static str)> {
    let mut out = vec![
        ("succeeded", "none"),
        ("skipped", "none"),
        ("already_terminal", "none"),
    ];
    for class in ErrorClass::ALL {
        out.push(("dead", class.as_str()));
        if class != ErrorClass::Exhausted {
            out.push(("failed", class.as_str()));
        }
    }
    out
}

fn register_known_series() {
    for (outcome, class) in processed_series() {
        metrics::counter!("msgx_pipeline_messages_processed_total", "outcome" => outcome, "error_class" => class)
            .increment(0);
    }
    metrics::counter!("msgx_ingest_enqueued_total").increment(0);
    metrics::counter!("msgx_ingest_late_row_check_failures_total").increment(0);
    // Its labels come from the messages; one series exists from the start.
    let other = crate::pipeline::unknown::OTHER;
    metrics::counter!("msgx_codec_unknown_elements_total", "kind" => other, "name" => other)
        .increment(0);
    for result in ["hit", "miss"] {
        metrics::counter!("msgx_pipeline_flight_cache_total", "result" => result).increment(0);
    }
    metrics::counter!("msgx_pipeline_tables_analyzed_total").increment(0);
    metrics::counter!("msgx_pipeline_analyze_failures_total").increment(0);
    // Registering a histogram (without a sample) exports it with zero counts.
    let _ = metrics::histogram!("msgx_pipeline_processing_duration_seconds");
    for target in TARGETS {
        let _ = metrics::histogram!("msgx_outbox_delivery_latency_seconds", "target" => target);
    }
    let _ = metrics::histogram!(END_TO_END);
    let _ = metrics::histogram!(MAILBOX_TO_KAFKA, "clock" => latency::CLOCKS[1]);
    for clock in latency::CLOCKS {
        metrics::counter!(latency::CLOCK_SKEW, "clock" => clock).increment(0);
    }
    for reason in [AbandonReason::MissingRow, AbandonReason::TransientDeadline] {
        metrics::counter!("msgx_backfill_abandoned_total", "reason" => reason.as_str())
            .increment(0);
    }
    for outcome in ["written", "already_marked"] {
        metrics::counter!("msgx_backfill_marks_total", "outcome" => outcome).increment(0);
    }
    metrics::counter!("msgx_backfill_failures_total").increment(0);
    metrics::counter!("msgx_backfill_max_attempts_reached_total").increment(0);
    for job in manifest::MANIFEST_SOURCES.iter().map(|(name, _)| *name) {
        for outcome in Outcome::FINISHED.map(Outcome::as_str) {
            metrics::counter!("msgx_job_runs_total", "job" => job, "outcome" => outcome)
                .increment(0);
        }
        metrics::counter!("msgx_job_items_total", "job" => job).increment(0);
        metrics::counter!("msgx_job_panics_total", "job" => job).increment(0);
        metrics::counter!("msgx_job_idle_runs_total", "job" => job).increment(0);
        metrics::gauge!("msgx_job_paused", "job" => job).set(0.0);
        let _ = metrics::histogram!("msgx_job_duration_seconds", "job" => job);
    }
    metrics::counter!("msgx_job_run_write_failures_total").increment(0);
    metrics::gauge!("msgx_instance_lock_held").set(0.0);
    let b = crate::build_info::get();
    metrics::gauge!(
        "msgx_build_info",
        "version" => b.version,
        "commit" => b.commit,
        "build_date" => b.build_date.clone(),
        "target" => b.target,
        "features" => b.features_text(),
        "rustc" => b.rustc,
        "librdkafka" => b.librdkafka.clone(),
    )
    .set(1.0);
    // Unknown until the poller first reads evidence (at the first hole).
    for state in EvidenceState::ALL {
        let on = state == EvidenceState::Unknown;
        metrics::gauge!("msgx_ingest_hole_evidence", "state" => state.as_str()).set(if on {
            1.0
        } else {
            0.0
        });
    }
    for listener in HTTP_LISTENERS {
        metrics::counter!("msgx_http_responses_total", "listener" => listener, "status" => "200")
            .increment(0);
        for reason in HTTP_DROP_REASONS {
            metrics::counter!("msgx_http_connections_dropped_total", "listener" => listener, "reason" => reason)
                .increment(0);
        }
    }
}

/// Why a refresh could not read everything.
#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Mailbox(#[from] crate::store::mailbox::MailboxError),
}

/// Reads the database state behind the gauges and sets them (the mailbox
/// only for the watermark lag: one `MAX(ID)` on its primary key). On an
/// error the gauges read so far are set and `msgx_collector_success` is 0.
///
/// `completed` is this daemon's last completion per job (idle runs are not
/// written to JOB_RUN): the last-success gauge is the later of it
/// and JOB_RUN's.
pub async fn refresh(
    pool: &PgPool,
    mailbox: &Mailbox,
    now: DateTime<Utc>,
    config: &Config,
    completed: &BTreeMap<String, DateTime<Utc>>,
) -> Result<(), RefreshError> {
    let result = async {
        let mut facts = status::pg_facts(pool, now, config).await?;
        for (job, at) in completed {
            let last = facts.last_success.entry(job.clone()).or_insert(*at);
            *last = (*last).max(*at);
        }
        set_pg_gauges(&facts, now);
        set_paused_gauges(&crate::store::pg::job_pause::all(pool).await?);
        let blocked = crate::store::pg::proc_state::head_failure(pool).await?;
        metrics::gauge!("msgx_pipeline_head_blocked_seconds")
            .set(blocked.map_or(0, |f| (now - f.since).num_seconds().max(0)) as f64);
        let (_, max_id) = mailbox.id_range().await?;
        metrics::gauge!("msgx_ingest_watermark_lag_ids")
            .set(max_id.map_or(0, |max| status::watermark_lag(max, facts.cursor.w)) as f64);
        Ok::<(), RefreshError>(())
    }
    .await;
    record_collect(result.is_ok());
    result
}

/// `msgx_job_paused`: 1 for each paused job, 0 for every other one (a
/// resume in another process shows at the next scrape).
fn set_paused_gauges(paused: &[crate::store::pg::job_pause::Pause]) {
    for job in manifest::MANIFEST_SOURCES.iter().map(|(name, _)| *name) {
        let on = paused.iter().any(|p| p.job == job);
        metrics::gauge!("msgx_job_paused", "job" => job).set(if on { 1.0 } else { 0.0 });
    }
}

/// Sets `msgx_collector_success` (also for a refresh cut short by a timeout).
pub fn record_collect(ok: bool) {
    metrics::gauge!("msgx_collector_success").set(if ok { 1.0 } else { 0.0 });
}

fn set_pg_gauges(f: &PgFacts, now: DateTime<Utc>) {
    metrics::gauge!("msgx_ingest_watermark").set(f.cursor.w as f64);
    metrics::gauge!("msgx_ingest_hole_open").set(if f.cursor.hole_since.is_some() {
        1.0
    } else {
        0.0
    });
    metrics::gauge!("msgx_ingest_hole_open_seconds").set(
        f.cursor
            .hole_since
            .map_or(0, |t| (now - t).num_seconds().max(0)) as f64,
    );
    // Both reasons are exported (0 when absent), so a rate over either works.
    for reason in ReleaseReason::ALL.map(ReleaseReason::as_str) {
        metrics::counter!("msgx_ingest_holes_released_total", "reason" => reason).absolute(
            u64::try_from(f.holes_by_reason.get(reason).copied().unwrap_or(0)).unwrap_or(0),
        );
    }
    metrics::counter!("msgx_ingest_late_rows_total")
        .absolute(u64::try_from(f.late_rows).unwrap_or(0));
    metrics::gauge!("msgx_pipeline_backlog_oldest_unprocessed_seconds")
        .set(f.oldest_unprocessed_seconds.unwrap_or(0) as f64);
    // Every PROC_STATE state is exported (0 when absent).
    for state in ProcState::ALL.map(ProcState::as_str) {
        metrics::gauge!("msgx_pipeline_messages", "state" => state)
            .set(f.proc_state.get(state).copied().unwrap_or(0) as f64);
    }
    for target in TARGETS {
        let by = f.outbox.get(target);
        for st in EventStatus::ALL.map(EventStatus::as_str) {
            let n = by.and_then(|b| b.get(st)).copied().unwrap_or(0);
            metrics::gauge!("msgx_outbox_events", "target" => target, "status" => st).set(n as f64);
        }
        metrics::gauge!("msgx_outbox_oldest_unsent_seconds", "target" => target)
            .set(f.oldest_unsent_seconds.get(target).copied().unwrap_or(0) as f64);
    }
    let b = &f.backfill;
    metrics::gauge!("msgx_backfill_pending").set(b.pending as f64);
    metrics::gauge!("msgx_backfill_due").set(b.due as f64);
    metrics::gauge!("msgx_backfill_overdue").set(b.overdue as f64);
    metrics::gauge!("msgx_backfill_over_max_attempts").set(b.over_max_attempts as f64);
    for (reason, n) in &b.abandoned {
        metrics::gauge!("msgx_backfill_abandoned", "reason" => reason.clone()).set(*n as f64);
    }
    metrics::gauge!("msgx_backfill_abandoned_unreconciled").set(b.abandoned_unreconciled as f64);
    for (job, at) in &f.last_success {
        metrics::gauge!("msgx_job_last_success_timestamp_seconds", "job" => job.clone())
            .set(at.timestamp() as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_follows_the_naming_rule() {
        let areas = [
            "ingest",
            "codec",
            "pipeline",
            "outbox",
            "backfill",
            "job",
            "instance",
            "scheduler",
            "collector",
            "http",
            "console",
            "build",
        ];
        let mut seen = std::collections::BTreeSet::new();
        for s in CATALOG {
            assert!(seen.insert(s.name), "{} listed twice", s.name);
            let rest = s.name.strip_prefix("msgx_").expect("msgx_ prefix");
            let area = rest.split('_').next().unwrap_or_default();
            assert!(areas.contains(&area), "{}: unknown area {area}", s.name);
            assert!(
                s.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{} is not snake_case",
                s.name
            );
            assert_eq!(
                s.name.ends_with("_total"),
                s.kind == Counter,
                "{}: counters, and only counters, end in _total",
                s.name
            );
            if s.kind == Histogram {
                assert!(s.name.ends_with("_seconds"), "{}: base unit", s.name);
            }
        }
        assert!(seen.contains("msgx_pipeline_backlog_oldest_unprocessed_seconds"));
    }

    #[test]
    fn docs_list_exactly_the_catalog() {
        let doc = include_str!("../docs/metrics.md");
        let documented = documented_metrics(doc);
        let mut catalog: Vec<(String, String, String)> = CATALOG
            .iter()
            .map(|s| {
                (
                    s.name.to_string(),
                    s.kind.as_str().to_string(),
                    s.labels.join(", "),
                )
            })
            .collect();
        catalog.sort();
        assert_eq!(documented, catalog, "docs/metrics.md and CATALOG differ");
    }

    /// `(name, type, labels)` of every row of the doc's metric tables.
    fn documented_metrics(doc: &str) -> Vec<(String, String, String)> {
        let mut out: Vec<(String, String, String)> = doc
            .lines()
            .filter(|l| l.starts_with("| `msgx_"))
            .map(|l| {
                let cells: Vec<String> = l.split('|').map(|c| c.trim().replace('`', "")).collect();
                let labels = if cells[3] == "—" {
                    String::new()
                } else {
                    cells[3].clone()
                };
                (cells[1].clone(), cells[2].clone(), labels)
            })
            .collect();
        out.sort();
        out
    }
}
