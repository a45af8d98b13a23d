#!/usr/bin/env bash
# The training-speed figures that machines of this kind are too noisy to take from one run:
# BENCH_ROUNDS (3) rounds, each in turn PyTorch's CPU training of the same model, the native
# trainer, the page's CPU path on one thread and on all threads, and two one-thread pages at once
# (what the cores allow two independent workers, the ceiling for the threaded page). JSON lines
# with a "round" field, then each ratio per round and of the means (scripts/rounds_summary.py).
# About four minutes a round on two cores, after the builds.
#   scripts/bench-rounds.sh            (BENCH_BATCHES=64,256; BENCH_PEER=0 leaves PyTorch out)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
source scripts/prepare-data.sh
[ -f www/data/curve/manifest.json ] || cargo run --quiet --bin prepare-data -- \
    --archive "$CIFAR10_ARCHIVE" --out www/data/curve --count 2000 --test-count 1000
bash scripts/build-site.sh
(cd tests/e2e && { [ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund; })
batches=${BENCH_BATCHES:-64,256}
results=$(mktemp)
trap 'rm -f "$results"' EXIT

page() {
    (cd tests/e2e && env BENCH_SECTIONS=train BENCH_COMPUTE=cpu BENCH_BATCHES="$batches" "$@" node bench.mjs)
}
for round in $(seq "${BENCH_ROUNDS:-3}"); do
    {
        if [ "${BENCH_PEER:-1}" != 0 ]; then
            BATCHES=${batches//,/ } bash scripts/peer-pytorch.sh
        fi
        cargo run --quiet --profile bench-native --bin bench -- --archive "$CIFAR10_ARCHIVE" --sections train \
            --batches "$batches" --steps 20 | grep -E '"bench":"native_(machine|train)"'
        page BENCH_THREADS=1
        page BENCH_THREADS=all
        page BENCH_THREADS=1 BENCH_TOGETHER=2
    } | sed "s/^{/{\"round\":$round,/" | tee -a "$results"
done
python3 scripts/rounds_summary.py "$results"
