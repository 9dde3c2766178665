-- Table statistics that follow the tables' growth, so a statement planned
-- for its own values (the pooled sessions run with plan_cache_mode =
-- force_custom_plan; docs/configuration.md "Planning") sees current row
-- counts. PostgreSQL's defaults re-analyze a table after 10 % of it changed:
-- on a table of millions of rows that is hundreds of thousands of rows of
-- drift. The tables msgx grows by every message re-analyze after 2 % (and
-- at least 1,000 rows); the ones it updates in place (the lifecycle, the
-- outbox, the flights) are also vacuumed after 5 % dead rows instead of
-- 20 %, keeping their partial indexes (the head, PENDING events) small.
ALTER TABLE proc_state SET (
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000,
    autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000);
ALTER TABLE msg_event SET (
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000,
    autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000);
ALTER TABLE flight_schd SET (
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000,
    autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000);
ALTER TABLE flight_history SET (
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000);
ALTER TABLE proc_state_hst SET (
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000);
ALTER TABLE schd_snap_log SET (
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000);
ALTER TABLE compat_request SET (
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000);
