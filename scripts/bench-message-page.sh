#!/usr/bin/env bash
# The console's page of a large message (issue 32 item 3, finding H3): one
# SCHD DNLD of F rich FLTRs (default 20,000: 16.5 MB, `msgx mailbox generate
# --package-flights F --rich`) in the mailbox, the daemon idle (maintenance-
# window schedule: no pipeline job touches the message) with its console on
# 127.0.0.1:PORT and a viewer token. Fetches the message page (records page 1
# and page 50) and the raw download (checked against the mailbox's SHA-256),
# and reports for each the answer's status, time and size, the load, and the
# daemon's RSS from /proc/PID/status: VmRSS before, VmHWM after (the peak is
# reset to the current RSS before each request through /proc/PID/clear_refs),
# the added peak (VmHWM after - VmRSS before) and VmRSS after. Then the wall
# time and peak RSS of `msgx msg show` (bounded, --json, --full).
#   scripts/bench-message-page.sh [--flights F] [--port P] [--no-build]
# Target (issue 32): opening the page adds <= 100 MB RSS and answers in <= 2 s.
set -euo pipefail
cd "$(dirname "$0")/.."
F=20000; PORT=18390; BUILD=1
while [ $# -gt 0 ]; do
  case $1 in
    --flights) F=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    *) echo "usage: $0 [--flights F] [--port P] [--no-build]"; exit 2 ;;
  esac
done
DB=msgx_bench_page
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
command -v curl >/dev/null || { apt-get install -y -qq curl >/dev/null; }
my() { mariadb -h 127.0.0.1 -umsgx -pmsgx "$@"; }
# A 20,000-FLTR package is ~16 MB: above the server default packet size.
mariadb -uroot -e "SET GLOBAL max_allowed_packet = 67108864"
psql "$PG/postgres" -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
my -e "DROP DATABASE IF EXISTS ${DB}_mb; CREATE DATABASE ${DB}_mb CHARACTER SET utf8mb4"
my "${DB}_mb" < migrations/mailbox/0001_mailbox.sql

work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
  psql "$PG/postgres" -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
  my -e "DROP DATABASE IF EXISTS ${DB}_mb"
}
trap cleanup EXIT
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '[[token]]\nname = "bench"\nrole = "viewer"\nsha256 = "%s"\n' \
  "$(printf %s "$token" | sha256sum | cut -d' ' -f1)" > "$work/users.toml"
chmod 600 "$work/users.toml"
cfg=$work/msgx.toml
printf '[msgx.log]\ndir = ""\n[msgx.daemon]\nschedule = "maintenance-window"\n[msgx.console]\nlisten = "127.0.0.1:%s"\nusers-file = "%s"\n' \
  "$PORT" "$work/users.toml" > "$cfg"
$MSGX --config "$cfg" migrate >/dev/null
$MSGX --config "$cfg" mailbox generate --messages 1 --flights "$F" --package-flights "$F" --rich >/dev/null
id=$(my -N "${DB}_mb" -e 'SELECT MAX(CMINMSGS_ID) FROM cminmsgs')
size=$(my -N "${DB}_mb" -e "SELECT LENGTH(CMINMSGS_CLOB_MSG) FROM cminmsgs WHERE CMINMSGS_ID = $id")
sha=$(my -N "${DB}_mb" -e "SELECT SHA2(CMINMSGS_CLOB_MSG, 256) FROM cminmsgs WHERE CMINMSGS_ID = $id")

$MSGX --config "$cfg" daemon >"$work/daemon.log" 2>&1 &
pid=$!
up() { curl -s -o /dev/null "http://127.0.0.1:$PORT/login"; }
for _ in $(seq 300); do up && break; sleep 0.1; done
up || { cat "$work/daemon.log"; exit 1; }

kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; }
get() {
  curl -s -H "Authorization: Bearer $token" -o "$2" -w '%{http_code} %{time_total} %{size_download}\n' \
    "http://127.0.0.1:$PORT$1"
}
started=$(kb VmRSS)
# Warm-up: the pools (the overview reads PostgreSQL and the mailbox), the
# runtime's threads and the templates; the first row is the message's first view.
get / /dev/null >/dev/null
get /messages /dev/null >/dev/null
warm=$(kb VmRSS)

printf '| date | %s | machine | %s cores, %s | message | %s FLTR, %s bytes | uptime before | %s |\n\n' \
  "$(date -u +%Y-%m-%dT%H:%MZ)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
  "$F" "$size" "$(uptime | sed 's/^ *//')"
printf 'daemon VmRSS: %.1f MB after start, %.1f MB after a warm-up (the overview and the messages list)\n\n' \
  "$(echo "$started / 1024" | bc -l)" "$(echo "$warm / 1024" | bc -l)"
echo '| request | load 1 min | status | time | answer bytes | VmRSS before MB | VmHWM after MB | added peak MB | VmRSS after MB |'
echo '|---|---|---|---|---|---|---|---|---|'
row() {
  local path=$1 out=$2 before l code t bytes hwm after
  echo 5 > "/proc/$pid/clear_refs"
  before=$(kb VmRSS); l=$(load)
  read -r code t bytes < <(get "$path" "$out")
  hwm=$(kb VmHWM); after=$(kb VmRSS)
  printf '| `%s` | %s | %s | %.2f s | %s | %.1f | %.1f | %.1f | %.1f |\n' "$path" "$l" "$code" "$t" "$bytes" \
    "$(echo "$before / 1024" | bc -l)" "$(echo "$hwm / 1024" | bc -l)" \
    "$(echo "($hwm - $before) / 1024" | bc -l)" "$(echo "$after / 1024" | bc -l)"
}
row "/messages/$id" "$work/page.html"
row "/messages/$id?page=50" /dev/null
row "/messages/$id/raw" "$work/raw.xml"
row "/messages/$id" /dev/null
echo
echo '| `msgx msg show` | load 1 min | wall | output bytes | peak RSS MB |'
echo '|---|---|---|---|---|'
for opts in "" "--json" "--full"; do
  l=$(load); t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  rss=$( { /usr/bin/time -f '%M' $MSGX --config "$cfg" msg show "$id" $opts > "$work/show.out"; } 2>&1 | tail -1)
  t1=$(date +%s.%N)
  printf '| `%s` | %s | %.2f s | %s | %.1f |\n' "msg show $id $opts" "$l" "$(echo "$t1 - $t0" | bc -l)" \
    "$(stat -c %s "$work/show.out")" "$(echo "$rss / 1024" | bc -l)"
done
got=$(sha256sum "$work/raw.xml" | cut -d' ' -f1)
echo
if [ "$got" = "$sha" ] && [ "$(stat -c %s "$work/raw.xml")" = "$size" ]; then
  echo "download: $size bytes, SHA-256 equal to the mailbox's"
else
  echo "download DIFFERS: $(stat -c %s "$work/raw.xml") bytes, sha256 $got (mailbox: $size, $sha)"; exit 1
fi
grep -o 'id="raw-cut"[^<]*' "$work/page.html" | sed 's/^[^>]*>/page: /'
grep -o 'id="decoded-records"[^<]*' "$work/page.html" | sed 's/^[^>]*>/page: /'
