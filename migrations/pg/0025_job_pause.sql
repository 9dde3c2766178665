-- Jobs under the operator's control (issue 37 item 4): a paused job is not
-- started by the daemon (nor by a standby that takes over: it reads the same
-- row) nor by `msgx run` without --force. One row per paused job: who, when,
-- why (mandatory); resuming deletes it. The history of pauses is the
-- JOB_PAUSE / JOB_RESUME rows of operator_action.
CREATE TABLE job_pause (
    job        TEXT PRIMARY KEY,
    paused_by  TEXT NOT NULL,
    paused_at  TIMESTAMPTZ NOT NULL,
    reason     TEXT NOT NULL CHECK (btrim(reason) <> '')
);

-- A scheduled start of a paused job is recorded as SKIPPED_PAUSED (a daemon's
-- polled pipeline job only counts it: msgx_job_paused_skips_total).
ALTER TABLE job_run DROP CONSTRAINT job_run_outcome_check;
ALTER TABLE job_run ADD CONSTRAINT job_run_outcome_check
    CHECK (outcome IN ('RUNNING', 'SUCCEEDED', 'FAILED', 'SKIPPED_LOCKED', 'ABORTED', 'SKIPPED_PAUSED'));

ALTER TABLE operator_action DROP CONSTRAINT operator_action_action_check;
ALTER TABLE operator_action ADD CONSTRAINT operator_action_action_check
    CHECK (action IN ('EVENT_RESEND', 'EVENT_DISCARD', 'REQUEST_MATCH_DEGRADED',
                      'REPLAY', 'REPLAY_FORCED', 'SKIP', 'BACKFILL_REOPEN', 'BACKFILL_RECONCILE',
                      'REQUEST_SEND', 'JOB_RUN', 'SESSION_REVOKE', 'EVENT_REPUBLISH',
                      'JOB_PAUSE', 'JOB_RESUME'));
