#!/usr/bin/env bash
# Checks the artefacts of scripts/package.sh, then installs msgx's Debian
# package on this machine and checks it, then purges it:
# - SHA256SUMS matches; the SBOM is CycloneDX and names the dependency tree;
#   lintian finds no error in the .deb; the -dbgsym .ddeb holds the debug
#   file of the packaged binary's build id; the RPM (not installable here:
#   rpm -qpl/-qpR/--scripts/--dump only) has the same files with the right
#   modes, owners and conffile flag, its scripts and its requirements;
# - the .deb installed: files, modes, user, conffile; `msgx migrate`,
#   `migrate --check`, `doctor`, one ingest-sweep and pump-drain as user msgx
#   against private databases on the local PostgreSQL and MariaDB, with a mock
#   Kafka (`msgx dev-kafka`); the installed units verify; installing the same
#   package again changes nothing; an upgrade to a higher version keeps the
#   edited conffile; `dpkg --purge` removes all it created but the logs.
# Needs root and no network (scripts/services.sh installs what the package
# depends on). Refuses to run where msgx is installed or its user exists, and
# leaves the system as it found it (its own logs and databases are removed).
#
# Usage: scripts/package-test.sh [DIR]   (default target/dist/pkg, package.sh's output)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[package-test] %s\n' "$*"; }
fail() {
  printf '[package-test] FAIL: %s\n' "$*" >&2
  exit 1
}

dir=${1:-target/dist/pkg}
[ -f "$dir/SHA256SUMS" ] || fail "no $dir/SHA256SUMS (run scripts/package.sh first)"
one() {
  local found
  found=$(ls "$dir"/$1 2>/dev/null)
  [ "$(printf '%s\n' "$found" | grep -c .)" = 1 ] || fail "want one $1 in $dir, found: ${found:-none}"
  printf '%s\n' "$found"
}
deb=$(one 'msgx_*_amd64.deb')
ddeb=$(one 'msgx-dbgsym_*_amd64.ddeb')
rpm_file=$(one 'msgx-*.x86_64.rpm')
sbom=$(one 'msgx-*.cdx.json')
[ "$(id -u)" = 0 ] || fail "needs root (dpkg -i)"
if dpkg-query -W -f '${Status}' msgx 2>/dev/null | grep -qx 'install ok installed'; then
  fail "msgx is installed here already: not touching it"
fi
getent passwd msgx >/dev/null && fail "user msgx exists already: not touching it"
[ -e /etc/msgx ] && fail "/etc/msgx exists already: not touching it"

log "artefacts: SHA256SUMS, SBOM"
(cd "$dir" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match"
for f in "$deb" "$ddeb" "$rpm_file" "$sbom"; do
  grep -q " $(basename "$f")\$" "$dir/SHA256SUMS" || fail "$f not in SHA256SUMS"
done
python3 - "$sbom" <<'PY' || fail "SBOM $sbom"
import json, sys
bom = json.load(open(sys.argv[1]))
assert bom["bomFormat"] == "CycloneDX", bom.get("bomFormat")
names = {c["name"] for c in bom.get("components", [])}
assert bom["metadata"]["component"]["name"] == "msgx", bom["metadata"]["component"]
missing = {"rdkafka", "sqlx", "mysql_async", "tokio", "quick-xml"} - names
assert not missing, f"components missing: {missing}"
print(f"[package-test] SBOM: CycloneDX {bom['specVersion']}, {len(names)} components")
PY

for tool in lintian rpm rpm2archive readelf systemd-analyze; do
  command -v "$tool" >/dev/null || fail "$tool is missing: run scripts/services.sh"
done
lintian_out=$(lintian --fail-on error "$deb" 2>&1) || fail "lintian: $lintian_out"
log "lintian: no error; $(printf '%s\n' "$lintian_out" | grep -c '^[WI]:' || true) warnings and notes:"
printf '%s\n' "$lintian_out" | grep '^[WI]:' || true

log "RPM $(basename "$rpm_file") (static checks: installing an RPM is out of reach on Debian)"
rpm_q() { rpm -qp --nosignature "$@" "$rpm_file" 2>/dev/null; }
[ "$(rpm_q --qf '%{NAME} %{ARCH}')" = "msgx x86_64" ] || fail "RPM name/arch: $(rpm_q --qf '%{NAME} %{ARCH}')"
# mode user:group path for every file, and the config(noreplace) flag
rpm_files=$(rpm_q --qf '[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILEFLAGS:fflags} %{FILENAMES}\n]')
want_file() {
  printf '%s\n' "$rpm_files" | grep -qE "^$1\$" || fail "RPM: no file matching '$1' in:
$rpm_files"
}
want_file '-rwxr-xr-x root:root  /usr/bin/msgx'
want_file '-rw-r----- root:msgx cn /etc/msgx/msgx.toml'
want_file '-rw-r--r-- root:root  /usr/lib/systemd/system/msgx.service'
want_file '-rw-r--r-- root:root  /usr/lib/systemd/system/msgx-standby.service'
want_file '-rw-r--r-- root:root  /usr/share/msgx/msgx.env'
want_file '-rw-r--r-- root:root d /usr/share/man/man1/msgx.1'
want_file '-rw-r--r-- root:root d /usr/share/doc/msgx/examples/msgx.cron'
want_file '-rw-r--r-- root:root  /usr/share/bash-completion/completions/msgx'
requires=$(rpm_q -R)
for r in '/bin/sh' 'shadow-utils' 'util-linux' 'cyrus-sasl-gssapi' 'libc.so.6(GLIBC_' 'libsasl2.so'; do
  printf '%s\n' "$requires" | grep -q "^$r" || fail "RPM requires no $r: $requires"
done
scripts=$(rpm_q --scripts)
for s in 'useradd --system' 'install -d -m 0750 -o msgx -g msgx /var/lib/msgx' 'migrate --check' 'disable --now'; do
  printf '%s\n' "$scripts" | grep -qF -- "$s" || fail "RPM scripts lack '$s'"
done
rpm -K --nosignature "$rpm_file" >/dev/null || fail "RPM digests"
# The RPM's binary is the .deb's, stripped the same way, and names its debug file.
rpm_tmp=$(mktemp -d)
rpm2archive -n - <"$rpm_file" | tar -x -C "$rpm_tmp" ./usr/bin/msgx
readelf --string-dump=.gnu_debuglink "$rpm_tmp/usr/bin/msgx" | grep -q 'msgx\.debug' || fail "the RPM's binary names no msgx.debug"
readelf -S "$rpm_tmp/usr/bin/msgx" | grep -q '\.debug_line' && fail "the RPM's binary is not stripped"
rm -rf "$rpm_tmp"
log "RPM: files, modes, conffile, requires, scripts, digests: ok"

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

dpkg-query -W -f '${Status}' libsasl2-modules-gssapi-mit 2>/dev/null | grep -qx 'install ok installed' ||
  fail "libsasl2-modules-gssapi-mit (a dependency) is not installed: run scripts/services.sh"

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
# The -dbgsym package holds the debug file of the installed binary's build id.
build_id=$(readelf -n /usr/bin/msgx | sed -n 's/^ *Build ID: //p')
[ -n "$build_id" ] || fail "/usr/bin/msgx has no build id"
dpkg-deb -c "$ddeb" | grep -q "/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug$" ||
  fail "$ddeb has no debug file for build id $build_id"
readelf -S /usr/bin/msgx | grep -q '\.debug_line' && fail "/usr/bin/msgx is not stripped"
systemd-analyze verify /usr/lib/systemd/system/msgx.service /usr/lib/systemd/system/msgx-standby.service
log "systemd-analyze verify: ok"
# Enabled or not shows without a running systemd too: no wants link, and
# deb-systemd-helper did not record the units as enabled.
for unit in msgx.service msgx-standby.service; do
  [ ! -e "/etc/systemd/system/multi-user.target.wants/$unit" ] || fail "$unit enabled on install"
  [ ! -e "/var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants/$unit" ] || fail "$unit marked enabled"
done
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
as_msgx "msgx migrate --check" >/dev/null 2>&1 && fail "migrate --check passed on an unmigrated database"
as_msgx "msgx migrate" >/dev/null
as_msgx "msgx migrate --check" || fail "msgx migrate --check after msgx migrate"
as_msgx "msgx doctor" || fail "msgx doctor"
as_msgx "msgx mailbox load $(pwd)/tests/fixtures/sis/022-FLOP-DELY-delays.xml" >/dev/null
as_msgx "msgx run ingest-sweep" >/dev/null
as_msgx "msgx run pump-drain" >/dev/null
state=$(psql "$pg_url" -qtAX -c "SELECT count(*) FROM proc_state WHERE state <> 'PENDING'" 2>/dev/null || echo "?")
[ "$state" = 1 ] || fail "messages processed by the installed msgx: $state, want 1"
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
