"""A rule page's "Built by" names only functions that write its table: every builder is run
here (`python mappings/build`'s modules, into a temporary folder) and watched, and a function
a page names must be one that was running, or had returned to one that was, when the table
was written. A function that only reads a table (the port's `_official`, which reads
api-*.toml to check its own rows) is no builder of it."""

from __future__ import annotations

import fnmatch
import importlib
import os
import sys
from collections import defaultdict
from pathlib import Path

from ascend_lsp.rules import RULES
from ascend_lsp.rules.location import locate

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "mappings" / "build"
FOLDERS = ("torch_npu", "torch", "mindspore", "msprobe", "platform", "ascend_tools", "schema")


def table_writers(tmp_path: Path) -> dict[str, set[str]]:
    """`mappings/<folder>/<table>` → "mappings/build/x.py: function" of each function that was
    on the stack when it was written, or had been called (at any depth) by one that was."""
    sys.path.insert(0, str(BUILD))
    import torch  # noqa: F401  (imported before the watch: the builders look names up in both)
    import mindspore  # noqa: F401
    import upstream

    def name(frame) -> str | None:
        path = frame.f_code.co_filename
        return f"mappings/build/{os.path.basename(path)}: {frame.f_code.co_name}" \
            if os.path.dirname(path) == str(BUILD) else None

    called: dict[object, set[str]] = defaultdict(set)  # a running builder frame → builders it has called
    writers: dict[str, set[str]] = defaultdict(set)
    folder = ""

    def watch(frame, event, _arg):
        if event == "call" and frame.f_code.co_name in ("write_text", "write_bytes") and "self" in frame.f_locals:
            path = Path(frame.f_locals["self"])
            outer = frame.f_back
            while outer is not None:
                if (own := name(outer)) is not None:
                    writers[f"mappings/{folder}/{path.name}"] |= {own, *called.get(outer, ())}
                outer = outer.f_back
        elif event == "return" and (own := name(frame)) is not None:
            below = called.pop(frame, set())
            outer = frame.f_back
            while outer is not None and name(outer) is None:
                outer = outer.f_back
            if outer is not None:
                called[outer] |= {own, *below}

    for folder in FOLDERS:
        module = importlib.import_module(f"{folder}_tables")
        sys.setprofile(watch)
        try:
            module.build(upstream.DATA, tmp_path / folder)
        finally:
            sys.setprofile(None)
    return writers


def test_every_page_names_only_builders_that_write_its_table(tmp_path: Path) -> None:
    writers = table_writers(tmp_path)
    checked = 0
    for rule in RULES.values():
        where = locate(rule)
        tables = [name for name, _ in where.rows] or [where.table.split(" ")[0].replace("<version>", "*")]
        written = set().union(*(functions for table, functions in writers.items()
                                if any(fnmatch.fnmatch(table, pattern) for pattern in tables)))
        for builder in where.builders:
            assert builder in written, f"{rule.code}'s page names {builder}, which does not write {tables}"
            checked += 1
    assert checked >= 100
    assert "mappings/build/port_api_tables.py: _official" in writers["mappings/mindspore/port-api.toml"]
    assert not any("_official" in f for t, fs in writers.items() if "/api-" in t for f in fs)
