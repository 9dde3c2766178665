-- Settings msgx records once and then holds its configuration to (issue 17
-- item 6; design §2 "上线后不能随意更换身份算法"). One row per key:
-- `identity.include-day-boundary` = 'true' | 'false', written at the first
-- daemon start or pump-drain run; a later start with another value is refused.
CREATE TABLE msgx_setting (
    key         TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL,
    recorded_by TEXT NOT NULL              -- e.g. `daemon host:pid`, `pump-drain (cli)`
);

-- An instance upgraded with identities already bound: record the algorithm
-- they were made with, read from the stored keys (SNDR|TYPE|STYP|SEQN has
-- three separators, with the day boundary four), when the newest keys agree.
INSERT INTO msgx_setting (key, value, recorded_at, recorded_by)
SELECT 'identity.include-day-boundary',
       CASE WHEN min(n) = 4 THEN 'true' ELSE 'false' END,
       now(),
       'migration 0007 (from the stored identities)'
FROM (SELECT length(identity_key) - length(replace(identity_key, '|', '')) AS n
      FROM proc_state WHERE identity_key IS NOT NULL
      ORDER BY msg_id DESC LIMIT 1000) AS k
HAVING count(*) > 0 AND min(n) = max(n) AND min(n) IN (3, 4);
