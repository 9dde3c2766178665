#!/usr/bin/env bash
# Pipeline benchmark (issue 5 item 9): loads N realistic generated messages
# (SCHD packages + a FLOP mix over F flights) into a fresh mailbox, then
# measures ingest rows/s, pump messages/s (synchronous_commit on) and peak
# RSS, and, in the same run, pgbench's single-client TPS on the same
# PostgreSQL (the commit-rate ceiling). Prints a Markdown table row block.
#   scripts/bench-pipeline.sh [--messages N] [--flights F]
set -euo pipefail
cd "$(dirname "$0")/.."
N=100000; F=2000
while [ $# -gt 0 ]; do
  case $1 in
    --messages) N=$2; shift 2 ;;
    --flights) F=$2; shift 2 ;;
    *) echo "usage: $0 [--messages N] [--flights F]"; exit 2 ;;
  esac
done

bash scripts/services.sh >/dev/null
command -v /usr/bin/time >/dev/null || { apt-get install -y -qq time >/dev/null; }
command -v bc >/dev/null || { apt-get install -y -qq bc >/dev/null; }
cargo build --release --quiet --bin msgx
MSGX=target/release/msgx
PG=postgres://msgx:msgx@127.0.0.1:5432
export PGOPTIONS='--client-min-messages=warning'
psql "$PG/postgres" -q -c 'DROP DATABASE IF EXISTS msgx_bench WITH (FORCE)' -c 'CREATE DATABASE msgx_bench' \
  -c 'DROP DATABASE IF EXISTS msgx_pgbench WITH (FORCE)' -c 'CREATE DATABASE msgx_pgbench'
mariadb -h 127.0.0.1 -umsgx -pmsgx -e 'DROP DATABASE IF EXISTS msgx_bench_mb; CREATE DATABASE msgx_bench_mb CHARACTER SET utf8mb4'
mariadb -h 127.0.0.1 -umsgx -pmsgx msgx_bench_mb < migrations/mailbox/0001_mailbox.sql
export MSGX_DATABASE_URL=$PG/msgx_bench MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/msgx_bench_mb
export MSGX_CONFIG=config/msgx.toml RUST_LOG=warn
$MSGX migrate >/dev/null
sync_commit=$(psql "$PG/msgx_bench" -qtAX -c 'SHOW synchronous_commit')

echo "generating $N messages over $F flights ..." >&2
$MSGX mailbox generate --messages "$N" --flights "$F" --seed 42 >/dev/null

measure() { # job -> "seconds items peak_rss_kb"
  local out t0 t1 items rss
  t0=$(date +%s.%N)
  out=$(/usr/bin/time -f 'RSS %M' $MSGX run "$1" --until-empty --max-items 10000000 --json 2>&1)
  t1=$(date +%s.%N)
  items=$(echo "$out" | grep -o '"items":[0-9]*' | head -1 | cut -d: -f2)
  rss=$(echo "$out" | grep -o 'RSS [0-9]*' | cut -d' ' -f2)
  echo "$(echo "$t1 - $t0" | bc -l) $items $rss"
}
read -r ti ni ri < <(measure ingest-sweep)
read -r tp np rp < <(measure pump-drain)

echo "pgbench ceiling (scale 10, 1 client, 20 s) ..." >&2
pgbench -q -i -s 10 "$PG/msgx_pgbench" >/dev/null 2>&1
tps=$(pgbench -c 1 -T 20 "$PG/msgx_pgbench" 2>/dev/null | grep -E '^tps' | head -1 | grep -oE '[0-9]+\.[0-9]+' | head -1)

ingest_rate=$(echo "$ni / $ti" | bc -l)
pump_rate=$(echo "$np / $tp" | bc -l)
ratio=$(echo "$pump_rate / $tps" | bc -l)
printf '| date | %s |\n| machine | %s cores, %s |\n' "$(date -u +%Y-%m-%d)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
printf '| messages | %s (%s flights), synchronous_commit=%s |\n' "$N" "$F" "$sync_commit"
printf '| ingest | %d rows in %.1f s = **%.0f rows/s** (target ≥ 20,000), peak RSS %d MB |\n' "$ni" "$ti" "$ingest_rate" "$((ri / 1024))"
printf '| pump | %d messages in %.1f s = **%.0f msg/s**, peak RSS %d MB |\n' "$np" "$tp" "$pump_rate" "$((rp / 1024))"
printf '| pgbench 1 client | **%.0f TPS** |\n' "$tps"
printf '| pump / pgbench | **%.2f** (target ≥ 0.40; issue 11: ≥ 1.0) |\n' "$ratio"
