"""The multiply-adds the GPU family's tiled products of one training step issue, against those
their shapes need, from the launch report's `launch_product` lines (`bench --backend wgpu
--sections launches`): issued = workgroups × 256 invocations × the block (4×4 or 8×8) × the
steps of K one invocation loops over, rounded up to the tile's depth. "Before" is what the
kernel issued until 2026-12-07, when the bias's row of ones took a row of 64×64 tiles of its
own: the same shapes on that grid.

    python3 scripts/product_work.py launches.jsonl
"""
import json
import math
import re
import sys

totals = {}
for line in open(sys.argv[1]):
    if not line.startswith('{"bench":"launch_product"'):
        continue
    launch = json.loads(line)
    if launch["family"] != "hardware" or launch["what"] != "train_step":
        continue
    detail = launch["detail"]
    field = lambda name: re.search(name + r": (\w+)", detail).group(1)
    batch, a_rows, k, n = (int(field(name)) for name in ("batch", "a_rows", "k", "n"))
    ones = field("ones_row") == "true"
    wide = field("tile") == "Wide"
    block, depth = (8, 8) if wide else (4, 16)
    issued = launch["workgroups"] * 256 * block * block * math.ceil(launch["serial_steps"] / depth) * depth
    needed = batch * a_rows * n * k
    before = batch * math.ceil((a_rows + ones) / 64) * 64 * math.ceil(n / 64) * 64 * math.ceil(k / 16) * 16
    total = totals.setdefault(launch["batch"], {"products": 0, "wide": 0, "issued": 0, "needed": 0, "before": 0})
    for key, value in (("products", 1), ("wide", wide), ("issued", issued), ("needed", needed), ("before", before)):
        total[key] += value

print("| batch | tiled products (wide) | multiply-adds needed | issued / needed | before / needed |")
print("|---|---|---|---|---|")
for batch, t in sorted(totals.items()):
    print(f"| {batch} | {t['products']} ({t['wide']}) | {t['needed'] / 1e9:.2f} G | {t['issued'] / t['needed']:.3f} | {t['before'] / t['needed']:.3f} |")
