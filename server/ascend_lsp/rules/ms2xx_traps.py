"""MS2xx: PyTorch → MindSpore semantic traps, both ways — MindSpore code that copies a
PyTorch habit (`nn.BatchNorm2d(momentum=0.1)`), and PyTorch code whose port needs care.

MS2NN is pitfall PNN of the documented list. Most traps are rows of
mappings/mindspore/traps.toml (a call shape and, where the rewrite is certain, a fix),
served by `check_traps`; MS202 and MS232 need the whole file or the assignment; MS260–MS262
are Tensor methods whose MindSpore meaning differs from PyTorch's.
"""

from __future__ import annotations

import ast
import functools
import re
import weakref
from typing import cast

from ..engine.checker import Checker
from ..engine.model import Applicability, Edit, Fix, Range, Severity
from ..knowledge.api_tables import trap_rows
from ..knowledge.traps import Trap, describe_fix
from ..engine.walk import Scope
from ..engine.registry import Doc, TableRef, handles, rule
from .advice_matching import literal

TRAPS = TableRef("mappings/mindspore/traps.toml", ("trap",))
S = Severity
# code: (name, severity, fix availability, example)
TRAP_RULES = {
    "MS201": ("dropout-keep-prob", S.WARNING, "sometimes",
              "mindspore.nn.Dropout(0.1)  # drops 90%\n\n# becomes\n\nmindspore.nn.Dropout(p=0.1)"),
    "MS203": ("batchnorm-momentum", S.WARNING, "sometimes",
              "mindspore.nn.BatchNorm2d(64, momentum=0.1)\n\n# becomes\n\nmindspore.nn.BatchNorm2d(64, momentum=0.9)"),
    "MS204": ("batchnorm-track-running-stats", S.INFO, "never",
              "torch.nn.BatchNorm2d(64, track_running_stats=False)  # MS204: use_batch_statistics in MindSpore"),
    "MS206": ("layernorm-epsilon", S.WARNING, "sometimes",
              "mindspore.nn.LayerNorm((512,), eps=1e-5)\n\n# becomes\n\nmindspore.nn.LayerNorm((512,), epsilon=1e-5)"),
    "MS207": ("conv-pad-mode", S.WARNING, "sometimes",
              "mindspore.nn.Conv2d(3, 64, 3, padding=1)\n\n# becomes\n\n"
              "mindspore.nn.Conv2d(3, 64, 3, padding=1, pad_mode='pad')"),
    "MS208": ("conv-has-bias", S.WARNING, "sometimes",
              "mindspore.nn.Conv2d(3, 64, 3, groups=1)\n\n# becomes\n\nmindspore.nn.Conv2d(3, 64, 3, group=1, "
              "has_bias=True)"),
    "MS211": ("dense-keywords", S.ERROR, "always",
              "mindspore.nn.Dense(in_features=512, out_features=10)\n\n# becomes\n\n"
              "mindspore.nn.Dense(in_channels=512, out_channels=10)"),
    "MS212": ("gelu-approximate", S.WARNING, "sometimes",
              "mindspore.nn.GELU()\n\n# becomes\n\nmindspore.nn.GELU(approximate=False)"),
    "MS213": ("leakyrelu-alpha", S.WARNING, "sometimes",
              "mindspore.nn.LeakyReLU()\n\n# becomes\n\nmindspore.nn.LeakyReLU(alpha=0.01)"),
    "MS214": ("softmax-implicit-dim", S.INFO, "never", "torch.nn.functional.softmax(x)  # MS214: pass dim="),
    "MS215": ("instancenorm-affine", S.WARNING, "sometimes",
              "mindspore.nn.InstanceNorm2d(64)\n\n# becomes\n\nmindspore.nn.InstanceNorm2d(64, affine=False)"),
    "MS216": ("pool-stride", S.WARNING, "sometimes",
              "mindspore.nn.MaxPool2d(kernel_size=2)\n\n# becomes\n\nmindspore.nn.MaxPool2d(kernel_size=2, stride=2)"),
    "MS217": ("max-min-return-order", S.WARNING, "never",
              "index, value = mindspore.ops.ArgMaxWithValue(axis=1)(x)  # (index, value), not (value, index)"),
    "MS218": ("median-returns-tuple", S.WARNING, "never",
              "m = mindspore.ops.median(x)  # a (median, index) tuple along axis -1"),
    "MS219": ("gather-is-index-select", S.INFO, "never",
              "y = mindspore.ops.gather(x, idx, 1)  # index-select; torch.gather is ops.gather_elements"),
    "MS220": ("split-number-of-chunks", S.WARNING, "never",
              "parts = mindspore.ops.Split(0, 4)(x)  # 4 chunks, not chunks of 4"),
    "MS221": ("std-var-ddof", S.WARNING, "sometimes",
              "s = mindspore.ops.std(x)\n\n# becomes\n\ns = mindspore.ops.std(x, ddof=1)"),
    "MS222": ("flatten-start-dim", S.WARNING, "sometimes",
              "y = mindspore.ops.flatten(x)\n\n# becomes\n\ny = mindspore.ops.flatten(x, start_dim=0)"),
    "MS223": ("interpolate-differs", S.WARNING, "never",
              "mindspore.ops.interpolate(x, scale_factor=2.0, mode='bicubic')  # MS223 twice"),
    "MS224": ("softmax-cross-entropy-one-hot", S.WARNING, "never",
              "loss_fn = mindspore.nn.SoftmaxCrossEntropyWithLogits()  # one-hot labels, no reduction"),
    "MS225": ("smoothl1-reduction", S.WARNING, "sometimes",
              "mindspore.nn.SmoothL1Loss()\n\n# becomes\n\nmindspore.nn.SmoothL1Loss(reduction='mean')"),
    "MS226": ("adamw-vs-adamweightdecay", S.WARNING, "never",
              "opt = mindspore.nn.AdamWeightDecay(params)  # not AdamW\n\nopt = mindspore.mint.optim.AdamW(params)"),
    "MS227": ("weight-decay-skips-beta-gamma", S.INFO, "never",
              "opt = mindspore.nn.Momentum(params, 0.1, 0.9, weight_decay=1e-4)  # BN/LN affine not decayed"),
    "MS228": ("adam-keywords", S.ERROR, "sometimes",
              "mindspore.nn.Adam(params, lr=1e-3)\n\n# becomes\n\nmindspore.nn.Adam(params, learning_rate=1e-3)"),
    "MS229": ("optimizer-defaults", S.WARNING, "never",
              "opt = mindspore.nn.RMSProp(params)  # learning_rate 0.1, decay 0.9, epsilon 1e-10"),
    "MS230": ("initializer-scale", S.INFO, "never",
              "w = initializer(Normal(), shape)  # sigma 0.01, not torch.nn.init.normal_'s std 1"),
    "MS231": ("embedding-padding-idx", S.ERROR, "always",
              "mindspore.nn.Embedding(1000, 64, 0)\n\n# becomes\n\nmindspore.nn.Embedding(1000, 64, padding_idx=0)"),
    "MS233": ("topk-sorted", S.INFO, "sometimes",
              "mindspore.ops.TopK()(x, 5)\n\n# becomes\n\nmindspore.ops.TopK(sorted=True)(x, 5)"),
    "MS234": ("multinomial-replacement", S.WARNING, "sometimes",
              "mindspore.ops.multinomial(p, 4)\n\n# becomes\n\nmindspore.ops.multinomial(p, 4, replacement=False)"),
    "MS235": ("bernoulli-probability", S.WARNING, "never",
              "mask = mindspore.ops.bernoulli(probs)  # p=0.5, probs ignored; pass p=probs"),
    "MS236": ("svd-return-order", S.WARNING, "never", "s, u, v = mindspore.ops.svd(a)  # torch.svd: u, s, v"),
    "MS237": ("pad-order", S.WARNING, "never",
              "mindspore.nn.Pad(((0, 0), (0, 0), (1, 1), (2, 2)))  # == F.pad(x, (2, 2, 1, 1))"),
    "MS238": ("lrn-parameters", S.INFO, "never", "mindspore.nn.LRN()  # depth_radius=5, alpha=1.0, beta=0.5"),
    "MS239": ("triplet-margin-positional", S.WARNING, "never",
              "mindspore.nn.TripletMarginLoss(1.0)  # 1.0 is p, not margin"),
    "MS242": ("rnn-keywords", S.ERROR, "sometimes",
              "mindspore.nn.LSTM(10, 20, bias=True)\n\n# becomes\n\nmindspore.nn.LSTM(10, 20, has_bias=True)"),
    "MS243": ("cdist-ascend-matmul", S.INFO, "never",
              "d = torch.cdist(a, b)  # on Ascend, MindSpore computes it by matrix multiplication"),
    "MS244": ("gaussian-nll-negative-var", S.INFO, "never",
              "loss_fn = torch.nn.GaussianNLLLoss()  # MindSpore uses max(var, eps) where PyTorch raises"),
    "MS245": ("elu-alpha", S.ERROR, "never", "mindspore.ops.elu(x, alpha=0.5)  # only alpha=1.0"),
    "MS246": ("argmin-int32", S.INFO, "never", "idx = mindspore.ops.argmin(x)  # int32"),
    "MS247": ("clip-grad-norm-in-place", S.INFO, "never",
              "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n\n# in MindSpore\n\n"
              "loss, grads = grad_fn(x, y)\ngrads = mindspore.ops.clip_by_norm(grads, 1.0)"),
    "MS248": ("unique-returns-tuple", S.WARNING, "never",
              "u, inverse = mindspore.ops.unique(x)  # a tuple, unsorted\n\n# with torch.unique's parameters\n\n"
              "u = mindspore.mint.unique(x, sorted=True)"),
    "MS250": ("randint-low", S.ERROR, "always",
              "mindspore.ops.randint(10, (2, 3))\n\n# becomes\n\nmindspore.ops.randint(0, 10, (2, 3))"),
    "MS251": ("unfold-layout", S.WARNING, "never",
              "patches = mindspore.nn.Unfold([1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1])(x)\n\n# like torch.nn.Unfold(3)"
              "\n\npatches = mindspore.mint.nn.Unfold(3)(x)"),
}
FIX_TEXT = {"always": "Fixes the call", "sometimes": "Where the rewrite is certain, fixes the call",
            "never": "None automatic: the message says what to check"}


def trap_doc(code: str) -> Doc:
    """A trap rule's page, from its rows of traps.toml: read when a page is first asked for,
    never at import (the rows' findings come from the tables the analysis loads)."""
    _name, _severity, fix, example = TRAP_RULES[code]
    mine = [r for r in trap_rows() if r["rule"] == code]
    if not mine:
        raise ValueError(f"{code} has no row in {TRAPS}")
    apis = sorted({api for r in mine for api in r["apis"]})
    facts = dict.fromkeys(f"{r['pitfall']}: {r['fact']}" for r in mine)
    sources = dict.fromkeys(r["source"] for r in mine)
    fixes = dict.fromkeys(f"{describe_fix(r['fix'], r.get('param'), r.get('fix-value'), r.get('fix-to'), r.get('with-param'))}"
                          f" ({r['applicability']})" for r in mine if r.get("fix"))
    exceptions = dict.fromkeys(
        f"Not reported when the call passes `{r['unless-param']}`" +
        (f" = `{r['unless-value']!r}`." if "unless-value" in r else ".") for r in mine if r.get("unless-param"))
    return Doc(
        what="Finds calls of " + ", ".join(f"`{a}`" for a in apis) + ": " +
             " ".join([*dict.fromkeys(r["message"] for r in mine), *exceptions]),
        why=" ".join(facts),
        example=example,
        fix=FIX_TEXT[fix] + (": " + "; ".join(fixes) + "." if fixes else "."),
        source="; ".join(sources),
    )


for _code, (_name, _severity, _fix, _example) in TRAP_RULES.items():
    rule(code=_code, name=_name, severity=_severity, fix=_fix, targets=("mindspore",), table=TRAPS,
         message="{name}", doc=functools.partial(trap_doc, _code))
TRAP_CODES = tuple(TRAP_RULES)

rule(
    code="MS202", name="set-train-missing", severity=Severity.WARNING, fix="never", targets=("mindspore",),
    message="This file trains a network with Dropout/BatchNorm but never calls `set_train()`: MindSpore cells "
            "start in inference mode, so Dropout does nothing and BatchNorm uses its moving statistics.",
    doc=dict(
        what="Finds a MindSpore training step (`mindspore.value_and_grad`, `mindspore.grad`, `GradOperation`, "
             "`TrainOneStepCell`) in a file that builds Dropout or BatchNorm cells and never calls `set_train()`.",
        why="PyTorch modules start in training mode; MindSpore cells start in inference mode. Without "
            "`net.set_train()` Dropout returns its input unchanged and BatchNorm normalises with moving "
            "statistics it never updates (`mindspore.train.Model.train` calls it for you).",
        example="grad_fn = mindspore.value_and_grad(forward, None, net.trainable_params())  # MS202\n\n"
                "net.set_train()\ngrad_fn = mindspore.value_and_grad(forward, None, net.trainable_params())",
        fix="None automatic: call `net.set_train()` before the loop (and `set_train(False)` to evaluate).",
        source="mindspore-ai/docs r2.4.10: migration_guide/model_development/model_and_cell.md (Training and "
               "Evaluation Mode Switching); pytorch_diff/Dropout.md, BatchNorm2d.md (via pitfalls.tsv P02).",
    ),
)

rule(
    code="MS232", name="buffer-as-parameter", severity=Severity.WARNING, fix="sometimes", targets=("mindspore",),
    message="{name}",
    doc=dict(
        what="Finds `mindspore.Parameter(...)` assigned to a buffer-like attribute (`running_mean`, `moving_var`, "
             "`*_buffer`, `num_batches_tracked`) without `requires_grad=False`, and, in PyTorch code being ported, "
             "`register_buffer` calls.",
        why="PyTorch buffers are state, not weights. A MindSpore `Parameter` is trainable unless "
            "`requires_grad=False`: the optimizer updates the running statistics. (`requires_grad=False` only hides "
            "a Parameter from `trainable_params()`; MindSpore 2.6 adds `Cell.register_buffer`.)",
        example="self.running_mean = Parameter(ops.zeros(c))\n\n# becomes\n\n"
                "self.running_mean = Parameter(ops.zeros(c), requires_grad=False)",
        fix="Unsafe: adds `requires_grad=False`.",
        source="mindspore-ai/docs r2.4.10: pytorch_diff/Parameter.md; r1.10: UnTrainableParams.md; "
               "migration_guide/model_development/model_and_cell.md (Parameters Management) (via pitfalls.tsv P32).",
    ),
)

GRAD_APIS = frozenset({"mindspore.value_and_grad", "mindspore.grad", "mindspore.ops.value_and_grad",
                       "mindspore.ops.grad", "mindspore.ops.GradOperation", "mindspore.nn.TrainOneStepCell"})
MODE_LAYERS = re.compile(r"^mindspore\.(mint\.)?nn\.(Dropout\w*|BatchNorm\dd|SyncBatchNorm)$")
PARAMETER = frozenset({"mindspore.Parameter", "mindspore.common.Parameter", "mindspore.common.parameter.Parameter"})
BUFFER_NAME = re.compile(r"(^|_)(running|moving)_|buffer|num_batches_tracked")


# --- the call shapes -------------------------------------------------------------------------
def _argument(call: ast.Call, name: str | None, position: int | None) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    if position is not None and position < len(call.args):
        arg = call.args[position]
        if not any(type(a) is ast.Starred for a in call.args[: position + 1]):
            return arg
    return None


def _unknowable(call: ast.Call) -> bool:
    """`f(*args)` or `f(**kw)`: which parameters are passed cannot be read off the call."""
    return any(kw.arg is None for kw in call.keywords) or any(type(a) is ast.Starred for a in call.args)


def _uniform(node: ast.expr | None):
    """The literal value of `node`, or of every item of a literal tuple/list (`(1, 1)` → 1)."""
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        values = {literal(e) for e in node.elts}
        return values.pop() if len(values) == 1 else None
    return literal(node)


def _excepted(trap: Trap, call: ast.Call) -> bool:
    """The call passes the parameter that makes the trap moot (`kernel_size=1`, a `pad_mode`)."""
    if trap.unless_param is None:
        return False
    argument = _argument(call, trap.unless_param, trap.unless_position)
    return argument is not None and (trap.unless_value is None or _uniform(argument) == trap.unless_value)


def matches(trap: Trap, call: ast.Call) -> bool:
    if _excepted(trap, call):
        return False
    when = trap.when
    if when == "call":
        return True
    if when == "keyword":
        return any(kw.arg == trap.param for kw in call.keywords)
    if when == "positional":
        return trap.position is not None and len(call.args) > trap.position and not _unknowable(call)
    if when == "positional-count":
        return len(call.args) == trap.value and not call.keywords and not _unknowable(call)
    argument = _argument(call, trap.param, trap.position)
    if when == "missing":
        return argument is None and not _unknowable(call)
    if when == "missing-with":  # a literal 0 (`padding=0`) changes nothing either way
        given = _argument(call, trap.with_param, trap.with_position)
        return argument is None and not _unknowable(call) and given is not None and _uniform(given) != 0
    value = literal(argument)
    if when == "below":
        # a `below` trap's value is the number the parameter must reach (traps.toml)
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value < cast(float, trap.value)
    if when == "equals":
        return value == trap.value
    if when == "not-equals":
        return argument is not None and value is not ... and value is not None and value != trap.value
    raise ValueError(f"unknown trap condition {when!r}")


# --- fixes -----------------------------------------------------------------------------------
def _insert_keyword(checker: Checker, call: ast.Call, text: str) -> Edit:
    """`text` (`name=value`) as the call's last argument."""
    arguments: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    last = max(arguments, key=lambda n: (n.end_lineno, n.end_col_offset), default=None)
    if last is None:
        end = checker.range(call)
        return Edit(Range(end.end_line, end.end_col - 1, end.end_line, end.end_col - 1), text)
    end = checker.range(last)
    return Edit(Range(end.end_line, end.end_col, end.end_line, end.end_col), f", {text}")


def _keyword_name(checker: Checker, kw: ast.keyword) -> Range:
    start = checker.range(kw)
    return Range(start.start_line, start.start_col, start.start_line, start.start_col + len(kw.arg))


def trap_fix(checker: Checker, trap: Trap, call: ast.Call) -> Fix | None:
    if trap.fix is None or trap.applicability is None:
        return None
    fix, param, applicability = trap.fix, trap.param, Applicability(trap.applicability)
    if fix == "add-keyword":
        return checker.fix(f"Add `{param}={trap.fix_value}`", applicability,
                           _insert_keyword(checker, call, f"{param}={trap.fix_value}"))
    if fix == "copy-keyword":
        source = _argument(call, trap.with_param, trap.with_position)
        text = checker.source.segment(checker.range(source))
        return checker.fix(f"Add `{param}={text}`", applicability, _insert_keyword(checker, call, f"{param}={text}"))
    if fix == "rename-keyword":
        kw = next(kw for kw in call.keywords if kw.arg == param)
        return checker.fix(f"Rename `{param}=` to `{trap.fix_to}=`", applicability,
                           Edit(_keyword_name(checker, kw), trap.fix_to))
    if fix == "one-minus":
        argument = _argument(call, param, trap.position)
        value = literal(argument)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        new = format(1 - value, ".10g")
        edits = [Edit(checker.range(argument), new)]
        name = param
        if trap.fix_to:
            kw = next(kw for kw in call.keywords if kw.arg == param)
            edits.append(Edit(_keyword_name(checker, kw), trap.fix_to))
            name = trap.fix_to
        return checker.fix(f"Use `{name}={new}`", applicability, *edits)
    if fix == "to-keyword":
        if len(call.args) != trap.position + 1:
            return None  # later positional arguments would follow a keyword
        start = checker.range(call.args[trap.position])
        return checker.fix(f"Pass it as `{trap.fix_to}=`", applicability,
                           Edit(Range(start.start_line, start.start_col, start.start_line, start.start_col),
                                f"{trap.fix_to}="))
    if fix == "insert-positional":
        start = checker.range(call.args[0])
        return checker.fix(f"Pass `{trap.fix_value}` as the first argument", applicability,
                           Edit(Range(start.start_line, start.start_col, start.start_line, start.start_col),
                                f"{trap.fix_value}, "))
    raise ValueError(f"unknown trap fix {fix!r}")


def trap_severity(trap: Trap) -> Severity:
    """The row's own severity, else advice (info) on PyTorch code, else the rule's."""
    if trap.severity:
        return Severity.parse(trap.severity)
    return Severity.INFO if trap.side == "torch" else TRAP_RULES[trap.rule][1]


@handles("call", *TRAP_CODES)
def check_traps(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    if qualname is None:
        return
    fired: set[str] = set()
    # Rows about what is passed go first, so that a row about a missing default can defer to them.
    for trap in sorted(checker.tables.traps.get(qualname, ()), key=lambda t: t.when.startswith("missing")):
        # A default that is not passed matters only when no other row of the rule spoke
        # for the call (`bias=False` renamed already sets has_bias).
        if trap.when.startswith("missing") and trap.rule in fired or not matches(trap, call):
            continue
        fired.add(trap.rule)
        fix = trap_fix(checker, trap, call)
        checker.report(trap.rule, call.func, trap.message, (fix,) if fix else (), origin=trap.origin,
                       severity=trap_severity(trap),
                       extra={"api": qualname, "pitfall": trap.pitfall, "fact": trap.fact, "source": trap.source})


# --- MS202: training without set_train() -----------------------------------------------------
@handles("call", "MS202")
def note_training(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    if qualname in GRAD_APIS:
        checker.note("ms-train", call.func)
    elif qualname and MODE_LAYERS.match(qualname):
        checker.note("ms-mode-layer", call.func)


@handles("attribute", "MS202", names=("set_train",))
def note_set_train(checker: Checker, node: ast.Attribute, attr: str, call) -> None:
    if attr == "set_train" and call is not None:
        checker.note("set-train", node)


@handles("module", "MS202")
def check_set_train(checker: Checker, facts: dict) -> None:
    if "ms-train" in facts and "ms-mode-layer" in facts and "set-train" not in facts:
        checker.report("MS202", facts["ms-train"])


# --- MS232: buffers --------------------------------------------------------------------------
@handles("assign", "MS232")
def check_buffer_parameter(checker: Checker, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
    value = node.value
    if type(value) is not ast.Call or checker.qualname(value.func, scope) not in PARAMETER:
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = [t.attr if isinstance(t, ast.Attribute) else t.id
             for t in targets if isinstance(t, (ast.Attribute, ast.Name))]
    name = next((n for n in names if BUFFER_NAME.search(n)), None)
    if name is None:
        return
    flag = _argument(value, "requires_grad", 2)
    if flag is not None and literal(flag) is not True:
        return
    fix = None if flag is not None else checker.fix("Add `requires_grad=False`", Applicability.UNSAFE,
                                                     _insert_keyword(checker, value, "requires_grad=False"))
    checker.report("MS232", value.func,
                   f"`{name}` looks like a buffer but is a trainable Parameter: the optimizer will update it. "
                   "Pass `requires_grad=False`.", (fix,) if fix else ())


@handles("attribute", "MS232", names=("register_buffer",))
def check_register_buffer(checker: Checker, node: ast.Attribute, attr: str, call) -> None:
    if attr != "register_buffer" or call is None or checker.module.imports_module("mindspore"):
        return
    if not checker.module.imports_module("torch"):
        return  # advice for PyTorch code; another framework's register_buffer is not ours to judge
    major, minor = (int(p) for p in (checker.settings.mindspore_version.split(".") + ["0"])[:2])
    target = ("`Cell.register_buffer` (MindSpore 2.6 and later)" if (major, minor) >= (2, 6)
              else "`Parameter(..., requires_grad=False)` (MindSpore before 2.6 has no buffers)")
    checker.report("MS232", node, f"When porting, a PyTorch buffer becomes {target}, not a trainable Parameter.",
                   severity=Severity.INFO)


# --- MS260–MS262: Tensor methods -------------------------------------------------------------
# MindSpore Tensor methods that share a name with PyTorch's but not its meaning, on values
# the file shows are MindSpore tensors: a name assigned from `mindspore.Tensor(...)`,
# `Parameter(...)` or a `mindspore.ops` / `mint` / `numpy` function earlier in the same
# top-level statement (a function, a method), or such a call itself (`ms.Tensor(a).std()`).
# Each claim is checked against MindSpore 2.10 on the CPU in tests/mindspore/test_tensor_methods.py.
TESTED = "checked against MindSpore 2.10 on the CPU (tests/mindspore/test_tensor_methods.py)"
TENSOR_MAKERS = ("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")
TENSOR_METHODS = {"std": "MS260", "var": "MS260", "median": "MS261", "size": "MS262"}
TENSOR_CODES = ("MS260", "MS261", "MS262")

rule(
    code="MS260", name="tensor-std-ddof", severity=Severity.WARNING, fix="always", targets=("mindspore",),
    message="MindSpore's `Tensor.{name}()` divides by N (ddof=0); PyTorch's divides by N-1.",
    doc=dict(
        what="Finds `.std()` and `.var()` on MindSpore tensors without `ddof` (or `correction`).",
        why="`torch.Tensor.std/var` default to the unbiased estimate (correction=1); MindSpore's "
            "`Tensor.std/var` default to `ddof=0`, the population estimate. The port runs and gives smaller "
            "numbers (for [1, 2, 3, 4]: 1.118 instead of 1.291).",
        example="x = ms.Tensor(a)\nspread = x.std()  # MS260\n\n# becomes\n\nspread = x.std(ddof=1)",
        fix="Unsafe: adds `ddof=1`, PyTorch's default; keep ddof=0 if the population value was meant.",
        source="MindSpore 2.10 `Tensor.std`/`Tensor.var` (ddof=0 default) vs torch 2.13 `Tensor.std` "
               f"(correction=1); {TESTED}.",
    ),
)

rule(
    code="MS261", name="tensor-median-axis", severity=Severity.WARNING, fix="never", targets=("mindspore",),
    message="MindSpore's `Tensor.median()` works along the last axis and returns (values, indices); "
            "PyTorch's `median()` is the median of all elements.",
    doc=dict(
        what="Finds `.median()` without arguments on MindSpore tensors.",
        why="`torch.Tensor.median()` with no dim returns one scalar: the median of every element. MindSpore's "
            "`Tensor.median()` defaults to `axis=-1` and returns a (values, indices) pair, so a port gets a "
            "tuple of per-row medians.",
        example="m = x.median()  # MS261\n\n# the median of all elements\n\nm = x.reshape(-1).median()[0]",
        fix="None automatic.",
        source=f"MindSpore 2.10 `Tensor.median` (axis=-1 default); torch 2.13 `Tensor.median`; {TESTED}.",
    ),
)

rule(
    code="MS262", name="tensor-size-property", severity=Severity.ERROR, fix="always", targets=("mindspore",),
    message="`Tensor.size` is a property in MindSpore (the number of elements); calling it fails.",
    doc=dict(
        what="Finds `.size()` and `.size(dim)` calls on MindSpore tensors.",
        why="In PyTorch `x.size()` is the shape; in MindSpore `x.size` is an int, the element count, and "
            "`x.size(0)` raises `TypeError: 'int' object is not callable`.",
        example="rows = x.size(0)  # MS262\n\n# becomes\n\nrows = x.shape[0]",
        fix="Unsafe: `x.size()` becomes `x.shape` and `x.size(d)` becomes `x.shape[d]` (a tuple, not a "
            "torch.Size).",
        source=f"MindSpore 2.10 `Tensor.size` (property); {TESTED}.",
    ),
)


def _is_tensor_maker(checker: Checker, node: ast.expr | None, scope: Scope) -> bool:
    if not isinstance(node, ast.Call):
        return False
    qualname = checker.qualname(node.func, scope)
    if qualname in ("mindspore.Tensor", "mindspore.Parameter"):
        return True
    return bool(qualname and qualname.startswith(TENSOR_MAKERS))


def _report_tensor_method(checker: Checker, call: ast.Call) -> None:
    func = call.func
    assert type(func) is ast.Attribute
    code = TENSOR_METHODS[func.attr]
    if code == "MS260":
        if any(kw.arg in ("ddof", "correction", "unbiased") for kw in call.keywords):
            return
        last = max((*call.args, *call.keywords), default=None,
                   key=lambda n: (getattr(n, "end_lineno", 0) or 0, getattr(n, "end_col_offset", 0) or 0))
        if last is None:
            end = checker.range(call)
            edit = Edit(Range(end.end_line, end.end_col - 1, end.end_line, end.end_col - 1), "ddof=1")
        else:
            end = checker.range(last)
            edit = Edit(Range(end.end_line, end.end_col, end.end_line, end.end_col), ", ddof=1")
        fix = checker.fix("Pass `ddof=1` (PyTorch's default)", Applicability.UNSAFE, edit)
        checker.report("MS260", func, fixes=(fix,), name=func.attr)
    elif code == "MS261":
        if not call.args and not call.keywords:
            checker.report("MS261", func)
    elif len(call.args) <= 1 and not call.keywords:
        receiver = checker.source.segment(checker.range(func.value))
        text = f"{receiver}.shape[{checker.source.segment(checker.range(call.args[0]))}]" if call.args \
            else f"{receiver}.shape"
        fix = checker.fix(f"Use `{text}`", Applicability.UNSAFE, checker.replace(call, text))
        checker.report("MS262", call, fixes=(fix,))


# Calls of `name.method()` per checker, by receiver name: the checker hands a statement's
# assignments over after its calls, so the assignment settles the calls that follow it.
_PENDING: weakref.WeakKeyDictionary[Checker, dict[str, list[ast.Call]]] = weakref.WeakKeyDictionary()


@handles("call", *TENSOR_CODES)
def check_tensor_method(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    func = call.func
    if type(func) is not ast.Attribute or func.attr not in TENSOR_METHODS or qualname is not None:
        return
    receiver = func.value
    if type(receiver) is ast.Call:
        scope = checker.module.scope  # the maker's own name resolves through the imports
        if _is_tensor_maker(checker, receiver, scope):
            _report_tensor_method(checker, call)
    elif type(receiver) is ast.Name:
        _PENDING.setdefault(checker, {}).setdefault(receiver.id, []).append(call)


@handles("assign", *TENSOR_CODES)
def note_tensor(checker: Checker, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
    if not _is_tensor_maker(checker, node.value, scope):
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    pending = _PENDING.get(checker, {})
    for target in targets:
        if type(target) is not ast.Name:
            continue
        for call in pending.get(target.id, ()):
            if (call.lineno, call.col_offset) > (node.end_lineno, node.end_col_offset):
                _report_tensor_method(checker, call)
