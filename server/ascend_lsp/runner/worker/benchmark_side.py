"""The third side of msprobe's benchmark comparison (标杆比对): when the target computes in a
lower precision than the float32 reference, the reference model is run once more on the CPU
at the target's dtype, so that each error can be graded against what that dtype itself loses."""

from __future__ import annotations

from .run_target import Target
from .sides import Side

LOW_PRECISION = ("float16", "bfloat16")


def benchmark_dtype(torch, target: Target, reference: Side, candidate: Side) -> str | None:
    """The dtype the third side runs at, or None when the target computes as the reference does.
    An emulated target says it (its autocast); a device target shows it: float16 or bfloat16
    results where the reference's are float32 (autocast in the code, an fp16 chip)."""
    if target.name == "mindspore":
        return None
    if target.emulate is not None:
        return target.emulate.get("autocast")
    if target.on_cpu:
        return None
    seen = {str(t.dtype).removeprefix("torch.") for t in _tensors(torch, candidate)}
    if "float32" not in {str(t.dtype).removeprefix("torch.") for t in _tensors(torch, reference)}:
        return None
    return next((dtype for dtype in LOW_PRECISION if dtype in seen), None)


def _tensors(torch, side: Side) -> list:
    values = [v for _, v in side.outputs] + (side.layers.tensors if side.layers is not None else [])
    return [v for v in values if isinstance(v, torch.Tensor)]
