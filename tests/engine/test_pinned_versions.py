"""Rules that read the versions a project pins (project.py): NPU109 (torch_npu loaded by
`import torch` from torch_npu 2.5.1 and torch 2.5) and NPU112 (an integer device is a CUDA
ordinal before torch 2.5), on real projects written to disk; and the result cache's key,
which must change with the pins."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.cli.cache import settings_key
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.engine.versions import admits_from, allows_before
from ascend_lsp.project import ProjectContext

SETTINGS = Settings(select=("NPU109", "NPU112"))
CODE = "import torch\n\ntorch.npu.set_device(0)\nx = x.to(0)\n"
MAPPED = 'from transformers import AutoModel\n\nmodel = AutoModel.from_pretrained("m", device_map={"": 0})\n'


def findings(tmp_path: Path, packaging: dict[str, str]) -> dict[str, tuple[Severity, str]]:
    for name, text in packaging.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    project = ProjectContext(str(tmp_path))
    found = analyze(CODE, SETTINGS, str(tmp_path / "train.py"), project=project).findings
    return {f.code: (f.severity, f.message) for f in found}


@pytest.mark.parametrize(("spec", "version", "older"), [
    ("==2.1.0.post10", "2.5.1", True), ("==2.5.1", "2.5.1", False), (">=2.7.1,<2.8", "2.5.1", False),
    ("<2.8", "2.5.1", True), (">2.4", "2.5", True), ("~=2.6", "2.5", False), ("=2.1.0=py3.10_cpu", "2.5", True),
    ("!=2.1.0", "2.5", True), ("==2.5", "2.5.1", True), ("==2.5.0+cpu", "2.5", False), (">=2.1,>=2.6", "2.5", False),
])
def test_what_a_specifier_allows(spec: str, version: str, older: bool) -> None:
    assert allows_before(spec, version) is older


@pytest.mark.parametrize(("spec", "later"), [
    ("<0.41.0", False), ("<0.46", False), ("<0.46.1", True), ("<=0.45.5", False), ("<=0.46", True),
    ("==0.41.1", False), ("==0.46.0", True), ("==0.*", True), ("=0.45", False), ("~=0.45.0", False), ("~=0.45", True),
    (">=0.39", True), ("", True), (">=0.39,<0.42", False), ("!=0.45.0", True),
])
def test_whether_a_specifier_admits_a_release_or_a_later_one(spec: str, later: bool) -> None:
    assert admits_from(spec, "0.46.0") is later


def test_old_pins_make_both_errors(tmp_path: Path) -> None:
    found = findings(tmp_path, {"requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n"})
    assert found["NPU109"][0] is Severity.ERROR and "pins torch-npu `==2.1.0.post10`" in found["NPU109"][1]
    assert found["NPU112"][0] is Severity.ERROR and "pins torch `==2.1.0`" in found["NPU112"][1]
    mapped = analyze(MAPPED, SETTINGS, str(tmp_path / "train.py"), project=ProjectContext(str(tmp_path))).findings
    assert [(f.severity, f.message.endswith("accelerate turns it into `npu:N` where the NPU is available."))
            for f in mapped] == [(Severity.INFO, True)]  # the library places a device_map's weights


def test_a_test_that_expects_the_failure_is_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch>=2.0,<2.5\n", encoding="utf-8")
    code = ("def test_move(self):\n    with self.assertRaises(RuntimeError):\n        model.to(0)\n"
            "    with pytest.raises(RuntimeError, match='x'):\n        model.to(1)\n    model.to(2)\n")
    checked = replace(SETTINGS, tests="check")  # a test file's findings at their severity (test_suites.py)
    found = analyze(code, checked, str(tmp_path / "test_x.py"), project=ProjectContext(str(tmp_path))).findings
    assert [(f.range.start_line + 1, f.severity) for f in found] == [
        (3, Severity.INFO), (5, Severity.INFO), (6, Severity.ERROR)]


def test_an_old_torch_alone_decides_npu109(tmp_path: Path) -> None:
    found = findings(tmp_path, {"environment.yml": "dependencies:\n  - pytorch=2.1.0\n"})
    assert found["NPU109"] == (Severity.ERROR, "`torch.npu.set_device` needs `import torch_npu`: the project pins "
                               "torch `=2.1.0`, and `import torch` loads no device backend before torch 2.5 "
                               "(`torch.npu` raises AttributeError).")


def test_a_lower_bound_that_admits_the_ported_release_is_information(tmp_path: Path) -> None:
    # `torch>=2.4.1` admits torch 2.4.1, and also the torch a port to torch_npu 2.13.0 installs
    found = findings(tmp_path, {"requirements.txt": "torch>=2.4.1\n"})
    assert found["NPU109"][0] is Severity.INFO and found["NPU109"][1].endswith(
        "pins torch `>=2.4.1`, which admits 2.13.0, torch-npu-version 2.13.0's torch: a port to it is not held before "
        "2.5 (and no torch-npu).")
    assert found["NPU112"][0] is Severity.INFO and "which admits 2.13.0" in found["NPU112"][1]


def test_new_pins_are_information(tmp_path: Path) -> None:
    found = findings(tmp_path, {"pyproject.toml": '[project]\nname = "p"\n'
                                                  'dependencies = ["torch==2.6.0", "torch-npu==2.6.0"]\n'})
    assert found["NPU109"][0] is Severity.INFO and found["NPU109"][1].endswith("pins torch-npu `==2.6.0`.")
    assert found["NPU112"][0] is Severity.INFO and found["NPU112"][1].endswith("pins torch `==2.6.0`.")


def test_without_pins_the_setting_decides_and_the_message_says_so(tmp_path: Path) -> None:
    found = findings(tmp_path, {"requirements.txt": "numpy\n"})  # torch-npu-version 2.13.0 loads by itself
    assert found["NPU109"][0] is Severity.INFO and "no torch-npu or torch pin found" in found["NPU109"][1]
    assert found["NPU112"][0] is Severity.INFO and found["NPU112"][1].endswith("No torch pin found in the project.")


def test_the_cache_key_follows_the_pins(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n", encoding="utf-8")
    old = settings_key(SETTINGS, ProjectContext(str(tmp_path)))
    (tmp_path / "requirements.txt").write_text("torch==2.6.0\n", encoding="utf-8")
    assert settings_key(SETTINGS, ProjectContext(str(tmp_path))) != old


@pytest.mark.parametrize(("name", "text", "line"), [
    ("pyproject.toml", '[project]\nname = "p"\ndependencies = [\n  "numpy",\n  "torch>=2.1,<2.6",\n]\n', 4),
    ("setup.py", 'from setuptools import setup\n\nsetup(\n    name="p",\n    install_requires=["numpy",\n'
                 '                      "torch==2.1.0"],\n)\n', 5),
    ("requirements.txt", "numpy\n# the accelerator\ntorch==2.1.0\n", 2),
])
def test_a_pin_is_related_where_it_is_written(tmp_path: Path, name: str, text: str, line: int) -> None:
    """NPU109 and NPU112 relate the pin they read, a line of the file that holds it."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    project = ProjectContext(str(tmp_path))
    assert project.pin_place("torch") == (str(tmp_path / name), line)
    found = analyze(CODE, SETTINGS, str(tmp_path / "train.py"), project=project).findings
    assert {f.code: [(r.path, r.range.start_line) for r in f.related] for f in found} == {
        "NPU109": [(str(tmp_path / name), line)], "NPU112": [(str(tmp_path / name), line)]}


def test_the_cache_key_follows_where_a_pin_is(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n", encoding="utf-8")
    old = settings_key(SETTINGS, ProjectContext(str(tmp_path)))
    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.1.0\n", encoding="utf-8")
    assert settings_key(SETTINGS, ProjectContext(str(tmp_path))) != old
