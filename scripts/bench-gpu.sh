#!/usr/bin/env bash
# The GPU path against PyTorch on the same GPU, in one run: `bench --backend wgpu` (the page's
# WebGPU kernels, natively through wgpu: Vulkan, Metal or DX12) beside PyTorch eager on CUDA
# (../shared/gpu/bench_cuda.py, the same tiny ViT, AdamW, one step = upload + forward + backward
# + step, waiting for the loss), at batch 64, 256 and 1024, then a table of the ratios, the
# prediction times, each training step's kernel launches, and each kernel's GPU time in one step
# and one prediction (from the device's timestamps: where the next gain is). Ours assembles the next batch on the
# CPU while the GPU runs the step, as training does; the peer's batches are made before its clock
# starts.
#
#   scripts/bench-gpu.sh [out.jsonl]
#
# Needs a GPU with a Vulkan (or Metal, DX12) driver and, for the peer, a python3 that imports
# torch with CUDA; nothing is downloaded. Environment:
#   BENCH_BIN   a bench binary built with `--features wgpu` (default: build it here with cargo)
#   SHARED      the folder holding gpu/bench_cuda.py and peers/torch-vit/vit.py (default ../shared)
#   BATCHES     default 64,256,1024;  STEPS default 20 (timed steps, after 3 untimed)
#   PYTHON      default python3
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench-gpu.jsonl}
batches=${BATCHES:-64,256,1024}
steps=${STEPS:-20}
shared=${SHARED:-../shared}
python=${PYTHON:-python3}

if [ -z "${BENCH_BIN:-}" ]; then
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/vit-web/target}
    cargo build --locked --profile bench-native --features wgpu --bin bench >&2
    BENCH_BIN=$CARGO_TARGET_DIR/bench-native/bench
fi

: >"$out"
echo "== ours: bench --backend wgpu (batches $batches)" >&2
"$BENCH_BIN" --backend wgpu --batches "$batches" --steps "$steps" --untimed 3 \
    --sections train,predict,launches,profile | grep '^{' | tee -a "$out" >&2

if "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "== PyTorch eager on CUDA" >&2
    peer=$(mktemp -d)
    cp "$shared/gpu/bench_cuda.py" "$peer/"
    cp "$shared/peers/torch-vit/vit.py" "$peer/"
    (cd "$peer" && PYTHONPATH="$peer" "$python" bench_cuda.py --mode eager --batches "$batches" --steps 30 --warmup 5) |
        grep '^{' | tee -a "$out" >&2
    rm -rf "$peer"
else
    echo "== no python3 with CUDA torch here: ours alone" >&2
fi

"$python" scripts/gpu_summary.py "$out"
