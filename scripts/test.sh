#!/usr/bin/env bash
# The whole test suite against real local services (README, second command).
# .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/services.sh

export MSGX_TEST_PG_ADMIN_URL=${MSGX_TEST_PG_ADMIN_URL:-postgres://msgx:msgx@127.0.0.1:5432/postgres}
export MSGX_TEST_MYSQL_ADMIN_URL=${MSGX_TEST_MYSQL_ADMIN_URL:-mysql://msgx:msgx@127.0.0.1:3306}
unset MSGX_CONFIG MSGX_DATABASE_URL MSGX_MAILBOX_URL MSGX_KAFKA_BROKERS
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

# Leftovers of an interrupted earlier run (each test drops its own databases).
psql "$MSGX_TEST_PG_ADMIN_URL" -qtAX -c \
  "SELECT 'DROP DATABASE \"' || datname || '\" WITH (FORCE);' FROM pg_database WHERE datname LIKE 'msgx\_t\_%'" \
  | psql "$MSGX_TEST_PG_ADMIN_URL" -q >/dev/null 2>&1 || true
# The migrated template the tests clone (tests/it/common/mod.rs): made anew
# once per run.
psql "$MSGX_TEST_PG_ADMIN_URL" -qtAX -c \
  "SELECT 'ALTER DATABASE \"' || datname || '\" WITH IS_TEMPLATE false; DROP DATABASE \"' || datname || '\";' FROM pg_database WHERE datname LIKE 'msgx\_tpl\_%'" \
  | psql "$MSGX_TEST_PG_ADMIN_URL" -q >/dev/null 2>&1 || true
mariadb -h 127.0.0.1 -umsgx -pmsgx -N -e \
  "SELECT CONCAT('DROP DATABASE \`', schema_name, '\`;') FROM information_schema.schemata WHERE schema_name LIKE 'msgx\_mb\_%'" \
  2>/dev/null | mariadb -h 127.0.0.1 -umsgx -pmsgx 2>/dev/null || true

echo "== format and lint"
cargo fmt --all -- --check
cargo clippy --all-targets --quiet -- -D warnings

# Known advisories in Cargo.lock (issue 32 item 9): fails on any.
echo "== advisories"
bash scripts/audit.sh

echo "== tests"
if cargo nextest --version >/dev/null 2>&1; then
  # Doc tests first, so the runner's closing summary is nextest's.
  cargo test --doc --quiet
  cargo nextest run --profile ci --no-fail-fast
else
  cargo test --no-fail-fast
fi

# A short chaos drain (issue 11, docs/RESILIENCE.md): 3 SIGKILLs of the daemon
# while it drains 2,000 messages, compared with an undisturbed run; any
# difference fails CI. Debug build (already built by the tests).
echo "== chaos drain (short)"
bash scripts/chaos.sh --debug --runs 3 --messages 2000
