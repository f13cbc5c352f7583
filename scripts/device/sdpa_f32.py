#!/usr/bin/env python3
"""PyTorch SDPA in f32, for the portable kernel's comparison (the shared reference script
times bf16 and fp16 only).

Usage: sdpa_f32.py [--dims 64,128] [--seqs 1024,4096] [--tokens 16384] [--hidden 2048]

Same shapes and columns as sdpa_reference.py: name d causal seq batch heads ms tflops.
TF32 stays off (PyTorch's default for matmuls), so every backend computes in f32.
"""
import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

BACKENDS = {
    "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION,
    "sdpa-math": SDPBackend.MATH,
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dims", default="64,128")
    p.add_argument("--seqs", default="1024,4096")
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--hidden", type=int, default=2048)
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"# torch {torch.__version__} on {torch.cuda.get_device_name()} dtype=f32")
    for d in (int(x) for x in a.dims.split(",")):
        for causal in (False, True):
            for s in (int(x) for x in a.seqs.split(",")):
                b, h = max(1, a.tokens // s), a.hidden // d
                q, k, v = (torch.randn(b, h, s, d, device="cuda") for _ in range(3))
                flops = 4 * b * h * s * s * d / (2 if causal else 1)
                for name, backend in BACKENDS.items():
                    try:
                        with sdpa_kernel(backend):
                            ms = do_bench(
                                lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            )
                    except RuntimeError as e:
                        print(f"# {name} d={d} s={s}: {str(e).splitlines()[0]}")
                        continue
                    tf = flops / ms / 1e9
                    print(f"{name} {d} {int(causal)} {s} {b} {h} {ms:.3f} {tf:.1f}")


if __name__ == "__main__":
    main()
