"""Run 4 of the 2026-12-02-s5 results: the review's defects as a caller meets them, on whichever
package PYTHONPATH names (HEAD's, then the fixed one). One case per process (argv[1]), since a
failed probe stays cached for the process:

* thread: a new thread whose first CUDA work is a call with preallocated outputs on a plan made
  by the main thread (R = 256: `fused`), for each GPU backend;
* sync: the first call on the device under torch.cuda.set_sync_debug_mode("error") (argv[2]:
  the backend; only the call runs in the mode, its result is checked after), then one more
  call with the mode off;
* capture: the first call (`auto`) made while a CUDA graph is being captured, then replayed,
  then an eager `auto` call.
"""

import sys
import threading

import torch

from masks import SamplingMask, compact_sampling_mask
from masks.testing import assert_masks_equal, make_logits, reference

CUDA = torch.device("cuda")
case = sys.argv[1]
logits = make_logits(256, 4_099, 50, torch.float32, seed=1, device=CUDA)
expected = reference(logits.cpu(), None, 64)


def outcome(run) -> str:
    try:
        result = run()
        torch.cuda.synchronize()
        if result is not None:
            assert_masks_equal(result, expected)
        return "ok"
    except Exception as error:
        return f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"


def first_call_in_a_new_thread(backend: str) -> str:
    out = SamplingMask.empty(256, 4_099, 64, device=CUDA)
    compact_sampling_mask(logits, None, 64, backend=backend, out=out)  # the plan
    torch.cuda.synchronize()
    out.token_ids.fill_(-7)
    results = []

    def call():
        return compact_sampling_mask(logits, None, 64, backend=backend, out=out)

    thread = threading.Thread(target=lambda: results.append(outcome(call)))
    thread.start()
    thread.join()
    return f"{results[0]}; outputs {outcome(lambda: out)}"


def first_call_in_sync_debug_mode(backend: str) -> str:
    """Only the call runs in the mode; its result is synchronised and checked after."""
    torch.cuda.set_sync_debug_mode("error")
    try:
        result = compact_sampling_mask(logits, None, 64, backend=backend)
    except Exception as error:
        result = error
    finally:
        torch.cuda.set_sync_debug_mode(0)

    def checked():
        if isinstance(result, Exception):
            raise result
        return result

    return outcome(checked)


if case == "thread":
    for backend in ("cupy", "triton", "numba"):
        print(f"thread {backend}: {first_call_in_a_new_thread(backend)}")
elif case == "sync":
    backend = sys.argv[2]
    first = first_call_in_sync_debug_mode(backend)
    again = outcome(lambda: compact_sampling_mask(logits, None, 64, backend=backend))
    print(f"sync {backend}: first call {first}; then, mode off: {again}")
elif case == "capture":
    out = SamplingMask.empty(256, 4_099, 64, device=CUDA)
    graph = torch.cuda.CUDAGraph()

    def captured():
        with torch.cuda.graph(graph):
            compact_sampling_mask(logits, None, 64, backend="auto", out=out)
        graph.replay()
        return out

    first = outcome(captured)
    again = outcome(lambda: compact_sampling_mask(logits, None, 64, backend="auto"))
    print(f"capture auto: first call captured and replayed {first}; then eager: {again}")
