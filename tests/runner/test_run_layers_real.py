"""Find the layer on real models (the ResNet and transformer files the port tests read from pinned
registry archives, tests/port/models.py) under emulated float16 and bfloat16: nothing but the dtype
differs, so nothing diverges; a weight scaled to overflow float16 is named at its layer (bfloat16
has float32's range: what overflows it overflows the reference too). Under emulation both sides
run the same code, so a wrong default is planted where it lives, in the MindSpore port."""

from __future__ import annotations

import pytest

from ascend_lsp.runner import Emulation, Job
from tests.port.models import MODELS, model_source

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="torch is not installed")

# model → (its input, the module whose weight is scaled, the text of the line that constructs it)
CASES = {
    "cifar_resnet": ("torch.randn(2, 3, 32, 32)", "layer2.0.conv2",
                     "self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)"),
    "torchvision_resnet": ("torch.randn(4, 3, 64, 64)", "layer2.0.conv2", "return nn.Conv2d("),
    "nanogpt": ("torch.randint(0, 64, (2, 12))", "transformer.h.1.mlp.c_fc",
                "self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)"),
}
ENTRY = """

import torch as _torch


def faithful():
    return {build}({inputs})


def overflow():
    model = {build}
    with _torch.no_grad():
        model.get_submodule("{module}").weight.mul_(1e6)  # sums near 1e6 and beyond: float16 stops at 65504
    return model({inputs})
"""


@pytest.fixture
def real_model(tmp_path):
    def job(name: str, function: str, dtype: str) -> tuple[Job, str]:
        model = next(m for m in MODELS if m.name == name)
        inputs, module, _ = CASES[name]
        text = model_source(model) + ENTRY.format(build=model.build, inputs=inputs.replace("torch.", "_torch."),
                                                  module=module)
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        return Job(path=str(path), function=function, target="emulate", emulation=Emulation(autocast=dtype),
                   layers="module", timeout=600), text
    return job


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", list(CASES))
def test_a_real_model_merely_in_low_precision_shows_no_divergence(pool, real_model, name, dtype):
    job, _ = real_model(name, "faithful", dtype)
    result = pool.run(job)
    assert result.status == "passed", result.message
    assert (result.first_divergence, result.first_warning, result.first_overflow) == (None, None, None)
    assert result.benchmark == {"dtype": dtype, "device": "cpu"}
    graded = [layer for layer in result.layers if layer.benchmark is not None]
    assert len(graded) > len(result.layers) // 2, "most calls have a float output graded against the benchmark"
    assert {layer.decided_by for layer in graded} == {"benchmark ratio"}


@pytest.mark.parametrize("name", list(CASES))
def test_a_weight_scaled_to_overflow_float16_is_named_at_its_layer(pool, real_model, name):
    job, text = real_model(name, "overflow", "float16")
    result = pool.run(job)
    assert result.status == "error", result.message
    _, module, built = CASES[name]
    assert result.first_overflow == result.first_divergence, result.message
    first = result.overflow
    assert (first.module, first.verdict, first.decided_by, first.input_verdict) == \
        (module, "ERROR", "nan/inf", "PASS"), result.message
    assert text.split("\n")[first.source["line"] - 1].strip().startswith(built)
    enclosing, parent = set(), first.parent
    while parent is not None:
        enclosing.add(parent)
        parent = result.layers[parent].parent
    before = [layer for i, layer in enumerate(result.layers[:result.first_overflow]) if i not in enclosing]
    assert before and all(layer.verdict == "PASS" for layer in before), \
        [(layer.module, layer.reason) for layer in before if layer.verdict != "PASS"]


# The MindSpore port of the same files (`lsp-check port`), against torch in eval mode: faithful, then
# with one planted wrong default. model → (input, the person's edits to the port so that it runs,
# the planted edit, the layer it is at, its class on each side, the port's line that builds it)
PORTS = {
    "torchvision_resnet": ("torch.randn(4, 3, 64, 64)", (),
                           ("        self.relu = nn.ReLU()\n        self.maxpool",
                            "        self.relu = nn.LeakyReLU(0.2)\n        self.maxpool"),  # a wrong slope
                           "relu", ("ReLU", "LeakyReLU"), "self.relu = nn.LeakyReLU(0.2)"),
    "nanogpt": ("torch.randint(0, 64, (2, 12))",
                (("return model(ops.randint(0, 64, (2, 12)))", "return model(ops.zeros((2, 12), mindspore.int64))"),),
                ("self.bias, 1e-5)", "self.bias, 1e-7)"),  # MindSpore's LayerNorm default epsilon, not torch's
                "transformer.h.0.ln_1", ("LayerNorm", None), "self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)"),
}
PREDICT = """

import torch


def predict():
    model = {build}
    model.eval()
    return model({inputs})
"""


@pytest.mark.mindspore
@pytest.mark.parametrize("planted", [False, True], ids=["faithful", "planted"])
@pytest.mark.parametrize("name", list(PORTS))
def test_a_real_models_port_with_a_wrong_default_is_located_at_that_layer(pool, tmp_path, name, planted):
    pytest.importorskip("mindspore", reason="mindspore is not installed")
    pytest.importorskip("libcst", reason="the port needs libcst")
    from ascend_lsp.port import port_source

    model = next(m for m in MODELS if m.name == name)
    inputs, edits, plant, module, classes, built = PORTS[name]
    source = tmp_path / f"{name}.py"
    source.write_text(model_source(model) + PREDICT.format(build=model.build, inputs=inputs), encoding="utf-8")
    port = tmp_path / f"{name}_mindspore.py"
    ported = port_source(source.read_text(encoding="utf-8"), str(source)).text
    for old, new in edits + ((plant,) if planted else ()):
        assert ported.count(old) == 1, f"the edit does not apply once: {old!r}"
        ported = ported.replace(old, new)
    port.write_text(ported, encoding="utf-8")
    result = pool.run(Job(path=str(source), function="predict", target="mindspore", mindspore_port=str(port),
                          layers="module", timeout=600))
    if not planted:
        assert result.status == "passed", result.message
        assert (result.first_divergence, result.first_overflow) == (None, None)
        return
    assert result.status == "error", result.message
    first = result.divergence
    assert (first.module, first.cls, first.target_class, first.verdict, first.input_verdict) == \
        (module, *classes, "ERROR", "PASS"), result.message
    assert first.source["path"] == str(port)
    assert ported.split("\n")[first.source["line"] - 1].strip() == built
    assert result.first_overflow is None
