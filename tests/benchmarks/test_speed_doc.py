"""docs/speed.md's table is written by the benchmark scripts: every row a script records
exists, and recording replaces only that row's measured cell."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import speed_doc  # noqa: E402


def recorded_rows() -> set[str]:
    return {m for path in (ROOT / "benchmarks").glob("*.py")
            for m in re.findall(r'record\("(\w+)"', path.read_text(encoding="utf-8"))}


def test_every_recorded_row_is_in_the_doc() -> None:
    rows = recorded_rows()
    assert rows == {"cli", "edit", "typing", "start", "run", "report"}
    text = speed_doc.DOC.read_text(encoding="utf-8")
    assert {m for m in re.findall(r"<!-- speed:(\w+) -->", text)} == rows


def test_record_replaces_only_its_cell(tmp_path: Path, monkeypatch) -> None:
    doc = tmp_path / "speed.md"
    doc.write_text(speed_doc.DOC.read_text(encoding="utf-8"), encoding="utf-8")
    before = doc.read_text(encoding="utf-8").split("\n")
    monkeypatch.setattr(sys, "argv", ["benchmarks/run_overhead.py", "-n", "5"])
    speed_doc.record("run", "p95 4.2 ms", doc)
    after = doc.read_text(encoding="utf-8").split("\n")
    changed = [(b, a) for b, a in zip(before, after) if b != a]
    assert len(before) == len(after) and len(changed) == 1
    old, new = changed[0]
    assert old.rsplit("|", 2)[0] == new.rsplit("|", 2)[0]  # what and budget kept
    assert "| p95 4.2 ms (`python benchmarks/run_overhead.py -n 5`, " in new and new.endswith(" cores) |")
    with pytest.raises(KeyError):
        speed_doc.record("nope", "1 s", doc)
