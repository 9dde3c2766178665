-- Error class DATA (issue 31; design §3, §5.1): a database error raised by a
-- message's own statement that no wait cures (SQLSTATE 22 data exception, 23
-- integrity violation, 54 program limit, …). It follows the finite schedule
-- msgx.pipeline.retry.data and ends DEAD(EXHAUSTED), instead of holding the
-- FIFO head as INFRA forever. docs/pipeline.md "Database errors".
ALTER TABLE proc_state DROP CONSTRAINT proc_state_error_class_check;
ALTER TABLE proc_state ADD CONSTRAINT proc_state_error_class_check
    CHECK (error_class IN ('MALFORMED', 'CODEC_ERROR', 'INFRA', 'UNSUPPORTED', 'PROTOCOL', 'EXHAUSTED', 'DATA'));
