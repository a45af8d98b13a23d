"""Per-epoch test accuracy of recipe runs (train --metrics files, arguments without .json) as one
Markdown table, then each run's last epoch: train and test accuracy and seconds of training."""
import json
import sys

runs = [(path.rsplit("/", 1)[-1], json.load(open(path + ".json"))) for path in sys.argv[1:]]
epochs = max(len(run["epochs"]) for _, run in runs)
shown = range(1, epochs + 1) if epochs <= 12 else sorted({1, 2, 5, 10, 20, 30, 50, 100, epochs} & set(range(1, epochs + 1)))
print("| run | " + " | ".join(str(epoch) for epoch in shown) + " | train acc | minutes |")
print("|---|" + "---|" * (len(shown) + 2))
for name, run in runs:
    by_epoch = {e["epoch"]: e for e in run["epochs"]}
    cells = [f"{100 * by_epoch[epoch]['test_accuracy']:.1f}" if epoch in by_epoch else "" for epoch in shown]
    last = run["epochs"][-1]
    if last["epoch"] in shown:
        cells[list(shown).index(last["epoch"])] = f"**{100 * last['test_accuracy']:.1f}**"
    minutes = sum(e["train_seconds"] for e in run["epochs"]) / 60
    print(f"| {name} | " + " | ".join(cells) + f" | {100 * last['train_accuracy']:.1f} | {minutes:.1f} |")
