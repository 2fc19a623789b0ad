"""Nsight Compute target (run 4, run 6): CuPy fused at R=256, V=128256, bf16 sparse / dense /
full and fp32 dense; each called once to compile, then once more (ncu: --launch-skip 4
--launch-count 4)."""

import torch

from masks import SamplingMask, compact_sampling_mask
from masks.testing import make_logits

device = torch.device("cuda")
cases = [
    (torch.bfloat16, 50),
    (torch.bfloat16, 2048),
    (torch.bfloat16, "full"),
    (torch.float32, 2048),
]
inputs = [make_logits(256, 128256, kept, dtype, seed=1, device=device) for dtype, kept in cases]
outs = [SamplingMask.empty(256, 128256, 2048, device=device) for _ in cases]
for _ in range(2):
    for logits, out in zip(inputs, outs, strict=True):
        compact_sampling_mask(logits, None, 2048, "cupy:fused", out=out)
    torch.cuda.synchronize()
