#!/usr/bin/env bash
# Screenshots of every operator-console page for docs/console.md (issue 21,
# item 4), regenerated from a real drain: services, build, a scratch
# database filled by `msgx daemon` draining a generated day (as chaos.sh
# prepares it: SCHD packages, FLOPs, duplicates, malformed messages, holes),
# one upstream request, then `msgx console` with a generated users file,
# logged into through headless Chromium (examples/console_screenshots.rs,
# the browser tests' harness), one PNG per page of $PAGES in $OUT. One job
# is paused (with its reason) first, so the Jobs and Audit pages show a pause.
#
#   scripts/console-screenshots.sh [--messages N] [--out DIR] [--release]
#
# Skips (exit 0, with a message) when this msgx has no `console` command.
# Own databases (unique names, dropped at exit) and processes (stopped by
# PID at exit; harness-lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# The pages, NAME=PATH: NAME.png in $OUT. <id> is a message (a DEAD one when
# there is one), <flid> the most recently changed flight (flight-history: the
# same page scrolled to its versions). The login page is shot logged out;
# every other page after logging in as an admin (every form shown). A live
# page (the Overview, a message) is shot once its live view is connected.
PAGES=(
  login=/login
  overview=/
  messages=/messages
  message=/messages/'<id>'
  flights=/flights
  flight=/flights/'<flid>'
  flight-history=/flights/'<flid>'#flight-history
  outbox=/events/dead
  backfill=/backfill/abandoned
  holes=/holes
  requests=/requests
  jobs=/jobs
  audit=/audit
)
# The login form's input ids (docs/console.md lists the console's ids).
USER_FIELD=login-user
PASSWORD_FIELD=login-password

MESSAGES=2000; OUT=docs/console; BUILD=--debug
while [ $# -gt 0 ]; do
  case $1 in
    --messages) MESSAGES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --release) BUILD=""; shift ;;
    *) echo "usage: $0 [--messages N] [--out DIR] [--release]"; exit 2 ;;
  esac
done

# shellcheck source=scripts/harness-lib.sh
. scripts/harness-lib.sh
bash scripts/services.sh
harness_init shots
trap harness_cleanup EXIT
trap 'exit 143' INT TERM # so that the EXIT trap cleans up
harness_build $BUILD
if ! "$MSGX" console --help >/dev/null 2>&1; then
  echo "skipping: $(basename "$MSGX") has no 'console' command yet (issue 21 items 1-3)"
  exit 0
fi
cargo build --locked --quiet --example console_screenshots
SHOOT=$PWD/target/debug/examples/console_screenshots

echo "== a drained day: $MESSAGES messages"
PG=postgres://msgx:msgx@127.0.0.1:5432
harness_pg_db "$PG/postgres" "$TAG"
harness_mailbox_db 127.0.0.1 3306 "$TAG"
export MSGX_DATABASE_URL=$PG/$TAG MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/$TAG
CONSOLE_PORT=$(harness_free_port)
# The harness config with a console section of our own (any [msgx.console]
# of the example config is dropped first, so the table is not defined twice).
harness_config -e '/^\[msgx\.console\]/,/^\[/{/^\[msgx\.console\]/d;/^\[/!d}'
cat >>"$MSGX_CONFIG" <<TOML

[msgx.console]
listen = "127.0.0.1:$CONSOLE_PORT"
users-file = "$WORK/users.toml"
TOML
"$MSGX" migrate >/dev/null
# The users file before the drain: the daemon serves the console too (the
# config has its [msgx.console]) and refuses to start without the file.
SHOT_USER=screenshots
MSGX_SHOT_PASSWORD=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
export MSGX_SHOT_PASSWORD
hash=$(printf '%s' "$MSGX_SHOT_PASSWORD" | "$MSGX" console hash-password)
cat >"$WORK/users.toml" <<TOML
[[user]]
name = "$SHOT_USER"
role = "admin"
password-hash = '$hash'
TOML
chmod 600 "$WORK/users.toml"   # a users file others may read is refused
"$MSGX" mailbox generate --messages "$MESSAGES" --flights "$(harness_default_flights "$MESSAGES")" \
  --seed 21 --duplicates 0.02 --malformed 0.005 --holes $(( MESSAGES / 2000 + 1 )) >/dev/null
harness_dev_kafka "$WORK/kafka.log"
harness_daemon "$WORK/daemon.log"
echo "drained in $(harness_wait_drained "$MSGX_DATABASE_URL" "$MSGX_MAILBOX_URL" 600) s"
"$MSGX" request ref GLST >/dev/null
harness_stop "$DAEMON_PID"
harness_stop "$KAFKA_PID"
# A job under the operator's hand (Jobs page, Audit page).
"$MSGX" jobs pause flight-history-clean --actor "$SHOT_USER" \
  --reason "incident 42: the history disk is being replaced" >/dev/null

MSG_ID=$(psql "$MSGX_DATABASE_URL" -qtAX -c \
  "SELECT msg_id FROM proc_state ORDER BY (state = 'DEAD') DESC, msg_id DESC LIMIT 1")
FLID=$(psql "$MSGX_DATABASE_URL" -qtAX -c \
  "SELECT flid FROM flight_schd ORDER BY last_msg_id DESC NULLS LAST LIMIT 1")
echo "message $MSG_ID, flight $FLID"

echo "== msgx console on 127.0.0.1:$CONSOLE_PORT"
"$MSGX" console >"$WORK/console.log" 2>&1 &
harness_track $!
base=http://127.0.0.1:$CONSOLE_PORT
for _ in $(seq 1 300); do curl -fsS -o /dev/null "$base/login" 2>/dev/null && break; sleep 0.1; done
curl -fsS -o /dev/null "$base/login" || { echo "msgx console did not come up:"; cat "$WORK/console.log"; exit 1; }

echo "== screenshots into $OUT"
pages=()
for p in "${PAGES[@]}"; do
  p=${p//<id>/$MSG_ID}
  pages+=("${p//<flid>/$FLID}")
done
"$SHOOT" --base "$base" --user "$SHOT_USER" --out "$OUT" \
  --user-field "$USER_FIELD" --password-field "$PASSWORD_FIELD" "${pages[@]}"
