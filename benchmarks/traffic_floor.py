"""What the memory system allows at the shapes where the kernels miss 80% of the copy ceiling.

The harness reports each call against a copy ceiling measured on 2 GiB (launch latency is
nothing there). A call at R = 256 moves 72-279 MB, so the fixed cost of a call (the time from
the start event to the kernel's first load, and the ramp and tail of its loads) weighs more.
This script times, at each shape and with the harness's own method
(`masks.timing.steady_device_time`: L2 flush, spin, CUDA events, medians, taken once more when
unsteady; ``remeasured`` in the JSON lists the first spreads), everything that moves the same
bytes:

* a one-element kernel: the fixed cost of any call;
* a device-to-device copy of the kernel's minimal traffic (`masks.timing.minimal_bytes`);
* the *traffic floors* of ``traffic_floor.cu``: kernels that read every logit once and write the
  three outputs once but test and rank nothing, through registers (16-byte streaming loads in a
  grid-stride loop, as the backends' pass 1 issues them) and, on sm_90, through TMA bulk copies
  into shared memory; each the fastest of a few launch configurations, read-only and with the
  outputs. No backend can beat the fastest floor with its outputs by much, so a cell whose
  floor is below 80% cannot meet that target with this measurement;
* the *row floors*: the same loads and stores with the backends' ``fused`` partition (blocks
  of one row, one contiguous range of the row per warp, as `ROW_CONFIGS` lists) held to their
  residency (1024 threads per SM): what that partition costs by itself; and, *interleaved*,
  with a row's warps taking its groups of segments in turn (a block sweeps its row);
* the *tile floors*: the one-step blocks of the fastest floor, each one step of one row
  (`TILE_CONFIGS`), with the row's count and ids handed to its last tile to arrive, which never
  waits (handoffs 1-4: by fences and an atomic, or by one acquire-release atomic; with the row's
  mask read back from L2 or not), or not handed at all (0): what a kernel that cuts rows into
  hardware-scheduled tiles pays for its handoff;
* the *chunk floors*: the same loads and stores at the same residency, one wave, rows ignored:
  each warp one contiguous range of the flat input, the ranges equal (the row floor's pattern
  without its imbalance), or the warps taking the input's groups in turn (the grid-stride
  floor's pattern at the row floor's residency). Between the row floor and the grid-stride
  floor they tell apart what the balance of work, the order of the loads and the residency
  each cost;
* the default variant of each GPU backend, on sparse, dense and full rows.

Percentages are of the copy ceiling measured in the same run, for the kernel's minimal traffic,
as in the harness. ``--l2-flush write`` reproduces the other flush of `masks.timing` (the call
then also writes back the flush's dirty lines).

Run (CUDA, CuPy for the floors): ``python benchmarks/traffic_floor.py --out traffic_floor.json``
"""

from __future__ import annotations

import argparse
import functools
import json
import pathlib
from collections.abc import Callable

import torch

from masks import SamplingMask, available_backends, compact_sampling_mask, compare, timing
from masks.testing import make_logits

SHAPES = [(r, v) for r in (256, 512, 1024) for v in (128_256, 151_936, 262_144)]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
WIDTH = 2048
REPS = 30
SOURCE = pathlib.Path(__file__).with_name("traffic_floor.cu")
STREAM_CONFIGS = [  # (threads, 16-byte loads in flight per thread, grid: "wave" or "pass")
    (threads, loads, grid)
    for threads in (256, 512)
    for loads in (8, 16)
    for grid in ("wave", "pass")
]
"""``wave``: as many blocks as are resident (grid-stride loop); ``pass``: one block per
threads x loads vectors (each block one step)."""
BULK_CONFIGS = [(256, 16384, 4), (256, 16384, 6), (512, 32768, 3)]
"""(threads, stage bytes, stages) of the TMA floor; as many blocks as are resident."""
ROW_CONFIGS = [(512, 1, False), (512, 2, False), (256, 1, False), (256, 2, False), (512, 1, True)]
"""(threads, blocks per row, interleaved) of the row floor: (512, 1, False) is CuPy's and Numba's
``fused``; interleaved, a row's warps take its groups of segments in turn rather than one
contiguous range each."""
CHUNK_CONFIGS = [(512, False), (512, True), (256, False)]
"""(threads, interleaved) of the chunk floor, at the row floor's residency."""
TILE_CONFIGS = [
    (256, 0, False), (256, 0, True), (256, 1, True), (256, 2, True), (256, 2, False),
    (512, 0, True), (512, 2, True), (256, 3, True), (256, 4, True), (512, 4, True),
]  # fmt: skip
"""(threads, handoff, held) of the tile floor: one-step blocks of one row's groups (threads x 8
16-byte loads), the row's count and ids handed to its last tile to arrive (handoff 1: the tile
counts; 2: also every thread's mask stores fenced and the row's mask read back; 3 and 4: 1 and 2
without fences, through an acquire-release arrival), at their own residency or held to the row
floor's (``held``)."""
MAX_TILES_PER_ROW = 32
"""The tile floor's last arriver sums the row's tile counts in one warp."""
FUSED_PARTITION_FLOORS = (
    "rows 512x1",
    "rows 512x1 interleaved",
    "chunks 512",
    "chunks 512 interleaved",
)
"""The floors at the residency of CuPy's and Numba's ``fused`` (one 512-thread block per row, and
rows ignored), printed beside each shape's best floors and checked for equal masks."""
HANDOFF_FLOORS = ("tiles 256 h1 held", "tiles 256 h2 held", "tiles 256 h4 held")
"""Tile floors whose rows' counts pass through a last arriver: checked for equal masks, exact
counts and arrival counters back at zero."""
RESIDENT_THREADS = 1024
"""Threads per SM the row floor is held to: the backends' kernels ask for 64 registers."""


def kernel_names(bulk: bool) -> dict[tuple, str]:
    """The instances of ``traffic_floor.cu`` the floors launch, by (kind, 16-byte vectors per 8
    elements, config); `bulk`: also the TMA ones (sm_90 and later)."""
    names = {
        ("stream", vecs, loads): f"stream_floor<{vecs}, {loads // vecs}>"
        for vecs in (1, 2)
        for loads in (8, 16)
    }
    names |= {
        ("row", vecs, threads): f"row_floor<{vecs}, {8 // vecs}, {threads}>"
        for vecs in (1, 2)
        for threads in sorted({threads for threads, _, _ in ROW_CONFIGS})
    }
    names |= {
        ("chunk", vecs, threads): f"chunk_floor<{vecs}, {8 // vecs}, {threads}>"
        for vecs in (1, 2)
        for threads in sorted({threads for threads, _ in CHUNK_CONFIGS})
    }
    names |= {
        ("tile", vecs, threads): f"tile_floor<{vecs}, {8 // vecs}, {threads}>"
        for vecs in (1, 2)
        for threads in sorted({threads for threads, _, _ in TILE_CONFIGS})
    }
    if bulk:
        names |= {
            ("bulk", vecs, stage, stages): f"bulk_floor<{vecs}, {stage}, {stages}>"
            for vecs in (1, 2)
            for _, stage, stages in BULK_CONFIGS
        }
    return names


class Floors:
    """The floor kernels of ``traffic_floor.cu``, compiled through CuPy for the current device."""

    def __init__(self) -> None:
        import cupy

        self.cupy = cupy
        major, _ = torch.cuda.get_device_capability()
        self.bulk = major >= 9
        names = kernel_names(self.bulk)
        module = cupy.RawModule(
            code=SOURCE.read_text(), options=("-std=c++17",), name_expressions=list(names.values())
        )
        self.kernels = {key: module.get_function(name) for key, name in names.items()}
        properties = torch.cuda.get_device_properties(torch.cuda.current_device())
        self.sms = properties.multi_processor_count
        self.smem_per_sm = cupy.cuda.runtime.getDeviceProperties(torch.cuda.current_device())[
            "sharedMemPerMultiprocessor"
        ]

    def _resident(self, kernel, threads: int, smem: int) -> int:
        occupancy = self.cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor
        return occupancy(kernel.kernel.ptr, threads, smem) * self.sms

    def calls(self, logits: torch.Tensor, out: SamplingMask) -> dict[str, Callable[[], None]]:
        """Every floor launch for `logits` (flat R x V, V % 8 == 0), named by kind and config."""
        if logits.element_size() not in (2, 4) or logits.size(-1) % 8 or not logits.is_contiguous():
            raise ValueError("the floors read contiguous 16- or 32-bit rows of 8k elements")
        vecs = logits.element_size() // 2
        groups = logits.numel() // 8
        sink = torch.empty(max(groups, 1 << 20), dtype=torch.uint8, device=logits.device)
        outputs = (out.packed_mask, out.token_ids, out.counts)
        pointers = (logits.data_ptr(), *(t.data_ptr() for t in outputs))
        sizes = (groups, out.token_ids.numel(), out.counts.numel())
        stream = self.cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)

        def launcher(kernel, blocks: int, threads: int, smem: int, *args) -> Callable[[], None]:
            return functools.partial(
                kernel, (blocks,), (threads,), args, stream=stream, shared_mem=smem
            )

        calls = {}
        for threads, loads, grid in STREAM_CONFIGS:
            kernel = self.kernels["stream", vecs, loads]
            step = threads * (loads // vecs)
            blocks = self._resident(kernel, threads, 0) if grid == "wave" else -(-groups // step)
            config = f"{threads}x{loads} {grid}"
            calls[f"read {config}"] = launcher(
                kernel, blocks, threads, 0, pointers[0], 0, 0, 0, sink.data_ptr(), *sizes
            )
            calls[f"outputs {config}"] = launcher(
                kernel, blocks, threads, 0, *pointers, sink.data_ptr(), *sizes
            )
        for threads, stage, stages in BULK_CONFIGS if self.bulk else ():
            kernel = self.kernels["bulk", vecs, stage, stages]
            smem = stage * stages
            kernel.max_dynamic_shared_size_bytes = smem
            blocks = self._resident(kernel, threads, smem)
            config = f"{threads} {stages}x{stage // 1024}K"
            calls[f"bulk {config}"] = launcher(kernel, blocks, threads, smem, *pointers, *sizes)
        num_reqs, width = out.token_ids.shape
        for threads, blocks_per_row, interleaved in ROW_CONFIGS:
            kernel = self.kernels["row", vecs, threads]
            smem = self._hold_residency(kernel, threads)
            name = f"rows {threads}x{blocks_per_row}" + (" interleaved" if interleaved else "")
            calls[name] = launcher(
                kernel, num_reqs * blocks_per_row, threads, smem, *pointers,
                groups // max(num_reqs, 1), width, blocks_per_row, int(interleaved),
            )  # fmt: skip
        for threads, interleaved in CHUNK_CONFIGS:
            kernel = self.kernels["chunk", vecs, threads]
            smem = self._hold_residency(kernel, threads)
            name = f"chunks {threads}" + (" interleaved" if interleaved else "")
            blocks = RESIDENT_THREADS // threads * self.sms
            args = (*pointers, *sizes, int(interleaved))
            calls[name] = launcher(kernel, blocks, threads, smem, *args)
        groups_per_row = groups // max(num_reqs, 1)
        calls |= self._tile_calls(launcher, vecs, pointers, num_reqs, groups_per_row, width)
        return calls

    def _tile_calls(self, launcher, vecs: int, pointers: tuple, num_reqs: int, groups_per_row: int,
                    width: int) -> dict[str, Callable[[], None]]:  # fmt: skip
        """The tile floor's launches (`TILE_CONFIGS`). Their scratch lives as long as this object
        or the next call: `arrivals` (a counter per row, zero before and after every launch),
        the rows' tile counts and a word per row."""
        if groups_per_row % 16:
            raise ValueError("the tile floor reads mask rows back as 16-byte words")
        device = torch.device("cuda")
        self.arrivals = torch.zeros(num_reqs, dtype=torch.int32, device=device)
        sink = torch.empty(num_reqs, dtype=torch.int32, device=device)
        self.scratch = [sink]
        calls = {}
        for threads, handoff, held in TILE_CONFIGS:
            kernel = self.kernels["tile", vecs, threads]
            tiles_per_row = -(-groups_per_row // (threads * 8 // vecs))
            if tiles_per_row > MAX_TILES_PER_ROW:
                raise ValueError(f"{tiles_per_row} tiles per row: at most {MAX_TILES_PER_ROW}")
            tile_counts = torch.empty(num_reqs * tiles_per_row, dtype=torch.int32, device=device)
            self.scratch.append(tile_counts)
            smem = self._hold_residency(kernel, threads) if held else 0
            name = f"tiles {threads} h{handoff}" + (" held" if held else "")
            calls[name] = launcher(
                kernel, num_reqs * tiles_per_row, threads, smem, *pointers,
                tile_counts.data_ptr(), self.arrivals.data_ptr(), sink.data_ptr(),
                groups_per_row, width, tiles_per_row, handoff,
            )  # fmt: skip
        return calls

    def _hold_residency(self, kernel, threads: int) -> int:
        """Dynamic shared memory (read by no kernel) that holds `kernel` to `RESIDENT_THREADS`
        per SM, as the backends' register budget does; raises if it does not."""
        per_sm = RESIDENT_THREADS // threads
        smem = self.smem_per_sm // (per_sm + 1) + 1024  # one more block does not fit
        kernel.max_dynamic_shared_size_bytes = smem
        if self._resident(kernel, threads, smem) != per_sm * self.sms:
            raise RuntimeError(f"{kernel.name} at {threads} threads: not {per_sm} blocks per SM")
        return smem


def check_handoff(
    kind: str, counts: torch.Tensor, packed_mask: torch.Tensor, arrivals: torch.Tensor
) -> None:
    """Raise unless the tile floor `kind` left every row's count equal to its mask's set bits
    and every arrival counter at zero (a lost or doubled arrival would show in both)."""
    bits = torch.tensor([bin(b).count("1") for b in range(256)], device=counts.device)
    expected = bits[packed_mask.long()].sum(1).to(torch.int32)
    if not torch.equal(counts, expected) or bool(arrivals.any()):
        raise RuntimeError(f"{kind}: counts or arrival counters wrong after a launch")


def measure_shape(
    num_reqs: int, vocab: int, dtype: torch.dtype, floors: Floors | None, backends: list[str],
    ceiling: float, flush: str,
) -> dict:  # fmt: skip
    """Every same-bytes measurement at one shape: median us and % of the ceiling of each."""
    device = torch.device("cuda")
    nbytes = timing.minimal_bytes(num_reqs, vocab, WIDTH, dtype.itemsize)
    source = torch.randint(0, 256, (nbytes // 2,), dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    out = SamplingMask.empty(num_reqs, vocab, WIDTH, device=device)
    logits = {s: make_logits(num_reqs, vocab, k or "full", dtype, 3, device) for s, k in
              compare.SUPPORTS.items()}  # fmt: skip
    calls = {"copy": functools.partial(target.copy_, source)}
    if floors is not None:
        calls |= floors.calls(logits["dense"], out)
    for backend in backends:
        for support, rows in logits.items():
            calls[f"{backend} {support}"] = functools.partial(
                compact_sampling_mask, rows, None, WIDTH, backend, out=out
            )
    times, remeasured = {}, {}
    for name, call in calls.items():
        call()
        measured, first_spread = timing.steady_device_time(call, device, REPS, flush)
        times[name] = measured.median_us
        if first_spread is not None:
            remeasured[name] = first_spread
    if floors is not None:  # every floor folds the same bytes into the same mask
        masks = {}
        kinds = ("outputs 256x8 wave", *FUSED_PARTITION_FLOORS, *HANDOFF_FLOORS)
        kinds += ("bulk 256 4x16K",) if floors.bulk else ()
        for kind in kinds:
            out.packed_mask.zero_()
            out.counts.fill_(-1)
            calls[kind]()
            masks[kind] = out.packed_mask.clone()
            if kind in HANDOFF_FLOORS:  # the last arrivers summed every tile's count
                check_handoff(kind, out.counts, out.packed_mask, floors.arrivals)
        first, *others = masks.values()
        if not all(torch.equal(first, other) for other in others):
            raise RuntimeError(f"the floors' masks differ: {', '.join(masks)}")
    row = {
        "num_reqs": num_reqs, "vocab": vocab, "minimal_bytes": nbytes, "us": times,
        "remeasured": remeasured,
    }  # fmt: skip
    row["pct"] = {name: 100 * timing.gbps(nbytes, us) / ceiling for name, us in times.items()}
    for kind in ("read", "outputs", "bulk", "rows", "chunks", "tiles"):
        named = {name: us for name, us in times.items() if name.startswith(kind + " ")}
        if named:
            best = min(named, key=named.get)
            row[f"best_{kind}"] = {"config": best, "us": named[best], "pct": row["pct"][best]}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    rows_choices = sorted({r for r, _ in SHAPES})
    parser.add_argument(
        "--num-reqs", default=",".join(map(str, rows_choices)),
        help=f"rows of the shapes, a comma-separated subset of {rows_choices}",
    )  # fmt: skip
    parser.add_argument("--l2-flush", choices=timing.L2_FLUSHES, default=timing.L2_FLUSHES[0])
    args = parser.parse_args()
    device = torch.device("cuda")
    backends = [b for b in ("cupy", "triton", "numba") if b in available_backends(device)]
    floors = Floors() if "cupy" in backends else None
    ceiling = timing.copy_ceiling(device, l2_flush=args.l2_flush).gbps
    one = torch.ones(1, device=device)
    fixed, _ = timing.steady_device_time(
        functools.partial(one.add_, 1), device, REPS, args.l2_flush
    )
    print(f"L2 flush {args.l2_flush}: copy ceiling {ceiling:.0f} GB/s; one-element kernel "
          f"{fixed.median_us:.1f} us")  # fmt: skip
    rows = []
    wanted = {int(r) for r in args.num_reqs.split(",")}
    if not wanted <= set(rows_choices):
        parser.error(f"--num-reqs: {sorted(wanted - set(rows_choices))} not in {rows_choices}")
    shapes = [(r, v) for r, v in SHAPES if r in wanted]
    for (num_reqs, vocab), (name, dtype) in ((s, d) for s in shapes for d in DTYPES.items()):
        row = measure_shape(num_reqs, vocab, dtype, floors, backends, ceiling, args.l2_flush)
        rows.append({"dtype": name, **row})
        bests = " ".join(
            f"{kind} {row[f'best_{kind}']['pct']:5.1f}%"
            for kind in ("read", "outputs", "bulk", "rows", "chunks", "tiles")
            if f"best_{kind}" in row
        )
        pct = row["pct"]
        cells = " ".join(
            b + " " + "/".join(f"{pct[f'{b} {s}']:.1f}" for s in compare.SUPPORTS) for b in backends
        )
        fused_partition = (
            " (" + ", ".join(f"{name} {pct[name]:5.1f}%" for name in FUSED_PARTITION_FLOORS) + ")"
            if "rows 512x1" in pct
            else ""
        )
        tiles = (
            " (tiles 256 held: " + ", ".join(
                f"h{h} {pct[f'tiles 256 h{h} held']:5.1f}%" for h in range(5)
            ) + ")"
            if "tiles 256 h0 held" in pct
            else ""
        )  # fmt: skip
        print(
            f"R={num_reqs:5d} V={vocab:6d} {name} {row['minimal_bytes'] / 1e6:6.1f} MB: copy "
            f"{pct['copy']:5.1f}% floors {bests}{fused_partition}{tiles} | s/d/f {cells}",
            flush=True,
        )
    report = {
        "device": torch.cuda.get_device_name(),
        "l2_flush": args.l2_flush,
        "copy_ceiling_gbps": ceiling,
        "one_element_kernel_us": fixed.median_us,
        "width": WIDTH,
        "supports": compare.SUPPORTS,
        "rows": rows,
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
