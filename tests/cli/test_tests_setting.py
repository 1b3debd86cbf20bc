"""lsp-check and `tests` in [tool.ascend-lsp]: a test file's findings are info by default,
`tests = "check"` keeps those of tests that run on an NPU host at their severity, a test
skipped without CUDA stays info, and an unknown value ends the run with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from ascend_lsp.cli.main import main

from ..suites import SUITE


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def checked(folder: Path, capsys) -> list[tuple[str, int, str]]:
    write(folder / "tests" / "test_devices.py", SUITE)
    write(folder / "src" / "devices.py", SUITE)
    capsys.readouterr()
    assert main(["--no-cache", "-q", "--exit-zero", "--select", "NPU101", "--output-format", "json",
                 str(folder)]) == 0
    found = json.loads(capsys.readouterr().out)
    return sorted((Path(f["filename"]).relative_to(folder).as_posix(), f["location"]["row"], f["severity"])
                  for f in found)


def test_default_is_info_in_test_files(tmp_path: Path, capsys) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'p'\n")
    assert checked(tmp_path, capsys) == [
        ("src/devices.py", 7, "warning"), ("src/devices.py", 11, "warning"),
        ("tests/test_devices.py", 7, "info"), ("tests/test_devices.py", 11, "info")]


def test_check_keeps_what_runs_on_an_npu_host(tmp_path: Path, capsys) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ascend-lsp]\ntests = \"check\"\n")
    assert checked(tmp_path, capsys) == [
        ("src/devices.py", 7, "warning"), ("src/devices.py", 11, "warning"),
        ("tests/test_devices.py", 7, "info"), ("tests/test_devices.py", 11, "warning")]


def test_unknown_value_exits_2(tmp_path: Path, capsys) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ascend-lsp]\ntests = \"skip\"\n")
    path = write(tmp_path / "tests" / "test_devices.py", SUITE)
    assert main(["--no-cache", str(path)]) == 2
    assert "`tests` must be one of info, check, got 'skip'" in capsys.readouterr().err
