"""A name a top-level import binds, used only as a type or in checks only CUDA runs
(rules/import_uses.py): its import's finding is info, read from the whole text, so an edit that
adds a use elsewhere gives what a full analysis gives."""

from __future__ import annotations

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.analyzer import TextEdit
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.text import split_lines

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


LEFT_OVER = """import torch
from torch.cuda.amp import autocast

if torch.__version__ >= "1.6":
    from torch.cuda.amp import GradScaler
else:
    class GradScaler:  # a stand-in where torch is too old
        pass


def train(model, batch):
    with torch.autocast("cuda"):
        return model(batch)
"""


def test_a_module_level_import_never_read_in_the_module_is_info() -> None:
    analysis = analyze(LEFT_OVER, SETTINGS, path="/p/pkg/model.py")
    assert found(analysis) == [(2, "NPU103", "INFO"), (5, "NPU103", "INFO"), (12, "NPU101", "WARNING")]
    assert "never used in this module" in analysis.findings[0].message


def test_a_module_level_import_read_or_handed_on_keeps_its_warning() -> None:
    read = LEFT_OVER.replace("        return model(batch)", "        return GradScaler(), model(batch)")
    assert found(analyze(read, SETTINGS, path="/p/pkg/model.py"))[:2] == [(2, "NPU103", "INFO"),
                                                                          (5, "NPU103", "WARNING")]
    exported = LEFT_OVER + '\n__all__ = ["autocast"]\n'
    assert found(analyze(exported, SETTINGS, path="/p/pkg/model.py"))[0] == (2, "NPU103", "WARNING")
    # a package's __init__.py exists to hand names on
    assert found(analyze(LEFT_OVER, SETTINGS, path="/p/pkg/__init__.py"))[:2] == [(2, "NPU103", "WARNING"),
                                                                                 (5, "NPU103", "WARNING")]


def test_a_use_added_to_a_never_read_import_gives_what_a_full_analysis_gives() -> None:
    base = analyze(LEFT_OVER, SETTINGS, path="/p/pkg/model.py")
    lines = split_lines(LEFT_OVER)
    lines[12] = "        return autocast(), model(batch)\n"
    edited = "".join(lines)
    incremental = analyze(edited, SETTINGS, path="/p/pkg/model.py", previous=base, edit=TextEdit(12, 12, 0))
    full = analyze(edited, SETTINGS, path="/p/pkg/model.py")
    assert snapshot(incremental) == snapshot(full)
    assert found(full)[0] == (2, "NPU103", "WARNING")
