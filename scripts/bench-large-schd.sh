#!/usr/bin/env bash
# Large-schedule benchmark (issue 17, item 5): one SCHD DNLD of F FLTR
# (default 20,000) applied by `msgx run pump-drain`, wall time and peak RSS;
# then a backlog of P such packages (default 20, re-sent schedules with a
# changed stand so every flight changes) plus N normal messages, drained with
# the peak RSS of the whole drain. Fresh databases on the local services.
#   scripts/bench-large-schd.sh [--flights F] [--packages P] [--messages N] [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
F=20000; P=20; N=10000; BUILD=1
while [ $# -gt 0 ]; do
  case $1 in
    --flights) F=$2; shift 2 ;;
    --packages) P=$2; shift 2 ;;
    --messages) N=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    *) echo "usage: $0 [--flights F] [--packages P] [--messages N] [--no-build]"; exit 2 ;;
  esac
done
DB=msgx_bench_schd
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
my() { mariadb -h 127.0.0.1 -umsgx -pmsgx "$@"; }
# A 20,000-FLTR package is ~16 MB: above the server default packet size.
mariadb -uroot -e "SET GLOBAL max_allowed_packet = 67108864"

fresh() {
  psql "$PG/postgres" -q -c 'DROP DATABASE IF EXISTS msgx_bench_schd WITH (FORCE)' -c 'CREATE DATABASE msgx_bench_schd'
  my -e 'DROP DATABASE IF EXISTS msgx_bench_schd_mb; CREATE DATABASE msgx_bench_schd_mb CHARACTER SET utf8mb4'
  my msgx_bench_schd_mb < migrations/mailbox/0001_mailbox.sql
  $MSGX migrate >/dev/null
}

printf '| date | %s | machine | %s cores, %s |\n\n' "$(date -u +%Y-%m-%d)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo '| case (UTC start) | load 1 min | SCHD size | messages | pump wall s | peak RSS MB |'
echo '|---|---|---|---|---|---|'

fresh
$MSGX mailbox generate --messages 1 --flights "$F" --package-flights "$F" --rich >/dev/null
size=$(my -N msgx_bench_schd_mb -e 'SELECT LENGTH(CMINMSGS_CLOB_MSG) FROM cminmsgs ORDER BY CMINMSGS_ID DESC LIMIT 1')
$MSGX run ingest-sweep --until-empty >/dev/null
start=$(date -u +%H:%M); l=$(load)
read -r t n r _ < <(measure pump-drain)
printf '| one SCHD DNLD of %s FLTR (%s) | %s | %.1f MB | %s | %.1f | %d |\n' "$F" "$start" "$l" "$(echo "$size / 1000000" | bc -l)" "$n" "$t" $(( r / 1024 ))

fresh
for i in $(seq "$P"); do
  $MSGX mailbox generate --messages 1 --flights "$F" --package-flights "$F" --rich --first-seqn "$i" >/dev/null
  # Each re-sent package changes every flight (stand), so none is a no-op.
  my msgx_bench_schd_mb -e "UPDATE cminmsgs SET CMINMSGS_CLOB_MSG = REPLACE(CMINMSGS_CLOB_MSG, '<STND>5', '<STND>$((i % 9))') WHERE CMINMSGS_ID = (SELECT m FROM (SELECT MAX(CMINMSGS_ID) m FROM cminmsgs) x)"
done
$MSGX mailbox generate --messages "$N" --flights 2000 --first-seqn 1000 >/dev/null
$MSGX run ingest-sweep --until-empty --max-items 10000000 >/dev/null
start=$(date -u +%H:%M); l=$(load)
read -r t n r _ < <(measure pump-drain)
printf '| %s SCHD of %s FLTR + %s normal (%s) | %s | — | %s | %.1f | %d |\n' "$P" "$F" "$N" "$start" "$l" "$n" "$t" $(( r / 1024 ))
