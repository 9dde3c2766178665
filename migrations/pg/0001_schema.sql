-- msgx schema v1: every record of design §1.2 and §11.1, plus INBOX_HOLE,
-- INBOX_LATE_ROW and JOB_RUN that operators need. docs/schema.md explains each.

-- ---------------------------------------------------------------- pipeline --

-- PROC_STATE (§1.2, §3): one row per mailbox message; MSG_ID = CMINMSGS_ID.
CREATE TABLE proc_state (
    msg_id                    BIGINT PRIMARY KEY,
    state                     TEXT NOT NULL
        CHECK (state IN ('PENDING', 'FAILED', 'SUCCEEDED', 'SKIPPED', 'DEAD', 'ARCHIVED')),
    identity_key              TEXT UNIQUE,          -- SNDR|TYPE|STYP|SEQN (§2); survives archiving (INV-9)
    msg_type                  TEXT,
    msg_styp                  TEXT,
    attempts                  INTEGER NOT NULL DEFAULT 0,
    next_attempt_at           TIMESTAMPTZ,
    error_class               TEXT
        CHECK (error_class IN ('MALFORMED', 'CODEC_ERROR', 'INFRA', 'UNSUPPORTED', 'PROTOCOL', 'EXHAUSTED')),
    last_error                TEXT,
    outcome_reason            TEXT,                 -- duplicate-of:<id>, ignored:<rule>, no-match reasons
    source                    TEXT NOT NULL DEFAULT 'poller' CHECK (source IN ('poller', 'compat')),
    received_at               TIMESTAMPTZ,          -- copied from the mailbox; may be NULL; display only
    enqueued_at               TIMESTAMPTZ,          -- local enqueue time: the only overdue basis (§6.1)
    updated_at                TIMESTAMPTZ,
    finished_at               TIMESTAMPTZ,
    backfill_next_at          TIMESTAMPTZ,          -- backfill intent (§1.1)
    backfill_at               TIMESTAMPTZ,          -- mark confirmed
    backfill_attempts         INTEGER NOT NULL DEFAULT 0,
    backfill_last_error       TEXT,
    backfill_abandoned_at     TIMESTAMPTZ,
    backfill_abandoned_reason TEXT CHECK (backfill_abandoned_reason IN ('MISSING_ROW', 'TRANSIENT_DEADLINE')),
    backfill_reconciled_at    TIMESTAMPTZ,          -- operator reconciliation of an abandoned row (§9.3)
    backfill_reconciled_note  TEXT,
    -- Shadow rows keep only MSG_ID and IDENTITY_KEY (§9.3, G-PROC-HST).
    CONSTRAINT proc_state_live_rows_complete
        CHECK (state = 'ARCHIVED' OR (enqueued_at IS NOT NULL AND updated_at IS NOT NULL))
);

-- Head selection (§5.1): the smallest unfinished MSG_ID. ARCHIVED excluded explicitly.
CREATE INDEX proc_state_head_idx ON proc_state (msg_id) WHERE state IN ('PENDING', 'FAILED');

-- Backfill scan (§6.1): terminal, unconfirmed, not abandoned; fairness order.
CREATE INDEX proc_state_backfill_idx ON proc_state (backfill_attempts, msg_id)
    WHERE state IN ('SUCCEEDED', 'SKIPPED', 'DEAD')
      AND backfill_at IS NULL AND backfill_abandoned_at IS NULL;

-- Archive candidates and backlog counts by state.
CREATE INDEX proc_state_state_updated_idx ON proc_state (state, updated_at);

-- PROC_STATE_HST (§9.3, G-PROC-HST): archived terminal rows, own retention.
CREATE TABLE proc_state_hst (
    LIKE proc_state INCLUDING DEFAULTS,
    archived_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (msg_id)
);
CREATE INDEX proc_state_hst_archived_idx ON proc_state_hst (archived_at);

-- INBOX_CURSOR (§1.2, §4): the single-row watermark.
CREATE TABLE inbox_cursor (
    id          SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    w           BIGINT NOT NULL DEFAULT 0,
    hole_since  TIMESTAMPTZ,                        -- first observation of the hole at W+1
    seeded_at   TIMESTAMPTZ,                        -- written with W by cutover seeding (§4.3)
    updated_at  TIMESTAMPTZ
);
INSERT INTO inbox_cursor (id, w) VALUES (1, 0);

-- INBOX_HOLE: every released (permanent) hole, for operators (§4.1 "代价").
CREATE TABLE inbox_hole (
    id          BIGSERIAL PRIMARY KEY,
    first_id    BIGINT NOT NULL,
    last_id     BIGINT NOT NULL,
    first_seen  TIMESTAMPTZ NOT NULL,
    released_at TIMESTAMPTZ NOT NULL,
    CHECK (first_id <= last_id)
);

-- INBOX_LATE_ROW: a mailbox row found at or below W after its hole was
-- released (a late commit). Reported, never silently skipped.
CREATE TABLE inbox_late_row (
    msg_id      BIGINT PRIMARY KEY,
    hole_id     BIGINT REFERENCES inbox_hole (id),
    detected_at TIMESTAMPTZ NOT NULL,
    received_at TIMESTAMPTZ,
    resolution  TEXT
);

-- PIPELINE_LOCK (§5.3, INV-18): the single row that processors and the flight
-- history clean lock FOR UPDATE inside their transactions.
CREATE TABLE pipeline_lock (
    id SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1)
);
INSERT INTO pipeline_lock (id) VALUES (1);

-- ------------------------------------------------------------------ outbox --

-- EVENT_ID: one global sequence; allocation order = commit order (§8.1).
CREATE SEQUENCE msg_event_id_seq AS BIGINT;

-- MSG_EVENT (§1.2, §8): the transactional outbox.
CREATE TABLE msg_event (
    event_id          BIGINT PRIMARY KEY DEFAULT nextval('msg_event_id_seq'),
    target            TEXT NOT NULL CHECK (target IN ('KAFKA:msg', 'KAFKA:schd')),
    partition_key     TEXT NOT NULL,                -- FLID (C-29)
    event_type        TEXT NOT NULL CHECK (event_type IN ('UPSERT', 'TOMBSTONE')),
    state_version     BIGINT NOT NULL,
    msg_id            BIGINT,                       -- the message that caused it (NULL for lifecycle clean)
    payload           BYTEA,                        -- NULL for a schd tombstone
    status            TEXT NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SENT', 'DEAD')),
    attempts          INTEGER NOT NULL DEFAULT 0,
    next_attempt_at   TIMESTAMPTZ,
    first_failure_at  TIMESTAMPTZ,                  -- start of the transient-deadline window
    last_error        TEXT,
    created_at        TIMESTAMPTZ NOT NULL,
    sent_at           TIMESTAMPTZ                   -- written in the same UPDATE as SENT (§1.2)
);
ALTER SEQUENCE msg_event_id_seq OWNED BY msg_event.event_id;

-- Exactly one KAFKA:schd row per FLID (§8.2).
CREATE UNIQUE INDEX msg_event_schd_flid_uq ON msg_event (partition_key) WHERE target = 'KAFKA:schd';
-- Dispatch: pending rows in EVENT_ID order per target.
CREATE INDEX msg_event_pending_idx ON msg_event (target, event_id) WHERE status = 'PENDING';
-- Cleanup by SENT_AT.
CREATE INDEX msg_event_sent_idx ON msg_event (sent_at) WHERE status = 'SENT';

-- ---------------------------------------------------------------- requests --

-- REQ_TRACK (§7.2): PENDING → SENT → DONE | EXPIRED.
CREATE TABLE req_track (
    id             BIGSERIAL PRIMARY KEY,
    req_type       TEXT NOT NULL,                   -- RQFD or RQRD:<RTYP>
    operation_day  DATE,                            -- covered day (RQFD); NULL for reference data
    sender         TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('PENDING', 'SENT', 'DONE', 'EXPIRED')),
    seqn           TEXT NOT NULL,
    routing_id     TEXT NOT NULL,
    request_xml    TEXT NOT NULL,
    coutmsgs_id    BIGINT,
    created_at     TIMESTAMPTZ NOT NULL,
    sent_at        TIMESTAMPTZ,
    closed_at      TIMESTAMPTZ,
    matched_msg_id BIGINT,
    match_mode     TEXT CHECK (match_mode IN ('EXACT', 'DEGRADED')),
    match_audit    TEXT
);
-- At most one open request per (type, operation day, sender), open states only.
CREATE UNIQUE INDEX req_track_open_uq ON req_track (req_type, COALESCE(operation_day, DATE '1970-01-01'), sender)
    WHERE state IN ('PENDING', 'SENT');
CREATE INDEX req_track_closed_idx ON req_track (closed_at) WHERE state IN ('DONE', 'EXPIRED');

-- Outbound SEQN: 000001–999999, cycling, never 000000 (sis-format §5; issue 9).
CREATE SEQUENCE request_seqn_seq AS INTEGER MINVALUE 1 MAXVALUE 999999 CYCLE;

-- REF_MASTER (§1.2): static reference data, the record as JSON.
CREATE TABLE ref_master (
    rtype       TEXT NOT NULL,
    rkey        TEXT NOT NULL,
    body        JSONB NOT NULL,
    last_msg_id BIGINT NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (rtype, rkey)
);

-- ------------------------------------------------------------------ flights --

-- FLIGHT_SCHD (§11.1): one row per FLID; every FLTR scalar of sis-format §2.3.
CREATE TABLE flight_schd (
    flid           BIGINT PRIMARY KEY,
    state          TEXT NOT NULL CHECK (state IN ('ACTIVE', 'DELETED')),
    state_version  BIGINT NOT NULL CHECK (state_version > 0),
    operation_day  DATE,                            -- immutable once set (INV-12)
    last_msg_id    BIGINT,
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    alcd TEXT, alsc TEXT, flno TEXT, mvin TEXT, sodt TIMESTAMPTZ, flty TEXT, flin TEXT,
    acft TEXT, reno TEXT, taop TEXT, tafl TEXT, taid BIGINT, trml TEXT, maxp BIGINT,
    csop TEXT, csft TEXT, maid BIGINT, stnd TEXT, estt TIMESTAMPTZ, actt TIMESTAMPTZ,
    phag BIGINT, fhag BIGINT, mhag BIGINT, cncl TIMESTAMPTZ, remc TEXT,
    botm TIMESTAMPTZ, lacl TIMESTAMPTZ, fint TIMESTAMPTZ, appt TIMESTAMPTZ,
    egsr TIMESTAMPTZ, egst TIMESTAMPTZ, vipp BIGINT, vipr BIGINT, lbno BIGINT,
    lbwt NUMERIC, paxc BIGINT, exsc TEXT, exsr TEXT, ftss TEXT,
    pedt TIMESTAMPTZ, padt TIMESTAMPTZ, neat TIMESTAMPTZ, naat TIMESTAMPTZ,
    cobt TIMESTAMPTZ, tobt TIMESTAMPTZ, eobt TIMESTAMPTZ, iest TIMESTAMPTZ, ctot TIMESTAMPTZ,
    runw TEXT, stdt DATE, eddt DATE, dyop TEXT, scht TEXT,
    fdiv_ddes TEXT, fdiv_ddir TEXT, fdiv_reason TEXT,
    fret_reid TEXT, fret_reason TEXT,
    flab_ares TEXT, flab_reason TEXT
);
-- Master/share projection reads children by MAID (§11.4, INV-17).
CREATE INDEX flight_schd_maid_idx ON flight_schd (maid) WHERE maid IS NOT NULL;
-- Flight history clean candidates (§12.5).
CREATE INDEX flight_schd_opday_idx ON flight_schd (operation_day, updated_at);

-- Resource detail tables (§11.1, §11.3): PK (FLID, ORDINAL), ORDINAL from 1,
-- SOURCE_SEQ as sent (may be NULL or repeat). Delete-then-insert per FLID (INV-14).
CREATE TABLE flight_gate (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    gate TEXT, pgot TIMESTAMPTZ, pgct TIMESTAMPTZ, gotm TIMESTAMPTZ, gctm TIMESTAMPTZ, gtyp TEXT,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_counter (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    chkc TEXT, ccls TEXT, pcot TIMESTAMPTZ, pcct TIMESTAMPTZ, cotm TIMESTAMPTZ, cctm TIMESTAMPTZ, ctyp TEXT,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_carousel (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    belt TEXT, bcls TEXT, pcot TIMESTAMPTZ, pcct TIMESTAMPTZ, fbag TIMESTAMPTZ, lbag TIMESTAMPTZ, btyp TEXT,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_stand (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    psst TEXT, stst TIMESTAMPTZ, stet TIMESTAMPTZ,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_chute (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    chut TEXT, ccls TEXT, pcbt TIMESTAMPTZ, pcet TIMESTAMPTZ, cbtm TIMESTAMPTZ, cetm TIMESTAMPTZ, ctyp TEXT,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_delay (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    code TEXT, strt TIMESTAMPTZ, dura_minutes BIGINT, comment TEXT,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_airbridge (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    abdg TEXT, abop TEXT, aotm TIMESTAMPTZ,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_chock (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    chtm TIMESTAMPTZ, chid TEXT, chst TEXT,
    PRIMARY KEY (flid, ordinal)
);
-- SRVT and VIPF are unbounded collections with their own tables (G-SRVT-VIPF).
CREATE TABLE flight_service (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    srtc TEXT, srqt TEXT, srst TIMESTAMPTZ, sret TIMESTAMPTZ, srpr TEXT, sanr TEXT, sarr TEXT,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_vip (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    vpcd TEXT, vfes BIGINT,
    vipt JSONB NOT NULL DEFAULT '[]'::jsonb,          -- the VIP's VIPT services, in order
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_door (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    potm TIMESTAMPTZ, poid TEXT,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_tractor (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    trtm TIMESTAMPTZ, trst TEXT,
    PRIMARY KEY (flid, ordinal)
);
CREATE TABLE flight_push (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    pstm TIMESTAMPTZ, psid TEXT, pust TEXT,
    PRIMARY KEY (flid, ordinal)
);

-- FLIGHT_ROUTE_POINT (§11.1, §11.3): ROUT and ERUT apart; ROUTE_KIND in the PK.
CREATE TABLE flight_route_point (
    flid BIGINT NOT NULL REFERENCES flight_schd (flid) ON DELETE CASCADE,
    route_kind TEXT NOT NULL CHECK (route_kind IN ('ROUT', 'ERUT')),
    ordinal INTEGER NOT NULL CHECK (ordinal >= 1), source_seq BIGINT,
    apcd TEXT, scat TIMESTAMPTZ, scdt TIMESTAMPTZ, sadc TEXT, sddc TEXT,
    PRIMARY KEY (flid, route_kind, ordinal)
);

-- Flight history store (§12.5, D1): the complete state (scalars, details,
-- routes) as written just before the current state was deleted.
CREATE TABLE flight_history (
    id             BIGSERIAL PRIMARY KEY,
    flid           BIGINT NOT NULL,
    state          TEXT NOT NULL,
    state_version  BIGINT NOT NULL,
    operation_day  DATE,
    snapshot       JSONB NOT NULL,
    archived_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX flight_history_flid_idx ON flight_history (flid);
CREATE INDEX flight_history_archived_idx ON flight_history (archived_at);

-- SCHD_SNAP_LOG (§1.2, §7.1): append-only trace of schedule processing.
CREATE TABLE schd_snap_log (
    id           BIGSERIAL PRIMARY KEY,
    msg_id       BIGINT NOT NULL,
    styp         TEXT NOT NULL,
    recv_at      TIMESTAMPTZ NOT NULL,
    scope_start  TIMESTAMPTZ,
    scope_end    TIMESTAMPTZ,
    flights      INTEGER NOT NULL DEFAULT 0,
    outcome      TEXT NOT NULL,
    note         TEXT
);
CREATE INDEX schd_snap_log_purge_idx ON schd_snap_log (scope_end, recv_at);

-- --------------------------------------------------------------------- jobs --

-- JOB_RUN: one row per job run (daemon tick or `msgx run`), with its outcome.
CREATE TABLE job_run (
    id           BIGSERIAL PRIMARY KEY,
    job          TEXT NOT NULL,
    trigger      TEXT NOT NULL CHECK (trigger IN ('daemon', 'cli')),
    instance     TEXT NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL,
    finished_at  TIMESTAMPTZ,
    outcome      TEXT NOT NULL CHECK (outcome IN ('RUNNING', 'SUCCEEDED', 'FAILED', 'SKIPPED_LOCKED', 'ABORTED')),
    items        BIGINT NOT NULL DEFAULT 0,
    error        TEXT,
    details      JSONB
);
CREATE INDEX job_run_job_started_idx ON job_run (job, started_at DESC);
CREATE INDEX job_run_started_idx ON job_run (started_at);
