#!/usr/bin/env bash
# Known advisories in Cargo.lock (issue 32 item 9): `cargo audit` against the
# RustSec advisory database, failing on any vulnerability it finds. Called by
# scripts/test.sh.
#
# This machine cannot fetch the database from its git host, so the snapshot in
# ../shared/advisory-db (its SOURCE.md names the commit and date) is given to
# cargo-audit as a git repository made on the fly, with fetching off. The
# snapshot is older than cargo-audit's 90-day freshness rule, hence --stale.
# Set MSGX_ADVISORY_DB to use another copy (a fresh clone of
# rustsec/advisory-db where it can be fetched).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[audit] %s\n' "$*"; }

db=${MSGX_ADVISORY_DB:-../shared/advisory-db}
if [ ! -d "$db/crates" ]; then
  log "no advisory database at $db (set MSGX_ADVISORY_DB): advisories NOT checked"
  exit 0
fi
if ! cargo audit --version >/dev/null 2>&1; then
  log "installing cargo-audit (crates.io, --locked)"
  cargo install --locked --quiet cargo-audit
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$db/." "$work/advisory-db"
if [ ! -d "$work/advisory-db/.git" ]; then
  (
    cd "$work/advisory-db"
    git init -q -b main
    git add -A
    git -c user.name=msgx -c user.email=msgx@localhost commit -q -m snapshot
  )
fi
log "$(grep -m1 -o 'commit [0-9a-f]*' "$db/SOURCE.md" 2>/dev/null || echo "database $db")"
cargo audit --db "$work/advisory-db" --no-fetch --stale --file Cargo.lock
