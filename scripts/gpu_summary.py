"""The table scripts/bench-gpu.sh ends with: our training and prediction on the GPU beside
PyTorch eager's from the same run, with the ratios, and each training step's launches."""
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
if len(ours) >= 2:
    small, large = min(ours), max(ours)
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
