#!/usr/bin/env bash
# The ACRIS flight API under load (issue 36 item 3; docs/BENCHMARKS.md "ACRIS
# API"): `msgx daemon` with the API on loopback over 20,000 stored flights
# (`msgx mailbox generate --rich`: SCHD packages through the real pipeline),
# then requests for a departures window holding 2,000 of them, paced at
# --req-rate per second from one client, each kind for --duration s:
#
#   page50    the default page (length 50), offsets walking the whole window
#   page1000  the largest page (length 1000), offsets 0 and 1000, at a tenth
#             of --req-rate (each is about 1 MB)
#   304       If-Modified-Since of the window's Last-Modified
#
# first on a quiet daemon, then while a 200 msg/s FLOP feed runs (`msgx
# mailbox generate --no-schedules --rate`, over --feeders inserters as
# bench-latency.sh does). Prints p50 / p99 / max per kind and phase, the
# answers' status counts and the load average; goal p99 ≤ 50 ms.
#
#   scripts/bench-acris.sh [--flights 20000] [--window 2000] [--req-rate 40]
#                          [--duration 30] [--feed-rate 200] [--feeders 4]
#
# The paced rate stays inside the listener's per-client budget
# (msgx.http.requests-per-second-per-client, 50). Own databases (unique
# names, dropped at exit) on the local services.
set -euo pipefail
cd "$(dirname "$0")/.."
FLIGHTS=20000 WINDOW=2000 REQ_RATE=40 DURATION=30 FEED_RATE=200 FEEDERS=4
usage() {
  echo "usage: $0 [--flights N] [--window N] [--req-rate R] [--duration S] [--feed-rate R] [--feeders K]"
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --flights) FLIGHTS=$2; shift 2 ;;
    --window) WINDOW=$2; shift 2 ;;
    --req-rate) REQ_RATE=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --feed-rate) FEED_RATE=$2; shift 2 ;;
    --feeders) FEEDERS=$2; shift 2 ;;
    *) usage ;;
  esac
done

# shellcheck source=scripts/harness-lib.sh
. scripts/harness-lib.sh
bash scripts/services.sh >/dev/null
command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null
harness_init acris
trap harness_cleanup EXIT
trap 'exit 143' INT TERM # so that the EXIT trap cleans up
harness_build
PORT=$(harness_free_port)
TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
TOKENS=$WORK/acris-tokens.toml
install -m 0600 /dev/null "$TOKENS"
printf '[[token]]\nname = "bench"\nrole = "viewer"\nsha256 = "%s"\n' \
  "$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)" >"$TOKENS"
harness_config \
  -e "/^\[msgx.acris\]/,/^\[/s|^# listen = \"[^\"]*\"|listen = \"127.0.0.1:$PORT\"|" \
  -e "/^\[msgx.acris\]/,/^\[/s|^# tokens-file = \"[^\"]*\"|tokens-file = \"$TOKENS\"|"
grep -q "^listen = \"127.0.0.1:$PORT\"" "$MSGX_CONFIG" || { echo "no [msgx.acris] listen in $MSGX_CONFIG"; exit 1; }
export RUST_LOG=${RUST_LOG:-warn}
PG=postgres://msgx:msgx@127.0.0.1:5432
export PGOPTIONS='--client-min-messages=warning'
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

DB="${TAG}_db"
harness_pg_db "$PG/postgres" "$DB"
harness_mailbox_db 127.0.0.1 3306 "$DB"
export MSGX_DATABASE_URL=$PG/$DB MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/$DB
"$MSGX" migrate >/dev/null
harness_dev_kafka "$WORK/kafka.log"
echo "== $FLIGHTS flights (rich SCHD packages of 100) through the daemon"
"$MSGX" mailbox generate --messages $(((FLIGHTS + 99) / 100)) --flights "$FLIGHTS" --rich --seed 5 >/dev/null
t0=$(date +%s.%N)
harness_daemon "$WORK/daemon.log"
harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 900 >/dev/null
echo "drained in $(echo "$(date +%s.%N) - $t0" | bc -l | xargs printf '%.1f') s:" \
  "$(psql "$MSGX_DATABASE_URL" -qtAX -c "SELECT count(*) FROM flight_schd WHERE state = 'ACTIVE'") ACTIVE flights"

# The departures window: from the first departure, up to the one after the
# WINDOW-th (by SODT; the generated ESTT equals SODT).
read -r FROM TO < <(psql "$MSGX_DATABASE_URL" -qtAX -F' ' -c "
  WITH d AS (SELECT sodt FROM flight_schd WHERE mvin = 'D' AND state = 'ACTIVE' ORDER BY sodt)
  SELECT to_char((SELECT min(sodt) FROM d) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
         to_char(((SELECT sodt FROM d OFFSET $WINDOW LIMIT 1)) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")
BASE="/acris/v1/flight/CTU/departure?from=$FROM&to=$TO"
for _ in $(seq 1 100); do
  curl -s -o /dev/null -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT$BASE" && break
  sleep 0.1
done
COUNT=$(python3 - "$PORT" "$TOKEN" "$BASE" <<'PY'
import http.client, json, sys
port, token, base = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = http.client.HTTPConnection("127.0.0.1", port)
n = 0
for offset in range(0, 10000, 1000):
    c.request("GET", f"{base}&length=1000&offset={offset}", headers={"Authorization": f"Bearer {token}"})
    r = c.getresponse()
    page = json.loads(r.read())
    if r.status != 200:
        sys.exit(f"the window's page at {offset} answered {r.status}: {page}")
    n += len(page)
    if len(page) < 1000:
        break
print(n)
PY
)
[ -n "$COUNT" ] || exit 1
echo "window $FROM … $TO: $COUNT departures"

# probe KIND SECONDS: paced GETs of KIND; prints one JSON line.
probe() {
  python3 - "$PORT" "$TOKEN" "$BASE" "$1" "$REQ_RATE" "$2" "$COUNT" <<'PY'
import http.client, json, sys, time
port, token, base, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
rate, seconds, count = float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
if kind == "page1000":
    rate /= 10
auth = {"Authorization": f"Bearer {token}"}
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("GET", base, headers=auth)
r = c.getresponse(); r.read()
since = r.getheader("Last-Modified")
lat, status, size, i = [], {}, 0, 0
t_next = time.monotonic()
end = t_next + seconds
# Paced at `rate`; a request that takes longer delays the next one, and
# the phase ends at its time whatever was sent.
while t_next < end and time.monotonic() < end:
    now = time.monotonic()
    if now < t_next:
        time.sleep(t_next - now)
    if kind == "page50":
        path, headers = f"{base}&length=50&offset={(i * 50) % max(count, 50)}", auth
    elif kind == "page1000":
        path, headers = f"{base}&length=1000&offset={(i % 2) * 1000}", auth
    else:
        path, headers = base, dict(auth, **{"If-Modified-Since": since})
    t0 = time.perf_counter()
    c.request("GET", path, headers=headers)
    r = c.getresponse()
    body = r.read()
    lat.append(time.perf_counter() - t0)
    status[r.status] = status.get(r.status, 0) + 1
    if kind == "304" and r.status == 200:
        since = r.getheader("Last-Modified") or since
    size += len(body)
    i += 1
    t_next += 1 / rate
lat.sort()
pick = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
print(json.dumps({"kind": kind, "n": len(lat), "p50_ms": round(pick(0.50), 2), "p99_ms": round(pick(0.99), 2),
                  "max_ms": round(lat[-1] * 1000, 2), "status": status, "avg_bytes": size // max(len(lat), 1)}))
PY
}

RESULTS=$WORK/results.jsonl
: >"$RESULTS"
phase() {
  local label=$1 kind line load0
  for kind in page50 page1000 304; do
    load0=$(loadavg)
    line=$(probe "$kind" "$DURATION")
    echo "[$label] $line load $load0 -> $(loadavg)"
    python3 -c 'import json, sys; d = json.loads(sys.argv[1]); d.update(phase=sys.argv[2], load=sys.argv[3]); print(json.dumps(d))' \
      "$line" "$label" "$load0" >>"$RESULTS"
  done
}

echo "== quiet: $REQ_RATE requests/s, $DURATION s per kind"
phase quiet

# The feed: FEED_RATE msg/s for the whole loaded phase (3 kinds + margin),
# over FEEDERS inserters above 100/s (one connection's commits are fsync-bound).
k=1
[ "$(echo "$FEED_RATE > 100" | bc)" = 1 ] && k=$FEEDERS
seconds=$((3 * DURATION + 20))
per=$(((FEED_RATE * seconds + k - 1) / k))
rate_k=$(echo "scale=3; $FEED_RATE / $k" | bc)
echo "== loaded: a $FEED_RATE msg/s FLOP feed ($k inserter(s) at $rate_k/s, $seconds s)"
for i in $(seq 1 "$k"); do
  "$MSGX" mailbox generate --no-schedules --messages "$per" --flights "$FLIGHTS" --seed $((70 + i)) \
    --first-seqn $((1000000 + (i - 1) * per)) --rate "$rate_k" >"$WORK/feed-$i.log" 2>"$WORK/feed-$i.err" &
  harness_track $!
done
sleep 10 # the feed running, the daemon busy
phase "feed $FEED_RATE/s"
processed=$(psql "$MSGX_DATABASE_URL" -qtAX -c "SELECT count(*) FROM proc_state WHERE state = 'SUCCEEDED'")
echo "processed so far: $processed messages"
harness_stop "$DAEMON_PID"

echo
echo "== ACRIS API ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load now $(loadavg); $COUNT departures in the window of $FLIGHTS flights)"
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"| phase | request | n | p50 ms | p99 ms | max ms | answers | bytes | load before |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    st = ", ".join(f"{k}: {v}" for k, v in sorted(r["status"].items()))
    print(f"| {r['phase']} | {r['kind']} | {r['n']} | {r['p50_ms']} | {r['p99_ms']} | {r['max_ms']} | {st} | {r['avg_bytes']} | {r['load']} |")
PY
