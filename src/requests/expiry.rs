//! `request-expiry` (design §7.2): SENT requests older than
//! `msgx.request.expiry` become EXPIRED; a late RESP then never changes them.
//! Each run then compensates unconfirmed requests ([`super::track`]): a
//! PENDING row whose COUTMSGS row exists becomes SENT (never sent twice), one
//! never written becomes EXPIRED once older than the expiry. Compensation
//! only reads the mailbox, so it also runs in shadow mode.

use crate::config::Config;
use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{
    Job, JobConfigError, JobContext, JobError, JobSettings, RunBounds, RunReport, job_counts,
};
use crate::store::pg::req_track;

use super::track::{RequestError, compensate_pending};

const OVERDUE: Sweep = Sweep {
    label: "requests_expired",
    sql: req_track::OVERDUE_EXPIRY,
};

/// The settings `request-expiry` uses.
#[derive(Debug, Clone)]
pub struct RequestExpiryConfig {
    /// `msgx.request.expiry`: after SENT_AT (and, unconfirmed, after the
    /// registration).
    pub expiry: chrono::Duration,
}

impl JobSettings for RequestExpiryConfig {
    fn from_config(config: &Config) -> Self {
        Self {
            expiry: config.msgx.request.expiry.chrono(),
        }
    }
}

job_counts! {
    /// What a `request-expiry` run did.
    pub struct RequestExpiryCounts {
        requests_expired,
        pending_confirmed,
        pending_never_sent_expired,
    }
}

/// The request expiry job.
pub struct RequestExpiry {
    config: RequestExpiryConfig,
}

impl RequestExpiry {
    pub fn new(config: RequestExpiryConfig) -> Result<Self, JobConfigError> {
        Ok(Self { config })
    }
}

#[async_trait::async_trait]
impl Job for RequestExpiry {
    type Details = RequestExpiryCounts;

    async fn run_once(
        &self,
        ctx: &JobContext,
        bounds: &RunBounds,
    ) -> Result<RunReport<RequestExpiryCounts>, JobError> {
        let now = ctx.clock.now();
        let mut report = RunReport::<RequestExpiryCounts>::default();
        let cutoff = now - self.config.expiry;
        let expired = run_sweep(
            ctx,
            bounds,
            bounds.deadline(now),
            &OVERDUE,
            cutoff,
            &mut report,
        )
        .await?;
        report.details.requests_expired.add(expired);
        if ctx.dry_run || !ctx.may_continue(bounds.deadline(now))? {
            return Ok(report);
        }
        let c = compensate_pending(&ctx.pg, &ctx.mailbox, self.config.expiry, now)
            .await
            .map_err(|e| match e {
                RequestError::Db(e) => JobError::Db(e),
                RequestError::Mailbox(e) => JobError::Mailbox(e),
                other => JobError::Other(other.to_string()),
            })?;
        report.items += c.confirmed + c.expired;
        report.details.pending_confirmed.add(c.confirmed);
        report.details.pending_never_sent_expired.add(c.expired);
        if c.confirmed + c.expired > 0 {
            tracing::info!(
                confirmed = c.confirmed,
                expired = c.expired,
                "Compensated unconfirmed requests"
            );
        }
        Ok(report)
    }
}
