#!/usr/bin/env bash
# The page's matrix product against gemm's, alone in node on one thread, on a training step's
# shapes (scripts/wasm-product/bench.mjs lists them); not part of the product. Builds a small wasm
# module from scripts/wasm-product/lib.rs, which includes src/ops/cpu/panel_product.rs, with the
# gemm that Cargo.lock pins and its simd128 kernels, in a temporary folder.
#   scripts/bench-wasm-product.sh            (IMAGES=16 for a smaller slice)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gemm_version=$(cargo metadata --locked --format-version 1 | python3 -c "
import json, sys
print(next(p['version'] for p in json.load(sys.stdin)['packages'] if p['name'] == 'gemm'))")
cat > "$work/Cargo.toml" <<TOML
[package]
name = "wasm-product"
version = "0.0.0"
edition = "2024"

[lib]
path = "$PWD/scripts/wasm-product/lib.rs"
crate-type = ["cdylib"]

[dependencies]
# The project's gemm, with the simd128 kernels that its wasm build selects through burn.
gemm = { version = "=$gemm_version", default-features = false, features = ["std", "wasm-simd128-enable"] }

[profile.release]
codegen-units = 1
lto = true
panic = "abort"
TOML
# The project's lock file pins gemm's own dependencies to the versions the page builds with.
cp Cargo.lock "$work/Cargo.lock"
target_dir=${CARGO_TARGET_DIR:-$PWD/target}/wasm-product
RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR="$target_dir" \
    cargo build --quiet --release --target wasm32-unknown-unknown --manifest-path "$work/Cargo.toml"
node scripts/wasm-product/bench.mjs "$target_dir/wasm32-unknown-unknown/release/wasm_product.wasm"
