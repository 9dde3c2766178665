-- Every request to the compat entry POST /cminmsgs/send (issue 32 item 4;
-- docs/production/http.md "Compat request record", docs/pipeline.md
-- "Compat identities"): when, from where, as whom, which sender, the SHA-256
-- of the body, and what was answered. Refused requests are recorded too
-- (no principal when authentication failed, no digest before the body was
-- read).
--
-- A request that writes the mailbox is recorded with its MSG_ID *before*
-- the mailbox transaction commits, so a mailbox row written through compat
-- is never without this row. The pump reads `principal` by MSG_ID and
-- scopes the message's business identity to it (`compat:<principal>|…`):
-- a compat message can never hold the identity of a later message the AODB
-- writes into the mailbox itself (design §2, §4.4).
CREATE TABLE compat_request (
    id              BIGSERIAL PRIMARY KEY,
    at              TIMESTAMPTZ NOT NULL,
    peer            TEXT NOT NULL,
    principal       TEXT,
    sndr            TEXT,
    payload_sha256  TEXT,
    -- The HTTP status answered; 0 while the mailbox write is in flight.
    status          SMALLINT NOT NULL,
    outcome         TEXT NOT NULL,
    detail          TEXT,
    msg_id          BIGINT
);
CREATE UNIQUE INDEX compat_request_msg_id_idx ON compat_request (msg_id) WHERE msg_id IS NOT NULL;
CREATE INDEX compat_request_at_idx ON compat_request (at);
