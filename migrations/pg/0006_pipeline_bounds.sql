-- Pipeline bounds (issue 17 items 4 and 7; design §4.1, §5.1, §9.1).

-- HEAD_FAILURE: since when the FAILED head has been failing. One row,
-- rewritten by every recorded failure (pipeline::failure): the time stays
-- while the same message keeps failing and restarts with a new message or
-- a new streak (after a replay). `msgx_pipeline_head_blocked_seconds` and
-- the `/readyz` check `head` read it; it counts only while that message is
-- the head and FAILED. A separate table rather than a PROC_STATE column,
-- so the column lists of PROC_STATE and PROC_STATE_HST stay equal.
CREATE TABLE head_failure (
    id     SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    msg_id BIGINT NOT NULL,
    since  TIMESTAMPTZ NOT NULL
);

-- When ingest last re-checked a released hole for late rows: each hole is
-- re-checked at most once per msgx.pipeline.late-row-recheck (the check
-- queries the shared mailbox). Set at release: the release saw it empty.
-- NULL (holes released before this migration) = due.
ALTER TABLE inbox_hole ADD COLUMN checked_at TIMESTAMPTZ;
