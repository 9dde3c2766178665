-- msgx events republish (issue 36 item 4): the operator's request to re-send
-- flights' records is audited as EVENT_REPUBLISH.
ALTER TABLE operator_action DROP CONSTRAINT operator_action_action_check;
ALTER TABLE operator_action ADD CONSTRAINT operator_action_action_check
    CHECK (action IN ('EVENT_RESEND', 'EVENT_DISCARD', 'REQUEST_MATCH_DEGRADED',
                      'REPLAY', 'REPLAY_FORCED', 'SKIP', 'BACKFILL_REOPEN', 'BACKFILL_RECONCILE',
                      'REQUEST_SEND', 'JOB_RUN', 'SESSION_REVOKE', 'EVENT_REPUBLISH'));
