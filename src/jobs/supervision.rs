//! Job supervision: whether every scheduled job keeps up
//! with its schedule, for `/readyz`.
//!
//! A job is *overdue* when it has not completed a run (SUCCEEDED, or
//! SKIPPED_LOCKED: another process holds its lock and does the work) by
//!
//! > its next cron time after the last completion (or after this daemon
//! > became active) + its time budget (`[bounds] time-budget`) +
//! > `msgx.daemon.job-overdue-margin`.
//!
//! That catches a job whose runs keep failing or panicking, a run that hangs
//! past its budget, and a job whose ticks never start. The rule uses the
//! cron expression itself, so irregular schedules (nightly, weekdays) need no
//! separate cadence setting. A job polled at the adaptive cadence (`"poll"`)
//! is due one idle interval after its last completion. Pure apart
//! from the lock; times are passed in.

use chrono::{DateTime, Duration, Utc};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// When a job is next due after a completion.
#[derive(Debug)]
enum Due {
    Cron(Box<croner::Cron>),
    /// A polled job: every (at most) this long.
    Every(Duration),
}

impl Due {
    fn next_after(&self, since: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Due::Cron(cron) => cron.find_next_occurrence(&since, false).ok(),
            Due::Every(every) => Some(since + *every),
        }
    }
}

/// What is watched of one job.
#[derive(Debug)]
struct Watched {
    due: Due,
    budget: Duration,
    state: Mutex<RunState>,
}

#[derive(Debug, Default, Clone)]
struct RunState {
    /// End of the last completed run.
    last_completed: Option<DateTime<Utc>>,
    /// Start of the run going on now.
    running_since: Option<DateTime<Utc>>,
    /// Why the last run did not complete.
    last_error: Option<String>,
}

/// The daemon's view of its scheduled jobs.
#[derive(Debug)]
pub struct JobWatch {
    /// When this daemon took the instance lock: the start of every clock.
    activated: DateTime<Utc>,
    margin: Duration,
    jobs: BTreeMap<String, Watched>,
}

/// One job that is overdue, for the readiness answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overdue {
    pub job: String,
    pub detail: String,
}

impl JobWatch {
    /// Watches `jobs` (name, schedule value, time budget) from `activated`;
    /// a `"poll"` job is due every `poll_idle`. A schedule that does not
    /// parse is left out (the profile check refused it before the daemon
    /// got here).
    pub fn new<'a>(
        activated: DateTime<Utc>,
        margin: Duration,
        poll_idle: Duration,
        jobs: impl IntoIterator<Item = (&'a str, &'a str, Duration)>,
    ) -> Self {
        use super::profile::JobSchedule;
        let jobs = jobs
            .into_iter()
            .filter_map(|(name, schedule, budget)| {
                let due = match JobSchedule::parse(schedule).ok()? {
                    JobSchedule::Cron(cron) => Due::Cron(cron),
                    JobSchedule::Poll => Due::Every(poll_idle),
                };
                Some((
                    name.to_string(),
                    Watched {
                        due,
                        budget,
                        state: Mutex::new(RunState::default()),
                    },
                ))
            })
            .collect();
        Self {
            activated,
            margin,
            jobs,
        }
    }

    fn with<R>(&self, job: &str, f: impl FnOnce(&mut RunState) -> R) -> Option<R> {
        let w = self.jobs.get(job)?;
        let mut state = w.state.lock().unwrap_or_else(|e| e.into_inner());
        Some(f(&mut state))
    }

    /// A run of `job` started at `now`.
    pub fn started(&self, job: &str, now: DateTime<Utc>) {
        self.with(job, |s| s.running_since = Some(now));
    }

    /// A run of `job` ended at `now`; `error` is `None` when it completed.
    pub fn finished(&self, job: &str, now: DateTime<Utc>, error: Option<String>) {
        self.with(job, |s| {
            s.running_since = None;
            match error {
                None => {
                    s.last_completed = Some(now);
                    s.last_error = None;
                }
                Some(e) => s.last_error = Some(e),
            }
        });
    }

    /// When each job last completed a run in this daemon: the daemon does
    /// not write its idle runs to JOB_RUN, so the last-success
    /// metric takes the later of this and JOB_RUN's.
    pub fn last_completions(&self) -> BTreeMap<String, DateTime<Utc>> {
        self.jobs
            .iter()
            .filter_map(|(name, w)| {
                let s = w.state.lock().unwrap_or_else(|e| e.into_inner());
                Some((name.clone(), s.last_completed?))
            })
            .collect()
    }

    /// The jobs overdue at `now`, by name.
    pub fn overdue(&self, now: DateTime<Utc>) -> Vec<Overdue> {
        let mut out = Vec::new();
        for (name, w) in &self.jobs {
            let s = w.state.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let since = s.last_completed.unwrap_or(self.activated);
            let Some(next) = w.due.next_after(since) else {
                continue;
            };
            let deadline = next + w.budget + self.margin;
            if now <= deadline {
                continue;
            }
            let last = match s.last_completed {
                Some(t) => format!("last completed run ended {}s ago", (now - t).num_seconds()),
                None => "no completed run since this daemon became active".to_string(),
            };
            let why = match (&s.running_since, &s.last_error) {
                (Some(t), _) => format!(
                    "; a run has been going for {}s (budget {}s)",
                    (now - *t).num_seconds(),
                    w.budget.num_seconds()
                ),
                (None, Some(e)) => format!("; last run: {e}"),
                (None, None) => String::new(),
            };
            out.push(Overdue {
                job: name.clone(),
                detail: format!(
                    "{name}: {last}, due by {}{why}",
                    deadline.format("%Y-%m-%dT%H:%M:%SZ")
                ),
            });
        }
        out
    }

    /// The readiness check: `Ok` with a summary, or `Err` naming every
    /// overdue job.
    pub fn check(&self, now: DateTime<Utc>) -> Result<String, String> {
        let overdue = self.overdue(now);
        if overdue.is_empty() {
            return Ok(format!(
                "{} scheduled job(s) keep up with their schedule",
                self.jobs.len()
            ));
        }
        let details: Vec<String> = overdue.into_iter().map(|o| o.detail).collect();
        Err(format!("overdue: {}", details.join(" | ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0)
            .single()
            .expect("valid")
    }

    fn watch() -> JobWatch {
        JobWatch::new(
            t0(),
            Duration::seconds(60),
            Duration::milliseconds(250),
            [
                ("pump-drain", "*/1 * * * * *", Duration::seconds(20)),
                (
                    "archive-proc-state",
                    "0 30 18 * * *",
                    Duration::seconds(300),
                ),
            ],
        )
    }

    #[test]
    fn a_job_that_completes_each_tick_keeps_up() {
        let w = watch();
        for s in 0..600 {
            let now = t0() + Duration::seconds(s);
            w.started("pump-drain", now);
            w.finished("pump-drain", now, None);
            assert!(w.check(now).is_ok(), "{:?}", w.check(now));
        }
    }

    #[test]
    fn failing_runs_make_it_overdue_after_budget_and_margin() {
        let w = watch();
        // Due by 08:00:01 + 20 s + 60 s.
        let edge = t0() + Duration::seconds(81);
        for s in 0..=81 {
            let now = t0() + Duration::seconds(s);
            w.started("pump-drain", now);
            w.finished("pump-drain", now, Some("the job panicked: boom".into()));
        }
        assert!(w.check(edge).is_ok());
        let err = w.check(edge + Duration::seconds(1)).unwrap_err();
        assert!(err.contains("pump-drain"), "{err}");
        assert!(err.contains("no completed run"), "{err}");
        assert!(err.contains("boom"), "{err}");
        assert!(!err.contains("archive-proc-state"), "{err}");
        // One completed run makes it ready again.
        let later = edge + Duration::seconds(2);
        w.finished("pump-drain", later, None);
        assert!(w.check(later).is_ok());
    }

    #[test]
    fn a_hung_run_is_named_with_its_age() {
        let w = watch();
        w.started("pump-drain", t0() + Duration::seconds(1));
        let now = t0() + Duration::seconds(200);
        let err = w.check(now).unwrap_err();
        assert!(err.contains("going for 199s (budget 20s)"), "{err}");
    }

    #[test]
    fn a_nightly_job_is_judged_by_its_own_schedule() {
        let w = watch();
        let busy = |now| {
            w.finished("pump-drain", now, None);
            w.check(now)
        };
        // 18:30 + 300 s + 60 s = 18:36:00 is the first deadline.
        let before = Utc.with_ymd_and_hms(2026, 12, 1, 18, 36, 0).unwrap();
        assert!(busy(before).is_ok());
        let after = before + Duration::seconds(1);
        assert!(busy(after).unwrap_err().contains("archive-proc-state"));
        // Ran at 18:30 that day: fine until the next day's 18:36.
        w.finished(
            "archive-proc-state",
            Utc.with_ymd_and_hms(2026, 12, 1, 18, 31, 0).unwrap(),
            None,
        );
        assert!(busy(after + Duration::hours(23)).is_ok());
    }

    #[test]
    fn a_polled_job_is_due_one_idle_interval_after_its_last_completion() {
        let w = JobWatch::new(
            t0(),
            Duration::seconds(60),
            Duration::milliseconds(250),
            [("ingest-sweep", "poll", Duration::seconds(20))],
        );
        // 08:00 + 250 ms + 20 s + 60 s.
        let edge = t0() + Duration::milliseconds(80_250);
        assert!(w.check(edge).is_ok());
        let err = w.check(edge + Duration::milliseconds(1)).unwrap_err();
        assert!(err.contains("ingest-sweep"), "{err}");
        w.finished("ingest-sweep", edge, None);
        assert!(w.check(edge + Duration::seconds(80)).is_ok());
    }
}
