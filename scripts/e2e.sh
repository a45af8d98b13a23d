#!/usr/bin/env bash
# Builds the release page and tests it end to end in Debian's Chromium (tests/e2e).
# Expects scripts/setup.sh to have run (scripts/test.sh does that).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/prepare-data.sh
# A small dataset (512 training, 500 test images) so a training run fits in a test on the CPU path.
[ -f www/data/small/manifest.json ] || cargo run --quiet --bin prepare-data -- \
    --archive "$CIFAR10_ARCHIVE" --out www/data/small --count 512 --test-count 500
# A real photograph larger than 1000×1000 for the upload test: "Kleiber" (a nuthatch, 6028×3391,
# CC-BY-SA-3.0, Lukas Baubkus) from Debian's lomiri-wallpapers-20.04; fetched, never committed.
photos="$HOME/.cache/vit-web/photos"
export TEST_PHOTO="$photos/Kleiber_by_Lukas_Baubkus.jpg"
if [ ! -s "$TEST_PHOTO" ]; then
    mkdir -p "$photos"
    sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    (cd "$photos" && { apt-get download -q lomiri-wallpapers-20.04 >/dev/null 2>&1 ||
        { sudo_if_needed apt-get update -q >/dev/null && apt-get download -q lomiri-wallpapers-20.04; }; })
    dpkg-deb --fsys-tarfile "$photos"/lomiri-wallpapers-20.04_*_all.deb |
        tar -x -O ./usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg > "$TEST_PHOTO.part"
    mv "$TEST_PHOTO.part" "$TEST_PHOTO"
    rm -f "$photos"/lomiri-wallpapers-20.04_*_all.deb
fi
# Weight files the tests upload (a small-preset model), written by a native test.
export E2E_FIXTURES_DIR="$HOME/.cache/vit-web/e2e-fixtures"
cargo test --quiet --locked --test weights writes_e2e_fixtures >/dev/null
trunk build --release --offline
(cd tests/e2e && { [ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund; } && npm test)
