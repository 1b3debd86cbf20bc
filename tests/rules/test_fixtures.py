"""Every rule has a fixture: cases that must fire above `# --- not flagged ---`, cases that
must not below it, the exact findings with their related locations (`CODE.expected`) and, for rules with fixes, the
exact text after applying them all (`CODE.fixed.py`), which must parse and be stable; and
where `fix-style = "portable"` writes something else, that text (`CODE.portable.fixed.py`,
`NAME.portable.fixed` in CODE/)."""

from __future__ import annotations

import ast
import os
from dataclasses import replace
from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze, fix_text
from ascend_lsp.engine.config import Settings
from ascend_lsp.project import Projects
from ascend_lsp.rules import RULE_SET, RULES

FIXTURES = Path(__file__).parent / "fixtures"
MARKER = "# --- not flagged ---"
# RUN: the runner reports them; E902: lsp-check, of a file it could not read
CODES = sorted(code for code in RULES if not code.startswith("RUN") and code != "E902")


# A fixture's first line may set `chip=910A` (space-separated key=value); `root=.` makes the
# fixture's folder the project root (what the configuration file's folder is in a project).
# Every fixture lies in the tests folder: test files' findings keep their severity unless its
# line sets `tests=info` (engine/test_suites.py).
SETTINGS_LINE = "# settings: "


def settings_for(code: str, text: str = "", folder: Path = FIXTURES) -> Settings:
    target = "mindspore" if code.startswith("MS") else "torch_npu"
    settings = Settings(target=target, select=(code,), tests="check")
    if text.startswith(SETTINGS_LINE):
        pairs = dict(pair.split("=", 1) for pair in text[len(SETTINGS_LINE):].partition("\n")[0].split())
        root = pairs.pop("root", None)
        settings = settings.merged(pairs, RULE_SET.prefixes)
        if root is not None:
            settings = replace(settings, root=str((folder / root).resolve()))
    return settings


def span(r) -> str:
    return f"{r.start_line + 1}:{r.start_col + 1}-{r.end_line + 1}:{r.end_col + 1}"


def render(findings, folder: Path = FIXTURES) -> str:
    """A line per finding, then its first fix's title and its related locations (`path:` before
    the span of one in another file, relative to the fixture's folder), each indented."""
    lines = []
    for f in findings:
        fix = f.fix
        tag = f" [{fix.applicability.value}]" if fix and fix.edits else ""
        lines.append(f"{span(f.range)} {f.code}{tag} {f.message}")
        if fix:
            lines.append(f"    fix: {fix.title}")
        for related in f.related:
            where = Path(os.path.relpath(related.path, folder)).as_posix() + ":" if related.path else ""
            lines.append(f"    related: {where}{span(related.range)} {related.message}")
    return "\n".join(lines) + "\n"


def check_or_update(path: Path, actual: str, update: bool) -> None:
    if update:
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing {path.name}: run pytest --update-fixtures and review it"
    assert path.read_text(encoding="utf-8") == actual


def fixture_files(code: str) -> list[Path]:
    """`CODE.py`, and the files in `CODE/` (requirements.txt, Dockerfile, train.sh, …: the file
    name, or a shell's `#!` on the first line of one without a suffix, decides how the engine
    reads it). A rule has at least one of the two."""
    folder = FIXTURES / code
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith((".expected", ".fixed"))) \
        if folder.is_dir() else []
    python = FIXTURES / f"{code}.py"
    return [python, *files] if python.exists() or not files else files


CASES = [(code, path) for code in CODES for path in fixture_files(code)]


@pytest.mark.parametrize(("code", "source_path"), CASES, ids=[f"{c}-{p.name}" for c, p in CASES])
def test_fixture(code: str, source_path: Path, update_fixtures: bool) -> None:
    assert source_path.exists(), f"rule {code} has no fixture {source_path.name}"
    text = source_path.read_text(encoding="utf-8")
    assert MARKER in text, f"{source_path.name} lacks the '{MARKER}' section"
    marker_line = text[: text.index(MARKER)].count("\n")
    assert text[text.index(MARKER) + len(MARKER):].strip(), "the not-flagged section is empty"

    settings = settings_for(code, text, source_path.parent)
    project = Projects().for_path(str(source_path), settings)  # NPU308 reads the fixture folder's operators
    analysis = analyze(text, settings, str(source_path), project=project)
    assert not analysis.errors, analysis.errors
    assert analysis.findings, f"{code} fires nowhere in its fixture"
    assert {f.code for f in analysis.findings} == {code}
    late = [f for f in analysis.findings if f.range.start_line > marker_line]
    assert not late, f"fired in the not-flagged section: {render(late)}"
    in_folder = source_path.parent != FIXTURES
    expected = source_path.with_name(source_path.name + ".expected") if in_folder else FIXTURES / f"{code}.expected"
    check_or_update(expected, render(analysis.findings, source_path.parent), update_fixtures)

    fixed_path = source_path.with_name(source_path.name + ".fixed") if in_folder else FIXTURES / f"{code}.fixed.py"
    fixed = fix_text(text, settings, str(source_path), unsafe=True, project=project)
    if not fixed.applied:
        assert RULES[code].fix != "always", f"{code} promises a fix but none applied"
        assert not fixed_path.exists() or update_fixtures, f"{fixed_path.name} exists but nothing is fixed"
        if update_fixtures and fixed_path.exists():
            fixed_path.unlink()
        return
    assert RULES[code].fix != "never", f"{code} says it has no fix but one applied"
    if source_path.suffix == ".py":
        ast.parse(fixed.text)
    check_or_update(fixed_path, fixed.text, update_fixtures)
    again = fix_text(fixed.text, settings, str(source_path), unsafe=True, project=project)
    assert again.applied == 0 and again.text == fixed.text, "fixes are not idempotent"
    portable_path = source_path.with_name(source_path.name + ".portable.fixed") if in_folder \
        else FIXTURES / f"{code}.portable.fixed.py"
    check_portable(source_path, portable_path, text, fixed.text, replace(settings, fix_style="portable"), project,
                   update_fixtures)


def check_portable(source_path: Path, path: Path, text: str, npu_text: str, settings: Settings, project,
                   update: bool) -> None:
    """`CODE.portable.fixed.py` (`NAME.portable.fixed` in CODE/): the exact text with
    `fix-style = "portable"`, where it differs from the npu one. It writes no torch_npu, and
    Python parses and is stable."""
    fixed = fix_text(text, settings, str(source_path), unsafe=True, project=project)
    if fixed.text == npu_text:
        assert not path.exists() or update, f"{path.name} exists but the portable fixes are the npu ones"
        if update and path.exists():
            path.unlink()
        return
    check_or_update(path, fixed.text, update)
    if source_path.suffix == ".py":
        ast.parse(fixed.text)
    for name in ("torch_npu", "torch.npu"):
        assert fixed.text.count(name) <= text.count(name), f"the portable fixes write {name}"
    again = fix_text(fixed.text, settings, str(source_path), unsafe=True, project=project)
    assert again.applied == 0 and again.text == fixed.text, "portable fixes are not idempotent"
