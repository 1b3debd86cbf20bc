"""The MindSpore tables: valid against mappings/schema/mindspore.json, one row per torch
API, every MS2xx trap row naming a declared rule."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from ascend_lsp.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "mappings" / "mindspore"
TABLES = sorted(FOLDER.glob("*.toml"))


def load(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", TABLES, ids=[p.name for p in TABLES])
def test_table_matches_schema(path: Path) -> None:
    schema = json.loads((ROOT / "mappings" / "schema" / "mindspore.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(load(path))


def test_api_tables_have_one_row_per_torch_api() -> None:
    for path in FOLDER.glob("api-*.toml"):
        names = [row["torch"] for row in load(path)["mapping"]]
        assert len(names) == len(set(names)), path.name


def test_every_trap_names_a_declared_rule() -> None:
    codes = {row["rule"] for row in load(FOLDER / "traps.toml")["trap"]}
    assert codes <= set(RULES)
    assert len(codes) >= 30
