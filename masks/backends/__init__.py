"""Kernel backends of `compact_sampling_mask`.

Each backend is one module here, imported only when first asked for (so `import masks` never
imports triton, cupy or numba). The registry in `masks.registry` owns naming, availability and
dispatch; `masks.api` owns argument checks. A backend module therefore only turns *checked*
inputs into the contract's three outputs. It provides:

``VARIANTS: tuple[str, ...]``
    Names of its kernel designs; the first is the default (``"triton"`` means
    ``"triton:<VARIANTS[0]>"``).

``unavailable_reason(device: torch.device) -> str | None``
    Cheap check (driver present, device supported); ``None`` when it can run.

``compact(logits, num_sampled_tokens, out, variant) -> None``
    ``logits``: 2-D float tensor ``[R, V]`` of any strides (R, V > 0);
    ``num_sampled_tokens``: ``None`` or an int32/int64 ``[R]`` tensor on the same device
    (a row is active when its value is > 0);
    ``out``: a `masks.SamplingMask` whose contiguous ``token_ids [R, W]`` (int32),
    ``counts [R]`` (int32) and ``packed_mask [R, ceil(V/8)]`` (uint8) hold garbage on entry
    and must be overwritten entirely;
    ``variant``: one of ``VARIANTS``.
    It must launch on torch's current stream and never synchronise with the host.
"""
