#!/usr/bin/env bash
# Runs every test: native (cargo test), in-browser (wasm-bindgen-test in headless Chromium, on
# WebGPU and on the wasm CPU backend), and the page end to end (trunk build + Playwright driving
# Debian's Chromium). Installs whatever is missing first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WITH_TORCH=1 source scripts/setup.sh

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "native tests (burn's CPU backend)"
cargo test --locked

step "weights against PyTorch (docs/weights.md's snippets, both ways)"
check_dir=$(mktemp -d)
PYTORCH_CHECK_DIR=$check_dir cargo test --locked --test weights writes_the_pytorch_cross_check
python3 tests/python/check_without_torch.py "$check_dir/weights.safetensors" "$check_dir/expected.json"
"$TORCH_PYTHON" tests/python/check_pytorch_load.py "$check_dir/weights.safetensors" "$check_dir/expected.json"
PYTORCH_CHECK_DIR=$check_dir cargo test --locked --test weights loads_the_pytorch_state_dict
rm -rf "$check_dir"

step "browser tests (headless Chromium: WebGPU and wasm CPU)"
# SwiftShader runs WebGPU on the CPU: minutes, not seconds.
WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-1200} \
    cargo test --locked --target wasm32-unknown-unknown --test browser

step "page end to end (trunk build, Playwright + Chromium)"
bash scripts/e2e.sh
