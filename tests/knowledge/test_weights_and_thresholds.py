"""weights.toml and thresholds.toml, each read by one module of knowledge/."""

import tomllib
from pathlib import Path

from ascend_lsp.knowledge.thresholds import load_thresholds
from ascend_lsp.knowledge.weights import load_weight_table
from ascend_lsp.runner.job import weight_rows

MAPPINGS = Path(__file__).resolve().parents[2] / "mappings"


def test_the_weight_table_renames_and_reshapes():
    table = load_weight_table()
    assert table.renames["torch.nn.BatchNorm2d"] == {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
                                                     "running_var": "moving_variance"}
    assert table.transforms == {("torch.nn.Conv1d", "weight"): "unsqueeze-2"}


def test_the_workers_rows_are_the_tables_rows():
    rows = tomllib.loads((MAPPINGS / "mindspore" / "weights.toml").read_text(encoding="utf-8"))["weight"]
    expected = [{k: row[k] for k in ("torch-module", "torch", "mindspore", "transform") if k in row} for row in rows]
    assert weight_rows() == expected


def test_every_threshold_row_is_read():
    rows = tomllib.loads((MAPPINGS / "msprobe" / "thresholds.toml").read_text(encoding="utf-8"))["threshold"]
    thresholds = load_thresholds()
    assert [t.id for t in thresholds] == [row["id"] for row in rows]
    cosine = next(t for t in thresholds if t.id == "cosine")
    assert (cosine.dtypes, cosine.op, cosine.value, cosine.describe()) == (
        ("float16", "bfloat16", "float32", "float64"), "<=", 0.99, "cosine: cosine <= 0.99 → error")
