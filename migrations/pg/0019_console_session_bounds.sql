-- Console sessions end on more than their absolute lifetime (issue 32
-- item 7, M7; docs/console.md "Sessions"):
--
-- * `credential_sha256`: the SHA-256 of the user's role and password hash
--   in the users file at login. A request whose user's entry no longer
--   hashes to it (password changed, role changed) ends the session, also
--   after a restart: changing a password logs that user out everywhere.
-- * `last_seen_at`: the time of the session's last request; a session idle
--   longer than `msgx.console.session-idle-timeout` has ended.
--
-- Sessions of an older msgx carry neither and are ended: their users log in
-- again once after the upgrade.
DELETE FROM console_session;
ALTER TABLE console_session
    ADD COLUMN credential_sha256 TEXT NOT NULL,
    ADD COLUMN last_seen_at TIMESTAMPTZ NOT NULL;
-- A login caps its user's sessions (`sessions-per-user`), newest kept; and
-- `msgx console revoke USER` ends them all.
CREATE INDEX console_session_user_idx ON console_session (user_name, created_at);

ALTER TABLE operator_action DROP CONSTRAINT operator_action_action_check;
ALTER TABLE operator_action ADD CONSTRAINT operator_action_action_check
    CHECK (action IN ('EVENT_RESEND', 'EVENT_DISCARD', 'REQUEST_MATCH_DEGRADED',
                      'REPLAY', 'REPLAY_FORCED', 'SKIP', 'BACKFILL_REOPEN', 'BACKFILL_RECONCILE',
                      'REQUEST_SEND', 'JOB_RUN', 'SESSION_REVOKE'));
