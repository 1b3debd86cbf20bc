"""The adoption guide (docs/adoption.md), followed to the letter on a multi-file
git repository: every `$ lsp-check` line runs, in order, and does what the text says."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from .conftest import ROOT, lsp_check

DOC = ROOT / "docs" / "adoption.md"


def commands() -> list[list[str]]:
    return [shlex.split(line[2:])[1:] for line in DOC.read_text(encoding="utf-8").splitlines()
            if line.startswith("$ lsp-check ")]


def test_the_documented_commands_size_the_job_adopt_a_baseline_and_gate(repo: Path) -> None:
    steps = commands()
    assert [s[0] for s in steps[:4]] == ["report"] * 4 and "--write-baseline" in steps[4]
    for args in steps[:4]:
        proc = lsp_check(repo, *args)
        assert proc.returncode == 1 and "Wrote the" in proc.stderr, proc.stderr  # 1: the repository has findings
    for name in ("migration-report.html", "migration-report.md", "migration-report.csv", "migration-report.json"):
        assert (repo / name).stat().st_size > 0
    report = json.loads((repo / "migration-report.json").read_text())
    assert report["totals"]["files"] == 6 and report["totals"]["effort"]["high"] >= 1

    write, gate, add_noqa = steps[4], steps[5], steps[6]
    assert lsp_check(repo, *write).returncode == 0
    assert lsp_check(repo, *gate).returncode == 0
    (repo / "src" / "clean.py").write_text((repo / "src" / "clean.py").read_text() + "y = mean.cuda()\n")
    new = lsp_check(repo, *gate)
    assert new.returncode == 1 and "Found 1 finding in 1 file." in new.stdout

    assert lsp_check(repo, *add_noqa).returncode == 0
    assert lsp_check(repo, "src/").returncode == 0  # every finding suppressed in place
    assert "# noqa: NPU102" in (repo / "src" / "clean.py").read_text()


def test_the_documented_pre_commit_config_is_valid_and_names_the_hook() -> None:
    yaml = pytest.importorskip("yaml")
    from .test_ci import schemastore

    block = re.search(r"```yaml\n# \.pre-commit-config\.yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    config = yaml.safe_load(block.group(1))
    assert list(schemastore(".pre-commit-config.yml").iter_errors(config)) == []
    assert config["repos"][0]["hooks"][0]["id"] == "lsp-check"


def test_the_documented_ci_files_exist() -> None:
    links = re.findall(r"\]\((ci/[\w.-]+)\)", DOC.read_text(encoding="utf-8"))
    assert links
    for link in links:
        assert (DOC.parent / link).is_file(), link
