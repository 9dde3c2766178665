#!/usr/bin/env bash
# Installs msgx's Debian package on this machine and checks it, then purges
# it: files, modes, user, conffile; `msgx migrate`, `msgx doctor`, one
# ingest-sweep and pump-drain as user msgx against private databases on the
# local PostgreSQL and MariaDB, with a mock Kafka (`msgx dev-kafka`); the
# installed units verify; installing the same package again changes nothing;
# an upgrade to a higher version keeps the edited conffile; `dpkg --purge`
# removes all it created but the logs. Needs root and no network. Refuses to
# run where msgx is installed or its user exists, and leaves the system as it
# found it (the test's own logs and databases are removed at the end).
#
# Usage: scripts/package-test.sh [DEB]   (default: the newest target/debian/msgx_*.deb)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[package-test] %s\n' "$*"; }
fail() {
  printf '[package-test] FAIL: %s\n' "$*" >&2
  exit 1
}

deb=${1:-$(ls -t target/debian/msgx_*_amd64.deb 2>/dev/null | head -n 1)}
[ -n "$deb" ] && [ -f "$deb" ] || fail "no package (run scripts/package.sh first)"
[ "$(id -u)" = 0 ] || fail "needs root (dpkg -i)"
if dpkg-query -W -f '${Status}' msgx 2>/dev/null | grep -qx 'install ok installed'; then
  fail "msgx is installed here already: not touching it"
fi
getent passwd msgx >/dev/null && fail "user msgx exists already: not touching it"
[ -e /etc/msgx ] && fail "/etc/msgx exists already: not touching it"

PG_ADMIN=${MSGX_TEST_PG_ADMIN_URL:-postgres://msgx:msgx@127.0.0.1:5432/postgres}
PG_DB=msgx_pkgtest
MB_DB=msgx_pkgtest_mb
my() { mariadb -h 127.0.0.1 -umsgx -pmsgx "$@"; }
kafka_pid=
work=$(mktemp -d)

cleanup() {
  [ -n "$kafka_pid" ] && kill "$kafka_pid" 2>/dev/null || true
  dpkg --purge msgx >/dev/null 2>&1 || true
  rm -rf /var/log/msgx "$work"
  psql "$PG_ADMIN" -qtAX -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null 2>&1 || true
  my -e "DROP DATABASE IF EXISTS $MB_DB" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# mode owner:group of a path
perm() { stat -c '%a %U:%G' "$1"; }
expect_perm() {
  local got
  got=$(perm "$1")
  [ "$got" = "$2" ] || fail "$1 is $got, want $2"
}
as_msgx() {
  runuser -u msgx -- sh -c "set -a; . /etc/msgx/msgx.env; set +a; cd /var/lib/msgx; $1"
}

# What the package depends on comes from the distribution's archive (here:
# apt); the package itself is installed offline with dpkg.
if ! dpkg-query -W -f '${Status}' libsasl2-modules-gssapi-mit 2>/dev/null | grep -qx 'install ok installed'; then
  log "installing the dependency libsasl2-modules-gssapi-mit"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsasl2-modules-gssapi-mit >/dev/null
fi

log "install $deb"
dpkg -i "$deb" >/dev/null
/usr/bin/msgx --version | head -n 1
getent passwd msgx | grep -q ':/var/lib/msgx:/usr/sbin/nologin$' || fail "user msgx: $(getent passwd msgx)"
getent group msgx >/dev/null || fail "no group msgx"
expect_perm /usr/bin/msgx "755 root:root"
expect_perm /etc/msgx "750 root:msgx"
expect_perm /etc/msgx/msgx.toml "640 root:msgx"
expect_perm /etc/msgx/msgx.env "640 root:msgx"
expect_perm /var/lib/msgx "750 msgx:msgx"
expect_perm /var/log/msgx "750 msgx:msgx"
dpkg-query -W -f '${Conffiles}\n' msgx | grep -q '/etc/msgx/msgx.toml' || fail "msgx.toml is no conffile"
for f in /usr/lib/systemd/system/msgx.service /usr/lib/systemd/system/msgx-standby.service \
  /usr/share/man/man1/msgx.1.gz /usr/share/bash-completion/completions/msgx \
  /usr/share/doc/msgx/copyright /usr/share/doc/msgx/examples/msgx.cron; do
  [ -f "$f" ] || fail "$f missing"
done
grep -q '^ExecStart=/usr/bin/msgx daemon$' /usr/lib/systemd/system/msgx.service || fail "msgx.service does not run /usr/bin/msgx"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify /usr/lib/systemd/system/msgx.service /usr/lib/systemd/system/msgx-standby.service
  log "systemd-analyze verify: ok"
fi
if [ -d /run/systemd/system ]; then
  ! systemctl is-enabled --quiet msgx.service || fail "msgx.service enabled on install"
  ! systemctl is-active --quiet msgx.service || fail "msgx.service started on install"
fi

log "databases $PG_DB, $MB_DB; mock Kafka"
psql "$PG_ADMIN" -qtAX -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null
psql "$PG_ADMIN" -qtAX -c "CREATE DATABASE $PG_DB" >/dev/null
my -e "DROP DATABASE IF EXISTS $MB_DB; CREATE DATABASE $MB_DB"
my "$MB_DB" <migrations/mailbox/0001_mailbox.sql
/usr/bin/msgx dev-kafka --brokers 1 >"$work/kafka.out" 2>"$work/kafka.err" &
kafka_pid=$!
for _ in $(seq 50); do
  grep -q '^bootstrap=' "$work/kafka.out" 2>/dev/null && break
  sleep 0.2
done
brokers=$(sed -n 's/^bootstrap=//p' "$work/kafka.out" | head -n 1)
[ -n "$brokers" ] || fail "dev-kafka printed no bootstrap: $(cat "$work/kafka.err")"
pg_url=${PG_ADMIN%/*}/$PG_DB
cat >>/etc/msgx/msgx.env <<EOF
MSGX_DATABASE_URL=$pg_url
MSGX_MAILBOX_URL=mysql://msgx:msgx@127.0.0.1:3306/$MB_DB
MSGX_KAFKA_BROKERS=$brokers
EOF
expect_perm /etc/msgx/msgx.env "640 root:msgx"

log "as user msgx: config check, migrate, doctor, one ingest-sweep and pump-drain"
as_msgx "msgx config check"
as_msgx "msgx migrate" >/dev/null
as_msgx "msgx doctor" || fail "msgx doctor"
as_msgx "msgx mailbox load $(pwd)/tests/fixtures/sis/022-FLOP-DELY-delays.xml" >/dev/null
as_msgx "msgx run ingest-sweep" >/dev/null
as_msgx "msgx run pump-drain" >/dev/null
state=$(psql "$pg_url" -qtAX -c "SELECT count(*) FROM proc_state WHERE state <> 'PENDING'" 2>/dev/null || echo "?")
log "messages processed: $state"

log "install the same package again, edit the conffile, upgrade"
echo '# edited by the package test' >>/etc/msgx/msgx.toml
dpkg -i "$deb" >/dev/null
grep -q '^# edited by the package test$' /etc/msgx/msgx.toml || fail "reinstall lost the edited conffile"
grep -q '^MSGX_KAFKA_BROKERS=' /etc/msgx/msgx.env || fail "reinstall touched msgx.env"
ver=$(dpkg-deb -f "$deb" Version)
newer="$work/msgx_${ver%-*}-99_amd64.deb"
mkdir "$work/unpacked"
dpkg-deb -R "$deb" "$work/unpacked"
sed -i "s/^Version: .*/Version: ${ver%-*}-99/" "$work/unpacked/DEBIAN/control"
dpkg-deb --root-owner-group -b "$work/unpacked" "$newer" >/dev/null
dpkg -i "$newer" >/dev/null
[ "$(dpkg-query -W -f '${Version}' msgx)" = "${ver%-*}-99" ] || fail "upgrade not installed"
grep -q '^# edited by the package test$' /etc/msgx/msgx.toml || fail "upgrade lost the edited conffile"
expect_perm /etc/msgx/msgx.toml "640 root:msgx"

log "purge"
kill "$kafka_pid" 2>/dev/null || true
kafka_pid=
dpkg --purge msgx >/dev/null
for p in /usr/bin/msgx /etc/msgx /var/lib/msgx /usr/lib/systemd/system/msgx.service /usr/share/doc/msgx; do
  [ ! -e "$p" ] || fail "$p left after purge"
done
! getent passwd msgx >/dev/null || fail "user msgx left after purge"
! getent group msgx >/dev/null || fail "group msgx left after purge"
[ -d /var/log/msgx ] || fail "purge removed the logs"
expect_perm /var/log/msgx "750 root:adm"
log "ok"
