"""Every MindSpore API the port can write exists in the installed MindSpore and runs on its CPU
backend, computing what the torch layer or function computes (msprobe thresholds, eval mode)."""

from __future__ import annotations

import pytest

from ascend_lsp.port import port_source
from ascend_lsp.port.specs import EMITTED, FUNCTIONS, LAYERS
from ascend_lsp.port.convert_weights import convert_state

from .harness import grade, load_module

pytestmark = [pytest.mark.torch, pytest.mark.mindspore]
torch = pytest.importorskip("torch", reason="torch is not installed")
mindspore = pytest.importorskip("mindspore", reason="mindspore is not installed")
numpy = pytest.importorskip("numpy")

IMAGE, SEQ, FLAT, VOLUME = (2, 3, 8, 8), (2, 3, 10), (2, 8), (2, 3, 4, 8, 8)
LAYER_CASES = [  # torch layer (after `nn.`), input shape ("int" inputs are token ids)
    ("Conv2d(3, 4, 3, padding=1)", IMAGE), ("Conv2d(3, 4, (3, 5), padding=(1, 2), bias=False)", IMAGE),
    ("Conv2d(3, 3, 3, stride=2, groups=3)", IMAGE), ("Conv2d(3, 4, 3, padding='same', dilation=2)", IMAGE),
    ("Conv1d(3, 4, 3, padding=1)", SEQ), ("Conv3d(3, 4, (2, 4, 4), stride=(2, 4, 4))", VOLUME),
    ("Conv3d(3, 4, 3, padding=(1, 0, 2), bias=False)", VOLUME), ("Linear(8, 4)", FLAT), ("Linear(8, 4, bias=False)", FLAT),
    ("BatchNorm1d(8, momentum=0.3)", (4, 8)), ("BatchNorm2d(3, eps=1e-3)", IMAGE),
    ("InstanceNorm2d(3, affine=True)", IMAGE), ("InstanceNorm2d(3)", IMAGE), ("InstanceNorm1d(3, affine=True)", SEQ),
    ("GroupNorm(2, 4)", (2, 4, 5, 5)), ("LayerNorm(8)", (2, 5, 8)), ("LayerNorm([8], eps=1e-6)", (2, 5, 8)),
    ("Dropout(0.3)", FLAT), ("GELU()", FLAT), ("GELU(approximate='tanh')", FLAT), ("LeakyReLU()", FLAT),
    ("LeakyReLU(0.2, inplace=True)", FLAT), ("ReLU(inplace=True)", FLAT), ("ReLU6()", FLAT), ("Tanh()", FLAT),
    ("Sigmoid()", FLAT), ("Identity()", FLAT), ("Softmax(dim=1)", FLAT), ("LogSoftmax(dim=-1)", FLAT),
    ("Flatten()", IMAGE), ("MaxPool2d(2)", IMAGE), ("MaxPool2d(3, 2, 1)", IMAGE), ("AvgPool2d(2)", IMAGE),
    ("AvgPool2d(3, stride=1, padding=1)", IMAGE), ("AdaptiveAvgPool2d((1, 1))", IMAGE),
    ("AdaptiveAvgPool2d(2)", IMAGE), ("PixelShuffle(2)", (1, 8, 3, 3)), ("ReflectionPad2d(2)", IMAGE),
    ("ReflectionPad2d((1, 2, 0, 1))", IMAGE), ("ZeroPad2d(1)", IMAGE),
    ("Upsample(scale_factor=2, mode='nearest')", IMAGE), ("Embedding(10, 4)", "int"),
    ("Embedding(10, 4, padding_idx=0)", "int"), ("LSTM(4, 6, 2)", (5, 2, 4)),
    ("GRU(4, 6, batch_first=True)", (2, 5, 4)), ("RNN(4, 6, nonlinearity='relu')", (5, 2, 4)),
    ("ConvTranspose2d(3, 4, 2, stride=2)", IMAGE),
    ("ConvTranspose2d(3, 6, 3, stride=2, padding=(1, 0), groups=3, bias=False)", IMAGE),
    # output_padding: the cut by padding extended at the end, past the padding too, with dilation and groups
    ("ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)", IMAGE),
    ("ConvTranspose2d(3, 4, 2, stride=3, output_padding=(2, 1), bias=False)", IMAGE),
    ("ConvTranspose2d(3, 6, (3, 2), stride=(2, 3), padding=(2, 0), output_padding=(1, 2), groups=3, dilation=2)",
     IMAGE),
    ("GLU()", FLAT), ("GLU(dim=2)", IMAGE),
    ("MultiheadAttention(10, 2)", SEQ, "self.layer(x, x, x)"),
    ("MultiheadAttention(10, 2, batch_first=True, bias=False)", SEQ, "self.layer(x, x, x, need_weights=False)[0]"),
    ("TransformerEncoderLayer(10, 2, 16, dropout=0.0, batch_first=True)", SEQ),
    ("TransformerDecoderLayer(10, 2, 16, dropout=0.0, activation='gelu', norm_first=True)", SEQ,
     "self.layer(x, x)"),
    ("TransformerEncoder(nn.TransformerEncoderLayer(10, 2, 16, 0.0), 2, nn.LayerNorm(10))", SEQ),
    ("TransformerDecoder(nn.TransformerDecoderLayer(10, 2, 16, 0.0), 2)", SEQ, "self.layer(x, x)"),
    ("Transformer(10, 2, 1, 1, 16, dropout=0.0, batch_first=True)", SEQ, "self.layer(x, x)"),
    # torch's forward keywords: masks (float added, boolean True where not attended), the is_causal hints
    ("Transformer(10, 2, 1, 1, 16, dropout=0.0, batch_first=True)", SEQ,
     "self.layer(x, x[:, :2], src_mask=torch.triu(torch.full((3, 3), float('-inf')), 1), tgt_is_causal=True, "
     "tgt_mask=torch.triu(torch.ones(2, 2), 1) > 0, src_key_padding_mask=x[:, :, 0] > 1.0, "
     "memory_key_padding_mask=x[:, :, 1] > 1.0, tgt_key_padding_mask=x[:, :2, 2] > 1.0)"),
    ("TransformerEncoder(nn.TransformerEncoderLayer(10, 2, 16, 0.0), 2)", SEQ,
     "self.layer(x, mask=torch.triu(torch.full((2, 2), float('-inf')), 1), is_causal=True)"),
    ("TransformerEncoderLayer(10, 2, 16, dropout=0.0, batch_first=True)", SEQ,
     "self.layer(x, src_key_padding_mask=x[:, :, 0] > 1.0, is_causal=False)"),
    ("TransformerDecoder(nn.TransformerDecoderLayer(10, 2, 16, 0.0, batch_first=True), 2)", SEQ,
     "self.layer(x, x[:, :2], x[0, :3, :3], memory_key_padding_mask=x[:, :2, 0] > 1.0, tgt_is_causal=False)"),
]
FUNCTION_CASES = [  # a torch expression of x (an image batch)
    "F.relu(x)", "F.relu6(x)", "F.elu(x)", "F.silu(x)", "F.hardswish(x)", "F.leaky_relu(x, 0.2)", "F.tanh(x)",
    "F.sigmoid(x)", "F.gelu(x)", "F.gelu(x, approximate='tanh')", "F.softmax(x, dim=1)", "F.log_softmax(x, -1)",
    "F.avg_pool2d(x, 2)", "F.max_pool2d(x, 3, 2, 1)", "F.adaptive_avg_pool2d(x, 1)",
    "F.interpolate(x, scale_factor=2)", "F.interpolate(x, size=(4, 4), mode='bilinear', align_corners=False)",
    "F.dropout(x, 0.5, training=False)", "F.layer_norm(x, (8,))",
    "F.layer_norm(x, x.shape[-1:], torch.sigmoid(x[0, 0, 0]), torch.tanh(x[0, 0, 1]), 1e-3)", "F.pad(x, (1, 1, 2, 0))", "F.pad(x, (1, 1, 1, 1), mode='reflect')",
    "torch.cat([x, x], dim=1)", "torch.stack([x, x], 0)", "torch.flatten(x, 1)", "torch.flatten(x)",
    "torch.matmul(x, x.transpose(-2, -1))", "torch.tril(x)", "torch.triu(x, 1)", "torch.relu(x)", "torch.tanh(x)",
    "torch.sigmoid(x)", "torch.exp(x)", "torch.log(x.abs() + 1)", "torch.sqrt(x.abs())", "torch.abs(x)",
    "torch.rsqrt(x.abs() + 1)", "torch.sin(x)", "torch.cos(x)", "x + torch.zeros(2, 3, 8, 8)",
    "x * torch.ones((8,))", "torch.arange(0, 16, 2) + x", "x.view(x.size(0), -1)",
    "F.scaled_dot_product_attention(x, x, x)", "F.scaled_dot_product_attention(x, x, x, is_causal=True)",
    "F.scaled_dot_product_attention(x, x, x, attn_mask=x[0, 0] > 0)",
    "F.scaled_dot_product_attention(x, x, x, x[0, 0], scale=0.5)",
    "F.scaled_dot_product_attention(x, x[:, :1], x[:, :1], is_causal=True, enable_gqa=True)",
    "torch.view_as_real(torch.polar(x.abs(), x))", "(lambda f, g: g(f(x)))(F.gelu, torch.tanh)",
    "torch.repeat_interleave(x, 2, dim=1)", "torch.repeat_interleave(x, 3, 0, output_size=6)",
    "torch.view_as_real(torch.view_as_complex(x.reshape(2, 3, 8, 4, 2)) * torch.polar(x[..., :4].abs(), x[..., :4]))",
]
FUNCTION_CASES += [
    # a fresh tensor's in-place methods used as a value: their out-of-place results
    "x + torch.empty(8, 8).fill_(-float('inf')).triu_(1)", "x * torch.zeros(8).fill_(2.0).clamp_(0, 1.5)",
    # a 0-d size: MindSpore's CPU has no Ones or Zeros kernel for it
    "x * torch.ones([])", "x + torch.zeros((), dtype=torch.float32)", "x + torch.ones(()) * 2",
]
SHAPE_ONLY = ["torch.randn(2, 3)", "torch.rand(2, 3)"]  # random draws: the shapes must agree
DRAW = "import torch\n\n\ndef f():\n    torch.manual_seed(0)\n    return {}\n"


def _torch_modules(text: str, tmp_path, name: str):
    source = tmp_path / f"{name}.py"
    source.write_text(text, encoding="utf-8")
    port = tmp_path / f"{name}_ms.py"
    result = port_source(text, str(source))
    assert result.complete, result.to_dict()
    port.write_text(result.text, encoding="utf-8")
    return load_module(source, f"t_{name}"), load_module(port, f"m_{name}")


def _grade(reference, candidate):
    verdict, reports = grade(torch, reference, candidate)
    assert verdict == "PASS", reports


@pytest.mark.parametrize("layer,shape,call", [(*c, "self.layer(x)")[:3] for c in LAYER_CASES],
                         ids=[c[0] for c in LAYER_CASES])
def test_layer_runs_on_the_cpu_and_matches_torch(layer, shape, call, tmp_path):
    text = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            f"        self.layer = nn.{layer}\n\n    def forward(self, x):\n        return {call}\n")
    torch_module, ms_module = _torch_modules(text, tmp_path, "layer")
    rng = numpy.random.default_rng(0)
    x = rng.integers(0, 10, (2, 5)) if shape == "int" else rng.standard_normal(shape).astype("float32")
    torch.manual_seed(0)
    net = torch_module.Net().eval()
    with torch.no_grad():
        for p in net.parameters():  # not the defaults, so that gamma/beta are tested too
            p.add_(torch.randn(p.shape) * 0.1)
        reference = net(torch.from_numpy(x.copy()))  # inplace layers write to their input
    conversion = convert_state({k: v.numpy() for k, v in net.state_dict().items()}, text)
    assert conversion.unmapped == []
    cell = ms_module.Net()
    params = {name: mindspore.Parameter(mindspore.Tensor(value), name=name)
              for name, value in conversion.tensors.items()}
    assert mindspore.load_param_into_net(cell, params, strict_load=True) == ([], [])
    cell.set_train(False)
    _grade(reference, cell(mindspore.Tensor(x)))


@pytest.mark.parametrize("expression", FUNCTION_CASES)
def test_function_runs_on_the_cpu_and_matches_torch(expression, tmp_path):
    text = f"import torch\nimport torch.nn.functional as F\n\n\ndef f(x):\n    return {expression}\n"
    torch_module, ms_module = _torch_modules(text, tmp_path, "function")
    x = numpy.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype("float32")
    _grade(torch_module.f(torch.from_numpy(x)), ms_module.f(mindspore.Tensor(x)))


@pytest.mark.parametrize("expression", SHAPE_ONLY)
def test_random_draws_keep_their_shape(expression, tmp_path):
    text = DRAW.format(expression)
    torch_module, ms_module = _torch_modules(text, tmp_path, "draw")
    assert tuple(ms_module.f().shape) == tuple(torch_module.f().shape)


def test_every_emitted_api_exists_in_the_installed_mindspore():
    missing = []
    for name in EMITTED:
        head, _, rest = name.partition(".")
        target = {"nn": mindspore.nn, "ops": mindspore.ops, "mindspore": mindspore}[head]
        for part in rest.split("."):
            target = getattr(target, part, None)
        if target is None:
            missing.append(name)
    assert missing == []


def test_every_spec_is_run_here():
    used = " ".join([case[0] for case in LAYER_CASES] + FUNCTION_CASES + [DRAW.format(e) for e in SHAPE_ONLY]
                    + [MHA_FORWARD.format(c) for c in MHA_CASES])
    untested = [spec.torch for spec in (*LAYERS, *FUNCTIONS) if spec.torch.rsplit(".", 1)[1] + "(" not in used]
    assert untested == []


def test_the_adapters_defaults_are_torchs():
    """A layer class passed as a value becomes an adapter with torch's signature (specs.adapter)."""
    import inspect

    from ascend_lsp.port.specs import BY_TORCH, TORCH_DEFAULTS

    for name, defaults in TORCH_DEFAULTS.items():
        parameters = inspect.signature(eval(name, {"torch": torch}).__init__).parameters
        assert {k: parameters[k].default for k in defaults} == defaults, name
        assert set(defaults) <= set(BY_TORCH[name].params), name


def test_a_layer_passed_as_a_value_or_subclassed_takes_torchs_arguments(tmp_path):
    text = ("from functools import partial\nimport torch\nfrom torch import nn\n\n\n"
            "class LayerNorm(nn.LayerNorm):\n    def forward(self, x):\n        return super().forward(x) * 2\n\n\n"
            "class Net(nn.Module):\n"
            "    def __init__(self, conv=nn.Conv2d, norm=partial(nn.BatchNorm2d, momentum=0.3), act=nn.GELU):\n"
            "        super().__init__()\n        self.conv = conv(3, 4, 3, 2, (1, 0), groups=1, bias=False)\n"
            "        self.norm = norm(4)\n        self.act = act(approximate='tanh')\n"
            "        self.ln = LayerNorm(3)\n\n"
            "    def forward(self, x):\n        return self.act(self.norm(self.conv(x))), self.ln(x.transpose(1, 3))\n")
    torch_module, ms_module = _torch_modules(text, tmp_path, "values")
    x = numpy.random.default_rng(0).standard_normal(IMAGE).astype("float32")
    net = torch_module.Net().eval()
    with torch.no_grad():
        reference = net(torch.from_numpy(x))
    conversion = convert_state({k: v.numpy() for k, v in net.state_dict().items()}, text)
    assert conversion.unmapped == []
    cell = ms_module.Net()
    params = {name: mindspore.Parameter(mindspore.Tensor(value), name=name)
              for name, value in conversion.tensors.items()}
    assert mindspore.load_param_into_net(cell, params, strict_load=True) == ([], [])
    cell.set_train(False)
    _grade(reference, cell(mindspore.Tensor(x)))


# A model that uses the language around the calls: a torch layer subclassed and passed as a value
# through partial, MultiheadAttention, ModuleDict, GLU, copy.deepcopy clones in a ModuleList built from
# a generator, a bare nn.Module holding a child, weight tying, persistent and non-persistent buffers,
# an in-place index write into a buffer (a KV cache's), ConvTranspose2d, @torch.no_grad, annotations
# and dtype objects, torch._assert, isinstance(x, torch.Tensor), child.forward, causal SDPA.
LANGUAGE_MODEL = '''import copy
from functools import partial
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


class LayerNorm(nn.LayerNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.float()).type(x.dtype)


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.norm = norm_layer(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.ModuleDict({"fc": nn.Linear(dim, 2 * dim), "glu": nn.GLU()})

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        h = self.norm(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp["glu"](self.mlp["fc"](x))


class Model(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 16, heads: int = 2, depth: int = 2, context: int = 8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        block = Block(dim, heads)
        self.blocks = nn.ModuleList(copy.deepcopy(block) for _ in range(depth))
        self.extra = nn.Module()
        self.extra.ln = LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.embed.weight = self.head.weight
        self.register_buffer("cache", torch.zeros(2, context, dim), persistent=False)
        self.register_buffer("scale", torch.ones(dim))
        self.up = nn.ConvTranspose2d(1, 2, kernel_size=2, stride=2)

    @torch.no_grad()
    def forward(self, tokens: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        torch._assert(tokens.dim() == 2, "tokens must be 2-D")
        x = self.embed(tokens).to(dtype) * self.scale
        self.cache[:, : x.shape[1]] = x
        for block in self.blocks:
            x = block.forward(x)
        q = x.view(x.shape[0], x.shape[1], 2, -1).transpose(1, 2)
        x = F.scaled_dot_product_attention(q, q, q, is_causal=True).transpose(1, 2).reshape(x.shape)
        x = self.extra.ln(x + self.cache[:, : x.shape[1]])
        assert isinstance(x, torch.Tensor)
        return self.head(x), self.up(x[:, None, :, :4])
'''


def test_the_language_around_the_calls_ports_converts_loads_and_matches_torch(tmp_path):
    from ascend_lsp.port.verify import verify

    source, port = tmp_path / "lang.py", tmp_path / "lang_ms.py"
    source.write_text(LANGUAGE_MODEL, encoding="utf-8")
    result = port_source(LANGUAGE_MODEL, str(source))
    assert (result.count("converted"), result.count("manual"), result.count("unsupported")) == (48, 0, 0)
    port.write_text(result.text, encoding="utf-8")
    tokens = numpy.random.default_rng(0).integers(0, 32, (2, 6)).astype("int64")
    verified = verify(torch, mindspore, source, port, "Model()", [tokens], tmp_path / "lang.ckpt")
    assert (verified.stage, verified.reason) == ("PASS", "")
    assert verified.weights["dropped"] == [{"torch": "head.weight", "why": "tied to embed.weight (the source ties "
                                                                           "them): one MindSpore Parameter, named by "
                                                                           "its first path"}]


# F.multi_head_attention_forward on (L, N, E) = (5, 2, 8) inputs with 2 heads: CLIP's call (separate projection
# weights, need_weights=False), then the packed projection with the weights returned, masks, unbatched input
MHA_FORWARD = """import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.out = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)
        self.packed = nn.Parameter(torch.randn(24, 8) / 3)
        self.packed_bias = nn.Parameter(torch.randn(24) / 3)
        self.bias_k = nn.Parameter(torch.randn(1, 1, 8))
        self.bias_v = nn.Parameter(torch.randn(1, 1, 8))

    def forward(self, x):
        causal = torch.triu(torch.ones(5, 5), 1) > 0
        scores = torch.stack([x[:, 0, :5], x[:, 1, :5], x[:, 0, 3:], x[:, 1, 3:]])
        padding = x[0, :, :5] > 1.0
        return {}
"""
CLIP_CALL = ("F.multi_head_attention_forward(query=x[:1], key=x, value=x, embed_dim_to_check=x.shape[-1], "
             "num_heads=2, q_proj_weight=self.q.weight, k_proj_weight=self.k.weight, v_proj_weight=self.v.weight, "
             "in_proj_weight=None, in_proj_bias=torch.cat([self.q.bias, self.k.bias, self.v.bias]), bias_k=None, "
             "bias_v=None, add_zero_attn=False, dropout_p=0, out_proj_weight=self.out.weight, "
             "out_proj_bias=self.out.bias, use_separate_proj_weight=True, training=self.training, "
             "need_weights=False)")
PACKED = "x, x, x, 8, 2, self.packed, self.packed_bias, None, None, False, 0.0, self.out.weight, self.out.bias"
MHA_CASES = [
    CLIP_CALL, f"F.multi_head_attention_forward({PACKED})",
    f"F.multi_head_attention_forward({PACKED}, average_attn_weights=False)",
    f"F.multi_head_attention_forward({PACKED}, attn_mask=causal)",
    f"F.multi_head_attention_forward({PACKED}, attn_mask=scores, need_weights=False)",
    f"F.multi_head_attention_forward({PACKED}, key_padding_mask=padding, attn_mask=causal)",
    f"F.multi_head_attention_forward({PACKED}, training=False, key_padding_mask=padding.float() * -1e4)",
    f"F.multi_head_attention_forward({PACKED.replace('x, x, x', 'x[:, 0], x[:, 0], x[:, 0]')})",
    f"F.multi_head_attention_forward({PACKED.replace('None, None, False', 'self.bias_k, self.bias_v, True')})",
]


@pytest.mark.parametrize("call", MHA_CASES)
def test_multi_head_attention_forward_matches_torch(call, tmp_path):
    text = MHA_FORWARD.format(call)
    torch_module, ms_module = _torch_modules(text, tmp_path, "mha")
    x = numpy.random.default_rng(0).standard_normal((5, 2, 8)).astype("float32")
    torch.manual_seed(0)
    net = torch_module.Net().eval()
    with torch.no_grad():
        reference = net(torch.from_numpy(x))
    conversion = convert_state({k: v.numpy() for k, v in net.state_dict().items()}, text)
    cell = ms_module.Net()
    params = {name: mindspore.Parameter(mindspore.Tensor(value), name=name)
              for name, value in conversion.tensors.items()}
    assert mindspore.load_param_into_net(cell, params, strict_load=True) == ([], [])
    cell.set_train(False)
    candidate = cell(mindspore.Tensor(x))
    assert (candidate[1] is None) == (reference[1] is None)
    _grade([r for r in reference if r is not None], [c for c in candidate if c is not None])


# an index empty at run time, followed by another index: skipped, as torch writes nothing there
SET_ITEMS = """import torch


def f(x):
    mask = torch.zeros(4, 4, 4)
    count = 1
    for a, b in ((0, 2), (4, 4), (2, 2), (3, 1), (2, 4)):
        for c, d in ((0, 0), (1, 3), (4, None)):
            mask[a:b, c:d, 1:] = count
            mask[c:d, 0, a:b].zero_()
            count += 1
    return mask + x[0, 0, :4, :4]
"""

NUMPY_SCALARS = """import numpy as np
import torch


def f(x):
    increment = np.log(10000) / (x.shape[-1] // 2 - 1)
    return torch.exp(-increment * torch.arange(8)) * x, x * np.float32(2) - -np.sqrt(2), np.prod(x.shape) * x
"""


@pytest.mark.parametrize("text", [SET_ITEMS, NUMPY_SCALARS], ids=["set_items", "numpy_scalars"])
def test_what_mindspores_cpu_lacks_around_the_calls_is_written_another_way(text, tmp_path):
    torch_module, ms_module = _torch_modules(text, tmp_path, "around")
    x = numpy.random.default_rng(0).standard_normal(IMAGE).astype("float32")
    _grade(torch_module.f(torch.from_numpy(x)), ms_module.f(mindspore.Tensor(x)))


def test_a_fresh_tensors_normal_draw_keeps_its_shape_and_spread(tmp_path):
    text = DRAW.format("torch.nn.Parameter(torch.empty(1, 400, 50).normal_(std=0.02))")
    torch_module, ms_module = _torch_modules(text, tmp_path, "normal")
    draw = ms_module.f().asnumpy()
    assert draw.shape == tuple(torch_module.f().shape) == (1, 400, 50)
    assert abs(draw.std() - 0.02) < 0.001 and abs(draw.mean()) < 0.001
