"""MindSpore Tensor methods that share a name with PyTorch's but not its meaning, on values
the file shows are MindSpore tensors: a name assigned from `mindspore.Tensor(...)`,
`Parameter(...)` or a `mindspore.ops` / `mint` / `numpy` function earlier in the same
top-level statement (a function, a method), or such a call itself (`ms.Tensor(a).std()`).
Each claim is checked against MindSpore 2.10 on the CPU in tests/mindspore/test_tensor_methods.py."""

from __future__ import annotations

import ast
import weakref

from ..engine.checker import Checker
from ..engine.model import Applicability, Edit, Range, Severity
from ..engine.walk import Scope
from ..engine.registry import handles, rule

TESTED = "checked against MindSpore 2.10 on the CPU (tests/mindspore/test_tensor_methods.py)"
MAKERS = ("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")
METHODS = {"std": "MS260", "var": "MS260", "median": "MS261", "size": "MS262"}
CODES = ("MS260", "MS261", "MS262")

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
    return qualname in ("mindspore.Tensor", "mindspore.Parameter") or bool(qualname and qualname.startswith(MAKERS))


def _report(checker: Checker, call: ast.Call) -> None:
    func = call.func
    assert type(func) is ast.Attribute
    code = METHODS[func.attr]
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


@handles("call", *CODES)
def check_method(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    func = call.func
    if type(func) is not ast.Attribute or func.attr not in METHODS or qualname is not None:
        return
    receiver = func.value
    if type(receiver) is ast.Call:
        scope = checker.module.scope  # the maker's own name resolves through the imports
        if _is_tensor_maker(checker, receiver, scope):
            _report(checker, call)
    elif type(receiver) is ast.Name:
        _PENDING.setdefault(checker, {}).setdefault(receiver.id, []).append(call)


@handles("assign", *CODES)
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
                _report(checker, call)
