"""CUDA's switches of scaled_dot_product_attention's kernels, and what they change on an NPU.

`torch.backends.cuda.enable_flash_sdp(b)`, `enable_mem_efficient_sdp(b)` and `enable_math_sdp(b)`
only set a flag of the global context, without CUDA too (torch 2.13
torch/backends/cuda/__init__.py:515-521: `torch._C._set_sdp_use_flash(enabled)`). torch_npu 2.13.0's
SDPA (op-plugin ScaledDotProductAttentionKernelNpuOpApi.cpp in libtorch_npu.so) reads two of them,
`at::Context::userEnabledMathSDP` and `userEnabledFlashSDP`, and takes its math path only where
math is on and flash off (checked in the wheel's code): the mem-efficient flag it never reads,
and flash on or math off leaves it on its fused kernel, as by default. Only `enable_flash_sdp(False)`
(math on) changes what an NPU runs.

The hook NPU201 needs (rules/npu2xx_support.check_support, which no module here may import
through harmless_calls): `note = note or sdp_switch_note(checker, node, qualname)` before it
reports, which makes the finding info with this note."""

from __future__ import annotations

import ast

from ..engine.checker import Checker

SWITCH = "torch.backends.cuda.enable_{}_sdp"
KEEPS_FUSED = {SWITCH.format("flash"): True, SWITCH.format("math"): None}  # the values that keep the fused kernel
NEVER_READ = SWITCH.format("mem_efficient")
NOTE = (" (It only sets a global flag of scaled_dot_product_attention's choice, which works without CUDA. torch_npu "
        "2.13.0's SDPA reads only the flash and math flags and takes its math path only where math is on and flash "
        "off: {what}.)")


def sdp_switch_note(checker: Checker, node: ast.AST, qualname: str) -> str:
    """The note for a call of one of CUDA's SDPA switches that leaves the NPU's SDPA on its fused
    kernel (`enable_flash_sdp(True)`, `enable_math_sdp(...)`, `enable_mem_efficient_sdp(...)`),
    with a constant argument; "" otherwise."""
    if qualname != NEVER_READ and qualname not in KEEPS_FUSED:
        return ""
    call = next((call for call, _scope in checker.events.calls if call.func is node), None)
    if call is None or len(call.args) != 1 or type(call.args[0]) is not ast.Constant:
        return ""
    value = call.args[0].value
    if qualname == NEVER_READ:
        return NOTE.format(what="it never reads this one")
    wanted = KEEPS_FUSED[qualname]
    if wanted is not None and value is not wanted:
        return ""
    return NOTE.format(what=f"`{qualname.rpartition('.')[2]}({value!r})` leaves it on its fused kernel, as by default")
