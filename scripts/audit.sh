#!/usr/bin/env bash
# The supply chain of Cargo.lock, offline. Called by scripts/test.sh.
#
# 1. `cargo audit` against the RustSec advisory database, failing on any
#    vulnerability it finds.
# 2. `cargo deny check licenses advisories bans sources` with deny.toml: every
#    dependency's license is one deny.toml allows, the same advisories, banned
#    crates and registries.
#
# This machine cannot fetch the database from its git host, so the snapshot in
# ../shared/advisory-db (its SOURCE.md names the commit and date) is given to
# both tools as a git repository made on the fly (dated as the snapshot), with
# fetching off. The snapshot is older than cargo-audit's 90-day freshness
# rule, hence --stale. Set MSGX_ADVISORY_DB to use another copy (a fresh clone
# of rustsec/advisory-db where it can be fetched). Each tool is installed from
# crates.io (--locked) when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[audit] %s\n' "$*"; }

# cargo-deny's directory for the default advisory database under its db-path
# (deny.toml: $MSGX_DENY_DB_PATH): the URL's last segment and a hash of it.
DENY_DB_DIR=advisory-db-3157b0e258782691

db=${MSGX_ADVISORY_DB:-../shared/advisory-db}
for tool in cargo-audit cargo-deny; do
  if ! cargo "${tool#cargo-}" --version >/dev/null 2>&1; then
    log "installing $tool (crates.io, --locked)"
    cargo install --locked --quiet "$tool"
  fi
done

if [ ! -d "$db/crates" ]; then
  log "no advisory database at $db (set MSGX_ADVISORY_DB): advisories NOT checked"
  cargo deny --offline --locked check --hide-inclusion-graph licenses bans sources
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$db/." "$work/advisory-db"
if [ ! -d "$work/advisory-db/.git" ]; then
  date=$(grep -m1 -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}' "$db/SOURCE.md" 2>/dev/null || true)
  (
    cd "$work/advisory-db"
    git init -q -b main
    git add -A
    GIT_AUTHOR_DATE=${date:+${date}T00:00:00Z} GIT_COMMITTER_DATE=${date:+${date}T00:00:00Z} \
      git -c user.name=msgx -c user.email=msgx@localhost commit -q -m snapshot
  )
fi
log "$(tr '\n' ' ' <"$db/SOURCE.md" 2>/dev/null | grep -m1 -o 'commit [0-9a-f]*' || echo "database $db")"
cargo audit --db "$work/advisory-db" --no-fetch --stale --file Cargo.lock

mkdir -p "$work/deny-dbs"
cp -a "$work/advisory-db" "$work/deny-dbs/$DENY_DB_DIR"
MSGX_DENY_DB_PATH="$work/deny-dbs" \
  cargo deny --offline --locked check --hide-inclusion-graph licenses advisories bans sources
