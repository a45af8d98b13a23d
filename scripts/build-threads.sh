#!/usr/bin/env bash
# Builds the training worker's threaded CPU module into OUT/threads/ (vit-web.js and its wasm):
# burn's CPU backend and this project's operations on rayon, whose pool is web workers
# (wasm-bindgen-rayon). Trunk runs it after every build (Trunk.toml's post_build hook, OUT being
# its staging folder); `scripts/build-threads.sh OUT` runs it alone.
#
# Threads need a standard library compiled with atomics, so this is a build of its own:
# `-Z build-std` (stable cargo with RUSTC_BOOTSTRAP=1, and the library's sources: rustup's
# rust-src or Debian's rust-web-src), shared-memory link flags, and its own target directory so
# the page's single-threaded build is never invalidated. ../shared/THREADS.md says why each flag.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-${TRUNK_STAGING_DIR:?give the output folder, or run this through trunk}}/threads
profile=${TRUNK_PROFILE:-release}
target_dir=${CARGO_TARGET_DIR:-$PWD/target}/threads
flags=(
    -C target-feature=+atomics,+bulk-memory,+simd128
    # Since rust-lang/rust#147225, +atomics no longer implies these: without them the memory is
    # not shared and initThreadPool fails ("Memory could not be cloned").
    -C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=4294967296
    -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size
    -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base
)
release=()
folder=debug
if [ "$profile" = release ]; then release=(--release); folder=release; fi
RUSTC_BOOTSTRAP=1 RUSTFLAGS="${flags[*]}" CARGO_TARGET_DIR="$target_dir" \
    cargo build --quiet --locked --lib --target wasm32-unknown-unknown -Z build-std=panic_abort,std "${release[@]}"
mkdir -p "$out"
wasm-bindgen --target web --no-typescript --out-dir "$out" --out-name vit-web \
    "$target_dir/wasm32-unknown-unknown/$folder/vit_web.wasm"
