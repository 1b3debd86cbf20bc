"""CUDA's SDPA switches that leave torch_npu's SDPA on its fused kernel (rules/sdp_switches.py):
NPU201 on each reference, lowered to info with the note where the switch keeps the kernel."""

from __future__ import annotations

from ascend_lsp.engine.analyzer import analyze_with
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.engine.registry import HANDLERS, RuleSet
from ascend_lsp.rules import RULES

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
    """(line, the note after the rule's message, or "-" where a warning or error has none)."""
    analysis = analyze_with(text, Settings(select=("NPU201",)), "train.py", rules=RuleSet(RULES, HANDLERS))
    found = []
    for f in analysis.findings:
        note = f.message[f.message.index(" (It only sets"):] if f.severity == Severity.INFO else "-"
        found.append((f.range.start_line + 1, note))
    return found


def test_notes_say_which_switches_leave_the_fused_kernel() -> None:
    found = notes(CODE)
    fused = "leaves it on its fused kernel, as by default.)"
    assert [(line, message.endswith(fused), "never reads this one" in message, message == "-")
            for line, message in found] == [
        (2, False, False, True),  # the import that names enable_math_sdp: its calls are not read there
        (4, True, False, False),
        (5, False, False, True),  # flash off: the NPU's SDPA may take its math path
        (6, False, True, False),
        (8, False, False, False),  # known only at run time: either way the call works
        (9, False, False, True),  # named, not called
        (10, False, False, True),  # not a switch
    ]
    assert found[1][1] == (" (It only sets a global flag of scaled_dot_product_attention's choice, which works without "
                           "CUDA. torch_npu 2.13.0's SDPA reads only the flash and math flags and takes its math path "
                           "only where math is on and flash off: `enable_flash_sdp(True)` leaves it on its fused "
                           "kernel, as by default.)")
    assert found[4][1].endswith(": `enable_flash_sdp(...)` given True leaves it on its fused kernel, as by default; "
                                "given False, it takes its math path, the same results, slower.)")
