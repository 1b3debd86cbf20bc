"""RUN: results of "Run on NPU", reported by the runner (not by the static analysis)."""

from __future__ import annotations

from ..engine.model import Severity
from ..engine.registry import rule
from .citations import MSPROBE

rule(
    code="RUN001", name="precision-delta", severity=Severity.INFO, fix="never", targets=("torch_npu", "mindspore"),
    reported_by=("ascend_lsp.lsp.run_marks.run_diagnostics",),
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
        source=f"Ascend {MSPROBE} acc_check per-output grading: cosine ≤ 0.99 → error; max abs "
               "< 0.001 → pass; then the relative-error shares per dtype (mappings/msprobe/thresholds.toml).",
    ),
)

rule(
    code="RUN002", name="first-divergent-layer", severity=Severity.ERROR, fix="never",
    reported_by=("ascend_lsp.lsp.runs.layer_marks", "ascend_lsp.lsp.run_marks.run_diagnostics"),
    targets=("torch_npu", "mindspore"), message="{summary}",
    doc=dict(
        what="Reports where \"Run on NPU: find the layer\" (`lsp-check run SPEC --layers`) located the first "
             "divergence: on the line that constructs the module (`self.fc2 = nn.Linear(...)`) that introduced an "
             "ERROR (or a WARNING) while its inputs did not have one, and likewise the first overflow: the first "
             "module whose outputs hold Inf/NaN the reference's do not while its inputs hold none. The hover holds "
             "the table of every module call in execution order: verdict, the verdict of its inputs, max abs "
             "error, cosine, construction line, the standard that decided and why.",
        why="A wrong output says that a model diverges, not where. Every module downstream of the first "
            "divergence inherits it; the module to look at is the innermost one whose inputs still agreed. "
            "msprobe finds it from two dumps and a spreadsheet; this points at the line.",
        example="class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.fc1 = nn.Linear(16, 32)  # RUN002 first divergence: blocks.1.fc1 (Linear) ERROR: "
                "nan inf mismatch 256 > 0",
        fix="None: the result is information. Look at what the module does on the target (fp16 overflow, a "
            "different default in the MindSpore port, HF32) and run again.",
        source=f"Ascend {MSPROBE}: per-tensor grading of a module dump (acc_check cascade, "
               "mappings/msprobe/thresholds.toml) and the first-diff analysis of `msprobe compare` (first row in "
               "execution order that fails).",
    ),
)
