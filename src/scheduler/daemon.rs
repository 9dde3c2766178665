//! The scheduler daemon: takes the instance lock (or waits for it as a hot
//! standby), loads a schedule profile and runs each job at its cron times —
//! or, for a `"poll"` job, at the adaptive poll cadence — through the one
//! [`JobRunner`] path, and a run that handled items starts the profile's
//! `[then]` jobs at once. Never overlaps two runs of the
//! same job. On SIGINT/SIGTERM it lets the running bounded batch finish within
//! `msgx.daemon.shutdown-timeout`; on lock loss it stops at once.

use crate::clock::SharedClock;
use crate::config::Config;
use crate::exit::Exit;
use crate::http::ops::{self, ConsoleHealth, Heartbeat, JobsSlot, LockSlot, OpsState};
use crate::instance_lock::{self, AdvisoryLock, LockGuard, LockKey};
use crate::jobs::Handoff;
use crate::jobs::manifest::{self, JobClass};
use crate::jobs::profile::{JobSchedule, Profile};
use crate::jobs::supervision::JobWatch;
use crate::pipeline::identity;
use crate::scheduler::cadence::{PollCadence, Polled};
use crate::scheduler::registry;
use crate::scheduler::run_log::RunLog;
use crate::scheduler::runner::{JobRunner, RunError, RunOptions, Trigger};
use crate::store::mailbox::{Mailbox, MailboxError};
use crate::store::pg;
use crate::store::pg::job_run::Outcome;
use futures_util::FutureExt;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tokio_cron_scheduler::{Job as CronJob, JobScheduler};

/// `msgx daemon` options.
#[derive(Debug, Clone, Default)]
pub struct DaemonOptions {
    /// Wait for the instance lock instead of exiting.
    pub standby: bool,
    /// Overrides `msgx.daemon.schedule`.
    pub schedule: Option<String>,
}

type BoxFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Shared state of the running daemon.
struct Inner {
    runner: JobRunner,
    guard: LockGuard,
    running: BTreeMap<String, AtomicBool>,
    /// A chained start (`[then]`) arrived while the job was running: run it
    /// once more when the current run ends, so no handed-over work waits for
    /// the next cron tick.
    again: BTreeMap<String, AtomicBool>,
    /// The profile's `[then]` table.
    then: BTreeMap<String, Vec<String>>,
    /// The pipeline-class jobs: a run of one that stopped at its bound with
    /// work left starts again at once (see [`Inner::tick_inner`]).
    pipeline: std::collections::BTreeSet<String>,
    stopping: AtomicBool,
    heartbeat: Arc<Heartbeat>,
    /// Whether each job keeps up with its schedule (`/readyz`).
    watch: Arc<JobWatch>,
}

/// Clears a job's running flag when the run ends, also by a panic, so a
/// panicking run never leaves its job skipped forever.
struct RunningFlag<'a>(&'a AtomicBool);

impl Drop for RunningFlag<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// The scheduler's own heartbeat job: every second, so `/healthz` proves the
/// cron loop still ticks (not merely that the process exists).
const HEARTBEAT_CRON: &str = "* * * * * *";

impl Inner {
    /// One start of `job` (a cron tick, or `chained` from `[then]`): skip when
    /// a run is still going (no overlap; a chained start is remembered and run
    /// afterwards), when stopping, or when the lock is gone. A run that
    /// handled items starts its `[then]` jobs.
    /// (A boxed `dyn Future + Send`: it spawns itself for chained jobs.)
    fn tick(self: Arc<Self>, job: String, chained: bool) -> BoxFuture {
        Box::pin(async move {
            self.tick_inner(job, chained).await;
        })
    }

    /// [`Inner::tick`], telling what the last run came to (the poll loop's
    /// cadence adapts to it); `None` when stopping.
    async fn tick_inner(self: Arc<Self>, job: String, chained: bool) -> Option<Polled> {
        let (Some(flag), Some(again)) = (self.running.get(&job), self.again.get(&job)) else {
            return None;
        };
        let mut chained = chained;
        loop {
            if self.stopping.load(Ordering::SeqCst) || !self.guard.is_active() {
                return None;
            }
            if flag.swap(true, Ordering::SeqCst) {
                if chained {
                    again.store(true, Ordering::SeqCst);
                    // The run may have ended between the swap and the store,
                    // without seeing `again`: then try to start it here.
                    if !flag.load(Ordering::SeqCst) {
                        continue;
                    }
                }
                tracing::debug!(job, "Previous run still going; tick skipped");
                return Some(Polled::Busy);
            }
            let running = RunningFlag(flag);
            self.watch.started(&job, self.runner.clock.now());
            let opts = RunOptions {
                handoff: self.handoff(&job),
                ..RunOptions::default()
            };
            let run = self.runner.run(&job, &opts, Some(&self.guard));
            // The runner contains a panic inside the job's passes; this
            // catches one in the code around them (lock, JOB_RUN writes).
            let result = std::panic::AssertUnwindSafe(run).catch_unwind().await;
            let mut more = false;
            let (items, error) = match result {
                Ok(Ok(summary)) => {
                    more = summary.more;
                    let error = match summary.outcome {
                        Outcome::Succeeded | Outcome::SkippedLocked => None,
                        other => Some(format!(
                            "{}: {}",
                            other.as_str(),
                            summary.error.as_deref().unwrap_or("no error recorded")
                        )),
                    };
                    (summary.items, error)
                }
                Ok(Err(RunError::Locked { holder, .. })) => {
                    tracing::info!(job, %holder, "Job lock held elsewhere; run skipped and recorded");
                    (0, None)
                }
                // Paused by an operator: not a failure, and not overdue
                // (`/readyz` lists the pause instead); its `[then]` jobs
                // keep their own schedule.
                Ok(Err(RunError::Paused { pause, .. })) => {
                    tracing::debug!(job, paused_by = %pause.paused_by, "Job paused; scheduled start skipped");
                    (0, None)
                }
                Ok(Err(e)) => {
                    tracing::error!(job, error = %e, "Job could not run");
                    (0, Some(e.to_string()))
                }
                Err(payload) => {
                    let message = crate::jobs::passes::panic_message(payload.as_ref());
                    metrics::counter!("msgx_job_panics_total", "job" => job.clone()).increment(1);
                    tracing::error!(job, panic = %message, "Job run panicked outside its passes; the next tick runs again");
                    (0, Some(format!("panicked: {message}")))
                }
            };
            let polled = if error.is_some() {
                Polled::Failed
            } else {
                Polled::Ran { items }
            };
            self.watch.finished(&job, self.runner.clock.now(), error);
            drop(running);
            // A job that hands its commits over (ingest, the pump) started
            // its `[then]` jobs already; any other does it at its end.
            if items > 0 && !opts.handoff.used() {
                self.start_then(&job);
            }
            // Checked after clearing the flag: a chained start that saw the
            // flag set has stored `again` by now; a later one runs itself.
            let handed_over = again.swap(false, Ordering::SeqCst);
            // A pipeline job that stopped at its bound with work left (a
            // backlog) runs again at once instead of at its next tick: a
            // 2,000-message pump-drain run waited up to a second for the
            // next `*/1` tick, 10–25 % of a backlog drain
            // (docs/BENCHMARKS.md). Only after progress (items > 0), so a run
            // that reports work it cannot do yet never spins; maintenance
            // jobs keep their bound per tick.
            let backlog = more
                && items > 0
                && matches!(polled, Polled::Ran { .. })
                && self.pipeline.contains(&job);
            if !handed_over && !backlog {
                return Some(polled);
            }
            chained = true;
        }
    }

    /// Starts `job`'s `[then]` jobs now (each skips or queues itself when
    /// already running).
    fn start_then(self: &Arc<Self>, job: &str) {
        for next in self.then.get(job).into_iter().flatten() {
            tokio::spawn(self.clone().tick(next.clone(), true));
        }
    }

    /// What a run of `job` calls after each commit that left work for the
    /// next stage: its `[then]` jobs start at once (none: a no-op).
    fn handoff(self: &Arc<Self>, job: &str) -> Handoff {
        if self.then.get(job).is_none_or(|next| next.is_empty()) {
            return Handoff::default();
        }
        let (inner, job) = (self.clone(), job.to_string());
        Handoff::new(move || inner.start_then(&job))
    }

    /// Runs a `"poll"` job for the daemon's life: one
    /// start through [`Inner::tick`] (so the no-overlap rule, the chaining
    /// and the lock checks are the cron path's), then the wait
    /// [`PollCadence`] gives for what the run found. A task of its own
    /// rather than a tokio-cron-scheduler job: that scheduler's ticker wakes
    /// every 500 ms, the old latency floor.
    async fn poll(self: Arc<Self>, job: String, mut stop: watch::Receiver<bool>) {
        let mut cadence = PollCadence::new(self.runner.config.msgx.pipeline.poll_interval);
        loop {
            let Some(last) = self.clone().tick_inner(job.clone(), false).await else {
                return;
            };
            let wait = cadence.after(last);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop.changed() => return,
            }
        }
    }

    fn any_running(&self) -> bool {
        self.running.values().any(|f| f.load(Ordering::SeqCst))
    }
}

/// Runs the daemon until a signal or lock loss; returns the exit code.
pub async fn run(config: Arc<Config>, clock: SharedClock, opts: DaemonOptions) -> Exit {
    let signal = ShutdownSignal::install();
    let profile_name = opts
        .schedule
        .clone()
        .unwrap_or_else(|| config.msgx.daemon.schedule.clone());
    let profile = match Profile::resolve(&profile_name) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx daemon: {e}");
            return Exit::Config;
        }
    };
    if let problems @ [_, ..] = profile.problems().as_slice() {
        eprintln!(
            "msgx daemon: schedule {} is invalid: {}",
            profile.origin,
            problems.join("; ")
        );
        return Exit::Config;
    }
    let pool = match pg::connect(&config.msgx.postgres).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("msgx daemon: cannot connect to PostgreSQL: {e}");
            return Exit::Failure;
        }
    };
    if let Err(e) = pg::ensure_schema_current(&pool).await {
        eprintln!("msgx daemon: {e}");
        return Exit::Failure;
    }
    // §2: the identity algorithm is recorded at the first start and may not
    // change later (a standby checks it too, before it may take over).
    let by = format!("daemon {}", instance_name());
    let include_day = config.msgx.identity.include_day_boundary;
    match identity::ensure_recorded(&pool, include_day, clock.now(), &by).await {
        Ok(_) => {}
        Err(e @ identity::IdentityError::Db(_)) => {
            eprintln!("msgx daemon: {e}");
            return Exit::Failure;
        }
        Err(e) => {
            eprintln!("msgx daemon: {e}");
            return Exit::Config;
        }
    }

    let mailbox = match Mailbox::new(&config.msgx.mailbox) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("msgx daemon: {e}");
            return Exit::Config;
        }
    };
    // A missing mailbox table or column is a site/configuration error that no
    // retry fixes: refuse to start. An unreachable mailbox
    // is an outage: start, and let the jobs retry.
    match mailbox.inbox().await {
        Ok(t) => tracing::info!(table = %t, "Mailbox inbound table resolved"),
        Err(e @ MailboxError::Schema(_)) => {
            eprintln!("msgx daemon: {e}");
            return Exit::Config;
        }
        Err(e) => tracing::warn!(error = %e, "Mailbox not reachable at start; the jobs will retry"),
    }
    let instance = instance_name();
    let app = format!("msgx daemon {instance}");
    let (stop_tx, stop_rx) = watch::channel(false);
    let heartbeat = Arc::new(Heartbeat::default());
    heartbeat.beat(clock.now());
    let lock_slot = LockSlot::default();
    let jobs_slot = JobsSlot::default();
    let console_health = Arc::new(ConsoleHealth::default());
    // The ops endpoints come up before the lock: a standby is alive, not ready.
    if let Some(listen) = config.msgx.http.metrics_listen.clone() {
        let state = OpsContext {
            pool: &pool,
            mailbox: &mailbox,
            clock: &clock,
            config: &config,
            heartbeat: &heartbeat,
            lock: &lock_slot,
            jobs: &jobs_slot,
            console: &console_health,
        };
        if let Err(e) = start_ops(&listen, state, stop_rx.clone()).await {
            eprintln!("msgx daemon: cannot serve msgx.http.metrics-listen {listen}: {e}");
            return Exit::Failure;
        }
    }
    // The console too: a standby daemon serves it (read from the shared
    // database), so an operator can look before and after a takeover. A
    // console that cannot start is logged and shown (`/readyz` check
    // `console`, `msgx_console_up`), never a reason to stop the feed.
    if let Some(listen) = config.msgx.console.listen.clone() {
        let runner = JobRunner::manual(
            pool.clone(),
            mailbox.clone(),
            config.clone(),
            clock.clone(),
            instance_name(),
            stop_rx.clone(),
        );
        let launcher: Arc<dyn crate::console::JobLauncher> = Arc::new(runner);
        let parts = (config.clone(), mailbox.clone(), clock.clone());
        start_console(&listen, parts, launcher, &console_health, stop_rx.clone()).await;
    }
    // The ACRIS flight API as well: read-only, so a standby serves it too;
    // one that cannot start is logged, never a reason to stop the feed.
    if let Some(listen) = config.msgx.acris.listen.clone() {
        start_acris(&listen, &config, clock.clone(), stop_rx.clone()).await;
    }
    let lock = match acquire_instance(
        &config,
        &pool,
        &app,
        opts.standby,
        (stop_rx.clone(), &signal),
        (&heartbeat, &clock),
    )
    .await
    {
        Ok(Some(lock)) => Arc::new(lock),
        Ok(None) => return Exit::Ok, // stopped while standing by
        Err(code) => return code,
    };
    heartbeat.beat(clock.now());
    let _ = lock_slot.set(lock.clone());
    metrics::gauge!("msgx_instance_lock_held").set(1.0);
    tracing::info!(pid = lock.pid(), profile = %profile.origin, "Instance lock taken: this daemon is active");
    tokio::spawn(
        lock.clone()
            .watch(config.msgx.daemon.lock_check_interval.std()),
    );

    let mut running = BTreeMap::new();
    let mut again = BTreeMap::new();
    for job in profile.jobs.keys() {
        if registry::is_implemented(job) {
            running.insert(job.clone(), AtomicBool::new(false));
            again.insert(job.clone(), AtomicBool::new(false));
        } else {
            tracing::warn!(job, "Scheduled job is not implemented yet; not scheduled");
        }
    }
    let watch = Arc::new(JobWatch::new(
        clock.now(),
        config.msgx.daemon.job_overdue_margin.chrono(),
        config.msgx.pipeline.poll_interval.idle.chrono(),
        running.keys().filter_map(|job| {
            let cron = profile.jobs.get(job)?;
            let budget = manifest::find(job)?.bounds.time_budget.chrono();
            Some((job.as_str(), cron.as_str(), budget))
        }),
    ));
    let _ = jobs_slot.set(watch.clone());
    let pipeline = running
        .keys()
        .filter(|job| manifest::find(job).is_some_and(|m| m.class == JobClass::Pipeline))
        .cloned()
        .collect();
    let run_log = RunLog::start(pool.clone());
    let inner = Arc::new(Inner {
        runner: JobRunner {
            pg: pool.clone(),
            mailbox,
            config: config.clone(),
            clock,
            instance,
            trigger: Trigger::Daemon,
            shutdown: stop_rx.clone(),
            kafka: Default::default(),
            jobs: Default::default(),
            pauses: Default::default(),
            run_log: Some(run_log.clone()),
        },
        guard: lock.guard(),
        running,
        again,
        then: profile.then.clone(),
        pipeline,
        stopping: AtomicBool::new(false),
        heartbeat: heartbeat.clone(),
        watch,
    });

    // The compat entry fails the start like the ops endpoints: an operator
    // who configured it (and its authentication) must not run without it.
    if let Some(listen) = config.msgx.http.compat_listen.clone() {
        let state = crate::http::compat::CompatState {
            pg: pool.clone(),
            mailbox: inner.runner.mailbox.clone(),
            clock: inner.runner.clock.clone(),
            tz: config.msgx.airport.tz(),
            ignore: config.msgx.ignore.clone(),
        };
        let env = |k: &str| std::env::var(k).ok();
        match crate::http::compat::bind(&listen, &config.msgx.http, state, env).await {
            Ok(server) => {
                let stop = stop_rx.clone();
                tokio::spawn(async move {
                    if let Err(e) = server.serve(stop).await {
                        tracing::error!(%listen, error = %e, "Compat entry stopped serving");
                    }
                });
            }
            Err(e) => {
                eprintln!("msgx daemon: {e}");
                lock.release().await;
                return Exit::Failure;
            }
        }
    }
    let mut sched = match build_scheduler(&profile, &inner, &stop_rx).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("msgx daemon: cannot start the scheduler: {e}");
            lock.release().await;
            return Exit::Failure;
        }
    };

    let code = wait_for_stop(&lock, &signal).await;
    metrics::gauge!("msgx_instance_lock_held").set(0.0);
    inner.stopping.store(true, Ordering::SeqCst);
    let _ = stop_tx.send(true);
    if let Err(e) = sched.shutdown().await {
        tracing::warn!(error = %e, "Scheduler shutdown reported an error");
    }
    let timeout = config.msgx.daemon.shutdown_timeout.std();
    let waited = tokio::time::timeout(timeout, async {
        while inner.any_running() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    if waited.is_err() {
        tracing::warn!(
            ?timeout,
            "Running job did not finish within the shutdown timeout"
        );
    }
    // The queued JOB_RUN rows, written under the lock like the runs.
    if tokio::time::timeout(timeout, run_log.flush())
        .await
        .is_err()
    {
        tracing::warn!(
            ?timeout,
            "JOB_RUN rows not written within the shutdown timeout"
        );
    }
    lock.release().await;
    tracing::info!(exit_code = code.code(), "Daemon stopped");
    code
}

/// What the ops endpoints are built from.
struct OpsContext<'a> {
    pool: &'a sqlx::PgPool,
    mailbox: &'a Mailbox,
    clock: &'a SharedClock,
    config: &'a Arc<Config>,
    heartbeat: &'a Arc<Heartbeat>,
    lock: &'a LockSlot,
    jobs: &'a JobsSlot,
    console: &'a Arc<ConsoleHealth>,
}

/// Installs the Prometheus recorder, binds `listen` (failing loudly: an
/// operator who configured the endpoints must not run without them) and
/// serves `/metrics`, `/healthz`, `/readyz` until `stop`.
/// Starts the daemon's console on `listen` with its own pool, recording in
/// `health` whether it serves. Every failure is logged and recorded, none
/// returned: the jobs run on.
async fn start_console(
    listen: &str,
    (config, mailbox, clock): (Arc<Config>, Mailbox, SharedClock),
    launcher: Arc<dyn crate::console::JobLauncher>,
    health: &Arc<ConsoleHealth>,
    stop: watch::Receiver<bool>,
) {
    let not_started = |why: String| {
        tracing::error!(
            listen,
            error = %why,
            "Operator console not started; the jobs run on (msgx config check names the problem)"
        );
        health.failed(why);
    };
    // Pages query on the console's own pool, never the jobs'.
    let console_pool =
        match crate::store::pg::connect_console(&config.msgx.postgres, &config.msgx.console) {
            Ok(p) => p,
            Err(e) => return not_started(e.to_string()),
        };
    let bound =
        crate::console::bind(listen, config, console_pool, mailbox, clock, Some(launcher)).await;
    let server = match bound {
        Ok(server) => server,
        Err(e) => return not_started(e.to_string()),
    };
    let addr = server
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| listen.to_string());
    tracing::info!(listen = %addr, "Operator console listening");
    health.serving(&addr);
    let health = health.clone();
    tokio::spawn(async move {
        if let Err(e) = server.serve(stop).await {
            tracing::error!(listen = %addr, error = %e, "Operator console stopped serving; the jobs run on");
            health.failed(format!("stopped serving: {e}"));
        }
    });
}

/// Starts the ACRIS flight API on `listen` with its own pool (docs/acris.md).
/// Every failure is logged, none returned: the jobs run on.
async fn start_acris(
    listen: &str,
    config: &Arc<Config>,
    clock: SharedClock,
    stop: watch::Receiver<bool>,
) {
    let not_started = |why: String| {
        tracing::error!(
            listen,
            error = %why,
            "ACRIS flight API not started; the jobs run on (msgx config check names the problem)"
        );
    };
    let pool = match crate::store::pg::connect_acris(&config.msgx.postgres, &config.msgx.acris) {
        Ok(p) => p,
        Err(e) => return not_started(e.to_string()),
    };
    let server = match crate::acris::bind(listen, config, pool, clock).await {
        Ok(server) => server,
        Err(e) => return not_started(e.to_string()),
    };
    let addr = server.local_addr();
    tokio::spawn(async move {
        if let Err(e) = server.serve(stop).await {
            tracing::error!(listen = %addr, error = %e, "ACRIS flight API stopped serving; the jobs run on");
        }
    });
}

async fn start_ops(
    listen: &str,
    c: OpsContext<'_>,
    stop: watch::Receiver<bool>,
) -> Result<(), String> {
    let handle = crate::prometheus::install().map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| e.to_string())?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    tracing::info!(listen = %bound, "Ops endpoints /metrics /healthz /readyz listening");
    let state = OpsState {
        pg: c.pool.clone(),
        mailbox: c.mailbox.clone(),
        clock: c.clock.clone(),
        config: c.config.clone(),
        heartbeat: c.heartbeat.clone(),
        lock: c.lock.clone(),
        jobs: c.jobs.clone(),
        console: c.console.clone(),
        metrics: handle,
    };
    tokio::spawn(async move {
        if let Err(e) = ops::serve(listener, state, stop).await {
            tracing::error!(%bound, error = %e, "Ops endpoints stopped serving");
        }
    });
    Ok(())
}

/// Takes the instance lock; as a standby, waits for it (beating the
/// heartbeat once per poll: a standby is alive).
async fn acquire_instance(
    config: &Config,
    pool: &sqlx::PgPool,
    app: &str,
    standby: bool,
    (mut stop, signal): (watch::Receiver<bool>, &ShutdownSignal),
    (heartbeat, clock): (&Heartbeat, &SharedClock),
) -> Result<Option<AdvisoryLock>, Exit> {
    let mut announced = false;
    loop {
        // Asked to stop while starting: the lock is not taken at all.
        if signal.has_arrived() {
            return Ok(None);
        }
        heartbeat.beat(clock.now());
        match AdvisoryLock::try_acquire(&config.msgx.postgres.url, LockKey::instance(), app).await {
            Ok(Some(lock)) => return Ok(Some(lock)),
            Ok(None) => {
                let holder = instance_lock::holder(pool, LockKey::instance())
                    .await
                    .ok()
                    .flatten()
                    .map(|h| h.to_string())
                    .unwrap_or_else(|| "another session".into());
                if !standby {
                    eprintln!(
                        "msgx daemon: another instance is active: instance lock held by {holder}. \
                         Use --standby to wait as a hot standby."
                    );
                    return Err(Exit::Locked);
                }
                if !announced {
                    tracing::info!(%holder, "Standing by: instance lock held elsewhere");
                    announced = true;
                }
            }
            Err(e) => {
                if !standby {
                    eprintln!("msgx daemon: {e}");
                    return Err(Exit::Failure);
                }
                tracing::warn!(error = %e, "Standby cannot reach PostgreSQL; retrying");
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(config.msgx.daemon.standby_poll_interval.std()) => {}
            _ = signal.received() => return Ok(None),
            _ = stop.changed() => return Ok(None),
        }
    }
}

/// Cron jobs on tokio-cron-scheduler (and the heartbeat); `"poll"` jobs on
/// their own poll loops until `stop`.
async fn build_scheduler(
    profile: &Profile,
    inner: &Arc<Inner>,
    stop: &watch::Receiver<bool>,
) -> Result<JobScheduler, tokio_cron_scheduler::JobSchedulerError> {
    let sched = JobScheduler::new().await?;
    let beat = inner.clone();
    sched
        .add(CronJob::new_async(HEARTBEAT_CRON, move |_id, _lock| {
            let inner = beat.clone();
            Box::pin(async move {
                inner.heartbeat.beat(inner.runner.clock.now());
            })
        })?)
        .await?;
    for (job, cron) in &profile.jobs {
        if !inner.running.contains_key(job) {
            continue;
        }
        if let Ok(JobSchedule::Poll) = JobSchedule::parse(cron) {
            tokio::spawn(inner.clone().poll(job.clone(), stop.clone()));
            continue;
        }
        let inner = inner.clone();
        let name = job.clone();
        let cron_job = CronJob::new_async(cron.as_str(), move |_id, _lock| {
            let inner = inner.clone();
            let name = name.clone();
            Box::pin(async move {
                // A task per tick, so one slow job never delays another's ticks.
                tokio::spawn(inner.tick(name, false));
            })
        })?;
        sched.add(cron_job).await?;
    }
    sched.start().await?;
    Ok(sched)
}

/// Resolves when a stop is due: a signal (exit 0) or lock loss (exit 4).
async fn wait_for_stop(lock: &AdvisoryLock, signal: &ShutdownSignal) -> Exit {
    let lost = async {
        loop {
            if lock.is_lost() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::select! {
        _ = signal.received() => {
            tracing::info!("Shutdown requested; letting the running batch finish");
            Exit::Ok
        }
        _ = lost => {
            tracing::error!("Instance lock lost: no further job starts; exiting so a standby can take over");
            Exit::Locked
        }
    }
}

/// SIGINT or SIGTERM, listened for from the moment it is installed: a
/// signal that arrives while the daemon is still starting (connecting,
/// taking the lock, building the scheduler) is kept and acted on at the next
/// wait, instead of SIGTERM's default action ending the process on the spot
/// (a listener made only at each wait leaves gaps between them).
#[derive(Clone)]
pub struct ShutdownSignal {
    received: watch::Receiver<bool>,
}

impl ShutdownSignal {
    /// Registers the handlers now (synchronously); call first thing.
    pub fn install() -> ShutdownSignal {
        let (tx, received) = watch::channel(false);
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let handlers = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            );
            tokio::spawn(async move {
                match handlers {
                    (Ok(mut term), Ok(mut int)) => {
                        tokio::select! {
                            _ = term.recv() => {}
                            _ = int.recv() => {}
                        }
                    }
                    _ => {
                        let _ = tokio::signal::ctrl_c().await;
                    }
                }
                let _ = tx.send(true);
            });
        }
        #[cfg(not(unix))]
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            let _ = tx.send(true);
        });
        ShutdownSignal { received }
    }

    /// Whether a signal has arrived.
    pub fn has_arrived(&self) -> bool {
        *self.received.borrow()
    }

    /// Resolves once a signal has arrived (at once if one already has).
    pub async fn received(&self) {
        let mut rx = self.received.clone();
        if rx.wait_for(|got| *got).await.is_err() {
            // The listener is gone without a signal: none will come.
            std::future::pending::<()>().await;
        }
    }
}

/// `host:pid`, shown in JOB_RUN and `pg_stat_activity`.
pub fn instance_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!("{host}:{}", std::process::id())
}
