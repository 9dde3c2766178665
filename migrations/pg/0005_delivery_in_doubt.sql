-- Delivery failure classes (issue 17, item 3; design §3 "投递", §8.1, §9.1).

-- The class of an outbox row's last failed send, as retry.rs decided it; on a
-- DEAD row, the class it died of: MESSAGE_SPECIFIC (the broker refused the
-- record max-attempts times), TRANSIENT (refused past the transient deadline
-- and max-attempts), IN_DOUBT (possibly persisted, never confirmed within
-- msgx.dispatch.in-doubt-deadline). NULL while the row never failed; cleared
-- by a resend and by a new KAFKA:schd generation. LAST_ERROR keeps the text.
ALTER TABLE msg_event ADD COLUMN error_class TEXT
    CHECK (error_class IN ('MESSAGE_SPECIFIC', 'TRANSIENT', 'IN_DOUBT'));

-- Rows failed before this migration: LAST_ERROR began with the class's Rust
-- name ("MessageSpecific: …", "Transient: …", "InDoubt: …").
UPDATE msg_event SET error_class = CASE
        WHEN last_error LIKE 'MessageSpecific:%' THEN 'MESSAGE_SPECIFIC'
        WHEN last_error LIKE 'Transient:%' THEN 'TRANSIENT'
        WHEN last_error LIKE 'InDoubt:%' THEN 'IN_DOUBT'
    END
WHERE last_error IS NOT NULL;
