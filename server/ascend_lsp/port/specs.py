"""What the port writes for each torch layer and function, with the pitfall each fix answers.

Every counterpart here is a `mindspore.nn` cell or `mindspore.ops` function that runs on
MindSpore 2.10's CPU backend as well as on Ascend (`mindspore.mint` lacks CPU kernels for
convolution, GELU, pooling, embedding, tril, …). tests/port/test_emitted.py runs every
name in EMITTED on the installed MindSpore on the CPU. Parameter fixes cite the documented
pitfalls of `mappings/mindspore/traps.toml` (P-ids of data/mindspore/pitfalls.tsv); the
rest are renames from the official mapping table's difference pages (api-2.4.toml).
"""

from __future__ import annotations

import ast
import re
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable

import libcst as cst


class Manual(Exception):
    """The call has a counterpart, but this use of it needs a person: the reason."""


_UNSET = object()


def literal(node: cst.BaseExpression | None) -> object:
    """The Python value of a literal expression, else _UNSET."""
    if node is None:
        return _UNSET
    try:
        return ast.literal_eval(cst.Module([]).code_for_node(node).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _UNSET


def expr(value: object) -> cst.BaseExpression:
    return cst.parse_expression(repr(value))


def source(node: cst.BaseExpression) -> str:
    return cst.Module([]).code_for_node(node)


Args = dict[str, cst.BaseExpression]
Out = list[tuple[str | None, cst.BaseExpression]]  # (keyword or None for positional, value)


@dataclass(frozen=True)
class Spec:
    """A torch callable and how to call its MindSpore counterpart."""

    torch: str
    mindspore: str
    params: tuple[str, ...]  # torch's parameters in order (binding positional arguments)
    build: Callable[[Args], Out]
    pitfalls: tuple[str, ...] = ()  # the documented traps this conversion answers
    dropped: tuple[str, ...] = ()  # torch-only parameters with no effect here (inplace, device)
    pick: Callable[[Args], str] | None = None  # the counterpart, when the arguments decide it


def keep_arguments(*names: str, rename: dict[str, str] | None = None, positional: int = 0) -> Callable[[Args], Out]:
    """Pass `names` through (the first `positional` by position), renaming keywords."""
    rename = rename or {}

    def build(args: Args) -> Out:
        out: Out = []
        for index, name in enumerate(names):
            if name in args:
                out.append((None if index < positional and all(n in args for n in names[:index]) else
                            rename.get(name, name), args[name]))
        return out

    return build


def written(name: str) -> Callable[[Args], str]:
    """A spec's `pick` for a counterpart the port writes into the file (a helper of HELPERS)."""
    return lambda args: name


# While an adapter is written (`adapter`), every argument is a parameter of its __init__, known at run
# time only: a check of a default is collected here, and the adapter makes it when it is called.
_RUN_TIME_CHECKS: ContextVar[list[tuple[str, object, str]] | None] = ContextVar("run_time_checks", default=None)


def _not_default(args: Args, name: str, default: object, reason: str) -> None:
    checks, value = _RUN_TIME_CHECKS.get(), args.get(name)
    if checks is not None and isinstance(value, cst.Name) and value.value == name:
        checks.append((name, default, reason))
    elif name in args and literal(args[name]) != default:
        raise Manual(reason)


def _conv(args: Args) -> Out:
    out: Out = [(None, args["in_channels"]), (None, args["out_channels"]), (None, args["kernel_size"])]
    if "stride" in args:
        out.append(("stride", args["stride"]))
    out += _padding(args)
    if "dilation" in args:
        out.append(("dilation", args["dilation"]))
    if "groups" in args:
        out.append(("group", args["groups"]))
    out.append(("has_bias", args.get("bias", cst.Name("True"))))  # P08: has_bias defaults to False
    return out


def _conv_transpose(args: Args) -> Out:
    if literal(args.get("padding", expr(0))) == "same":
        raise Manual("padding='same' is not a torch ConvTranspose padding")
    if _output_padding(args):
        _not_default(args, "padding_mode", "zeros", "padding_mode other than 'zeros' has no `nn.Conv` counterpart")
        return keep_arguments("in_channels", "out_channels", "kernel_size", "stride", "padding", "output_padding",
                              "groups", "bias", "dilation", positional=3)(args)
    return _conv(args)


def _output_padding(args: Args) -> bool:
    """mindspore 2.10's output_padding pads the output with zeros where torch's extends the convolution
    (measured on the CPU): a ConvTranspose2d with one becomes the port's composition."""
    return "output_padding" in args and literal(args["output_padding"]) not in (0, (0, 0))


def _padding(args: Args) -> Out:
    """torch's padding → MindSpore's pad_mode and padding (P07: MindSpore pads ('same') by default)."""
    _not_default(args, "padding_mode", "zeros", "padding_mode other than 'zeros' has no `nn.Conv` counterpart")
    padding = args.get("padding")
    value = literal(padding)
    if padding is None or value == 0:
        return [("pad_mode", expr("valid"))]
    if value == "valid" or value == "same" and _odd(args["kernel_size"]):
        return [("pad_mode", padding)]
    if value == "same":  # P07: with an odd total padding MindSpore puts the extra row on the other side
        raise Manual("padding='same' with a kernel that is not a literal odd size: check which side is padded")
    if isinstance(value, int):
        return [("pad_mode", expr("pad")), ("padding", padding)]
    if isinstance(value, tuple) and len(value) in (2, 3) and all(isinstance(v, int) for v in value):
        # torch ([depth,] height, width) → MindSpore ([head, tail,] top, bottom, left, right)
        return [("pad_mode", expr("pad")), ("padding", expr(tuple(p for v in value for p in (v, v))))]
    if isinstance(value, tuple) and len(value) == 1 and isinstance(value[0], int):
        return [("pad_mode", expr("pad")), ("padding", expr(value[0]))]
    if value is _UNSET:
        # an expression, known at run time only: an int passes, torch's (height, width) becomes MindSpore's
        # (top, bottom, left, right) there
        return [("pad_mode", expr("pad")), ("padding", cst.parse_expression(f"{PADDING}({source(padding)})"))]
    raise Manual(f"padding={source(padding)} has no `pad_mode='pad'` form")


PADDING = "_pad_sides"
PADDING_SOURCE = '''

def _pad_sides(padding):
    """torch's convolution padding, an int or ([depth,] height, width), as MindSpore's pad_mode='pad' padding."""
    return padding if isinstance(padding, int) else tuple(p for side in padding for p in (side, side))
'''


def _odd(kernel: cst.BaseExpression) -> bool:
    value = literal(kernel)
    sizes = value if isinstance(value, tuple) else (value,)
    return all(isinstance(k, int) and k % 2 == 1 for k in sizes)


def _batchnorm(args: Args) -> Out:
    _not_default(args, "track_running_stats", True, "track_running_stats=False has no direct equivalent (P04)")
    out: Out = [(None, args["num_features"])]
    if "eps" in args:
        out.append(("eps", args["eps"]))
    if "momentum" in args:  # P03: momentum_mindspore = 1 - momentum_torch
        value = literal(args["momentum"])
        if value is None:
            raise Manual("momentum=None (cumulative average) has no MindSpore counterpart")
        momentum = expr(round(1 - value, 12)) if isinstance(value, (int, float)) else \
            cst.parse_expression(f"1 - ({source(args['momentum'])})")
        out.append(("momentum", momentum))
    if "affine" in args:
        out.append(("affine", args["affine"]))
    return out


def _instancenorm(args: Args) -> Out:
    # mindspore 2.10's nn.InstanceNorm2d has no CPU kernel. With affine parameters, GroupNorm
    # with one group per channel normalises each sample's channel over its positions, which is
    # what InstanceNorm does without running statistics; without them (P15: torch's default),
    # GroupNorm would still own gamma/beta, so a parameter-free cell does it.
    _not_default(args, "track_running_stats", False, "track_running_stats=True has no MindSpore counterpart")
    if _affine(args):
        return [(None, args["num_features"]), (None, args["num_features"]), *keep_arguments("eps")(args)]
    return [(None, args["num_features"]), *keep_arguments("eps")(args)]


def _affine(args: Args) -> bool:
    value = literal(args.get("affine", cst.Name("False")))
    if value not in (True, False):
        raise Manual("affine must be a literal True or False: it decides which cell ports it")
    return bool(value)


INSTANCE_NORM = "_InstanceNorm"
INSTANCE_NORM_SOURCE = '''

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
'''


LAYER_NORM = "_layer_norm"
LAYER_NORM_SOURCE = '''

def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm on the ops.LayerNorm primitive."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    axis = input.ndim - len(shape)
    weight = ops.ones(shape, input.dtype) if weight is None else weight
    bias = ops.zeros(shape, input.dtype) if bias is None else bias
    return ops.LayerNorm(axis, axis, eps)(input, weight, bias)[0]
'''


def _layernorm(args: Args) -> Out:
    _not_default(args, "elementwise_affine", True, "elementwise_affine=False has no `nn.LayerNorm` counterpart")
    _not_default(args, "bias", True, "bias=False has no `nn.LayerNorm` counterpart")
    shape = args["normalized_shape"]
    if literal(shape) is _UNSET:  # P06: MindSpore wants a tuple or list; an expression is either at run time
        shape = cst.parse_expression(f"tuple({source(shape)}) if isinstance({source(shape)}, (tuple, list)) else "
                                     f"({source(shape)},)")
        return [(None, shape), ("epsilon", args.get("eps", expr(1e-5)))]
    if not isinstance(shape, (cst.Tuple, cst.List)):  # P06: MindSpore wants a tuple or list
        shape = cst.Tuple([cst.Element(shape)])
    if len(shape.elements) > 1:  # MindSpore normalises over the last axis unless told, by a rank-dependent axis
        raise Manual("a normalized_shape of several axes needs begin_norm_axis=begin_params_axis=rank - "
                     f"{len(shape.elements)} (MindSpore 2.10 refuses negative ones)")
    return [(None, shape), ("epsilon", args.get("eps", expr(1e-5)))]  # P06: epsilon defaults to 1e-7


def _linear(args: Args) -> Out:
    out: Out = [(None, args["in_features"]), (None, args["out_features"])]
    if "bias" in args:
        out.append(("has_bias", args["bias"]))
    return out


def _dropout(args: Args) -> Out:
    return [("p", args.get("p", expr(0.5)))]  # P01: the first positional parameter is keep_prob


def _gelu(args: Args) -> Out:
    value = literal(args.get("approximate", expr("none")))
    if value is _UNSET and isinstance(args["approximate"], cst.Name):  # known at run time
        return [("approximate", cst.parse_expression(f"{args['approximate'].value} == 'tanh'"))]
    if value not in ("none", "tanh"):
        raise Manual("approximate must be a literal 'none' or 'tanh'")
    return [("approximate", cst.Name(str(value == "tanh")))]  # P12: nn.GELU defaults to tanh


def _leaky_relu(args: Args) -> Out:
    return [("alpha", args.get("negative_slope", expr(0.01)))]  # P13: alpha defaults to 0.2


def _pool(args: Args) -> Out:
    _not_default(args, "ceil_mode", False, "ceil_mode=True: check the output size by hand")
    _not_default(args, "return_indices", False, "return_indices=True returns a different tuple")
    _not_default(args, "dilation", 1, "dilation other than 1: check the output size by hand")
    out: Out = [("kernel_size", args["kernel_size"]),
                ("stride", args.get("stride", args["kernel_size"]))]  # P16: stride defaults to 1
    if "padding" in args and literal(args["padding"]) != 0:
        out += [("pad_mode", expr("pad")), ("padding", args["padding"])]
    if "count_include_pad" in args:
        out.append(("count_include_pad", args["count_include_pad"]))
    return out


def _embedding(args: Args) -> Out:
    for name in ("max_norm", "scale_grad_by_freq", "sparse"):
        _not_default(args, name, {"max_norm": None}.get(name, False), f"{name} has no `nn.Embedding` counterpart")
    out: Out = [(None, args["num_embeddings"]), (None, args["embedding_dim"])]
    if "padding_idx" in args:
        out.append(("padding_idx", args["padding_idx"]))
    return out


def _rnn(args: Args) -> Out:
    _not_default(args, "proj_size", 0, "proj_size has no MindSpore counterpart")
    out: Out = [(None, args["input_size"]), (None, args["hidden_size"])]
    for name, ms_name in (("num_layers", "num_layers"), ("nonlinearity", "nonlinearity"), ("bias", "has_bias"),
                          ("batch_first", "batch_first"), ("dropout", "dropout"), ("bidirectional", "bidirectional")):
        if name in args:
            out.append((ms_name, args[name]))
    return out


def _softmax_cell(args: Args) -> Out:
    if literal(args.get("dim", cst.Name("None"))) is None:
        raise Manual("dim=None: torch picks the axis from the rank (P14); name the axis")
    return [("axis", args["dim"])]


def _scale_factor(args: Args) -> Args:
    """MindSpore 2.10 wants a float scale_factor (torch takes an int too)."""
    if "scale_factor" not in args:
        return args
    value = literal(args["scale_factor"])
    if isinstance(value, (int, float)):
        return {**args, "scale_factor": expr(float(value))}
    if value is _UNSET:
        return {**args, "scale_factor": cst.parse_expression(f"float({source(args['scale_factor'])})")}
    raise Manual(f"scale_factor={source(args['scale_factor'])}: MindSpore takes one float")


def _upsample(args: Args) -> Out:
    args = _scale_factor(args)
    out = keep_arguments("size", "scale_factor", "mode", "align_corners")(args)
    if "scale_factor" in args:
        out.append(("recompute_scale_factor", cst.Name("True")))
    return out


def _transformer(args: Args, *names: str) -> Out:
    _not_default(args, "bias", True, "bias=False has no `nn.Transformer` counterpart")
    return keep_arguments(*names, positional=2)(args)


# torch.nn.TransformerEncoderLayer's parameters, those of DecoderLayer too, in order
_TRANSFORMER = ("d_model", "nhead", "dim_feedforward", "dropout", "activation", "layer_norm_eps", "batch_first",
                "norm_first")
_TRANSFORMER_MODEL = ("d_model", "nhead", "num_encoder_layers", "num_decoder_layers", "dim_feedforward", "dropout",
                      "activation", "custom_encoder", "custom_decoder", "layer_norm_eps", "batch_first", "norm_first")
R = "torch.nn."
LAYERS = [
    Spec(R + "Conv1d", "nn.Conv1d", ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
                                      "groups", "bias", "padding_mode"), _conv, ("P07", "P08", "P49")),
    Spec(R + "Conv2d", "nn.Conv2d", ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
                                      "groups", "bias", "padding_mode"), _conv, ("P07", "P08")),
    Spec(R + "Conv3d", "nn.Conv3d", ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
                                      "groups", "bias", "padding_mode"), _conv, ("P07", "P08")),
    Spec(R + "Linear", "nn.Dense", ("in_features", "out_features", "bias"), _linear, ("P11",)),
    *(Spec(R + f"BatchNorm{d}", f"nn.BatchNorm{d}", ("num_features", "eps", "momentum", "affine",
                                                     "track_running_stats"), _batchnorm, ("P03", "P04"))
      for d in ("1d", "2d")),
    *(Spec(R + f"InstanceNorm{d}", "nn.GroupNorm", ("num_features", "eps", "momentum", "affine",
                                                    "track_running_stats"), _instancenorm, ("P15",),
           pick=lambda a: "nn.GroupNorm" if _affine(a) else INSTANCE_NORM)
      for d in ("1d", "2d")),
    Spec(R + "GroupNorm", "nn.GroupNorm", ("num_groups", "num_channels", "eps", "affine"),
         keep_arguments("num_groups", "num_channels", "eps", "affine", positional=2)),
    Spec(R + "LayerNorm", "nn.LayerNorm", ("normalized_shape", "eps", "elementwise_affine", "bias"), _layernorm,
         ("P06",)),
    Spec(R + "Dropout", "nn.Dropout", ("p", "inplace"), _dropout, ("P01",), dropped=("inplace",)),
    Spec(R + "GELU", "nn.GELU", ("approximate",), _gelu, ("P12",)),
    Spec(R + "LeakyReLU", "nn.LeakyReLU", ("negative_slope", "inplace"), _leaky_relu, ("P13",), dropped=("inplace",)),
    Spec(R + "ReLU", "nn.ReLU", ("inplace",), keep_arguments(), dropped=("inplace",)),
    Spec(R + "ReLU6", "nn.ReLU6", ("inplace",), keep_arguments(), dropped=("inplace",)),
    Spec(R + "Tanh", "nn.Tanh", (), keep_arguments()),
    Spec(R + "Sigmoid", "nn.Sigmoid", (), keep_arguments()),
    Spec(R + "Identity", "nn.Identity", ("*args",), keep_arguments()),  # torch's takes any arguments
    Spec(R + "Softmax", "nn.Softmax", ("dim",), _softmax_cell, ("P14",)),
    Spec(R + "LogSoftmax", "nn.LogSoftmax", ("dim",), _softmax_cell, ("P14",)),
    Spec(R + "Flatten", "nn.Flatten", ("start_dim", "end_dim"),
         lambda a: [("start_dim", a.get("start_dim", expr(1))), *(keep_arguments("end_dim")(a))]),
    Spec(R + "MaxPool2d", "nn.MaxPool2d", ("kernel_size", "stride", "padding", "dilation", "return_indices",
                                            "ceil_mode"), _pool, ("P16",)),
    Spec(R + "AvgPool2d", "nn.AvgPool2d", ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
         _pool, ("P16",)),
    Spec(R + "AdaptiveAvgPool2d", "nn.AdaptiveAvgPool2d", ("output_size",), keep_arguments("output_size", positional=1)),
    Spec(R + "PixelShuffle", "nn.PixelShuffle", ("upscale_factor",), keep_arguments("upscale_factor", positional=1)),
    Spec(R + "ReflectionPad2d", "nn.ReflectionPad2d", ("padding",), keep_arguments("padding", positional=1)),
    Spec(R + "ZeroPad2d", "nn.ZeroPad2d", ("padding",), keep_arguments("padding", positional=1)),
    Spec(R + "Upsample", "nn.Upsample", ("size", "scale_factor", "mode", "align_corners"), _upsample),
    Spec(R + "Embedding", "nn.Embedding", ("num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                                            "scale_grad_by_freq", "sparse"), _embedding, ("P31",)),
    *(Spec(R + kind, f"nn.{kind}", ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                                    "bidirectional", "proj_size"), _rnn) for kind in ("LSTM", "GRU")),
    Spec(R + "RNN", "nn.RNN", ("input_size", "hidden_size", "num_layers", "nonlinearity", "bias", "batch_first",
                               "dropout", "bidirectional"), _rnn),
]
LAYERS += [
    Spec(R + "ConvTranspose2d", "nn.Conv2dTranspose", ("in_channels", "out_channels", "kernel_size", "stride",
                                                       "padding", "output_padding", "groups", "bias", "dilation",
                                                       "padding_mode"), _conv_transpose, ("P07", "P08"),
         pick=lambda a: CONV_TRANSPOSE if _output_padding(a) else "nn.Conv2dTranspose"),
    Spec(R + "MultiheadAttention", "nn.MultiheadAttention", ("embed_dim", "num_heads", "dropout", "bias",
                                                             "add_bias_kv", "add_zero_attn", "kdim", "vdim",
                                                             "batch_first", "device", "dtype"),
         keep_arguments("embed_dim", "num_heads", "dropout", "bias", "add_bias_kv", "add_zero_attn", "kdim", "vdim",
                        "batch_first", rename={"bias": "has_bias"}, positional=2), dropped=("device", "dtype"),
         pick=lambda a: MULTIHEAD_ATTENTION),
    Spec(R + "GLU", "nn.GLU", ("dim",), keep_arguments("dim", rename={"dim": "axis"})),
    Spec(R + "Transformer", "nn.Transformer", (*_TRANSFORMER_MODEL, "bias", "device", "dtype"),
         lambda a: _transformer(a, *_TRANSFORMER_MODEL), dropped=("device", "dtype"), pick=written("_Transformer")),
    *(Spec(R + f"Transformer{kind}Layer", f"nn.Transformer{kind}Layer", _TRANSFORMER + ("bias", "device", "dtype"),
           lambda a: _transformer(a, *_TRANSFORMER), dropped=("device", "dtype"),
           pick=written(f"_Transformer{kind}Layer")) for kind in ("Encoder", "Decoder")),
    Spec(R + "TransformerEncoder", "nn.TransformerEncoder", ("encoder_layer", "num_layers", "norm",
                                                             "enable_nested_tensor", "mask_check"),
         keep_arguments("encoder_layer", "num_layers", "norm", positional=2),
         dropped=("enable_nested_tensor", "mask_check"),  # a fast path's switches: the result is the same
         pick=written("_TransformerEncoder")),
    Spec(R + "TransformerDecoder", "nn.TransformerDecoder", ("decoder_layer", "num_layers", "norm"),
         keep_arguments("decoder_layer", "num_layers", "norm", positional=2), pick=written("_TransformerDecoder")),
]
CONTAINERS = {R + "Sequential": "nn.SequentialCell", R + "ModuleList": "nn.CellList", R + "ModuleDict": "nn.CellDict",
              R + "Module": "nn.Cell", R + "Parameter": "mindspore.Parameter",
              R + "parameter.Parameter": "mindspore.Parameter"}

# MindSpore's CellDict refuses a CellList / SequentialCell / CellDict entry (torch's ModuleDict
# takes any module): such a ModuleDict becomes this plain Cell, whose attributes are the entries.
CONTAINER_DICT = "_CellDict"
CONTAINER_DICT_SOURCE = '''

class _CellDict(nn.Cell):
    """torch.nn.ModuleDict holding containers, which mindspore.nn.CellDict refuses."""

    def __init__(self, cells):
        super().__init__()
        for name, cell in dict(cells).items():
            setattr(self, name, cell)

    def __getitem__(self, name):
        return getattr(self, name)
'''
CONTAINER_CALLS = (R + "Sequential", R + "ModuleList", R + "ModuleDict")


def _dim_to_axis(*names: str, positional: int = 1) -> Callable[[Args], Out]:
    return keep_arguments(*names, rename={"dim": "axis"}, positional=positional)


def _softmax_function(args: Args) -> Out:
    if "dim" not in args or literal(args["dim"]) is None:
        raise Manual("dim=None: torch picks the axis from the rank (P14); name the axis")
    return [(None, args["input"]), ("axis", args["dim"])]


def _flatten_function(args: Args) -> Out:
    # ops.flatten's second positional parameter is `order`, and start_dim defaults to 1 (torch: 0)
    return [(None, args["input"]), ("start_dim", args.get("start_dim", expr(0))), *keep_arguments("end_dim")(args)]


def _pool_function(args: Args) -> Out:
    _not_default(args, "ceil_mode", False, "ceil_mode=True: check the output size by hand")
    out: Out = [(None, args["input"]), (None, args["kernel_size"]),
                (None, args.get("stride", args["kernel_size"]))]  # P16: ops.avg_pool2d's stride defaults to 1
    if "padding" in args:
        out.append(("padding", args["padding"]))
    return out


def _interpolate(args: Args) -> Out:
    _not_default(args, "antialias", False, "antialias has no `ops.interpolate` counterpart")
    args = _scale_factor(args)
    out = keep_arguments("input", "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor",
                positional=1)(args)
    if "scale_factor" in args and "recompute_scale_factor" not in args:
        # MindSpore 2.10 rejects scale_factor for 'nearest' unless the size is recomputed from it
        out.append(("recompute_scale_factor", cst.Name("True")))
    return out


def _gelu_function(args: Args) -> Out:
    return [(None, args["input"]), ("approximate", args.get("approximate", expr("none")))]


def _sizes(args: Args) -> Out:
    """torch.zeros(2, 3) / torch.zeros((2, 3)) → ops.zeros((2, 3)); device and friends dropped."""
    sizes = args["*size"]
    shape = sizes if isinstance(sizes, (cst.Tuple, cst.List)) and len(sizes.elements) != 1 else sizes
    out: Out = [(None, shape)]
    if "dtype" in args:
        out.append(("dtype", args["dtype"]))
    return out


def _filled(name: str, value: float) -> tuple[Callable[[Args], Out], Callable[[Args], str]]:
    """torch.zeros / torch.ones: the build and the counterpart. MindSpore 2.10's CPU has no Zeros or Ones
    kernel for a 0-d shape: a literal empty size (`torch.ones([])`) becomes `mindspore.tensor(1.0)`."""
    def zero_d(args: Args) -> bool:
        return literal(args["*size"]) in ((), [])

    def build(args: Args) -> Out:
        return [(None, expr(value)), *keep_arguments("dtype")(args)] if zero_d(args) else _sizes(args)

    return build, lambda args: "mindspore.tensor" if zero_d(args) else f"ops.{name}"


F = "torch.nn.functional."
FUNCTIONS = [
    *(Spec(F + name, f"ops.{name}", ("input", "inplace"), keep_arguments("input", positional=1), dropped=("inplace",))
      for name in ("relu", "relu6", "elu", "silu", "hardswish")),
    Spec(F + "leaky_relu", "ops.leaky_relu", ("input", "negative_slope", "inplace"),
         lambda a: [(None, a["input"]), ("alpha", a.get("negative_slope", expr(0.01)))], ("P13",),
         dropped=("inplace",)),
    *(Spec(F + name, f"ops.{name}", ("input",), keep_arguments("input", positional=1)) for name in ("tanh", "sigmoid")),
    *(Spec(f"torch.{name}", f"ops.{name}", ("input",), keep_arguments("input", positional=1))
      for name in ("relu", "tanh", "sigmoid", "exp", "log", "sqrt", "abs", "rsqrt", "sin", "cos")),
    Spec(F + "gelu", "ops.gelu", ("input", "approximate"), _gelu_function, ("P12",)),
    Spec(F + "softmax", "ops.softmax", ("input", "dim"), _softmax_function, ("P14",)),
    Spec(F + "log_softmax", "ops.log_softmax", ("input", "dim"), _softmax_function, ("P14",)),
    Spec(F + "avg_pool2d", "ops.avg_pool2d", ("input", "kernel_size", "stride", "padding", "ceil_mode"),
         _pool_function, ("P16",)),
    Spec(F + "max_pool2d", "ops.max_pool2d", ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode"),
         _pool_function, ("P16",)),
    Spec(F + "adaptive_avg_pool2d", "ops.adaptive_avg_pool2d", ("input", "output_size"),
         keep_arguments("input", "output_size", positional=2)),
    Spec(F + "interpolate", "ops.interpolate", ("input", "size", "scale_factor", "mode", "align_corners",
                                                "recompute_scale_factor", "antialias"), _interpolate),
    # api-1.10.toml pairs F.layer_norm with the ops.LayerNorm primitive (2.10's ops.layer_norm has no
    # CPU kernel): a small function on it takes torch's parameters
    Spec(F + "layer_norm", "ops.LayerNorm", ("input", "normalized_shape", "weight", "bias", "eps"),
         keep_arguments("input", "normalized_shape", "weight", "bias", "eps", positional=5), pick=lambda a: LAYER_NORM),
    Spec(F + "dropout", "ops.dropout", ("input", "p", "training", "inplace"),
         keep_arguments("input", "p", "training", positional=1), dropped=("inplace",)),
    # MindSpore 2.10's ops.scaled_dot_product_attention (flash attention) has no CPU kernel: a composition
    Spec(F + "scaled_dot_product_attention", "ops.matmul", ("query", "key", "value", "attn_mask", "dropout_p",
                                                            "is_causal", "scale", "enable_gqa"),
         keep_arguments("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa",
                        positional=3), pick=lambda a: SDPA),
    Spec("torch.repeat_interleave", "ops.repeat_interleave", ("input", "repeats", "dim", "output_size"),
         _dim_to_axis("input", "repeats", "dim", positional=2), dropped=("output_size",)),
    # complex numbers: MindSpore 2.10's CPU kernels multiply complex64 and have ops.polar and ops.view_as_real,
    # but no view_as_complex: the pairs of the last axis become a complex tensor by ops.Complex
    Spec("torch.polar", "ops.polar", ("abs", "angle"), keep_arguments("abs", "angle", positional=2)),
    Spec("torch.view_as_real", "ops.view_as_real", ("input",), keep_arguments("input", positional=1)),
    Spec("torch.view_as_complex", "ops.Complex", ("input",), keep_arguments("input", positional=1),
         pick=lambda a: VIEW_AS_COMPLEX),
    Spec(F + "pad", "ops.pad", ("input", "pad", "mode", "value"),
         keep_arguments("input", "pad", "mode", "value", rename={"pad": "padding"}, positional=2)),
    Spec("torch.cat", "ops.cat", ("tensors", "dim"), _dim_to_axis("tensors", "dim")),
    Spec("torch.stack", "ops.stack", ("tensors", "dim"), _dim_to_axis("tensors", "dim")),
    Spec("torch.flatten", "ops.flatten", ("input", "start_dim", "end_dim"), _flatten_function),
    Spec("torch.matmul", "ops.matmul", ("input", "other"), keep_arguments("input", "other", positional=2)),
    Spec("torch.tril", "ops.tril", ("input", "diagonal"), keep_arguments("input", "diagonal", positional=2)),
    Spec("torch.triu", "ops.triu", ("input", "diagonal"), keep_arguments("input", "diagonal", positional=2)),
    *(Spec(f"torch.{name}", f"ops.{name}", ("*size", "dtype", "device", "requires_grad", "layout"),
           _filled(name, value)[0], dropped=("device", "requires_grad", "layout"), pick=_filled(name, value)[1])
      for name, value in (("zeros", 0.0), ("ones", 1.0))),
    *(Spec(f"torch.{name}", f"ops.{name}", ("*size", "dtype", "device", "requires_grad", "layout"), _sizes,
           dropped=("device", "requires_grad", "layout"))
      for name in ("randn", "rand")),
    Spec("torch.manual_seed", "mindspore.set_seed", ("seed",), keep_arguments("seed", positional=1)),
    Spec("torch.arange", "ops.arange", ("start", "end", "step", "dtype", "device", "requires_grad"),
         keep_arguments("start", "end", "step", "dtype", positional=3), dropped=("device", "requires_grad")),
]

VIEW_AS_COMPLEX = "_view_as_complex"
VIEW_AS_COMPLEX_SOURCE = '''

def _view_as_complex(input):
    """torch.view_as_complex: the last axis's pairs (real, imaginary) as one complex tensor."""
    return ops.Complex()(input[..., 0], input[..., 1])
'''

ROLL = "_roll"
ROLL_SOURCE = '''

def _roll(input, shifts, dims=None):
    """torch.roll on operations with CPU kernels (ops.roll has none): one index_select per shifted
    dim; without dims, of the flattened tensor."""
    if dims is None:
        return _roll(input.flatten(), shifts, 0).reshape(input.shape)
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(shifts) != len(dims):
        raise ValueError(f"torch.roll: {len(shifts)} shifts for {len(dims)} dims")
    for shift, dim in zip(shifts, dims):
        size = input.shape[dim]
        input = ops.index_select(input, dim, (ops.arange(size) - shift) % size)
    return input
'''

RMS_NORM = "_rms_norm"
RMS_NORM_SOURCE = '''

def _rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm on operations with CPU kernels (RmsNorm has none): the input over
    the root mean square of its trailing normalized_shape dims plus eps (the dtype's epsilon without one)."""
    shape = tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)
    if tuple(input.shape[len(input.shape) - len(shape):]) != shape:
        raise ValueError(f"rms_norm: normalized_shape {shape} is not the input's trailing shape {input.shape}")
    if eps is None:
        eps = {mindspore.float16: 2.0 ** -10, mindspore.bfloat16: 2.0 ** -7, mindspore.float32: 2.0 ** -23,
               mindspore.float64: 2.0 ** -52}[input.dtype]
    out = input * ops.rsqrt((input * input).mean(axis=tuple(range(-len(shape), 0)), keep_dims=True) + eps)
    return out if weight is None else out * weight
'''

SDPA = "_scaled_dot_product_attention"
SDPA_SOURCE = '''

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
'''

# torch's defaults of the layers a file may pass as values (norm_layer=nn.LayerNorm, conv_layer=nn.Conv2d),
# for the adapter that takes torch's arguments where such a value is called (checked against the installed
# torch by tests/port/test_emitted.py)
_CONV_DEFAULTS: dict[str, object] = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, "bias": True, "padding_mode": "zeros"}
_NORM_DEFAULTS: dict[str, object] = {"eps": 1e-05, "momentum": 0.1, "affine": True, "track_running_stats": True}
TORCH_DEFAULTS: dict[str, dict[str, object]] = {
    R + "Conv1d": _CONV_DEFAULTS, R + "Conv2d": _CONV_DEFAULTS, R + "Conv3d": _CONV_DEFAULTS,
    R + "Linear": {"bias": True},
    R + "BatchNorm1d": _NORM_DEFAULTS, R + "BatchNorm2d": _NORM_DEFAULTS,
    R + "GroupNorm": {"eps": 1e-05, "affine": True},
    R + "LayerNorm": {"eps": 1e-05, "elementwise_affine": True, "bias": True},
    R + "Dropout": {"p": 0.5, "inplace": False}, R + "GELU": {"approximate": "none"},
    R + "LeakyReLU": {"negative_slope": 0.01, "inplace": False}, R + "ReLU": {"inplace": False},
    R + "ReLU6": {"inplace": False}, R + "Tanh": {}, R + "Sigmoid": {}, R + "Identity": {},
}


def adapter(spec: Spec) -> tuple[str, str] | None:
    """A cell class that takes torch's arguments, for a layer class passed as a value: its name and
    source, written from the spec with each argument a parameter known at run time; None when the
    spec cannot map arguments it does not see."""
    defaults = TORCH_DEFAULTS.get(spec.torch)
    if defaults is None:
        return None
    checks: list[tuple[str, object, str]] = []
    token = _RUN_TIME_CHECKS.set(checks)
    try:
        args: Args = {name: cst.Name(name.lstrip("*")) for name in spec.params if name not in spec.dropped}
        built = spec.build(args)
        counterpart = spec.pick(args) if spec.pick else spec.mindspore
    except Manual:
        return None
    finally:
        _RUN_TIME_CHECKS.reset(token)
    name = "_Torch" + spec.torch.rsplit(".", 1)[1]
    params = ", ".join(["self", *(f"{p}={defaults[p]!r}" if p in defaults else p for p in spec.params)])
    call = ", ".join(source(value) if keyword is None else f"{keyword}={source(value)}" for keyword, value in built)
    lines = ["", "", f"class {name}({counterpart}):",
             f'    """{spec.torch} taking torch\'s arguments: the class is passed as a value and called with them."""',
             "", f"    def __init__({params}):"]
    for parameter, default, reason in checks:
        lines += [f"        if {parameter} != {default!r}:", f"            raise ValueError({reason!r})"]
    lines.append(f"        super().__init__({call})")
    kept = [p for p in spec.params if not p.startswith("*") and p != "bias"]  # `bias` names a tensor in torch
    if kept:  # torch's arguments stay readable under torch's names (a subclass's forward reads self.eps)
        lines += [f"        for name, value in {_pairs(kept)}:", "            if not hasattr(self, name):",
                  "                setattr(self, name, value)"]
    return name, "\n".join(lines) + "\n"


def function_value(spec: Spec) -> str | None:
    """A torch function passed as a value (`activation=F.gelu`), as the counterpart called with the
    input alone: the counterpart itself when that passes the input on unchanged, else a lambda; None
    for a layer, or a function whose mapping needs more than its input."""
    if spec.torch in LAYER_CLASSES or not spec.params or spec.params[0].startswith("*"):
        return None
    first = spec.params[0]
    try:
        built = spec.build({first: cst.Name(first)})
        counterpart = spec.pick({first: cst.Name(first)}) if spec.pick else spec.mindspore
    except (Manual, KeyError):
        return None
    if len(built) == 1 and built[0][0] is None and isinstance(built[0][1], cst.Name):
        return counterpart
    call = ", ".join(source(value) if keyword is None else f"{keyword}={source(value)}" for keyword, value in built)
    return f"lambda {first}: {counterpart}({call})"


def _pairs(names: list[str]) -> str:
    return "(" + ", ".join(f"({n!r}, {n})" for n in names) + ("," if len(names) == 1 else "") + ")"


# torch dtypes → MindSpore dtypes (mindspore.common.dtype; same names for the rest)
DTYPES = {"float": "float32", "long": "int64", "int": "int32", "half": "float16", "double": "float64",
          "float16": "float16", "float32": "float32", "float64": "float64", "bfloat16": "bfloat16",
          "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool_"}

# nn.init.* → mindspore.common.initializer: (initializer class, how torch's arguments map)
INIT = {
    "zeros_": ("Zero", ()), "ones_": ("One", ()), "constant_": ("Constant", ("val",)),
    "normal_": ("Normal", ("mean", "std")), "uniform_": ("Uniform", ("a", "b")),
    "xavier_uniform_": ("XavierUniform", ("gain",)), "xavier_normal_": ("XavierNormal", ("gain",)),
    "kaiming_uniform_": ("HeUniform", ("a", "mode", "nonlinearity")),
    "kaiming_normal_": ("HeNormal", ("a", "mode", "nonlinearity")),
    "trunc_normal_": ("TruncatedNormal", ("mean", "std", "a", "b")),
    "orthogonal_": ("Orthogonal", ("gain",)),
}
# torch.nn.init.calculate_gain's table (torch's documentation), for a literal nonlinearity
GAINS = {"linear": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3,
         "relu": 2.0 ** 0.5, "selu": 0.75}

# torch calls whose statement the port removes: they do not change what the model computes
NO_EFFECT = {"torch._C._log_api_usage_once": "PyTorch's API-usage logging (inactive unless a logger is "
                                            "subscribed; torchvision calls it in every model)",
             "torch.fx.wrap": "marks a function as a leaf for torch.fx tracing, which MindSpore does not do"}
# torch context managers and decorators the port removes: what they do is MindSpore's default or its context's
SCOPES = {"torch.no_grad": "MindSpore computes gradients only when asked",
          "torch.inference_mode": "MindSpore computes gradients only when asked",
          "torch.device": "MindSpore places tensors by mindspore.set_context(device_target=...)"}

# torch's tests of how the code runs, each with its answer when the port runs (no TorchScript, no tracing,
# no torch.compile, no ONNX export), and torch's number constants
FIXED_CALLS = {"torch.jit.is_scripting": "False", "torch.jit.is_tracing": "False",
               "torch.compiler.is_compiling": "False", "torch._dynamo.is_compiling": "False",
               "torch.onnx.is_in_onnx_export": "False"}
CONSTANTS = {"torch.pi": "3.141592653589793", "torch.e": "2.718281828459045", "torch.inf": 'float("inf")',
             "torch.nan": 'float("nan")'}
HELPERS = {PADDING: PADDING_SOURCE, ROLL: ROLL_SOURCE, RMS_NORM: RMS_NORM_SOURCE, SDPA: SDPA_SOURCE, VIEW_AS_COMPLEX: VIEW_AS_COMPLEX_SOURCE, INSTANCE_NORM: INSTANCE_NORM_SOURCE, CONTAINER_DICT: CONTAINER_DICT_SOURCE, LAYER_NORM: LAYER_NORM_SOURCE}
# torch names that are only referred to (annotations, isinstance), never called, by the port
REFERENCES = {"torch.Tensor": "mindspore.Tensor"} | CONSTANTS
BY_TORCH = {spec.torch: spec for spec in (*LAYERS, *FUNCTIONS)}
LAYER_CLASSES = {spec.torch: spec.mindspore for spec in LAYERS} | CONTAINERS

# Every MindSpore API the port can write (checked on the CPU by tests/port/test_emitted.py).
EMITTED = sorted({spec.mindspore for spec in (*LAYERS, *FUNCTIONS)} | set(CONTAINERS.values())
                 | {f"mindspore.{name}" for name in DTYPES.values()}
                 | {f"mindspore.common.initializer.{cls}" for cls, _ in INIT.values()}
                 | {"mindspore.common.initializer.initializer", "ops.stop_gradient"})


# The API table's compositions (mappings/build/port_api_rows.toml names them in its templates): MindSpore
# 2.10 has no CPU kernel for these APIs, so the port writes them on operations that have one.

EINSUM = "_einsum"
EINSUM_SOURCE = '''

def _einsum(equation, *operands):
    """torch.einsum on operations with CPU kernels (ops.einsum has none). The port wrote the equation
    without spaces and with its output; `...` names an operand's dims beyond its letters, aligned from
    the right. Each operand loses its repeated letters (their diagonal) and the letters nothing else has
    (a sum); then the operands are multiplied two at a time, left to right, each pair by one batched
    matmul: its batch the letters both have that a later operand or the output keeps, summed over the
    other letters both have."""
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {equation!r} names {len(terms)} operands, {len(operands)} given")
    dtypes = {op.dtype for op in operands}
    if len(dtypes) > 1:  # torch multiplies them only where no letter is summed over two of them
        raise TypeError(f"einsum: operands of dtypes {', '.join(sorted(map(str, dtypes)))}: cast them to one")
    extra = [op.ndim - len(term.replace("...", "")) for term, op in zip(terms, operands)]
    for n, (term, count) in enumerate(zip(terms, extra)):
        if count < 0 or count and "..." not in term:
            raise ValueError(f"einsum: {term!r} does not name the {operands[n].ndim} dims of operand {n}")
    width = max(extra)

    def letters(term, count):  # an ellipsis's dims are named by numbers, aligned from the right
        head, dots, tail = term.partition("...")
        return [*head, *range(width - count, width), *tail] if dots else list(term)

    def summed(x, labels, kept):
        axes = tuple(i for i, label in enumerate(labels) if label not in kept)
        return (x.sum(axis=axes) if axes else x), [label for label in labels if label in kept]

    def ordered(x, labels, order):
        perm = tuple(labels.index(label) for label in order)
        return x if perm == tuple(range(len(perm))) else ops.transpose(x, perm)

    def product(sizes):
        total = 1
        for size in sizes:
            total *= size
        return total

    output = letters(output, width)
    pairs = [(op, letters(term, count)) for term, op, count in zip(terms, operands, extra)]
    for n, (x, labels) in enumerate(pairs):
        for label in dict.fromkeys(labels):
            while labels.count(label) > 1:  # a repeated letter: its diagonal, as the last dim
                first = labels.index(label)
                second = labels.index(label, first + 1)
                if x.shape[first] != x.shape[second]:
                    raise RuntimeError(f"einsum(): subscript {label} is repeated for operand {n} but the sizes "
                                       f"don't match, {x.shape[second]} != {x.shape[first]}")
                x = ops.diagonal(x, 0, first, second)
                labels = [other for i, other in enumerate(labels) if i not in (first, second)] + [label]
        kept = {*output, *(label for m, (_, other) in enumerate(pairs) if m != n for label in other)}
        pairs[n] = summed(x, labels, kept)
    x, labels = pairs[0]
    for n in range(1, len(pairs)):
        y, other = pairs[n]
        kept = {*output, *(label for _, later in pairs[n + 1:] for label in later)}
        for label in labels:
            if label in other and 1 != x.shape[labels.index(label)] != y.shape[other.index(label)] != 1:
                raise RuntimeError(f"einsum(): subscript {label} has size {y.shape[other.index(label)]} for operand "
                                   f"{n} which does not broadcast with previously seen size {x.shape[labels.index(label)]}")
        # a letter both have that nothing keeps, broadcast (size 1) on one side: summed out of both
        lone = {label for label in labels if label in other and label not in kept
                and x.shape[labels.index(label)] != y.shape[other.index(label)]}
        x, labels = summed(x, labels, set(labels) - lone)
        y, other = summed(y, other, set(other) - lone)
        batch = [label for label in labels if label in other and label in kept]
        inner = [label for label in labels if label in other and label not in kept]
        left = [label for label in labels if label not in other]
        right = [label for label in other if label not in labels]
        x = ordered(x, labels, batch + left + inner)
        y = ordered(y, other, batch + inner + right)
        b = len(batch)
        outer = x.shape[b:b + len(left)], y.shape[b + len(inner):]
        x = x.reshape(x.shape[:b] + (product(outer[0]), product(x.shape[b + len(left):])))
        y = y.reshape(y.shape[:b] + (product(y.shape[b:b + len(inner)]), product(outer[1])))
        x = ops.matmul(x, y)  # the batch dims broadcast
        x, labels = x.reshape(x.shape[:b] + outer[0] + outer[1]), batch + left + right
    return ordered(x, labels, output)
'''
_TERM = re.compile(r"[A-Za-z]*(\.\.\.)?[A-Za-z]*")


def _einsum_equation(args: Args, operands: list[cst.BaseExpression]) -> Args:
    """torch.einsum's equation as `_einsum` takes it, read when the port writes the call: without
    spaces, the output written out where torch infers it (the ellipsis's dims, then the letters used
    once, uppercase first); Manual where it is no literal or torch would refuse it."""
    given = args["equation"]
    equation = literal(given)
    if any(isinstance(literal(op), list) for op in operands):
        raise Manual("torch's sublist form (`einsum(x, [0, 1], [1])`) has no counterpart: write the equation")
    if not isinstance(equation, str):
        raise Manual(f"the equation `{source(given)}` is no literal string: the port reads it to write the product")
    inputs, arrow, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    bad = next((t for t in (*terms, *([output] if arrow else [])) if not _TERM.fullmatch(t)), None)
    if bad is not None:
        raise Manual(f"`{equation}`: torch refuses the subscripts `{bad}` (letters and one `...` a term)")
    if len(operands) not in (1, len(terms)):  # one operand may be the sequence of them all
        raise Manual(f"`{equation}` names {len(terms)} operands, the call gives {len(operands)}")
    used = [c for c in inputs if c.isalpha()]
    if arrow:
        named = [c for c in output if c.isalpha()]
        for c in named:
            if named.count(c) > 1 or c not in used:
                raise Manual(f"`{equation}`: torch refuses the output `{output}` (`{c}` "
                             f"{'is in no operand' if c not in used else 'appears twice'})")
    else:
        output = ("..." if "..." in inputs else "") + "".join(sorted(c for c in set(used) if used.count(c) == 1))
    quote = given.quote if isinstance(given, cst.SimpleString) else '"'
    return {**args, "equation": cst.SimpleString(f"{quote}{','.join(terms)}->{output}{quote}")}


UNFOLD = "_unfold"
UNFOLD_SOURCE = '''

def _unfold(input, dimension, size, step):
    """Tensor.unfold on operations with CPU kernels (MindSpore's Tensor.unfold is an im2col): the
    windows of `size` every `step` along `dimension`, as a new last dim; a 0-d input is one of one
    element. What torch refuses raises as there."""
    ndim = max(input.ndim, 1)
    if not -ndim <= dimension < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got "
                         f"{dimension})")
    dimension %= ndim
    length = input.shape[dimension] if input.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dimension} is {length} but size is {size}")
    if step < 1:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not input.ndim:
        return input.reshape(1)[:size]
    count = (length - size) // step + 1
    if not size:
        return ops.zeros(input.shape[:dimension] + (count,) + input.shape[dimension + 1:] + (0,), input.dtype)
    index = (ops.arange(count) * step).reshape(-1, 1) + ops.arange(size)
    windows = ops.index_select(input, dimension, index.reshape(-1))
    windows = windows.reshape(input.shape[:dimension] + (count, size) + input.shape[dimension + 1:])
    return ops.movedim(windows, dimension + 1, -1)
'''

INDEX_COPY = "_index_copy"
INDEX_COPY_SOURCE = '''

def _index_copy(input, dim, index, source):
    """Tensor.index_copy on operations with CPU kernels: source's slices along dim written at index (a
    0-d index is one). What torch refuses raises as there: tensor_scatter_elements would take a
    negative index, or a source of another shape."""
    if not -input.ndim <= dim < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {dim})")
    dim %= input.ndim
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    index = index.reshape(-1)
    if source.ndim != input.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.ndim}), destination dimensionality ({input.ndim})")
    if index.shape[0] != source.shape[dim]:
        raise IndexError(f"index_copy_(): Number of indices ({index.shape[0]}) should be equal to source.size(dim) "
                         f"({source.shape[dim]})")
    if source.shape[:dim] + source.shape[dim + 1:] != input.shape[:dim] + input.shape[dim + 1:]:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes: {source.shape} "
                           f"and {input.shape} along dimension {dim}")
    if not index.shape[0]:
        return input.copy()
    for bad in (int(index.min()), int(index.max())):
        if not 0 <= bad < input.shape[dim]:
            raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} with size "
                             f"{input.shape[dim]}")
    shape = [1] * source.ndim
    shape[dim] = -1
    return ops.tensor_scatter_elements(input, ops.broadcast_to(index.reshape(shape), source.shape), source, dim)
'''

LOGSPACE = "_logspace"
LOGSPACE_SOURCE = '''

def _logspace(start, end, steps, base):
    """torch.logspace in torch's default dtype, float32: the base to the power of ops.linspace
    (ops.logspace takes an int base only); no steps, no values, where ops.linspace refuses 0."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 0:
        return ops.zeros(0, mindspore.float32)
    return base ** ops.linspace(start, end, steps)
'''
DEFAULT_DTYPES = ("torch.float32", "torch.float", "mindspore.float32")  # mindspore's: the port's dtype already written


def _logspace_dtype(args: Args, operands: list[cst.BaseExpression]) -> Args:
    """torch.logspace's dtype, read when the port writes the call: torch's default (float32) is what
    `_logspace` gives, and is left out; any other needs a person."""
    dtype = args.get("dtype")
    if dtype is not None and source(dtype) not in DEFAULT_DTYPES:
        raise Manual(f"`dtype={source(dtype)}`: the port computes logspace in float32, torch's default dtype")
    return {name: value for name, value in args.items() if name != "dtype"}


REDUCED = "_reduced"
REDUCED_SOURCE = '''

def _reduced(loss, reduction):
    """A loss of each element, reduced as torch's `reduction` asks."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")
'''

TRIPLET_MARGINS = "_triplet_margins"
TRIPLET_MARGINS_SOURCE = '''

def _triplet_margins(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False):
    """torch's triplet margin loss of each sample (TripletMarginLoss has no CPU kernel): how much nearer
    the anchor is to the negative than to the positive plus the margin, 0 where farther; distances are
    p-norms over the last dim of the difference plus eps, as torch's pairwise_distance; swap takes the
    positive's distance to the negative where it is smaller."""
    def distance(x, y):
        return ops.norm(x - y + eps, p, -1)

    to_negative = distance(anchor, negative)
    if swap:
        to_negative = ops.minimum(to_negative, distance(positive, negative))
    return ops.clamp(margin + distance(anchor, positive) - to_negative, min=0.0)
'''

HELPERS.update({EINSUM: EINSUM_SOURCE, UNFOLD: UNFOLD_SOURCE, INDEX_COPY: INDEX_COPY_SOURCE, LOGSPACE: LOGSPACE_SOURCE,
                REDUCED: REDUCED_SOURCE, TRIPLET_MARGINS: TRIPLET_MARGINS_SOURCE})
# a helper whose arguments the port reads when it writes the call: they come back as the helper takes
# them (given the operands a `*` parameter gathered), or Manual says why the call needs a person
READ_WHEN_PORTED: dict[str, Callable[[Args, list[cst.BaseExpression]], Args]] = {EINSUM: _einsum_equation,
                                                                                 LOGSPACE: _logspace_dtype}
# ------------------------------------------------------------------ compositions for the open set's models

MULTIHEAD_ATTENTION = "_MultiheadAttention"
MULTIHEAD_ATTENTION_SOURCE = '''

class _MultiheadAttention(nn.MultiheadAttention):
    """torch.nn.MultiheadAttention's result without weights: (output, None), where MindSpore's is (output,)."""

    def construct(self, *args, **kwargs):
        result = super().construct(*args, **kwargs)
        return result if len(result) == 2 else (result[0], None)
'''

MHA_FORWARD = "_multi_head_attention_forward"
MHA_FORWARD_SOURCE = '''

def _multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                  bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                  training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                  use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                  v_proj_weight=None, average_attn_weights=True):
    """torch.nn.functional.multi_head_attention_forward on the function MindSpore's nn.MultiheadAttention
    calls (CPU kernels), with torch's need_weights: the attention weights, or None."""
    output, weights = ops.function.nn_func.multi_head_attention_forward(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
        add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training=training,
        key_padding_mask=key_padding_mask, attn_mask=attn_mask, use_separate_proj_weight=use_separate_proj_weight,
        q_proj_weight=q_proj_weight, k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight,
        average_attn_weights=average_attn_weights, dtype=query.dtype)
    return output, weights if need_weights else None
'''
_MHA_FORWARD = ("query", "key", "value", "embed_dim_to_check", "num_heads", "in_proj_weight", "in_proj_bias",
                "bias_k", "bias_v", "add_zero_attn", "dropout_p", "out_proj_weight", "out_proj_bias", "training",
                "key_padding_mask", "need_weights", "attn_mask", "use_separate_proj_weight", "q_proj_weight",
                "k_proj_weight", "v_proj_weight", "static_k", "static_v", "average_attn_weights", "is_causal")


def _mha_forward(args: Args) -> Out:
    _not_default(args, "static_k", None, "static_k has no counterpart in the port's composition")
    _not_default(args, "static_v", None, "static_v has no counterpart in the port's composition")
    # torch takes is_causal as a hint about attn_mask, and differs by path (SDPA or not) in what it does
    _not_default(args, "is_causal", False, "is_causal=True: pass the causal attn_mask instead")
    return keep_arguments(*(p for p in _MHA_FORWARD if p not in ("static_k", "static_v", "is_causal")),
                          positional=13)(args)


SET_ITEMS = "_set_items"
SET_ITEMS_SOURCE = '''

def _set_items(tensor, index, value):
    """tensor[index] = value for an index of slices and integers, skipped where it selects nothing:
    MindSpore 2.10's CPU fails (a memcpy_s error) on an empty slice followed by another index."""
    if all(not isinstance(part, slice) or len(range(*part.indices(size))) for part, size in zip(index, tensor.shape)):
        tensor[index] = value
'''

NUMPY_SCALAR = "_numpy_scalar"
NUMPY_SCALAR_SOURCE = '''

def _numpy_scalar(value):
    """A numpy scalar (np.log(10000)) as the Python number it holds, anything else as it is: numpy's
    operator would make an array of a MindSpore tensor on its other side, where torch's tensor wins."""
    import numpy

    return value.item() if isinstance(value, numpy.generic) else value
'''
# numpy functions that give a numpy scalar of scalar arguments (or of any array: the reductions)
NUMPY_SCALAR_FUNCTIONS = {
    "log", "log2", "log10", "log1p", "exp", "exp2", "expm1", "sqrt", "power", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "floor", "ceil", "round", "abs", "absolute", "sign",
    "maximum", "minimum", "float32", "float64", "int32", "int64", "prod", "sum", "mean", "max", "min"}

CONV_TRANSPOSE = "_ConvTranspose2d"
CONV_TRANSPOSE_SOURCE = '''

class _ConvTranspose2d(nn.Conv2dTranspose):
    """torch.nn.ConvTranspose2d with output_padding, which MindSpore's pads with zeros where torch's extends
    the convolution: the whole transposed convolution, cut by padding and extended by output_padding at
    the end (zeros only past what the kernel reaches), then the bias."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, pad_mode='valid', dilation=dilation,
                         group=groups, has_bias=bias)
        self.cut = (padding, padding) if isinstance(padding, int) else tuple(padding)
        self.extra = (output_padding, output_padding) if isinstance(output_padding, int) else tuple(output_padding)

    def construct(self, x):
        n, _, h, w = x.shape
        whole = [(size - 1) * stride + dilation * (kernel - 1) + 1 for size, stride, dilation, kernel
                 in zip((h, w), self.stride, self.dilation, self.kernel_size)]
        y = self.conv2d_transpose(x, self.weight, (n, self.out_channels, *whole))
        (top, left), (bottom, right) = self.cut, self.extra
        y = ops.pad(y, (0, max(0, right - left), 0, max(0, bottom - top)))
        y = y[:, :, top:whole[0] - top + bottom, left:whole[1] - left + right]
        return y + self.bias.reshape(1, -1, 1, 1) if self.has_bias else y
'''

# torch's forward parameters of the transformer layers: MindSpore's take the same masks in the same order
# (torch's TransformerEncoder calls its src_mask `mask`), without the is_causal hints, which torch takes only
# with the causal mask itself (F.multi_head_attention_forward: "Need attn_mask if specifying the is_causal hint")
TRANSFORMER_FORWARD = {
    "Transformer": "src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None, "
                   "tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None, "
                   "memory_is_causal=False",
    "TransformerEncoder": "src, mask=None, src_key_padding_mask=None, is_causal=None",
    "TransformerDecoder": "tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, "
                          "memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False",
    "TransformerEncoderLayer": "src, src_mask=None, src_key_padding_mask=None, is_causal=False",
    "TransformerDecoderLayer": "tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, "
                               "memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False",
}


def _forward_adapter(kind: str, params: str) -> str:
    """A subclass of MindSpore's `kind` whose construct takes torch's forward parameters."""
    passed = [p.split("=")[0].strip() for p in params.split(",") if not p.split("=")[0].strip().endswith("is_causal")]
    return (f"\n\nclass _{kind}(nn.{kind}):\n"
            f'    """torch.nn.{kind}\'s forward parameters (the is_causal hints dropped: the masks say it)."""\n\n'
            f"    def construct(self, {params}):\n"
            f"        return super().construct({', '.join(passed)})\n")


FUNCTIONS.append(Spec(F + "multi_head_attention_forward", "ops.function.nn_func.multi_head_attention_forward",
                      _MHA_FORWARD, _mha_forward, pick=written(MHA_FORWARD)))
BY_TORCH[FUNCTIONS[-1].torch] = FUNCTIONS[-1]
HELPERS.update({MULTIHEAD_ATTENTION: MULTIHEAD_ATTENTION_SOURCE, MHA_FORWARD: MHA_FORWARD_SOURCE,
                SET_ITEMS: SET_ITEMS_SOURCE, NUMPY_SCALAR: NUMPY_SCALAR_SOURCE, CONV_TRANSPOSE: CONV_TRANSPOSE_SOURCE}
               | {f"_{kind}": _forward_adapter(kind, params) for kind, params in TRANSFORMER_FORWARD.items()})
EMITTED.append("ops.function.nn_func.multi_head_attention_forward")
