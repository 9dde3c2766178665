-- Kafka delivery (issue 6; design §8.1–§8.3).

-- The Dispatcher's per-FLID head check (§8.1): "is an earlier PENDING event of
-- this FLID still backing off?" is an index probe per candidate row.
CREATE INDEX msg_event_msg_flid_pending_idx ON msg_event (partition_key, event_id)
    WHERE status = 'PENDING' AND target = 'KAFKA:msg';

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
