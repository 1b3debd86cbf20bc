"""A name a top-level import binds, used only as a type or in checks only CUDA runs
(rules/import_uses.py): its import's finding is info, read from the whole text, so an edit that
adds a use elsewhere gives what a full analysis gives."""

from __future__ import annotations

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.analyzer import TextEdit
from ascend_lsp.engine.config import Settings

SETTINGS = Settings(select=("NPU1", "NPU2"))

TEXT = """import torch
from torch import cuda
from torch.nn import RNNBase


def train(data, rnn: RNNBase):
    if not data.is_cuda and cuda.is_available():
        raise RuntimeError("data is not on the GPU")
    return isinstance(rnn, RNNBase)


def other():
    return 0
"""


def found(analysis) -> list[tuple[int, str, str]]:
    return [(f.range.start_line + 1, f.code, f.severity.name) for f in analysis.findings]


def snapshot(analysis) -> list[tuple]:
    return [(f.code, f.range, f.message, f.severity, f.related) for f in analysis.findings]


def test_imports_used_only_as_types_or_in_cuda_only_checks_are_info() -> None:
    assert found(analyze(TEXT, SETTINGS)) == [(2, "NPU103", "INFO"), (3, "NPU201", "INFO"), (7, "NPU102", "INFO")]


def test_a_use_added_elsewhere_gives_what_a_full_analysis_gives() -> None:
    base = analyze(TEXT, SETTINGS)
    lines = TEXT.splitlines(keepends=True)
    lines[12] = "    return RNNBase(cuda.device_count())\n"  # in `other`: constructed, and CUDA asked
    edited = "".join(lines)
    incremental = analyze(edited, SETTINGS, previous=base, edit=TextEdit(12, 12, 0))
    full = analyze(edited, SETTINGS)
    assert snapshot(incremental) == snapshot(full)
    assert found(full) == [(2, "NPU103", "WARNING"), (3, "NPU201", "ERROR"), (7, "NPU102", "INFO")]


def test_an_edit_that_leaves_the_text_broken_elsewhere_keeps_what_it_says() -> None:
    base = analyze(TEXT, SETTINGS)
    lines = TEXT.splitlines(keepends=True)
    lines[12] = "    return torch.cuda.synchronize(\n"  # typed half-way: the text does not parse
    edited = "".join(lines)
    incremental = analyze(edited, SETTINGS, previous=base, edit=TextEdit(12, 12, 0))
    assert snapshot(incremental) == snapshot(analyze(edited, SETTINGS))
    assert found(incremental)[:2] == [(2, "NPU103", "INFO"), (3, "NPU201", "INFO")]


def test_a_check_is_read_with_the_arms_of_its_chain() -> None:
    text = ("from torch import cuda\n\n\ndef f(x):\n    if x is None:\n        pass\n"
            "    elif cuda.is_available() and not x.is_cuda:\n        raise RuntimeError('not on the GPU')\n"
            "    else:\n        x = x.float()\n    return x\n")
    assert found(analyze(text, Settings(select=("NPU103",)))) == [(1, "NPU103", "WARNING")]
    without_else = text.replace("    else:\n        x = x.float()\n", "")
    assert found(analyze(without_else, Settings(select=("NPU103",)))) == [(1, "NPU103", "INFO")]


def test_statements_over_several_lines_are_read_whole() -> None:
    text = ("from torch.nn import RNNBase\n\n\nclass A:\n    def __init__(\n        self,\n        rnn: RNNBase,\n"
            "    ) -> None:\n        \"\"\"Holds an RNNBase.\"\"\"\n        if isinstance(\n            rnn,\n"
            "            RNNBase,\n        ):\n            self.rnn = rnn\n")
    assert found(analyze(text, Settings(select=("NPU201",)))) == [(1, "NPU201", "INFO")]
    assert found(analyze(text + "\n\ndef make():\n    return RNNBase\n", Settings(select=("NPU201",)))) == [
        (1, "NPU201", "ERROR")]


def test_a_name_in_a_string_is_used_as_code() -> None:
    text = TEXT + '\n__all__ = ["RNNBase", "train"]\n'
    assert (3, "NPU201", "ERROR") in found(analyze(text, SETTINGS))
