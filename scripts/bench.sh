#!/usr/bin/env bash
# Benchmarks (not tests), printed as JSON lines, each beside its peer from the same run: native CPU
# training (with PyTorch's just before and after it, BENCH_PEER=1), then the site in headless
# Chromium: what a first visit downloads, the dataset's load, a photo's prediction, training on the
# CPU path on one and on all threads and on WebGPU, WebGPU's kernel times, the learning curve
# against the native trainer's, and (BENCH_MINUTES=10) the test accuracy reached in ten minutes.
# Ends with a summary of the ratios. BENCH_SECTIONS (visit,dataset,predict,train) picks the page's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
source scripts/prepare-data.sh
results=$(mktemp)
record() { tee -a "$results"; }

# BENCH_PEER=1: PyTorch's CPU training of the same model (../shared/peers/torch-vit, in a venv of
# its own with PyPI's torch) right before and after ours, so the comparison is of the same minutes.
peer() {
    [ "${BENCH_PEER:-0}" == 0 ] || bash scripts/peer-pytorch.sh
}
{ peer; cargo run --quiet --profile bench-native --bin bench -- --archive "$CIFAR10_ARCHIVE"; peer; } | record
# BENCH_WGPU=1: burn's GPU kernels natively too, on the machine's GPU; BENCH_WGPU=swiftshader runs
# them on Chromium's SwiftShader instead (the software Vulkan behind WebGPU in headless Chromium
# here). A separate build with the wgpu feature: about ten minutes the first time on two cores.
if [ "${BENCH_WGPU:-0}" != 0 ]; then
    if [ "$BENCH_WGPU" = swiftshader ]; then export VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json; fi
    cargo run --quiet --profile bench-native --features wgpu --bin bench -- --backend wgpu --batches 8,64 --steps 3 --untimed 1 | record
fi

# The page's datasets: the 512-image one, and the 2,000 + 1,000 images the CPU training and the
# learning curve run on.
[ -f www/data/small/manifest.json ] || cargo run --quiet --bin prepare-data -- \
    --archive "$CIFAR10_ARCHIVE" --out www/data/small --count 512 --test-count 500
[ -f www/data/curve/manifest.json ] || cargo run --quiet --bin prepare-data -- \
    --archive "$CIFAR10_ARCHIVE" --out www/data/curve --count 2000 --test-count 1000
bash scripts/build-site.sh
for module in dist/vit-web_bg.wasm dist/threads/vit-web_bg.wasm; do
    echo "{\"bench\":\"wasm_size\",\"module\":\"${module#dist/}\",\"raw_bytes\":$(wc -c < "$module"),\"gzip_bytes\":$(gzip -9 -c "$module" | wc -c)}"
done | record
source scripts/fetch-photo.sh
(cd tests/e2e && { [ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund; } \
    && BENCH_SECTIONS=${BENCH_SECTIONS:-visit,dataset,predict,train} node bench.mjs) | record
# The same forward kernels as `bench`'s native_kernel lines, on WebGPU inside Chromium, then the
# parts of a batch-64 training step there; one page each, so neither runs in the other's memory.
for part in webgpu_kernel_times webgpu_step_parts; do
    WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-1200} cargo test --release --target wasm32-unknown-unknown \
        --test browser -- --include-ignored --nocapture "$part" 2>&1 | grep '"bench"' | record
done

# The learning curve in the page (the CPU path, on all threads) against the native trainer on the
# same 2,000 + 1,000 images and recipe (CURVE_RECIPE, the best 10-epoch one, its schedule over
# CURVE_EPOCHS), with the worker's wasm memory after every epoch. CURVE_EPOCHS=0 skips it (about
# 5 minutes in the page on two cores).
curve_epochs=${CURVE_EPOCHS:-10}
curve_recipe=${CURVE_RECIPE:-best-10-epochs}
if [ "$curve_epochs" -gt 0 ]; then
    metrics=$(mktemp)
    asset=www/data/curve/$(python3 -c 'import json; print(json.load(open("www/data/curve/manifest.json"))["file"])')
    cargo run --quiet --profile bench-native --bin train -- --dataset "$asset" \
        --train-images 2000 --test-images 1000 --recipe "$curve_recipe" --epochs "$curve_epochs" --metrics "$metrics" >&2
    python3 -c 'import json,sys; m = json.load(open(sys.argv[1])); [print(json.dumps(dict(bench="native_curve", recipe=sys.argv[2], batch=m["recipe"]["batch_size"], **e))) for e in m["epochs"]]' "$metrics" "$curve_recipe" | record
    (cd tests/e2e && node curve.mjs data/curve/manifest.json "$curve_epochs" "$curve_recipe") | record
fi
if [ "${BENCH_MINUTES:-0}" != 0 ]; then
    (cd tests/e2e && BENCH_SECTIONS=minutes node bench.mjs) | record
fi
python3 scripts/bench_summary.py "$results"
