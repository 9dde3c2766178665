-- Since when the row's backfill attempts have been failing (issue 31 item 4;
-- design §6.2, §6.3): the time of the first failed attempt of the current
-- streak, set by the statement that records a failed attempt and kept while
-- the row keeps failing. A row is abandoned TRANSIENT_DEADLINE only when its
-- streak began before its deadline (ENQUEUED_AT + R) and it still fails at
-- or after it; a row whose first failure is at or past its deadline is tried
-- at every scan until it is written. NULL: no failed attempt since the
-- intent, the last reopen or replay; cleared when the mark is confirmed.
ALTER TABLE proc_state ADD COLUMN backfill_failing_since TIMESTAMPTZ;
-- The archive copies every PROC_STATE column (store/pg/proc_state_hst.rs).
ALTER TABLE proc_state_hst ADD COLUMN backfill_failing_since TIMESTAMPTZ;

-- Rows failing at the upgrade: their streak began no later than their last
-- recorded failure, UPDATED_AT (the failure statement moves it). Without
-- this, a row failing since before R would restart its streak at its next
-- failure and never reach TRANSIENT_DEADLINE.
UPDATE proc_state SET backfill_failing_since = updated_at
 WHERE state IN ('SUCCEEDED', 'SKIPPED', 'DEAD')
   AND backfill_at IS NULL AND backfill_abandoned_at IS NULL
   AND backfill_attempts > 0;
