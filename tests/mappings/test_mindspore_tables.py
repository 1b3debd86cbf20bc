"""The MindSpore tables: valid against mappings/schema/mindspore.json, one row per torch
API, every MS2xx trap row naming a declared rule, and up to date with the builder."""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest

from ascend_lsp.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "mappings" / "mindspore"
DATA = ROOT.parent / "shared" / "data"
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


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data (the upstream facts) is not beside the checkout")
def test_tables_are_up_to_date(tmp_path: Path) -> None:
    pytest.importorskip("mindspore", reason="the tables record what the installed MindSpore says (the mindspore extra)")
    build = ROOT / "mappings" / "build"
    sys.path.insert(0, str(build))
    try:
        spec = importlib.util.spec_from_file_location("mindspore_tables_under_test", build / "mindspore_tables.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        written = module.build(DATA, tmp_path)
    finally:
        sys.path.remove(str(build))
    stale = [p.name for p in written if p.read_text(encoding="utf-8") != (FOLDER / p.name).read_text(encoding="utf-8")]
    assert not stale, f"out of date, re-run `python mappings/build mindspore`: {stale}"
