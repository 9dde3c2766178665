#!/usr/bin/env bash
# PostgreSQL failover harness (issue 34, items 3 and 4; docs/RESILIENCE.md
# "PostgreSQL failover"): msgx's own PostgreSQL as a primary with an
# asynchronous streaming replica (two private clusters: initdb,
# `pg_basebackup -R -X stream`), a private MariaDB mailbox, the librdkafka
# mock cluster, an active daemon and a `--standby` daemon, each under a
# supervisor loop that restarts it after any exit (as msgx-standby.service
# does after exit 4), both given the multi-host URL
#   postgres://msgx:msgx@127.0.0.1:P1,127.0.0.1:P2/msgx?target_session_attrs=read-write
# A steady stream (`msgx mailbox generate --rate`, FLOPs over SCHD-created
# flights) flows while, with WAL in flight, one scenario runs (each on fresh
# clusters):
#   unplanned    kill -9 of the primary's postmaster and every process of its
#                cluster, then `pg_ctl promote` of the replica; the bytes and
#                commits the replica missed are read from the old primary's
#                WAL (pg_waldump from the replica's replay LSN)
#   switchover   planned: the primary stopped `-m fast`, the replica replays
#                everything, then is promoted
#   split-brain  unplanned (the replica cut off --lag 5 s before, so the old
#                primary holds commits the new one lacks), then the old
#                primary restarted as a primary, still listed first in msgx's
#                URL. Phase A: 10 s with the daemons running; phase B: the
#                active daemon killed, so both resolve the host list afresh
#                (20 s). msgx must not write to it: its tuple-write counters
#                and its state (W, PROC_STATE, outbox) right after the
#                restart, after phase A and at the end must be equal
#   standby      kill -9 of the active daemon; the standby takes over
# After the feed stops and the daemons drain, the run is compared with an
# undisturbed run of the same input (`msgx dev snapshot`, and compare-runs'
# checks as scripts/chaos.sh, by `msgx dev compare-runs --after-rollback`): every
# mailbox row terminal, no (FLID, STATE_VERSION) missing from the msg topic,
# the same flight states and last schd records, duplicates only as re-sends
# of the same version with the same content (after a rollback the new
# primary re-sends versions already delivered, so a version may go back, but
# only to one already on the topic with that content).
# Reported: RPO (WAL bytes and commits the promoted replica missed; W,
# terminal outcomes and SENT events it lost, rebuilt from the mailbox), RTO
# (the kill to the first event delivered by the new active instance, goal
# <= 10 s; standby takeover goal <= 5 s).
#
# --purge adds a mailbox owner that deletes marked rows --purge-after (10) s
# after it first saw their mark (C-8: the owner may purge a row once msgx's
# mark is written; a raw retention shorter than the replica's lag), and makes the
# replica lag --lag seconds (its WAL receiver cut off, as a network partition
# would) before the kill: rows the old primary had processed and marked, and
# the owner then purged, are above the restored watermark. The report counts
# those that end DEAD(MALFORMED, raw-missing) and those that vanish as
# released holes; every other difference from the undisturbed run fails.
#
#   scripts/failover.sh [--scenario all|unplanned|switchover|split-brain|standby]
#                       [--short] [--purge] [--purge-after S] [--lag S] [--rate R] [--seconds S]
#                       [--flights F] [--seed N] [--debug]
#
# --short: one scenario (unplanned unless --scenario is given), a 25 s feed.
# MSGX_BIN=path uses that binary as it is. Own clusters, MariaDB and mock
# Kafka in a temp dir on free ports; the system services are never touched.
# The msgx configuration is the documented default apart from the URLs and
# the log (stdout only, one file per daemon).
# shellcheck disable=SC2317 # the predicates are called through wait_for
set -euo pipefail
cd "$(dirname "$0")/.."
PURGE_AFTER=10; SCENARIO=all; SHORT=0; PURGE=0; LAG=""; RATE=200; SECONDS_FEED=""; FLIGHTS=1000; SEED=12; BUILD=""
usage() { sed -n '/^#   scripts\/failover.sh/,/^#  *\[--flights/p' "$0" | sed 's/^# *//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --scenario) SCENARIO=$2; shift 2 ;;
    --short) SHORT=1; shift ;;
    --purge) PURGE=1; shift ;;
    --purge-after) PURGE_AFTER=$2; shift 2 ;;
    --lag) LAG=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --seconds) SECONDS_FEED=$2; shift 2 ;;
    --flights) FLIGHTS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --debug) BUILD=--debug; shift ;;
    *) usage ;;
  esac
done
if [ "$SHORT" = 1 ]; then
  [ "$SCENARIO" = all ] && SCENARIO=unplanned
  SECONDS_FEED=${SECONDS_FEED:-25}
fi
SECONDS_FEED=${SECONDS_FEED:-60}
case $SCENARIO in
  all) SCENARIOS=(unplanned switchover split-brain standby) ;;
  unplanned|switchover|split-brain|standby) SCENARIOS=("$SCENARIO") ;;
  *) usage ;;
esac
MESSAGES=$(( RATE * SECONDS_FEED ))
RTO_GOAL=10; TAKEOVER_GOAL=5

# shellcheck source=scripts/harness-lib.sh
. scripts/harness-lib.sh
command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null
harness_init failover
trap harness_cleanup EXIT
trap 'exit 143' INT TERM # so that the EXIT trap cleans up
harness_build $BUILD
# The documented defaults (retry tiers, max-commit-delay 30 s); logs on stdout.
HARNESS_RETRY=defaults harness_config \
  -e 's/^max-commit-delay = [^#]*/max-commit-delay = "30s"        /' \
  -e 's|^dir = "[^"]*"|dir = ""|'
export RUST_LOG=${RUST_LOG:-info}
started=$(date +%s)
log() { echo "[$(date -u +%H:%M:%S)] $*"; }
now() { date +%s.%N; }
secs_since() { echo "$(now) - $1" | bc -l | xargs printf '%.1f'; }
q() { psql "$1" -qtAX -v ON_ERROR_STOP=1 -c "$2"; }
my() { mariadb -h 127.0.0.1 -P "$MY_PORT" -umsgx -pmsgx -N -B "$@"; }

log "== private MariaDB (temp dir $WORK)"
harness_private_mariadb
FAILED=0
SUMMARY=()
say() { SUMMARY+=("$1"); log "$1"; }
fail() { FAILED=1; say "  FAIL $*"; }

# The input: SCHD packages for the flights, then the FLOP stream (FDEL every
# 500, 1 % business duplicates, 0.2 % malformed). The same seeds give the same
# rows with the same IDs, streamed at RATE/s or inserted at once.
schedules() { "$MSGX" mailbox generate --messages $(( (FLIGHTS + 99) / 100 )) --flights "$FLIGHTS" --seed 11 >/dev/null; }
feed_args=(--no-schedules --messages "$MESSAGES" --flights "$FLIGHTS" --seed "$SEED" --first-seqn 1000
           --duplicates 0.01 --malformed 0.002)

# ------------------------------------------------------------ the daemons --

# supervise NAME: `msgx daemon --standby` in a restart loop (1 s after any
# exit) until $WORK/stop-daemons exists; its output in daemon-NAME.log (a
# `=== started` line before each start), its PID in daemon-NAME.pid.
supervise() {
  local name=$1
  ( while [ ! -e "$WORK/stop-daemons" ]; do
      echo "=== $(date -u +%H:%M:%S.%N) started" >>"$WORK/daemon-$name.log"
      MSGX_DATABASE_URL=$DAEMON_URL "$MSGX" daemon --standby >>"$WORK/daemon-$name.log" 2>&1 &
      echo $! >"$WORK/daemon-$name.pid"
      rc=0; wait $! || rc=$?
      echo "=== $(date -u +%H:%M:%S.%N) exit $rc" >>"$WORK/daemon-$name.log"
      echo "$(date -u +%H:%M:%S) $name exit $rc" >>"$WORK/daemon-exits"
      sleep 1
    done ) &
  local sup=$!
  disown "$sup"
  harness_track "$sup"
  echo "touch '$WORK/stop-daemons'; kill -KILL $sup \"\$(cat '$WORK/daemon-$name.pid' 2>/dev/null)\" 2>/dev/null || true" >>"$WORK/on-exit"
  echo "$sup" >"$WORK/supervisor-$name.pid"
}
# is_active NAME: its current daemon has taken the instance lock.
is_active() {
  [ -f "$WORK/daemon-$1.log" ] || return 1
  awk '/^=== .* started$/ { s = 0 } /^=== .* exit/ { s = 0 } /Instance lock taken/ { s = 1 } END { exit !s }' "$WORK/daemon-$1.log"
}
is_standing_by() {
  awk '/^=== / { s = 0 } /Standing by/ { s = 1 } END { exit !s }' "$WORK/daemon-$1.log"
}
active_daemon() { for n in a b; do is_active "$n" && { echo "$n"; return 0; }; done; return 1; }
# wait_for SECONDS CMD…: polls CMD every 0.1 s.
wait_for() {
  local limit=$1 t0
  shift
  t0=$(now)
  until "$@" >/dev/null; do
    [ "$(echo "$(now) - $t0 > $limit" | bc -l)" = 1 ] && return 1
    sleep 0.1
  done
}
stop_daemons() {
  touch "$WORK/stop-daemons"
  for n in a b; do kill -TERM "$(cat "$WORK/daemon-$n.pid")" 2>/dev/null || true; done
  for n in a b; do
    local sup; sup=$(cat "$WORK/supervisor-$n.pid")
    for _ in $(seq 1 400); do kill -0 "$sup" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$sup" "$(cat "$WORK/daemon-$n.pid")" 2>/dev/null || true
  done
}

# -------------------------------------------------------------- the facts --

# stats URL: "W live_rows terminal events sent" of msgx's database there.
stats() {
  q "$1" "SELECT w, (SELECT count(*) FROM proc_state WHERE state <> 'ARCHIVED'),
                 (SELECT count(*) FROM proc_state WHERE state IN ('SUCCEEDED', 'SKIPPED', 'DEAD')),
                 (SELECT count(*) FROM msg_event), (SELECT count(*) FROM msg_event WHERE status = 'SENT')
          FROM inbox_cursor" | tr '|' ' '
}
# writes URL: tuples inserted, updated and deleted in msgx's tables since the
# server started (the counters start at 0 after crash recovery).
writes() {
  q "$1" "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables"
}
# first_sent_after URL T LIMIT: seconds from T to the first outbox event SENT
# after T on that server (only the new active instance writes there), or "-".
first_sent_after() {
  local t0 got
  t0=$(now)
  while true; do
    got=$(q "$1" "SELECT extract(epoch FROM min(sent_at)) FROM msg_event
                  WHERE status = 'SENT' AND sent_at > to_timestamp($2)" 2>/dev/null || true)
    if [ -n "$got" ]; then echo "$got - $2" | bc -l | xargs printf '%.2f'; return 0; fi
    [ "$(echo "$(now) - $t0 > $3" | bc -l)" = 1 ] && { echo "-"; return 1; }
    sleep 0.1
  done
}
# lock_taken_after T: prints the epoch time of the first "Instance lock
# taken" logged by either daemon after T; 1 while there is none.
lock_taken_after() {
  local t
  t=$(grep -h 'Instance lock taken' "$WORK/daemon-a.log" "$WORK/daemon-b.log" 2>/dev/null | cut -d' ' -f1 |
      while read -r ts; do date -d "$ts" +%s.%N; done | awk -v t="$1" '$1 > t' | sort -n | head -n 1)
  [ -n "$t" ] && echo "$t"
}
# old_writer URL T_KILL T_LOCK: "SENT PROCESSED" on the new primary with
# their times between the kill and the new instance's lock: written by an
# instance that no longer held the lock (nothing else can have written them).
old_writer() {
  q "$1" "SELECT (SELECT count(*) FROM msg_event WHERE sent_at > to_timestamp($2) AND sent_at < to_timestamp($3)),
                 (SELECT count(*) FROM proc_state WHERE updated_at > to_timestamp($2) AND updated_at < to_timestamp($3))" | tr '|' ' '
}
# replica_settled URL: the WAL receiver is gone and all it received is replayed.
replica_settled() {
  [ "$(q "$1" "SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming'" 2>/dev/null)" = 0 ] &&
    [ "$(q "$1" "SELECT coalesce(pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn(), true)" 2>/dev/null)" = t ]
}
streaming() { [ "$(q "$(harness_pgc_url "$P" postgres)" "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 1 ]; }
# missed_wal OLD_CLUSTER LSN: "BYTES COMMITS" the old primary's WAL holds
# beyond LSN (pg_waldump reads to the end of its valid WAL).
missed_wal() {
  local out end commits bytes
  out=$(su postgres -s /bin/sh -c "$PGBIN/pg_waldump -p '$WORK/$1/pg_wal' -s $2 2>&1" || true)
  commits=$(grep -c 'desc: COMMIT' <<<"$out" || true)
  end=$(grep -o 'invalid record length at [0-9A-F]*/[0-9A-F]*' <<<"$out" | awk '{print $5}' | tail -n 1)
  [ -n "$end" ] || end=$(grep -o 'could not find a valid record after [0-9A-F]*/[0-9A-F]*' <<<"$out" | awk '{print $8}' | tail -n 1)
  if [ -z "$end" ]; then echo "? ?"; echo "$out" | tail -n 3 >"$WORK/waldump-$1.err"; return 0; fi
  bytes=$(q "$(harness_pgc_url "$R" postgres)" "SELECT greatest(pg_wal_lsn_diff('$end', '$2'), 0)::bigint")
  echo "$bytes $commits"
}
kill_cluster() {
  local dir=$WORK/$1 pids=() p
  for p in $(pgrep -u postgres); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$dir" ] && pids+=("$p")
  done
  T_KILL=$(now)
  kill -KILL "${pids[@]}"
}
# drained_purge: `msgx dev drained` without its row-count test (the owner
# deleted rows): W at the mailbox's last ID, nothing PENDING/FAILED, no event
# PENDING, no mark due.
drained_purge() {
  local last left
  last=$(my "$MB" -e 'SELECT COALESCE(MAX(CMINMSGS_ID), 0) FROM cminmsgs')
  [ "$last" -ge "$LAST_FED" ] || last=$LAST_FED
  left=$(q "$MSGX_DATABASE_URL" "SELECT (SELECT w FROM inbox_cursor) >= $last
     AND NOT EXISTS (SELECT 1 FROM proc_state WHERE state IN ('PENDING', 'FAILED'))
     AND NOT EXISTS (SELECT 1 FROM msg_event WHERE status = 'PENDING')
     AND NOT EXISTS (SELECT 1 FROM proc_state WHERE state IN ('SUCCEEDED', 'SKIPPED', 'DEAD')
                     AND backfill_at IS NULL AND backfill_abandoned_at IS NULL)" 2>/dev/null || echo f)
  [ "$left" = t ]
}
wait_drained() {
  if [ "$PURGE" = 1 ]; then
    local t0; t0=$(now)
    wait_for "$1" drained_purge || { echo "not drained after $1 s" >&2; return 1; }
    secs_since "$t0"
  else
    harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" "$1"
  fi
}

# --------------------------------------------------- the undisturbed run --

log "== undisturbed run: $MESSAGES messages over $FLIGHTS flights (seed $SEED), inserted at once"
harness_pgc_init clean
q "$(harness_pgc_url clean postgres)" 'CREATE DATABASE msgx' >/dev/null
harness_mailbox_db 127.0.0.1 "$MY_PORT" msgx_mb_clean
export MSGX_DATABASE_URL MSGX_MAILBOX_URL
MSGX_DATABASE_URL=$(harness_pgc_url clean)
MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:$MY_PORT/msgx_mb_clean
"$MSGX" migrate >/dev/null
schedules
"$MSGX" mailbox generate "${feed_args[@]}" >/dev/null
harness_dev_kafka "$WORK/kafka-clean.log"
harness_daemon "$WORK/daemon-clean.log"
clean_s=$(harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 600)
harness_stop "$DAEMON_PID"
"$MSGX" dev snapshot --out "$WORK/clean.json" >/dev/null
harness_stop "$KAFKA_PID"
harness_pgc_ctl clean stop
log "drained in $clean_s s; snapshot taken"

# ------------------------------------------------------------ a scenario --

run_scenario() {
  local sc=$1 t_kill t_promoted t_lock="" first zombie_sent="" zombie_proc="" rto="-" takeover="-" lag rep_lsn rep_stats old_stats
  local kill_at=$(( SECONDS_FEED * 2 / 5 )) res="" purged=0 drained_s rc
  P=${sc//-/_}_1; R=${sc//-/_}_2; MB=msgx_mb_${sc//-/_}
  lag=${LAG:-0}
  [ "$sc" = split-brain ] && lag=${LAG:-5}
  [ "$PURGE" = 1 ] && lag=${LAG:-15}
  case $sc in switchover|standby) lag=0 ;; esac
  [ "$kill_at" -ge $(( lag + 8 )) ] || kill_at=$(( lag + 8 ))
  SUMMARY+=("")
  say "== $sc$([ "$PURGE" = 1 ] && echo ', purging owner')$([ "$lag" != 0 ] && echo ", replica cut off $lag s before the kill")"
  rm -f "$WORK/stop-daemons" "$WORK/daemon-a.log" "$WORK/daemon-b.log" "$WORK/daemon-exits"

  harness_pgc_init "$P"
  q "$(harness_pgc_url "$P" postgres)" 'CREATE DATABASE msgx' >/dev/null
  harness_mailbox_db 127.0.0.1 "$MY_PORT" "$MB"
  MSGX_DATABASE_URL=$(harness_pgc_url "$P")
  MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:$MY_PORT/$MB
  "$MSGX" migrate >/dev/null
  harness_pgc_replica "$P" "$R"
  wait_for 30 streaming || { fail "$sc: the replica does not stream"; return 0; }
  DAEMON_URL="postgres://msgx:msgx@127.0.0.1:$(harness_pgc_port "$P"),127.0.0.1:$(harness_pgc_port "$R")/msgx?target_session_attrs=read-write"
  log "primary :$(harness_pgc_port "$P"), replica :$(harness_pgc_port "$R") (streaming, asynchronous); daemons on $DAEMON_URL"
  harness_dev_kafka "$WORK/kafka-$sc.log"
  schedules
  supervise a
  if ! wait_for 60 is_active a; then
    fail "$sc: daemon a did not become active within 60 s: $(grep -v '^===' "$WORK/daemon-a.log" | tail -n 3 | cut -c1-300)"
    stop_daemons; harness_stop "$KAFKA_PID"; return 0
  fi
  supervise b
  wait_for 60 is_standing_by b || log "daemon b is not standing by: $(tail -n 2 "$WORK/daemon-b.log")"

  if [ "$PURGE" = 1 ]; then
    ( while true; do
        # The owner's own bookkeeping (its database, not msgx's tables): when
        # it first saw each mark; rows marked PURGE_AFTER seconds ago go.
        n=$(my "$MB" -e "CREATE TABLE IF NOT EXISTS owner_seen_marked (id BIGINT PRIMARY KEY, seen DATETIME(6) NOT NULL);
          INSERT IGNORE INTO owner_seen_marked SELECT CMINMSGS_ID, NOW(6) FROM cminmsgs WHERE CMINMSGS_DATE_PROCESSED IS NOT NULL;
          DELETE c FROM cminmsgs c JOIN owner_seen_marked o ON o.id = c.CMINMSGS_ID WHERE o.seen <= NOW(6) - INTERVAL $PURGE_AFTER SECOND;
          SELECT ROW_COUNT()" 2>/dev/null || echo 0)
        echo "$n" >>"$WORK/purge-$sc.log"
        sleep 1
      done ) &
    PURGER=$!
    harness_track "$PURGER"
  fi
  "$MSGX" mailbox generate "${feed_args[@]}" --rate "$RATE" >"$WORK/feed-$sc.log" 2>"$WORK/feed-$sc.err" &
  local feed=$!
  harness_track "$feed"
  log "feed: $MESSAGES messages at $RATE/s; the disturbance after $kill_at s"
  if [ "$lag" != 0 ]; then
    sleep $(( kill_at - lag ))
    q "$(harness_pgc_url "$R" postgres)" "ALTER SYSTEM SET primary_conninfo = ''" >/dev/null
    q "$(harness_pgc_url "$R" postgres)" "SELECT pg_reload_conf()" >/dev/null
    log "replica's WAL receiver cut off"
    sleep "$lag"
  else
    sleep "$kill_at"
  fi

  case $sc in
    unplanned|split-brain|switchover)
      local rurl; rurl=$(harness_pgc_url "$R")
      t_kill=$(now)
      if [ "$sc" = switchover ]; then
        harness_pgc_ctl "$P" stop fast
        log "primary stopped -m fast after $(secs_since "$t_kill") s"
      else
        kill_cluster "$P"
        t_kill=$T_KILL
        log "primary killed (kill -9 of its postmaster and every process of its cluster)"
      fi
      wait_for 30 replica_settled "$rurl" || log "replica not settled after 30 s"
      rep_lsn=$(q "$rurl" "SELECT pg_last_wal_replay_lsn()")
      rep_stats=$(stats "$rurl")
      q "$rurl" "SELECT event_id FROM msg_event WHERE status = 'SENT' ORDER BY 1" >"$WORK/$sc-replica-sent.txt"
      harness_pgc_ctl "$R" promote
      t_promoted=$(now)
      log "replica promoted $(secs_since "$t_kill") s after the kill (replayed to $rep_lsn)"
      MSGX_DATABASE_URL=$rurl
      if wait_for 180 lock_taken_after "$t_kill"; then
        t_lock=$(lock_taken_after "$t_kill")
        first=$(first_sent_after "$rurl" "$t_lock" 180) || true
        [ "$first" != - ] && rto=$(echo "$t_lock + $first - $t_kill" | bc -l | xargs printf '%.2f')
        read -r zombie_sent zombie_proc <<<"$(old_writer "$rurl" "$t_kill" "$t_lock")"
      fi
      log "instance lock taken on the new primary $(echo "${t_lock:-0} - $t_kill" | bc -l | xargs printf '%.2f') s after the kill; first event delivered by it $rto s after the kill"
      read -r wal_bytes wal_commits <<<"$(missed_wal "$P" "$rep_lsn")"
      ;;
    standby)
      local victim purl; purl=$(harness_pgc_url "$P")
      if ! victim=$(active_daemon); then
        fail "standby: no active daemon before the kill"; stop_daemons; harness_stop "$KAFKA_PID"; return 0
      fi
      t_kill=$(now)
      kill -KILL "$(cat "$WORK/daemon-$victim.pid")"
      local other=a; [ "$victim" = a ] && other=b
      if wait_for 60 is_active "$other"; then takeover=$(secs_since "$t_kill"); fi
      rto=$(first_sent_after "$purl" "$t_kill" 120) || true
      log "daemon $victim killed; $other took the lock after $takeover s, first event delivered after $rto s"
      ;;
  esac

  local sb_before="" sb_writes0="" sb_mid="" sb_writes_mid="" sb_sessions=0
  if [ "$sc" = split-brain ]; then
    sleep 5
    harness_pgc_ctl "$P" start
    sb_before=$(stats "$(harness_pgc_url "$P")")
    sb_writes0=$(writes "$(harness_pgc_url "$P")")
    log "old primary restarted as a primary (listed first in msgx's URL): W, rows, terminal, events, SENT = $sb_before"
    # Phase A: the daemons keep running (their pools and the lock session
    # are on the new primary). Phase B: kill the active one, so that a new
    # process resolves the host list afresh, the old primary listed first.
    sleep 10
    sb_mid=$(stats "$(harness_pgc_url "$P")")
    sb_writes_mid=$(writes "$(harness_pgc_url "$P")")
    local victim2; victim2=$(active_daemon || echo none)
    [ "$victim2" != none ] && kill -KILL "$(cat "$WORK/daemon-$victim2.pid")"
    log "phase A over (old primary: $sb_mid, $sb_writes_mid tuple writes); active daemon ($victim2) killed: both daemons connect afresh"
    for _ in $(seq 1 20); do
      local s; s=$(q "$(harness_pgc_url "$P" postgres)" "SELECT count(*) FROM pg_stat_activity WHERE usename = 'msgx' AND pid <> pg_backend_pid()")
      [ "$s" -gt "$sb_sessions" ] && sb_sessions=$s
      sleep 1
    done
    # Drain where the instance lock is now (the old primary, if msgx took it there).
    if [ "$(q "$(harness_pgc_url "$P")" "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")" != 0 ]; then
      MSGX_DATABASE_URL=$(harness_pgc_url "$P")
      log "the instance lock is on the OLD primary: msgx went back to it"
    fi
  fi

  wait "$feed" || true
  LAST_FED=$(awk '{print $NF}' "$WORK/feed-$sc.log" | sort -n | tail -n 1)
  LAST_FED=${LAST_FED:-0}
  log "feed done ($(grep -c . "$WORK/feed-$sc.log") inserts)"
  if drained_s=$(wait_drained 300); then
    log "drained $drained_s s after the feed ended"
  else
    fail "$sc: not drained 300 s after the feed: $(cat "$WORK/drained.out" 2>/dev/null)"
  fi
  [ "$PURGE" = 1 ] && { kill "$PURGER" 2>/dev/null || true; purged=$(awk '{s += $1} END {print s + 0}' "$WORK/purge-$sc.log"); }
  stop_daemons
  if ! "$MSGX" dev snapshot --out "$WORK/$sc.json" >/dev/null; then fail "$sc: no snapshot"; fi
  harness_stop "$KAFKA_PID"

  # ---- the report
  local exits; exits=$(grep -c 'exit' "$WORK/daemon-exits" 2>/dev/null || true)
  case $sc in
    unplanned|split-brain|switchover)
      # The old primary's own state at the kill (crash recovery replays all it flushed).
      if [ "$sc" != split-brain ]; then
        harness_pgc_ctl "$P" start
        old_stats=$(stats "$(harness_pgc_url "$P")")
        q "$(harness_pgc_url "$P")" "SELECT event_id FROM msg_event WHERE status = 'SENT' ORDER BY 1" >"$WORK/$sc-old-sent.txt"
        harness_pgc_ctl "$P" stop fast
      else
        old_stats=$sb_before
      fi
      read -r ow _ ot _ os <<<"$old_stats"
      read -r rw _ rt _ rs <<<"$rep_stats"
      say "  RPO on PostgreSQL  the replica missed ${wal_bytes:-?} bytes of WAL, ${wal_commits:-?} commits (pg_waldump of the old primary from replay LSN $rep_lsn)"
      log "W, rows, terminal, events, SENT: old primary $old_stats, replica at promotion $rep_stats"
      say "  rebuilt from mailbox  W $ow -> $rw ($(( ow - rw )) mailbox IDs ingested again), $(( ot - rt )) terminal outcomes and $(( os - rs )) SENT events lost and redone"
      if [ -n "$zombie_sent$zombie_proc" ] && [ "$zombie_sent $zombie_proc" != "0 0" ]; then
        fail "$sc: between the kill and the new instance's lock, $zombie_sent events were marked SENT and $zombie_proc messages processed on the new primary by an instance without the lock"
      fi
      if [ "$rto" = - ]; then fail "$sc: no event delivered after the kill"
      else
        say "  RTO                kill -> first event delivered by the new active instance: $rto s (goal <= $RTO_GOAL s); promoted after $(echo "$t_promoted - $t_kill" | bc -l | xargs printf '%.1f') s"
        [ "$(echo "$rto > $RTO_GOAL" | bc -l)" = 1 ] && fail "$sc: RTO $rto s over the goal of $RTO_GOAL s"
      fi
      ;;
    standby)
      say "  takeover           kill -9 of the active daemon -> standby holds the lock: $takeover s (goal <= $TAKEOVER_GOAL s); first event delivered: $rto s"
      if [ "$takeover" = - ] || [ "$rto" = - ]; then fail "standby: no takeover"
      elif [ "$(echo "$rto > $TAKEOVER_GOAL" | bc -l)" = 1 ]; then fail "standby: takeover to first delivery $rto s over the goal of $TAKEOVER_GOAL s"; fi
      ;;
  esac
  say "  daemons            $exits exits restarted by the supervisors; $(grep -c 'Instance lock taken' "$WORK/daemon-a.log" "$WORK/daemon-b.log" | awk -F: '{s += $2} END {print s}') lock takes"

  if [ "$sc" = split-brain ]; then
    local sb_after sb_writes1
    sb_after=$(stats "$(harness_pgc_url "$P")")
    sb_writes1=$(writes "$(harness_pgc_url "$P")")
    harness_pgc_ctl "$P" stop fast
    if [ "$sb_mid" = "$sb_before" ] && [ "$sb_writes_mid" = "$sb_writes0" ]; then
      say "  split-brain A      daemons running: old primary unchanged 10 s after its restart (W, rows, terminal, events, SENT = $sb_mid; $sb_writes_mid tuple writes since it started)"
    else
      fail "split-brain A (daemons running): msgx wrote to the old primary: $sb_before -> $sb_mid, tuple writes $sb_writes0 -> $sb_writes_mid"
    fi
    if [ "$sb_after" = "$sb_mid" ] && [ "$sb_writes1" = "$sb_writes_mid" ]; then
      say "  split-brain B      active daemon killed, both connect afresh: old primary unchanged to the end ($sb_after; $sb_writes1 tuple writes); at most $sb_sessions msgx sessions seen on it"
    else
      fail "split-brain B (daemons connecting afresh, old primary first in the URL): msgx wrote to the old primary: $sb_mid -> $sb_after, tuple writes $sb_writes_mid -> $sb_writes1; at most $sb_sessions msgx sessions on it"
    fi
  fi

  set +e
  "$MSGX" dev compare-runs "$WORK/clean.json" "$WORK/$sc.json" >"$WORK/compare-$sc.out"
  rc=$?
  set -e
  res=$(sed -n 's/^compare: //p' "$WORK/compare-$sc.out")
  field() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], '?'))" "$res" "$1"; }
  if [ "$PURGE" = 1 ]; then
    local ids; ids=$(q "$MSGX_DATABASE_URL" "SELECT string_agg(msg_id::text, ',') FROM proc_state
                      WHERE state = 'DEAD' AND error_class = 'MALFORMED' AND (last_error LIKE '%raw-missing%' OR outcome_reason LIKE '%raw-missing%')")
    local holes; holes=$(q "$MSGX_DATABASE_URL" "SELECT string_agg(first_id || '-' || last_id, ',') FROM inbox_hole")
    set +e
    "$MSGX" dev purge-report "$WORK/clean.json" "$WORK/$sc.json" \
      --raw-missing "${ids:-}" --holes "${holes:-}" >"$WORK/purge-report-$sc.out"
    rc=$?
    set -e
    say "  purging owner      $purged rows purged after their mark; $(sed -n 's/^purge: //p' "$WORK/purge-report-$sc.out")"
    grep '^DIFF' "$WORK/purge-report-$sc.out" | head -n 10 | sed 's/^/    /' || true
    [ "$rc" = 0 ] || fail "$sc: differences not explained by the purge (above)"
  else
    # compare-runs fails a version going back; after a rollback the new
    # primary re-sends what the old one had delivered, in order, so the
    # verdict is compare-runs --after-rollback's (the same checks, a version
    # going back allowed only as a re-send of one already on the topic with
    # the same content).
    set +e
    "$MSGX" dev compare-runs --after-rollback "$WORK/clean.json" "$WORK/$sc.json" >"$WORK/fcompare-$sc.out"
    rc=$?
    set -e
    fres=$(sed -n 's/^compare: //p' "$WORK/fcompare-$sc.out")
    ffield() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], '?'))" "$fres" "$1"; }
    say "  compare            $(ffield differences) differences; msg events $(ffield msg_events) distinct, records clean $(ffield msg_records_clean) / run $(ffield msg_records_chaos), duplicates $(ffield duplicates_chaos) (re-sends of one version, same content; $(ffield rollback_resends) of them after a later version: rollback re-sends); outcomes $(ffield outcomes); compare-runs without --after-rollback: $(field differences) differences"
    if [ "$rc" != 0 ]; then
      grep '^DIFF' "$WORK/fcompare-$sc.out" | head -n 10 | sed 's/^/    /'
      fail "$sc: the run differs from the undisturbed one"
    fi
  fi
  for c in "$P" "$R"; do harness_pgc_ctl "$c" stop immediate 2>/dev/null || true; done
  cp "$WORK/daemon-a.log" "$WORK/daemon-$sc-a.log"; cp "$WORK/daemon-b.log" "$WORK/daemon-$sc-b.log"
  [ "${KEEP_WORK:-0}" = 1 ] || rm -rf "${WORK:?}/$P" "${WORK:?}/$R"
}

for sc in "${SCENARIOS[@]}"; do run_scenario "$sc"; done

echo
echo "== PostgreSQL failover summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load$(uptime | sed 's/.*load average//'), $(basename "$MSGX"))"
printf '  input            %s SCHD packages, then %s messages at %s/s over %s flights (seed %s); undisturbed run drained in %s s\n' \
  $(( (FLIGHTS + 99) / 100 )) "$MESSAGES" "$RATE" "$FLIGHTS" "$SEED" "$clean_s"
for line in "${SUMMARY[@]}"; do echo "$line"; done
printf '  wall time        %s s\n' "$(( $(date +%s) - started ))"
if [ "$FAILED" = 0 ]; then echo "RESULT: PASS"; else echo "RESULT: FAIL"; fi
exit "$FAILED"
