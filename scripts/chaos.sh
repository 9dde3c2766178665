#!/usr/bin/env bash
# Chaos drain (issue 11, item 1; docs/RESILIENCE.md): the same realistic
# backlog is drained twice by `msgx daemon` with `msgx dev-kafka`: once
# undisturbed (clean), once while the daemon is SIGKILLed at random moments
# N times and restarted each time (chaos). Then `msgx dev compare-runs`
# compares the snapshots (`msgx dev snapshot`) of the final PROC_STATE
# outcomes, the flight tables, the last schd record per FLID and every msg
# event (per-FLID STATE_VERSION only increases; re-sends of the same version
# are counted as duplicates and allowed). Any difference → exit 1.
#
#   scripts/chaos.sh [--runs N] [--messages M] [--flights F] [--seed S] [--debug]
#
# --debug uses the debug build (CI: scripts/test.sh runs a short variant).
# Own databases (unique names, dropped at exit), own dev-kafka per run.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=20; MESSAGES=20000; FLIGHTS=""; SEED=$RANDOM; BUILD=""
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --messages) MESSAGES=$2; shift 2 ;;
    --flights) FLIGHTS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --debug) BUILD=--debug; shift ;;
    *) echo "usage: $0 [--runs N] [--messages M] [--flights F] [--seed S] [--debug]"; exit 2 ;;
  esac
done

# shellcheck source=scripts/harness-lib.sh
. scripts/harness-lib.sh
FLIGHTS=${FLIGHTS:-$(harness_default_flights "$MESSAGES")}
command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null
harness_init chaos
trap harness_cleanup EXIT
trap 'exit 143' INT TERM # so that the EXIT trap cleans up
harness_build $BUILD
harness_config
export RUST_LOG=${RUST_LOG:-info}
PG=postgres://msgx:msgx@127.0.0.1:5432
started=$(date +%s)

echo "== chaos drain: $MESSAGES messages over $FLIGHTS flights, $RUNS kills, seed $SEED ($(basename "$MSGX") $([ -n "$BUILD" ] && echo debug || echo release))"

# prepare NAME: databases NAME (PostgreSQL) and NAME (mailbox) with the backlog.
prepare() {
  harness_pg_db "$PG/postgres" "$1"
  harness_mailbox_db 127.0.0.1 3306 "$1"
  MSGX_DATABASE_URL=$PG/$1 MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/$1 "$MSGX" migrate >/dev/null
  # The realistic backlog: SCHD packages, the FLOP mix, an FDEL every 500,
  # 2 % business duplicates, 0.5 % malformed, M / 2,000 + 1 rolled-back inserts
  # (spread evenly; the last lands near the end, the others inside the backlog).
  MSGX_DATABASE_URL=$PG/$1 MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/$1 \
    "$MSGX" mailbox generate --messages "$MESSAGES" --flights "$FLIGHTS" --seed "$SEED" \
    --duplicates 0.02 --malformed 0.005 --holes $(( MESSAGES / 2000 + 1 )) >/dev/null
}

# use NAME: point msgx at those databases.
use() {
  export MSGX_DATABASE_URL=$PG/$1 MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/$1
}

CLEAN=${TAG}_clean
CHAOS=${TAG}_chaos
prepare "$CLEAN"
prepare "$CHAOS"
summary_line=$(mariadb -h 127.0.0.1 -umsgx -pmsgx -N -B "$CLEAN" -e \
  "SELECT CONCAT(COUNT(*), ' mailbox rows, IDs 1..', MAX(CMINMSGS_ID)) FROM cminmsgs")
echo "backlog: $summary_line (each database)"

echo "== clean run (no faults)"
use "$CLEAN"
harness_dev_kafka "$WORK/kafka-clean.log"
harness_daemon "$WORK/daemon-clean.log"
clean_s=$(harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 600)
harness_stop "$DAEMON_PID"
echo "drained in ${clean_s} s"
"$MSGX" dev snapshot --out "$WORK/clean.json"
harness_stop "$KAFKA_PID"

echo "== chaos run: SIGKILL the daemon $RUNS times at random moments, restart it each time"
use "$CHAOS"
harness_dev_kafka "$WORK/kafka-chaos.log"
harness_daemon "$WORK/daemon-chaos.log"
# Kill intervals: uniform in [0.2, 1.2] × clean time / (N + 1), so the kills
# spread over the drain (restarts make the chaos run longer than the clean one).
RANDOM=$SEED
mean=$(echo "$clean_s / ($RUNS + 1)" | bc -l)
kills=0; kills_during_work=0
for k in $(seq 1 "$RUNS"); do
  delay=$(echo "$mean * (0.2 + $RANDOM / 32767)" | bc -l)
  sleep "$delay"
  if ! "$MSGX" dev drained >/dev/null 2>&1; then
    kills_during_work=$((kills_during_work + 1))
  fi
  kill -KILL "$DAEMON_PID"
  wait "$DAEMON_PID" 2>/dev/null || true
  kills=$((kills + 1))
  # What the kill left open (W, unprocessed rows, pending events, marks).
  printf 'kill %2d after %5.2f s: %s\n' "$k" "$delay" "$("$MSGX" dev drained 2>/dev/null || true)"
  harness_daemon "$WORK/daemon-chaos.log"
done
chaos_s=$(harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 600)
harness_stop "$DAEMON_PID"
echo "drained ${chaos_s} s after the last restart"
"$MSGX" dev snapshot --out "$WORK/chaos.json"
harness_stop "$KAFKA_PID"

echo "== compare"
set +e
"$MSGX" dev compare-runs "$WORK/clean.json" "$WORK/chaos.json" | tee "$WORK/compare.out"
rc=${PIPESTATUS[0]}
set -e
result=$(sed -n 's/^compare: //p' "$WORK/compare.out")
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], '?'))" "$result" "$1"; }
echo
echo "== chaos drain summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(basename "$MSGX"))"
printf '  input            %s messages (%s), %s flights, seed %s\n' "$MESSAGES" "$summary_line" "$FLIGHTS" "$SEED"
printf '  runs             2 (clean: drained in %s s; chaos: %s kills, %s while work remained)\n' "$clean_s" "$kills" "$kills_during_work"
printf '  outcomes         %s; %s holes released\n' "$(field outcomes)" "$(field holes_released)"
printf '  differences      %s\n' "$(field differences)"
printf '  msg events       %s distinct; records clean %s, chaos %s\n' "$(field msg_events)" "$(field msg_records_clean)" "$(field msg_records_chaos)"
printf '  duplicates       clean %s, chaos %s (re-sends of the same version: allowed)\n' "$(field duplicates_clean)" "$(field duplicates_chaos)"
printf '  wall time        %s s\n' "$(( $(date +%s) - started ))"
if [ "$rc" = 0 ]; then echo "RESULT: PASS"; else echo "RESULT: FAIL (differences above)"; fi
exit "$rc"
