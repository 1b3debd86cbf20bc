"""mappings/ascend_tools/advice.toml: schema, provenance, rule codes, and that it is what its builder writes."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from ascend_lsp.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "mappings" / "ascend_tools" / "advice.toml"
SCHEMA = ROOT / "mappings" / "schema" / "ascend_tools.json"
BUILDER = ROOT / "mappings" / "build" / "ascend_tools_tables.py"


def test_table_validates_and_every_row_has_a_source_and_a_known_rule() -> None:
    data = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    for section, rows in data.items():
        if section == "meta":
            continue
        for row in rows:
            assert row["source"], (section, row)
            assert "rule" not in row or row["rule"] in RULES, (section, row)


def test_fused_optimizer_parameters_match_torch_where_they_share_names() -> None:
    torch = pytest.importorskip("torch")
    import inspect

    data = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    for row in data["optimizer"]:
        cls = getattr(torch.optim, row["name"].rpartition(".")[2])
        torch_params = list(inspect.signature(cls.__init__).parameters)[1:]
        assert torch_params[: len(row["parameters"])] == row["parameters"], row["name"]
