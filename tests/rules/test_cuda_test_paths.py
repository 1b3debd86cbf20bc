"""A test for CUDA whose other path raises or falls to the CPU keeps its warning in code that
handles the NPU (rules/cuda_test_paths.py), and a dict's `"device"` key places what it is given."""

from __future__ import annotations

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings


def severities(text: str) -> dict[tuple[int, str], str]:
    return {(f.range.start_line + 1, f.code): f.severity.name
            for f in analyze(text, Settings(), "x.py").findings if f.code in ("NPU101", "NPU103")}


OTHER_PATHS = '''import torch
import torch_npu


def autocast(device):
    bf16 = device == "cuda"
    if not bf16:
        raise RuntimeError("bf16 needs CUDA")
    if device == "npu":
        return torch_npu.npu.amp.autocast()


def select():
    return "cuda" if torch.cuda.is_available() else "cpu"


def overlap(device):
    if device == "cuda":
        return 2
    return 1


def generator():
    run_opts = {"device": "cuda"}
    return run_opts
'''


def test_a_cuda_test_whose_other_path_fails_keeps_its_warning() -> None:
    assert severities(OTHER_PATHS) == {
        (6, "NPU101"): "WARNING",  # the NPU's path raises
        (14, "NPU101"): "INFO", (14, "NPU103"): "WARNING",  # the NPU's path is the CPU
        (18, "NPU101"): "INFO",  # the authors' path for other devices
        (24, "NPU101"): "WARNING",  # a "device" key places the model
    }
