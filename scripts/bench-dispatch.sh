#!/usr/bin/env bash
# Dispatch throughput (issue 6, item 7): 100,000 pending KAFKA:msg events
# drained by dispatch-msg into the in-process mock cluster (idempotent
# producer, acks=all). Release build. Extra arguments go to the example, e.g.
#   scripts/bench-dispatch.sh --batch 2000
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/services.sh >/dev/null
RUST_LOG=${RUST_LOG:-warn} cargo run --quiet --release --example bench_dispatch -- "$@"
