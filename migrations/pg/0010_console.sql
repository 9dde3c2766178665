-- Operator console (issue 21; docs/console.md).

-- Login sessions, server-side: logout and expiry end a session at once, and
-- the daemon and a standby `msgx console` share them. The cookie carries a
-- random id; only its SHA-256 is stored, so a reader of this table cannot
-- take over a session. The role is not stored: it is read from the users
-- file on every request, so removing a user or lowering a role takes effect
-- at once.
CREATE TABLE console_session (
    id_sha256   TEXT PRIMARY KEY,
    user_name   TEXT NOT NULL,
    csrf_token  TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX console_session_expires_idx ON console_session (expires_at);

-- Messages page: keyset paging by MSG_ID (newest first) within a state, so
-- a page filtered by state reads only its rows on a large PROC_STATE.
CREATE INDEX proc_state_state_msg_idx ON proc_state (state, msg_id);

-- Messages page FLID filter and message detail: the events of a message.
CREATE INDEX msg_event_msg_idx ON msg_event (msg_id) WHERE msg_id IS NOT NULL;
-- Messages page FLID filter and flight detail: a flight's message events.
CREATE INDEX msg_event_flid_msg_idx ON msg_event (partition_key, msg_id) WHERE target = 'KAFKA:msg';

-- One audit trail for every operator action (issue 21 item 2): replay, skip,
-- reopen and reconcile are recorded in OPERATOR_ACTION too (beside their
-- BACKFILL_ACTION row, same transaction; target `proc_state:<ids>`), and the
-- console records the upstream requests and job runs it starts.
ALTER TABLE operator_action DROP CONSTRAINT operator_action_action_check;
ALTER TABLE operator_action ADD CONSTRAINT operator_action_action_check
    CHECK (action IN ('EVENT_RESEND', 'EVENT_DISCARD', 'REQUEST_MATCH_DEGRADED',
                      'REPLAY', 'REPLAY_FORCED', 'SKIP', 'BACKFILL_REOPEN', 'BACKFILL_RECONCILE',
                      'REQUEST_SEND', 'JOB_RUN'));
