-- What a PROC_STATE row costs to write (issue 38 item 1: ingest had fallen
-- from ~80,000 to ~18,000 rows/s; docs/BENCHMARKS.md "Ingest regression").
-- Backend CPU of ingest's INSERT of 20,000 rows in rounds of 500, measured
-- on the 2-core VM: 0.36–0.38 s with 0011's check and 0017's indexes,
-- 0.24–0.26 s without the check, and a fifth less again with the partial
-- indexes below.
--
-- 1. TRACEPARENT's form (migration 0011) without a regular expression of
--    counted repetitions: `~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'`
--    took 13–19 µs per value in PostgreSQL's engine, and a CHECK runs on
--    every new row version (the pump's updates too). The same rule in cheap
--    parts, ~2 µs: 55 bytes; "00-", 32, "-", 16, "-", 2 characters (a
--    multi-byte character leaves fewer than 55 characters and fails the
--    pattern); nothing but lower-case hex digits and "-"; exactly three "-"
--    (so the 50 others are hex digits). The same values are accepted
--    (tests/it/schema.rs
--    the_traceparent_check_accepts_the_w3c_form_alone_without_a_counted_regex).
ALTER TABLE proc_state DROP CONSTRAINT proc_state_traceparent_form;
ALTER TABLE proc_state ADD CONSTRAINT proc_state_traceparent_form CHECK (
    octet_length(traceparent) = 55
    AND traceparent LIKE '00-________________________________-________________-__'
    AND traceparent !~ '[^0-9a-f-]'
    AND octet_length(replace(traceparent, '-', '')) = 52
);

-- 2. The console's trigram indexes (migration 0017) only over the rows that
--    have the text: a GIN index keeps an entry for a NULL too, so every
--    enqueued row (both columns NULL) paid two GIN insertions for nothing.
--    `col ILIKE pattern` is false for NULL, so the planner proves the
--    predicate from the search itself and uses these for the same searches.
DROP INDEX proc_state_last_error_trgm_idx;
CREATE INDEX proc_state_last_error_trgm_idx
    ON proc_state USING gin (last_error gin_trgm_ops) WHERE last_error IS NOT NULL;
DROP INDEX proc_state_outcome_reason_trgm_idx;
CREATE INDEX proc_state_outcome_reason_trgm_idx
    ON proc_state USING gin (outcome_reason gin_trgm_ops) WHERE outcome_reason IS NOT NULL;
