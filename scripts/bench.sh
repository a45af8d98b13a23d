#!/usr/bin/env bash
# Benchmarks (not tests): native CPU throughput, then the page in headless Chromium (dataset
# load, training images/s on the wasm CPU path and on WebGPU). Prints JSON lines.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
source scripts/prepare-data.sh
cargo run --quiet --profile bench-native --bin bench -- --archive "$CIFAR10_ARCHIVE"
[ -f www/data/small/manifest.json ] || cargo run --quiet --bin prepare-data -- \
    --archive "$CIFAR10_ARCHIVE" --out www/data/small --count 512 --test-count 500
trunk build --release --offline
(cd tests/e2e && { [ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund; } && node bench.mjs)
