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
# A run of this script builds the workspace once: incremental compilation
# only adds its bookkeeping to that (its caches serve the next edit, not this
# build). A developer's own `cargo build` keeps the profile's default.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
# The C dependencies (librdkafka above all: its build asks for -O2, a
# minute of a cold run's two cores) at -O1 for the tests; the package's
# release build (scripts/package.sh) keeps their own flags.
export CFLAGS=${CFLAGS:--O1}

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

# Each step's header says when it began (seconds into this run), so a slow
# CI run shows where its time went (the budget: docs/BENCHMARKS.md "Test suite").
step() { echo "== $* (at ${SECONDS}s)"; }

step "format"
cargo fmt --all -- --check

# Known advisories, licenses, bans and sources of Cargo.lock (scripts/audit.sh, deny.toml): fails on any.
step "supply chain (cargo audit, cargo deny)"
bash scripts/audit.sh

# One compile for the lints and the tests (issue 33 item 1): clippy-driver
# compiles the workspace's crates (every target, as `cargo clippy
# --all-targets` checks them) and lints them with -D warnings while it
# builds them for the tests; the dependencies are built once. A separate
# `cargo clippy` would compile every dependency a second time (metadata only),
# about 10 minutes of a cold run on 2 cores. The same variables stay set for
# the test steps, so nothing is rebuilt.
step "build and lint"
if clippy=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver); then
  export RUSTC_WORKSPACE_WRAPPER=$clippy
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
  cargo build --profile test --all-targets --locked
else
  cargo clippy --all-targets --quiet --locked -- -D warnings
fi

# The packages (issue 35, docs/operations.md §1), in the background from here
# on, beside the tests and the chaos drain (it mostly waits on dpkg, lintian
# and compression; after the chaos drain it added about 30 s to the run):
# scripts/package.sh packages the binary the tests run (--binary; the layout,
# maintainer scripts and dependencies are the release package's, and a
# release build would double this run's compile time), then
# scripts/package-test.sh checks the .deb, its -dbgsym, the RPM, the SBOM and
# SHA256SUMS, installs the .deb on this machine, runs it as user msgx (its own
# databases), reinstalls, upgrades and purges it. Its output follows the
# chaos drain's.
pkg_log=target/package-test.log
(bash scripts/package.sh --binary target/debug/msgx --fast target/package-test &&
  bash scripts/package-test.sh target/package-test) >"$pkg_log" 2>&1 &
pkg_pid=$!

step "tests"
tests_rc=0
if cargo nextest --version >/dev/null 2>&1; then
  # Doc tests first, so the runner's closing summary is nextest's.
  cargo test --doc --quiet --locked || tests_rc=$?
  cargo nextest run --profile ci --no-fail-fast --locked || tests_rc=$?
else
  cargo test --no-fail-fast --locked || tests_rc=$?
fi
if [ "$tests_rc" != 0 ]; then
  kill "$pkg_pid" 2>/dev/null || true
  wait "$pkg_pid" 2>/dev/null || true
  exit "$tests_rc"
fi

# A short chaos drain (issue 11, docs/RESILIENCE.md): 3 SIGKILLs of the daemon
# while it drains 2,000 messages, compared with an undisturbed run; any
# difference fails CI. The binary the tests used (target/debug/msgx, test
# profile): `cargo build` of the dev profile would compile everything again.
step "chaos drain (short)"
MSGX_BIN=target/debug/msgx bash scripts/chaos.sh --debug --runs 3 --messages 2000

step "packages (install test)"
if wait "$pkg_pid"; then
  cat "$pkg_log"
else
  cat "$pkg_log"
  echo "package install test FAILED" >&2
  exit 1
fi
