"""RUN: results of "Run on NPU", reported by the runner (not by the static analysis)."""

from __future__ import annotations

from ..engine.model import Severity
from .base import rule

rule(
    code="RUN001", name="precision-delta", severity=Severity.INFO, fix="never", targets=("torch_npu", "mindspore"),
    message="{summary}",
    doc=dict(
        what="Reports the result of \"Run on NPU\" on the function it ran: information when every output passes, a "
             "warning or an error when one does not, or when the run itself failed (timeout, crash, exception, "
             "missing device). The hover shows the table per output: shape, dtype, max abs and max relative "
             "error, cosine similarity, share of elements within 1‰ and 1‱, ULP, verdict and the threshold that "
             "decided it.",
        why="The same code can compute different numbers on an Ascend NPU: HF32 convolutions by default on A2/A3, "
            "float64 silently run as float32, operators that fall back to the CPU. Static rules cannot see that; "
            "running the function on a CPU reference and on the target, with identical inputs, can.",
        example="def conv_block():  # RUN001 emulate: PASS, max abs 7.9e-04 < 0.001 (emulated)\n"
                "    block = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32))\n"
                "    return block(torch.randn(4, 16, 28, 28))",
        fix="None: the result is information. Run again after a change with the lens or `lsp-check run`.",
        source="Ascend msprobe (mindstudio-probe 26.2.0) acc_check per-output grading: cosine ≤ 0.99 → error; max abs "
               "< 0.001 → pass; then the relative-error shares per dtype (mappings/msprobe/thresholds.toml).",
    ),
)
