#!/usr/bin/env bash
# Runs every test: native (cargo test), in-browser (wasm-bindgen-test in headless Chromium, on
# WebGPU and on the wasm CPU backend), and the page end to end (trunk build + Playwright driving
# Debian's Chromium). Installs whatever is missing first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "native tests (burn's CPU backend)"
cargo test --locked

step "browser tests (headless Chromium: WebGPU and wasm CPU)"
# SwiftShader runs WebGPU on the CPU: minutes, not seconds.
WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-1200} \
    cargo test --locked --target wasm32-unknown-unknown --test browser

step "page end to end (trunk build, Playwright + Chromium)"
bash scripts/e2e.sh
