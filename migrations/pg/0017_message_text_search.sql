-- The console's Messages text filter (issue 32 item 1; docs/console.md
-- "Paging on a large PROC_STATE"): a case-insensitive substring of
-- LAST_ERROR or OUTCOME_REASON (`ILIKE '%…%'`). Without an index every
-- search read and pattern-matched every PROC_STATE row: on 200,000 rows one
-- long filter ran for 21 s. Trigram GIN indexes serve `ILIKE` with a
-- pattern of three or more characters, so the cost follows the rows that
-- share the pattern's trigrams, not the table.
--
-- pg_trgm ships with the PostgreSQL server (Debian: postgresql-contrib,
-- part of postgresql-15) and is a trusted extension: a role with CREATE on
-- the database may create it. Where msgx's role may not, a superuser runs
-- `CREATE EXTENSION pg_trgm;` in msgx's database before the upgrade
-- (docs/operations.md §7).
--
-- Both columns are NULL on most rows (SUCCEEDED without a reason), so the
-- pump's writes add little to these indexes; fastupdate (the default) keeps
-- the per-row cost to an append to the pending list.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX proc_state_last_error_trgm_idx
    ON proc_state USING gin (last_error gin_trgm_ops);
CREATE INDEX proc_state_outcome_reason_trgm_idx
    ON proc_state USING gin (outcome_reason gin_trgm_ops);
