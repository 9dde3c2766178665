#!/usr/bin/env bash
# End-to-end latency (issue 11 item 3, issue 20 item 4; docs/BENCHMARKS.md
# "End-to-end latency"): `msgx daemon` with a schedule, `msgx dev-kafka`; FLOPs
# are inserted into the mailbox one at a time (each insert its own commit,
# `msgx mailbox generate --rate`) while a consumer follows the msg topic
# (`msgx tail msg --follow`, set up for low latency). Latency of a message =
# first receipt of a msg record carrying its MSG_ID − the commit of its
# mailbox insert (same clock).
#
# The sequence, on fresh databases, a fresh dev-kafka and a fresh daemon:
#   1. each --rate R for --duration s: p50 / p99 / max (issue 38 targets at
#      20/s and 200/s: p50 ≤ 10 ms, p99 ≤ 25 ms) and where the time goes,
#      stage by stage (harness.py stages: poll + read, ingest → pump,
#      pump → SENT, SENT → receipt);
#   2. a burst of --burst R/s for --burst-duration s: p50 / p99 / max and the
#      catch-up, the time from the burst's last insert until every burst
#      message is processed and its msg event SENT (polled every 0.1 s;
#      target ≤ 5 s);
#   (a rate above 100/s is split over --feeders concurrent inserters: one
#   connection's commits are fsync-bound at ≈ 230/s on the 2-core VM)
#   3. idle: the daemon restarted with statement logging on, --idle-settle s,
#      then the daemon's mailbox and PostgreSQL statements per second over
#      --idle s (targets ≤ 5/s, ≤ 8/s) and the top statements.
# Before every phase the machine's floors (issue 38 item 4; --no-floors
# skips them): pg_test_fsync's open_datasync and fdatasync µs per 8 kB
# write on the disk of both servers, MariaDB's commit rate over one
# connection (autocommit single-row inserts) and pgbench's 1-client TPS, so
# a slow disk shows beside the figures instead of being read as msgx's.
# By default the sequence runs twice, with --schedule (default: the daemon
# profile) and with the previous one-second schedule (--compare FILE, default
# scripts/schedules/cron-1s.toml), and prints both tables and the ratios
# old / new (--no-compare: once). --consumer-check runs a second consumer with
# librdkafka's default fetch settings beside the measuring one in the rate
# phases and reports what each adds (receipt − the msg event's SENT).
#
#   scripts/bench-latency.sh [--rate R]… [--duration 60] [--burst 1000 | --burst 0]
#                            [--burst-duration 60] [--feeders 4] [--idle 60 | --idle 0]
#                            [--idle-settle 10] [--flights 2000] [--schedule daemon|FILE]
#                            [--compare FILE | --no-compare] [--consumer-check] [--no-floors] [--debug]
#
# Default: --rate 20 --rate 200. Own databases (unique names, dropped at exit)
# on the local services; MariaDB's general log is switched on for the idle
# window only (global, into this run's directory) and restored at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
RATES=(); DURATION=60; FLIGHTS=2000; SCHEDULE=daemon; BUILD=""
BURST=1000; BURST_DURATION=60; FEEDERS=4; IDLE=60; SETTLE=10
COMPARE=scripts/schedules/cron-1s.toml CONSUMER_CHECK=0 FLOORS=1
usage() {
  echo "usage: $0 [--rate R]… [--duration S] [--burst R] [--burst-duration S] [--feeders K]" \
       "[--idle S] [--idle-settle S] [--flights F] [--schedule daemon|FILE] [--compare FILE | --no-compare]" \
       "[--consumer-check] [--no-floors] [--debug]"
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --rate) RATES+=("$2"); shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --burst) BURST=$2; shift 2 ;;
    --burst-duration) BURST_DURATION=$2; shift 2 ;;
    --feeders) FEEDERS=$2; shift 2 ;;
    --idle) IDLE=$2; shift 2 ;;
    --idle-settle) SETTLE=$2; shift 2 ;;
    --flights) FLIGHTS=$2; shift 2 ;;
    --schedule) SCHEDULE=$2; shift 2 ;;
    --compare) COMPARE=$2; shift 2 ;;
    --no-compare) COMPARE=""; shift ;;
    --consumer-check) CONSUMER_CHECK=1; shift ;;
    --no-floors) FLOORS=0; shift ;;
    --debug) BUILD=--debug; shift ;;
    *) usage ;;
  esac
done
[ ${#RATES[@]} -gt 0 ] || RATES=(20 200)
[ "$FEEDERS" -ge 1 ] || usage
[ -f "$SCHEDULE" ] && SCHEDULE=$(realpath "$SCHEDULE")
if [ -n "$COMPARE" ]; then
  [ -f "$COMPARE" ] || { echo "no schedule file $COMPARE"; exit 2; }
  COMPARE=$(realpath "$COMPARE")
fi

# shellcheck source=scripts/harness-lib.sh
. scripts/harness-lib.sh
bash scripts/services.sh >/dev/null
command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null
harness_init latency
trap harness_cleanup EXIT
trap 'exit 143' INT TERM # so that the EXIT trap cleans up
harness_build $BUILD
# shellcheck disable=SC2119 # no extra sed expressions
harness_config
# The measuring consumer's own configuration: librdkafka's mock cluster holds
# an empty fetch for the consumer's whole fetch.wait.max.ms (500 ms by
# default) and does not answer early when a record arrives, which would add
# up to 0.5 s to every figure; 2 ms adds at most that (docs/BENCHMARKS.md;
# issue 38: 10 ms was half of the p50 being measured). A real broker answers
# a waiting fetch as soon as a record arrives.
TAIL_CONFIG=$WORK/tail.toml
sed 's/^\[msgx\.kafka\.properties\]$/&\n"fetch.wait.max.ms" = "2"/' "$MSGX_CONFIG" >"$TAIL_CONFIG"
grep -q '"fetch.wait.max.ms"' "$TAIL_CONFIG" || { echo "no [msgx.kafka.properties] in $MSGX_CONFIG"; exit 1; }
export RUST_LOG=${RUST_LOG:-warn}
PG=postgres://msgx:msgx@127.0.0.1:5432
export PGOPTIONS='--client-min-messages=warning'
MY_ADMIN=(mariadb -h 127.0.0.1 -P 3306 -umsgx -pmsgx -N -B)

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# pg_server_log: the file the PostgreSQL server writes its log to (the
# logging collector's current file, else the postmaster's stderr, which is
# where Debian's pg_ctlcluster sends it); $PG_LOG overrides.
pg_server_log() {
  local f dd pid
  if [ -n "${PG_LOG:-}" ]; then echo "$PG_LOG"; return; fi
  f=$(psql "$PG/postgres" -qtAX -c "SELECT pg_current_logfile()")
  dd=$(psql "$PG/postgres" -qtAX -c "SHOW data_directory")
  if [ -n "$f" ]; then
    case $f in /*) ;; *) f=$dd/$f ;; esac
  else
    pid=$(head -n 1 "$dd/postmaster.pid")
    f=$(readlink "/proc/$pid/fd/2")
  fi
  echo "$f"
}

# general_log_on FILE / general_log_off: MariaDB's general log (global and
# dynamic: no restart) into FILE, for the idle window; the server's previous
# settings are put back at once and again at exit.
general_log_on() {
  local on file output
  read -r on file output < <("${MY_ADMIN[@]}" -e "SELECT @@general_log, @@general_log_file, @@log_output")
  GENERAL_LOG_RESTORE="SET GLOBAL general_log = $on; SET GLOBAL general_log_file = '$file'; SET GLOBAL log_output = '$output'"
  echo "mariadb -h 127.0.0.1 -P 3306 -umsgx -pmsgx -e \"$GENERAL_LOG_RESTORE\" 2>/dev/null || true" >>"$WORK/on-exit"
  "${MY_ADMIN[@]}" -e "SET GLOBAL general_log = 0; SET GLOBAL log_output = 'FILE';
                       SET GLOBAL general_log_file = '$1'; SET GLOBAL general_log = 1"
}
general_log_off() { "${MY_ADMIN[@]}" -e "$GENERAL_LOG_RESTORE"; }

# record OUT META_JSON RESULT_JSON: one phase's line (META merged with RESULT).
record() {
  python3 -c 'import json, sys; d = json.loads(sys.argv[1]); d.update(json.loads(sys.argv[2])); print(json.dumps(d))' \
    "$2" "$3" >>"$1"
}

# consumer_start LOG [CONFIG] / consumer_stop: the measuring consumer
# (harness.py latency; by default with $TAIL_CONFIG), every started one stopped.
CONSUMERS=()
consumer_start() {
  : >"$1"
  python3 "$HARNESS_PY" latency --msgx "$MSGX" --config "${2:-$TAIL_CONFIG}" --out "$1" 2>>"$WORK/tail.err" &
  CONSUMERS+=($!)
  harness_track $!
}
consumer_stop() {
  local pid
  sleep 2 # the last records
  for pid in "${CONSUMERS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  CONSUMERS=()
}

# floors: the machine's own limits just before a phase, as JSON (issue 38
# item 4; "null" with --no-floors): pg_test_fsync (1 s per method, on the
# disk PostgreSQL and MariaDB write to: the one file system here) — the
# µs of one 8 kB write with open_datasync and fdatasync; MariaDB's commits
# per second over one connection (200 autocommit single-row inserts into a
# scratch table of the run's mailbox database: innodb_flush_log_at_trx_commit
# = 1 pays an fsync each); pgbench TPC-B, scale 1, 1 client, 5 s on the
# run's own pgbench database (PostgreSQL's single-client commit rate).
floors() {
  [ "$FLOORS" = 1 ] || { echo null; return; }
  local fsync od fd t0 t1 my tps
  fsync=$("$PGBIN/pg_test_fsync" -s 1 -f "$WORK/fsync.tmp" 2>/dev/null || true)
  rm -f "$WORK/fsync.tmp"
  read -r od fd < <(echo "$fsync" | awk '/one 8kB write/ {one = 1} one && $1 == "open_datasync" {od = $(NF-1)}
                                           one && $1 == "fdatasync" {fd = $(NF-1); exit} END {print od + 0, fd + 0}')
  "${MY_ADMIN[@]}" "$MY_FLOOR_DB" -e "CREATE TABLE IF NOT EXISTS floor_commit (id INT AUTO_INCREMENT PRIMARY KEY, v INT)"
  t0=$(date +%s.%N)
  for i in $(seq 200); do echo "INSERT INTO floor_commit (v) VALUES ($i);"; done | "${MY_ADMIN[@]}" "$MY_FLOOR_DB"
  t1=$(date +%s.%N)
  my=$(echo "200 / ($t1 - $t0)" | bc -l)
  tps=$(pgbench -c 1 -T 5 "$PG/$PGBENCH_DB" 2>/dev/null | grep -E '^tps' | head -1 | grep -oE '[0-9]+\.[0-9]+' | head -1)
  printf '{"open_datasync_us": %s, "fdatasync_us": %s, "mariadb_commits_per_s": %.1f, "pgbench_tps": %s}\n' \
    "${od:-null}" "${fd:-null}" "$my" "${tps:-null}"
}

# feed_phase LABEL KIND RATE SECONDS: RATE msg/s for SECONDS s (KIND rate
# or burst). One connection commits ≈ 230 single-row inserts per second on
# the 2-core VM (an fsync each; docs/BENCHMARKS.md), so above 100/s the rate
# is split over $FEEDERS concurrent inserters (InnoDB's group commit), each
# insert still its own commit. The catch-up poll follows the feed logs from
# the start, so that it polls from the last insert on.
feed_phase() {
  local label=$1 kind=$2 rate=$3 seconds=$4 k=1 n per rate_k name recv load0 i pids=() args=()
  local poller catch line target target50=null delay=null start floor stages=null
  [ "$(echo "$rate > 100" | bc)" = 1 ] && k=$FEEDERS
  per=$(echo "($rate * $seconds + $k - 1) / $k" | bc) n=$((per * k))
  rate_k=$(echo "scale=3; $rate / $k" | bc)
  name=$kind-$rate recv=$WORK/$label-recv-$kind-$rate.log
  echo "== [$label] $kind: $rate msg/s for $seconds s ($n FLOPs, $k inserter(s) at $rate_k/s)"
  floor=$(floors)
  echo "floors: $floor"
  consumer_start "$recv"
  if [ "$CONSUMER_CHECK" = 1 ]; then consumer_start "$WORK/$label-recv-$name-default-consumer.log" "$MSGX_CONFIG"; fi
  sleep 3 # the consumers' partition assignment
  load0=$(loadavg)
  start=$(psql "$MSGX_DATABASE_URL" -qtAX -c 'SELECT now()')
  for i in $(seq 1 "$k"); do
    args+=(--feed-log "$WORK/$label-feed-$name-$i.log")
    : >"$WORK/$label-feed-$name-$i.log"
  done
  python3 "$HARNESS_PY" burst-catch-up --pg "$MSGX_DATABASE_URL" "${args[@]}" --expect "$n" \
    --timeout 900 >"$WORK/$label-catch-up-$name.out" 2>&1 &
  poller=$!
  harness_track "$poller"
  for i in $(seq 1 "$k"); do
    "$MSGX" mailbox generate --no-schedules --messages "$per" --flights "$FLIGHTS" --seed $((rate * 10 + i)) \
      --first-seqn $((SEQN + (i - 1) * per)) --rate "$rate_k" \
      >>"$WORK/$label-feed-$name-$i.log" 2>"$WORK/$label-feed-$name-$i.err" &
    pids+=($!)
    harness_track $!
  done
  for i in "${pids[@]}"; do wait "$i"; done
  SEQN=$((SEQN + n + 1))
  wait "$poller" || true
  catch=$(grep '^burst-catch-up: ' "$WORK/$label-catch-up-$name.out") \
    || { cat "$WORK/$label-catch-up-$name.out"; return 1; }
  echo "$catch"
  harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 900 >/dev/null
  consumer_stop
  # The backfill scan's marking rate in this phase (issue 31 item 3): marks
  # written over the time of the scan runs that wrote them (JOB_RUN).
  echo "backfill: $(psql "$MSGX_DATABASE_URL" -qtAX -c "SELECT coalesce(sum(items), 0) || ' marks in ' ||
      round(coalesce(sum(extract(epoch FROM finished_at - started_at)), 0)::numeric, 2) || ' s of scan runs = ' ||
      round(coalesce(sum(items) / greatest(sum(extract(epoch FROM finished_at - started_at)), 0.001), 0)::numeric) ||
      ' marks/s' FROM job_run WHERE job = 'backfill-scan' AND items > 0 AND started_at >= '$start'")"
  line=$(python3 "$HARNESS_PY" latency-report "${args[@]}" --recv-log "$recv" --rate "$rate")
  echo "$line"
  if [ "$CONSUMER_CHECK" = 1 ]; then
    delay=$(python3 "$HARNESS_PY" consumer-delay --pg "$MSGX_DATABASE_URL" --recv-log "$recv" \
      --recv-log "$WORK/$label-recv-$name-default-consumer.log")
    echo "$delay"
    delay=${delay#consumer-delay: }
  fi
  if [ "$kind" = rate ]; then
    stages=$(python3 "$HARNESS_PY" stages --pg "$MSGX_DATABASE_URL" "${args[@]}" --recv-log "$recv")
    echo "$stages"
    stages=${stages#stages: }
  fi
  case $kind:$rate in rate:20 | rate:200) target=0.025 target50=0.010 ;; *) target=null ;; esac
  record "$WORK/$label.jsonl" "{\"phase\": \"$kind\", \"rate\": $rate, \"duration_s\": $seconds,
    \"target_p99_s\": $target, \"target_p50_s\": $target50,
    \"target_catch_up_s\": $([ "$kind" = burst ] && echo 5 || echo null),
    \"load_before\": \"$load0\", \"load_after\": \"$(loadavg)\", \"consumer_delay\": $delay,
    \"floors\": $floor, \"stages\": $stages, \"catch_up\": ${catch#burst-catch-up: }}" "${line#latency: }"
}

# idle_phase LABEL SCHEDULE DB: the daemon restarted with statement logging
# for its database (a running session keeps the settings it started with),
# $SETTLE s, then the window of $IDLE s.
idle_phase() {
  local label=$1 schedule=$2 db=$3 pg_log my_log prefix pg0 pg1 my0 my1 q0 q1 load0 line
  echo "== [$label] idle: daemon restarted with statement logging, $SETTLE s settle, $IDLE s window"
  pg_log=$(pg_server_log)
  [ -r "$pg_log" ] || { echo "cannot read the PostgreSQL log ($pg_log); set PG_LOG"; return 1; }
  prefix=$(psql "$PG/postgres" -qtAX -c "SHOW log_line_prefix")
  [ "$prefix" = '%m [%p] %q%u@%d ' ] \
    || echo "warning: log_line_prefix is '$prefix', harness.py expects '%m [%p] %q%u@%d '"
  harness_stop "$DAEMON_PID"
  psql "$MSGX_DATABASE_URL" -qX -v ON_ERROR_STOP=1 -c "ALTER DATABASE $db SET log_statement = 'all'" \
    -c "ALTER DATABASE $db SET log_parameter_max_length = 0" >/dev/null
  my_log=$WORK/$label-mariadb-general.log
  general_log_on "$my_log"
  harness_daemon "$WORK/$label-daemon.log" --schedule "$schedule"
  harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 300 >/dev/null
  sleep "$SETTLE"
  [ -f "$my_log" ] || { echo "MariaDB did not write its general log to $my_log"; general_log_off; return 1; }
  load0=$(loadavg)
  q0=$("${MY_ADMIN[@]}" -e "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2)
  pg0=$(stat -c %s "$pg_log") my0=$(stat -c %s "$my_log")
  sleep "$IDLE"
  pg1=$(stat -c %s "$pg_log") my1=$(stat -c %s "$my_log")
  q1=$("${MY_ADMIN[@]}" -e "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2)
  general_log_off
  psql "$MSGX_DATABASE_URL" -qX -c "ALTER DATABASE $db RESET log_statement" \
    -c "ALTER DATABASE $db RESET log_parameter_max_length" >/dev/null
  line=$(python3 "$HARNESS_PY" idle-report --seconds "$IDLE" --pg-log "$pg_log" --pg-db "$db" \
    --pg-range "$pg0:$pg1" --my-log "$my_log" --my-db "$db" --my-range "$my0:$my1")
  # Server-wide, for comparison: every client of the shared server; minus 1
  # for the second SHOW GLOBAL STATUS itself (the harness's only statement).
  record "$WORK/$label.jsonl" "{\"phase\": \"idle\", \"settle_s\": $SETTLE, \"load_before\": \"$load0\",
    \"load_after\": \"$(loadavg)\", \"server_questions_per_s\": $(echo "scale=2; ($q1 - $q0 - 1) / $IDLE" | bc),
    \"target_mailbox_per_s\": 5, \"target_pg_per_s\": 8}" "${line#idle: }"
  python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print("idle: mailbox", r["mailbox"]["per_s"], "/s,",
    "PostgreSQL", r["pg"]["per_s"], "/s")' "${line#idle: }"
}

# run_sequence LABEL SCHEDULE: the whole sequence on its own databases,
# dev-kafka and daemon; one JSON line per phase in $WORK/LABEL.jsonl.
run_sequence() {
  local label=$1 schedule=$2 db="${TAG}_$1" rate
  : >"$WORK/$label.jsonl"
  harness_pg_db "$PG/postgres" "$db"
  harness_mailbox_db 127.0.0.1 3306 "$db"
  MY_FLOOR_DB=$db PGBENCH_DB=${db}_pgbench
  if [ "$FLOORS" = 1 ]; then
    harness_pg_db "$PG/postgres" "$PGBENCH_DB"
    pgbench -q -i -s 1 "$PG/$PGBENCH_DB" >/dev/null 2>&1
  fi
  export MSGX_DATABASE_URL=$PG/$db MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/$db
  "$MSGX" migrate >/dev/null
  harness_dev_kafka "$WORK/$label-kafka.log"
  echo "== [$label] schedule $schedule: $FLIGHTS flights (SCHD packages), then the daemon"
  "$MSGX" mailbox generate --messages $(((FLIGHTS + 99) / 100)) --flights "$FLIGHTS" --seed 5 >/dev/null
  harness_daemon "$WORK/$label-daemon.log" --schedule "$schedule"
  harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 300 >/dev/null
  SEQN=100000
  for rate in "${RATES[@]}"; do feed_phase "$label" rate "$rate" "$DURATION"; done
  if [ "$BURST" -gt 0 ]; then feed_phase "$label" burst "$BURST" "$BURST_DURATION"; fi
  if [ "$IDLE" -gt 0 ]; then idle_phase "$label" "$schedule" "$db"; fi
  harness_stop "$DAEMON_PID"
  harness_stop "$KAFKA_PID"
}

started="$(date -u '+%Y-%m-%d %H:%M UTC')"
run_sequence new "$SCHEDULE"
if [ -n "$COMPARE" ]; then run_sequence old "$COMPARE"; fi

echo
echo "== end-to-end latency ($started, $(nproc) cores, load now $(loadavg), $(basename "$MSGX") $(dirname "$MSGX" | xargs basename))"
reports=(--run "new=$SCHEDULE=$WORK/new.jsonl")
if [ -n "$COMPARE" ]; then reports+=(--run "old=$COMPARE=$WORK/old.jsonl"); fi
python3 "$HARNESS_PY" latency-tables "${reports[@]}"
