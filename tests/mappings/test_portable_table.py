"""mappings/torch/portable.toml against its schema and against torch 2.13 on this CPU: each
guard stands where the portable call raises without an accelerator and the CUDA call did not,
and stands for what the CUDA call returned."""

from __future__ import annotations

import json
import tomllib
import warnings
from pathlib import Path

import jsonschema
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

ROOT = Path(__file__).resolve().parents[2]
TABLE = tomllib.loads((ROOT / "mappings" / "torch" / "portable.toml").read_text(encoding="utf-8"))
GUARDED = [row for row in TABLE["api"] if "guard" in row]
ARGUMENTS = {"manual_seed": (0,), "manual_seed_all": (0,)}


def resolve(dotted: str):
    obj = torch
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def test_validates_against_its_schema() -> None:
    schema = json.loads((ROOT / "mappings" / "schema" / "torch.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(TABLE)


@pytest.mark.skipif(torch.accelerator.is_available(), reason="measures a machine without an accelerator")
def test_the_binding_is_the_cpu_here() -> None:
    assert eval(TABLE["binding"][0]["expression"], {"torch": torch}) == torch.device("cpu")


@pytest.mark.skipif(torch.accelerator.is_available(), reason="measures a machine without an accelerator")
@pytest.mark.parametrize("row", GUARDED, ids=[row["name"] for row in GUARDED])
def test_guards_stand_where_the_portable_call_raises(row: dict) -> None:
    name = row["name"].rpartition(".")[2]
    arguments = ARGUMENTS.get(name, ())
    portable = row["replacement"].replace("torch.get_device_module({device})", "torch.get_device_module(torch.device('cpu'))")
    with pytest.raises((RuntimeError, AttributeError)):
        eval(portable, {"torch": torch})(*arguments)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            returned = resolve(row["name"])(*arguments)
        except (AssertionError, AttributeError):
            assert row["cuda-cpu"].startswith("raises")  # it raised already: the guard keeps nothing worse
            return
    assert row["cuda-cpu"].startswith("returns")
    assert returned == eval(row["guard"])


@pytest.mark.skipif(torch.accelerator.is_available(), reason="measures a machine without an accelerator")
def test_the_event_guards_stand_where_the_portable_event_raises() -> None:
    [row] = [row for row in TABLE["api"] if "methods" in row]
    # the CUDA object is not made on a CPU-only torch at all; the portable one is, but
    # record() raises, and elapsed_time() then has nothing recorded to measure
    with pytest.raises(RuntimeError, match="dummy base class"):
        resolve(row["name"])(enable_timing=True)
    assert row["cuda-cpu"].startswith("raises")
    event = resolve(row["replacement"])(enable_timing=True)
    with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
        event.record()
    with pytest.raises(ValueError, match="Both events must be recorded"):
        event.elapsed_time(resolve(row["replacement"])(enable_timing=True))
    assert event.synchronize() is None
    assert row["methods"] == {"record": "None", "synchronize": "None", "elapsed_time": "0.0"}
