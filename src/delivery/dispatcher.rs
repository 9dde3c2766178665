//! `dispatch-msg`: the Dispatcher of KAFKA:msg events (design §8.1).
//!
//! - **Frozen batch.** A round reads up to `msgx.dispatch.batch` due PENDING
//!   rows in EVENT_ID order and acts only on them.
//! - **KAFKA:audit rides along.** The operator actions' CloudEvents are
//!   read in the same batch and keyed by user: one queue per (target, key),
//!   each wave sent per topic, so an operator's actions keep their order
//!   exactly as a FLID's writes do, with the same retries and DLQ.
//! - **Per-FLID order.** The batch is split into one queue per FLID (EVENT_ID
//!   order). It is sent in *waves*: each wave holds the current head of every
//!   FLID queue, so a FLID never has two records in flight, and a record is
//!   sent only after its predecessor's delivery report confirmed it.
//! - **A failed head pauses only its FLID.** Its later rows in the batch are
//!   left untouched (counted as `paused`); the failure sets the head's
//!   NEXT_ATTEMPT_AT, and the read query leaves out every row of a FLID whose
//!   earlier PENDING row is still backing off, so later rounds and runs keep
//!   the pause (`store::pg::msg_event::fetch_due_msg`). A head that turned
//!   DEAD no longer blocks: the next round reads its FLID again from the
//!   first row this round did not send ([`super::outbox`]),
//!   so its followers go out in order. Other FLIDs go on.
//! - **SENT after the report.** A wave's confirmed rows are marked SENT with
//!   SENT_AT in one UPDATE, in a fenced transaction, after every report of the
//!   wave arrived. A crash in between re-sends them (at-least-once).
//!
//! Failure handling (counted, transient, in doubt): [`super::retry`] and
//! docs/delivery.md.

use super::outbox::{DeliveryCounts, RoundEnd, WaveSender};
use crate::jobs::JobError;
use crate::kafka::producer::Topic;
use crate::store::pg::msg_event::PendingEvent;
use std::collections::{HashMap, VecDeque};

/// The Dispatcher's round ([`Feed::Msg`](super::Feed::Msg)): the frozen
/// batch in waves, one record in flight per FLID, a failed head pausing
/// only its FLID (module docs).
#[doc(alias = "Dispatcher")]
pub(crate) async fn deliver(
    wave: &WaveSender<'_>,
    rows: Vec<PendingEvent>,
    report: &mut DeliveryCounts,
) -> Result<RoundEnd, JobError> {
    let mut queues = per_flid_queues(rows);
    let mut end = RoundEnd::default();
    loop {
        let heads: Vec<&PendingEvent> = queues.iter().filter_map(|q| q.front()).collect();
        if heads.is_empty() {
            break;
        }
        if !wave.may_continue()? {
            end.cut_short = true;
            break;
        }
        // One wave per topic: KAFKA:audit rows ride with KAFKA:msg, each
        // to its own topic and with its own per-target metrics.
        let mut ok_by_id: HashMap<i64, bool> = HashMap::with_capacity(heads.len());
        for topic in [Topic::Msg, Topic::Audit] {
            let rows: Vec<&PendingEvent> = heads
                .iter()
                .copied()
                .filter(|r| topic_of(r) == topic)
                .collect();
            if rows.is_empty() || end.fatal {
                continue;
            }
            let outcome = wave.send(topic, &rows, report).await?;
            end.broker_failures += outcome.broker_failures;
            end.fatal |= outcome.fatal;
            ok_by_id.extend(rows.iter().map(|r| r.event_id).zip(outcome.confirmed));
        }
        for q in queues.iter_mut().filter(|q| !q.is_empty()) {
            let ok = q
                .front()
                .and_then(|h| ok_by_id.get(&h.event_id))
                .copied()
                .unwrap_or(false);
            if ok {
                q.pop_front();
                end.confirmed += 1;
            } else {
                // The head failed (or was not sent): the rest of its key waits (§8.1).
                if let Some(head) = q.front() {
                    end.unsent(head.event_id);
                }
                report.paused.add((q.len() - 1) as u64);
                q.clear();
            }
        }
        if end.fatal {
            break;
        }
    }
    // Cut short or fatal: the rows still queued were not sent either.
    for head in queues.iter().filter_map(|q| q.front()) {
        end.unsent(head.event_id);
    }
    Ok(end)
}

/// The topic of a row the Dispatcher reads: KAFKA:audit to the audit
/// topic, everything else (KAFKA:msg) to the msg topic.
fn topic_of(row: &PendingEvent) -> Topic {
    if row.target == crate::domain::EventTarget::KafkaAudit.as_str() {
        Topic::Audit
    } else {
        Topic::Msg
    }
}

/// Splits a batch (EVENT_ID order) into one queue per key (target and
/// FLID, or target and user for KAFKA:audit), each in EVENT_ID order;
/// queues are ordered by their first row.
fn per_flid_queues(rows: Vec<PendingEvent>) -> Vec<VecDeque<PendingEvent>> {
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut queues: Vec<VecDeque<PendingEvent>> = Vec::new();
    for row in rows {
        let key = (row.target.clone(), row.partition_key.clone());
        let i = *index.entry(key).or_insert_with(|| {
            queues.push(VecDeque::new());
            queues.len() - 1
        });
        queues[i].push_back(row);
    }
    queues
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, flid: &str) -> PendingEvent {
        PendingEvent {
            event_id: id,
            target: "KAFKA:msg".into(),
            partition_key: flid.into(),
            event_type: "UPSERT".into(),
            state_version: id,
            payload: Some(b"{}".to_vec()),
            attempts: 0,
            first_failure_at: None,
            created_at: chrono::DateTime::UNIX_EPOCH,
            traceparent: None,
        }
    }

    #[test]
    fn queues_keep_event_id_order_per_flid() {
        let queues = per_flid_queues(vec![
            row(1, "15"),
            row(2, "16"),
            row(3, "15"),
            row(4, "17"),
            row(5, "16"),
            row(6, "15"),
        ]);
        let ids: Vec<Vec<i64>> = queues
            .iter()
            .map(|q| q.iter().map(|r| r.event_id).collect())
            .collect();
        assert_eq!(ids, vec![vec![1, 3, 6], vec![2, 5], vec![4]]);
    }

    #[test]
    fn an_audit_key_never_shares_a_queue_with_a_flid_of_the_same_text() {
        let audit = |id: i64, user: &str| PendingEvent {
            target: "KAFKA:audit".into(),
            ..row(id, user)
        };
        let queues = per_flid_queues(vec![row(1, "15"), audit(2, "15"), audit(3, "15")]);
        let ids: Vec<Vec<i64>> = queues
            .iter()
            .map(|q| q.iter().map(|r| r.event_id).collect())
            .collect();
        assert_eq!(ids, vec![vec![1], vec![2, 3]]);
        assert_eq!(topic_of(&queues[0][0]), Topic::Msg);
        assert_eq!(topic_of(&queues[1][0]), Topic::Audit);
    }
}
