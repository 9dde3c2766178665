#!/usr/bin/env bash
# End-to-end latency (issue 11, item 3; docs/BENCHMARKS.md): `msgx daemon`
# with the default schedule, `msgx dev-kafka`; FLOPs are inserted into the
# mailbox one at a time at a steady rate (`msgx mailbox generate --rate`) while
# a consumer follows the msg topic (`msgx tail msg --follow`). Latency of a
# message = first receipt of a msg record carrying its MSG_ID − the commit of
# its mailbox insert (same clock). Reports p50 / p99 / max per rate.
#
#   scripts/bench-latency.sh [--rate R]… [--duration 300] [--flights 2000]
#                            [--schedule daemon|FILE] [--debug]
#
# Default: 20/s and 200/s, 300 s each. Target: p99 ≤ 2 s at 20/s.
# Own databases (unique names, dropped at exit) on the local services.
set -euo pipefail
cd "$(dirname "$0")/.."
RATES=(); DURATION=300; FLIGHTS=2000; SCHEDULE=daemon; BUILD=""
while [ $# -gt 0 ]; do
  case $1 in
    --rate) RATES+=("$2"); shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --flights) FLIGHTS=$2; shift 2 ;;
    --schedule) SCHEDULE=$2; shift 2 ;;
    --debug) BUILD=--debug; shift ;;
    *) echo "usage: $0 [--rate R]… [--duration S] [--flights F] [--schedule daemon|FILE] [--debug]"; exit 2 ;;
  esac
done
[ ${#RATES[@]} -gt 0 ] || RATES=(20 200)

# shellcheck source=scripts/harness-lib.sh
. scripts/harness-lib.sh
bash scripts/services.sh >/dev/null
command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null
harness_init latency
trap harness_cleanup EXIT
trap 'exit 143' INT TERM # so that the EXIT trap cleans up
harness_build $BUILD
harness_config
export RUST_LOG=${RUST_LOG:-warn}
PG=postgres://msgx:msgx@127.0.0.1:5432
harness_pg_db "$PG/postgres" "$TAG"
harness_mailbox_db 127.0.0.1 3306 "$TAG"
export MSGX_DATABASE_URL=$PG/$TAG MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/$TAG
"$MSGX" migrate >/dev/null
[ -f "$SCHEDULE" ] && SCHEDULE=$(realpath "$SCHEDULE")

harness_dev_kafka "$WORK/kafka.log"
echo "== $FLIGHTS flights (SCHD packages), then the daemon (schedule: $SCHEDULE)"
"$MSGX" mailbox generate --messages $(( (FLIGHTS + 99) / 100 )) --flights "$FLIGHTS" --seed 5 >/dev/null
harness_daemon "$WORK/daemon.log" --schedule "$SCHEDULE"
harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 300 >/dev/null

results=()
seqn=100000
for rate in "${RATES[@]}"; do
  n=$(echo "$rate * $DURATION / 1" | bc)
  echo "== $rate msg/s for $DURATION s ($n FLOPs)"
  : >"$WORK/recv-$rate.log"
  python3 "$HARNESS_PY" latency --msgx "$MSGX" --out "$WORK/recv-$rate.log" &
  consumer=$!
  harness_track "$consumer"
  sleep 3 # the consumer's partition assignment
  "$MSGX" mailbox generate --no-schedules --messages "$n" --flights "$FLIGHTS" --seed "$rate" \
    --first-seqn "$seqn" --rate "$rate" >"$WORK/feed-$rate.log" 2>"$WORK/feed-$rate.err"
  seqn=$((seqn + n + 1))
  harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 300 >/dev/null
  sleep 2
  kill -TERM "$consumer" 2>/dev/null || true
  wait "$consumer" 2>/dev/null || true
  line=$(python3 "$HARNESS_PY" latency-report --feed-log "$WORK/feed-$rate.log" --recv-log "$WORK/recv-$rate.log")
  echo "$line"
  results+=("$rate ${line#latency: }")
done

echo
echo "== end-to-end latency ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(basename "$MSGX"), schedule $SCHEDULE)"
printf '| rate | messages measured | p50 | p99 | max | p99 / target (2 s) |\n|---|---|---|---|---|---|\n'
for r in "${results[@]}"; do
  rate=${r%% *}
  python3 - "$rate" "${r#* }" <<'EOF'
import json, sys
rate, r = sys.argv[1], json.loads(sys.argv[2])
print(f"| {rate}/s | {r['measured']} of {r['inserted']} | {r['p50_s']:.2f} s | {r['p99_s']:.2f} s "
      f"| {r['max_s']:.2f} s | {r['p99_s'] / 2:.2f} |")
EOF
done
