"""mappings/platform/: valid against its schema, in step with its builder, and the chip
names the same as the schema's."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest


ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "mappings" / "platform"
TABLES = sorted(FOLDER.glob("*.toml"))


def load(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", TABLES, ids=[p.name for p in TABLES])
def test_table_matches_schema(path: Path) -> None:
    schema = json.loads((ROOT / "mappings" / "schema" / "platform.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(load(path))


def test_chips_are_the_schemas_chips() -> None:
    schema = json.loads((ROOT / "mappings" / "schema" / "platform.json").read_text(encoding="utf-8"))
    assert [row["name"] for row in load(FOLDER / "chips.toml")["chip"]] == schema["$defs"]["chip"]["enum"]


def test_pairing_comes_from_release_metadata() -> None:
    pairing = {row["torch-npu"]: row for row in load(FOLDER / "packaging.toml")["pairing"]}
    assert pairing["2.13.0"]["requirement"] == "torch==2.13.0.*"
    assert pairing["2.1.0.post17"]["requirement"] == "torch==2.1.0+cpu"
    assert "2.1.0" not in pairing  # its metadata declares no torch requirement: nothing is invented
    assert all(row["source"].startswith(f"PyPI torch-npu {version}:") for version, row in pairing.items())
