#!/usr/bin/env bash
# The recipe search behind docs/recipes.md, rerunnable from the archive: each variant is one native
# `train` run on the first 20,000 training records, tested on all 10,000 test images after every
# epoch. A run's metrics land in runs/recipes/NAME.json (a run already there is not repeated) and
# every run asked for is printed as one per-epoch table at the end. A run stopped midway leaves its
# checkpoint (runs/recipes/NAME.vitckpt): the same command continues it after its last epoch.
#   scripts/recipes.sh                  the variants below (4-6 minutes per 10 epochs on two cores)
#   scripts/recipes.sh best-s0 best-s1  the ones named
#   scripts/recipes.sh --list           their names and flags
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# name | train flags (on top of the reference recipe: batch 256, lr 1e-3, weight decay 0.05,
# cosine, no warm-up, no smoothing, flip, 10 epochs, seed 0)
VARIANTS="
reference       |
smooth-b128     | --batch 128 --lr 1.5e-3 --warmup 100 --label-smoothing 0.1
steps-b128      | --batch 128 --lr 1.5e-3 --warmup 100
crop-b128       | --batch 128 --lr 1.5e-3 --warmup 100 --label-smoothing 0.1 --augment crop
crop-b128-lr2   | --batch 128 --lr 2e-3 --warmup 200 --label-smoothing 0.1 --augment crop
heavy-b128      | --batch 128 --lr 1.5e-3 --warmup 100 --label-smoothing 0.1 --augment heavy
crop-b64        | --batch 64 --lr 1e-3 --warmup 200 --label-smoothing 0.1 --augment crop
flip-b64        | --batch 64 --lr 1e-3 --warmup 200 --label-smoothing 0.1
flip-b64-lr2    | --batch 64 --lr 2e-3 --warmup 300 --label-smoothing 0.1
flip-b32        | --batch 32 --lr 7e-4 --warmup 400 --label-smoothing 0.1
flip-b32-lr1    | --batch 32 --lr 1e-3 --warmup 400 --label-smoothing 0.1
flip-b32-wd0.1  | --batch 32 --lr 7e-4 --warmup 400 --label-smoothing 0.1 --weight-decay 0.1
flip-b16        | --batch 16 --lr 5e-4 --warmup 800 --label-smoothing 0.1
t5-b64          | --epochs 5 --batch 64 --lr 1e-3 --warmup 200 --label-smoothing 0.1
t5-b32          | --epochs 5 --batch 32 --lr 7e-4 --warmup 400 --label-smoothing 0.1
flip-b32-wd0.1-s1 | --batch 32 --lr 7e-4 --warmup 400 --label-smoothing 0.1 --weight-decay 0.1 --seed 1
flip-b32-wd0.1-30 | --batch 32 --lr 7e-4 --warmup 400 --label-smoothing 0.1 --weight-decay 0.1 --epochs 30
b32-mimetic     | --batch 32 --lr 7e-4 --warmup 400 --label-smoothing 0.1 --weight-decay 0.1 --init mimetic
b32-sincos      | --batch 32 --lr 7e-4 --warmup 400 --label-smoothing 0.1 --weight-decay 0.1 --init sincos
b32-mim-sincos  | --batch 32 --lr 7e-4 --warmup 400 --label-smoothing 0.1 --weight-decay 0.1 --init mimetic-sincos
b32-mim-sincos-s1 | --batch 32 --lr 7e-4 --warmup 400 --label-smoothing 0.1 --weight-decay 0.1 --init mimetic-sincos --seed 1
reference-mim-sincos | --init mimetic-sincos
t5-b64-mim-sincos | --epochs 5 --batch 64 --lr 1e-3 --warmup 200 --label-smoothing 0.1 --init mimetic-sincos
best-s0         | --recipe best-10-epochs --seed 0
best-s1         | --recipe best-10-epochs --seed 1
best-30         | --recipe best-10-epochs --epochs 30
best-100        | --recipe best-10-epochs --epochs 100
best-crop-30    | --recipe best-10-epochs --epochs 30 --augment crop
best-crop-100   | --recipe best-10-epochs --epochs 100 --augment crop
small-crop-30   | --recipe best-10-epochs --epochs 30 --augment crop --preset small
small-crop-100  | --recipe best-10-epochs --epochs 100 --augment crop --preset small
"
flags_of() { echo "$VARIANTS" | awk -F'|' -v name="$1" '{gsub(/ +$/, "", $1)} $1 == name {print $2; found=1} END {exit !found}'; }
names=("$@")
if [ "${1:-}" = --list ]; then echo "$VARIANTS" | sed '/^$/d'; exit 0; fi
[ ${#names[@]} -gt 0 ] || mapfile -t names < <(echo "$VARIANTS" | awk -F'|' 'NF > 1 {gsub(/ +$/, "", $1); print $1}')
for name in "${names[@]}"; do flags_of "$name" >/dev/null || { echo "recipes.sh: no variant '$name' (--list shows them)" >&2; exit 2; }; done

source scripts/setup.sh
source scripts/prepare-data.sh
mkdir -p runs/recipes
cargo build --quiet --profile bench-native --bin train
train=${CARGO_TARGET_DIR:-target}/bench-native/train
for name in "${names[@]}"; do
    out=runs/recipes/$name.json
    [ -f "$out" ] && continue
    echo "== $name: train$(flags_of "$name")" >&2
    # shellcheck disable=SC2046 # the flags split into words on purpose
    "$train" --archive "$CIFAR10_ARCHIVE" $(flags_of "$name") --metrics "$out.part" --out "runs/recipes/$name.safetensors" \
        --checkpoint "runs/recipes/$name.vitckpt" >&2
    mv "$out.part" "$out"
    rm "runs/recipes/$name.vitckpt"
done
python3 scripts/recipe_table.py "${names[@]/#/runs/recipes/}"
