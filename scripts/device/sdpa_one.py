#!/usr/bin/env python3
"""Runs SDPA's flash backend a few times at one shape, for `ncu` to profile.

Usage: sdpa_one.py B H S D [causal] [bwd]  (bwd: forward and backward each time)
"""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

b, h, s, d = (int(x) for x in sys.argv[1:5])
flags = set(sys.argv[5:])
causal = "causal" in flags
bwd = "bwd" in flags
q, k, v = (
    torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=bwd)
    for _ in range(3)
)
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for _ in range(3):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        if bwd:
            out.backward(torch.ones_like(out))
torch.cuda.synchronize()
