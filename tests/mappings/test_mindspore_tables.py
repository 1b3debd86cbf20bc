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


def test_the_trap_vocabulary_is_the_one_the_handlers_and_rows_use() -> None:
    """Every condition and fix kind of ascend_lsp.knowledge.traps has a branch in the handler, and
    nothing else does; every row of traps.toml loads into the one Trap record."""
    import ast
    import inspect

    from ascend_lsp.knowledge import traps
    from ascend_lsp.rules import ms2xx_traps

    def compared(function, name: str) -> set[str]:
        tree = ast.parse(inspect.getsource(function))
        return {node.comparators[0].value for node in ast.walk(tree)
                if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == name
                and isinstance(node.comparators[0], ast.Constant)}

    assert compared(ms2xx_traps.matches, "when") == set(traps.CONDITIONS)
    assert compared(ms2xx_traps.trap_fix, "fix") == set(traps.FIXES)
    rows = load(FOLDER / "traps.toml")["trap"]
    fields = {f.replace("_", "-") for f in traps.Trap.__dataclass_fields__}
    for row in rows:
        traps.Trap(**{k.replace("-", "_"): v for k, v in row.items() if k in fields})
    with pytest.raises(ValueError, match="when 'sometimes'"):
        traps.Trap("P01", "MS201", "mindspore", ("mindspore.nn.Dropout",), "sometimes", "a message")
