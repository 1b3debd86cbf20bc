"""Port real model files from public packages, convert their weights, load them strictly into the
port and match torch in eval mode within msprobe's thresholds, on MindSpore 2.10 on the CPU.

The files are read from pinned registry archives at test time (tests/port/models.py says which);
the tests skip, saying why, only when the registry cannot be reached. No port is edited by a
person (MobileNetV2's layer classes passed as values take torch's arguments through the port's
adapters)."""

from __future__ import annotations

import pytest

from ascend_lsp.port import port_source
from ascend_lsp.port.convert_weights import convert_state, write_checkpoint

from .harness import grade, run_mindspore, run_torch, torch_references
from .models import MODELS, model_source

pytestmark = [pytest.mark.torch, pytest.mark.mindspore]
torch = pytest.importorskip("torch", reason="torch is not installed")
mindspore = pytest.importorskip("mindspore", reason="mindspore is not installed")
numpy = pytest.importorskip("numpy")

# What the port reports per file: converted / needs a person (MS301) / unsupported (MS302)
EXPECTED = {
    "cifar_resnet": (104, 0, 0),
    "mobilenet_v2": (59, 0, 0),
    "torchvision_resnet": (55, 4, 0),
    "super_resolution": (17, 0, 0),
    "style_transfer": (23, 0, 0),
    "lstm_language_model": (25, 0, 0),
    "nanogpt": (92, 2, 2),
}


@pytest.mark.parametrize("model", MODELS, ids=[m.name for m in MODELS])
def test_port_matches_torch(model, tmp_path):
    source = model_source(model)
    original = tmp_path / f"{model.name}.py"
    original.write_text(source, encoding="utf-8")
    result = port_source(source, str(original))
    assert (result.count("converted"), result.count("manual"), result.count("unsupported")) == EXPECTED[model.name]
    ported = tmp_path / f"{model.name}_mindspore.py"
    assert torch_references(result.text) == []
    ported.write_text(result.text, encoding="utf-8")

    arrays = model.inputs(numpy.random.default_rng(0))
    reference, state = run_torch(torch, original, model.build, arrays, model.hidden, model.batch_axis)
    conversion = convert_state({k: v.numpy() for k, v in state.items()}, source)
    assert conversion.unmapped == []
    checkpoint = tmp_path / "weights.ckpt"
    write_checkpoint(conversion.tensors, str(checkpoint))

    out, not_loaded, unused = run_mindspore(mindspore, ported, model.build, arrays, checkpoint, model.hidden,
                                            model.batch_axis)
    assert (not_loaded, unused) == ([], [])
    verdict, reports = grade(torch, reference, out)
    assert verdict == "PASS", reports
