#!/usr/bin/env bash
# Runs every test: native (cargo test), the weight format against PyTorch, in-browser (wasm-pack
# test: wasm-bindgen-test in headless Chromium, on WebGPU and on the wasm CPU backend, then in
# headless Firefox on the wasm CPU backend), and the static site end to end (Playwright driving
# Debian's Chromium; Firefox and WebKit through WebDriver). Installs whatever is missing first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WITH_TORCH=1 source scripts/setup.sh
# Every native build below (tests, the dataset, e2e fixtures) with the same features, so burn
# compiles once: wgpu, for the GPU operations' native tests.
export NATIVE_FEATURES=wgpu

# Each layer's heading says how long the run has taken so far (docs/testing.md quotes these).
step() { printf '\n\033[1m== %s\033[0m (at %d min %02d s)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

step "native tests (burn's CPU backend; the GPU operations on wgpu, SwiftShader's Vulkan)"
# --features wgpu adds tests/gpu_ops.rs: every GPU kernel against its definition, in both kernel
# families, on Chromium's SwiftShader through Vulkan's loader (the same software renderer the
# browser tests run WebGPU on). A machine's own GPU takes them too: unset VK_ICD_FILENAMES.
VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-$SWIFTSHADER_ICD} cargo test --locked --features "$NATIVE_FEATURES"

step "weights against PyTorch (docs/weights.md's snippets, both ways)"
check_dir=$(mktemp -d)
PYTORCH_CHECK_DIR=$check_dir cargo test --locked --features "$NATIVE_FEATURES" --test weights writes_the_pytorch_cross_check
python3 tests/python/check_without_torch.py "$check_dir/weights.safetensors" "$check_dir/expected.json"
"$TORCH_PYTHON" tests/python/check_pytorch_load.py "$check_dir/weights.safetensors" "$check_dir/expected.json"
PYTORCH_CHECK_DIR=$check_dir cargo test --locked --features "$NATIVE_FEATURES" --test weights loads_the_pytorch_state_dict
rm -rf "$check_dir"

step "the site (scripts/build-site.sh: the page, both wasm modules, the service worker)"
bash scripts/build-site.sh

step "browser tests: wasm-pack test --headless --chrome (WebGPU and wasm CPU in headless Chromium)"
# --release shares every compiled dependency with the site build above; SwiftShader runs WebGPU
# on the CPU, so its tests take minutes, not seconds.
WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-1200} wasm-pack test --headless --chrome --release

step "browser tests in Firefox: wasm-pack test --headless --firefox (the wasm CPU path; no WebGPU there)"
# Firefox on Linux offers no WebGPU: built with this variable, the WebGPU tests are ignored with
# their reason printed (build.rs), and everything else runs as in Chromium. --geckodriver names
# setup.sh's build from crates.io, so wasm-pack never downloads one.
VIT_WEB_BROWSER_WITHOUT_WEBGPU=1 WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-1200} \
    wasm-pack test --headless --firefox --geckodriver "$(command -v geckodriver)" --release

step "page end to end (dist/ from a plain static server, Playwright + Chromium)"
bash scripts/e2e.sh
step "all tests passed"
