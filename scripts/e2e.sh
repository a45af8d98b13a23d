#!/usr/bin/env bash
# Builds the static site (scripts/build-site.sh: the page, both wasm modules, the service worker)
# and tests it end to end in Debian's Chromium (tests/e2e), served by a plain static file server
# with no special headers, as a static host serves it. Expects scripts/setup.sh to have run
# (scripts/test.sh does that).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/prepare-data.sh
# A small dataset (512 training, 500 test images) so a training run fits in a test on the CPU path.
[ -f www/data/small/manifest.json ] || cargo run --quiet ${NATIVE_FEATURES:+--features "$NATIVE_FEATURES"} --bin prepare-data -- \
    --archive "$CIFAR10_ARCHIVE" --out www/data/small --count 512 --test-count 500
source scripts/fetch-photo.sh
# Weight files the tests upload (a small-preset model) and picture folders and zips they import,
# written by native tests.
export E2E_FIXTURES_DIR="$HOME/.cache/vit-web/e2e-fixtures"
cargo test --quiet --locked ${NATIVE_FEATURES:+--features "$NATIVE_FEATURES"} --test weights --test fine_tune writes_e2e_fixtures >/dev/null
bash scripts/build-site.sh
(cd tests/e2e && { [ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund; } && npm test)
