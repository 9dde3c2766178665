-- Which rule released a hole (issue 20 item 5; design §4.1): the time rule
-- (`max-commit-delay`, the only one before this migration) or transaction
-- evidence (`no-live-transaction`: no transaction that could still commit
-- into the hole was open on the mailbox server).
ALTER TABLE inbox_hole ADD COLUMN reason TEXT NOT NULL DEFAULT 'max-commit-delay'
    CHECK (reason IN ('max-commit-delay', 'no-live-transaction'));
