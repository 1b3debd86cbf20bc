"""The real model files the port tests convert, where each comes from, how to build and feed it.

Each file is read at test time from a pinned registry package (tests/port/sources.py), never
copied into this repository. Where a file holds definitions that need packages these tests do
not have (a LightningModule beside the model), or a model needs definitions from several files
of its package (torchvision's MobileNetV2 and its Conv2dNormActivation), the named top-level
definitions are taken with the files' imports they use, their source text untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest

from .sources import IGNITE, LIGHTNING, ROBUSTBENCH, THUNDER, TORCHVISION, Archive, Unreachable, definitions


@dataclass(frozen=True)
class Part:
    archive: Archive
    member: str  # the file's path inside the package
    names: tuple[str, ...] = ()  # only these top-level definitions (else the whole file)

    def __str__(self) -> str:
        return f"{self.archive.requirement}: {self.member}" + (f" ({', '.join(self.names)})" if self.names else "")


@dataclass(frozen=True)
class Model:
    name: str
    parts: tuple[Part, ...]
    build: str  # an expression in the model's module namespace
    inputs: Callable  # (numpy random generator) → list of numpy arrays
    hidden: str = ""  # a method that builds the recurrent state from the batch size
    batch_axis: int = 1  # where the batch size is in the first input (for `hidden`)
    # what a person changes in the port so that it runs: (text of the port, replacement), each text once
    edits: tuple[tuple[str, str], ...] = ()

    @property
    def origin(self) -> str:
        return "; ".join(map(str, self.parts))

    def source(self) -> str:
        """The model file's text (raises sources.Unreachable when the registry cannot be reached)."""
        if len(self.parts) == 1 and not self.parts[0].names:
            return self.parts[0].archive.read(self.parts[0].member)
        return definitions([(part.archive.read(part.member), part.names) for part in self.parts])


def model_source(model: Model) -> str:
    """The model file's text in a test; the test skips, saying why, when the registry cannot be reached."""
    try:
        return model.source()
    except Unreachable as exc:
        pytest.skip(f"{model.origin}: the registry cannot be reached: {exc}")


def apply_edits(text: str, edits: tuple[tuple[str, str], ...]) -> str:
    for old, new in edits:
        assert text.count(old) == 1, f"the person's edit does not apply once: {old!r}"
        text = text.replace(old, new)
    return text


def _images(shape):
    return lambda rng: [rng.standard_normal(shape).astype("float32")]


def _tokens(vocab, shape):
    return lambda rng: [rng.integers(0, vocab, shape).astype("int64")]


MODELS = [
    # a CIFAR ResNet-18: BatchNorm, residual `out += self.shortcut(x)`, F.avg_pool2d, x.view(x.size(0), -1)
    Model("cifar_resnet", (Part(ROBUSTBENCH, "robustbench/model_zoo/architectures/resnet.py"),), "ResNet18()",
          _images((2, 3, 32, 32))),
    # torchvision's MobileNetV2: depthwise-separable inverted residuals, built by Conv2dNormActivation from
    # layer classes passed as values; type hints, nn.init over self.modules(), _log_api_usage_once
    Model("mobilenet_v2", (Part(TORCHVISION, "torchvision/utils.py", ("_log_api_usage_once", "_make_ntuple")),
                           Part(TORCHVISION, "torchvision/models/_utils.py", ("_make_divisible",)),
                           Part(TORCHVISION, "torchvision/ops/misc.py", ("ConvNormActivation", "Conv2dNormActivation")),
                           Part(TORCHVISION, "torchvision/models/mobilenetv2.py", ("InvertedResidual", "MobileNetV2"))),
          # 64×64, 4 images: BatchNorm statistics over 2 values per channel at the last stride (32×32,
          # 2 images) put torch's own float32 output 3e-4 from its float64 one, at the msprobe threshold
          "MobileNetV2(num_classes=10, width_mult=0.25)", _images((4, 3, 64, 64)),
          edits=(  # the layer classes come in as values: their calls keep torch's arguments
              ("                stride,\n                padding,\n                dilation=dilation,\n"
               "                groups=groups,\n                bias=bias,\n",
               "                stride,\n                pad_mode=\"pad\",\n                padding=padding,\n"
               "                dilation=dilation,\n                group=groups,\n                has_bias=bias,\n"),
              ('params = {} if inplace is None else {"inplace": inplace}', "params = {}"))),
    # torchvision's ImageNet ResNet-18 beside it: the same block through torchvision's machinery (norm_layer
    # passed as a value, `nn.init` over self.modules(), zero_init_residual's `m.bn2.weight` marked MS301)
    Model("torchvision_resnet", (Part(TORCHVISION, "torchvision/utils.py", ("_log_api_usage_once",)),
                                 Part(TORCHVISION, "torchvision/models/resnet.py",
                                      ("conv3x3", "conv1x1", "BasicBlock", "Bottleneck", "ResNet"))),
          "ResNet(BasicBlock, [2, 2, 2, 2], num_classes=10)", _images((4, 3, 64, 64))),
    # ESPCN from pytorch/examples: PixelShuffle, init.orthogonal_ with calculate_gain
    Model("super_resolution", (Part(IGNITE, "examples/super_resolution/model.py"),), "Net(upscale_factor=3)",
          _images((2, 1, 24, 24))),
    # fast-neural-style's TransformerNet from pytorch/examples: ReflectionPad2d, InstanceNorm2d, interpolate
    Model("style_transfer", (Part(IGNITE, "examples/fast_neural_style/transformer_net.py"),), "TransformerNet()",
          _images((1, 3, 32, 32))),
    # the LSTM language model of Lightning's demos (after pytorch/examples' word_language_model): init_hidden
    Model("lstm_language_model", (Part(LIGHTNING, "lightning/pytorch/demos/lstm.py", ("SimpleLSTM",)),),
          "SimpleLSTM(vocab_size=50, ninp=16, nhid=24, nlayers=2)", _tokens(50, (3, 7)), hidden="init_hidden",
          batch_axis=0),
    # nanoGPT's model.py as Lightning Thunder ships it: LayerNorm, GELU, causal self-attention, weight tying
    Model("nanogpt", (Part(THUNDER, "thunder/tests/nanogpt_model.py"),),
          "GPT(GPTConfig(block_size=16, vocab_size=64, n_layer=2, n_head=2, n_embd=16))", _tokens(64, (2, 12))),
]
