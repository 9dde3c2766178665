-- Upstream requests (issue 9; design §7.2, C-23, Q5).

-- Why a request was closed: superseded by a newer one, expired by
-- request-expiry, never sent (compensation found no COUTMSGS row), or the
-- RESP that completed it. Shown by `msgx request list`.
ALTER TABLE req_track ADD COLUMN close_note TEXT;

-- RESP matching reads a type's requests newest first, and the exact match
-- looks a request up by its echoed SEQN.
CREATE INDEX req_track_type_idx ON req_track (req_type, id);
CREATE INDEX req_track_seqn_idx ON req_track (req_type, seqn, id);
-- Compensation scans the PENDING rows.
CREATE INDEX req_track_pending_idx ON req_track (id) WHERE state = 'PENDING';

-- A degraded RESP match (C-23) is audited in OPERATOR_ACTION beside the
-- REQ_TRACK row: actor `msgx`, target `req_track:<id>`.
ALTER TABLE operator_action DROP CONSTRAINT operator_action_action_check;
ALTER TABLE operator_action ADD CONSTRAINT operator_action_action_check
    CHECK (action IN ('EVENT_RESEND', 'EVENT_DISCARD', 'REQUEST_MATCH_DEGRADED'));
