"""CUDA's SDPA switches that leave torch_npu's SDPA on its fused kernel (rules/sdp_switches.py),
read by the engine from real code: a handler in the place of NPU201's hook reports each
reference's note."""

from __future__ import annotations

from ascend_lsp.engine.analyzer import analyze_with
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.registry import EVENT_KINDS, RuleSet
from ascend_lsp.rules import RULES
from ascend_lsp.rules.sdp_switches import sdp_switch_note

CODE = """import torch
from torch.backends.cuda import enable_math_sdp

torch.backends.cuda.enable_flash_sdp(True)
torch.backends.cuda.enable_flash_sdp(False)
torch.backends.cuda.enable_mem_efficient_sdp(False)
enable_math_sdp(False)
torch.backends.cuda.enable_flash_sdp(use_flash)
switch = torch.backends.cuda.enable_mem_efficient_sdp
torch.backends.cuda.flash_sdp_enabled()
"""


def notes(text: str) -> list[tuple[int, str]]:
    def on_reference(checker, ref) -> None:
        if ref.qualname.startswith("torch.backends.cuda."):
            checker.report("NPU201", ref.node, sdp_switch_note(checker, ref.node, ref.qualname) or "-")

    handlers = {kind: [] for kind in EVENT_KINDS} | {"reference": [(frozenset({"NPU201"}), on_reference)]}
    rules = RuleSet({"NPU201": RULES["NPU201"]}, handlers)
    analysis = analyze_with(text, Settings(select=("NPU201",)), "train.py", rules=rules)
    return [(f.range.start_line + 1, f.message) for f in analysis.findings]


def test_notes_say_which_switches_leave_the_fused_kernel() -> None:
    found = notes(CODE)
    fused = "leaves it on its fused kernel, as by default.)"
    assert [(line, message.endswith(fused), "never reads this one" in message, message == "-")
            for line, message in found] == [
        (4, True, False, False),
        (5, False, False, True),  # flash off: the NPU's SDPA may take its math path
        (6, False, True, False),
        (7, True, False, False),
        (8, False, False, True),  # not a constant
        (9, False, False, True),  # named, not called
        (10, False, False, True),  # not a switch
    ]
    assert found[0][1] == (" (It only sets a global flag of scaled_dot_product_attention's choice, which works without "
                           "CUDA. torch_npu 2.13.0's SDPA reads only the flash and math flags and takes its math path "
                           "only where math is on and flash off: `enable_flash_sdp(True)` leaves it on its fused "
                           "kernel, as by default.)")
