//! The request lifecycle (G-REQ-TRACK, design §7.2; sis-format §5):
//!
//! ```text
//! PENDING → SENT → DONE
//!              └──→ EXPIRED
//! ```
//!
//! 1. **register** — in one PostgreSQL transaction: expire the open request
//!    of the same (type, operation day, sender), allocate the SEQN from
//!    `request_seqn_seq`, encode the XML (codec) and insert the PENDING row.
//! 2. **write** — insert the XML into COUTMSGS (the only mailbox write).
//! 3. **confirm** — PENDING → SENT with the COUTMSGS_ID, only after the
//!    insert returned.
//!
//! A crash (or a lost PostgreSQL connection) between 2 and 3 leaves a
//! PENDING row whose COUTMSGS row exists. **Compensation** never sends again:
//! it looks the row up by SEQN and ROUTINGID (and the whole XML, since SEQN
//! cycles) and confirms it; a PENDING row with no COUTMSGS row after
//! `msgx.request.expiry` was never sent and is EXPIRED. Compensation runs
//! before every new request and in every `request-expiry` run.
//!
//! The outbound promise ends at the mailbox row (C-24). DONE is set by the
//! RESP that answers the request, in the snapshot's transaction
//! (`pipeline::processors::resp`); EXPIRED by a newer request, by
//! compensation, or by `request-expiry`.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use sqlx::PgPool;

use crate::clock::Clock;
use crate::codec::{REF_TYPES, encode_rqfd, encode_rqrd};
use crate::config::Config;
use crate::store::mailbox::{Mailbox, MailboxError};
use crate::store::pg::req_track::{self, NewRequest, ReqRow};

/// What to request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestKind {
    /// RQFD for one operation day.
    Schedule { day: NaiveDate },
    /// RQRD for one of the 23 reference types.
    Reference { rtype: String },
}

impl RequestKind {
    /// The REQ_TRACK type: `RQFD` or `RQRD:<TYPE>`.
    pub fn req_type(&self) -> String {
        match self {
            RequestKind::Schedule { .. } => "RQFD".into(),
            RequestKind::Reference { rtype } => format!("RQRD:{rtype}"),
        }
    }

    fn operation_day(&self) -> Option<NaiveDate> {
        match self {
            RequestKind::Schedule { day } => Some(*day),
            RequestKind::Reference { .. } => None,
        }
    }
}

/// Why a request could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error(
        "refused: the mailbox is in shadow mode (msgx.mailbox.shadow = true), so msgx writes no \
         request to COUTMSGS; nothing was registered"
    )]
    Shadow,
    #[error("{0:?} is not a reference type msgx can request; one of: {list}", list = REF_TYPES.join(" "))]
    UnknownType(String),
    #[error("PostgreSQL: {0}")]
    Db(#[from] sqlx::Error),
    #[error("mailbox: {0}")]
    Mailbox(#[from] MailboxError),
    #[error(
        "request {id} was written to COUTMSGS (row {coutmsgs_id}) but is no longer PENDING \
         (superseded meanwhile); left as it is"
    )]
    NoLongerPending { id: i64, coutmsgs_id: i64 },
}

/// A request that reached SENT.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SentRequest {
    pub request: ReqRow,
    /// Open requests this one superseded (now EXPIRED).
    pub superseded: Vec<i64>,
}

/// What compensation did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Compensation {
    /// PENDING rows whose COUTMSGS row was found: now SENT.
    pub confirmed: u64,
    /// PENDING rows never written, older than the expiry: now EXPIRED.
    pub expired: u64,
    /// PENDING rows left for a later pass (young, possibly in flight).
    pub left: u64,
}

/// The request lifecycle on one PostgreSQL and one mailbox.
pub struct Tracker<'a> {
    pub pg: &'a PgPool,
    pub mailbox: &'a Mailbox,
    pub config: &'a Config,
}

/// PENDING rows one compensation pass looks at.
const COMPENSATION_BATCH: i64 = 1000;

impl Tracker<'_> {
    /// Registers, writes and confirms one request (steps 1–3), after
    /// compensating earlier unconfirmed ones.
    pub async fn request(
        &self,
        kind: &RequestKind,
        clock: &dyn Clock,
    ) -> Result<SentRequest, RequestError> {
        self.refuse_in_shadow()?;
        self.compensate(clock.now()).await?;
        let (row, superseded) = self.register(kind, clock.now()).await?;
        let coutmsgs_id = self.write(&row, clock.now()).await?;
        let request = self.confirm(&row, coutmsgs_id, clock.now()).await?;
        Ok(SentRequest {
            request,
            superseded,
        })
    }

    fn refuse_in_shadow(&self) -> Result<(), RequestError> {
        if self.config.msgx.mailbox.shadow || self.mailbox.is_shadow() {
            return Err(RequestError::Shadow);
        }
        Ok(())
    }

    /// Step 1: one transaction expires the open request of the same key and
    /// inserts the new PENDING row with its SEQN and XML.
    pub async fn register(
        &self,
        kind: &RequestKind,
        now: DateTime<Utc>,
    ) -> Result<(ReqRow, Vec<i64>), RequestError> {
        self.refuse_in_shadow()?;
        let r = &self.config.msgx.request;
        let a = &self.config.msgx.airport;
        let dttm = now.with_timezone(&a.tz()).naive_local();
        if let RequestKind::Reference { rtype } = kind
            && !REF_TYPES.contains(&rtype.as_str())
        {
            return Err(RequestError::UnknownType(rtype.clone()));
        }
        let mut tx = self.pg.begin().await?;
        let seqn = format!("{:06}", req_track::next_seqn(&mut tx).await?);
        let (xml, routing) = match kind {
            RequestKind::Schedule { day } => {
                let (stdb, stde) = schedule_window(*day, a.cutover());
                (
                    encode_rqfd(&r.sndr, &seqn, dttm, &stdb, &stde),
                    &r.routing_rqfd,
                )
            }
            RequestKind::Reference { rtype } => {
                (encode_rqrd(&r.sndr, &seqn, dttm, rtype), &r.routing_rqrd)
            }
        };
        let req_type = kind.req_type();
        let superseded = req_track::expire_open_for_key(
            &mut tx,
            &req_type,
            kind.operation_day(),
            &r.sndr,
            now,
            &format!("superseded by a newer request (SEQN {seqn})"),
        )
        .await?;
        let row = req_track::insert_pending(
            &mut tx,
            &NewRequest {
                req_type: &req_type,
                operation_day: kind.operation_day(),
                sender: &r.sndr,
                seqn: &seqn,
                routing_id: routing,
                request_xml: &xml,
                created_at: now,
            },
        )
        .await?;
        tx.commit().await?;
        Ok((row, superseded))
    }

    /// Step 2: the COUTMSGS insert; returns COUTMSGS_ID.
    pub async fn write(&self, row: &ReqRow, now: DateTime<Utc>) -> Result<i64, RequestError> {
        self.refuse_in_shadow()?;
        let inserted = now
            .with_timezone(&self.config.msgx.airport.tz())
            .naive_local();
        Ok(self
            .mailbox
            .insert_request(&row.request_xml, inserted, &row.routing_id)
            .await?)
    }

    /// Step 3: PENDING → SENT linked to `coutmsgs_id`.
    pub async fn confirm(
        &self,
        row: &ReqRow,
        coutmsgs_id: i64,
        now: DateTime<Utc>,
    ) -> Result<ReqRow, RequestError> {
        if !req_track::mark_sent(self.pg, row.id, coutmsgs_id, now).await? {
            return Err(RequestError::NoLongerPending {
                id: row.id,
                coutmsgs_id,
            });
        }
        Ok(req_track::get(self.pg, row.id)
            .await?
            .unwrap_or_else(|| row.clone()))
    }

    /// Compensation: each PENDING row whose COUTMSGS row exists becomes SENT
    /// (never sent twice); one without a row older than `msgx.request.expiry`
    /// becomes EXPIRED; younger ones are left (their writer may be running).
    /// The SENT time of a confirmed row is its registration time, the last
    /// instant msgx knows preceded the write.
    pub async fn compensate(&self, now: DateTime<Utc>) -> Result<Compensation, RequestError> {
        let expiry = self.config.msgx.request.expiry.chrono();
        compensate_pending(self.pg, self.mailbox, expiry, now).await
    }
}

/// [`Tracker::compensate`] with the expiry given (the `request-expiry` job
/// holds it in its config).
pub async fn compensate_pending(
    pg: &PgPool,
    mailbox: &Mailbox,
    expiry: Duration,
    now: DateTime<Utc>,
) -> Result<Compensation, RequestError> {
    let mut done = Compensation::default();
    for row in req_track::pending(pg, COMPENSATION_BATCH).await? {
        let found = mailbox
            .find_requests(&row.seqn, &row.routing_id)
            .await?
            .into_iter()
            .find(|(_, xml)| *xml == row.request_xml);
        match found {
            Some((coutmsgs_id, _)) => {
                if req_track::mark_sent(pg, row.id, coutmsgs_id, row.created_at).await? {
                    tracing::warn!(
                        request = row.id,
                        coutmsgs_id,
                        seqn = %row.seqn,
                        "Request was written to COUTMSGS but not confirmed; confirmed now (not sent again)"
                    );
                    done.confirmed += 1;
                }
            }
            None if row.created_at + expiry <= now => {
                if req_track::expire_pending(
                    pg,
                    row.id,
                    now,
                    "never sent: no COUTMSGS row with its SEQN and ROUTINGID",
                )
                .await?
                {
                    tracing::warn!(request = row.id, seqn = %row.seqn, "Request was never written to COUTMSGS; expired");
                    done.expired += 1;
                }
            }
            None => done.left += 1,
        }
    }
    Ok(done)
}

/// STDB/STDE of an RQFD for operation day `day`: from the day cutover to the
/// next day's cutover, as `DDMMMYYHHMM` local time (sis-format §1.5, §5).
pub fn schedule_window(day: NaiveDate, cutover: chrono::NaiveTime) -> (String, String) {
    let start = day.and_time(cutover);
    let end = start + Duration::days(1);
    (
        crate::codec::format_sis_time(start),
        crate::codec::format_sis_time(end),
    )
}

/// The operation days from `from` to `to` inclusive (`msgx request schedule
/// --from/--to`: one RQFD per day, since a request covers one day).
pub fn days_between(from: NaiveDate, to: NaiveDate) -> Vec<NaiveDate> {
    from.iter_days().take_while(|d| *d <= to).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_window_runs_cutover_to_cutover() {
        let day = NaiveDate::from_ymd_opt(2026, 12, 31).expect("valid");
        assert_eq!(
            schedule_window(day, chrono::NaiveTime::MIN),
            ("31DEC260000".to_string(), "01JAN270000".to_string())
        );
        let four = chrono::NaiveTime::from_hms_opt(4, 0, 0).expect("valid");
        assert_eq!(
            schedule_window(day, four),
            ("31DEC260400".to_string(), "01JAN270400".to_string())
        );
    }

    #[test]
    fn days_between_is_inclusive_and_empty_when_reversed() {
        let d = |n| NaiveDate::from_ymd_opt(2026, 12, n).expect("valid");
        assert_eq!(days_between(d(1), d(3)), vec![d(1), d(2), d(3)]);
        assert!(days_between(d(3), d(1)).is_empty());
    }

    #[test]
    fn request_types() {
        assert_eq!(
            RequestKind::Reference {
                rtype: "GLST".into()
            }
            .req_type(),
            "RQRD:GLST"
        );
        let day = NaiveDate::from_ymd_opt(2026, 12, 1).expect("valid");
        assert_eq!(RequestKind::Schedule { day }.req_type(), "RQFD");
    }
}
