"""Mimetic initialisation checked in PyTorch, on the reference's own model and training loop
(../shared/reference/torch_vit_reference.py): the same recipe with PyTorch's initialisation and
with each head's W_q·W_kᵀ ≈ 0.7·Z + 0.7·I and each block's W_v·W_o ≈ 0.4·Z − 0.4·I (Trockman &
Kolter, 2023), Z Gaussian with variance 1/D, factors from the SVD. One JSON line per run.
  python3 scripts/torch_mimetic.py [archive]     (a Python with torch, numpy and pillow)"""
import os, sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "../../shared/reference"))
import torch_vit_reference as ref  # noqa: E402

torch.set_num_threads(int(os.environ.get("THREADS", "1")))


def factors(dim, noise, diagonal, rank):
    """(L, R), each [dim, rank], with L·Rᵀ the best rank-`rank` approximation of noise·Z + diagonal·I."""
    target = noise * torch.randn(dim, dim) / dim**0.5 + diagonal * torch.eye(dim)
    u, s, vh = torch.linalg.svd(target)
    root = s[:rank].sqrt()
    return u[:, :rank] * root, vh[:rank].T * root


def mimetic(model):
    with torch.no_grad():
        for block in model.blocks:
            dim, heads = block.attn.qkv.in_features, block.attn.h
            head_dim = dim // heads
            weight = block.attn.qkv.weight  # [3·dim, dim]: q = x·W[:dim]ᵀ
            for head in range(heads):
                query, key = factors(dim, 0.7, 0.7, head_dim)
                weight[head * head_dim:(head + 1) * head_dim] = query.T
                weight[dim + head * head_dim:dim + (head + 1) * head_dim] = key.T
            value, output = factors(dim, 0.4, -0.4, dim)
            weight[2 * dim:] = value.T
            block.attn.proj.weight[:] = output  # x·W_v·W_oᵀᵀ = x·L·Rᵀ
    return model


class MimeticViT(ref.ViT):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        mimetic(self)


if __name__ == "__main__":
    archive = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../shared/data/cifar-10-binary.tar.gz")
    train, test = ref.load(archive)
    recipe = dict(bs=128, lr=1.5e-3, warmup=100, ls=0.1)
    ref.run("pytorch init, b128 lr1.5e-3 warm-up 100 smoothing 0.1", train, test, **recipe)
    ref.ViT = MimeticViT
    ref.run("mimetic init, b128 lr1.5e-3 warm-up 100 smoothing 0.1", train, test, **recipe)
