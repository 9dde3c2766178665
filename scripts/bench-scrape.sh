#!/usr/bin/env bash
# Scrape cost (issue 10): fills a fresh msgx database with R PROC_STATE rows
# (all terminal, as after a long run, 1% DEAD, 1% PENDING) and E outbox rows,
# starts the daemon idle (maintenance-window schedule) with the ops endpoints,
# and times 10 scrapes of /metrics (each reads the database gauges) and /readyz.
#   scripts/bench-scrape.sh [--rows R] [--events E]
# MSGX_BIN=target/debug/msgx skips the release build (the cost is PostgreSQL's).
set -euo pipefail
cd "$(dirname "$0")/.."
R=1000000; E=200000
while [ $# -gt 0 ]; do
  case $1 in
    --rows) R=$2; shift 2 ;;
    --events) E=$2; shift 2 ;;
    *) echo "usage: $0 [--rows R] [--events E]"; exit 2 ;;
  esac
done
bash scripts/services.sh >/dev/null
if [ -z "${MSGX_BIN:-}" ]; then cargo build --release --locked --quiet --bin msgx; fi
MSGX=${MSGX_BIN:-target/release/msgx}
PG=postgres://msgx:msgx@127.0.0.1:5432
export PGOPTIONS='--client-min-messages=warning'
psql "$PG/postgres" -q -c 'DROP DATABASE IF EXISTS msgx_bench_scrape WITH (FORCE)' -c 'CREATE DATABASE msgx_bench_scrape'
mariadb -h 127.0.0.1 -umsgx -pmsgx -e 'DROP DATABASE IF EXISTS msgx_bench_scrape_mb; CREATE DATABASE msgx_bench_scrape_mb CHARACTER SET utf8mb4'
mariadb -h 127.0.0.1 -umsgx -pmsgx msgx_bench_scrape_mb < migrations/mailbox/0001_mailbox.sql
export MSGX_DATABASE_URL=$PG/msgx_bench_scrape MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/msgx_bench_scrape_mb
cfg=$(mktemp --suffix=.toml)
printf '[msgx.log]\ndir = ""\n[msgx.daemon]\nschedule = "maintenance-window"\n[msgx.http]\nmetrics-listen = "127.0.0.1:0"\n' > "$cfg"
$MSGX --config "$cfg" migrate >/dev/null
psql "$PG/msgx_bench_scrape" -q <<SQL
INSERT INTO proc_state (msg_id, state, attempts, enqueued_at, updated_at, finished_at, backfill_at, error_class)
SELECT i, CASE WHEN i % 100 = 0 THEN 'DEAD' WHEN i % 100 = 1 THEN 'PENDING' ELSE 'SUCCEEDED' END, 1,
       now() - interval '1 hour', now(), now(), CASE WHEN i % 7 = 0 THEN NULL ELSE now() END,
       CASE WHEN i % 100 = 0 THEN 'MALFORMED' END
FROM generate_series(1, $R) i;
UPDATE proc_state SET backfill_at = NULL, finished_at = NULL WHERE state = 'PENDING';
UPDATE inbox_cursor SET w = $R, updated_at = now();
INSERT INTO msg_event (target, partition_key, event_type, state_version, msg_id, payload, status, created_at, sent_at)
SELECT 'KAFKA:msg', (i % 5000)::text, 'UPSERT', i, i, '{}'::bytea,
       CASE WHEN i % 1000 = 0 THEN 'PENDING' ELSE 'SENT' END, now(), now()
FROM generate_series(1, $E) i;
ANALYZE;
SQL
log=$(mktemp)
$MSGX --config "$cfg" daemon >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; psql "$PG/postgres" -q -c "DROP DATABASE IF EXISTS msgx_bench_scrape WITH (FORCE)"' EXIT
for _ in $(seq 100); do grep -q 'listen=' "$log" && break; sleep 0.1; done
addr=$(grep -o 'listen=[0-9.:]*' "$log" | head -1 | cut -d= -f2)
times() { for _ in $(seq 10); do curl -s -o /dev/null -w '%{time_total}\n' "http://$addr$1"; done | sort -n; }
m=$(times /metrics); r=$(times /readyz)
echo "| PROC_STATE rows | MSG_EVENT rows | /metrics median | /metrics max | /readyz median |"
echo "|---|---|---|---|---|"
echo "| $R | $E | $(echo "$m" | sed -n 5p)s | $(echo "$m" | tail -1)s | $(echo "$r" | sed -n 5p)s |"
