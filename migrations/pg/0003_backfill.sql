-- Backfill operations (issue 7; design §6, §9.1).

-- BACKFILL_ACTION: every operator action on the message lifecycle — backfill
-- reopen / reconcile and replay (`msgx backfill …`, `msgx replay`): who did
-- what to which messages and why. Append-only. TARGET is the comma-separated
-- list of MSG_IDs. Named apart from the delivery branch's OPERATOR_ACTION,
-- whose ACTION column only admits its own event actions.
CREATE TABLE backfill_action (
    id      BIGSERIAL PRIMARY KEY,
    at      TIMESTAMPTZ NOT NULL,
    actor   TEXT NOT NULL,
    action  TEXT NOT NULL,
    target  TEXT NOT NULL,
    reason  TEXT
);
CREATE INDEX backfill_action_at_idx ON backfill_action (at);

-- `msgx backfill abandoned` and the status counts (§6.2 放弃清单).
CREATE INDEX proc_state_backfill_abandoned_idx ON proc_state (backfill_abandoned_at)
    WHERE backfill_abandoned_at IS NOT NULL;

-- `msgx replay --error-class C` (§9.1): FAILED/DEAD rows by class.
CREATE INDEX proc_state_replay_idx ON proc_state (error_class, msg_id)
    WHERE state IN ('FAILED', 'DEAD');
