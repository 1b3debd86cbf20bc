"""`--target mindspore` on the bundled examples: the PyTorch script lists what must change,
the MindSpore port with the classic mistakes gets each one flagged."""

from __future__ import annotations

from pathlib import Path

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MINDSPORE = Settings(target="mindspore")


def findings(name: str):
    analysis = analyze((EXAMPLES / name).read_text(), MINDSPORE)
    assert not analysis.errors
    return [(f.range.start_line + 1, f.code) for f in analysis.findings]


def test_the_mindspore_port_has_each_classic_mistake_flagged() -> None:
    assert findings("mindspore_port.py") == [
        (14, "MS207"), (14, "MS208"),  # padding ignored without pad_mode='pad'; bias= is has_bias=
        (15, "MS203"),  # momentum=0.1 copied from PyTorch
        (16, "MS208"),  # has_bias defaults to False
        (18, "MS201"),  # Dropout(0.1) keeps 10%
        (19, "MS232"),  # a buffer as a trainable Parameter
        (32, "MS211"), (32, "MS211"),  # Dense takes in_channels/out_channels
        (40, "MS233"),  # TopK's sorted default
        (52, "MS202"),  # never set_train()
    ]


def test_the_pytorch_script_lists_what_must_change() -> None:
    found = findings("train_cuda.py")
    assert {code for _, code in found} == {"MS101", "MS102", "MS103"}
    assert (31, "MS102") in found  # nn.Module → nn.Cell
    assert (34, "MS103") in found  # nn.Conv2d → mint.nn.Conv2d
    assert (111, "MS101") in found  # torch.cuda.synchronize has no counterpart
    assert not [code for _, code in found if code.startswith("NPU")]
