"""The real model files the port tests convert, where each comes from, how to build and feed it.

Each file is read at test time from a pinned registry package (tests/port/sources.py), never
copied into this repository. Where the file holds definitions that need packages these tests do
not have (a LightningModule beside the model), only the named top-level definitions and the
file's torch imports are taken, their source text untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest

from .sources import IGNITE, LIGHTNING, ROBUSTBENCH, THUNDER, Archive, Unreachable, definitions


@dataclass(frozen=True)
class Model:
    name: str
    archive: Archive
    member: str  # the model file's path inside the package
    build: str  # an expression in the model's module namespace
    inputs: Callable  # (numpy random generator) → list of numpy arrays
    names: tuple[str, ...] = ()  # take only these top-level definitions (and the torch imports)
    hidden: str = ""  # a method that builds the recurrent state from the batch size
    batch_axis: int = 1  # where the batch size is in the first input (for `hidden`)

    @property
    def origin(self) -> str:
        return f"{self.archive.requirement}: {self.member}" + (f" ({', '.join(self.names)})" if self.names else "")

    def source(self) -> str:
        """The model file's text (raises sources.Unreachable when the registry cannot be reached)."""
        text = self.archive.read(self.member)
        return definitions(text, self.names) if self.names else text


def _images(shape):
    return lambda rng: [rng.standard_normal(shape).astype("float32")]


def _tokens(vocab, shape):
    return lambda rng: [rng.integers(0, vocab, shape).astype("int64")]


MODELS = [
    # a CIFAR ResNet-18: BatchNorm, residual `out += self.shortcut(x)`, F.avg_pool2d, x.view(x.size(0), -1)
    Model("cifar_resnet", ROBUSTBENCH, "robustbench/model_zoo/architectures/resnet.py", "ResNet18()",
          _images((2, 3, 32, 32))),
    # ESPCN from pytorch/examples: PixelShuffle, init.orthogonal_ with calculate_gain
    Model("super_resolution", IGNITE, "examples/super_resolution/model.py", "Net(upscale_factor=3)",
          _images((2, 1, 24, 24))),
    # fast-neural-style's TransformerNet from pytorch/examples: ReflectionPad2d, InstanceNorm2d, interpolate
    Model("style_transfer", IGNITE, "examples/fast_neural_style/transformer_net.py", "TransformerNet()",
          _images((1, 3, 32, 32))),
    # the LSTM language model of Lightning's demos (after pytorch/examples' word_language_model): init_hidden
    Model("lstm_language_model", LIGHTNING, "lightning/pytorch/demos/lstm.py",
          "SimpleLSTM(vocab_size=50, ninp=16, nhid=24, nlayers=2)", _tokens(50, (3, 7)), names=("SimpleLSTM",),
          hidden="init_hidden", batch_axis=0),
    # nanoGPT's model.py as Lightning Thunder ships it: LayerNorm, GELU, causal self-attention, weight tying
    Model("nanogpt", THUNDER, "thunder/tests/nanogpt_model.py",
          "GPT(GPTConfig(block_size=16, vocab_size=64, n_layer=2, n_head=2, n_embd=16))", _tokens(64, (2, 12))),
]


def model_source(model: Model) -> str:
    """The model file's text in a test; the test skips, saying why, when the registry cannot be reached."""
    try:
        return model.source()
    except Unreachable as exc:
        pytest.skip(f"{model.origin}: the registry cannot be reached: {exc}")
