#!/usr/bin/env bash
# Idempotent local services for msgx (issue 2, item 9): installs PostgreSQL and
# MariaDB (and Chromium for the browser tests) with apt when absent, starts
# them when stopped, and creates the msgx role/databases and the mailbox
# tables. Works on a fresh Debian machine (as root) and where the services
# already run.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[services] %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

PG_USER=${MSGX_PG_USER:-msgx}
PG_PASS=${MSGX_PG_PASS:-msgx}
PG_DB=${MSGX_PG_DB:-msgx}
MB_USER=${MSGX_MB_USER:-msgx}
MB_PASS=${MSGX_MB_PASS:-msgx}
MB_DB=${MSGX_MB_DB:-msgx_mailbox}

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

# --- build prerequisites for the bundled librdkafka (gcc, make) ----------------
if ! command -v cc >/dev/null || ! command -v make >/dev/null; then
  log "installing build tools"; apt_install build-essential pkg-config
fi
# librdkafka links the system OpenSSL (SSL, SASL SCRAM), Cyrus SASL (GSSAPI)
# and libcurl (OAUTHBEARER/OIDC); docs/production/kafka.md. pkg-config finds them.
if ! pkg-config --exists openssl libsasl2 libcurl 2>/dev/null; then
  log "installing the Kafka TLS/SASL build libraries"
  apt_install pkg-config libssl-dev libsasl2-dev libcurl4-openssl-dev
fi
if ! command -v cargo >/dev/null; then
  log "ERROR: no Rust toolchain (cargo) on PATH; install Rust 1.94+ first"; exit 1
fi

# --- promtool: checks and unit tests of the alert rules (tests/it/observability.rs)
# From Debian's prometheus package, without its recommended node exporter. The
# package enables a Prometheus server; msgx's tests need only promtool, so the
# server is stopped and disabled again right after the install.
if ! command -v promtool >/dev/null; then
  log "installing promtool (Debian package prometheus)"
  apt_install --no-install-recommends prometheus
  as_root systemctl disable --now prometheus >/dev/null 2>&1 || true
fi

# --- PostgreSQL ------------------------------------------------------------------
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  log "installing PostgreSQL"; apt_install postgresql postgresql-client
fi
pg_ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
if ! pg_ready; then
  ver=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n1)
  if [ -z "$ver" ]; then
    ver=$(ls /usr/lib/postgresql | sort -V | tail -n1)
    log "creating PostgreSQL cluster $ver/main"; as_root pg_createcluster "$ver" main >/dev/null
  fi
  log "starting PostgreSQL $ver"
  as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main start 2>/dev/null \
    || as_root pg_ctlcluster "$ver" main start
  for _ in $(seq 1 60); do pg_ready && break; sleep 0.5; done
  pg_ready || { log "ERROR: PostgreSQL did not come up"; exit 1; }
fi
pg_super() { as_root runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qtAX "$@"; }
if [ "$(pg_super -c "SELECT 1 FROM pg_roles WHERE rolname = '$PG_USER'")" != 1 ]; then
  log "creating PostgreSQL role $PG_USER"
  pg_super -c "CREATE ROLE \"$PG_USER\" LOGIN SUPERUSER PASSWORD '$PG_PASS'"
fi
if [ "$(pg_super -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != 1 ]; then
  log "creating PostgreSQL database $PG_DB"
  pg_super -c "CREATE DATABASE \"$PG_DB\" OWNER \"$PG_USER\""
fi

# --- MariaDB ---------------------------------------------------------------------
if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
  log "installing MariaDB"; apt_install mariadb-server mariadb-client
fi
mb_ready() { mariadb-admin ping --silent >/dev/null 2>&1 || mysqladmin ping --silent >/dev/null 2>&1; }
if ! mb_ready; then
  log "starting MariaDB"
  as_root mkdir -p /run/mysqld && as_root chown mysql:mysql /run/mysqld
  if [ ! -d /var/lib/mysql/mysql ]; then
    as_root mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  fi
  as_root start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- \
    --user=mysql --bind-address=127.0.0.1
  for _ in $(seq 1 60); do mb_ready && break; sleep 0.5; done
  mb_ready || { log "ERROR: MariaDB did not come up"; exit 1; }
fi
mb_root() { as_root mariadb -uroot "$@"; }
mb_root <<SQL
CREATE DATABASE IF NOT EXISTS \`$MB_DB\` CHARACTER SET utf8mb4;
CREATE USER IF NOT EXISTS '$MB_USER'@'127.0.0.1' IDENTIFIED BY '$MB_PASS';
CREATE USER IF NOT EXISTS '$MB_USER'@'localhost' IDENTIFIED BY '$MB_PASS';
GRANT ALL PRIVILEGES ON *.* TO '$MB_USER'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO '$MB_USER'@'localhost' WITH GRANT OPTION;
FLUSH PRIVILEGES;
SQL
mb_root "$MB_DB" < migrations/mailbox/0001_mailbox.sql

# --- headless Chromium for the console's browser tests (issue 21 item 4) -------
# Debian's chromium and its matching chromedriver (tests/it/common/browser.rs).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  log "installing Chromium and chromedriver"; apt_install chromium chromium-driver
fi

# --- a real OpenID Provider for the console's single sign-on tests -------------
# panva's oidc-provider (npm), pinned by tests/oidc-provider/package-lock.json
# and installed into that folder (node_modules is not committed); the tests
# start tests/oidc-provider/provider.mjs (tests/it/oidc.rs). `npm ci` runs only
# when the installed tree is missing or older than the lock file.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  log "installing Node.js and npm"; apt_install nodejs npm
fi
op=tests/oidc-provider
if [ ! -f "$op/node_modules/.package-lock.json" ] || [ "$op/package-lock.json" -nt "$op/node_modules/.package-lock.json" ]; then
  log "installing oidc-provider (npm ci in $op)"
  (cd "$op" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# --- a draft-03 JSON Schema validator for the ACRIS tests (tests/it/acris.rs) ---
# Python's jsonschema (Draft3Validator) with rfc3339-validator, so "date-time"
# is checked too, in a project-local virtual environment (.venv, ignored by
# git; tests/it/acris.rs runs .venv/bin/python, or $MSGX_TEST_PYTHON).
ACRIS_VENV=${MSGX_ACRIS_VENV:-.venv}
if ! "$ACRIS_VENV/bin/python" -c 'import jsonschema, referencing, rfc3339_validator' 2>/dev/null; then
  log "installing jsonschema into $ACRIS_VENV"
  if ! python3 -m venv "$ACRIS_VENV" >/dev/null 2>&1; then
    apt_install python3-venv
    python3 -m venv "$ACRIS_VENV"
  fi
  "$ACRIS_VENV/bin/pip" install -q --disable-pip-version-check 'jsonschema>=4.18,<5' 'rfc3339-validator>=0.1.4,<1'
fi

# --- the package install test (scripts/package-test.sh, issue 35) --------------
# What the .deb depends on beyond the base system comes from the archive, as on
# a server; the test itself then installs offline with dpkg. binutils: objcopy
# strips the packaged binary; rpm: rpm -qpl/-qpR and rpm2archive check the RPM;
# lintian; systemd-analyze verifies the units.
pkg_missing=
for p in libsasl2-modules-gssapi-mit binutils rpm lintian systemd; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -qx 'install ok installed' || pkg_missing="$pkg_missing $p"
done
if [ -n "$pkg_missing" ]; then
  log "installing$pkg_missing (package test)"
  # shellcheck disable=SC2086
  apt_install $pkg_missing
fi

log "ready: postgres://$PG_USER:****@127.0.0.1:5432/$PG_DB and mysql://$MB_USER:****@127.0.0.1:3306/$MB_DB"
