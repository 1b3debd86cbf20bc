"""Port real model definitions, convert their weights, load them strictly into the port and
match torch in eval mode within msprobe's thresholds, on MindSpore 2.10 on the CPU."""

from __future__ import annotations

import pytest

from ascend_lsp.port import port_source
from ascend_lsp.port.weights import convert_state, write_checkpoint

from .harness import run_mindspore, run_torch, torch_references
from .models import MODELS

pytestmark = [pytest.mark.torch, pytest.mark.mindspore]
torch = pytest.importorskip("torch", reason="torch is not installed")
mindspore = pytest.importorskip("mindspore", reason="mindspore is not installed")
numpy = pytest.importorskip("numpy")


@pytest.mark.parametrize("model", MODELS, ids=[m.name for m in MODELS])
def test_port_matches_torch(model, tmp_path):
    from ascend_lsp.port.precision import grade

    source = model.path.read_text(encoding="utf-8")
    result = port_source(source, str(model.path))
    ported = tmp_path / model.file
    ported.write_text(result.text, encoding="utf-8")
    assert torch_references(result.text) == []

    arrays = model.inputs(numpy.random.default_rng(0))
    reference, state = run_torch(torch, model.path, model.build, arrays, model.hidden)
    conversion = convert_state({k: v.numpy() for k, v in state.items()}, source)
    assert conversion.unmapped == []
    checkpoint = tmp_path / "weights.ckpt"
    write_checkpoint(conversion.tensors, str(checkpoint))

    out, not_loaded, unused = run_mindspore(mindspore, ported, model.build, arrays, checkpoint, model.hidden)
    assert (not_loaded, unused) == ([], [])
    verdict, reports = grade(torch, reference, out)
    assert verdict == "PASS", reports
