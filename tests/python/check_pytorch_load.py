"""Loads a weight file written by vit-web into the PyTorch reference ViT and compares logits.

    PYTORCH_CHECK_DIR=/tmp/vit-check cargo test --test weights writes_the_pytorch_cross_check
    python3 tests/python/check_pytorch_load.py /tmp/vit-check/weights.safetensors /tmp/vit-check/expected.json

Needs torch and safetensors. Exit code 0 when load_state_dict(strict=True) takes every tensor and
the logits agree within 1e-4 x max(1, |logit|) (the bar tests/parity.rs sets); 1 otherwise.
"""
import json, sys
import torch, torch.nn as nn
from safetensors import safe_open
from safetensors.torch import load_file

TOLERANCE = 1e-4

# The reference architecture, exactly as /work/shared/reference/torch_vit_reference.py defines it.
class MSA(nn.Module):
    def __init__(s, d, h):
        super().__init__(); s.h = h; s.qkv = nn.Linear(d, 3 * d); s.proj = nn.Linear(d, d)
    def forward(s, x):
        B, N, D = x.shape
        q, k, v = s.qkv(x).reshape(B, N, 3, s.h, D // s.h).permute(2, 0, 3, 1, 4)
        a = (q @ k.transpose(-2, -1)) * (D // s.h) ** -0.5
        return s.proj((a.softmax(-1) @ v).transpose(1, 2).reshape(B, N, D))

class Block(nn.Module):
    def __init__(s, d, h, m):
        super().__init__(); s.n1 = nn.LayerNorm(d); s.attn = MSA(d, h); s.n2 = nn.LayerNorm(d)
        s.mlp = nn.Sequential(nn.Linear(d, m), nn.GELU(), nn.Linear(m, d))
    def forward(s, x):
        x = x + s.attn(s.n1(x)); return x + s.mlp(s.n2(x))

class ViT(nn.Module):
    def __init__(s, p=4, d=128, L=4, h=4, mlp=256, nc=10):
        super().__init__(); s.pe = nn.Conv2d(3, d, p, p); n = (32 // p) ** 2
        s.cls = nn.Parameter(torch.zeros(1, 1, d)); s.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        s.blocks = nn.Sequential(*[Block(d, h, mlp) for _ in range(L)]); s.norm = nn.LayerNorm(d); s.head = nn.Linear(d, nc)
    def forward(s, x):
        x = s.pe(x).flatten(2).transpose(1, 2)
        x = torch.cat([s.cls.expand(x.shape[0], -1, -1), x], 1) + s.pos
        return s.head(s.norm(s.blocks(x))[:, 0])


def main(weights_path, expected_path):
    with safe_open(weights_path, framework="pt") as f:
        metadata = f.metadata() or {}
    config = json.loads(metadata["config"]) if "config" in metadata else {}
    if config.get("image_size", 32) != 32 or config.get("channels", 3) != 3:
        print(f"the reference only takes 3x32x32 images; this file is for {config}")
        return 1
    model = ViT(p=config.get("patch_size", 4), d=config.get("embed_dim", 128), L=config.get("depth", 4),
                h=config.get("heads", 4), mlp=config.get("mlp_dim", 256), nc=config.get("classes", 10))
    try:
        model.load_state_dict(load_file(weights_path), strict=True)
    except RuntimeError as error:
        print(f"load_state_dict refused the file: {error}")
        return 1
    model.eval()

    with open(expected_path) as f:
        expected = json.load(f)
    images = torch.tensor(expected["input"], dtype=torch.float32).reshape(expected["input_shape"])
    want = torch.tensor(expected["logits"], dtype=torch.float32).reshape(expected["logits_shape"])
    with torch.no_grad():
        got = model(images)
    excess = ((got - want).abs() - TOLERANCE * want.abs().clamp(min=1.0)).max().item()
    result = dict(max_abs_diff=(got - want).abs().max().item(), tolerance=TOLERANCE, ok=excess <= 0)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
