"""The same check as check_pytorch_load.py with nothing but the standard library: reads the
safetensors file by hand and runs the reference's forward pass (nn.Linear is x @ W.T + b, exact
GELU, LayerNorm eps 1e-5) in plain Python, so the names and layouts are tested where torch is not
installed. It cannot run load_state_dict; check_pytorch_load.py does that.

    python3 tests/python/check_without_torch.py WEIGHTS.safetensors EXPECTED.json
"""
import json, math, struct, sys

TOLERANCE = 1e-4


def read_safetensors(path):
    raw = open(path, "rb").read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    metadata = header.pop("__metadata__", {})
    data = raw[8 + length:]
    tensors = {}
    for name, info in header.items():
        assert info["dtype"] == "F32", f"{name} is {info['dtype']}"
        start, end = info["data_offsets"]
        tensors[name] = (info["shape"], struct.unpack(f"<{(end - start) // 4}f", data[start:end]))
    return metadata, tensors


def forward(tensors, config, image):
    """The reference ViT on one planar 3x32x32 image; returns its logits."""
    vec = lambda name: tensors[name][1]
    def rows(name):
        (r, c), v = tensors[name]
        return [v[i * c:(i + 1) * c] for i in range(r)]
    def linear(x, name):  # PyTorch layout: weight [out, in]
        w, b = rows(name + ".weight"), vec(name + ".bias")
        return [[sum(a * c for a, c in zip(wo, row)) + bo for wo, bo in zip(w, b)] for row in x]
    def layer_norm(x, name):
        g, b, out = vec(name + ".weight"), vec(name + ".bias"), []
        for row in x:
            mean = sum(row) / len(row)
            scale = 1 / math.sqrt(sum((v - mean) ** 2 for v in row) / len(row) + 1e-5)
            out.append([(v - mean) * scale * gi + bi for v, gi, bi in zip(row, g, b)])
        return out
    add = lambda x, y: [[a + b for a, b in zip(r, s)] for r, s in zip(x, y)]
    p, d, heads = config["patch_size"], config["embed_dim"], config["heads"]
    grid, k, hd = 32 // p, 3 * p * p, d // heads
    pe = vec("pe.weight")  # [d, 3, p, p], row-major
    patches = [[image[c * 1024 + (gy * p + ky) * 32 + gx * p + kx] for c in range(3) for ky in range(p) for kx in range(p)]
               for gy in range(grid) for gx in range(grid)]
    x = [list(vec("cls"))] + [[sum(pe[o * k + j] * patch[j] for j in range(k)) + vec("pe.bias")[o] for o in range(d)] for patch in patches]
    pos = vec("pos")
    x = [[v + pos[t * d + i] for i, v in enumerate(row)] for t, row in enumerate(x)]
    for layer in range(config["depth"]):
        name = f"blocks.{layer}."
        qkv = linear(layer_norm(x, name + "n1"), name + "attn.qkv")
        attended = [[0.0] * d for _ in x]
        for h in range(heads):
            q = [r[h * hd:(h + 1) * hd] for r in qkv]
            key = [r[d + h * hd:d + (h + 1) * hd] for r in qkv]
            value = [r[2 * d + h * hd:2 * d + (h + 1) * hd] for r in qkv]
            for i in range(len(x)):
                scores = [sum(a * b for a, b in zip(q[i], kj)) / math.sqrt(hd) for kj in key]
                top = max(scores)
                weights = [math.exp(s - top) for s in scores]
                total = sum(weights)
                for w, vj in zip(weights, value):
                    for j in range(hd):
                        attended[i][h * hd + j] += w / total * vj[j]
        x = add(x, linear(attended, name + "attn.proj"))
        hidden = [[0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in r] for r in linear(layer_norm(x, name + "n2"), name + "mlp.0")]
        x = add(x, linear(hidden, name + "mlp.2"))
    return linear(layer_norm([x[0]], "norm"), "head")[0]


def main(weights_path, expected_path):
    metadata, tensors = read_safetensors(weights_path)
    config = json.loads(metadata["config"])
    expected = json.load(open(expected_path))
    batch, size = expected["input_shape"][0], 3 * 32 * 32
    classes = expected["logits_shape"][1]
    worst = 0.0
    for b in range(batch):
        got = forward(tensors, config, expected["input"][b * size:(b + 1) * size])
        want = expected["logits"][b * classes:(b + 1) * classes]
        worst = max([worst] + [abs(g - w) / max(1.0, abs(w)) for g, w in zip(got, want)])
    print(json.dumps(dict(max_relative_diff=worst, tolerance=TOLERANCE, ok=worst <= TOLERANCE)))
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
