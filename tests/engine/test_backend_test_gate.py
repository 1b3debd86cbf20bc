"""guards.may_test_backend: a file's `if`s are read for backend tests only when its text can hold
one. `input`, in most files, holds `npu` but never as a word."""

from __future__ import annotations

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine import analyzer
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.guards import may_test_backend
from ascend_lsp.engine.model import Severity

BRANCHES = '''import torch


def pick(inputs, device_type):
    if device_type == "cuda":
        torch.cuda.synchronize()
    elif device_type == "{npu}":
        torch.npu.synchronize()
    return inputs
'''


@pytest.mark.parametrize("text, expected", [
    ("x = input()\ninputs = 1\nINPUT = 2\n", False),
    ("if is_npu_available(): pass\n", True),
    ("x = input()\nif d == 'npu:0': pass\n", True),
    ("x = input()\nif NPU: pass\n", True),  # any case
    ("import torch_npu\n", True),
    ("backend = 'hccl'\n", True),
    ("print('ascend')\n", True),
    ("if not is_mps_tensor_safe(x): pass\n", True),  # another backend's arm
    ("if torch.version.hip: pass\n", True),
    ("relationship = ship(chip)\n", False),  # `hip` in words
])
def test_the_gate(text: str, expected: bool) -> None:
    assert may_test_backend(text.lower()) is expected


@pytest.mark.parametrize("npu", ["npu", "NPU"])
def test_a_file_full_of_input_still_has_its_npu_branch_read(npu: str, monkeypatch) -> None:
    text = BRANCHES.replace("{npu}", npu)
    findings = [(f.code, f.range.start_line, f.severity) for f in analyze(text, Settings()).findings]
    monkeypatch.setattr(analyzer, "may_test_backend", lambda text: True)
    assert findings == [(f.code, f.range.start_line, f.severity) for f in analyze(text, Settings()).findings]
    # the CUDA branch beside the NPU one is advice
    assert [(code, line) for code, line, severity in findings if severity == Severity.INFO][:2] == [
        ("NPU101", 4), ("NPU103", 5)]
