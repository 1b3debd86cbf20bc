"""Test suites: which files are tests, and which tests run only with CUDA.

pytest collects `test_*.py` and `*_test.py` and reads `conftest.py`; projects keep them, with
their helpers, in a `tests` or `test` folder, or a package of test helpers named `testing`
(`torch_geometric/testing/`, `fair_dev/testing/`). A test suite runs where its authors run it, most
often the CPU: its NPU findings are info unless `tests = "check"` (config.py). A test skipped
without CUDA never runs on an NPU host, so its findings are info whatever the setting: a skip
mark on the test (`@pytest.mark.skipif(not torch.cuda.is_available(), ...)`, `@unittest.skipUnless`,
an alias such as `requires_cuda = pytest.mark.skipif(...)` or a `@require_torch_gpu` helper), on
its class, the module's `pytestmark`, or an `if ...: pytest.skip()` the test begins with, testing
CUDA directly or through a module-level name set only with it (`CUDA_AVAILABLE =
torch.cuda.is_available()`, `DEVICES = [0] if torch.cuda.is_available() else []`, or `DEVICES = []`
then `if CUDA_IS_AVAILABLE: DEVICES = [0]`).

The module-level names, marks and classes are read from the file's text a top-level block at
a time, so that a syntax error elsewhere changes none of them."""

from __future__ import annotations

import ast
import os
import re
from pathlib import PurePosixPath

from .guards import name_words
from .model import Range
from .text import SourceText, starts_block
from .walk import Events, last_name

TEST_FOLDERS = frozenset({"tests", "test", "testing"})
CUDA_GATED = " (In a test that runs only with CUDA, skipped on an NPU host.)"
IN_TEST_FILE = " (In a test file, which runs where its authors run it: `tests = \"check\"` keeps its findings.)"
TESTS_MODES = ("info", "check")  # the `tests` setting: test files' findings info, or at their severity

_CUDA_WORDS = frozenset({"cuda", "gpu", "gpus", "multigpu"})
_OTHER_BACKENDS = frozenset({"xpu", "mps", "hip", "rocm"})  # neither is there on an NPU host
_NEGATIONS = frozenset({"no", "not", "without", "cpu"})
_REQUIRES = frozenset({"require", "requires", "required", "need", "needs", "only"})
_SKIP_IF = frozenset({"skipif", "skipIf", "skip_if"})
_SKIP_UNLESS = frozenset({"skipUnless", "skip_unless"})
_SKIP_CALLS = frozenset({"skip", "skipTest", "SkipTest"})  # pytest.skip(), self.skipTest(), raise SkipTest
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*\s*(?::[^=]*)?=(?!=)")


def is_test_file(path: str | None, root: str | None) -> bool:
    """A Python file pytest collects or reads (`test_*.py`, `*_test.py`, `conftest.py`), or any
    Python file in a `tests`, `test` or `testing` folder of the project (the folders above `root` do
    not count: a checkout may live in one)."""
    if not path or not path.endswith(".py"):
        return False
    posix = path.replace("\\", "/")
    name = posix.rpartition("/")[2]
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return True
    relative = PurePosixPath(posix)
    if root:
        try:  # lsp-check names a file as it was given: from the working folder
            relative = PurePosixPath(os.path.abspath(path).replace("\\", "/")).relative_to(root.replace("\\", "/"))
        except ValueError:
            return False  # outside its project (a link's target): only its name tells
    return any(part in TEST_FOLDERS for part in relative.parts[:-1])


def _words(name: str) -> set[str]:
    return set(name_words(name))


def _named_cuda(node: ast.expr, backends: frozenset[str] = _CUDA_WORDS) -> bool:
    """A name or attribute chain (or a call of one) that says CUDA (or one of `backends`) and no
    negation: `torch.cuda.is_available`, `HAS_CUDA`, `TEST_MULTIGPU`; not `NO_CUDA`."""
    words: set[str] = set()
    while True:
        if type(node) is ast.Call:
            node = node.func
        elif type(node) is ast.Attribute:
            words |= _words(node.attr)
            node = node.value
        elif type(node) is ast.Name:
            words |= _words(node.id)
            break
        else:
            return False
    return bool(words & backends) and not words & _NEGATIONS


def _negated_cuda(node: ast.expr) -> bool:
    """`NO_CUDA`, `no_gpu`: a name saying that CUDA is not there."""
    words = _words(node.id) if type(node) is ast.Name else _words(node.attr) if type(node) is ast.Attribute else set()
    return bool(words & _CUDA_WORDS) and bool(words & (_NEGATIONS - {"cpu"}))


def _cuda_string(node: ast.expr) -> bool:
    return type(node) is ast.Constant and isinstance(node.value, str) and node.value.partition(":")[0] == "cuda"


def _number(node: ast.expr) -> int | None:
    return node.value if type(node) is ast.Constant and type(node.value) is int else None


def requires_cuda(node: ast.expr, gates: frozenset[str] | set[str]) -> bool:
    """Whether `node` is true only where CUDA is: `torch.cuda.is_available()`,
    `torch.cuda.device_count() > 1`, `len(DEVICES)`, `device == "cuda"`, a name in `gates`."""
    if isinstance(node, ast.BoolOp):
        found = [requires_cuda(value, gates) for value in node.values]
        if type(node.op) is ast.And:
            return any(found)
        # `torch.cuda.is_available() or is_xpu_available()`: no NPU either way
        return any(found) and all(cuda or _named_cuda(value, _OTHER_BACKENDS) for cuda, value in zip(found, node.values))
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op, left, right = type(node.ops[0]), node.left, node.comparators[0]
        if op is ast.Eq:
            return _cuda_string(left) or _cuda_string(right)
        count = _number(right)
        if count is not None and requires_cuda(left, gates):
            return (op is ast.Gt and count >= 0) or (op is ast.GtE and count >= 1) or (op is ast.NotEq and count == 0)
        return op is ast.IsNot and type(right) is ast.Constant and right.value is None and requires_cuda(left, gates)
    if isinstance(node, ast.Call):
        if type(node.func) is ast.Name and node.func.id == "len" and len(node.args) == 1:
            return requires_cuda(node.args[0], gates)
        return _named_cuda(node)
    if isinstance(node, ast.Name) and node.id in gates:
        return True
    return isinstance(node, (ast.Name, ast.Attribute)) and _named_cuda(node)


def skips_without_cuda(node: ast.expr, gates: frozenset[str] | set[str]) -> bool:
    """Whether `node` is true on a host without CUDA: `not torch.cuda.is_available()`, `not
    DEVICES`, `torch.cuda.device_count() < 2`, `device != "cuda"`, `NO_CUDA`."""
    if isinstance(node, ast.UnaryOp) and type(node.op) is ast.Not:
        return requires_cuda(node.operand, gates)
    if isinstance(node, ast.BoolOp):
        found = [skips_without_cuda(value, gates) for value in node.values]
        return any(found) if type(node.op) is ast.Or else all(found)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op, left, right = type(node.ops[0]), node.left, node.comparators[0]
        if op is ast.NotEq and (_cuda_string(left) or _cuda_string(right)):
            return True
        count = _number(right)
        if count is not None and requires_cuda(left, gates):
            return (op is ast.Eq and count == 0) or (op is ast.Lt and count >= 1) or (op is ast.LtE and count >= 0)
        return op is ast.Is and type(right) is ast.Constant and right.value is None and requires_cuda(left, gates)
    return _negated_cuda(node)


def _empty(node: ast.expr) -> bool:
    """A value that is false: `[]`, `()`, `0`, `None`, `False`, `""`."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return type(node) is ast.Constant and not node.value


class SuiteFile:
    """What a test file's top level says about CUDA: the names true only with it, the marks
    that skip without it, whether `pytestmark` does, and the lines of the classes a mark skips."""

    def __init__(self, source: SourceText) -> None:
        self.gates: set[str] = set()
        self.marks: set[str] = set()
        self.module_gated = False
        self.classes: list[tuple[int, int]] = []  # [first, last] 0-based lines of a class skipped without CUDA
        self._gated_functions: dict[int, tuple[object, bool]] = {}
        # a module-level name → (value, the test of the module-level `if` it is assigned in, or None)
        values: dict[str, list[tuple[ast.expr, ast.expr | None]]] = {}
        headers: list[tuple[int, int, ast.ClassDef]] = []
        for first, last, tree in _top_level_blocks(source.lines):
            for stmt in tree.body:
                if type(stmt) is ast.ClassDef:
                    headers.append((first, last, stmt))
                elif type(stmt) is ast.If:
                    branch = [n for s in stmt.body for n in ast.walk(s) if type(n) in (ast.Assign, ast.AnnAssign)]
                    for target, value in _assigned(branch):
                        values.setdefault(target, []).append((value, stmt.test))
                else:
                    for target, value in _assigned([stmt]):
                        values.setdefault(target, []).append((value, None))
        # a name set from one that is itself a gate: read until nothing more is learnt
        for _ in range(4):
            known = len(self.gates)
            for name, assigned in values.items():
                if name not in self.gates and self._gate(assigned):
                    self.gates.add(name)
            if len(self.gates) == known:
                break
        for name, assigned in values.items():
            if any(self.skip_mark(v) for v, _test in assigned):
                self.marks.add(name)
        pytestmark = [v for v, _test in values.get("pytestmark", [])]
        self.module_gated = any(self.skip_mark(m) for v in pytestmark
                                for m in (v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]))
        self.classes = [(first, last) for first, last, cls in headers
                        if any(self.skip_mark(d) for d in cls.decorator_list)]

    def _gate(self, assigned: list[tuple[ast.expr, ast.expr | None]]) -> bool:
        """Whether a name with these assignments is true only with CUDA: each is false, a CUDA
        test, or made under an `if` that tests for CUDA, and one is not false."""
        set_with_cuda = [test is not None and requires_cuda(test, self.gates) or self._gate_value(value)
                         for value, test in assigned]
        return any(set_with_cuda) and all(ok or _empty(value) for ok, (value, _test) in zip(set_with_cuda, assigned))

    def _gate_value(self, value: ast.expr) -> bool:
        if type(value) is ast.IfExp:  # `[0] if torch.cuda.is_available() else []`
            return requires_cuda(value.test, self.gates) and _empty(value.orelse)
        return requires_cuda(value, self.gates)

    def skip_mark(self, node: ast.expr) -> bool:
        """A decorator or mark that skips without CUDA: `pytest.mark.skipif(not HAS_CUDA, ...)`,
        `unittest.skipUnless(torch.cuda.is_available(), ...)`, an alias of one, `@requires_cuda`."""
        if type(node) is ast.Call:
            name = last_name(node.func)
            condition = node.args[0] if node.args else next(
                (kw.value for kw in node.keywords if kw.arg == "condition"), None)
            if condition is not None and name in _SKIP_IF:
                return skips_without_cuda(condition, self.gates)
            if condition is not None and name in _SKIP_UNLESS:
                return requires_cuda(condition, self.gates)
            node = node.func  # `@require_gpu(2)`: the helper's name says it
        name = last_name(node)
        if name in self.marks:
            return True
        words = _words(name)
        return bool(words & _CUDA_WORDS and words & _REQUIRES) and not words & _NEGATIONS

    def gated_function(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A test skipped without CUDA by its decorators or, named as pytest collects it (`test*`), by an
        `if ...: pytest.skip()` it begins with."""
        known = self._gated_functions.get(id(func))
        if known is not None and known[0] is func:
            return known[1]
        gated = any(self.skip_mark(d) for d in func.decorator_list) or func.name.startswith("test") and any(
            type(stmt) is ast.If and skips_without_cuda(stmt.test, self.gates) and _leaves(stmt.body[0])
            for stmt in _opening(func.body))  # a helper that returns early is code under a guard (guards.py)
        self._gated_functions[id(func)] = (func, gated)
        return gated

    def reason(self, rng: Range, events: Events, tests: str) -> str | None:
        """Why a finding at `rng` (in the statement whose events are `events`) is info: it is
        in a test skipped without CUDA, or in a test file while `tests` is "info"; None: neither."""
        line = rng.start_line
        if self.module_gated or any(first <= line <= last for first, last in self.classes) or any(
                _first_line(func) <= line <= func.end_lineno - 1 and self.gated_function(func)
                for func, _scope in events.functions):
            return CUDA_GATED
        return IN_TEST_FILE if tests == "info" else None


def _first_line(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return (func.decorator_list[0].lineno if func.decorator_list else func.lineno) - 1


def _opening(body: list[ast.stmt]) -> list[ast.stmt]:
    """The first statements of a body, after its docstring: where a test skips itself."""
    start = 1 if body and type(body[0]) is ast.Expr and type(body[0].value) is ast.Constant else 0
    return body[start:start + 3]


def _leaves(stmt: ast.stmt) -> bool:
    """`pytest.skip(...)`, `self.skipTest(...)`, `raise unittest.SkipTest(...)`, `return`."""
    if type(stmt) is ast.Return:
        return True
    call = stmt.value if type(stmt) is ast.Expr else stmt.exc if type(stmt) is ast.Raise else None
    return call is not None and last_name(call) in _SKIP_CALLS


def _assigned(stmts: list) -> list[tuple[str, ast.expr]]:
    """(name, value) of the plain-name assignments among `stmts`."""
    out: list[tuple[str, ast.expr]] = []
    for stmt in stmts:
        if type(stmt) is ast.Assign:
            out.extend((t.id, stmt.value) for t in stmt.targets if type(t) is ast.Name)
        elif type(stmt) is ast.AnnAssign and stmt.value is not None and type(stmt.target) is ast.Name:
            out.append((stmt.target.id, stmt.value))
    return out


def _top_level_blocks(lines: list[str]):
    """(first, last line, parsed block) of each top-level assignment, `if` and class header that
    parses alone (a class's header with `pass` for its body)."""
    starts = [i for i, line in enumerate(lines) if starts_block(line)]
    starts = [s for k, s in enumerate(starts) if k == 0 or not lines[starts[k - 1]].startswith("@")]
    for k, first in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        head = lines[first]
        if head.startswith(("@", "class ")):
            kinds = [line[:6] for line in lines[first:end] if line.startswith(("class ", "def ", "async "))]
            if kinds[:1] != ["class "]:
                continue  # a function: its decorators reach the checker with its events
            header = []
            for line in lines[first:end]:
                header.append(line)
                code = line.partition("#")[0].rstrip()
                if line.startswith("class ") and code.endswith(":"):
                    break
            text = "".join(header).rstrip() + "\n    pass\n"
        elif head.startswith("if ") or _ASSIGNMENT.match(head):
            text = "".join(lines[first:end])
        else:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        last = end - 1
        while last > first and not lines[last].strip():
            last -= 1
        yield first, last, tree
