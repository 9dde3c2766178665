//! End-to-end latency of the change notifications: per
//! KAFKA:msg event that became SENT, how long after its message was enqueued
//! (msgx's clock) and after the mailbox received it (the AODB's clock) the
//! broker confirmed it. docs/metrics.md, "End-to-end latency".
//!
//! - **Once per event.** Recorded from what the SENT mark changed
//!   ([`msg_event::mark_msg_sent`] returns only rows that were PENDING), after
//!   its transaction committed: a record sent twice (a crash between the ack
//!   and the mark, at-least-once) counts once, at the mark that stuck.
//! - **A retried event measures from enqueue** to the send that succeeded:
//!   that is the latency its consumer saw.
//! - **Per message only.** KAFKA:schd and KAFKA:season rows are aggregations
//!   (latest state per key), not one message's notification: not counted.
//! - **Skew is counted, not recorded as negative.** A start after SENT_AT
//!   (the AODB's clock ahead of msgx's, or a failover between hosts whose
//!   clocks differ) is recorded as 0 and counted in
//!   `msgx_pipeline_latency_clock_skew_total{clock}`.

use crate::store::pg::msg_event::SentMsg;
use chrono::{DateTime, Utc};

/// ENQUEUED_AT → SENT_AT, msgx's clock.
pub const END_TO_END: &str = "msgx_pipeline_end_to_end_seconds";
/// Mailbox RECEIVED_AT → SENT_AT, labelled `clock="external"`.
pub const MAILBOX_TO_KAFKA: &str = "msgx_pipeline_mailbox_to_kafka_seconds";
/// Observations clamped to 0, by `clock`.
pub const CLOCK_SKEW: &str = "msgx_pipeline_latency_clock_skew_total";

/// The `clock` label: msgx's injected clock, or the AODB's (the mailbox's
/// CMINMSGS_DATE_RECEIVED, local time converted at enqueue).
pub const CLOCKS: [&str; 2] = ["msgx", "external"];

/// Seconds from `start` to `end` (0 when `start` is later), and whether
/// `start` was later: a skewed clock.
pub fn clamped_seconds(start: DateTime<Utc>, end: DateTime<Utc>) -> (f64, bool) {
    (crate::clock::seconds_between(start, end), start > end)
}

/// Records the latencies of the events one SENT mark changed at `sent_at`.
pub fn record(sent: &[SentMsg], sent_at: DateTime<Utc>) {
    let end_to_end = metrics::histogram!(END_TO_END);
    let mailbox = metrics::histogram!(MAILBOX_TO_KAFKA, "clock" => CLOCKS[1]);
    for (start, clock, histogram) in sent.iter().flat_map(|s| {
        [
            s.enqueued_at.map(|t| (t, CLOCKS[0], &end_to_end)),
            s.received_at.map(|t| (t, CLOCKS[1], &mailbox)),
        ]
        .into_iter()
        .flatten()
    }) {
        let (seconds, skewed) = clamped_seconds(start, sent_at);
        if skewed {
            metrics::counter!(CLOCK_SKEW, "clock" => clock).increment(1);
        }
        histogram.record(seconds);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_after_the_end_is_zero_and_flagged() {
        let t = DateTime::UNIX_EPOCH;
        let ms = chrono::Duration::milliseconds;
        assert_eq!(clamped_seconds(t, t + ms(250)), (0.25, false));
        assert_eq!(clamped_seconds(t, t), (0.0, false));
        assert_eq!(clamped_seconds(t + ms(1), t), (0.0, true));
    }
}
