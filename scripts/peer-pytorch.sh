#!/usr/bin/env bash
# PyTorch's CPU training of the same model (../shared/peers/torch-vit, copied to a writable folder,
# in a venv of its own with PyPI's torch) as JSON lines `bench` can stand beside: the peer of the
# training figures in scripts/bench.sh and scripts/bench-rounds.sh. BATCHES ("64 256") picks the
# batch sizes, as the peer's run.sh does.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=$HOME/.cache/vit-web/peers/torch-vit
mkdir -p "$dir" && cp ../shared/peers/torch-vit/*.py ../shared/peers/torch-vit/run.sh "$dir"/
"$dir"/run.sh | python3 -c 'import json, sys
for r in map(json.loads, sys.stdin):
    print(json.dumps(dict(bench="peer_pytorch_train", batch=r["batch"], images_per_second=r["train_img_per_s"],
                          omp_wait_policy=r["omp_wait_policy"])))'
