#!/usr/bin/env bash
# End to end on local defaults (README, first command): services, build,
# migrate, load the sample messages into the mailbox in file-name order, run
# every job once against a local mock Kafka (msgx dev-kafka), show the result
# and the delivered events (msgx tail).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/services.sh
echo "== build"
cargo build --locked --quiet --bin msgx
MSGX=target/debug/msgx
# The demo's config: the documented local defaults, with retry tiers of 1 s so
# the one Unsupported sample (025, FLOP ESTT) visibly backs off, is retried
# and ends DEAD(EXHAUSTED) within seconds instead of the default 40 s.
demo_cfg=$(mktemp --suffix=.toml)
sed -e 's/^backoff = \[[^]]*\]/backoff = ["1s", "1s"]/' \
    -e '/^\[msgx.dispatch\]/,/^\[/s/^retry-backoff = .*/retry-backoff = ["1s", "1s", "1s", "1s", "1s", "1s", "1s", "1s", "1s"]/' \
    config/msgx.toml >"$demo_cfg"
export MSGX_CONFIG=$demo_cfg

# The demo runs on its own databases, recreated each time, so it is repeatable
# and never touches the msgx / msgx_mailbox databases of a development setup.
echo "== fresh demo databases msgx_demo (PostgreSQL) and msgx_demo_mailbox (MariaDB)"
PGOPTIONS='--client-min-messages=warning' psql postgres://msgx:msgx@127.0.0.1:5432/postgres -q \
  -c 'DROP DATABASE IF EXISTS msgx_demo WITH (FORCE)' -c 'CREATE DATABASE msgx_demo'
mariadb -h 127.0.0.1 -umsgx -pmsgx -e \
  'DROP DATABASE IF EXISTS msgx_demo_mailbox; CREATE DATABASE msgx_demo_mailbox CHARACTER SET utf8mb4'
mariadb -h 127.0.0.1 -umsgx -pmsgx msgx_demo_mailbox < migrations/mailbox/0001_mailbox.sql
export MSGX_DATABASE_URL=postgres://msgx:msgx@127.0.0.1:5432/msgx_demo
export MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/msgx_demo_mailbox

echo "== migrate"
$MSGX migrate

echo "== load sample messages into the mailbox (file-name order)"
samples=()
[ -d tests/fixtures/sis ] && compgen -G "tests/fixtures/sis/*.xml" >/dev/null && samples+=(tests/fixtures/sis)
if [ -d ../shared/fixtures/sis ]; then samples+=(../shared/fixtures/sis); else
  echo "(../shared/fixtures/sis not found: loading the project's own samples only)"; fi
if [ ${#samples[@]} -gt 0 ]; then $MSGX mailbox load "${samples[@]}" >/dev/null; fi

echo "== local Kafka: msgx dev-kafka (librdkafka mock cluster, in memory) in the background"
kafka_log=$(mktemp)
$MSGX dev-kafka --brokers 1 >"$kafka_log" 2>&1 &
kafka_pid=$!
trap 'kill "$kafka_pid" 2>/dev/null || true; wait "$kafka_pid" 2>/dev/null || true; rm -f "$kafka_log"' EXIT
for _ in $(seq 1 100); do grep -q '^bootstrap=' "$kafka_log" && break; sleep 0.1; done
MSGX_KAFKA_BROKERS=$(sed -n 's/^bootstrap=//p' "$kafka_log" | head -n 1)
if [ -z "$MSGX_KAFKA_BROKERS" ]; then echo "dev-kafka did not start:"; cat "$kafka_log"; exit 1; fi
export MSGX_KAFKA_BROKERS
echo "dev-kafka pid $kafka_pid, bootstrap $MSGX_KAFKA_BROKERS"

echo "== ingest and process (strict FIFO: a failed head holds the queue until it is retried or EXHAUSTED)"
$MSGX run ingest-sweep --until-empty
for _ in $(seq 1 15); do
  $MSGX run pump-drain --until-empty --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print("pump-drain:", r["items"], "message(s)", r["details"])'
  left=$(psql "$MSGX_DATABASE_URL" -qtAX -c "SELECT count(*) FROM proc_state WHERE state IN ('PENDING','FAILED')")
  [ "$left" = 0 ] && break
  sleep 1.2
done

echo "== run every job once"
for job in $($MSGX jobs --json | python3 -c 'import json,sys; print(" ".join(j["name"] for j in json.load(sys.stdin)))'); do
  set +e
  $MSGX run "$job" --until-empty
  rc=$?
  set -e
  case $rc in
    0) ;;
    3) echo "$job: not implemented yet" ;;
    *) echo "$job: failed with exit code $rc"; exit $rc ;;
  esac
done

echo "== upstream requests: an RQRD and an RQFD through COUTMSGS (docs/requests.md)"
$MSGX request ref GLST
$MSGX request schedule --day "$(date -u +%F)"
$MSGX request list
mariadb -h 127.0.0.1 -umsgx -pmsgx msgx_demo_mailbox -e \
  "SELECT COUTMSGS_ID, ROUTINGID, COUTMSGS_DATE_INSERTED, COUTMSGS_CLOB_MSG FROM coutmsgs"

echo "== status"
$MSGX status

echo "== delivered events: topic msg (change notifications)"
$MSGX tail msg --from-beginning --max 20
echo "== delivered events: topic schd (latest state per flight; value=null is a tombstone)"
$MSGX tail schd --from-beginning --max 10

echo "== outcomes by state and reason"
psql "$MSGX_DATABASE_URL" -q -c "SELECT state, error_class, \
  CASE WHEN state = 'SUCCEEDED' THEN '' ELSE split_part(coalesce(outcome_reason, last_error, ''), ':', 1) END AS reason, \
  count(*) FROM proc_state GROUP BY 1, 2, 3 ORDER BY 1, 4 DESC"

echo "== stop dev-kafka"
kill "$kafka_pid" && wait "$kafka_pid" || true
rm -f "$demo_cfg"
