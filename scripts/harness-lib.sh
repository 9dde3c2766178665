# shellcheck shell=bash
# Shared pieces of the resilience harnesses (chaos.sh, soak.sh,
# bench-latency.sh; docs/RESILIENCE.md). Sourced, not run.
#
# Every harness keeps its files in $WORK (a temp dir), records the processes
# it starts in $WORK/pids and the databases it creates in $WORK/dbs, and calls
# harness_cleanup from its EXIT trap: it stops exactly those processes (by
# PID) and drops exactly those databases.

HARNESS_PY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/harness.py"

# harness_init NAME: $WORK, $TAG (unique per run: name, pid, time).
# harness_default_flights MESSAGES: one flight per ten messages (100 to
# 2,000), so every flight sees several FLOPs.
harness_default_flights() {
  echo $(( $1 / 10 < 2000 ? ($1 / 10 > 100 ? $1 / 10 : 100) : 2000 ))
}

harness_init() {
  TAG="msgx_$1_$$_$(date +%s)"
  WORK=$(mktemp -d "/tmp/$TAG.XXXX")
  chmod 1777 "$WORK" # private database servers (postgres, mysql users) write here too
  : >"$WORK/pids"
  : >"$WORK/dbs"
  : >"$WORK/on-exit"
}

# harness_free_port: an unused TCP port on 127.0.0.1.
harness_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Private PostgreSQL 15 (the soak stops and restarts it; never the system
# service): initdb into $WORK/pg as the postgres user, trust auth, a msgx
# superuser. Sets $PG_PORT; pg_ctl_private start|stop|restart.
PGBIN=/usr/lib/postgresql/15/bin
pg_ctl_private() {
  local extra=()
  [ "$1" = stop ] || [ "$1" = restart ] && extra=(-m fast)
  su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$WORK/pg' -l '$WORK/pg.log' -w ${extra[*]} \
    -o '-p $PG_PORT -k $WORK -c listen_addresses=127.0.0.1 -c max_connections=100' $1" >/dev/null
}
harness_private_pg() {
  PG_PORT=$(harness_free_port)
  mkdir -m 700 "$WORK/pg" && chown postgres:postgres "$WORK/pg"
  su postgres -s /bin/sh -c "$PGBIN/initdb -D '$WORK/pg' --auth=trust -U postgres -E UTF8" >/dev/null
  echo "su postgres -s /bin/sh -c \"$PGBIN/pg_ctl -D '$WORK/pg' -m immediate stop\" >/dev/null 2>&1" >>"$WORK/on-exit"
  pg_ctl_private start
  psql "postgres://postgres@127.0.0.1:$PG_PORT/postgres" -qX -c "CREATE ROLE msgx LOGIN SUPERUSER PASSWORD 'msgx'" >/dev/null
}

# Private PostgreSQL clusters by name (scripts/failover.sh: a primary and its
# streaming replica): $WORK/NAME is the data directory, $WORK/NAME.port its
# port, $WORK/NAME.log its server log; run as the postgres user, trust auth,
# loopback only. harness_pgc_init NAME: initdb, replication settings
# (wal_level=replica, hot_standby=on, a replication entry with trust on
# 127.0.0.1), start, a msgx superuser. harness_pgc_replica PRIMARY NAME:
# `pg_basebackup -R -X stream` from PRIMARY (asynchronous streaming
# replication: no synchronous_standby_names), started as a hot standby.
# harness_pgc_ctl NAME start | stop [fast|immediate] | promote (start after a
# kill -9: see there).
# harness_pgc_url NAME [DB]: a single-host URL of it for the harness's own
# commands (default database msgx).
harness_pgc_port() { cat "$WORK/$1.port"; }
harness_pgc_url() { echo "postgres://msgx:msgx@127.0.0.1:$(harness_pgc_port "$1")/${2:-msgx}"; }
harness_pgc_ctl() {
  local name=$1 action=$2 mode=${3:-fast} port
  port=$(harness_pgc_port "$name")
  case $action in
    start)
      # After a kill -9 the postmaster may linger as a zombie nobody reaps
      # (the container's init), and PostgreSQL then refuses its data
      # directory: a crashed host would not have that process, so its stale
      # postmaster.pid goes.
      local old
      old=$(head -n 1 "$WORK/$name/postmaster.pid" 2>/dev/null || true)
      if [ -n "$old" ]; then
        case $(ps -o stat= -p "$old" 2>/dev/null || true) in ''|Z*) rm -f "$WORK/$name/postmaster.pid" ;; esac
      fi
      su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$WORK/$name' -l '$WORK/$name.log' -w -t 120 \
             -o '-p $port -k $WORK -c listen_addresses=127.0.0.1 -c max_connections=100' start" >/dev/null ;;
    stop) su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$WORK/$name' -w -t 120 -m $mode stop" >/dev/null ;;
    promote) su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$WORK/$name' -w -t 120 promote" >/dev/null ;;
    *) echo "harness_pgc_ctl: unknown action $action" >&2; return 2 ;;
  esac
}
harness_pgc_settings() {
  cat >>"$WORK/$1/postgresql.conf" <<CONF
# harness (scripts/harness-lib.sh): streaming replication, asynchronous
wal_level = replica
hot_standby = on
max_wal_senders = 10
wal_keep_size = '512MB'
CONF
  echo 'host replication all 127.0.0.1/32 trust' >>"$WORK/$1/pg_hba.conf"
}
harness_pgc_init() {
  local name=$1
  harness_free_port >"$WORK/$name.port"
  mkdir -m 700 "$WORK/$name" && chown postgres:postgres "$WORK/$name"
  su postgres -s /bin/sh -c "$PGBIN/initdb -D '$WORK/$name' --auth=trust -U postgres -E UTF8" >/dev/null
  harness_pgc_settings "$name"
  echo "su postgres -s /bin/sh -c \"$PGBIN/pg_ctl -D '$WORK/$name' -m immediate stop\" >/dev/null 2>&1" >>"$WORK/on-exit"
  harness_pgc_ctl "$name" start
  psql "$(harness_pgc_url "$name" postgres | sed 's/msgx:msgx@/postgres@/')" -qX \
    -c "CREATE ROLE msgx LOGIN SUPERUSER PASSWORD 'msgx'" >/dev/null
}
harness_pgc_replica() {
  local primary=$1 name=$2
  harness_free_port >"$WORK/$name.port"
  su postgres -s /bin/sh -c "$PGBIN/pg_basebackup -h 127.0.0.1 -p $(harness_pgc_port "$primary") -U postgres \
    -D '$WORK/$name' -R -X stream -c fast" >/dev/null
  chmod 700 "$WORK/$name"
  echo "su postgres -s /bin/sh -c \"$PGBIN/pg_ctl -D '$WORK/$name' -m immediate stop\" >/dev/null 2>&1" >>"$WORK/on-exit"
  harness_pgc_ctl "$name" start
}

# Private MariaDB (own --datadir, --socket, --port) run as mysql. Sets
# $MY_PORT and $MY_PID; mariadb_private_start / mariadb_private_stop.
mariadb_private_start() {
  /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$WORK/my" --socket="$WORK/my.sock" \
    --port="$MY_PORT" --bind-address=127.0.0.1 --pid-file="$WORK/my.pid" \
    --innodb-buffer-pool-size=64M --log-error="$WORK/my.err" 2>>"$WORK/my.err" &
  MY_PID=$!
  harness_track "$MY_PID"
  for _ in $(seq 1 300); do
    mariadb-admin --no-defaults -S "$WORK/my.sock" -uroot ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "private MariaDB did not start:"; tail -20 "$WORK/my.err"; return 1
}
mariadb_private_stop() {
  kill -TERM "$MY_PID" 2>/dev/null || true
  wait "$MY_PID" 2>/dev/null || true
}
harness_private_mariadb() {
  MY_PORT=$(harness_free_port)
  mkdir -p "$WORK/my" && chown mysql:mysql "$WORK/my"
  mariadb-install-db --no-defaults --user=mysql --datadir="$WORK/my" --skip-test-db \
    --auth-root-authentication-method=socket >"$WORK/my-install.log" 2>&1
  mariadb_private_start
  mariadb --no-defaults -S "$WORK/my.sock" -uroot -e \
    "CREATE USER 'msgx'@'127.0.0.1' IDENTIFIED BY 'msgx'; GRANT ALL ON *.* TO 'msgx'@'127.0.0.1'"
}

# harness_build [--debug]: $MSGX = the binary to use ($MSGX_BIN, when set,
# is used as it is, without building).
harness_build() {
  if [ -n "${MSGX_BIN:-}" ]; then
    MSGX=$(realpath "$MSGX_BIN")
  elif [ "${1:-}" = --debug ]; then
    cargo build --locked --quiet --bin msgx
    MSGX=$PWD/target/debug/msgx
  else
    cargo build --release --locked --quiet --bin msgx
    MSGX=$PWD/target/release/msgx
  fi
}

# harness_config: a config file for harness runs, $MSGX_CONFIG. The documented
# defaults except: retry tiers of 1 s (every `backoff` line of
# [msgx.pipeline.retry.*] and `retry-backoff` of [msgx.dispatch]: a failed head
# or outbox row is retried in seconds; set HARNESS_RETRY=defaults to keep the
# documented schedules), max-commit-delay 2 s (a rolled-back insert stalls
# ingest 2 s, not 30 s), and logs under $WORK. Extra `sed` expressions may be
# passed; limit one for `retry-backoff` to its section (`/^\[msgx.dispatch\]/,/^\[/`).
harness_config() {
  MSGX_CONFIG=$WORK/msgx.toml
  local retry='s/^backoff = \[[^]]*\]/backoff = ["1s", "1s"]/'
  local dispatch='/^\[msgx.dispatch\]/,/^\[/s/^retry-backoff = .*/retry-backoff = ["1s", "1s", "1s", "1s", "1s", "1s", "1s", "1s", "1s"]/'
  if [ "${HARNESS_RETRY:-fast}" = defaults ]; then retry='s/^$//'; dispatch='s/^$//'; fi
  sed -e "$retry" -e "$dispatch" \
      -e 's/^max-commit-delay = [^#]*/max-commit-delay = "2s"         /' \
      -e "s|^dir = \"var/log\"|dir = \"$WORK/log\"|" \
      "$@" config/msgx.toml >"$MSGX_CONFIG"
  export MSGX_CONFIG
}

# harness_pg_db ADMIN_URL NAME / harness_mailbox_db HOST PORT NAME: fresh databases.
harness_pg_db() {
  PGOPTIONS='--client-min-messages=warning' psql "$1" -qX -v ON_ERROR_STOP=1 \
    -c "DROP DATABASE IF EXISTS $2 WITH (FORCE)" -c "CREATE DATABASE $2" >/dev/null
  echo "pg $1 $2" >>"$WORK/dbs"
}
harness_mailbox_db() {
  mariadb -h "$1" -P "$2" -umsgx -pmsgx -e \
    "DROP DATABASE IF EXISTS $3; CREATE DATABASE $3 CHARACTER SET utf8mb4"
  mariadb -h "$1" -P "$2" -umsgx -pmsgx "$3" <migrations/mailbox/0001_mailbox.sql
  echo "mariadb $1 $2 $3" >>"$WORK/dbs"
}

# harness_track PID: stopped by harness_cleanup.
harness_track() { echo "$1" >>"$WORK/pids"; }

# harness_dev_kafka LOG: starts `msgx dev-kafka`, exports MSGX_KAFKA_BROKERS,
# sets $KAFKA_PID. 16 partitions: librdkafka's mock cluster keeps at most
# 5 MB per partition and drops the oldest records beyond that (it does not
# compact), and a 20,000-message drain writes well over 15 MB of schd states.
harness_dev_kafka() {
  "$MSGX" dev-kafka --brokers 3 --partitions 16 >"$1" 2>&1 &
  KAFKA_PID=$!
  harness_track "$KAFKA_PID"
  for _ in $(seq 1 100); do grep -q '^bootstrap=' "$1" && break; sleep 0.1; done
  MSGX_KAFKA_BROKERS=$(sed -n 's/^bootstrap=//p' "$1" | head -n 1)
  [ -n "$MSGX_KAFKA_BROKERS" ] || { echo "dev-kafka did not start:"; cat "$1"; return 1; }
  export MSGX_KAFKA_BROKERS
}

# harness_daemon LOG [ARGS…]: starts `msgx daemon --standby` (a restart waits
# for the killed instance's lock session to end), sets $DAEMON_PID.
harness_daemon() {
  local log=$1
  shift
  "$MSGX" daemon --standby "$@" >>"$log" 2>&1 &
  DAEMON_PID=$!
  harness_track "$DAEMON_PID"
}

# harness_stop PID: SIGTERM, then SIGKILL after 35 s (the daemon's shutdown
# timeout is 30 s).
harness_stop() {
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 350); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# harness_drained PG_URL MAILBOX_URL: `msgx dev drained` on those databases
# (exit 0 when drained, else 1 and one line saying what is left).
harness_drained() {
  MSGX_DATABASE_URL=$1 MSGX_MAILBOX_URL=$2 "$MSGX" dev drained
}

# harness_wait_drained PG_URL MAILBOX_URL TIMEOUT_S: waits until
# harness_drained says so; prints the seconds it took; 1 on timeout.
harness_wait_drained() {
  local t0 now
  t0=$(date +%s.%N)
  while true; do
    if harness_drained "$1" "$2" >"$WORK/drained.out" 2>&1; then
      now=$(date +%s.%N)
      echo "$now - $t0" | bc -l | xargs printf '%.1f\n'
      return 0
    fi
    now=$(date +%s.%N)
    if [ "$(echo "$now - $t0 > $3" | bc -l)" = 1 ]; then
      echo "not drained after $3 s: $(cat "$WORK/drained.out")" >&2
      return 1
    fi
    sleep 1
  done
}

harness_cleanup() {
  local pid kind a b c
  trap '' INT TERM # a second signal (e.g. from `timeout`) must not cut the cleanup short
  [ -n "${WORK:-}" ] && [ -d "$WORK" ] || return 0
  # shellcheck disable=SC1091
  . "$WORK/on-exit" || true
  # TERM first (harness.py stops its own `msgx tail`), KILL what is left.
  while read -r pid; do
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; fi
  done <"$WORK/pids"
  sleep 0.5
  while read -r pid; do
    if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
  done <"$WORK/pids"
  while read -r pid; do
    if [ -n "$pid" ]; then wait "$pid" 2>/dev/null || true; fi
  done <"$WORK/pids"
  while read -r kind a b c; do
    case $kind in
      pg) PGOPTIONS='--client-min-messages=warning' psql "$a" -qX \
            -c "DROP DATABASE IF EXISTS $b WITH (FORCE)" >/dev/null 2>&1 || true ;;
      mariadb) mariadb -h "$a" -P "$b" -umsgx -pmsgx -e "DROP DATABASE IF EXISTS $c" 2>/dev/null || true ;;
    esac
  done <"$WORK/dbs"
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
