"""CUDA tests the checker reads through a name (engine/guards.py: local_held, held_tests) and
arms only an older torch takes (torch_target): what a full analysis says, what an edit elsewhere
changes, and which torch a project's pins make the target's."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.analyzer import TextEdit
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.guards import held_tests
from ascend_lsp.engine.model import Severity
from ascend_lsp.project import ProjectContext

SETTINGS = Settings(select=("NPU1",))

HELD = """import torch

USE_GPU = torch.cuda.is_available()


class Monitor:
    def __init__(self):
        self.gpu_available = torch.cuda.is_available()

    def read(self):
        if self.gpu_available:
            return torch.cuda.memory_allocated()
        return 0


def peak():
    if USE_GPU:
        return torch.cuda.max_memory_allocated()
    return 0
"""


def severities(text: str, settings: Settings = SETTINGS, **kw) -> list[tuple[int, str, str]]:
    return [(f.range.start_line + 1, f.code, f.severity.name) for f in analyze(text, settings, **kw).findings]


def snapshot(analysis) -> list[tuple]:
    return [(f.code, f.range, f.message, f.severity, f.related) for f in analysis.findings]


def test_what_a_global_or_an_attribute_holds_guards_other_statements() -> None:
    assert severities(HELD) == [(3, "NPU103", "WARNING"), (8, "NPU103", "WARNING"), (12, "NPU103", "INFO"),
                                (18, "NPU103", "INFO")]


@pytest.mark.parametrize(("line", "new"), [
    (2, "USE_GPU = True\n"),  # the global no longer holds a CUDA test
    (7, "        self.gpu_available = False\n"),  # nor the attribute: a member's edit
    (7, "        self.gpu_available = torch.cuda.is_available() and torch.cuda.device_count() > 1\n"),
    (12, "        self.gpu_available = 0\n"),  # assigned again, in another method
    (14, "\n\nUSE_GPU = False\n"),  # assigned twice in the module
    (15, "def peak(USE_GPU=True):\n"),  # a parameter of the same name: not the global
])
def test_an_edit_elsewhere_gives_what_a_full_analysis_gives(line: int, new: str) -> None:
    lines = HELD.splitlines(keepends=True)
    base = analyze(HELD, SETTINGS)
    edited = "".join(lines[:line] + [new] + lines[line + 1:])
    incremental = analyze(edited, SETTINGS, previous=base, edit=TextEdit(line, line, new.count("\n") - 1))
    full = analyze(edited, SETTINGS)
    assert snapshot(incremental) == snapshot(full)
    assert [f.severity for f in full.findings] != [f.severity for f in base.findings] or line == 7 and "and" in new


def test_a_local_name_gives_its_test_the_calls() -> None:
    text = ("import torch\n\n\ndef f(x):\n    ok = torch.cuda.is_available()\n    if ok:\n        x = x.cuda()\n"
            "    return x\n")
    [finding] = analyze(text, SETTINGS).findings
    assert (finding.code, finding.range.start_line + 1, finding.severity) == ("NPU103", 5, Severity.WARNING)
    assert [r.message for r in finding.related] == ["inside the guard: NPU102 `.cuda()` is CUDA-only. Use `.npu()`."]
    # an edit inside the function re-walks it, and the relation is made again
    edited = text.replace("x = x.cuda()", "x = x.cuda().cuda()")
    again = analyze(edited, SETTINGS, previous=analyze(text, SETTINGS), edit=TextEdit(6, 6, 0))
    assert snapshot(again) == snapshot(analyze(edited, SETTINGS))
    assert len(again.findings[0].related) == 2


def test_what_the_file_holds_is_read_line_by_line() -> None:
    text = ("import torch\nA = torch.cuda.is_available()\nB = (torch.cuda.is_available()\n     and x)\n"
            "C = torch.cuda.is_available()\nC = False\nD = 'cuda' if x else 'cpu'\nE = torch.device('cuda')\n"
            "def f():\n    global F\n    F = 1\nF = torch.cuda.is_available()\n"
            "class K:\n    def __init__(self):\n        self.g = torch.cuda.device_count() > 1\n        local = x.is_cuda\n")
    # B spans two lines, C is assigned twice, D and E choose a device, F is declared global
    assert held_tests(text) == {"A": "torch.cuda.is_available()", "self.g": "torch.cuda.device_count() > 1"}


OLD_TORCH = """import torch

if torch_version_ge(2, 4):
    custom_fwd = torch.amp.custom_fwd
else:
    custom_fwd = torch.cuda.amp.custom_fwd
"""


@pytest.mark.parametrize(("pins", "severity", "why"), [
    ({}, Severity.INFO, "older than 2.13.0, the one torch_npu 2.13.0 (torch-npu-version) is built for"),
    ({"requirements.txt": "torch-npu==2.4.0\n"}, Severity.INFO,
     "older than 2.4.0, the oldest the project's torch-npu pin `==2.4.0` admits"),
    ({"requirements.txt": "torch-npu==2.1.0.post3\n"}, Severity.WARNING, ""),
    # a torch pin that admits torch-npu-version's torch leaves it the target's
    ({"requirements.txt": "torch>=1.9.1\n"}, Severity.INFO, "older than 2.13.0, the one torch_npu 2.13.0"),
    ({"requirements.txt": "torch==2.1.0\n"}, Severity.WARNING, ""),  # torch 2.1 takes that arm
    ({"requirements.txt": "torch<2.4\n"}, Severity.WARNING, ""),  # down to the oldest torch a torch_npu has
    ({"requirements.txt": "torch>=2.5,<2.7\n"}, Severity.INFO,
     "older than 2.5, the oldest the project's torch pin `>=2.5,<2.7` admits that a torch_npu is built for"),
    ({"requirements.txt": "torch-npu<2.6\n"}, Severity.WARNING, ""),  # no lower bound: the oldest torch_npu known
])
def test_the_target_torch_comes_from_the_pins_then_the_setting(tmp_path: Path, pins: dict[str, str],
                                                               severity: Severity, why: str) -> None:
    for name, text in pins.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    project = ProjectContext(str(tmp_path)) if pins else None
    [finding] = analyze(OLD_TORCH, SETTINGS, str(tmp_path / "compat.py"), project=project).findings
    assert finding.severity is severity
    assert why in finding.message and ("Taken only by a torch older" in finding.message) is bool(why)


@pytest.mark.parametrize("test", ["TORCH_2_1", "not TORCH_LT_2_1", "torch.__version__ >= '2.1'",
                                  "version.parse(torch.__version__) >= version.parse('2.1.0')",
                                  "TORCH_VERSION > (2, 0)", "is_torch_version('>=', '2.1')",
                                  "(2, 1) <= torch_version()", "TORCH_1_10 and not TORCH_LT_1_13",
                                  "TORCH_2_1 or x"])
def test_version_tests_that_every_target_torch_passes(test: str) -> None:
    text = f"import torch\n\nif {test}:\n    x = 1\nelse:\n    torch.cuda.synchronize()\n"
    [finding] = analyze(text, SETTINGS).findings
    assert finding.severity is Severity.INFO and "Taken only by a torch older" in finding.message


@pytest.mark.parametrize("test", ["TORCH_2_14", "torch.__version__ >= '2.14'", "torch_version == (2, 1)",
                                  "TORCH_LT_2_1 or x", "torch_2d", "version >= (2, 1)"])
def test_version_tests_that_may_go_either_way(test: str) -> None:
    text = f"import torch\n\nif {test}:\n    x = 1\nelse:\n    torch.cuda.synchronize()\n"
    [finding] = analyze(text, SETTINGS).findings
    assert finding.severity is Severity.WARNING
