"""Diagnostic timing of CuPy `fused` against `cluster` built from a patched compact.cu (no gate:
the patched kernels may rank wrongly; they move the same bytes). MASKS_CU_PATCH:
  asis        the committed-tree cluster kernel (exchange through distributed shared memory)
  noexchange  cluster dims kept, no cluster barrier and no exchange
  nocluster   no cluster dims (a plain launch of R x parts blocks), no exchange
Prints % of the copy ceiling per shape, for rounds in turn."""

import os

import torch

from masks import SamplingMask, timing
from masks.backends import cupy as cupy_backend
from masks.compare import Shape

patch = os.environ.get("MASKS_CU_PATCH", "asis")
text = cupy_backend.source()
if patch in ("noexchange", "nocluster"):
    assert text.count("if constexpr (kParts > 1)") == 2
    text = text.replace("if constexpr (kParts > 1)", "if constexpr (false && kParts > 1)")
if patch == "nocluster":
    for old, new in (
        ("__cluster_dims__(kParts, 1, 1) ", ""),
        ("cluster_rank());", "blockIdx.x % kParts);"),
    ):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
cupy_backend.source = lambda: text
device = torch.device("cuda")
ceiling = timing.copy_ceiling(device)
print(f"patch {patch}: ceiling {ceiling.gbps:.0f} GB/s", flush=True)
shapes = [
    Shape(r, v, d, s, 2048)
    for r in (256,)
    for d in ("bfloat16", "float32")
    for v in (128256, 151936, 262144)
    for s in ("sparse", "dense", "full")
]
for shape in shapes:
    logits = shape.make_logits(device, 0)
    out = SamplingMask.empty(shape.num_reqs, shape.vocab_size, shape.width, device=device)
    cells = []
    for variant in ("fused", "cluster") * 2:

        def call(logits=logits, out=out, variant=variant):
            cupy_backend.compact(logits, None, out, variant)

        call()
        t = timing.device_time(call, device, 100)
        cells.append(100 * timing.gbps(shape.minimal_bytes, t.median_us) / ceiling.gbps)
    fused, cluster = f"{cells[0]:5.1f} {cells[2]:5.1f}", f"{cells[1]:5.1f} {cells[3]:5.1f}"
    print(f"{shape.id:32s} fused {fused}  cluster {cluster}", flush=True)
