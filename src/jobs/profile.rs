//! Schedule profiles (`schedules/*.toml`): which job runs at which cron times.
//! `daemon` and `maintenance-window` are embedded; any other value is a path.

use crate::jobs::manifest;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The embedded profiles.
pub const PROFILES: &[(&str, &str)] = &[
    ("daemon", include_str!("../../schedules/daemon.toml")),
    (
        "maintenance-window",
        include_str!("../../schedules/maintenance-window.toml"),
    ),
];

/// A loaded profile.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Profile name or file path it came from.
    pub origin: String,
    pub description: String,
    /// Job name → 6-field cron expression (seconds first, UTC), or
    /// [`POLL`]: the adaptive cadence of `msgx.pipeline.poll-interval`.
    pub jobs: BTreeMap<String, String>,
    /// Job name → jobs started at once when a run of it handled items (the
    /// `[then]` table). A pipeline hop then costs its run time instead of up
    /// to one cron period (end-to-end latency).
    pub then: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    #[serde(default)]
    description: String,
    jobs: BTreeMap<String, String>,
    #[serde(default)]
    then: BTreeMap<String, Vec<String>>,
}

/// Why a profile could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(
        "schedule profile {0:?} is neither a built-in profile (daemon, maintenance-window) nor a readable file: {1}"
    )]
    NotFound(String, std::io::Error),
    #[error("schedule profile {0} is not valid TOML: {1}")]
    Parse(String, String),
}

impl Profile {
    /// Loads a built-in profile by name, else a file by path.
    pub fn resolve(name_or_path: &str) -> Result<Profile, ProfileError> {
        let (origin, text) = match PROFILES.iter().find(|(n, _)| *n == name_or_path) {
            Some((n, t)) => (n.to_string(), t.to_string()),
            None => {
                let text = std::fs::read_to_string(name_or_path)
                    .map_err(|e| ProfileError::NotFound(name_or_path.into(), e))?;
                (name_or_path.to_string(), text)
            }
        };
        let file: ProfileFile = toml::from_str(&text)
            .map_err(|e| ProfileError::Parse(origin.clone(), e.to_string()))?;
        Ok(Profile {
            origin,
            description: file.description,
            jobs: file.jobs,
            then: file.then,
        })
    }

    /// Unknown job names and cron expressions that do not parse.
    pub fn problems(&self) -> Vec<String> {
        let known: Vec<String> = manifest::all()
            .unwrap_or_default()
            .into_iter()
            .map(|m| m.name)
            .collect();
        let mut out = Vec::new();
        for (job, cron) in &self.jobs {
            if !known.contains(job) {
                out.push(format!("unknown job {job:?} (see `msgx jobs`)"));
            }
            if let Err(e) = JobSchedule::parse(cron) {
                out.push(format!("job {job}: {e}"));
            }
        }
        // A chained job must be scheduled itself: the daemon only runs (and
        // guards against overlap) jobs of the [jobs] table.
        for (job, next) in &self.then {
            for j in std::iter::once(job).chain(next) {
                if !self.jobs.contains_key(j) {
                    out.push(format!("[then] {job}: job {j:?} is not in [jobs]"));
                }
            }
        }
        out
    }
}

/// The load-time rules of `msgx.daemon.schedule`: the profile resolves and
/// every line names a known job with a cron expression that parses. Given to
/// `Config::load_checked` by the CLI, so a broken profile is a config error of
/// every command, as the other rules are.
pub fn config_issues(config: &crate::config::Config) -> Vec<crate::config::ConfigIssue> {
    let issue = |key: String, rule: String| crate::config::ConfigIssue { key, rule };
    match Profile::resolve(&config.msgx.daemon.schedule) {
        Ok(profile) => profile
            .problems()
            .into_iter()
            .map(|problem| {
                issue(
                    format!("msgx.daemon.schedule ({})", profile.origin),
                    problem,
                )
            })
            .collect(),
        Err(e) => vec![issue("msgx.daemon.schedule".into(), e.to_string())],
    }
}

/// The schedule value that runs a job at the adaptive poll cadence
/// (`msgx.pipeline.poll-interval`) instead of at cron times.
pub const POLL: &str = "poll";

/// One `[jobs]` value, parsed.
#[derive(Debug, Clone)]
pub enum JobSchedule {
    /// At cron times (tokio-cron-scheduler; its ticker wakes every 500 ms,
    /// so a cron job starts up to half a second after its time).
    Cron(Box<croner::Cron>),
    /// At the adaptive poll cadence (the daemon's poll loop).
    Poll,
}

impl JobSchedule {
    /// `"poll"` or a cron expression.
    pub fn parse(value: &str) -> Result<JobSchedule, String> {
        if value.trim() == POLL {
            return Ok(JobSchedule::Poll);
        }
        parse_cron(value)
            .map(|c| JobSchedule::Cron(Box::new(c)))
            .map_err(|e| {
                format!("{value:?} is neither \"{POLL}\" nor a cron expression that parses: {e}")
            })
    }
}

/// Parses a cron expression exactly as tokio-cron-scheduler does (6 fields,
/// seconds required, day-of-month and day-of-week both honoured).
pub fn parse_cron(expr: &str) -> Result<croner::Cron, String> {
    croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Required)
        .dom_and_dow(true)
        .build()
        .parse(expr)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_are_valid() {
        for (name, _) in PROFILES {
            let p = Profile::resolve(name).expect("loads");
            assert!(p.problems().is_empty(), "{name}: {:?}", p.problems());
            assert!(!p.jobs.is_empty());
        }
        let daemon = Profile::resolve("daemon").unwrap();
        assert_eq!(daemon.jobs.len(), 12, "the daemon profile runs every job");
        assert_eq!(
            daemon.jobs.get("ingest-sweep").map(String::as_str),
            Some(POLL),
            "the mailbox is polled at the adaptive cadence"
        );
        assert_eq!(
            daemon.then.get("ingest-sweep"),
            Some(&vec!["pump-drain".to_string()])
        );
        let window = Profile::resolve("maintenance-window").unwrap();
        assert!(window.jobs.contains_key("archive-proc-state"));
        assert!(!window.jobs.contains_key("pump-drain"));
    }

    #[test]
    fn bad_cron_and_unknown_job_are_reported() {
        let p = Profile {
            origin: "t".into(),
            description: String::new(),
            jobs: [("nope".to_string(), "* * *".to_string())].into(),
            then: [("nope".to_string(), vec!["pump-drain".to_string()])].into(),
        };
        let problems = p.problems();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(matches!(JobSchedule::parse("poll"), Ok(JobSchedule::Poll)));
        assert!(JobSchedule::parse("0 * * * * *").is_ok());
        assert!(JobSchedule::parse("polls").is_err());
        assert!(problems[2].contains("pump-drain"), "{problems:?}");
    }
}
