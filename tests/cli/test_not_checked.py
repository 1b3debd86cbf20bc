"""A file that could not be checked is an E902 finding in every output format (as Ruff
reports E902), never a clean run: "All checks passed." and JSON `[]` hid it. The run exits 2,
nothing suppresses it, and a baseline never accepts it."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from xml.etree import ElementTree

import pytest

from ascend_lsp.cli.main import main

from .test_sarif import validator  # noqa: F401 (the fixture)

UNDECODABLE = b'# -*- coding: ascii -*-\nx = "\xe9"\n'
WHY = ("not valid ascii text (ordinal not in range(128)); declare the encoding with a `# -*- coding: ... -*-` "
       "line or re-save as UTF-8")


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASCEND_LSP_CACHE_DIR", str(tmp_path / ".table-cache"))
    (tmp_path / "bad.py").write_bytes(UNDECODABLE)
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--no-cache"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_text_formats(project: Path, capsys) -> None:
    code, out, err = run(capsys, "bad.py", "--output-format", "concise")
    assert (code, out) == (2, f"bad.py:1:1: E902 {WHY}\nFound 1 finding in 1 file.\n")
    assert err == f"error: bad.py: {WHY}\n"
    code, out, _ = run(capsys, "bad.py")
    assert (code, out) == (2, f"bad.py:1:1: E902 {WHY}\n\nFound 1 finding in 1 file.\n")
    code, out, _ = run(capsys, "bad.py", "--statistics")
    assert (code, out) == (2, "     1  E902        file-not-checked\nFound 1 finding in 1 file.\n")


def test_json(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "bad.py", "--output-format", "json")
    assert code == 2
    assert json.loads(out) == [{
        "code": "E902", "message": WHY, "severity": "error", "filename": "bad.py", "cell": None,
        "location": {"row": 1, "column": 1}, "end_location": {"row": 1, "column": 1},
        "url": "https://github.com/ascend-lsp/ascend-lsp/blob/main/docs/rules/E902.md", "fix": None, "origin": None,
        "related": []}]


def test_sarif(project: Path, capsys, validator) -> None:  # noqa: F811
    code, out, _ = run(capsys, "bad.py", "--output-format", "sarif")
    assert code == 2
    log = json.loads(out)
    assert not list(validator.iter_errors(log))
    run_ = log["runs"][0]
    [result] = run_["results"]
    assert run_["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "E902"
    assert {k: result[k] for k in ("ruleId", "level", "message")} == {
        "ruleId": "E902", "level": "error", "message": {"text": WHY}}
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "bad.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1}}
    assert run_["invocations"][0]["executionSuccessful"] is False


def test_github_gitlab_junit(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "bad.py", "--output-format", "github")
    assert (code, out) == (2, f"::error file=bad.py,line=1,col=1,endLine=1,endColumn=1,title=E902::E902 {WHY}\n")
    code, out, _ = run(capsys, "bad.py", "--output-format", "gitlab")
    [issue] = json.loads(out)
    assert code == 2 and {k: issue[k] for k in ("description", "check_name", "severity", "location")} == {
        "description": f"E902 {WHY}", "check_name": "E902", "severity": "critical",
        "location": {"path": "bad.py", "lines": {"begin": 1}}}
    code, out, _ = run(capsys, "bad.py", "--output-format", "junit")
    suite = ElementTree.fromstring(out).find("testsuite")
    assert code == 2 and [(case.get("name"), [(e.tag, e.get("type"), e.text) for e in case])
                          for case in suite] == [("check", [("error", "E902", WHY)])]


def test_every_kind_of_file_that_cannot_be_checked(project: Path, capsys) -> None:
    (project / "blob.py").write_bytes(b"x = 1\n\0")
    (project / "gone.py").symlink_to(project / "nowhere.py")
    os.mkfifo(project / "pipe.py")
    with open(project / "huge.py", "wb") as huge:
        huge.truncate(33 * 2**20)  # sparse: the size is refused before anything is read
    code, out, _ = run(capsys, "-q", "--output-format", "concise", "blob.py", "gone.py", "pipe.py", "huge.py")
    assert code == 2
    assert out.splitlines() == [
        "blob.py:1:1: E902 binary file (a NUL byte at byte 6), not Python source",
        "gone.py:1:1: E902 cannot read: No such file or directory",
        "huge.py:1:1: E902 too large to check (33.0 MiB; the limit is 32 MiB)",
        "pipe.py:1:1: E902 not a regular file (a FIFO); only files are read",
    ]


def test_nothing_suppresses_it(project: Path, capsys) -> None:
    (project / "pyproject.toml").write_text('[tool.ascend-lsp]\nper-file-ignores = {"bad.py" = ["E902"]}\n')
    for args in (["--ignore", "E902"], ["--select", "NPU102"], ["--ignore", "E"]):
        code, out, _ = run(capsys, "bad.py", "-q", "--output-format", "concise", *args)
        assert (code, out) == (2, f"bad.py:1:1: E902 {WHY}\n"), args


def test_a_baseline_never_accepts_it(project: Path, capsys) -> None:
    code, _, _ = run(capsys, "bad.py", "--write-baseline", "base.json")
    assert code == 2
    assert json.loads((project / "base.json").read_text())["findings"] == []
    code, out, _ = run(capsys, "bad.py", "-q", "--output-format", "concise", "--baseline", "base.json")
    assert (code, out) == (2, f"bad.py:1:1: E902 {WHY}\n")


def test_the_migration_report(project: Path, capsys) -> None:
    (project / "a.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    code, out, _ = run(capsys, "report", "a.py", "bad.py", "--format", "json")
    report = json.loads(out)
    assert code == 2
    assert report["not_checked"] == [{"path": "bad.py", "error": WHY}]
    assert [(row["path"], row["findings"], row["references"], row["error"]) for row in report["files"]] == [
        ("a.py", 1, 2, None), ("bad.py", 1, 0, WHY)]
    assert report["totals"]["findings"] == 2
    assert {r["code"]: r["count"] for r in report["top_rules"]}["E902"] == 1
    _, md, _ = run(capsys, "report", "a.py", "bad.py", "--format", "md")
    assert f"**1 file could not be checked (E902); their findings are missing:**\n\n- bad.py: {WHY}\n" in md
    _, html, _ = run(capsys, "report", "a.py", "bad.py", "--format", "html")
    assert ('<p id="not-checked-summary"><b>1 file could not be checked (E902); their findings are missing:</b>'
            f'</p><ul id="not-checked"><li>bad.py: {WHY}</li></ul>') in html
    _, table, _ = run(capsys, "report", "a.py", "bad.py", "--format", "csv")
    rows = {row["path"]: row for row in csv.DictReader(io.StringIO(table))}
    assert rows["bad.py"]["findings"] == "1" and rows["TOTAL"]["findings"] == "2"
