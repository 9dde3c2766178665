-- A flight's detail lists are part of its stored version (issue 31 item 6;
-- docs/pipeline.md "The flight cache", docs/schema.md). The pump's flight
-- cache uses a state only while its FLIGHT_SCHD row shows the version it was
-- cached at (xmin, updated_at, content_version). A write to a detail table
-- alone (an operator correcting a gate) did not touch that row, so the pump
-- kept publishing the old list and merged the next message into it.
--
-- CONTENT_VERSION counts the detail changes made without rewriting the row:
-- every INSERT, UPDATE and DELETE of a detail row adds 1 to its flight's
-- (both flights' when an UPDATE moves a row to another FLID), which also
-- gives the row a new xmin. TRUNCATE of a detail table adds 1 to every flight.
--
-- Skipped in msgx's own flight transactions: their opening statement (the
-- PIPELINE_LOCK, store/pg/proc_state.rs) sets `msgx.writer = 'flight_store'`
-- for the transaction, and they change flights only through FlightStore,
-- whose every write upserts the FLIGHT_SCHD row itself (new xmin). The
-- trigger's WHEN test is evaluated per row without calling the function, so
-- the pump's detail writes cost no extra statement. A session that sets
-- `msgx.writer` itself takes the same responsibility.
--
-- Adding a column with a constant default rewrites nothing (PostgreSQL 11+).
ALTER TABLE flight_schd ADD COLUMN content_version BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION flight_detail_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE flight_schd SET content_version = content_version + 1;
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE flight_schd SET content_version = content_version + 1 WHERE flid = OLD.flid;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.flid IS DISTINCT FROM OLD.flid) THEN
        UPDATE flight_schd SET content_version = content_version + 1 WHERE flid = NEW.flid;
    END IF;
    RETURN NULL;
END
$$;

DO $$
DECLARE
    t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['flight_gate', 'flight_counter', 'flight_carousel', 'flight_stand',
                             'flight_chute', 'flight_delay', 'flight_airbridge', 'flight_chock',
                             'flight_service', 'flight_vip', 'flight_door', 'flight_tractor',
                             'flight_push', 'flight_route_point']
    LOOP
        EXECUTE format(
            'CREATE TRIGGER %1$s_changed AFTER INSERT OR UPDATE OR DELETE ON %1$I FOR EACH ROW '
            'WHEN (current_setting(''msgx.writer'', true) IS DISTINCT FROM ''flight_store'') '
            'EXECUTE FUNCTION flight_detail_changed()', t);
        EXECUTE format(
            'CREATE TRIGGER %1$s_truncated AFTER TRUNCATE ON %1$I FOR EACH STATEMENT '
            'WHEN (current_setting(''msgx.writer'', true) IS DISTINCT FROM ''flight_store'') '
            'EXECUTE FUNCTION flight_detail_changed()', t);
    END LOOP;
END
$$;
