-- Kafka delivery (issue 6; design §8.1–§8.3).

-- The Dispatcher's per-FLID pause (§8.1): "is an earlier PENDING event of this
-- FLID still backing off?" Only failed heads carry NEXT_ATTEMPT_AT, so this
-- index stays tiny and the check is cheap under any plan (measured: without
-- table statistics a full-outbox index here made the read O(n²)).
CREATE INDEX msg_event_msg_backoff_idx ON msg_event (partition_key, event_id)
    WHERE status = 'PENDING' AND target = 'KAFKA:msg' AND next_attempt_at IS NOT NULL;

-- Operator actions on outbox rows (`msgx events resend|discard`, §8.3): who
-- did what to which row and why. Append-only; `detail` keeps what the row was
-- (a discarded row is deleted from MSG_EVENT).
CREATE TABLE operator_action (
    id      BIGSERIAL PRIMARY KEY,
    at      TIMESTAMPTZ NOT NULL,
    actor   TEXT NOT NULL,
    action  TEXT NOT NULL CHECK (action IN ('EVENT_RESEND', 'EVENT_DISCARD')),
    target  TEXT NOT NULL,                 -- e.g. msg_event:4711
    reason  TEXT,
    detail  JSONB NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX operator_action_at_idx ON operator_action (at);
