#!/usr/bin/env bash
# Pipeline benchmark (issue 5 item 9): loads N realistic generated messages
# (SCHD packages + a FLOP mix over F flights) into a fresh mailbox, then
# measures ingest rows/s, pump messages/s (synchronous_commit on) and peak
# RSS, and, in the same run, pgbench's single-client TPS on the same
# PostgreSQL (the commit-rate ceiling). Prints a Markdown table row block.
#   scripts/bench-pipeline.sh [--messages N] [--flights F] [--runs R] [--no-build]
# --runs R repeats the whole measurement R times (fresh databases, same
# input; pump and pgbench back to back in each run, so each ratio compares
# them under the same machine load, which is printed beside it);
# --no-build uses the existing target/release/msgx.
set -euo pipefail
cd "$(dirname "$0")/.."
N=100000; F=2000; RUNS=1; BUILD=1
while [ $# -gt 0 ]; do
  case $1 in
    --messages) N=$2; shift 2 ;;
    --flights) F=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    *) echo "usage: $0 [--messages N] [--flights F] [--runs R] [--no-build]"; exit 2 ;;
  esac
done

DB=msgx_bench
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

printf '| date | %s |\n| machine | %s cores, %s |\n' "$(date -u +%Y-%m-%d)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
printf '| messages | %s (%s flights), group-commit %s |\n\n' "$N" "$F" "$(grep -E '^group-commit' config/msgx.toml | grep -oE '[0-9]+' | head -1)"
echo '| run (UTC) | load 1 min | ingest rows/s (process / run alone) | pump msg/s | pgbench 1 client TPS | pump / pgbench | peak RSS ingest / pump |'
echo '|---|---|---|---|---|---|---|'
for run in $(seq "$RUNS"); do
  psql "$PG/postgres" -q -c 'DROP DATABASE IF EXISTS msgx_bench WITH (FORCE)' -c 'CREATE DATABASE msgx_bench' \
    -c 'DROP DATABASE IF EXISTS msgx_pgbench WITH (FORCE)' -c 'CREATE DATABASE msgx_pgbench'
  mariadb -h 127.0.0.1 -umsgx -pmsgx -e 'DROP DATABASE IF EXISTS msgx_bench_mb; CREATE DATABASE msgx_bench_mb CHARACTER SET utf8mb4'
  mariadb -h 127.0.0.1 -umsgx -pmsgx msgx_bench_mb < migrations/mailbox/0001_mailbox.sql
  $MSGX migrate >/dev/null
  sync_commit=$(psql "$PG/msgx_bench" -qtAX -c 'SHOW synchronous_commit')
  [ "$sync_commit" = on ] || { echo "synchronous_commit is $sync_commit, not on" >&2; exit 1; }
  echo "run $run: generating $N messages over $F flights ..." >&2
  $MSGX mailbox generate --messages "$N" --flights "$F" --seed 42 >/dev/null
  l0=$(load); started=$(date -u +%H:%M)
  read -r ti ni ri ri_run < <(measure ingest-sweep)
  read -r tp np rp _ < <(measure pump-drain)
  echo "run $run: pgbench ceiling (scale 10, 1 client, 20 s) ..." >&2
  pgbench -q -i -s 10 "$PG/msgx_pgbench" >/dev/null 2>&1
  tps=$(pgbench -c 1 -T 20 "$PG/msgx_pgbench" 2>/dev/null | grep -E '^tps' | head -1 | grep -oE '[0-9]+\.[0-9]+' | head -1)
  l1=$(load)
  ingest_rate=$(echo "$ni / $ti" | bc -l)
  ingest_run=$(echo "$ni / $ri_run" | bc -l)
  pump_rate=$(echo "$np / $tp" | bc -l)
  ratio=$(echo "$pump_rate / $tps" | bc -l)
  printf '| %s | %s–%s | %.0f / %.0f (%d in %.2f / %.2f s) | %.0f (%d in %.1f s) | %.0f | **%.2f** | %d / %d MB |\n' \
    "$started" "$l0" "$l1" "$ingest_rate" "$ingest_run" "$ni" "$ti" "$ri_run" "$pump_rate" "$np" "$tp" "$tps" "$ratio" \
    "$((ri / 1024))" "$((rp / 1024))"
done
echo
echo 'Targets: ingest ≥ 20,000 rows/s; pump / pgbench ≥ 1.0 (issue 11); RSS ≤ 150 MB. synchronous_commit = on.'
