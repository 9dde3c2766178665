-- dispatch-msg's read of its due rows (issue 38 item 5; docs/BENCHMARKS.md
-- "Where a message's time goes"): `target IN ('KAFKA:msg', 'KAFKA:audit')
-- AND status = 'PENDING' … ORDER BY event_id LIMIT n`. msg_event_pending_idx
-- (target, event_id) cannot give that order for two targets, so the planner
-- walked the primary key and filtered every SENT row it met: 3–5 ms per run
-- with 4,000 rows in the table (more as it grows until event-cleanup), a
-- third of a message's time from the pump's commit to its record's ack.
-- This index holds exactly the rows that read wants, in its order: the read
-- touches only due rows (0.03 ms), whatever the table holds.
CREATE INDEX msg_event_dispatch_idx ON msg_event (event_id)
    WHERE status = 'PENDING' AND target IN ('KAFKA:msg', 'KAFKA:audit');
