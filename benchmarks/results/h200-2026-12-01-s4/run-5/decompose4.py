"""cupy:fused variants at one and two waves of rows (run 5 of 2026-12-01-s4).

old: HEAD's kernel; old_norank: its pass 2 skipped (wrong ids; a bound). new_swar: pass 1
ranks its ids (warp 0 into place, the others into shared memory) and tests 16-bit elements a
word at a time; fast: new_swar, plus a group whose kept columns lie in one lane needs no scan;
pipe: new_swar, plus the next group's loads go out before a group is ranked; pipe_fast: both.
copy: a device copy of the same minimal bytes. Every variant but old_norank is checked
against the reference on every shape.
"""

import functools
import json
import sys
from pathlib import Path

import cupy
import torch

from masks import SamplingMask, timing
from masks.backends import cupy as cb
from masks.testing import make_logits

NEW = cb.source()
OLD = Path(".ab/cbase/masks/backends/compact.cu").read_text()
OLD_RANK = "  if (before < w && kept > 0u) {\n    rank_mask<4>("
RANK1 = "if constexpr (kRank) rank_bytes<"
COPY = "row_ids[before + i] = sink.ids[i];"
POST = "  if (warp == 0u || before >= w || kept == 0u) return;"
FILL = "  fill_ids<kThreads>(row_ids, total < w ? total : w, width);\n  if (warp == 0u"
for text, src in ((OLD_RANK, OLD), (RANK1, NEW), (COPY, NEW), (POST, NEW), (FILL, NEW)):
    assert text in src, text


def edit(src: str, *pairs: tuple[str, str]) -> str:
    for a, b in pairs:
        src = src.replace(a, b)
    return src


VARIANTS = {
    "old": (OLD, 512),
    "old_norank": (
        edit(OLD, (OLD_RANK, "  if (false && before < w && kept > 0u) {\n    rank_mask<4>(")),
        512,
    ),
}
for name in ("new_swar", "fast", "pipe", "pipe_fast"):
    VARIANTS[name] = (Path(f".ab/v_{name}.cu").read_text(), 512)
TYPES = {torch.float32: "F32", torch.bfloat16: "BF16"}


@functools.cache
def kernel(name: str, dtype: torch.dtype):
    code, threads = VARIANTS[name]
    expr = f"compact_fused<{TYPES[dtype]}, true, {threads}>"
    module = cupy.RawModule(code=code, options=("-std=c++17",), name_expressions=[expr])
    return module.get_function(expr).kernel, threads


def launcher(name, logits, out):
    fn, threads = kernel(name, logits.dtype)
    a = cb._arg
    R, V = logits.shape
    args = tuple(
        map(
            a,
            (
                logits.data_ptr(),
                logits.stride(0),
                1,
                V,
                0,
                0,
                0,
                out.packed_mask.data_ptr(),
                out.token_ids.data_ptr(),
                out.token_ids.shape[1],
                out.counts.data_ptr(),
            ),
        )
    )
    stream = cb._stream(0)
    return lambda: fn((R,), (threads,), args, stream=stream)


SHAPES = [
    (256, 128256, torch.bfloat16, 50),
    (256, 128256, torch.bfloat16, 2048),
    (256, 151936, torch.bfloat16, 50),
    (256, 151936, torch.bfloat16, 2048),
    (256, 128256, torch.bfloat16, "full"),
    (512, 128256, torch.bfloat16, 2048),
    (256, 128256, torch.float32, 50),
    (256, 128256, torch.float32, 2048),
    (1024, 151936, torch.bfloat16, 2048),
    (512, 151936, torch.float32, 2048),
]


def main() -> None:
    dev = torch.device("cuda")
    ceiling = timing.copy_ceiling(dev).gbps
    one = torch.ones(1, device=dev)
    floor = timing.device_time(functools.partial(one.add_, 1), dev, 50).median_us
    print(f"ceiling {ceiling:.0f} GB/s, one-element kernel {floor:.2f} us", flush=True)
    rows = []
    for R, V, dtype, kept in SHAPES:
        logits = make_logits(R, V, kept, dtype, seed=3, device=dev)
        out = SamplingMask.empty(R, V, 2048, device=dev)
        nbytes = timing.minimal_bytes(R, V, 2048, dtype.itemsize)
        src = torch.randint(0, 256, (nbytes // 2,), dtype=torch.uint8, device=dev)
        dst = torch.empty_like(src)
        calls = {"copy": functools.partial(dst.copy_, src)}
        from masks.testing import reference

        ref = reference(logits, None, 2048)
        for name in VARIANTS:
            calls[name] = launcher(name, logits, out)
            calls[name]()
            torch.cuda.synchronize()
            if "norank" not in name:
                for field in ("packed_mask", "token_ids", "counts"):
                    assert torch.equal(getattr(out, field), getattr(ref, field)), (name, field)
        times = {k: [] for k in calls}
        for _ in range(5):
            for k, c in calls.items():
                times[k].append(timing.device_time(c, dev, 40).median_us)
        med = {k: sorted(v)[2] for k, v in times.items()}
        row = {
            "R": R,
            "V": V,
            "dtype": str(dtype),
            "kept": kept,
            "bytes": nbytes,
            "us": med,
            "pct": {k: 100 * timing.gbps(nbytes, t) / ceiling for k, t in med.items()},
        }
        rows.append(row)
        print(
            f"R={R} V={V} {dtype} kept={kept} "
            + " ".join(f"{k} {t:.2f}us/{row['pct'][k]:.1f}%" for k, t in med.items()),
            flush=True,
        )
    Path(sys.argv[1]).write_text(
        json.dumps({"ceiling": ceiling, "floor_us": floor, "rows": rows}, indent=1)
    )


if __name__ == "__main__":
    main()
