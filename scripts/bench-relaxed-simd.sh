#!/usr/bin/env bash
# A benchmark of one idea, not part of the product: would wasm's relaxed SIMD (a fused
# multiply-add, f32x4.relaxed_madd) speed up the page's threaded CPU path? gemm 0.19's wasm
# micro-kernel multiplies then adds, so this builds a second threaded module from patched copies
# of two dependencies, in a temporary folder and never in the project: gemm-f32 with its kernel's
# multiply-add fused, and macerator 0.5 (burn-flex's SIMD) with the fix its relaxed-SIMD code
# needs to compile. Then it trains in the page on both modules in turn, BENCH_ROUNDS (3) rounds,
# and prints each figure. docs/performance.md has the results.
#   scripts/bench-relaxed-simd.sh      (after scripts/build-site.sh)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
[ -f dist/threads/vit-web_bg.wasm ] || { echo "run scripts/build-site.sh first" >&2; exit 1; }
work=$(mktemp -d)
# The patches change Cargo.lock for the build; the project's own is put back whatever happens.
cp Cargo.lock "$work/Cargo.lock"
trap 'cp "$work/Cargo.lock" Cargo.lock; rm -rf "$work"' EXIT

source_of() {
    cargo metadata --locked --format-version 1 | python3 -c "
import json, os, sys
package = next(p for p in json.load(sys.stdin)['packages'] if p['name'] == '$1')
print(os.path.dirname(package['manifest_path']))"
}
# Replaces text that must be there once, so that another version of a crate fails here loudly.
replace() {
    python3 - "$@" <<'PYTHON'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"{path}: expected the text once: {old}")
open(path, "w").write(text.replace(old, new))
PYTHON
}
cp -r "$(source_of gemm-f32)" "$work/gemm-f32"
cp -r "$(source_of macerator)" "$work/macerator"
# The wasm kernel's multiply-add (the only `add(c, mul(a, b))` in the file: the other
# architectures fuse already).
replace "$work/gemm-f32/src/microkernel.rs" "add(c, mul(a, b))" \
    "transmute(f32x4_relaxed_madd(transmute(a), transmute(b), transmute(c)))"
replace "$work/macerator/src/backend/wasm32.rs" "        fn run_vectorized<F: NullaryFnOnce>(f: F) -> F::Output {
            Simd128Relaxed::run_vectorized(f)" "        unsafe fn run_vectorized<F: NullaryFnOnce>(f: F) -> F::Output {
            unsafe { Simd128Relaxed::run_vectorized(f) }"

# The flags of scripts/build-threads.sh, plus relaxed-simd; a target directory of its own.
target_dir=${CARGO_TARGET_DIR:-$PWD/target}/threads-relaxed
flags=(
    -C target-feature=+atomics,+bulk-memory,+simd128,+relaxed-simd
    -C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=4294967296
    -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size
    -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base
)
RUSTC_BOOTSTRAP=1 RUSTFLAGS="${flags[*]}" CARGO_TARGET_DIR="$target_dir" \
    cargo build --quiet --lib --target wasm32-unknown-unknown -Z build-std=panic_abort,std --release \
    --config "patch.crates-io.gemm-f32.path=\"$work/gemm-f32\"" \
    --config "patch.crates-io.macerator.path=\"$work/macerator\""
cp -r dist "$work/dist"
wasm-bindgen --target web --no-typescript --out-dir "$work/dist/threads" --out-name vit-web \
    "$target_dir/wasm32-unknown-unknown/release/vit_web.wasm"
python3 -c "
import sys
for name, path in (('gemm as released', 'dist'), ('fused', '$work/dist')):
    wasm = open(path + '/threads/vit-web_bg.wasm', 'rb').read()
    print(f'{name}: {wasm.count(bytes([0xfd, 0x85, 0x02]))} f32x4.relaxed_madd instructions', file=sys.stderr)"

for round in $(seq "${BENCH_ROUNDS:-3}"); do
    for build in dist "$work/dist"; do
        name=$([ "$build" = dist ] && echo released || echo fused)
        folder=$(realpath "$build")
        (cd tests/e2e && BENCH_DIST="$folder" BENCH_SECTIONS=train BENCH_COMPUTE=cpu BENCH_THREADS=all \
            node bench.mjs) | sed "s/^{/{\"round\":$round,\"gemm\":\"$name\",/"
    done
done
