#!/usr/bin/env bash
# Builds msgx's Debian package (docs/operations.md "Install the package"):
# the release binary (--locked, stripped), the active and standby systemd
# units of deploy/ (naming /usr/bin/msgx; neither enabled nor started), the
# /etc/msgx/msgx.toml conffile (deploy/package/msgx.toml: production defaults,
# no credentials), the /etc/msgx/msgx.env template, the maintainer scripts of
# deploy/package/debian/ (msgx user and group, /var/lib/msgx, /var/log/msgx),
# the docs and the maintenance crontab as an example. Prints each artefact's
# SHA-256. Installs cargo-deb from crates.io (--locked) when it is missing.
#
# Reproducible for one checkout path and toolchain: SOURCE_DATE_EPOCH (default:
# the commit time of HEAD) fixes the build date msgx reports and the times in
# the archive.
#
# Usage: scripts/package.sh [OUT_DIR]   (default target/debian)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[package] %s\n' "$*"; }

out=${1:-target/debian}
if ! cargo deb --version >/dev/null 2>&1; then
  log "installing cargo-deb (crates.io, --locked)"
  cargo install --locked --quiet cargo-deb
fi

SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH

# What Cargo.toml's [package.metadata.deb] takes from target/package/.
stage=target/package
rm -rf "$stage"
mkdir -p "$stage/units" "$stage/doc" "$stage/examples" "$stage/man" "$stage/completions"
for unit in msgx msgx-standby; do
  sed -e 's#/usr/local/bin/msgx#/usr/bin/msgx#g' \
    -e 's#/usr/local/share/doc/msgx/#/usr/share/doc/msgx/#g' \
    -e '/^# Install: cp /d' -e '/^#  *systemctl enable/d' \
    "deploy/$unit.service" >"$stage/units/$unit.service"
done
cp README.md docs/operations.md docs/configuration.md docs/metrics.md docs/console.md "$stage/doc/"
cp deploy/msgx.cron deploy/schedule-pipeline.toml "$stage/examples/"
# The man pages and completions come from the binary itself (its clap
# definition), so the release binary is built first; cargo deb reuses it.
log "cargo build --release --locked"
cargo build --release --locked --bin msgx
target/release/msgx man-pages "$stage/man"
target/release/msgx completions bash >"$stage/completions/msgx"
target/release/msgx completions zsh >"$stage/completions/_msgx"
target/release/msgx completions fish >"$stage/completions/msgx.fish"
# One file time for everything staged: the archive's times do not depend on
# when the checkout was made.
find "$stage" deploy/package -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$out"
log "cargo deb (release, --locked; SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
deb=$(cargo deb --locked --output "$out" ${MSGX_DEB_MAINTAINER:+--maintainer "$MSGX_DEB_MAINTAINER"} | tail -n 1)
log "built $deb"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
( cd "$(dirname "$deb")" && sha256sum "$(basename "$deb")" | tee "$(basename "$deb").sha256" )
