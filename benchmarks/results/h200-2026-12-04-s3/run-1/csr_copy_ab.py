"""A/B of the host step's second half: HEAD's PendingCSR (returns a view of the pinned ids)
against the working tree's (copies the ids out into an ordinary array). Same masks, arms
interleaved per repetition; times from a synchronised GPU to the CSR on the host."""

import importlib.util
import statistics
import sys
import time

import torch

from masks import compact_sampling_mask
from masks.testing import assert_csr_equal, make_logits

spec = importlib.util.spec_from_file_location("transfer_head", ".ab/transfer_head.py")
head = importlib.util.module_from_spec(spec)
spec.loader.exec_module(head)

rows = []
for num_reqs, vocab, support in (
    (64, 151_936, 50),
    (512, 151_936, 50),
    (1024, 262_144, 50),
    (512, 151_936, 600),
):
    logits = make_logits(num_reqs, vocab, support, seed=1, device="cuda")
    mask = compact_sampling_mask(logits, max_num_kept=512)
    arms = {
        "head": lambda mask=mask: head.PendingCSR(mask).wait(),
        "new": lambda mask=mask: mask.to_csr_async().wait(),
    }
    assert_csr_equal(arms["head"](), arms["new"]())
    times = {name: [] for name in arms}
    for rep in range(300):
        for name in ("head", "new") if rep % 2 == 0 else ("new", "head"):
            torch.cuda.synchronize()
            start = time.perf_counter()
            arms[name]()
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) * 1e6 for name, t in times.items()}
    line = (
        f"R={num_reqs} V={vocab} ids/row={support}: head {medians['head']:.1f} us, "
        f"new {medians['new']:.1f} us, new-head {medians['new'] - medians['head']:+.1f} us"
    )
    print(line)
    rows.append(line)
sys.stdout.flush()
