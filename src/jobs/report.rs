//! Typed run reports (River's `runOnce` result): each job
//! declares its counts as struct fields ([`job_counts!`]), and the one
//! rendering of a report, [`RunReport::rendered`], gives the JSON object
//! that `msgx run --json` prints, JOB_RUN.DETAILS stores and the text output
//! lists (`RunSummary`'s `Display`, scheduler/runner.rs).

use serde::Serialize;

/// One named count of a report. It is unset until the run takes it, and the
/// rendered report names exactly the counts a run took (a 0 too): what the
/// string-keyed reports always wrote, so `--json` and JOB_RUN keep their
/// fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count(Option<u64>);

impl Count {
    /// Takes the count and adds `n` to it.
    pub fn add(&mut self, n: u64) {
        self.0 = Some(self.get().saturating_add(n));
    }

    /// The value (0 when never taken).
    pub fn get(self) -> u64 {
        self.0.unwrap_or(0)
    }

    /// Whether no pass took this count (it is left out of the rendering).
    pub fn is_unset(&self) -> bool {
        self.0.is_none()
    }

    /// Adds a later pass's count (the runner's `--until-empty` total).
    pub fn absorb(&mut self, next: Count) {
        if let Some(n) = next.0 {
            self.add(n);
        }
    }
}

impl Serialize for Count {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.get())
    }
}

/// A job's own counts: serialised by field name, added up across passes.
pub trait Details: Serialize + Default + std::fmt::Debug + Send + Sync + 'static {
    /// Adds the counts of a later pass of the same run.
    fn absorb(&mut self, next: Self);
}

/// Declares a job's counts struct: every field a [`Count`], serialised under
/// its own name and left out while unset, and its [`Details`] impl.
macro_rules! job_counts {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* $field:ident),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, serde::Serialize)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                #[serde(skip_serializing_if = "crate::jobs::Count::is_unset")]
                pub $field: crate::jobs::Count,
            )*
        }

        impl crate::jobs::Details for $name {
            fn absorb(&mut self, next: Self) {
                $(self.$field.absorb(next.$field);)*
            }
        }
    };
}
pub(crate) use job_counts;

/// What one `run_once` did.
#[derive(Debug, Clone, Default)]
pub struct RunReport<D> {
    /// Items handled (rows deleted, messages processed…); with `--dry-run`,
    /// the items that would be handled.
    pub items: u64,
    /// True when the run stopped at a bound with work left.
    pub more: bool,
    /// The job's own counts.
    pub details: D,
}

impl<D: Details> RunReport<D> {
    /// Adds a later pass: items and counts add up, `more` is the last pass's.
    pub fn absorb(&mut self, next: Self) {
        self.items += next.items;
        self.more = next.more;
        self.details.absorb(next.details);
    }

    /// The counts as the JSON object of `--json`, JOB_RUN.DETAILS and the
    /// text output (keys in name order, as serde_json's map keeps them).
    pub fn rendered(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(&self.details) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }
    }
}

impl<D: Details> RunReport<D> {
    /// `error` ended this pass after it did what this report counts: the
    /// error to return from `run_once`, so the run's JOB_RUN
    /// row counts those items instead of 0.
    pub fn failed_with(self, error: super::JobError) -> super::JobError {
        super::JobError::AfterWork {
            error: Box::new(error),
            done: DoneSoFar(Box::new(self)),
        }
    }
}

/// A failed pass's report ([`RunReport::failed_with`]), typed by its job:
/// the run's passes take it back as their own report type.
pub struct DoneSoFar(Box<dyn std::any::Any + Send + Sync>);

impl DoneSoFar {
    /// The report, when it is a `RunReport<D>` (a pass's own job's).
    pub fn take<D: Details>(self) -> Option<RunReport<D>> {
        self.0.downcast::<RunReport<D>>().ok().map(|r| *r)
    }
}

impl std::fmt::Debug for DoneSoFar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DoneSoFar")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    job_counts! {
        /// Test counts.
        pub struct Sample { first, second }
    }

    #[test]
    fn a_report_names_exactly_the_counts_taken_and_adds_passes_up() {
        let mut a = RunReport::<Sample>::default();
        assert!(a.rendered().is_empty());
        a.details.first.add(0);
        let mut b = RunReport::<Sample> {
            items: 2,
            more: true,
            ..Default::default()
        };
        b.details.first.add(2);
        b.details.second.add(1);
        a.absorb(b);
        assert_eq!(
            serde_json::Value::Object(a.rendered()),
            serde_json::json!({"first": 2, "second": 1})
        );
        assert_eq!((a.items, a.more), (2, true));
        let mut c = RunReport::<Sample>::default();
        c.details.second.add(0);
        assert_eq!(
            serde_json::Value::Object(c.rendered()),
            serde_json::json!({"second": 0})
        );
    }
}
