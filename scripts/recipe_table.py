"""Per-epoch test accuracy of recipe runs (train --metrics files, arguments without .json) as one
Markdown table, with each run's train accuracy at its last epoch. No times: these runs share the
machine with whatever else runs, so speed comes from the benchmarks."""
import json
import sys

runs = [(path.rsplit("/", 1)[-1], json.load(open(path + ".json"))) for path in sys.argv[1:]]
epochs = max(len(run["epochs"]) for _, run in runs)
shown = range(1, epochs + 1) if epochs <= 12 else sorted({1, 2, 5, 10, 20, 30, 50, 100, epochs} & set(range(1, epochs + 1)))
print("| run | " + " | ".join(str(epoch) for epoch in shown) + " | train acc |")
print("|---|" + "---|" * (len(shown) + 1))
for name, run in runs:
    by_epoch = {e["epoch"]: e for e in run["epochs"]}
    cells = [f"{100 * by_epoch[epoch]['test_accuracy']:.1f}" if epoch in by_epoch else "" for epoch in shown]
    last = run["epochs"][-1]
    if last["epoch"] in shown:
        cells[list(shown).index(last["epoch"])] = f"**{100 * last['test_accuracy']:.1f}**"
    print(f"| {name} | " + " | ".join(cells) + f" | {100 * last['train_accuracy']:.1f} |")
