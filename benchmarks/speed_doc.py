"""The speed table of docs/speed.md is written by the benchmark scripts, not by hand: each
script records the "measured" cell of its rows (marked `<!-- speed:ID -->`) with the figures
it just measured, the command, the date and the machine's core count."""

from __future__ import annotations

import datetime
import os
import re
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "speed.md"


def record(row: str, measured: str, doc: Path = DOC) -> None:
    """Replace the last cell of the table row marked `<!-- speed:{row} -->`."""
    text = doc.read_text(encoding="utf-8")
    marker = f"<!-- speed:{row} -->"
    if marker not in text:
        raise KeyError(f"{doc} has no row {marker}")
    command = " ".join(["python", f"benchmarks/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    cell = f"{measured} (`{command}`, {datetime.date.today().isoformat()}, {os.cpu_count()} cores)"
    pattern = re.compile(rf"^(\|[^\n]*{re.escape(marker)}[^\n]*\|[^|\n]*\|)[^\n]*\|$", re.M)
    new, count = pattern.subn(lambda m: f"{m.group(1)} {cell} |", text)
    if count != 1:
        raise ValueError(f"{doc}: the row {marker} is not `| what | budget | measured |`")
    doc.write_text(new, encoding="utf-8")
    print(f"recorded in {doc.name}: {measured}")
