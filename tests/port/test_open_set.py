"""The open set: real transformer-era model files (tests/port/models.py OPEN_SET), each ported,
its converted weights loaded strictly and both sides run on MindSpore 2.10 / torch on the CPU;
each asserts the stage its port reaches (harness.STAGES), so a change that moves one shows here.

The files are read from pinned registry archives at test time; the tests skip, saying why,
only when the registry cannot be reached."""

from __future__ import annotations

import pytest

from ascend_lsp.port import port_source

from .harness import STAGES, stage_reached
from .models import OPEN_SET, model_source

pytestmark = [pytest.mark.torch, pytest.mark.mindspore]
torch = pytest.importorskip("torch", reason="torch is not installed")
mindspore = pytest.importorskip("mindspore", reason="mindspore is not installed")
numpy = pytest.importorskip("numpy")


def test_the_open_set_is_twenty_models_or_more_with_known_stages():
    assert len(OPEN_SET) >= 20 and len({m.name for m in OPEN_SET}) == len(OPEN_SET)
    assert {m.stage for m in OPEN_SET} <= set(STAGES)


@pytest.mark.parametrize("model", OPEN_SET, ids=[m.name for m in OPEN_SET])
def test_the_port_reaches_its_stage(model, tmp_path):
    source = tmp_path / f"{model.name}.py"
    source.write_text(model_source(model), encoding="utf-8")
    result = port_source(source.read_text(encoding="utf-8"), str(source))
    port = tmp_path / f"{model.name}_mindspore.py"
    port.write_text(result.text, encoding="utf-8")
    stage, why = stage_reached(torch, mindspore, source, port, model.build, model.inputs(numpy.random.default_rng(0)))
    assert (stage, why if stage != model.stage else "") == (model.stage, "")
