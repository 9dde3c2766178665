#!/usr/bin/env bash
# Builds msgx's packages (docs/operations.md "Install the package"), one
# layout for both:
#   msgx_<v>-1_amd64.deb        Debian/Ubuntu (cargo-deb)
#   msgx-dbgsym_<v>-1_amd64.ddeb  its debug symbols (/usr/lib/debug/.build-id)
#   msgx-<v>-1.x86_64.rpm       RHEL 9 family (cargo-generate-rpm)
#   msgx-<v>-1.x86_64.debug     the RPM binary's debug symbols (.gnu_debuglink)
#   msgx-<v>.cdx.json           CycloneDX SBOM of the dependency tree (cargo-cyclonedx)
#   SHA256SUMS                  the artefacts' SHA-256, also printed
# Content: the release binary (--locked, stripped), the active and standby
# systemd units of deploy/ (naming /usr/bin/msgx; neither enabled nor
# started), the /etc/msgx/msgx.toml conffile (deploy/package/msgx.toml:
# production defaults, no credentials), the /etc/msgx/msgx.env template, the
# maintainer scripts (deploy/package/debian/, deploy/package/rpm/: msgx user
# and group, /var/lib/msgx, /var/log/msgx), the man page and shell completions
# (made by the binary from its clap definition), the docs and the maintenance
# crontab as an example. Installs cargo-deb, cargo-generate-rpm and
# cargo-cyclonedx from crates.io (--locked) when missing.
#
# Reproducible for one toolchain: SOURCE_DATE_EPOCH (default: the commit time
# of HEAD) fixes the build date msgx reports and every time in the archives;
# the release build runs in target/dist with the checkout's and cargo's paths
# remapped (rustc --remap-path-prefix, cc -ffile-prefix-map), so the
# checkout's location does not show.
#
# Usage: scripts/package.sh [--binary FILE] [--fast] [OUT_DIR]   (default target/dist/pkg)
#   --binary FILE  package FILE, an msgx built already, instead of building
#                  the release binary: scripts/test.sh packages the binary its
#                  tests ran (test profile) to install-test the layout without
#                  a second build of everything
#   --fast         lighter compression (the install test)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[package] %s\n' "$*"; }
die() {
  printf '[package] %s\n' "$*" >&2
  exit 1
}

binary=
fast=
out=
while [ $# -gt 0 ]; do
  case $1 in
    --binary)
      binary=${2:?--binary needs a file}
      shift 2
      ;;
    --fast)
      fast=1
      shift
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*) die "unknown option $1 (see --help)" ;;
    *)
      out=$1
      shift
      ;;
  esac
done
out=${out:-target/dist/pkg}
[ -z "$binary" ] || [ -x "$binary" ] || die "--binary $binary: no executable file"

for tool in deb generate-rpm cyclonedx; do
  if ! cargo "$tool" --version >/dev/null 2>&1; then
    log "installing cargo-$tool (crates.io, --locked)"
    cargo install --locked --quiet "cargo-$tool"
  fi
done
command -v objcopy >/dev/null || die "objcopy (binutils) is missing"

SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH
version=$(cargo metadata --no-deps --format-version 1 --locked |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "msgx"))')

# The binary, where cargo-deb looks for it (CARGO_TARGET_DIR=DIR: DIR/release/msgx).
if [ -n "$binary" ]; then
  dist=target/package-bin
  mkdir -p "$dist/release"
  cp -f "$binary" "$dist/release/msgx"
  log "packaging $binary (not a release build)"
else
  dist=target/dist
  cargo_home=${CARGO_HOME:-$HOME/.cargo}
  log "cargo build --release --locked (target/dist, paths remapped)"
  # Rust's paths, and the C libraries' (librdkafka is compiled inside
  # target/, so its debug info would name the checkout; the build id, which
  # the linker computes over the debug info too, would then differ).
  remap_c="-ffile-prefix-map=$PWD=/build/msgx -ffile-prefix-map=$cargo_home=/build/cargo"
  CARGO_TARGET_DIR=$dist \
    RUSTFLAGS="--remap-path-prefix=$PWD=/build/msgx --remap-path-prefix=$cargo_home=/build/cargo" \
    CFLAGS="${CFLAGS:+$CFLAGS }$remap_c" CXXFLAGS="${CXXFLAGS:+$CXXFLAGS }$remap_c" \
    cargo build --release --locked --bin msgx
fi
bin=$dist/release/msgx

# What both packages take from target/package/.
stage=target/package
rm -rf "$stage"
mkdir -p "$stage/units" "$stage/doc" "$stage/examples" "$stage/man" "$stage/completions" "$stage/rpm"
for unit in msgx msgx-standby; do
  sed -e 's#/usr/local/bin/msgx#/usr/bin/msgx#g' \
    -e 's#/usr/local/share/doc/msgx/#/usr/share/doc/msgx/#g' \
    -e '/^# Install: cp /d' -e '/^#  *systemctl enable/d' \
    "deploy/$unit.service" >"$stage/units/$unit.service"
done
cp README.md docs/operations.md docs/configuration.md docs/metrics.md docs/console.md "$stage/doc/"
cp deploy/msgx.cron deploy/schedule-pipeline.toml "$stage/examples/"
"$bin" man-pages "$stage/man"
"$bin" completions bash >"$stage/completions/msgx"
"$bin" completions zsh >"$stage/completions/_msgx"
"$bin" completions fish >"$stage/completions/msgx.fish"
# The RPM's binary: stripped, its debug symbols in a file of their own that
# the binary names (.gnu_debuglink), so gdb finds it in /usr/lib/debug/usr/bin/.
objcopy --only-keep-debug --compress-debug-sections=zlib "$bin" "$stage/rpm/msgx.debug"
objcopy --strip-debug --strip-unneeded --add-gnu-debuglink="$stage/rpm/msgx.debug" "$bin" "$stage/rpm/msgx"
# One file time for everything staged: the archives' times do not depend on
# when the checkout was made.
find "$stage" deploy/package -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

rm -rf "$out"
mkdir -p "$out"
log "cargo deb --dbgsym (SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
CARGO_TARGET_DIR=$dist cargo deb --locked --no-build --dbgsym --output "$out" ${fast:+--fast} \
  ${MSGX_DEB_MAINTAINER:+--maintainer "$MSGX_DEB_MAINTAINER"} >/dev/null
log "cargo generate-rpm"
compress=zstd
[ -z "$fast" ] || compress=gzip
cargo generate-rpm --output "$out" --payload-compress "$compress" >/dev/null
rpm_file=$(ls "$out"/msgx-*.rpm)
cp "$stage/rpm/msgx.debug" "${rpm_file%.rpm}.debug"
log "cargo cyclonedx (SBOM)"
cargo cyclonedx --format json --spec-version 1.5 --license-accept-named Proprietary --override-filename "msgx-$version.cdx" >/dev/null
# Its references name the checkout's path: the same one for every build.
sed "s#path+file://$PWD#path+file:///build/msgx#g" "msgx-$version.cdx.json" >"$out/msgx-$version.cdx.json"
rm -f "msgx-$version.cdx.json"

case $(. /etc/os-release 2>/dev/null && echo "${ID_LIKE:-} ${ID:-}") in
  *rhel* | *fedora*) ;;
  *) log "note: the RPM's binary links this host's libraries (rpm -qpR); for RHEL 9, run this script on a RHEL 9 builder (docs/operations.md)" ;;
esac

(
  cd "$out"
  sha256sum -- * | grep -v ' SHA256SUMS$' >SHA256SUMS
  cat SHA256SUMS
)
