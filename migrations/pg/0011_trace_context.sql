-- W3C trace context per message (issue 21 item 5; docs/pipeline.md "Trace
-- context"). TRACEPARENT is the `traceparent` ingest gave the message when it
-- enqueued it (version 00, random trace-id and span-id, sampled). Rows
-- enqueued before this migration have none, and their events carry no header.
ALTER TABLE proc_state ADD COLUMN traceparent TEXT
    CONSTRAINT proc_state_traceparent_form
    CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
-- The archive copies every PROC_STATE column (store/pg/proc_state_hst.rs).
ALTER TABLE proc_state_hst ADD COLUMN traceparent TEXT;

-- The trace of the message whose decision wrote the outbox row, copied from
-- PROC_STATE at the append: the Kafka `traceparent` header is read from here,
-- so a redelivery (after a restart, a resend of a DEAD row) carries the same
-- trace even once PROC_STATE is archived. A KAFKA:schd/KAFKA:season row takes
-- the trace of each message that replaces it (the latest that changed it).
ALTER TABLE msg_event ADD COLUMN traceparent TEXT;
