"""What the `emulate` target does to numbers on each chip, from the facts in ../shared/data.

`engine/config.py` accepts A2, A3 and 950DT for `chip`; the runner also accepts the names
the issue tracker and Ascend's documents use (910A, 910B, 310P, 950), kept here until the
configuration knows them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Chip:
    name: str
    fp16_saturation: bool  # overflow → ±65504, NaN → 0 (no IEEE inf/nan mode)
    hf32: bool  # HF32 cube math exists (torch_npu: conv on, matmul off by default)
    bf16: bool
    assumptions: tuple[str, ...]


_SATURATION = ("fp16 saturation mode (torch_npu FACTS: Atlas training-series 910A supports saturation mode only; "
               "real_world_failures: 910A / 310P inf→65504, NaN→0)")
_NO_HF32 = "no HF32 emulated (HF32 is the A2/A3 cube format; 910A-class fp32 handling is not emulated)"
_NO_BF16 = "bfloat16 treated as absent (torch.npu.is_bf16_supported() is False on this chip: an assumption)"
_INF_NAN = "IEEE inf/nan (INF_NAN_MODE_ENABLE=1, the A2/A3 default; 950DT supports INF_NAN mode only)"
_HF32 = "HF32: fp32 convolutions on, fp32 matmul off, unless the code sets the switches (torch_npu defaults)"

CHIPS = {
    "910A": Chip("910A", True, False, False, (_SATURATION, _NO_HF32, _NO_BF16)),
    "310P": Chip("310P", True, False, False, (_SATURATION, _NO_HF32, _NO_BF16)),
    "A2": Chip("A2", False, True, True, (_INF_NAN, _HF32)),
    "A3": Chip("A3", False, True, True, (_INF_NAN, _HF32)),
    "950": Chip("950", False, True, True, (_INF_NAN, _HF32)),
}
ALIASES = {"910B": "A2", "910C": "A3", "950DT": "950"}  # FACTS.md: A2 = 910B, A3 = 910C
NAMES = tuple(CHIPS) + tuple(ALIASES)


def chip(name: str) -> Chip:
    """The chip called `name` (case-insensitive); ValueError naming the accepted ones."""
    key = ALIASES.get(name.upper(), name.upper())
    if key not in CHIPS:
        raise ValueError(f"unknown chip {name!r} (one of {', '.join(NAMES)})")
    return CHIPS[key]
