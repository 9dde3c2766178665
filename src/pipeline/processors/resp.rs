//! RESP (G-RESP-GUARD, design §7.1, §7.2): a SCHD or reference RESP is
//! applied only when it answers an open request ([`crate::requests::matching`]).
//!
//! One PostgreSQL transaction: lock the candidate REQ_TRACK rows, decide the
//! match, apply the snapshot through the same body the DNLD path uses
//! ([`flight_txn::apply_in`] for SCHD, [`refdata::apply_in`] for
//! reference data), then SENT → DONE for the matched requests and, for a
//! degraded match, the audit row. So a request is DONE only once its data is
//! committed, and a failed or rejected snapshot leaves it SENT. Unmatched →
//! nothing written; the caller records SKIPPED `resp-unmatched:<why>`.

use chrono::Utc;

use super::{FlightTxnResult, Processors, flight_txn, refdata, trace};
use crate::codec::{DecodedMessage, MsgKind};
use crate::domain::FlightStateEngine;
use crate::jobs::{JobContext, JobError};
use crate::requests::matching::{self, Candidate, MatchMode, Matched, RespFacts, Verdict};
use crate::store::pg::operator_action::{self, NewAction};
use crate::store::pg::req_track;

/// Candidate requests read per RESP (newest first; older ones are long closed).
const CANDIDATES: i64 = 50;

impl Processors<'_> {
    /// The RespProcessor: matches and, when matched, applies one RESP (SCHD
    /// or reference data).
    #[doc(alias = "RespProcessor")]
    pub async fn resp(
        &self,
        msg_id: i64,
        msg: &DecodedMessage,
    ) -> Result<FlightTxnResult, JobError> {
        let ctx = self.ctx;
        let facts = facts(self.engine, msg)?;
        let skew = self.settings.clock_skew;
        let mut tx = ctx.pg.begin().await?;
        let rows = req_track::for_match(
            &mut tx,
            &facts.req_type,
            (facts.is_schedule() && facts.echo_seqn.is_none()).then_some(facts.days.as_slice()),
            facts.echo_seqn.as_deref(),
            CANDIDATES,
        )
        .await?;
        let candidates: Vec<Candidate> = rows
            .iter()
            .map(|r| Candidate {
                id: r.id,
                operation_day: r.operation_day,
                state: r.state,
                seqn: r.seqn.clone(),
                sent_at: r.sent_at,
            })
            .collect();
        let result = match matching::decide(&facts, &candidates, skew) {
            Verdict::Unmatched(why) => {
                tx.rollback().await?;
                FlightTxnResult::NoMatch(format!("resp-unmatched:{}", why.as_str()))
            }
            Verdict::Matched(matched) => {
                let result = match &msg.kind {
                    MsgKind::RefData(r) => refdata::apply_in(ctx, &mut tx, msg_id, r).await?,
                    _ => flight_txn::apply_in(self, &mut tx, msg_id, msg).await?,
                };
                if let FlightTxnResult::Succeeded { .. } = result {
                    close(ctx, &mut tx, msg_id, &facts, &matched, skew).await?;
                    tx.commit().await?;
                    for m in &matched {
                        tracing::info!(
                            request = m.id,
                            msg_id,
                            mode = m.mode.as_str(),
                            "Request answered: DONE"
                        );
                    }
                } else {
                    tx.rollback().await?;
                }
                result
            }
        };
        if let MsgKind::Schd(s) = &msg.kind {
            trace(self, msg_id, "RESP", s, &result).await;
        }
        Ok(result)
    }
}

/// SENT → DONE for every matched request, and the degraded-match audit.
async fn close(
    ctx: &JobContext,
    conn: &mut sqlx::PgConnection,
    msg_id: i64,
    facts: &RespFacts,
    matched: &[Matched],
    skew: chrono::Duration,
) -> Result<(), JobError> {
    let now = ctx.clock.now();
    for m in matched {
        if !req_track::complete(
            &mut *conn,
            m.id,
            msg_id,
            m.mode.as_str(),
            m.audit.as_deref(),
            now,
        )
        .await?
        {
            return Err(JobError::Other(format!(
                "request {} changed state while message {msg_id} answered it",
                m.id
            )));
        }
        if m.mode == MatchMode::Degraded {
            tracing::warn!(
                request = m.id,
                msg_id,
                audit = m.audit.as_deref().unwrap_or(""),
                "RESP matched by the degraded rule (C-23)"
            );
            operator_action::insert(
                &mut *conn,
                &NewAction {
                    at: now,
                    actor: "msgx",
                    action: "REQUEST_MATCH_DEGRADED",
                    target: &format!("req_track:{}", m.id),
                    reason: m.audit.as_deref(),
                    detail: serde_json::json!({
                        "msg_id": msg_id,
                        "req_type": facts.req_type,
                        "days": facts.days,
                        "resp_dttm": facts.dttm,
                        "clock_skew_seconds": skew.num_seconds(),
                    }),
                },
            )
            .await?;
        }
    }
    Ok(())
}

/// What the matching rules need from the RESP.
fn facts(engine: &FlightStateEngine, msg: &DecodedMessage) -> Result<RespFacts, JobError> {
    let (req_type, days) = match &msg.kind {
        MsgKind::Schd(s) => (
            "RQFD".to_string(),
            matching::covered_days(s, engine.config().day_cutover),
        ),
        MsgKind::RefData(r) => (format!("RQRD:{}", r.rtype), Vec::new()),
        _ => {
            return Err(JobError::Other(format!(
                "{}-{} is not a RESP the request matcher handles",
                msg.meta.msg_type, msg.meta.styp
            )));
        }
    };
    Ok(RespFacts {
        req_type,
        days,
        dttm: msg
            .meta
            .dttm
            .map(|t| engine.config().local_time(t).with_timezone(&Utc)),
        echo_seqn: matching::echo_seqn(msg),
    })
}
