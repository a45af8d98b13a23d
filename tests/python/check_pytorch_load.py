"""Runs docs/weights.md's PyTorch snippets against real PyTorch, both ways.

    PYTORCH_CHECK_DIR=/tmp/vit-check cargo test --test weights writes_the_pytorch_cross_check
    python3 tests/python/check_pytorch_load.py /tmp/vit-check/weights.safetensors /tmp/vit-check/expected.json
    PYTORCH_CHECK_DIR=/tmp/vit-check cargo test --test weights loads_the_pytorch_state_dict

1. Our weight file into the reference ViT with the "Loading our file in PyTorch" snippet
   (load_state_dict(strict=True)); its logits must agree with ours within 1e-4 x max(1, |logit|)
   (the bar tests/parity.rs sets).
2. A reference ViT with random weights saved with the "Saving a reference model for the page"
   snippet, beside its logits, for tests/weights.rs to load into our model and compare.

Needs torch and safetensors. Exit code 0 when the first check passes and the second wrote its
files; 1 otherwise.
"""
import json, os, pathlib, sys, types
import torch, torch.nn as nn

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


DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "weights.md"
SHARED_REFERENCE = pathlib.Path(__file__).resolve().parents[3] / "shared" / "reference"


def docs_snippet(heading):
    """The first ```python block under `## heading` in docs/weights.md: the code users copy."""
    text = DOCS.read_text()
    section = text.split(f"## {heading}\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def provide_reference_module():
    """The snippets import the reference script; use ../shared/reference's where it is beside
    the clone, else the identical architecture above."""
    if (SHARED_REFERENCE / "torch_vit_reference.py").exists():
        sys.path.insert(0, str(SHARED_REFERENCE))
    else:
        module = types.ModuleType("torch_vit_reference")
        module.ViT = ViT
        sys.modules["torch_vit_reference"] = module


def compare(got, want):
    excess = ((got - want).abs() - TOLERANCE * want.abs().clamp(min=1.0)).max().item()
    return dict(max_abs_diff=(got - want).abs().max().item(), tolerance=TOLERANCE, ok=excess <= 0)


def main(weights_path, expected_path):
    provide_reference_module()
    with open(expected_path) as f:
        expected = json.load(f)
    images = torch.tensor(expected["input"], dtype=torch.float32).reshape(expected["input_shape"])
    want = torch.tensor(expected["logits"], dtype=torch.float32).reshape(expected["logits_shape"])

    # 1. Our file into PyTorch, with the documented snippet.
    snippet = docs_snippet("Loading our file in PyTorch")
    scope = {}
    try:
        exec(snippet.replace('path = "vit-tiny.safetensors"', f"path = {str(weights_path)!r}"), scope)
    except RuntimeError as error:
        print(f"load_state_dict refused the file: {error}")
        return 1
    with torch.no_grad():
        loaded = compare(scope["model"](images), want)
    print(json.dumps(dict(direction="our file -> PyTorch", **loaded)))

    # 2. A PyTorch model into our format, with the documented snippet; tests/weights.rs then
    #    loads reference.safetensors and compares its logits with reference_expected.json.
    torch.manual_seed(0)
    model = scope["ViT"]()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))  # no zero [CLS] or unit LayerNorm
    model.eval()
    out_dir = pathlib.Path(weights_path).parent
    saved = docs_snippet("Saving a reference model for the page")
    cwd = os.getcwd()
    os.chdir(out_dir)
    try:
        exec(saved, {"model": model})
    finally:
        os.chdir(cwd)
    with torch.no_grad():
        logits = model(images)
    (out_dir / "reference_expected.json").write_text(json.dumps(dict(
        input_shape=expected["input_shape"], input=expected["input"],
        logits_shape=list(logits.shape), logits=logits.flatten().tolist())))
    print(f"wrote {out_dir / 'reference.safetensors'} and reference_expected.json for tests/weights.rs")
    return 0 if loaded["ok"] else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
