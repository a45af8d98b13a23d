#!/usr/bin/env bash
# Builds the release page and tests it end to end in Debian's Chromium (tests/e2e).
# Expects scripts/setup.sh to have run (scripts/test.sh does that).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
trunk build --release --offline
(cd tests/e2e && { [ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund; } && npm test)
