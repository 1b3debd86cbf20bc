"""mindspore/traps.toml: the documented PyTorch → MindSpore pitfalls as call shapes.

Each TRAPS row encodes one documented fact (pitfalls.tsv P01–P51) as the call that
trips it: which APIs, on which side (`mindspore`: code being written in MindSpore;
`torch`: PyTorch code about to be ported), the condition, and the fix when the rewrite
is certain. `cites` must appear in the fact's text, so a changed fact stops the build.
MindSpore must be installed: the default each row relies on is read from the
installed signature and recorded where it differs from the documents.
"""

from __future__ import annotations

import csv
import inspect
import dataclasses
from pathlib import Path

from ascend_lsp.knowledge.traps import Trap
from installed import MISSING, exists, resolve
from mindspore_api_tables import installed_mindspore
from mindspore_tables import _source, _value

BN = ["mindspore.nn.BatchNorm1d", "mindspore.nn.BatchNorm2d", "mindspore.nn.BatchNorm3d"]
TORCH_BN = ["torch.nn.BatchNorm1d", "torch.nn.BatchNorm2d", "torch.nn.BatchNorm3d"]
CONV = ["mindspore.nn.Conv1d", "mindspore.nn.Conv2d", "mindspore.nn.Conv3d"]
CONV_T = ["mindspore.nn.Conv1dTranspose", "mindspore.nn.Conv2dTranspose", "mindspore.nn.Conv3dTranspose"]
POOL = ["mindspore.nn.MaxPool1d", "mindspore.nn.MaxPool2d", "mindspore.nn.AvgPool1d", "mindspore.nn.AvgPool2d"]
OPTIMIZERS = ["mindspore.nn.Adam", "mindspore.nn.AdamWeightDecay", "mindspore.nn.SGD", "mindspore.nn.Momentum",
              "mindspore.nn.RMSProp", "mindspore.nn.Adagrad", "mindspore.nn.Lamb", "mindspore.nn.LARS"]


TRAPS = [
    # P01 Dropout: the first positional parameter of mindspore.nn.Dropout is keep_prob.
    Trap("P01", "MS201", "mindspore", ["mindspore.nn.Dropout"], "positional", param="keep_prob", position=0,
         message="The first positional argument of `mindspore.nn.Dropout` is `keep_prob`, the probability to KEEP: "
                 "`Dropout(0.2)` drops 80%. Pass the drop probability as `p=`.",
         cites="keep_prob deprecated but still the FIRST positional parameter", fix="to-keyword", fix_to="p",
         applicability="unsafe", default=0.5),
    Trap("P01", "MS201", "mindspore", ["mindspore.nn.Dropout"], "keyword", param="keep_prob",
         message="`keep_prob` is the probability to keep and is deprecated; `p = 1 - keep_prob` is the drop "
                 "probability.", cites="keep_prob deprecated", fix="one-minus", fix_to="p", applicability="safe",
         severity="info"),
    Trap("P01", "MS201", "torch", ["torch.nn.Dropout", "torch.nn.Dropout2d", "torch.nn.functional.dropout"], "call",
         message="When porting, pass the drop probability to MindSpore by keyword (`mindspore.nn.Dropout(p=...)` or "
                 "`mindspore.mint.nn.Dropout(p)`): the first positional parameter of `mindspore.nn.Dropout` is "
                 "`keep_prob`.", cites="keep_prob is the RETAIN probability, opposite of torch p"),
    # P03 BatchNorm momentum: MindSpore's is 1 - PyTorch's.
    Trap("P03", "MS203", "mindspore", BN, "below", param="momentum", position=2, value=0.5,
         message="MindSpore's BatchNorm `momentum` is 1 - PyTorch's (default 0.9 = PyTorch's 0.1): a small value "
                 "copied from PyTorch makes the running statistics follow each batch.",
         cites="Copying momentum=0.1 verbatim inverts the running-stat update weight", fix="one-minus",
         applicability="unsafe", default=0.9),
    Trap("P03", "MS203", "torch", TORCH_BN, "keyword", param="momentum",
         message="In MindSpore write `momentum=1 - m`: its BatchNorm momentum weighs the running statistic, "
                 "PyTorch's weighs the new batch.", cites="momentum_pytorch = 1 - momentum_mindspore"),
    # P04 track_running_stats → use_batch_statistics.
    Trap("P04", "MS204", "torch", TORCH_BN, "keyword", param="track_running_stats",
         message="MindSpore has no `track_running_stats`: use `use_batch_statistics` (None: batch statistics in "
                 "training, moving ones in inference; True/False force one).",
         cites="track_running_stats maps to use_batch_statistics"),
    # P06 LayerNorm epsilon.
    Trap("P06", "MS206", "mindspore", ["mindspore.nn.LayerNorm"], "keyword", param="eps",
         message="`mindspore.nn.LayerNorm` has no `eps`: the parameter is `epsilon`.", cites="eps renamed epsilon",
         fix="rename-keyword", fix_to="epsilon", applicability="safe", severity="error"),
    Trap("P06", "MS206", "mindspore", ["mindspore.nn.LayerNorm"], "missing", param="epsilon",
         message="`mindspore.nn.LayerNorm` defaults to `epsilon=1e-7`, PyTorch's LayerNorm to `eps=1e-5`.",
         cites="different default (1e-7 vs 1e-5)", fix="add-keyword", fix_value="1e-5", applicability="unsafe",
         default=1e-7),
    # P07 / P08 convolutions: pad_mode, has_bias, group.
    Trap("P07", "MS207", "mindspore", CONV + CONV_T, "missing-with", param="pad_mode", with_param="padding",
         message="`padding` only takes effect with `pad_mode='pad'`; the default `pad_mode='same'` pads on its own.",
         cites="padding is only used with pad_mode='pad'", fix="add-keyword", fix_value="'pad'",
         applicability="safe", default="same"),
    Trap("P07", "MS207", "mindspore", CONV + CONV_T, "missing", param="pad_mode",
         message="MindSpore convolutions default to `pad_mode='same'` (pads the input); PyTorch's default "
                 "`padding=0` does not pad. Say which you mean.",
         cites="MindSpore fills the input by default (pad_mode='same'), PyTorch does not pad (padding=0)",
         fix="add-keyword", fix_value="'valid'", applicability="unsafe", default="same",
         unless_param="kernel_size", unless_value=1),  # a 1x1 kernel gives the same output either way
    Trap("P08", "MS208", "mindspore", CONV + CONV_T, "keyword", param="bias",
         message="MindSpore convolutions take `has_bias`, not `bias`.", cites="Bias parameter is named has_bias",
         fix="rename-keyword", fix_to="has_bias", applicability="safe", severity="error"),
    Trap("P08", "MS208", "mindspore", CONV + CONV_T, "keyword", param="groups",
         message="MindSpore convolutions take `group`, not `groups`.", cites="groups is named group",
         fix="rename-keyword", fix_to="group", applicability="safe", severity="error"),
    Trap("P08", "MS208", "mindspore", CONV + CONV_T, "missing", param="has_bias",
         message="MindSpore convolutions default to `has_bias=False`; PyTorch's default to a bias.",
         cites="defaults to False in MindSpore (True in PyTorch)", fix="add-keyword", fix_value="True",
         applicability="unsafe", default=False),
    # P11 Dense vs Linear keywords.
    Trap("P11", "MS211", "mindspore", ["mindspore.nn.Dense"], "keyword", param="in_features",
         message="`mindspore.nn.Dense` takes `in_channels`.", cites="in_features/out_features/bias renamed",
         fix="rename-keyword", fix_to="in_channels", applicability="safe", severity="error"),
    Trap("P11", "MS211", "mindspore", ["mindspore.nn.Dense"], "keyword", param="out_features",
         message="`mindspore.nn.Dense` takes `out_channels`.", cites="in_features/out_features/bias renamed",
         fix="rename-keyword", fix_to="out_channels", applicability="safe", severity="error"),
    Trap("P11", "MS211", "mindspore", ["mindspore.nn.Dense"], "keyword", param="bias",
         message="`mindspore.nn.Dense` takes `has_bias`.", cites="in_features/out_features/bias renamed",
         fix="rename-keyword", fix_to="has_bias", applicability="safe", severity="error"),
    # P12 GELU approximate.
    Trap("P12", "MS212", "mindspore", ["mindspore.nn.GELU"], "missing", param="approximate", position=0,
         message="`mindspore.nn.GELU` defaults to the tanh approximation; PyTorch's GELU is exact.",
         cites="nn.GELU defaults to approximate=True", fix="add-keyword", fix_value="False",
         applicability="unsafe", default=True),
    # P13 LeakyReLU alpha.
    Trap("P13", "MS213", "mindspore", ["mindspore.nn.LeakyReLU"], "missing", param="alpha", position=0,
         message="MindSpore's LeakyReLU slope `alpha` defaults to 0.2; PyTorch's `negative_slope` to 0.01.",
         cites="defaults to 0.2 in MindSpore (0.01 in PyTorch)", fix="add-keyword", fix_value="0.01",
         applicability="unsafe", default=0.2),
    Trap("P13", "MS213", "mindspore", ["mindspore.nn.LeakyReLU"], "keyword", param="negative_slope",
         message="MindSpore's LeakyReLU takes `alpha`, not `negative_slope`.", cites="negative_slope is named alpha",
         fix="rename-keyword", fix_to="alpha", applicability="safe", severity="error"),
    Trap("P13", "MS213", "mindspore", ["mindspore.ops.leaky_relu"], "missing", param="alpha", position=1,
         message="`mindspore.ops.leaky_relu` defaults to `alpha=0.2`; PyTorch's to `negative_slope=0.01`.",
         cites="ops.leaky_relu(input, alpha=0.2) likewise", fix="add-keyword", fix_value="0.01",
         applicability="unsafe", default=0.2),
    # P14 softmax axis.
    *(Trap("P14", "MS214", "torch", apis, "missing", param="dim", position=position,
           message="Pass `dim` explicitly before porting: MindSpore's `axis` defaults to -1, PyTorch's implicit "
                   "`dim` is chosen from the input's rank.",
           cites="dim is named axis and defaults to -1 in MindSpore (PyTorch dim=None)")
      for apis, position in ((["torch.nn.Softmax", "torch.nn.LogSoftmax"], 0),
                             (["torch.nn.functional.softmax", "torch.nn.functional.log_softmax"], 1))),
    # P15 InstanceNorm affine.
    Trap("P15", "MS215", "mindspore", ["mindspore.nn.InstanceNorm1d", "mindspore.nn.InstanceNorm2d",
                                       "mindspore.nn.InstanceNorm3d"], "missing", param="affine",
         message="MindSpore's InstanceNorm defaults to `affine=True` (learns gamma and beta); PyTorch's to False.",
         cites="affine defaults to True in MindSpore", fix="add-keyword", fix_value="False",
         applicability="unsafe", default=True),
    # P16 pooling stride.
    Trap("P16", "MS216", "mindspore", POOL, "missing-with", param="stride", position=1, with_param="kernel_size",
         with_position=0,
         unless_param="pad_mode",  # a pad_mode is MindSpore's own idiom (`pad_mode="same"` keeps the size)
         message="MindSpore pooling defaults to `stride=1`; PyTorch's defaults to the kernel size.",
         cites="MindSpore gives kernel_size default 1 and stride default 1", fix="copy-keyword",
         applicability="unsafe", default=1),
    # P17 max/min return order.
    Trap("P17", "MS217", "mindspore", ["mindspore.ops.ArgMaxWithValue", "mindspore.ops.ArgMinWithValue"], "call",
         message="`ArgMaxWithValue`/`ArgMinWithValue` return `(index, value)`; `torch.max(x, dim)` returns "
                 "`(values, indices)`.", cites="outputs tuple(index, max) vs PyTorch tuple(max, index)"),
    # P18 median.
    Trap("P18", "MS218", "mindspore", ["mindspore.ops.median"], "call",
         message="`mindspore.ops.median` always returns `(median, index)` along `axis` (default -1), unlike "
                 "`torch.median(x)`, which returns the median of all elements.",
         cites="always returns (median, index) along axis", default=-1, param="axis"),
    # P19 gather.
    Trap("P19", "MS219", "mindspore", ["mindspore.ops.gather"], "call",
         message="`mindspore.ops.gather` is an index-select (like `torch.index_select`); the counterpart of "
                 "`torch.gather` is `mindspore.ops.gather_elements` or `mindspore.mint.gather`.",
         cites="mindspore.ops.gather(input_params, input_indices, axis) is an index-select", severity="info"),
    Trap("P19", "MS219", "torch", ["torch.gather"], "call",
         message="Port to `mindspore.ops.gather_elements` or `mindspore.mint.gather`, not `mindspore.ops.gather` "
                 "(an index-select).", cites="The mapping tables map torch.gather to ops.gather_elements"),
    # P20 split.
    Trap("P20", "MS220", "mindspore", ["mindspore.ops.Split"], "call",
         message="`mindspore.ops.Split(axis, output_num)` splits into `output_num` equal parts; "
                 "`torch.split(x, n)` splits into parts of size n.",
         cites="an int means NUMBER of chunks, not chunk size as in torch.split"),
    # P21 std/var ddof.
    Trap("P21", "MS221", "mindspore", ["mindspore.ops.std", "mindspore.ops.var"], "missing", param="ddof",
         position=2, message="`mindspore.ops.std`/`var` default to `ddof=0` (biased, divide by N); PyTorch's "
                             "default is unbiased (N - 1).",
         cites="default ddof=0 (biased, divisor N) vs torch unbiased=True", fix="add-keyword", fix_value="1",
         applicability="unsafe", default=0),
    # P22 flatten start_dim.
    Trap("P22", "MS222", "mindspore", ["mindspore.ops.flatten"], "missing", param="start_dim",
         message="`mindspore.ops.flatten` keeps dimension 0 by default (`start_dim=1`); `torch.flatten` "
                 "flattens everything (`start_dim=0`).", cites="defaults start_dim=1 vs torch.flatten start_dim=0",
         fix="add-keyword", fix_value="0", applicability="unsafe", default=1),
    # P23 interpolate.
    Trap("P23", "MS223", "mindspore", ["mindspore.ops.interpolate"], "equals", param="mode", value="bicubic",
         message="`mode='bicubic'` with `align_corners=False` follows TensorFlow in MindSpore: results differ "
                 "from PyTorch.", cites="in 'bicubic' mode with align_corners=False the computation follows TensorFlow"),
    Trap("P23", "MS223", "mindspore", ["mindspore.ops.interpolate"], "missing-with", param="recompute_scale_factor",
         with_param="scale_factor",
         message="`scale_factor` is accepted directly only in 'area' mode; other modes need "
                 "`recompute_scale_factor=True`.",
         cites="other modes need recompute_scale_factor=True"),
    # P24 SoftmaxCrossEntropyWithLogits (the 1.x mapping of CrossEntropyLoss).
    Trap("P24", "MS224", "mindspore", ["mindspore.nn.SoftmaxCrossEntropyWithLogits"], "missing", param="sparse",
         position=0, message="Without `sparse=True` the labels must be one-hot, and the default `reduction` is "
                             "'none'; `mindspore.nn.CrossEntropyLoss` matches PyTorch's CrossEntropyLoss.",
         cites="labels must be one-hot unless sparse=True", default=False),
    # P25 SmoothL1Loss reduction.
    Trap("P25", "MS225", "mindspore", ["mindspore.nn.SmoothL1Loss"], "missing", param="reduction",
         message="`mindspore.nn.SmoothL1Loss` defaults to `reduction='none'`; PyTorch's to 'mean'.",
         cites="SmoothL1Loss(beta=1.0, reduction='none')", fix="add-keyword", fix_value="'mean'",
         applicability="unsafe", default="none"),
    # P26 AdamW vs AdamWeightDecay.
    Trap("P26", "MS226", "mindspore", ["mindspore.nn.AdamWeightDecay"], "call",
         message="`AdamWeightDecay` is not PyTorch's AdamW: no bias correction, `eps=1e-6`, `weight_decay=0.0` "
                 "by default. For the same algorithm use `mindspore.mint.optim.AdamW`.",
         cites="with no bias-correction term", default=1e-06, param="eps"),
    Trap("P26", "MS226", "torch", ["torch.optim.AdamW"], "call",
         message="Port to `mindspore.mint.optim.AdamW` (or `mindspore.experimental.optim.AdamW`): "
                 "`mindspore.nn.AdamWeightDecay` implements a different update.",
         cites="mindspore.experimental.optim.AdamW and mint.optim.AdamW are listed consistent"),
    # P27 weight decay skips beta/gamma.
    Trap("P27", "MS227", "mindspore", OPTIMIZERS, "keyword", param="weight_decay",
         message="Unless the parameters are grouped, a `mindspore.nn` optimizer applies `weight_decay` only to "
                 "parameters without 'beta' or 'gamma' in their names (PyTorch decays all of them, BatchNorm and "
                 "LayerNorm affine included).", cites="applied only to parameters WITHOUT 'beta' or 'gamma'"),
    # P28 Adam keywords.
    Trap("P28", "MS228", "mindspore", ["mindspore.nn.Adam"], "keyword", param="lr",
         message="`mindspore.nn.Adam` takes `learning_rate`.", cites="lr->learning_rate", fix="rename-keyword",
         fix_to="learning_rate", applicability="safe", severity="error"),
    Trap("P28", "MS228", "mindspore", ["mindspore.nn.Adam"], "keyword", param="amsgrad",
         message="`mindspore.nn.Adam` takes `use_amsgrad`.", cites="amsgrad->use_amsgrad", fix="rename-keyword",
         fix_to="use_amsgrad", applicability="safe", severity="error"),
    Trap("P28", "MS228", "mindspore", ["mindspore.nn.Adam"], "keyword", param="betas",
         message="`mindspore.nn.Adam` takes `beta1` and `beta2`, not `betas`.", cites="betas->beta1,beta2",
         severity="error"),
    # P29 RMSProp/Adagrad/Rprop defaults.
    Trap("P29", "MS229", "mindspore", ["mindspore.nn.RMSProp", "mindspore.nn.Adagrad", "mindspore.nn.Rprop"],
         "missing", param="learning_rate", position=1,
         message="MindSpore's RMSProp/Rprop default to `learning_rate=0.1` and Adagrad to 0.001 (PyTorch: 0.01); "
                 "other defaults differ too (RMSProp decay 0.9 vs alpha 0.99, epsilon 1e-10 vs 1e-8). Set every "
                 "hyper-parameter explicitly.", cites="RMSProp: learning_rate=0.1 (torch lr=0.01)"),
    # P30 initializers.
    Trap("P30", "MS230", "mindspore", ["mindspore.common.initializer.Normal"], "missing", param="sigma",
         position=0, message="`Normal()` defaults to `sigma=0.01`; `torch.nn.init.normal_` to `std=1`.",
         cites="Normal(sigma=0.01, mean=0.0)", default=0.01),
    Trap("P30", "MS230", "mindspore", ["mindspore.common.initializer.Uniform"], "call",
         message="`Uniform(scale)` samples U(-scale, scale) (default scale 0.07); `torch.nn.init.uniform_(a, b)` "
                 "samples U(a, b). For [a, b] with a != -b use `mindspore.ops.uniform`.",
         cites="Uniform(scale=0.07) samples U(-scale, scale)"),
    # P31 Embedding padding_idx.
    Trap("P31", "MS231", "mindspore", ["mindspore.nn.Embedding"], "positional", param="use_one_hot", position=2,
         message="The third positional parameter of `mindspore.nn.Embedding` is `use_one_hot`, not `padding_idx`.",
         cites="Third positional parameter is use_one_hot", fix="to-keyword", fix_to="padding_idx",
         applicability="safe", severity="error", default=False),
    # P33 TopK sorted.
    Trap("P33", "MS233", "mindspore", ["mindspore.ops.TopK"], "missing", param="sorted", position=0,
         message="`mindspore.ops.TopK`'s `sorted` default is documented both ways (False on the difference page, "
                 "True in the API reference): state it.", cites="Its sorted default is documented inconsistently",
         fix="add-keyword", fix_value="True", applicability="safe", default=True),
    Trap("P33", "MS233", "torch", ["torch.topk"], "missing", param="sorted", position=4,
         message="When porting, pass `sorted=True` explicitly: MindSpore's TopK default is documented "
                 "inconsistently.", cites="recommend explicit sorted=True", severity="hint"),
    # P34 multinomial replacement.
    Trap("P34", "MS234", "mindspore", ["mindspore.ops.multinomial"], "missing", param="replacement", position=2,
         message="`mindspore.ops.multinomial` samples with replacement by default; PyTorch without.",
         cites="replacement defaults to True in MindSpore", fix="add-keyword", fix_value="False",
         applicability="unsafe", default=True),
    # P35 bernoulli.
    Trap("P35", "MS235", "mindspore", ["mindspore.ops.bernoulli"], "missing", param="p", position=1,
         message="`mindspore.ops.bernoulli(input)` draws with probability `p=0.5`; `torch.bernoulli(input)` uses "
                 "`input` as the probabilities. Pass `p=` explicitly.", cites="MindSpore stores the probability in "
                                                                         "parameter p (default 0.5)", default=0.5),
    # P36 svd order.
    Trap("P36", "MS236", "mindspore", ["mindspore.ops.svd"], "call",
         message="`mindspore.ops.svd` returns `(s, u, v)`; `torch.svd` returns `(u, s, v)`.",
         cites="MindSpore returns (s, u, v), PyTorch (u, s, v)"),
    # P37 nn.Pad order.
    Trap("P37", "MS237", "mindspore", ["mindspore.nn.Pad"], "call",
         message="`mindspore.nn.Pad(paddings)` lists (before, after) pairs from the FIRST dimension; a "
                 "`torch.nn.functional.pad` tuple starts from the LAST. `mindspore.ops.pad` matches PyTorch.",
         cites="torch pad tuple starts from the LAST dimension"),
    # P38 LRN.
    Trap("P38", "MS238", "mindspore", ["mindspore.nn.LRN"], "call",
         message="`mindspore.nn.LRN` takes `depth_radius = size // 2` and defaults alpha=1.0, beta=0.5 "
                 "(PyTorch's LocalResponseNorm: alpha=1e-4, beta=0.75): copy them explicitly.",
         cites="size = 2 * depth_radius", default=5, param="depth_radius"),
    # P39 TripletMarginLoss.
    Trap("P39", "MS239", "mindspore", ["mindspore.nn.TripletMarginLoss"], "positional", param="p", position=0,
         message="`mindspore.nn.TripletMarginLoss` takes `margin` in the call, not the constructor, and its "
                 "constructor order is (p, swap, eps, reduction): pass keywords.",
         cites="margin moves from constructor to a forward input"),
    # P42 RNN bias.
    Trap("P42", "MS242", "mindspore", ["mindspore.nn.LSTM", "mindspore.nn.GRU", "mindspore.nn.RNN"], "keyword",
         param="bias", message="MindSpore's recurrent layers take `has_bias`.", cites="bias -> has_bias",
         fix="rename-keyword", fix_to="has_bias", applicability="safe", severity="error"),
    Trap("P42", "MS242", "mindspore", ["mindspore.nn.LSTM"], "keyword", param="proj_size",
         message="MindSpore's LSTM has no `proj_size`.", cites="no proj_size", severity="error"),
    # P43 cdist on Ascend.
    Trap("P43", "MS243", "torch", ["torch.cdist"], "call",
         message="MindSpore's `cdist` has no `compute_mode`: on Ascend it computes the Euclidean distance by matrix "
                 "multiplication (on GPU and CPU it does not), so expect small differences from PyTorch there.",
         cites="on Ascend the Euclidean distance is computed with matrix multiplication"),
    # P44 GaussianNLLLoss var.
    Trap("P44", "MS244", "torch", ["torch.nn.GaussianNLLLoss"], "call",
         message="PyTorch raises on a negative `var`; MindSpore's `GaussianNLLLoss` uses `max(var, eps)` instead, "
                 "so the error PyTorch reports passes silently.", cites="MindSpore computes max(var, eps) before log"),
    # P45 elu alpha.
    Trap("P45", "MS245", "mindspore", ["mindspore.ops.elu"], "not-equals", param="alpha", position=1, value=1.0,
         message="`mindspore.ops.elu` supports only `alpha=1.0`.", cites="only supports alpha == 1.0",
         severity="error", default=1.0),
    # P46 argmin dtype.
    Trap("P46", "MS246", "mindspore", ["mindspore.ops.argmin"], "call",
         message="`mindspore.ops.argmin` returns int32 indices (PyTorch int64).", cites="Return value type is int32"),
    # P47 clip_grad_norm_.
    Trap("P47", "MS247", "torch", ["torch.nn.utils.clip_grad_norm_"], "call",
         message="MindSpore does not clip gradients in place on the parameters: clip the gradients that "
                 "`mindspore.value_and_grad` returns (`grads = mindspore.ops.clip_by_norm(grads, max_norm)`) before "
                 "the optimizer step.", cites="not parameters in place"),
    # P48 unique.
    Trap("P48", "MS248", "mindspore", ["mindspore.ops.unique"], "call",
         message="`mindspore.ops.unique(x)` returns a tuple `(unique elements, inverse indices)`, not the unique "
                 "elements alone, and MindSpore 2.10 does not sort them; `mindspore.mint.unique` takes "
                 "`torch.unique`'s parameters.", cites="2.x ops.unique(input) returns unique elements and their position index"),
    # P50 randint low.
    Trap("P50", "MS250", "mindspore", ["mindspore.ops.randint"], "positional-count", value=2,
         message="`mindspore.ops.randint(low, high, size)` has no default `low`: `randint(high, size)` shifts the "
                 "arguments.", cites="low has no default value in MindSpore", fix="insert-positional",
         fix_value="0", applicability="safe", severity="error"),
    # P51 Unfold.
    Trap("P51", "MS251", "mindspore", ["mindspore.nn.Unfold"], "call",
         message="`mindspore.nn.Unfold` takes `ksizes`/`strides`/`rates` as `(1, row, col, 1)` and returns "
                 "`(out_batch, out_depth, out_row, out_col)`, not PyTorch's `(N, C*prod(k), L)`; "
                 "`mindspore.mint.nn.Unfold` and `mindspore.ops.unfold` take PyTorch's arguments.",
         cites="ksizes/strides/rates must be (1, row, col, 1)"),
]

BUILDER_ONLY = ("cites", "origin", "fact", "source")  # fact and source are filled in from pitfalls.tsv
KEY_ORDER = ["pitfall", "rule", "side", "apis", "when", "param", "position", "value", "with-param", "with-position",
             "unless-param", "unless-value", "unless-position", "fix",
             "fix-value", "fix-to", "applicability", "severity", "message", "default", "default-installed",
             "fact", "source"]


def _signature(api: str) -> inspect.Signature | None:
    """The installed signature of `api` (of its __init__ for a class, without `self`)."""
    obj = resolve(api)
    if obj is MISSING:
        return None
    try:
        signature = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    except (TypeError, ValueError):
        return None
    params = [p for p in signature.parameters.values() if p.name != "self"]
    return signature.replace(parameters=params)


def _installed_default(api: str, param: str):
    """The installed default of `param` in `api`'s signature, if any."""
    signature = _signature(api)
    found = signature.parameters.get(param) if signature else None
    return found.default if found is not None else inspect.Parameter.empty


def _position(api: str, param: str | None, written: int | None) -> int | None:
    """Where `param` may be passed positionally to the installed `api` (None: keyword only).
    A position written in TRAPS must agree; where the installed signature does not show
    the parameter (a `*args, **kwargs` wrapper), the written one stands."""
    signature = _signature(api) if param else None
    if signature is None or param not in signature.parameters:
        return written
    positional = [p.name for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    read = positional.index(param) if param in positional else None
    if written is not None and written != read:
        raise ValueError(f"{api} takes {param} at position {read}, TRAPS says {written}")
    return read


def _by_position(trap: Trap) -> list[Trap]:
    """`trap` split by where the installed APIs take its parameters positionally, so that
    `Conv2d(3, 8, 3, 1, 'pad')` counts as passing pad_mode."""
    if trap.side != "mindspore" or trap.when in ("call", "keyword", "positional", "positional-count"):
        return [trap]
    groups: dict[tuple, list[str]] = {}
    for api in trap.apis:
        found = (_position(api, trap.param, trap.position), _position(api, trap.with_param, trap.with_position),
                 _position(api, trap.unless_param, trap.unless_position))
        groups.setdefault(found, []).append(api)
    return [dataclasses.replace(trap, apis=apis, position=p, with_position=w, unless_position=u)
            for (p, w, u), apis in groups.items()]


def build_traps(data_dir: Path, out_dir: Path) -> list[Path]:
    with (data_dir / "mindspore" / "pitfalls.tsv").open(encoding="utf-8", newline="") as f:
        pitfalls = {row["id"]: row for row in csv.DictReader(f, delimiter="\t")}
    installed = installed_mindspore()
    if installed is None:
        raise RuntimeError("mindspore is not installed: the traps record its signatures (pip install -e '.[mindspore]')")
    lines = [
        "# Generated by `python mappings/build mindspore` from mappings/upstream/mindspore/pitfalls.tsv.",
        "# Do not edit by hand.",
        "",
        "[meta]",
        f"title = {_value('PyTorch → MindSpore semantic pitfalls, as call shapes')}",
        f"sources = {_value(sorted({_source(pitfalls[t.pitfall]) for t in TRAPS}))}",
    ]
    lines.append(f"checked-against = {_value('mindspore ' + installed[1])}")
    for trap in (split for written in TRAPS for split in _by_position(written)):
        row = pitfalls[trap.pitfall]
        if trap.cites not in row["documented_fact"] + " " + row["lsp_hint"]:
            raise ValueError(f"{trap.pitfall} no longer says {trap.cites!r}: re-check the {trap.rule} trap")
        entry = {key.replace("_", "-"): list(value) if key == "apis" else value for key, value in vars(trap).items()
                 if value is not None and key not in BUILDER_ONLY}
        entry["fact"] = row["documented_fact"]
        entry["source"] = f"{_source(row)} (via pitfalls.tsv {trap.pitfall})"
        if trap.side == "mindspore":
            missing = [api for api in trap.apis if not exists(api)]
            if missing:
                raise ValueError(f"{trap.rule}: {missing} not in mindspore {installed[1]}")
            if trap.default is not None and trap.param:
                actual = _installed_default(trap.apis[0], trap.param)
                if actual is not inspect.Parameter.empty and actual != trap.default:
                    entry["default-installed"] = {"version": installed[1], "value": actual}
        lines += ["", "[[trap]]"] + [f"{key} = {_value(entry[key])}" for key in KEY_ORDER if key in entry]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "traps.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [path]
