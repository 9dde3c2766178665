//! `schd-flush`: publishes the latest full state per flight to the schd
//! topic (design §8.2, §12.4).
//!
//! KAFKA:schd keeps one outbox row per FLID; the processors upsert it
//! only-forward (STATE_VERSION ≥ the stored one) and give it a new EVENT_ID
//! (its write generation) each time, so ten updates between two flushes
//! leave one row: one message with the last version (conflation).
//!
//! A round takes up to `msgx.schd.flush-limit` due rows (one per FLID, so one
//! wave), sends UPSERT rows with their payload and TOMBSTONE rows with a null
//! value, key = FLID, and marks with the generation and version it read
//! (`WHERE event_id = <read> AND state_version = <read>`): a row replaced
//! while the record was in flight is not marked and goes out next round
//! (counted as `superseded`). Failures follow [`super::retry`].

use super::outbox::{DeliveryCounts, RoundEnd, WaveSender};
use crate::jobs::JobError;
use crate::kafka::producer::Topic;
use crate::store::pg::msg_event::PendingEvent;

/// One round of a one-row-per-key target ([`Feed::Schd`](super::Feed::Schd),
/// [`Feed::Season`](super::Feed::Season)): every row is the latest of its
/// key, so the whole batch is one wave.
pub(crate) async fn deliver_latest(
    wave: &WaveSender<'_>,
    topic: Topic,
    rows: Vec<PendingEvent>,
    report: &mut DeliveryCounts,
) -> Result<RoundEnd, JobError> {
    let refs: Vec<&PendingEvent> = rows.iter().collect();
    let outcome = wave.send(topic, &refs, report).await?;
    let mut end = RoundEnd {
        confirmed: outcome.confirmed.iter().filter(|ok| **ok).count() as u64,
        broker_failures: outcome.broker_failures,
        fatal: outcome.fatal,
        ..RoundEnd::default()
    };
    for (row, _) in rows.iter().zip(&outcome.confirmed).filter(|(_, ok)| !**ok) {
        end.unsent(row.event_id);
    }
    Ok(end)
}
