"""CUDA's switches of scaled_dot_product_attention's kernels, and what they change on an NPU.

`torch.backends.cuda.enable_flash_sdp(b)`, `enable_mem_efficient_sdp(b)` and `enable_math_sdp(b)`
only set a flag of the global context, without CUDA too (torch 2.13
torch/backends/cuda/__init__.py:515-521: `torch._C._set_sdp_use_flash(enabled)`). torch_npu 2.13.0's
SDPA (op-plugin ScaledDotProductAttentionKernelNpuOpApi.cpp in libtorch_npu.so) reads two of them,
`at::Context::userEnabledMathSDP` and `userEnabledFlashSDP`, and takes its math path only where
math is on and flash off (checked in the wheel's code): the mem-efficient flag it never reads,
and flash on or math off leaves it on its fused kernel, as by default. Only `enable_flash_sdp(False)`
(math on) changes what an NPU runs: its math path, the same results, slower. A value known only
at run time (`enable_flash_sdp(allow_flash)`, a caller's choice) is one or the other: the call
works either way, so it is info, and the note says what False would do.

The hook NPU201 needs (rules/npu2xx_support.check_support, which no module here may import
through harmless_calls): `note = note or sdp_switch_note(checker, node, qualname)` before it
reports, which makes the finding info with this note."""

from __future__ import annotations

import ast

from ..engine.checker import Checker

SWITCH = "torch.backends.cuda.enable_{}_sdp"
KEEPS_FUSED = {SWITCH.format("flash"): True, SWITCH.format("math"): None}  # the values that keep the fused kernel
NEVER_READ = SWITCH.format("mem_efficient")
# enable_flash_sdp given a value known only at run time: either way the call works
RUN_TIME = ("`{switch}(...)` given True leaves it on its fused kernel, as by default; given False, it takes its math "
            "path, the same results, slower")
NOTE = (" (It only sets a global flag of scaled_dot_product_attention's choice, which works without CUDA. torch_npu "
        "2.13.0's SDPA reads only the flash and math flags and takes its math path only where math is on and flash "
        "off: {what}.)")


def sdp_switch_note(checker: Checker, node: ast.AST, qualname: str) -> str:
    """The note for a call of one of CUDA's SDPA switches with one argument that leaves the NPU's
    SDPA on its fused kernel (`enable_flash_sdp(True)`, `enable_math_sdp(...)`,
    `enable_mem_efficient_sdp(...)`), or whose value is known only at run time
    (`enable_flash_sdp(allow_flash)`); "" otherwise (`enable_flash_sdp(False)`, named, not called)."""
    if qualname != NEVER_READ and qualname not in KEEPS_FUSED:
        return ""
    call = next((call for call, _scope in checker.events.calls if call.func is node), None)
    if call is None or len(call.args) != 1 or call.keywords or type(call.args[0]) is ast.Starred:
        return ""
    if qualname == NEVER_READ:
        return NOTE.format(what="it never reads this one")
    switch, wanted = qualname.rpartition(".")[2], KEEPS_FUSED[qualname]
    if type(call.args[0]) is not ast.Constant:
        if wanted is None:
            return NOTE.format(what=f"`{switch}(...)` leaves it on its fused kernel, as by default, whatever its value")
        return NOTE.format(what=RUN_TIME.format(switch=switch))
    value = call.args[0].value
    if wanted is not None and value is not wanted:
        return ""
    return NOTE.format(what=f"`{switch}({value!r})` leaves it on its fused kernel, as by default")
