"""The tables scripts/bench-gpu.sh ends with: our training and prediction on the GPU beside
PyTorch eager's from the same run, with the ratios, each training step's launches, and where a
step's GPU time goes, kernel by kernel."""
import json
import sys

lines = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
ours = {l["batch"]: l for l in lines if l.get("bench") == "native_train"}
peer = {l["batch"]: l for l in lines if l.get("peer") == "pytorch-cuda"}
machine = next((l for l in lines if l.get("bench") == "native_machine"), {})
gpu = next((l.get("gpu") for l in lines if l.get("gpu")), "the GPU")

print(f"\ntraining on {gpu} (ours: wgpu; peer: PyTorch {next((l['torch'] for l in peer.values()), '-')} eager, CUDA)")
print("| batch | ours img/s (ms/step) | PyTorch img/s (ms/step) | ours / PyTorch |")
print("|---|---|---|---|")
for batch in sorted(ours):
    o = ours[batch]
    p = peer.get(batch)
    theirs = f"{p['train_img_per_s']:,.0f} ({p['train_ms_per_step']:.1f})" if p else "-"
    ratio = f"{o['images_per_second'] / p['train_img_per_s']:.2f}×" if p else "-"
    print(f"| {batch} | {o['images_per_second']:,.0f} ({o['step_ms_median']:.1f}) | {theirs} | {ratio} |")
batches = sorted(ours)
for small, large in zip(batches, batches[1:]):
    print(f"step at batch {large} / step at batch {small}: {ours[large]['step_ms_median'] / ours[small]['step_ms_median']:.2f}×")

predict = next((l for l in lines if l.get("bench") == "native_predict_one_with_attention"), None)
if predict:
    theirs = next((l["predict_one_ms"] for l in peer.values()), None)
    print(f"\none prediction with attention: ours {predict['ms_median']:.2f} ms (the page's whole explanation, "
          f"mirror image included: {predict['explain_ms_median']:.2f} ms); PyTorch {theirs if theirs else '-'} ms")

print("\nlaunches per training step (and the longest sum over the batch one invocation adds)")
print("| batch | family | launches | ours | longest batch sum |")
print("|---|---|---|---|---|")
for l in lines:
    if l.get("bench") == "launches" and l["what"] == "train_step":
        print(f"| {l['batch']} | {l['family']} | {l['launches']} | {l['ours']} | {l['longest_batch_sum']} |")
for l in lines:
    if l.get("bench") == "launches" and l["what"] != "train_step":
        print(f"{l['what']} ({l['family']}): {l['launches']} launches")

totals = [l for l in lines if l.get("bench") == "kernel_times"]
for total in totals:
    what, batch = total["what"], total.get("batch")
    kernels = [l for l in lines if l.get("bench") == "kernel_time" and l["what"] == what and l.get("batch") == batch]
    step = ours.get(batch, {}).get("step_ms_median") if batch else None
    whole = f" of a {step:.1f} ms step (timed above, unprofiled)" if step else ""
    at = f" at batch {batch}" if batch else ""
    print(f"\n{what}{at}: {total['kernel_ms']:.2f} ms of kernel time{whole}, {total['launches']} launches "
          f"({total['clock']} clock, {total['unmeasured']} unmeasured)")
    by_name = {}
    for l in kernels:
        launches, ms = by_name.get(l["kernel"], (0, 0.0))
        by_name[l["kernel"]] = (launches + l["launches"], ms + l["ms"])
    print("| kernel | launches | ms | share |")
    print("|---|---|---|---|")
    for name, (launches, ms) in sorted(by_name.items(), key=lambda item: -item[1][1]):
        print(f"| {name} | {launches} | {ms:.3f} | {ms / max(total['kernel_ms'], 1e-9):.1%} |")
    print("the longest by constants:")
    for l in kernels[:6]:
        print(f"  {l['ms']:.3f} ms, {l['launches']}× {l['detail'] or l['kernel']}")
