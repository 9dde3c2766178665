-- The audit trail as events (issue 37 item 3): every OPERATOR_ACTION row is
-- also appended, in the same statement, to the outbox as a KAFKA:audit row (a
-- CloudEvents 1.0 JSON record), keyed by the acting user so that one
-- operator's actions keep their order. Appended like KAFKA:msg (no
-- one-row-per-key index): every action is its own record.
ALTER TABLE msg_event DROP CONSTRAINT msg_event_target_check;
ALTER TABLE msg_event ADD CONSTRAINT msg_event_target_check
    CHECK (target IN ('KAFKA:msg', 'KAFKA:schd', 'KAFKA:season', 'KAFKA:audit'));

