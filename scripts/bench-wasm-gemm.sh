#!/usr/bin/env bash
# Benchmarks of two ideas for gemm's wasm micro-kernel, where the threaded page spends most of
# its time; not part of the product. Each builds a second threaded module from a patched copy of
# gemm-f32, in a temporary folder and never in the project, then trains in the page on both
# modules in turn, BENCH_ROUNDS (3) rounds, and prints each figure. docs/performance.md has the
# results.
#   fused: wasm's relaxed SIMD fuses the kernel's multiply-add (f32x4.relaxed_madd) where gemm
#          0.19 multiplies then adds; macerator 0.5 (burn-flex's SIMD) also needs a fix for its
#          relaxed-SIMD code to compile.
#   8x4:   an 8x4 register tile instead of 12x4, whose live vectors outnumber V8's registers.
#   scripts/bench-wasm-gemm.sh fused|8x4      (after scripts/build-site.sh)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
variant=${1:-}
case "$variant" in
    fused | 8x4) ;;
    *) echo "usage: scripts/bench-wasm-gemm.sh fused|8x4" >&2; exit 2 ;;
esac
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
features=+atomics,+bulk-memory,+simd128
patches=(--config "patch.crates-io.gemm-f32.path=\"$work/gemm-f32\"")
cp -r "$(source_of gemm-f32)" "$work/gemm-f32"
case "$variant" in
    fused)
        # The wasm kernel's multiply-add (the only `add(c, mul(a, b))` in the file: the other
        # architectures fuse already).
        replace "$work/gemm-f32/src/microkernel.rs" "add(c, mul(a, b))" \
            "transmute(f32x4_relaxed_madd(transmute(a), transmute(b), transmute(c)))"
        cp -r "$(source_of macerator)" "$work/macerator"
        replace "$work/macerator/src/backend/wasm32.rs" "        fn run_vectorized<F: NullaryFnOnce>(f: F) -> F::Output {
            Simd128Relaxed::run_vectorized(f)" "        unsafe fn run_vectorized<F: NullaryFnOnce>(f: F) -> F::Output {
            unsafe { Simd128Relaxed::run_vectorized(f) }"
        patches+=(--config "patch.crates-io.macerator.path=\"$work/macerator\"")
        features+=,+relaxed-simd
        ;;
    8x4)
        # The wasm kernels' table (the only one with these names) loses its 12-row kernels.
        replace "$work/gemm-f32/src/microkernel.rs" "            [x2x1, x2x2, x2x3, x2x4,],
            [x3x1, x3x2, x3x3, x3x4,]," "            [x2x1, x2x2, x2x3, x2x4,],"
        ;;
esac

# The flags of scripts/build-threads.sh (and relaxed-simd for "fused"); a target directory of
# its own.
target_dir=${CARGO_TARGET_DIR:-$PWD/target}/threads-gemm
flags=(
    -C target-feature=$features
    -C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=4294967296
    -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size
    -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base
)
RUSTC_BOOTSTRAP=1 RUSTFLAGS="${flags[*]}" CARGO_TARGET_DIR="$target_dir" \
    cargo build --quiet --lib --target wasm32-unknown-unknown -Z build-std=panic_abort,std --release "${patches[@]}"
cp -r dist "$work/dist"
wasm-bindgen --target web --no-typescript --out-dir "$work/dist/threads" --out-name vit-web \
    "$target_dir/wasm32-unknown-unknown/release/vit_web.wasm"
python3 -c "
import sys
for name, path in (('gemm as released', 'dist'), ('$variant', '$work/dist')):
    wasm = open(path + '/threads/vit-web_bg.wasm', 'rb').read()
    print(f'{name}: {wasm.count(bytes([0xfd, 0x85, 0x02]))} f32x4.relaxed_madd instructions', file=sys.stderr)"

for round in $(seq "${BENCH_ROUNDS:-3}"); do
    for build in dist "$work/dist"; do
        name=$([ "$build" = dist ] && echo released || echo "$variant")
        folder=$(realpath "$build")
        (cd tests/e2e && BENCH_DIST="$folder" BENCH_SECTIONS=train BENCH_COMPUTE=cpu BENCH_THREADS=all \
            node bench.mjs) | sed "s/^{/{\"round\":$round,\"gemm\":\"$name\",/"
    done
done
