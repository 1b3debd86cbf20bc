"""Test suites (engine/test_suites.py): which files are tests, the severity of their findings
with `tests = "info"` (the default) and `"check"`, tests skipped without CUDA, and the same
answer when an edit is analysed alone as for the whole file."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.analyzer import TextEdit
from ascend_lsp.engine.config import ConfigError, Settings, from_mapping
from ascend_lsp.engine.model import Applicability, Severity
from ascend_lsp.engine.test_suites import CUDA_GATED, IN_TEST_FILE, is_test_file
from ascend_lsp.rules import RULE_SET

ROOT = "/work/project"
SETTINGS = Settings(root=ROOT, select=("NPU1", "NPU4"))

SUITE = '''import pytest
import torch

DEVICES = [0] if torch.cuda.is_available() else []


@pytest.mark.skipif(not DEVICES, reason="no CUDA")
def test_on_cuda():
    torch.zeros(1).to("cuda")


def test_on_a_device(device):
    x = torch.zeros(2, dtype=torch.float64, device=device)
    assert x.double().sum() == 0
'''


@pytest.mark.parametrize(("path", "expected"), [
    ("/work/project/tests/test_model.py", True),
    ("/work/project/pkg/model_test.py", True),
    ("/work/project/conftest.py", True),
    ("/work/project/tests/helpers.py", True),
    ("/work/project/src/pkg/test/utils.py", True),
    ("/work/project/pkg/model.py", False),
    ("/work/project/pkg/testing/utils.py", True),  # a package of test helpers (`torch_geometric/testing/`)
    ("/work/project/pkg/testing.py", False),  # a module may hold anything
    ("/work/project/tests/requirements.txt", False),
    ("/work/project/tests", False),
    ("/tests/project/pkg/model.py", False),  # a checkout in a folder named tests
])
def test_what_a_test_file_is(path: str, expected: bool) -> None:
    root = "/tests/project" if path.startswith("/tests/") else ROOT
    assert is_test_file(path, root) is expected


def test_without_a_root_only_the_name_tells() -> None:
    assert is_test_file("tests/test_model.py", None)
    assert is_test_file("tests/helpers.py", None)  # a relative path: its own folders
    assert not is_test_file(None, ROOT)


def test_a_relative_path_is_from_the_working_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # lsp-check names files as they were given
    assert is_test_file("tests/helpers.py", str(tmp_path))
    assert is_test_file("./tests/helpers.py", str(tmp_path))
    assert not is_test_file("pkg/helpers.py", str(tmp_path))


def severities(text: str, settings: Settings, path: str) -> list[tuple[int, str, Severity, str]]:
    reasons = {CUDA_GATED: "cuda", IN_TEST_FILE: "test file"}
    return [(f.range.start_line + 1, f.code, f.severity,
             next((name for reason, name in reasons.items() if f.message.endswith(reason)), ""))
            for f in analyze(text, settings, path).findings]


def test_default_lowers_every_finding_of_a_test_file() -> None:
    found = severities(SUITE, SETTINGS, f"{ROOT}/tests/test_suite.py")
    assert found == [
        (4, "NPU103", Severity.INFO, "test file"),
        (9, "NPU101", Severity.INFO, "cuda"),
        (13, "NPU405", Severity.INFO, "test file"),
        (14, "NPU405", Severity.INFO, "test file"),
    ]


def test_check_keeps_what_runs_on_an_npu_host() -> None:
    found = severities(SUITE, replace(SETTINGS, tests="check"), f"{ROOT}/tests/test_suite.py")
    assert found == [
        (4, "NPU103", Severity.WARNING, ""),
        (9, "NPU101", Severity.INFO, "cuda"),
        (13, "NPU405", Severity.WARNING, ""),
        (14, "NPU405", Severity.WARNING, ""),
    ]


def test_other_files_are_unchanged() -> None:
    found = severities(SUITE, SETTINGS, f"{ROOT}/pkg/suite.py")
    assert [(line, code, severity) for line, code, severity, _ in found] == [
        (4, "NPU103", Severity.WARNING), (9, "NPU101", Severity.WARNING),
        (13, "NPU405", Severity.WARNING), (14, "NPU405", Severity.WARNING)]


def test_lowered_fixes_are_shown_not_applied() -> None:
    finding = next(f for f in analyze(SUITE, SETTINGS, f"{ROOT}/tests/test_suite.py").findings
                   if f.code == "NPU101")
    assert {fix.applicability for fix in finding.fixes} == {Applicability.DISPLAY}  # the npu and portable fixes


def test_an_edit_to_the_gate_changes_every_test() -> None:
    """DEVICES made without CUDA: the test runs on every host, and its finding is one of a test
    file; the edited line alone is re-walked in other files, a test file is analysed whole."""
    path = f"{ROOT}/tests/test_suite.py"
    settings = replace(SETTINGS, tests="check")
    before = analyze(SUITE, settings, path)
    edited = SUITE.replace("DEVICES = [0] if torch.cuda.is_available() else []", "DEVICES = [0]")
    again = analyze(edited, settings, path, previous=before, edit=TextEdit(3, 3, 0))
    whole = analyze(edited, settings, path)
    assert again.findings == whole.findings
    assert [(f.range.start_line + 1, f.severity) for f in whole.findings if f.code == "NPU101"] == \
        [(9, Severity.WARNING)]


def test_a_broken_block_elsewhere_keeps_the_gate() -> None:
    broken = SUITE + "\ndef test_typing(:\n"
    found = severities(broken, SETTINGS, f"{ROOT}/tests/test_suite.py")
    assert (9, "NPU101", Severity.INFO, "cuda") in found


def test_the_setting_is_checked() -> None:
    assert from_mapping({"tests": "check"}, RULE_SET.prefixes).tests == "check"
    assert Settings().tests == "info"
    with pytest.raises(ConfigError, match="`tests` must be one of info, check, got 'skip'"):
        from_mapping({"tests": "skip"}, RULE_SET.prefixes)
