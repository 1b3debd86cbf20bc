"""schema/mindspore.json: the enums of its [[trap]] rows, generated from the trap vocabulary
(ascend_lsp/knowledge/traps.py), so the schema, the builder and the engine name the same
conditions and fixes. The rest of the schema is written by hand: the committed file is the
template, and only the lists marked below are replaced, keeping its layout."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ascend_lsp.knowledge import traps
from upstream import MAPPINGS

SCHEMA = MAPPINGS / "schema" / "mindspore.json"


def _enum(values) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


# (what precedes the list in the [[trap]] item schema, the list)
LISTS = [
    ('"side": {"enum": ', traps.SIDES),
    ('"when": {"enum": ', tuple(traps.CONDITIONS)),
    ('"fix": {"enum": ', tuple(traps.FIXES)),
    ('"applicability": {"enum": ', traps.APPLICABILITIES),
    ('"severity": {"enum": ', traps.SEVERITIES),
    ('{"if": {"properties": {"when": {"enum": ', tuple(w for w in traps.CONDITIONS if w in traps.NEEDS_PARAM)),
    ('{"if": {"properties": {"when": {"enum": ', tuple(w for w in traps.CONDITIONS if w in traps.NEEDS_WITH_PARAM)),
]


def build(data_dir: Path, out_dir: Path) -> list[Path]:
    text = SCHEMA.read_text(encoding="utf-8")
    start = text.index('"trap": {')
    end = text.index('"weight": {', start)
    block, cursor = text[start:end], 0
    for prefix, values in LISTS:
        found = re.compile(re.escape(prefix) + r"\[[^\]]*\]").search(block, cursor)
        if found is None:
            raise ValueError(f"{SCHEMA.name}: no {prefix}[...] in the [[trap]] schema after offset {cursor}")
        replacement = prefix + _enum(values)
        block = block[:found.start()] + replacement + block[found.end():]
        cursor = found.start() + len(replacement)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / SCHEMA.name
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")
    return [path]
