-- The seasonal schedule SCHS (issue 18 item 2; sis-format §2.5; docs/season.md).

-- The revision of a stored season: one value per stored SCHS, growing across
-- all seasons, so it is also the `state-version` of the season records (the
-- only-forward outbox rule and the consumers' guard) and never goes back,
-- also for a season that was pushed out and comes again.
CREATE SEQUENCE season_revision_seq AS BIGINT;

-- One row per stored season, keyed by SNAM + SDAT/EDAT. A new SCHS for the
-- same key replaces the row and all its series in one transaction; only the
-- msgx.season.keep most recent (SDAT, EDAT) are kept.
CREATE TABLE season (
    season_id    BIGSERIAL PRIMARY KEY,
    snam         TEXT NOT NULL,
    sdat         DATE NOT NULL,
    edat         DATE NOT NULL CHECK (sdat <= edat),
    apcd         TEXT,
    revision     BIGINT NOT NULL,
    msg_id       BIGINT NOT NULL,          -- the SCHS that stored it
    updated_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (snam, sdat, edat)
);

-- Its series (one per SCHS FLTR, message order), with the FLTR fields a
-- season carries; any other scalar the FLTR sent is kept in OTHER.
CREATE TABLE season_series (
    season_id   BIGINT NOT NULL REFERENCES season (season_id) ON DELETE CASCADE,
    ordinal     INTEGER NOT NULL CHECK (ordinal >= 1),
    series_key  TEXT NOT NULL,               -- SNAM|ALCD|FLNO|MVIN|STDT, the record key
    alcd TEXT NOT NULL, flno TEXT NOT NULL, mvin TEXT NOT NULL,
    stdt DATE NOT NULL, eddt DATE NOT NULL CHECK (stdt <= eddt),
    dyop TEXT NOT NULL, scht TEXT NOT NULL,  -- 7 weekday positions; HHMM local
    flty TEXT NOT NULL, flin TEXT NOT NULL, acft TEXT NOT NULL,
    alsc TEXT, reno TEXT, taop TEXT, tafl TEXT, trml TEXT, maxp BIGINT, csop TEXT, csft TEXT,
    other       JSONB NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (season_id, ordinal),
    UNIQUE (season_id, series_key)
);

-- ROUT and ERUT of a series, as FLIGHT_ROUTE_POINT for flights, except that
-- the times are text: `HHMM` as sent, or ISO-8601 with the airport offset
-- for a DDMMMYYHHMM time (the real samples' ERUT).
CREATE TABLE season_route_point (
    season_id   BIGINT NOT NULL,
    series      INTEGER NOT NULL,
    route_kind  TEXT NOT NULL CHECK (route_kind IN ('ROUT', 'ERUT')),
    ordinal     INTEGER NOT NULL CHECK (ordinal >= 1),
    source_seq  BIGINT,
    apcd TEXT, scat TEXT, sadc TEXT, scdt TEXT, sddc TEXT,
    PRIMARY KEY (season_id, series, route_kind, ordinal),
    FOREIGN KEY (season_id, series) REFERENCES season_series (season_id, ordinal) ON DELETE CASCADE
);

-- The season topic through the same outbox: KAFKA:season rows are one per
-- record key (the series key), replaced only forward in STATE_VERSION = the
-- revision, like KAFKA:schd per FLID (§8.2).
ALTER TABLE msg_event DROP CONSTRAINT msg_event_target_check;
ALTER TABLE msg_event ADD CONSTRAINT msg_event_target_check
    CHECK (target IN ('KAFKA:msg', 'KAFKA:schd', 'KAFKA:season'));
CREATE UNIQUE INDEX msg_event_season_key_uq ON msg_event (partition_key) WHERE target = 'KAFKA:season';
