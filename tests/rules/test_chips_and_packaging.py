"""Chip-gated rules fire only on the chips the facts name; packaging files go through
the engine entry and lsp-check's discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_lsp.discovery import discover
from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.config import ConfigError, from_mapping
from ascend_lsp.rules import RULE_SET
from ascend_lsp.engine.packaging import document_kind

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(("code", "fires_on", "silent_on"), [
    ("NPU204", "910A", "A2"), ("NPU204", "310P", "A3"), ("NPU408", "910A", "950DT"),
    ("NPU116", "310P", "A2"), ("NPU205", "A3", "950DT"),
])
def test_chip_rules_follow_the_chip(code: str, fires_on: str, silent_on: str) -> None:
    text = (FIXTURES / f"{code}.py").read_text(encoding="utf-8")
    on = analyze(text, Settings(select=(code,), chip=fires_on), "x.py").findings
    off = analyze(text, Settings(select=(code,), chip=silent_on), "x.py").findings
    assert on and all(fires_on in f.message for f in on)
    assert off == []


@pytest.mark.parametrize(("value", "chip"), [("910B", "A2"), ("910", "910A"), ("950", "950DT"), ("310P", "310P")])
def test_chip_aliases(value: str, chip: str) -> None:
    assert from_mapping({"chip": value}, RULE_SET.prefixes).chip == chip


def test_unknown_chip_is_an_error() -> None:
    with pytest.raises(ConfigError, match="`chip` must be one of 910A, 310P, A2, A3, 950DT"):
        from_mapping({"chip": "H100"}, RULE_SET.prefixes)


def test_support_list_column_for_older_chips() -> None:
    # the support list has no 910A column: A2's is used, so ✘-on-A2 APIs stay reported
    text = "import torch\n\nm = torch.nn.DataParallel(model)\ny = torch.std_mean(x)\n"
    a2 = analyze(text, Settings(select=("NPU201",), chip="A2"), "x.py").findings
    old = analyze(text, Settings(select=("NPU201",), chip="910A"), "x.py").findings
    assert [f.range for f in old] == [f.range for f in a2] and a2


@pytest.mark.parametrize(("path", "kind"), [
    ("requirements.txt", "requirements"), ("requirements-dev.txt", "requirements"), ("requirements/base.txt",
                                                                                     "requirements"),
    ("pyproject.toml", "pyproject"), ("setup.cfg", "setup.cfg"), ("environment.yml", "environment"),
    ("Dockerfile", "dockerfile"), ("docker/Dockerfile.npu", "dockerfile"), ("train.dockerfile", "dockerfile"),
    ("config.yml", "config"), ("ds_config.json", "config"), ("tsconfig.jsonc", "config"),
    ("docker-compose.yml", "compose"), ("docker-compose.gpu.yaml", "compose"), ("compose.yaml", "compose"),
    ("setup.py", None), ("notes.txt", None), ("x.py", None),
])
def test_document_kind(path: str, kind: str | None) -> None:
    assert document_kind(path) == kind


def test_packaging_findings_keep_noqa_and_crlf() -> None:
    text = "flash-attn==2.5.8  # noqa: NPU502\r\nxformers\r\n"
    found = analyze(text, Settings(), "requirements.txt").findings
    assert [(f.code, f.range.start_line, f.range.start_col, f.range.end_col) for f in found] == [("NPU502", 1, 0, 8)]


def test_discovery_takes_packaging_files_while_selected(tmp_path: Path) -> None:
    for name in ("a.py", "requirements.txt", "Dockerfile", "notes.txt", "compose.yaml", "data.json", "ci.yml"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "ds.json").write_text('{"train_batch_size": 8}\n')  # a YAML or JSON only when a config's keys say so
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "gpu.txt").write_text("flash-attn\n")  # known by its folder
    found = {Path(p).name for p in discover([str(tmp_path)], lambda _path: Settings())}
    assert found == {"a.py", "requirements.txt", "gpu.txt", "Dockerfile", "ds.json", "compose.yaml"}
    without = {Path(p).name for p in discover([str(tmp_path)], lambda _path: Settings(ignore=("NPU5",)))}
    # a Dockerfile's RUN and ENV lines: NPU108, NPU124, NPU127, NPU804; a compose file's environment
    assert without == {"a.py", "Dockerfile", "ds.json", "compose.yaml"}
    without = {Path(p).name for p in discover([str(tmp_path)], lambda _path: Settings(ignore=("NPU5", "NPU1")))}
    assert without == {"a.py", "Dockerfile", "ds.json", "compose.yaml"}
    without = {Path(p).name for p in discover([str(tmp_path)],
                                              lambda _path: Settings(ignore=("NPU5", "NPU1", "NPU8")))}
    assert without == {"a.py"}


def test_autoload_follows_the_torch_npu_wheels() -> None:
    from ascend_lsp.knowledge.platform import load_platform

    platform = load_platform("2.13.0")
    assert platform.autoloaded("2.4.0") is None  # its wheel has no torch.backends entry point
    assert platform.autoloaded("2.5.1")["torch-npu"] == "2.5.1"
    assert platform.autoloaded("2.13.0")["torch-npu"] == "2.13.0"


MULTI_BACKEND = '''import torch


def clear(device_type):
    if device_type == "cuda":
        torch.cuda.empty_cache()
    elif device_type == "npu":
        torch.npu.empty_cache()
    else:
        torch.cuda.synchronize()


def plain():
    torch.cuda.synchronize()
    if not is_npu_available():
        torch.cuda.synchronize()
    return "npu" if is_npu_available() else "cuda"
'''


def test_cuda_code_beside_an_npu_branch_is_advice() -> None:
    found = analyze(MULTI_BACKEND, Settings(), "x.py").findings
    severities = {(f.range.start_line + 1, f.code): f.severity.name for f in found}
    assert severities == {
        (5, "NPU101"): "INFO", (6, "NPU103"): "INFO", (10, "NPU103"): "INFO",
        (14, "NPU103"): "WARNING", (16, "NPU103"): "WARNING", (17, "NPU101"): "INFO",
    }
    assert all(f.message.endswith("handles the NPU.)") for f in found if f.severity.name == "INFO")
