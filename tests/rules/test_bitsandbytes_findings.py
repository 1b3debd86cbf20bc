"""The severities of bitsandbytes' findings follow what its 0.50.2 wheel does on an NPU: its int8
and 4-bit ops fall back to generic PyTorch code (NPU304 warns, the requirement is information),
its 8-bit and paged optimizers do not run (NPU304 errors)."""

from __future__ import annotations

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings

CODE = '''import bitsandbytes as bnb
from transformers import BitsAndBytesConfig, TrainingArguments

config = BitsAndBytesConfig(load_in_8bit=True)
args = TrainingArguments("out", optim="paged_adamw_32bit")
opt = bnb.optim.Lion8bit(params)
opt = bnb.optim.Lion(params)
'''


def test_optimizers_without_an_npu_path_are_errors() -> None:
    found = analyze(CODE, Settings(select=("NPU304",)), "train.py").findings
    assert [(f.range.start_line + 1, f.severity.name) for f in found] == [
        (1, "WARNING"), (4, "WARNING"), (5, "ERROR"), (6, "ERROR")]


def test_bitsandbytes_is_information_where_a_cuda_only_package_is_an_error() -> None:
    """bitsandbytes installs, and its int8 and 4-bit ops fall back to generic PyTorch code on the NPU:
    its row has its own first sentence and severity; the CUDA-only packages keep the rule's."""
    found = analyze("bitsandbytes>=0.43\nflash-attn\n", Settings(), "requirements.txt").findings
    assert [(f.code, f.severity.name, f.message.split(". ")[0]) for f in found] == [
        ("NPU502", "INFO", "`bitsandbytes>=0.43` is bitsandbytes, which lists the NPU as a device but ships no NPU "
                           "kernels"),
        ("NPU502", "ERROR", "`flash-attn` is built for CUDA GPUs"),
    ]
