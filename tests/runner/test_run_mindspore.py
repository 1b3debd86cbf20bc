"""The mindspore target with real MindSpore on the CPU: a faithful port passes, the classic
porting mistakes (BatchNorm momentum copied from torch, Dropout keep_prob) are errors."""

import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.torch, pytest.mark.mindspore]
torch = pytest.importorskip("torch", reason="torch is not installed")
mindspore = pytest.importorskip("mindspore", reason="mindspore is not installed")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PAIRS = (Path(__file__).with_name("mindspore_pairs.py")).read_text()


def run(pool, snippet, function):
    return pool.run(snippet(PAIRS, function, target="mindspore"))


def test_conv_batchnorm_port_passes(pool, snippet):
    result = run(pool, snippet, "block")
    assert result.status == "passed", result.message
    paths = {o.path for o in result.outputs}
    assert paths == {"out", "state:Sequential.1.running_mean", "state:Sequential.1.running_var"}
    assert "loaded 6 torch tensors into SequentialCell" in result.notes


def test_momentum_copied_from_torch_is_an_error(pool, snippet):
    result = run(pool, snippet, "block_momentum")
    assert result.status == "error"
    verdicts = {o.path: o.verdict for o in result.outputs}
    assert verdicts["out"] == "PASS"  # train-mode output does not see momentum...
    assert verdicts["state:Sequential.1.running_mean"] == "ERROR"  # ...the running statistics do


def test_dropout_port_with_p_passes_and_keep_prob_confusion_is_an_error(pool, snippet):
    right = run(pool, snippet, "drop")
    assert right.status == "passed", right.message
    assert right.outputs[0].threshold.startswith("dropout-zero-count")
    wrong = run(pool, snippet, "drop_keep_prob")
    assert wrong.status == "error"
    assert "zero count diff ratio" in wrong.outputs[0].reason


def test_weights_table_names_exist_in_torch_and_mindspore():
    from mindspore import nn as msnn

    repo = Path(__file__).resolve().parents[2]
    with open(repo / "mappings" / "mindspore" / "weights.toml", "rb") as f:
        rows = tomllib.load(f)["weight"]
    build = {  # one instance of each module/cell the table names
        "BatchNorm1d": (torch.nn.BatchNorm1d(4), msnn.BatchNorm1d(4)),
        "BatchNorm2d": (torch.nn.BatchNorm2d(4), msnn.BatchNorm2d(4)),
        "BatchNorm3d": (torch.nn.BatchNorm3d(4), msnn.BatchNorm3d(4)),
        "LayerNorm": (torch.nn.LayerNorm(4), msnn.LayerNorm((4,))),
        "GroupNorm": (torch.nn.GroupNorm(2, 4), msnn.GroupNorm(2, 4)),
        "Embedding": (torch.nn.Embedding(5, 4), msnn.Embedding(5, 4)),
        "PReLU": (torch.nn.PReLU(), msnn.PReLU()),
        "Conv1d": (torch.nn.Conv1d(2, 3, 3), msnn.Conv1d(2, 3, 3, has_bias=True)),
        "InstanceNorm1d": (torch.nn.InstanceNorm1d(4, affine=True), msnn.GroupNorm(4, 4)),
        "InstanceNorm2d": (torch.nn.InstanceNorm2d(4, affine=True), msnn.GroupNorm(4, 4)),
        **{name: (getattr(torch.nn, name)(*args), getattr(msnn, name)(*args)) for name, args in (
            ("TransformerEncoderLayer", (4, 2, 8)), ("TransformerDecoderLayer", (4, 2, 8)),
            ("Transformer", (4, 2, 1, 1, 8)))},
        "TransformerEncoder": (torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2, 8), 1,
                                                           torch.nn.LayerNorm(4)),
                               msnn.TransformerEncoder(msnn.TransformerEncoderLayer(4, 2, 8), 1, msnn.LayerNorm((4,)))),
        "TransformerDecoder": (torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(4, 2, 8), 1,
                                                           torch.nn.LayerNorm(4)),
                               msnn.TransformerDecoder(msnn.TransformerDecoderLayer(4, 2, 8), 1, msnn.LayerNorm((4,)))),
    }
    for row in rows:
        module, cell = build[row["torch-module"].rsplit(".", 1)[1]]
        assert row["mindspore-cell"] == f"mindspore.nn.{type(cell).__name__}"
        torch_name, ms_name = row["torch"].replace("*", "0"), row["mindspore"].replace("*", "0")  # a layer's index
        assert torch_name in module.state_dict(), row
        ms_params = dict(cell.parameters_and_names())
        assert ms_name in ms_params, row
        torch_shape = tuple(module.state_dict()[torch_name].shape)
        if row.get("transform") == "unsqueeze-2":
            torch_shape = torch_shape[:2] + (1,) + torch_shape[2:]
        assert torch_shape == tuple(ms_params[ms_name].shape), row
