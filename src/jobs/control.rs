//! Jobs under the operator's control: pause and resume with a mandatory
//! reason (JOB_PAUSE, audited as JOB_PAUSE / JOB_RESUME in OPERATOR_ACTION),
//! shared by `msgx jobs pause|resume` and the console so both apply the same
//! rules. A pause is honoured wherever a job starts: the daemon's tick (and a
//! standby that takes over: the row is in the shared database), a `[then]`
//! start, `msgx run` and the console's "run now" (unless forced). Pausing a
//! job never pauses the jobs its runs would start (`[then]`): they keep their
//! own schedule, so a pause stops exactly the job named.

use super::manifest;
use super::profile::JobSchedule;
use crate::store::pg::job_pause::{self, Change, Pause};
use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// Why a pause or resume was refused.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("unknown job {job:?}; the jobs are: {known}")]
    UnknownJob { job: String, known: String },
    #[error(
        "a reason is required (--reason): it is recorded with the change and shown to every operator"
    )]
    NoReason,
    #[error("the reason is {0} characters long; at most {MAX_REASON}")]
    ReasonTooLong(usize),
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
}

/// The longest reason kept (it is shown on every page and `msgx jobs` line).
pub const MAX_REASON: usize = 500;

/// Pause or resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Pause,
    Resume,
}

/// A pause or resume asked for by `actor` at `at`.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub verb: Verb,
    pub job: &'a str,
    pub actor: &'a str,
    pub reason: &'a str,
    pub at: DateTime<Utc>,
}

/// Checks the job name and the reason (pure): the name must be a manifest's,
/// the reason not blank and at most [`MAX_REASON`] characters.
pub fn validate(job: &str, reason: &str) -> Result<(), ControlError> {
    if manifest::find(job).is_none() {
        let known: Vec<&str> = manifest::MANIFEST_SOURCES.iter().map(|(n, _)| *n).collect();
        return Err(ControlError::UnknownJob {
            job: job.to_string(),
            known: known.join(", "),
        });
    }
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(ControlError::NoReason);
    }
    let chars = reason.chars().count();
    if chars > MAX_REASON {
        return Err(ControlError::ReasonTooLong(chars));
    }
    Ok(())
}

/// Validates `r` and applies it, with its audit row, in one transaction.
pub async fn apply(pool: &PgPool, r: &Request<'_>) -> Result<Change, ControlError> {
    validate(r.job, r.reason)?;
    let row = Pause {
        job: r.job.to_string(),
        paused_by: r.actor.to_string(),
        paused_at: r.at,
        reason: r.reason.trim().to_string(),
    };
    Ok(match r.verb {
        Verb::Pause => job_pause::pause(pool, &row).await?,
        Verb::Resume => job_pause::resume(pool, &row).await?,
    })
}

/// How a pause is shown everywhere (`msgx jobs`, JOB_RUN.ERROR of a skipped
/// start, `/readyz`, the console): `paused by X since T: why`.
pub fn describe(p: &Pause) -> String {
    format!(
        "paused by {} since {}: {}",
        p.paused_by,
        p.paused_at.format("%Y-%m-%d %H:%M:%SZ"),
        p.reason
    )
}

/// The one-line answer to a pause or resume (CLI and console).
pub fn outcome_line(verb: Verb, job: &str, change: &Change) -> String {
    match (verb, change) {
        (Verb::Pause, Change::Applied { action_id, .. }) => {
            format!("{job} paused; recorded as operator_action #{action_id}")
        }
        (Verb::Resume, Change::Applied { pause, action_id }) => format!(
            "{job} resumed (it was {}); recorded as operator_action #{action_id}",
            describe(pause)
        ),
        (Verb::Pause, Change::Unchanged { pause: Some(p) }) => {
            format!("{job} was already {}; nothing changed", describe(p))
        }
        (Verb::Pause, Change::Unchanged { pause: None }) => {
            format!("{job} was resumed meanwhile; nothing changed")
        }
        (Verb::Resume, Change::Unchanged { .. }) => {
            format!("{job} is not paused; nothing changed")
        }
    }
}

/// When a job on `schedule` (a profile value) next starts after `now`:
/// `None` for a polled job (it runs continuously) or a schedule that does
/// not parse.
pub fn next_fire(schedule: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    match JobSchedule::parse(schedule).ok()? {
        JobSchedule::Cron(cron) => cron.find_next_occurrence(&now, false).ok(),
        JobSchedule::Poll => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_job_must_exist_and_the_reason_is_mandatory() {
        let e = validate("no-such-job", "why").expect_err("unknown");
        let text = e.to_string();
        assert!(text.contains("no-such-job"), "{text}");
        assert!(
            text.contains("flight-history-clean"),
            "lists the jobs: {text}"
        );
        assert!(matches!(
            validate("retention", "  "),
            Err(ControlError::NoReason)
        ));
        assert!(matches!(
            validate("retention", &"x".repeat(MAX_REASON + 1)),
            Err(ControlError::ReasonTooLong(_))
        ));
        assert!(validate("retention", "incident 42").is_ok());
    }

    #[test]
    fn the_next_fire_time_follows_the_cron_expression() {
        let now = Utc
            .with_ymd_and_hms(2026, 12, 6, 12, 7, 30)
            .single()
            .expect("valid");
        let next = next_fire("0 */15 * * * *", now).expect("a cron schedule");
        assert_eq!(next, Utc.with_ymd_and_hms(2026, 12, 6, 12, 15, 0).unwrap());
        assert_eq!(next_fire("poll", now), None);
        assert_eq!(next_fire("not a cron", now), None);
    }

    #[test]
    fn a_pause_is_described_with_who_when_and_why() {
        let p = Pause {
            job: "retention".into(),
            paused_by: "alice".into(),
            paused_at: Utc.with_ymd_and_hms(2026, 12, 6, 12, 0, 0).unwrap(),
            reason: "incident 42".into(),
        };
        assert_eq!(
            describe(&p),
            "paused by alice since 2026-12-06 12:00:00Z: incident 42"
        );
    }
}
