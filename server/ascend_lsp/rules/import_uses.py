"""How a name a module's top-level import binds is used in the module: only as a type (a hint,
an isinstance() test), in a check only CUDA runs, or as code. The import carries the finding of
every use (rules/table.py), so where no use runs anything on an NPU host, neither does the
import: `from torch.nn import RNNBase` for `isinstance(m, RNNBase)`, `from torch import cuda` for
`if cuda.is_available() and not x.is_cuda: raise ...`. Read from the whole text
(Checker.text_fact: a use added anywhere changes it): only where the text never calls the name
(`RNNBase(...)`, `with autocast():`), and only the statements that name it, each parsed alone. Here, not in harmless_calls.py,
so that npu2xx_support.py may import it."""

from __future__ import annotations

import ast
import os
import re
import textwrap
from collections.abc import Callable, Iterator

from ..engine.checker import Checker
from ..engine.text import indent_width
from ..engine.walk import MODULE
from .cuda_test_paths import polarity, reports

TYPE, CHECK, DECORATOR, CODE = "type", "check", "decorator", "code"
TYPE_FUNCTIONS = frozenset({"isinstance", "issubclass"})


def cuda_only_check(checker: Checker, stmt: ast.If) -> bool:
    """`stmt` has no `else`, its body only logs, raises or sets CUDA's sync debugging
    (CUDA_DEBUG_AIDS), and its test holds only where CUDA does (`torch.cuda.is_available()`,
    `x.is_cuda` or `device.type == "cuda"`, alone or joined by `and`): `if cuda.is_available()
    and not x.is_cuda: raise ...`, `if device == "cuda": torch.cuda.set_sync_debug_mode("warn")`. Not where
    a part asks that CUDA is missing: `if not torch.cuda.is_available(): raise` raises on an NPU
    host, and so may `if device.type == "cuda" and not torch.cuda.is_available(): raise`."""
    if stmt.orelse or not all(reports(s) or type(s) is ast.Raise or _debug_aid(checker, s) for s in stmt.body):
        return False
    return holds_only_with_cuda(checker, stmt.test)


def holds_only_with_cuda(checker: Checker, test: ast.expr) -> bool:
    """The test holds only where CUDA does (`torch.cuda.is_available()`, `x.is_cuda` or
    `device.type == "cuda"`, alone or joined by `and`), and no part asks that CUDA is missing."""
    parts = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
    sides = {(polarity(part, probe), asks_host) for part in parts for probe, asks_host in _cuda_probes(checker, part)}
    return any(side is True for side, _ in sides) and (False, True) not in sides


# what only changes how CUDA reports its own work: whether a synchronizing call warns or raises
# (torch.cuda.set_sync_debug_mode; without CUDA it raises, torch 2.13 CPU, run: it needs a test for CUDA)
CUDA_DEBUG_AIDS = frozenset({"torch.cuda.set_sync_debug_mode"})


def _debug_aid(checker: Checker, stmt: ast.stmt) -> bool:
    return type(stmt) is ast.Expr and type(stmt.value) is ast.Call \
        and checker.qualname(stmt.value.func, checker.module.scope) in CUDA_DEBUG_AIDS


def _cuda_probes(checker: Checker, test: ast.expr):
    """The parts of a test that are true only with CUDA, as polarity() reads them, each with
    whether it asks the host (`torch.cuda.is_available()`'s callee) or a tensor or device (an
    `.is_cuda`, a `"cuda"` compared with)."""
    for node in ast.walk(test):
        if type(node) is ast.Call and checker.qualname(node.func, checker.module.scope) == "torch.cuda.is_available":
            yield node.func, True
        elif type(node) is ast.Attribute and node.attr == "is_cuda":
            yield node, False
        elif type(node) is ast.Compare:
            yield from ((o, False) for o in (node.left, *node.comparators) if type(o) is ast.Constant
                        and type(o.value) is str and o.value.partition(":")[0] == "cuda")


def import_uses(checker: Checker, stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> tuple[str, ...]:
    """The kinds of the reads of the name a top-level import binds, sorted: TYPE, CHECK, DECORATOR
    (`@script`, the decorator itself: not `@cache(size)`, a call) or CODE;
    a string equal to the name is CODE (`__all__` hands it to other modules). () where the import
    is in a block, or binds `*`, or the name is not read."""
    if stmt.col_offset or alias.name == "*":
        return ()
    return _uses(checker, alias)


def never_read(checker: Checker, stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> bool:
    """The name an import of the module's own scope binds (at the top, or in a block of it: `if
    torch_version >= (1, 6): from torch.cuda.amp import autocast`) is read nowhere in the module,
    not even as a string (`__all__`), and the module is no package's `__init__.py`, which exists
    to hand names on. Another module may still import it from here: rare for a name left over,
    and that module's use then names this module, not CUDA."""
    if alias.name == "*" or os.path.basename(checker.path or "") == "__init__.py":
        return False
    scope = next((event.scope for event in checker.events.imports if event.alias is alias), None)
    if scope is None or scope.kind != MODULE:
        return False
    return _uses(checker, alias) == ()


def _uses(checker: Checker, alias: ast.alias) -> tuple[str, ...]:
    """_read_uses of the name the alias binds, a fact of the whole text."""
    name = alias.asname or alias.name.partition(".")[0]
    return checker.text_fact(f"import-uses {name}", lambda c: _read_uses(c, name))


def _read_uses(checker: Checker, name: str) -> tuple[str, ...]:
    """The kinds of the name's reads, each statement that names it parsed alone (_statement_at),
    so that an edit elsewhere, which may leave the text broken while it is typed, costs little
    and changes nothing."""
    text = checker.source.text
    if re.search(rf"(?<![\w.])(?<!def )(?<!class ){re.escape(name)}\s*\(", text):
        return (CODE,)  # called (or so it reads): no need to parse
    kinds: list[str] = []  # a statement of several lines may be read once per line that names it
    for tree in _statements_naming(checker, name):
        if tree is None:
            return (CODE,)  # what does not parse shows nothing of its uses
        kinds.extend(_kinds(checker, tree, name))
    return tuple(sorted(set(kinds)))


def calls_only(checker: Checker, alias: ast.alias, what: str, accept: Callable[[ast.Call], bool]) -> bool:
    """The name the alias binds is read, and each read is the callee of a call that `accept`
    takes (`what` names the test, for the text fact's key): a fact of the whole text, read as
    _read_uses reads it."""
    name = alias.asname or alias.name.partition(".")[0]
    return checker.text_fact(f"calls-only {what} {name}", lambda c: _calls_only(c, name, accept))


def _calls_only(checker: Checker, name: str, accept: Callable[[ast.Call], bool]) -> bool:
    read = False
    for tree in _statements_naming(checker, name):
        if tree is None:
            return False
        accepted = {id(node.func) for node in ast.walk(tree) if type(node) is ast.Call and accept(node)}
        for node in ast.walk(tree):
            if type(node) is ast.Name and node.id == name and type(node.ctx) is ast.Load:
                if id(node) not in accepted:
                    return False
                read = True
    return read


def _statements_naming(checker: Checker, name: str) -> Iterator[ast.Module | None]:
    """Each statement with a line that names `name` (not an import's), parsed alone
    (_statement_at), or None where it does not parse."""
    lines = checker.source.lines
    word = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
    for i, line in enumerate(lines):
        if word.search(line) and not line.lstrip().startswith(("import ", "from ", "#")):
            yield _statement_at(lines, i)


# how far back a statement holding a line may begin (a signature, a test over several lines)
LOOK_BACK = 30
# what goes on a statement at its own indentation: the arms of a compound one, a closing bracket
CONTINUES = re.compile(r"\s*(?:(?:elif|else|except|finally|case)\b|[)\]}])")
# the end of a line that the next one continues
OPEN_END = re.compile(r"[(\[{,\\]\s*(?:#.*)?$")


def _statement_at(lines: list[str], i: int) -> ast.Module | None:
    """The statement holding line `i`, with the blocks it heads, parsed alone: from the nearest
    line back, not more indented and not continuing the line before it, whose text to the end
    of its blocks parses."""
    limit = indent_width(lines[i])
    for k in range(i, max(-1, i - LOOK_BACK), -1):
        first = lines[k]
        if not first.strip() or indent_width(first) > limit:
            continue
        limit = base = indent_width(first)
        before = next((line for line in reversed(lines[max(0, k - LOOK_BACK):k]) if line.strip()), "")
        if OPEN_END.search(before) or CONTINUES.match(first):
            continue  # inside brackets, or an arm of a statement above
        j = i
        while j + 1 < len(lines) and (not lines[j + 1].strip() or indent_width(lines[j + 1]) > base
                                      or (CONTINUES.match(lines[j + 1]) or lines[j].lstrip().startswith("@"))
                                      and indent_width(lines[j + 1]) == base):
            j += 1  # (a decorator's line goes on with what it decorates)
        try:
            return ast.parse(textwrap.dedent("".join(lines[k:j + 1])))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def _kinds(checker: Checker, tree: ast.Module, name: str) -> list[str]:
    types: set[int] = set()
    checks: set[int] = set()
    decorators: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            decorators.update(id(d) for d in node.decorator_list)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            hints = [a.annotation for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                            arguments.vararg, arguments.kwarg) if a is not None]
            types.update(id(n) for hint in (*hints, node.returns) if hint is not None for n in ast.walk(hint))
        elif type(node) is ast.AnnAssign:
            types.update(id(n) for n in ast.walk(node.annotation))
        elif type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in TYPE_FUNCTIONS \
                and len(node.args) == 2:
            types.update(id(n) for n in ast.walk(node.args[1]))
        elif type(node) is ast.If and cuda_only_check(checker, node):
            checks.update(id(n) for n in ast.walk(node.test))
    return [TYPE if id(node) in types else CHECK if id(node) in checks else DECORATOR if id(node) in decorators
            else CODE for node in ast.walk(tree)
            if (type(node) is ast.Name and node.id == name and type(node.ctx) is ast.Load)
            or (type(node) is ast.Constant and node.value == name)]
