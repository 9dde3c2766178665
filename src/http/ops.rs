//! The operator endpoints the daemon serves on `msgx.http.metrics-listen`
//! (docs/operations.md, docs/metrics.md):
//!
//! | path | 200 when | 503 when |
//! |---|---|---|
//! | `/metrics` | always: Prometheus text; the database gauges are read first, within `msgx.http.probe-timeout` | — (a failed read sets `msgx_collector_success 0`) |
//! | `/healthz` | the scheduler heartbeat is younger than `msgx.http.health-max-age` | the loop is stuck or dead: restart the process |
//! | `/readyz` | this process holds the instance lock, PostgreSQL and the mailbox answer, W has advanced recently or nothing waits beyond it, the head is not failing for longer than `msgx.pipeline.head-blocked-alert`, and every scheduled job completed a run within its schedule (`jobs::supervision`) | any check fails; the JSON body names it (an overdue job by name) |
//!
//! The two health answers are kept apart on purpose: a hot standby is
//! alive (200 on `/healthz`) but not ready (503 on `/readyz`: it does not
//! hold the lock), and an active daemon whose mailbox is down is alive but
//! not ready — restarting it would not help. All times come from the Clock.

use crate::clock::SharedClock;
use crate::config::{Config, Dur};
use crate::instance_lock::AdvisoryLock;
use crate::store::mailbox::Mailbox;
use crate::store::pg::{inbox, proc_state};
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};
use metrics_exporter_prometheus::PrometheusHandle;
use serde::Serialize;
use sqlx::PgPool;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

/// The scheduler loop's last sign of life.
#[derive(Debug, Default)]
pub struct Heartbeat {
    last: Mutex<Option<DateTime<Utc>>>,
}

impl Heartbeat {
    /// Records a beat at `now`.
    pub fn beat(&self, now: DateTime<Utc>) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
    }
    /// The last beat, if any.
    pub fn last(&self) -> Option<DateTime<Utc>> {
        *self.last.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The instance lock once this process holds it (a standby has none yet).
pub type LockSlot = Arc<OnceLock<Arc<AdvisoryLock>>>;

/// The daemon's job supervision once it is active.
pub type JobsSlot = Arc<OnceLock<Arc<crate::jobs::supervision::JobWatch>>>;

/// The operator console of a daemon that serves one: whether it serves, or why
/// not. A console that cannot start or stops serving never stops the jobs: it
/// is shown as `/readyz`'s `console` check (not counted in `ready`: the feed
/// is unaffected) and by the `msgx_console_up` gauge.
#[derive(Debug, Default)]
pub struct ConsoleHealth {
    state: Mutex<Option<Result<String, String>>>,
}

impl ConsoleHealth {
    /// The console serves on `addr`.
    pub fn serving(&self, addr: &str) {
        self.set(Ok(format!("serving on {addr}")));
    }
    /// The console does not serve, for `why`.
    pub fn failed(&self, why: String) {
        self.set(Err(why));
    }
    fn set(&self, state: Result<String, String>) {
        metrics::gauge!("msgx_console_up").set(if state.is_ok() { 1.0 } else { 0.0 });
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
    }
    /// `None`: no console configured (or not tried yet).
    pub fn state(&self) -> Option<Result<String, String>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// What the handlers need.
#[derive(Clone)]
pub struct OpsState {
    pub pg: PgPool,
    pub mailbox: Mailbox,
    pub clock: SharedClock,
    pub config: Arc<Config>,
    pub heartbeat: Arc<Heartbeat>,
    pub lock: LockSlot,
    pub jobs: JobsSlot,
    /// The daemon's console, when it serves one.
    pub console: Arc<ConsoleHealth>,
    /// The installed recorder (`crate::prometheus::install`).
    pub metrics: PrometheusHandle,
}

/// The router.
pub fn router(state: OpsState) -> Router {
    Router::new()
        .route("/metrics", get(metrics_page))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(state)
}

/// Serves on an already bound listener until `stop` turns true, with the
/// listener limits of `msgx.http` (timeouts, concurrency, rate;
/// [`super::listener`]), so slow or flooding clients cannot starve the probes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: OpsState,
    stop: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    let limits = super::listener::Limits::from_config(&state.config.msgx.http);
    super::listener::serve("ops", listener, None, router(state), limits, stop).await
}

/// Runs `f` within `limit`; a timeout is an error naming the bound.
async fn bounded<T, E: std::fmt::Display>(
    limit: Dur,
    f: impl Future<Output = Result<T, E>>,
) -> Result<T, String> {
    match tokio::time::timeout(limit.std(), f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "no answer within {limit} (msgx.http.probe-timeout)"
        )),
    }
}

async fn metrics_page(State(s): State<OpsState>) -> Response {
    let now = s.clock.now();
    let limit = s.config.msgx.http.probe_timeout;
    let completed = s
        .jobs
        .get()
        .map(|watch| watch.last_completions())
        .unwrap_or_default();
    let refresh = crate::prometheus::refresh(&s.pg, &s.mailbox, now, &s.config, &completed);
    if let Err(e) = bounded(limit, refresh).await {
        crate::prometheus::record_collect(false);
        tracing::warn!(error = %e, "Metrics: database gauges not refreshed (stale values shown)");
    }
    let held = s.lock.get().is_some_and(|l| !l.is_lost());
    metrics::gauge!("msgx_instance_lock_held").set(if held { 1.0 } else { 0.0 });
    // 0 = never beat (an age alert fires, as it should).
    metrics::gauge!("msgx_scheduler_heartbeat_timestamp_seconds")
        .set(s.heartbeat.last().map_or(0, |t| t.timestamp()) as f64);
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        s.metrics.render(),
    )
        .into_response()
}

/// The `/healthz` answer.
#[derive(Debug, Serialize)]
struct Health {
    alive: bool,
    heartbeat: Option<DateTime<Utc>>,
    heartbeat_age_seconds: Option<i64>,
    max_age_seconds: u64,
}

async fn healthz(State(s): State<OpsState>) -> Response {
    let now = s.clock.now();
    let max = s.config.msgx.http.health_max_age;
    let last = s.heartbeat.last();
    let age = last.map(|t| now - t);
    let alive = age.is_some_and(|a| a <= max.chrono());
    let body = Health {
        alive,
        heartbeat: last,
        heartbeat_age_seconds: age.map(|a| a.num_seconds()),
        max_age_seconds: max.std().as_secs(),
    };
    (status_of(alive), axum::Json(body)).into_response()
}

/// One readiness check.
#[derive(Debug, Serialize)]
struct Check {
    ok: bool,
    detail: String,
}

impl From<Result<String, String>> for Check {
    fn from(r: Result<String, String>) -> Self {
        match r {
            Ok(detail) => Check { ok: true, detail },
            Err(detail) => Check { ok: false, detail },
        }
    }
}

async fn readyz(State(s): State<OpsState>) -> Response {
    let limit = s.config.msgx.http.probe_timeout;
    let lock = async {
        match s.lock.get() {
            None => Err("not held: this process is a standby or still starting".to_string()),
            Some(l) => match tokio::time::timeout(limit.std(), l.check()).await {
                Ok(true) => Ok(format!("held (lock session pid {})", l.pid())),
                Ok(false) => Err("lost: the lock session is gone; the daemon exits".to_string()),
                Err(_) => Err(format!("lock session did not answer within {limit}")),
            },
        }
    };
    let pg = bounded(limit, crate::store::pg::server_ping(&s.pg));
    let mb = bounded(limit, s.mailbox.id_range());
    let cursor = bounded(limit, inbox::load(&s.pg));
    let (lock, pg, mb, cursor) = tokio::join!(lock, pg, mb, cursor);
    let now = s.clock.now();
    let watermark = match (&mb, &cursor) {
        (Ok((_, max_id)), Ok(c)) => watermark_ready(
            *max_id,
            c.cursor.w,
            c.updated_at,
            now,
            s.config.msgx.http.watermark_stall.chrono(),
        ),
        (Err(_), _) => Err("unknown: the mailbox cannot be read".into()),
        (_, Err(_)) => Err("unknown: INBOX_CURSOR cannot be read".into()),
    };
    let mut checks = BTreeMap::new();
    checks.insert("instance_lock", Check::from(lock));
    checks.insert("postgres", Check::from(pg.map(|_| "reachable".to_string())));
    checks.insert(
        "mailbox",
        Check::from(mb.map(|(_, max)| match max {
            Some(id) => format!("reachable, highest ID {id}"),
            None => "reachable, empty".into(),
        })),
    );
    checks.insert("watermark", Check::from(watermark));
    let jobs = match s.jobs.get() {
        Some(watch) => watch.check(now),
        None => Ok("no jobs scheduled by this process yet".to_string()),
    };
    checks.insert("jobs", Check::from(jobs));
    let alert = s.config.msgx.pipeline.head_blocked_alert;
    let failing = bounded(limit, proc_state::head_failure(&s.pg)).await;
    checks.insert("head", Check::from(head_ready(failing, now, alert)));
    let ready = checks.values().all(|c| c.ok);
    // Shown, not counted: a console problem is the operators', never the
    // feed's.
    if let Some(console) = s.console.state() {
        checks.insert("console", Check::from(console));
    }
    // Shown, not counted: a pause is an operator's decision, not a fault
    // (a paused job is not overdue either).
    let paused = bounded(limit, crate::store::pg::job_pause::all(&s.pg)).await;
    checks.insert("paused_jobs", Check::from(paused_detail(paused)));
    let degraded: Vec<&str> = checks
        .iter()
        .filter(|(_, c)| !c.ok && ready)
        .map(|(k, _)| *k)
        .collect();
    (
        status_of(ready),
        axum::Json(serde_json::json!({"ready": ready, "degraded": degraded, "checks": checks})),
    )
        .into_response()
}

/// The `paused_jobs` detail: `none`, or each paused job with who, since
/// and why.
fn paused_detail(
    paused: Result<Vec<crate::store::pg::job_pause::Pause>, String>,
) -> Result<String, String> {
    let paused = paused.map_err(|e| format!("unknown: JOB_PAUSE cannot be read: {e}"))?;
    if paused.is_empty() {
        return Ok("none".into());
    }
    let each: Vec<String> = paused
        .iter()
        .map(|p| format!("{} {}", p.job, crate::jobs::control::describe(p)))
        .collect();
    Ok(each.join(" | "))
}

fn status_of(ok: bool) -> StatusCode {
    if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

/// The watermark part of readiness: nothing waits beyond W, or W (or its
/// hole timer) moved within `stall`. `updated_at` is INBOX_CURSOR.UPDATED_AT,
/// written only when W or HOLE_SINCE changes; `stall` exceeds
/// `max-commit-delay`, so waiting out a hole (§4.1) is not a stall.
pub fn watermark_ready(
    max_id: Option<i64>,
    w: i64,
    updated_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    stall: chrono::Duration,
) -> Result<String, String> {
    let lag = max_id.map_or(0, |max| crate::status::watermark_lag(max, w));
    if lag == 0 {
        return Ok(format!("W = {w}, nothing to read"));
    }
    match updated_at {
        Some(t) if now - t <= stall => Ok(format!(
            "W = {w}, {lag} row(s) beyond it, W moved {}s ago",
            (now - t).num_seconds().max(0)
        )),
        Some(t) => Err(format!(
            "stalled: W = {w} has not moved for {}s while {lag} row(s) wait beyond it",
            (now - t).num_seconds()
        )),
        None => Err(format!(
            "stalled: W = {w} has never moved while {lag} row(s) wait beyond it (is ingest-sweep scheduled?)"
        )),
    }
}

/// The head part of readiness: unready once the head has
/// been failing for `alert` (`msgx.pipeline.head-blocked-alert`). Every later
/// message waits behind it (strict FIFO); an INFRA head is never given up,
/// so this check is what tells an operator that an outage holds the feed.
pub fn head_ready(
    failing: Result<Option<proc_state::HeadFailure>, String>,
    now: DateTime<Utc>,
    alert: Dur,
) -> Result<String, String> {
    let Some(f) = failing.map_err(|e| format!("unknown: the head cannot be read: {e}"))? else {
        return Ok("not failing".into());
    };
    let secs = (now - f.since).num_seconds().max(0);
    let class = f.error_class.as_deref().unwrap_or("?");
    if now - f.since < alert.chrono() {
        return Ok(format!(
            "head {} failing for {secs}s ({class}, {} attempt(s)), alert after {alert}",
            f.msg_id, f.attempts
        ));
    }
    Err(format!(
        "blocked: head {} has been failing for {secs}s ({class}, {} attempt(s)): {}; every later message waits",
        f.msg_id,
        f.attempts,
        f.last_error.as_deref().unwrap_or("")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ErrorClass;
    use chrono::{Duration, TimeZone};

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0)
            .single()
            .expect("valid")
    }

    #[test]
    fn nothing_to_read_is_ready_however_old_w_is() {
        let stall = Duration::minutes(2);
        assert!(watermark_ready(Some(10), 10, None, t0(), stall).is_ok());
        assert!(watermark_ready(None, 0, None, t0(), stall).is_ok());
        // A seeded W above the mailbox's highest ID.
        assert!(watermark_ready(Some(5), 9, None, t0(), stall).is_ok());
    }

    #[test]
    fn a_head_failing_past_the_alert_is_unready() {
        let alert = Dur::mins(5);
        let failing = |secs| {
            Ok(Some(proc_state::HeadFailure {
                msg_id: 7,
                error_class: Some(ErrorClass::Infra.as_str().into()),
                attempts: 12,
                last_error: Some("cannot read raw message".into()),
                since: t0() - Duration::seconds(secs),
            }))
        };
        assert!(head_ready(Ok(None), t0(), alert).is_ok());
        assert!(head_ready(failing(299), t0(), alert).is_ok());
        let err = head_ready(failing(300), t0(), alert).unwrap_err();
        assert!(
            err.contains("head 7") && err.contains(ErrorClass::Infra.as_str()),
            "{err}"
        );
        assert!(head_ready(Err("timeout".into()), t0(), alert).is_err());
    }

    #[test]
    fn rows_beyond_w_need_a_recent_move() {
        let stall = Duration::minutes(2);
        let moved = t0() - Duration::seconds(30);
        assert!(watermark_ready(Some(12), 10, Some(moved), t0(), stall).is_ok());
        assert!(watermark_ready(Some(12), 10, Some(t0() - stall), t0(), stall).is_ok());
        let old = t0() - stall - Duration::seconds(1);
        let err = watermark_ready(Some(12), 10, Some(old), t0(), stall).unwrap_err();
        assert!(err.contains("2 row(s)"), "{err}");
        assert!(watermark_ready(Some(12), 10, None, t0(), stall).is_err());
    }
}
