"""The NPU's number formats on the CPU: HF32 operands in convolutions and matmul, fp16 saturation."""

from __future__ import annotations

import contextlib
import functools

from .patches import Patches

# HF32 as Ascend documents it (CANN ATC `--allow_hf32`, AscendC `SetHF32`): the float32
# range (8 exponent bits) with an 11-bit mantissa, converted round-to-nearest-even by
# default. ../shared/data does not give the bit layout; this is the assumption the
# emulation makes, and every emulated result says so.
HF32_MANTISSA_BITS = 11
HF32_NOTE = ("HF32 emulated as float32 rounded to 11 mantissa bits, round-to-nearest-even (Ascend's documented "
             "1-8-11 format; accumulation kept in float32; backward uses HF32-rounded operands only)")
CONV_FUNCTIONS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
# function name → positions of the matrix operands that HF32 matmul rounds (bias is not)
MATMUL_FUNCTIONS = {"matmul": (0, 1), "mm": (0, 1), "bmm": (0, 1), "addmm": (1, 2), "baddbmm": (1, 2)}
FP16_MAX = 65504.0


def round_to_hf32(torch, tensor):
    """float32 → nearest HF32 value (RNE on the 12 dropped mantissa bits), gradient passed straight through."""
    if tensor.dtype != torch.float32:
        return tensor
    drop = 23 - HF32_MANTISSA_BITS
    with torch.no_grad():
        bits = tensor.detach().contiguous().view(torch.int32)
        half = (1 << (drop - 1)) - 1
        rounded = ((bits + half + ((bits >> drop) & 1)) & ~((1 << drop) - 1)).view(torch.float32).view(tensor.shape)
        finite = torch.isfinite(tensor)
    return torch.where(finite, tensor + (rounded - tensor).detach(), tensor)


def patch_emulation(torch, patches: Patches, emulate: dict, notes: list[str]) -> None:
    # The switches the code itself sets decide at call time, as on the NPU: under
    # transfer_to_npu, `torch.backends.cudnn.allow_tf32` is `torch.npu.conv.allow_hf32` and
    # `torch.backends.cuda.matmul.allow_tf32` is `torch.npu.matmul.allow_hf32`.
    def conv_on() -> bool:
        on = bool(emulate.get("conv_hf32", True) and torch.backends.cudnn.allow_tf32)
        if not on and emulate.get("conv_hf32", True):
            said("fp32 convolutions kept in fp32: the code set torch.backends.cudnn.allow_tf32 = False")
        return on

    def matmul_on() -> bool:
        if not emulate.get("matmul_hf32") and torch.backends.cuda.matmul.allow_tf32:
            said("fp32 matmul in HF32: the code set torch.backends.cuda.matmul.allow_tf32 = True")
            return True
        return bool(emulate.get("matmul_hf32"))

    def said(note: str) -> None:
        if note not in notes:
            notes.append(note)

    def rounding(original, positions, enabled):
        @functools.wraps(original)
        def run(*args, **kwargs):
            # Under autocast these operations take float16/bfloat16 operands: HF32 is for float32 ones
            # (rounding first to HF32 would round twice, which the NPU does not).
            if enabled() and not torch.is_autocast_enabled("cpu"):
                args = tuple(round_to_hf32(torch, a) if i in positions and isinstance(a, torch.Tensor) else a
                             for i, a in enumerate(args))
            return original(*args, **kwargs)
        return run

    functional = torch.nn.functional
    if emulate.get("hf32", True):
        for name in CONV_FUNCTIONS:
            patches.set(functional, name, rounding(getattr(functional, name), (0, 1), conv_on))
            patches.set(torch, name, rounding(getattr(torch, name), (0, 1), conv_on))
        for name, positions in MATMUL_FUNCTIONS.items():
            patches.set(torch, name, rounding(getattr(torch, name), positions, matmul_on))
            if name in ("matmul", "mm", "bmm"):
                patches.set(torch.Tensor, name, rounding(getattr(torch.Tensor, name), positions, matmul_on))
        patches.set(torch.Tensor, "__matmul__", rounding(torch.Tensor.__matmul__, (0, 1), matmul_on))
        patches.set(functional, "linear", rounding(functional.linear, (0, 1), matmul_on))


def keep_switches(torch, stack: contextlib.ExitStack) -> None:
    """The code may set the TF32/HF32 switches; a warm worker must not carry them to the next run."""
    saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)

    def restore() -> None:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved
    stack.callback(restore)


def saturate_fp16(torch, func, result):
    if isinstance(result, torch.Tensor):
        if result.dtype != torch.float16:
            return result
        in_place = getattr(func, "__name__", "").endswith("_")
        with torch.no_grad() if in_place else contextlib.nullcontext():
            if in_place:
                return result.nan_to_num_(0.0, FP16_MAX, -FP16_MAX)
        return torch.nan_to_num(result, nan=0.0, posinf=FP16_MAX, neginf=-FP16_MAX)
    if isinstance(result, (tuple, list)) and any(isinstance(r, torch.Tensor) for r in result):
        items = [saturate_fp16(torch, func, r) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    return result
