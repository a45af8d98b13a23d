"""The ratios behind the headline figures, from one scripts/bench.sh run's JSON lines (argument 1):
each figure is divided by its peer from the same run, never by one from another run."""
import json
import statistics
import sys

records = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]


def each(kind, **match):
    return [r for r in records if r.get("bench") == kind and all(r.get(k) == v for k, v in match.items())]


print("\nsummary (this run)")
machine = each("native_machine")
if machine:
    print(f"  machine: {machine[0]['cpu']}, vector units {machine[0]['vector_units']}, {machine[0]['cores']} cores")
for batch in (64, 256):
    ours = [r["images_per_second"] for r in each("native_train", batch=batch, backend="flex")]
    peer = [r["images_per_second"] for r in each("peer_pytorch_train", batch=batch)]
    if ours and peer:
        print(f"  native training, batch {batch}: {ours[0]:.0f} img/s; PyTorch {min(peer):.0f}-{max(peer):.0f}: "
              f"{ours[0] / statistics.mean(peer):.2f}x")
    page = {r["threads"]: r["images_per_second"] for r in each("browser_train", compute="cpu", batch=batch)}
    if len(page) >= 2:
        one, most = page[min(page)], page[max(page)]
        line = f"  page, CPU path, batch {batch}: {one:.0f} img/s on 1 thread, {most:.0f} on {max(page)}: {most / one:.2f}x"
        if ours:
            line += f"; {most / ours[0]:.2f}x native"
        print(line)
for r in each("wasm_size"):
    print(f"  {r['module']}: {r['raw_bytes'] / 1e6:.1f} MB, {r['gzip_bytes'] / 1e6:.2f} MB gzipped")
for r in each("browser_first_visit"):
    print(f"  first visit, {r['compute']} path: {r['bytes'] / 1e6:.1f} MB in {r['files']} files, ready in {r['seconds']:.1f} s")
for r in each("browser_minutes"):
    def after(minutes):
        return "not reached" if minutes is None else f"after {minutes:.1f} min"

    print(f"  {r['minutes']} minutes of the {r.get('recipe', 'default')} recipe in the page ({r['threads']} threads, {r['steps']} steps): "
          f"{r['accuracy_at_end']} % test accuracy; 50 % {after(r['minutes_to_50'])}, 55 % {after(r['minutes_to_55'])}")
native_curve = {r["epoch"]: r for r in each("native_curve")}
browser_curve = {r["epoch"]: r for r in each("browser_curve")}
if native_curve and browser_curve:
    gaps = [abs(100 * native_curve[e]["test_accuracy"] - float(str(browser_curve[e]["test_accuracy"]).rstrip("%")))
            for e in native_curve if e in browser_curve]
    last = max(e for e in native_curve if e in browser_curve)
    print(f"  learning curve, {browser_curve[last].get('recipe', 'reference')} recipe, page against native: test accuracy "
          f"within {max(gaps):.1f} points at every epoch; epoch {last}: page {browser_curve[last]['test_accuracy']}, "
          f"native {100 * native_curve[last]['test_accuracy']:.1f} %")
