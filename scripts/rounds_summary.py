"""The ratios of a scripts/bench-rounds.sh run (its JSON lines, argument 1): in each round, and of
the means over the rounds. A ratio is only ever taken within one run; the rounds show its spread."""
import json
import statistics
import sys

records = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
rounds = sorted({r["round"] for r in records})


def figures(kind, batch, **match):
    """Images per second of `kind` at `batch`, a list per round (two pages at once: one each)."""
    def fits(r):
        return r.get("bench") == kind and r.get("batch") == batch and all(r.get(k) == v for k, v in match.items())

    return [[speed(r) for r in records if r["round"] == n and fits(r)] for n in rounds]


def speed(r):
    """Images per second after the first step, which warms up: the page's from its later steps,
    as `bench`'s median step does natively and PyTorch's timed steps."""
    if "later_seconds_per_step" in r:
        return r["batch"] / r["later_seconds_per_step"]
    return r["images_per_second"]


def ratio(top, bottom):
    per_round = [t / b for t, b in zip(top, bottom) if t and b]
    means = statistics.mean(top) / statistics.mean(bottom) if top and bottom else float("nan")
    return f"{means:.2f}x of the means ({', '.join(f'{x:.2f}' for x in per_round)} by round)"


print(f"\nsummary ({len(rounds)} rounds in turn)")
machine = [r for r in records if r.get("bench") == "native_machine"]
if machine:
    print(f"  machine: {machine[0]['cpu']}, vector units {machine[0]['vector_units']}, {machine[0]['cores']} cores")
for batch in sorted({r["batch"] for r in records if "batch" in r}):
    native = [sum(f) for f in figures("native_train", batch, backend="flex")]
    pytorch = [sum(f) for f in figures("peer_pytorch_train", batch)]
    one = [sum(f) for f in figures("browser_train", batch, compute="cpu", threads=1, together=None)]
    threads = max((r["threads"] for r in records if r.get("bench") == "browser_train" and r["batch"] == batch), default=1)
    most = [sum(f) for f in figures("browser_train", batch, compute="cpu", threads=threads)] if threads > 1 else []
    # Two one-thread pages at once: their images per second together.
    together = [sum(f) for f in figures("browser_train", batch, compute="cpu", threads=1, together=2)]
    mean = statistics.mean
    print(f"  batch {batch}:")
    if native and pytorch:
        print(f"    native {mean(native):.0f} img/s, PyTorch {mean(pytorch):.0f}: native / PyTorch {ratio(native, pytorch)}")
    if one and most:
        print(f"    page {mean(one):.0f} img/s on 1 thread, {mean(most):.0f} on {threads}: threads / one thread {ratio(most, one)}")
    if one and together:
        print(f"    two one-thread pages at once {mean(together):.0f} img/s together, against one page alone {ratio(together, one)}: what the cores allow")
    if most and native:
        print(f"    page on all threads / native {ratio(most, native)}")
