//! `request-expiry` (design §7.2): SENT requests older than
//! `msgx.request.expiry` become EXPIRED; a late RESP then never changes them.
//! Each run then compensates unconfirmed requests ([`super::track`]): a
//! PENDING row whose COUTMSGS row exists becomes SENT (never sent twice), one
//! never written becomes EXPIRED once older than the expiry. Compensation
//! only reads the mailbox, so it also runs in shadow mode.

use crate::jobs::batch::{Sweep, run_sweep};
use crate::jobs::{Job, JobContext, JobError, RunBounds, RunReport};
use crate::store::pg::req_track;

use super::track::{RequestError, Tracker};

const OVERDUE: Sweep = Sweep {
    label: "requests_expired",
    sql: req_track::OVERDUE_EXPIRY,
};

/// The request expiry job.
pub struct RequestExpiry;

#[async_trait::async_trait]
impl Job for RequestExpiry {
    async fn run_once(&self, ctx: &JobContext, bounds: &RunBounds) -> Result<RunReport, JobError> {
        let now = ctx.clock.now();
        let mut report = RunReport::default();
        let cutoff = now - ctx.config.msgx.request.expiry.chrono();
        run_sweep(
            ctx,
            bounds,
            bounds.deadline(now),
            &OVERDUE,
            cutoff,
            &mut report,
        )
        .await?;
        if ctx.dry_run || !ctx.may_continue(bounds.deadline(now))? {
            return Ok(report);
        }
        let tracker = Tracker {
            pg: &ctx.pg,
            mailbox: &ctx.mailbox,
            config: &ctx.config,
        };
        let c = tracker.compensate(now).await.map_err(|e| match e {
            RequestError::Db(e) => JobError::Db(e),
            RequestError::Mailbox(e) => JobError::Mailbox(e),
            other => JobError::Other(other.to_string()),
        })?;
        report.items += c.confirmed + c.expired;
        report.count("pending_confirmed", c.confirmed);
        report.count("pending_never_sent_expired", c.expired);
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
