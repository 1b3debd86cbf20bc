"""The model files the port tests convert, and how to build and feed each one.

All six are written in tests/port/models/ after well-known public model files (each file's
docstring names the original); see docs/port.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

FOLDER = Path(__file__).with_name("models")


@dataclass(frozen=True)
class Model:
    name: str
    file: str
    build: str  # an expression in the model's module namespace
    inputs: Callable  # (numpy random generator) → list of numpy arrays
    hidden: str = ""  # a method that builds the recurrent state from the batch size
    expected: dict | None = None  # exact report counts: converted / manual / unsupported

    @property
    def path(self) -> Path:
        return FOLDER / self.file


def _images(shape):
    return lambda rng: [rng.standard_normal(shape).astype("float32")]


def _tokens(vocab, shape):
    return lambda rng: [rng.integers(0, vocab, shape).astype("int64")]


MODELS = [
    Model("cifar_resnet", "cifar_resnet.py", "ResNet18()", _images((2, 3, 32, 32))),
    Model("mobilenet", "mobilenet.py", "MobileNet()", _images((2, 3, 32, 32))),
    Model("super_resolution", "super_resolution.py", "Net(upscale_factor=3)", _images((2, 1, 24, 24))),
    Model("style_transfer", "style_transfer.py", "TransformerNet()", _images((1, 3, 32, 32))),
    Model("word_language_model", "word_language_model.py", "RNNModel('LSTM', 50, 16, 24, 2, dropout=0.2)",
          _tokens(50, (7, 3)), hidden="init_hidden"),
    Model("small_gpt", "small_gpt.py", "GPT(GPTConfig())", _tokens(64, (2, 12))),
]
