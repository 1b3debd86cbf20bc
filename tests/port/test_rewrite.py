"""The rewrite's exact output: renames, default fixes, markers and the report's counts."""
# ruff: noqa: E501  (the expected ports hold the port's long marker lines)

from __future__ import annotations

import pytest

from ascend_lsp.port import PortUnavailable, port_source

LAYERS = '''import torch
import torch.nn as nn


class Net(nn.Module):  # 网络 😀
    def __init__(self, m):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.bn = nn.BatchNorm1d(8, momentum=0.01, eps=1e-3)
        self.bn2 = nn.BatchNorm2d(8, momentum=m)
        self.ln = nn.LayerNorm(8)
        self.gelu = nn.GELU(approximate="tanh")
        self.act = nn.LeakyReLU(0.1, inplace=True)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.avg = nn.AvgPool2d(2)
        self.fc = nn.Linear(8, 4, bias=False)
        self.emb = nn.Embedding(10, 8, padding_idx=0)
        self.rnn = nn.GRU(8, 16, batch_first=True)
        self.conv = nn.Conv2d(3, 8, 3, padding=(1, 2), groups=1)
        self.conv1d = nn.Conv1d(3, 8, 3, padding="same")
        self.norm = nn.InstanceNorm2d(8)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.sm = nn.Softmax(dim=1)
        self.blocks = nn.ModuleList([nn.ReLU() for _ in range(2)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x += self.fc(x)  # keeps this comment
        return self.forward_features(x)
'''
LAYERS_PORTED = '''import mindspore
from mindspore import nn, ops


class _InstanceNorm(nn.Cell):
    """torch.nn.InstanceNorm without affine parameters or running statistics."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps

    def construct(self, x):
        axes = tuple(range(2, x.ndim))
        mean = x.mean(axis=axes, keep_dims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keep_dims=True)
        return (x - mean) / ops.sqrt(var + self.eps)


class Net(nn.Cell):  # 网络 😀
    def __init__(self, m):
        super().__init__()
        self.drop = nn.Dropout(p=0.2)
        self.bn = nn.BatchNorm1d(8, eps=1e-3, momentum=0.99)
        self.bn2 = nn.BatchNorm2d(8, momentum=1 - (m))
        self.ln = nn.LayerNorm((8,), epsilon=1e-05)
        self.gelu = nn.GELU(approximate=True)
        self.act = nn.LeakyReLU(alpha=0.1)
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode='pad', padding=1)
        self.avg = nn.AvgPool2d(kernel_size=2, stride=2)
        self.fc = nn.Dense(8, 4, has_bias=False)
        self.emb = nn.Embedding(10, 8, padding_idx=0)
        self.rnn = nn.GRU(8, 16, batch_first=True)
        self.conv = nn.Conv2d(3, 8, 3, pad_mode='pad', padding=(1, 1, 2, 2), group=1, has_bias=True)
        self.conv1d = nn.Conv1d(3, 8, 3, pad_mode="same", has_bias=True)
        self.norm = _InstanceNorm(8)
        self.up = nn.Upsample(scale_factor=2.0, mode="nearest", recompute_scale_factor=True)
        self.sm = nn.Softmax(axis=1)
        self.blocks = nn.CellList([nn.ReLU() for _ in range(2)])

    def construct(self, x: mindspore.Tensor) -> mindspore.Tensor:
        x = x + self.fc(x)  # keeps this comment
        return self.forward_features(x)
'''

MANUAL = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.bn = nn.BatchNorm2d(8, momentum=None)
        self.conv = nn.Conv2d(3, 8, 4, padding="same")
        self.sm = nn.Softmax()
        self.ln = nn.LayerNorm([5, 8])
        self.tf = nn.TransformerEncoderLayer(16, 2)
        self.register_buffer(name, torch.zeros(3))

    def forward(self, x):
        y = x.cuda()
        return torch.fft.fft(y)
'''
MANUAL_PORTED = '''import mindspore
from mindspore import nn, ops


class _TransformerEncoderLayer(nn.TransformerEncoderLayer):
    """torch.nn.TransformerEncoderLayer's forward parameters (the is_causal hints dropped: the masks say it)."""

    def construct(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        return super().construct(src, src_mask, src_key_padding_mask)


class Net(nn.Cell):
    def __init__(self, name):
        super().__init__()
        # MS301 port: `torch.nn.BatchNorm2d` → `nn.BatchNorm2d`: momentum=None (cumulative average) has no MindSpore counterpart
        self.bn = nn.BatchNorm2d(8, momentum=None)
        # MS301 port: `torch.nn.Conv2d` → `nn.Conv2d`: padding='same' with a kernel that is not a literal odd size: check which side is padded
        self.conv = nn.Conv2d(3, 8, 4, padding="same")
        # MS301 port: `torch.nn.Softmax` → `nn.Softmax`: dim=None: torch picks the axis from the rank (P14); name the axis
        self.sm = nn.Softmax()
        # MS301 port: `torch.nn.LayerNorm` → `nn.LayerNorm`: a normalized_shape of several axes needs begin_norm_axis=begin_params_axis=rank - 2 (MindSpore 2.10 refuses negative ones)
        self.ln = nn.LayerNorm([5, 8])
        self.tf = _TransformerEncoderLayer(16, 2)
        # MS301 port: register_buffer: the name and `persistent` must be literals
        self.register_buffer(name, ops.zeros(3))

    def construct(self, x):
        # MS301 port: `.cuda()`: MindSpore places tensors with mindspore.set_context
        y = x.cuda()
        # MS302 port: `torch.fft.fft` has no MindSpore counterpart in the port tables
        return torch.fft.fft(y)
'''

FUNCTIONAL = '''"""Doc."""
from __future__ import annotations

import math
import torch
import torch.nn.functional as F


@torch.no_grad()
def f(x, y):
    a = torch.cat([x, y], dim=1)
    b = torch.flatten(a, 1)
    c = F.softmax(b, -1)
    d = torch.zeros(2, 3, dtype=torch.float32, device="cpu")
    e = F.interpolate(x, scale_factor=2)
    g = F.gelu(x)
    h = torch.abs(x)
    n, c2 = x.size(0), x.size()
    z = x.new_zeros(2, 3)
    with torch.no_grad():
        w = math.sqrt(2)
    return F.avg_pool2d(x, 2)
'''
FUNCTIONAL_PORTED = '''"""Doc."""
from __future__ import annotations

import math
import mindspore
from mindspore import nn, ops


def f(x, y):
    a = ops.cat([x, y], axis=1)
    b = ops.flatten(a, start_dim=1)
    c = ops.softmax(b, axis=-1)
    d = ops.zeros((2, 3), dtype=mindspore.float32)
    e = ops.interpolate(x, scale_factor=2.0, recompute_scale_factor=True)
    g = ops.gelu(x, approximate='none')
    h = ops.abs(x)
    n, c2 = x.shape[0], x.shape
    z = x.new_zeros((2, 3))
    w = math.sqrt(2)
    return ops.avg_pool2d(x, 2, 2)
'''

BUFFERS = '''import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.ones(4, 4))
        self.register_buffer("steps", torch.zeros(1), persistent=False)
        self.scale = nn.Parameter(torch.ones(4))
        self.bn = nn.BatchNorm2d(4)
        nn.init.ones_(self.bn.weight)
        nn.init.uniform_(self.scale, -0.1, 0.1)
        nn.init.uniform_(self.scale, 0, 1)
        for m in self.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.bias, 0)
        for p in self.parameters():
            p.requires_grad = False
'''
BUFFERS_PORTED = '''import mindspore
from mindspore import nn, ops
from mindspore.common.initializer import Constant, One, Uniform, initializer


class M(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mask = mindspore.Parameter(ops.ones((4, 4)), name='mask', requires_grad=False)
        self.steps = ops.zeros(1)
        self.scale = mindspore.Parameter(ops.ones(4))
        self.bn = nn.BatchNorm2d(4)
        self.bn.gamma.set_data(initializer(One(), self.bn.gamma.shape, self.bn.gamma.dtype))
        self.scale.set_data(initializer(Uniform(scale=0.1), self.scale.shape, self.scale.dtype))
        # MS301 port: `torch.nn.init.uniform_` → `Uniform`: mindspore's Uniform is symmetric: only uniform_(t, -s, s) maps
        nn.init.uniform_(self.scale, 0, 1)
        for m in (cell for _, cell in self.cells_and_names()):
            if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                m.beta.set_data(initializer(Constant(0), m.beta.shape, m.beta.dtype))
        for p in self.get_parameters():
            p.requires_grad = False
'''


ENTRIES = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")
        self.fast = hasattr(F, "gelu")
        self.viewable = hasattr(torch.Tensor, "view")
        self.parts = nn.ModuleDict(dict(wte=nn.Embedding(8, 4), ln=nn.LayerNorm(4)))
        self.more = nn.ModuleDict({"bn": nn.BatchNorm1d(4)})
        self.head = nn.Linear(4, 8, bias=False)
        self.parts.wte.weight = self.head.weight
        self.parts.ln.weight.requires_grad = False
        self.more.bn.bias.requires_grad = False

    def forward(self, x):
        return F.layer_norm(x, (4,), None, None, 1e-6)
'''
ENTRIES_PORTED = '''import mindspore
from mindspore import nn, ops


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm on the ops.LayerNorm primitive."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    axis = input.ndim - len(shape)
    weight = ops.ones(shape, input.dtype) if weight is None else weight
    bias = ops.zeros(shape, input.dtype) if bias is None else bias
    return ops.LayerNorm(axis, axis, eps)(input, weight, bias)[0]


class M(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flash = True
        self.fast = True
        self.viewable = hasattr(mindspore.Tensor, "view")
        self.parts = nn.CellDict(dict(wte=nn.Embedding(8, 4), ln=nn.LayerNorm((4,), epsilon=1e-05)))
        self.more = nn.CellDict({"bn": nn.BatchNorm1d(4)})
        self.head = nn.Dense(4, 8, has_bias=False)
        self.parts.wte.embedding_table = self.head.weight
        self.parts.ln.gamma.requires_grad = False
        self.more.bn.beta.requires_grad = False
        self.update_parameters_name()  # torch's state-dict names for children added late

    def construct(self, x):
        return _layer_norm(x, (4,), None, None, 1e-6)
'''


VALUES = '''from typing import Callable, Optional

import torch
from torch import nn


def _log(obj) -> None:
    torch._C._log_api_usage_once(f"{obj.__module__}")


class Block(nn.Sequential):
    def __init__(self, c: int, norm: Optional[Callable[..., nn.Module]] = nn.BatchNorm2d,
                 act: Callable[..., nn.Module] = nn.Identity) -> None:
        layers: list[nn.Module] = [nn.Conv2d(c, c, 3, padding=1), norm(c), act()]
        super().__init__(*layers)
        _log(self)

    def fuse(self, m: nn.Module) -> bool:
        return isinstance(m, (nn.Conv2d, nn.BatchNorm2d)) and issubclass(type(m), nn.Linear)

    def reset(self, other: "Block") -> None:
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.BatchNorm2d)):
                m.weight.requires_grad = False
        other[1].bias.requires_grad = False
'''
VALUES_PORTED = '''from typing import Callable, Optional

import mindspore
from mindspore import nn, ops


class _TorchBatchNorm2d(nn.BatchNorm2d):
    """torch.nn.BatchNorm2d taking torch's arguments: the class is passed as a value and called with them."""

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True):
        if track_running_stats != True:
            raise ValueError('track_running_stats=False has no direct equivalent (P04)')
        super().__init__(num_features, eps=eps, momentum=1 - (momentum), affine=affine)
        for name, value in (('num_features', num_features), ('eps', eps), ('momentum', momentum), ('affine', affine), ('track_running_stats', track_running_stats)):
            if not hasattr(self, name):
                setattr(self, name, value)


class _TorchIdentity(nn.Identity):
    """torch.nn.Identity taking torch's arguments: the class is passed as a value and called with them."""

    def __init__(self, *args):
        super().__init__()


def _log(obj) -> None:
    pass


class Block(nn.SequentialCell):
    def __init__(self, c: int, norm: Optional[Callable[..., nn.Cell]] = _TorchBatchNorm2d,
                 act: Callable[..., nn.Cell] = _TorchIdentity) -> None:
        layers: list[nn.Cell] = [nn.Conv2d(c, c, 3, pad_mode='pad', padding=1, has_bias=True), norm(c), act()]
        super().__init__(*layers)
        _log(self)

    def fuse(self, m: nn.Cell) -> bool:
        return isinstance(m, (nn.Conv2d, nn.BatchNorm2d)) and issubclass(type(m), nn.Dense)

    def reset(self, other: "Block") -> None:
        for m in (cell for _, cell in self.cells_and_names()):
            if isinstance(m, (nn.Conv2d, nn.BatchNorm2d)):
                # MS301 port: `m.weight`: the port cannot tell which layer this is, and MindSpore names `.weight` differently in some layers this file uses (P05)
                m.weight.requires_grad = False
        # MS301 port: `other[1].bias`: the port cannot tell which layer this is, and MindSpore names `.bias` differently in some layers this file uses (P05)
        other[1].bias.requires_grad = False
'''


# the language around the calls: annotations, decorators, context managers, torch._assert, torch.fx.wrap,
# layer classes as values and as bases, containers filled late or from a generator, child.forward, SDPA
LANGUAGE = '''from functools import partial
from typing import Optional

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn


def _pad(x: torch.Tensor) -> torch.Tensor:
    return x


torch.fx.wrap("_pad")


class LayerNorm(nn.LayerNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.float()).type(x.dtype)


class Block(nn.Module):
    def __init__(self, dim: int, norm_layer=partial(nn.LayerNorm, eps=1e-6), dtype: torch.dtype = torch.float32):
        super().__init__()
        self.norm = norm_layer(dim)
        self.ln = LayerNorm(dim)
        self.heads = nn.ModuleList(nn.Linear(dim, dim) for _ in range(2))
        self.up = nn.ConvTranspose2d(dim, dim, kernel_size=2, stride=2)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.extra = nn.Module()
        self.extra.proj = nn.Linear(dim, dim)

    @torch.inference_mode()
    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None, device: torch.device = None):
        torch._assert(x.dim() == 3, "x must be 3-D")
        with torch.device(device):
            y = F.scaled_dot_product_attention(x, x, x, attn_mask=mask, is_causal=mask is None)
        return self.heads[0].forward(self.norm(y) + self.ln(y))
'''
LANGUAGE_PORTED = '''from functools import partial
from typing import Optional

import mindspore
from mindspore import nn, ops


class _MultiheadAttention(nn.MultiheadAttention):
    """torch.nn.MultiheadAttention's result without weights: (output, None), where MindSpore's is (output,)."""

    def construct(self, *args, **kwargs):
        result = super().construct(*args, **kwargs)
        return result if len(result) == 2 else (result[0], None)


class _TorchLayerNorm(nn.LayerNorm):
    """torch.nn.LayerNorm taking torch's arguments: the class is passed as a value and called with them."""

    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True):
        if elementwise_affine != True:
            raise ValueError('elementwise_affine=False has no `nn.LayerNorm` counterpart')
        if bias != True:
            raise ValueError('bias=False has no `nn.LayerNorm` counterpart')
        super().__init__(tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,), epsilon=eps)
        for name, value in (('normalized_shape', normalized_shape), ('eps', eps), ('elementwise_affine', elementwise_affine)):
            if not hasattr(self, name):
                setattr(self, name, value)


def _scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                  enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention on operations with CPU kernels: a boolean mask
    keeps where it is True, a float mask is added; is_causal keeps the lower triangle."""
    if enable_gqa:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], -3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], -3)
    scores = ops.matmul(query, key.swapaxes(-2, -1)) * (query.shape[-1] ** -0.5 if scale is None else scale)
    if is_causal:
        causal = ops.ones((query.shape[-2], key.shape[-2]), mindspore.bool_).tril()
        scores = scores.masked_fill(ops.logical_not(causal), float("-inf"))
    if attn_mask is not None and attn_mask.dtype == mindspore.bool_:
        scores = scores.masked_fill(ops.logical_not(attn_mask), float("-inf"))
    elif attn_mask is not None:
        scores = scores + attn_mask
    weights = ops.softmax(scores, axis=-1)
    if dropout_p > 0.0:
        weights = ops.dropout(weights, p=dropout_p)
    return ops.matmul(weights, value)


def _pad(x: mindspore.Tensor) -> mindspore.Tensor:
    return x


class LayerNorm(_TorchLayerNorm):
    def construct(self, x: mindspore.Tensor) -> mindspore.Tensor:
        return super().construct(x.astype(mindspore.float32)).astype(x.dtype)


class Block(nn.Cell):
    def __init__(self, dim: int, norm_layer=partial(_TorchLayerNorm, eps=1e-6), dtype: 'torch.dtype' = mindspore.float32):
        super().__init__()
        self.norm = norm_layer(dim)
        self.ln = LayerNorm(dim)
        self.heads = nn.CellList([nn.Dense(dim, dim) for _ in range(2)])
        self.up = nn.Conv2dTranspose(dim, dim, 2, stride=2, pad_mode='valid', has_bias=True)
        self.attn = _MultiheadAttention(dim, 2, batch_first=True)
        self.extra = nn.Cell()
        self.extra.proj = nn.Dense(dim, dim)
        self.update_parameters_name()  # torch's state-dict names for children added late

    def construct(self, x: mindspore.Tensor, mask: Optional[mindspore.Tensor] = None, device: 'torch.device' = None):
        assert x.ndim == 3, "x must be 3-D"
        y = _scaled_dot_product_attention(x, x, x, attn_mask=mask, is_causal=mask is None)
        return self.heads[0].construct(self.norm(y) + self.ln(y))
'''


@pytest.mark.parametrize("source,ported,counts", [
    (LAYERS, LAYERS_PORTED, (25, 0, 0)),
    (MANUAL, MANUAL_PORTED, (6, 6, 1)),
    (FUNCTIONAL, FUNCTIONAL_PORTED, (16, 0, 0)),
    (BUFFERS, BUFFERS_PORTED, (19, 1, 0)),
    (ENTRIES, ENTRIES_PORTED, (19, 0, 0)),
    (VALUES, VALUES_PORTED, (17, 2, 0)),
    (LANGUAGE, LANGUAGE_PORTED, (35, 0, 0)),
], ids=["layers", "manual", "functional", "buffers", "entries", "values", "language"])
def test_port_text_and_counts(source, ported, counts):
    result = port_source(source)
    assert result.text == ported
    assert (result.count("converted"), result.count("manual"), result.count("unsupported")) == counts
    assert result.complete == (counts[1:] == (0, 0))


def test_report_lists_each_marker_with_its_source_line():
    result = port_source(MANUAL, "model.py")
    report = result.to_dict()
    assert report["rate"] == round(6 / 13, 4)
    flagged = [(i["line"], i["code"]) for i in report["items"] if i["status"] != "converted"]
    assert flagged == [(8, "MS301"), (9, "MS301"), (10, "MS301"), (11, "MS301"), (13, "MS301"), (16, "MS301"),
                       (17, "MS302")]


def test_line_endings_are_kept():
    source = "import torch\r\n\r\nx = torch.cat([a, b], dim=0)\r\n"
    assert port_source(source).text == "import mindspore\r\nfrom mindspore import nn, ops\r\n\r\n" \
                                       "x = ops.cat([a, b], axis=0)\r\n"


def test_without_libcst_the_port_says_how_to_get_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "libcst", None)  # `import libcst` now fails as if it were missing
    monkeypatch.delitem(sys.modules, "ascend_lsp.port.rewrite", raising=False)
    monkeypatch.delitem(sys.modules, "ascend_lsp.port.specs", raising=False)
    with pytest.raises(PortUnavailable, match=r"pip install 'ascend-lsp\[port\]'"):
        port_source("import torch\n")


def test_comments_and_layout_inside_a_converted_call_are_kept():
    source = ("import torch.nn as nn\n"
              "conv = nn.Conv2d(\n"
              "    3, 64,  # in, out\n"
              "    kernel_size=3,\n"
              "    bias=False,  # no bias\n"
              ")\n")
    assert port_source(source).text == ("import mindspore\nfrom mindspore import nn, ops\n"
                                        "conv = nn.Conv2d(\n"
                                        "    3, 64,  # in, out\n"
                                        "    3,\n"
                                        "    pad_mode='valid', has_bias=False,  # no bias\n"
                                        ")\n")


def test_a_sequence_of_tensors_is_spread_and_a_mapping_of_dropped_parameters_left_out():
    source = '''import torch
import torch.nn as nn


def grid(h, w, drop, params):
    layers = [nn.Dropout(drop, **params)]
    return torch.meshgrid([torch.arange(h), torch.arange(w)], indexing="ij"), layers


def rate(params):
    return nn.Dropout(**params), torch.atleast_2d((torch.arange(3),))
'''
    result = port_source(source)
    assert result.text == '''import mindspore
from mindspore import nn, ops


def grid(h, w, drop, params):
    layers = [nn.Dropout(p=drop)]
    return ops.meshgrid(ops.arange(h), ops.arange(w), indexing="ij" or 'ij'), layers


def rate(params):
    # MS301 port: `torch.nn.Dropout` → `nn.Dropout`: `**params` may set `p`: the arguments cannot be mapped one by one
    return nn.Dropout(**params), ops.atleast_2d((ops.arange(3),))
'''
    assert (result.count("converted"), result.count("manual"), result.count("unsupported")) == (8, 1, 0)


def test_a_childs_modules_are_its_cells():
    source = '''import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)
'''
    result = port_source(source)
    assert result.text == '''import mindspore
from mindspore import nn, ops
from mindspore.common.initializer import Zero, initializer


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mlp = nn.SequentialCell(nn.Dense(4, 4), nn.ReLU())
        for m in (cell for _, cell in self.mlp.cells_and_names()):
            if isinstance(m, nn.Dense):
                m.bias.set_data(initializer(Zero(), m.bias.shape, m.bias.dtype))
'''
    assert (result.count("converted"), result.count("manual"), result.count("unsupported")) == (8, 0, 0)


def test_new_zeros_of_a_starred_size_takes_one_sequence():
    result = port_source("import torch\n\n\ndef f(x, s):\n    return x.new_zeros(*s), x.new_ones(2, *s)\n")
    assert result.text.endswith("def f(x, s):\n    return x.new_zeros((*s,)), x.new_ones((2, *s))\n")
    assert [(item.line, item.what) for item in result.items] == [
        (1, "torch import → mindspore"), (5, "`.new_zeros(*size)` → `.new_zeros(size)`"),
        (5, "`.new_ones(*size)` → `.new_ones(size)`")]


def test_an_in_place_fill_of_a_slice_becomes_an_item_assignment():
    source = "import torch\n\n\ndef f(b, n, i):\n    b[n : 2 * n].zero_()\n    b[0, ..., 1:].fill_(2.5)\n    b[i].zero_()\n    return b[1:].zero_()\n"
    result = port_source(source)
    assert result.text.split("\n")[4:] == [
        "def f(b, n, i):", "    b[n : 2 * n] = 0", "    b[0, ..., 1:] = 2.5",
        "    # MS301 port: `torch.Tensor.zero_` → `{self}.copy_(ops.zeros_like({self}))`: `b[i]` is no variable: MindSpore's CPU writes an in-place result into a copy of it (a slice, a transpose), not into the tensor it came from",
        "    b[i].zero_()",
        "    # MS301 port: `torch.Tensor.zero_` → `{self}.copy_(ops.zeros_like({self}))`: `b[1:]` is no variable: MindSpore's CPU writes an in-place result into a copy of it (a slice, a transpose), not into the tensor it came from",
        "    return b[1:].zero_()", ""]
    assert [(item.line, item.what) for item in result.items if item.status == "converted"][1:] == [
        (5, "`b[n : 2 * n].zero_(…)` → `b[n : 2 * n] = 0`"), (6, "`b[0, ..., 1:].fill_(…)` → `b[0, ..., 1:] = 2.5`")]


def test_a_fresh_tensors_in_place_methods_used_as_a_value_are_their_out_of_place_results():
    source = ("import torch\nfrom torch import nn\n\n\ndef f(n, d, x, shape):\n"
              "    mask = torch.empty(n, n).fill_(float('-inf')).triu_(1)\n"
              "    pos = nn.Parameter(torch.empty(1, n, d).normal_(std=0.02))\n"
              "    drawn = torch.empty(shape(n)).normal_()\n"
              "    return x.fill_(0.5), x[0].zero_(), torch.zeros(n).requires_grad_()\n")
    lines = port_source(source).text.split("\n")
    assert lines[lines.index("def f(n, d, x, shape):"):] == [
        "def f(n, d, x, shape):",
        "    mask = ops.triu(ops.full_like(ops.zeros((n, n), None), float('-inf')), 1)",
        "    pos = mindspore.Parameter(ops.randn(ops.zeros((1, n, d), None).shape, dtype=ops.zeros((1, n, d), None).dtype)"
        " * 0.02 + 0.0)",
        # a size from a call: the template would evaluate the receiver twice
        "    # MS301 port: `torch.empty` → `ops.zeros({size}, {dtype!})`: `shape(n)`: one size or a sequence of sizes? "
        "(torch takes both)",
        "    # MS301 port: `torch.Tensor.normal_` → `{self}.copy_(ops.randn({self}.shape, dtype={self}.dtype) * {std!} + "
        "{mean!})`: `torch.empty(shape(n))` is no variable: MindSpore's CPU writes an in-place result into a copy "
        "of it (a slice, a transpose), not into the tensor it came from",
        "    drawn = torch.empty(shape(n)).normal_()",
        "    # MS301 port: `torch.Tensor.zero_` → `{self}.copy_(ops.zeros_like({self}))`: `x[0]` is no variable: "
        "MindSpore's CPU writes an in-place result into a copy of it (a slice, a transpose), not into the tensor it "
        "came from",
        # a row that is not the result written back: its test proves the receiver after the call, not the value
        "    # MS301 port: `torch.Tensor.requires_grad_` → `{self}`: the value of an in-place method on a new tensor is "
        "known from a row `{self}.copy_(result)` only: its test proves the result",
        "    return x.copy_(ops.full_like(x, 0.5)), x[0].zero_(), ops.zeros(n).requires_grad_()", ""]


def test_zero_d_sizes_numpy_scalars_and_item_writes_that_may_select_nothing():
    source = ("import numpy as np\nimport torch\nfrom numpy import log\n\n\ndef f(x, n, m, d, h):\n"
              "    scale = torch.ones([]) * np.log(1 / 0.07) + torch.zeros((), dtype=torch.int64)\n"
              "    step = -log(n) / (n - 1) * torch.arange(n) + np.arange(3) * 2\n"
              "    m[d[0] : d[1], h[0] : h[1], 1] = 3\n"
              "    m[0, 0:2, :n] = 4\n"
              "    m[n:, ..., 2] = 5\n"
              "    m[2 * n :, 0:4].zero_()\n"
              "    m[:2, 0:4] = m[-2:, 1] = m[0:n] = 6\n"
              "    m[1:, 0] = 7\n    m[:0, 0] = 8\n    m[:-1, 0] = 9\n"
              "    return scale, step\n")
    result = port_source(source)
    lines = result.text.split("\n")
    assert lines[lines.index("def f(x, n, m, d, h):"):] == [
        "def f(x, n, m, d, h):",
        "    scale = mindspore.tensor(1.0) * _numpy_scalar(np.log(1 / 0.07)) + mindspore.tensor(0.0, dtype=mindspore.int64)",
        "    step = -_numpy_scalar(log(n)) / (n - 1) * ops.arange(n) + np.arange(3) * 2",
        "    _set_items(m, (slice(d[0], d[1]), slice(h[0], h[1]), 1), 3)",
        "    m[0, 0:2, :n] = 4",  # the slice that may be empty is the last index: MindSpore's CPU takes it
        "    m[n:, ..., 2] = 5",  # an Ellipsis: its axes are not one per element
        "    _set_items(m, (slice(2 * n, None), slice(0, 4)), 0)",
        "    m[:2, 0:4] = m[-2:, 1] = m[0:n] = 6",  # several targets (left as written)
        # a start past 0 or an end at or before 0 may select nothing on an axis that is not empty
        "    _set_items(m, (slice(1, None), 0), 7)", "    _set_items(m, (slice(None, 0), 0), 8)",
        "    _set_items(m, (slice(None, -1), 0), 9)",
        "    return scale, step", ""]
    assert "def _numpy_scalar(value):" in result.text and "def _set_items(tensor, index, value):" in result.text
    assert [(item.line, item.what) for item in result.items if "Python number" in item.what or "_set_items" in item.what] == [
        (7, "`np.log(1 / 0.07)` in arithmetic → its Python number"), (8, "`log(n)` in arithmetic → its Python number"),
        (9, "`m[d[0] : d[1], h[0] : h[1], 1] = …` → `_set_items(…)`: skipped where it selects nothing"),
        (12, "`m[2 * n :, 0:4] = …` → `_set_items(…)`: skipped where it selects nothing"),
        *((line, f"`m[{index}, 0] = …` → `_set_items(…)`: skipped where it selects nothing")
          for line, index in ((14, "1:"), (15, ":0"), (16, ":-1")))]


def test_multi_head_attention_forward_leaves_what_its_composition_lacks_to_a_person():
    source = ("import torch.nn.functional as F\n\n\ndef f(q, w, b, o, ob, k):\n"
              "    a = F.multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0, o, ob)\n"
              "    c = F.multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0, o, ob, is_causal=True)\n"
              "    return a, c, F.multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0, o, ob, "
              "static_k=k)\n")
    result = port_source(source)
    assert [(item.line, item.code, item.what) for item in result.items if item.status != "converted"] == [
        (6, "MS301", "`torch.nn.functional.multi_head_attention_forward` → "
                     "`ops.function.nn_func.multi_head_attention_forward`: is_causal=True: pass the causal attn_mask "
                     "instead"),
        (7, "MS301", "`torch.nn.functional.multi_head_attention_forward` → "
                     "`ops.function.nn_func.multi_head_attention_forward`: static_k has no counterpart in the port's "
                     "composition")]
    assert "    a = _multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0, o, ob)\n" in result.text
