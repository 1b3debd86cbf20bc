"""Where a failed test for CUDA leads. In code that handles `npu` elsewhere, a test for CUDA
(`device == "cuda"`, `torch.cuda.is_available()`) is mostly harmless: on an NPU host it fails
and the code takes the path its authors gave other devices. Not when that path raises in a
function that names the NPU elsewhere (`bf16 = device == "cuda"`, then `if not bf16: raise`) or
falls to the CPU (`if torch.cuda.is_available(): arg = "cuda:0"` ... `else: arg = "cpu"`), and
no arm of its chain may be the NPU's: then the test is what must change. Read inside the innermost function around the test (a module-level test is not read).
A test whose branch only logs or records the GPU's facts (`if device.type == "cuda": params["GPU"]
= name`) changes nothing but a report; one that records its RNG state for a checkpoint does."""

from __future__ import annotations

import ast
from typing import cast

from ..engine.checker import Checker
from ..engine.guards import CUDA_WORD, NPU_WORD, OTHER_WORD, name_words
from ..engine.walk import MESSAGE_FUNCTIONS, last_name
from .advice_matching import inside
from .statement_facts import device_name, innermost_function, statement_facts

RAISES = (" (A test for CUDA whose other path, the one an NPU host takes, raises (`{test}`): the test must admit "
          "the NPU too.)")
TO_CPU = (" (A test for CUDA whose other path, the one an NPU host takes, falls to the CPU (`{test}`): the test "
          "must admit the NPU too, or the run stays on the CPU.)")
_POSITIVE = (ast.Eq, ast.In, ast.Is)
_NEGATIVE = (ast.NotEq, ast.NotIn, ast.IsNot)


def _around(checker: Checker, node: ast.AST) -> tuple[ast.AST, ast.If | ast.IfExp | ast.While | None] | None:
    """The innermost function holding `node`, and the innermost test in it that holds `node`."""
    func = innermost_function(statement_facts(checker), node)
    if func is None:
        return None
    tests = [n for n in ast.walk(func) if isinstance(n, (ast.If, ast.IfExp, ast.While)) and inside(node, n.test)]
    return func, min(tests, key=lambda n: n.test.end_lineno - n.test.lineno) if tests else None


def reports(stmt: ast.stmt) -> bool:
    """The statement logs (`print`, `logger.info`, `fabric.print`), records a value under a string
    key (`params["GPU"] = name`, `results.setdefault("GPU memory in GB", []).append(m)`), formats a
    message (`mem = f"GPU Max Mem: {...} MB"`, prose(); `text += f"| Memory: {m} GB"`) or imports
    from torch what the report reads (`from torch.backends import cudnn`), and does nothing else."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return last_name(func) in MESSAGE_FUNCTIONS or _diagnostic(last_name(func)) \
            or (last_name(func) in ("append", "extend") and isinstance(func, ast.Attribute) and _labelled(func.value))
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and isinstance(stmt.op, ast.Add):
        return prose(stmt.value) or _spaced(stmt.value)
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        modules = [a.name for a in stmt.names] if isinstance(stmt, ast.Import) else [stmt.module or ""]
        return all(m == "torch" or m.startswith("torch.") for m in modules)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return prose(stmt.value)
    return isinstance(stmt, ast.Assign) and not keeps_state(stmt.value) and all(
        isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and type(t.slice.value) is str
        and not device_name(t) for t in stmt.targets)


# a function named for checking or reporting (`check_nvlink_connectivity(fabric)`, `print_gpu_info()`), its result
# unused, and named for no action besides (`check_and_set_device`)
DIAGNOSTIC_WORDS = frozenset({"check", "print", "log", "report", "show", "display", "describe"})
ACTION_WORDS = frozenset({"set", "setup", "init", "initialize", "enable", "disable", "move", "to", "load", "save",
                          "build", "compile", "install", "fix", "patch", "apply", "and", "or"})


def _diagnostic(name: str) -> bool:
    words = name_words(name)
    return bool(words) and words[0] in DIAGNOSTIC_WORDS and ACTION_WORDS.isdisjoint(words)


def _labelled(node: ast.expr) -> bool:
    """A list kept under a label: `results["GPU memory in GB"]`, `results.setdefault("GPU memory in GB", [])`."""
    if isinstance(node, ast.Subscript):
        return _spaced(node.slice)
    return isinstance(node, ast.Call) and last_name(node.func) == "setdefault" and bool(node.args) \
        and _spaced(node.args[0])


def reports_all(checker: Checker, stmts: list[ast.stmt]) -> bool:
    """Each statement reports, or computes a value only reports read (`memory = torch.cuda.max_memory_allocated()
    / 1e9`, then `print(f"Memory: {memory:.2f} GB")`): a name assigned here that nothing else in its
    function reads."""
    values: list[ast.Assign] = []
    for stmt in stmts:
        if reports(stmt):
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and not keeps_state(stmt.value) and not device_name(stmt.targets[0])):
            return False
        values.append(stmt)
    if not values:
        return True
    func = innermost_function(statement_facts(checker), stmts[0])
    if func is None:
        return False
    names = {cast(ast.Name, stmt.targets[0]).id for stmt in values}
    return not any(type(node) is ast.Name and node.id in names and not any(inside(node, s) for s in stmts)
                   for node in ast.walk(func))


def prose(value: ast.AST) -> bool:
    """Text with prose in it, made from values: an f-string (`f"GPU Max Mem: {m} MB"`), `"peak: {:.3f}
    GB".format(m)`, `"peak: %d MB" % m`, the parts of a log line joined (`delimiter.join([header, "max mem:
    {memory:.0f}"])`, torchvision's MetricLogger): a message, never a device or a path."""
    if isinstance(value, ast.JoinedStr):
        return any(_spaced(part) for part in value.values)
    if isinstance(value, ast.Call):
        func = value.func
        if type(func) is ast.Attribute and func.attr == "join" and len(value.args) == 1 \
                and isinstance(value.args[0], (ast.List, ast.Tuple)):
            return any(_spaced(part) for part in value.args[0].elts)
        return type(func) is ast.Attribute and func.attr == "format" and _spaced(func.value)
    return isinstance(value, ast.BinOp) and type(value.op) is ast.Mod and _spaced(value.left)


def _spaced(node: ast.expr) -> bool:
    return type(node) is ast.Constant and type(node.value) is str and " " in node.value


def keeps_state(value: ast.expr) -> bool:
    """A value recorded to be restored, not reported: an RNG state or a state dict
    (`rng_state["cuda"] = torch.cuda.get_rng_state()`, which a checkpoint saves and loads)."""
    return type(value) is ast.Call and "state" in last_name(value.func).lower()


def failed_cuda_test(checker: Checker, node: ast.AST) -> str | None:
    """The reason to keep a finding on `node`, a CUDA test's string or probe, when the path an
    NPU host takes past it falls to the CPU, or raises in a function that names the NPU elsewhere
    (one that does not is a check that CUDA's kernels are there: `if x.device.type != "cuda":
    raise`); else None."""
    around = _around(checker, node)
    if around is None:
        return None
    func, test = around
    found = None
    if isinstance(test, (ast.If, ast.IfExp)):  # (a `while` test's other path is the code after the loop: not read)
        if _reached(func, test, checker):
            found = _npu_path(test, polarity(test.test, node), checker)
    elif test is None:
        for stmt in ast.walk(func):  # `ok = device == "cuda" and ...`, then `if not ok: raise`
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and inside(node, stmt.value) and polarity(stmt.value, node):
                found = _flag_path(func, stmt.targets[0].id, checker)
                break
    if found is None or (found[0] is RAISES and not NPU_WORD.search(_text(checker, func).lower())):
        return None
    return found[0].format(test=found[1])


def _reached(func: ast.AST, test: ast.If | ast.IfExp, checker: Checker) -> bool:
    """Whether an NPU host reaches `test`: no arm before it in its chain may be the NPU's."""
    while True:
        before = next((n for n in ast.walk(func) if isinstance(n, (ast.If, ast.IfExp))
                       and (n.orelse is test or isinstance(n.orelse, list) and len(n.orelse) == 1
                            and n.orelse[0] is test)), None)
        if before is None:
            return True
        if _may_be_npu(_text(checker, before.test)):
            return False
        test = before


def _may_be_npu(test: str) -> bool:
    """An arm's test that names the NPU, or no backend at all (`torch.accelerator.is_available()`)."""
    words = test.lower()
    return bool(NPU_WORD.search(words)) or not (CUDA_WORD.search(words) or OTHER_WORD.search(words) or "cpu" in words)


def _text(checker: Checker, node: ast.AST) -> str:
    return checker.source.segment(checker.range(node))


def _flag_path(func: ast.AST, name: str, checker: Checker) -> tuple[str, str] | None:
    """_npu_path of the tests of a flag set from a CUDA test, or RAISES for `assert flag`."""
    for stmt in ast.walk(func):
        if isinstance(stmt, ast.Assert) and _uses(stmt.test, name) is True:
            return RAISES, _shown(stmt, checker)
        if isinstance(stmt, ast.If):
            polarity = _uses(stmt.test, name)
            if polarity is not None:
                found = _npu_path(stmt, polarity, checker)
                if found is not None:
                    return found
    return None


def _uses(test: ast.expr, name: str) -> bool | None:
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and node.id == name:
            return polarity(test, node)
    return None


def polarity(expr: ast.expr, node: ast.AST) -> bool | None:
    """True when `expr` is true only where `node`'s test for CUDA passes (`node` itself, a
    conjunct, an `==` operand, a probe called), False when only where it fails (`not`, `!=`,
    a disjunct of those); None when either may hold."""
    if expr is node:
        return True
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = polarity(expr.operand, node)
        return None if inner is None else not inner
    if isinstance(expr, ast.BoolOp):
        for value in expr.values:
            if inside(node, value):
                inner = polarity(value, node)
                # `a and cuda`: false where CUDA's test fails; `a or not cuda`: true where it fails
                return inner if inner is isinstance(expr.op, ast.And) else None
        return None
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and any(
            isinstance(o, ast.Constant) and type(o.value) is str and inside(node, o)
            for o in (expr.left, *expr.comparators)):
        return True if isinstance(expr.ops[0], _POSITIVE) else False if isinstance(expr.ops[0], _NEGATIVE) else None
    if isinstance(expr, ast.Call) and inside(node, expr.func):
        return True  # `torch.cuda.is_available()`
    return None


def _npu_path(test: ast.If | ast.IfExp, polarity: bool | None, checker: Checker) -> tuple[str, str] | None:
    """(RAISES or TO_CPU, the test as shown) for the branch an NPU host takes at `test` (its else
    when the test passes only with CUDA, its body when only without), through `elif`s that test
    for CUDA or another backend; None when that branch may be fine, or an `elif` may admit the NPU."""
    if polarity is None:
        return None
    branch: list[ast.stmt] | ast.expr = test.orelse if polarity else test.body
    while True:
        link = branch[0] if isinstance(branch, list) and len(branch) == 1 else branch
        if not isinstance(link, (ast.If, ast.IfExp)):
            break
        if _may_be_npu(_text(checker, link.test)):
            return None  # an arm that may be the NPU's
        branch = link.orelse
    nodes: list = branch if isinstance(branch, list) else [branch]
    if not nodes:
        return None
    if isinstance(nodes[0], ast.Raise):
        return RAISES, _shown(test, checker)
    if any(isinstance(n, ast.Constant) and type(n.value) is str and n.value.lower().partition(":")[0] == "cpu"
           for stmt in nodes for n in ast.walk(stmt)):
        return TO_CPU, _shown(test, checker)
    return None


def _shown(stmt: ast.If | ast.IfExp | ast.Assert, checker: Checker) -> str:
    """The test as written (not its line: findings keep their text when lines move), shortened."""
    text = " ".join(_text(checker, stmt.test).split())
    return text if len(text) <= 60 else text[:57] + "..."
