"""Helpers shared by the advice families (NPU6xx performance, NPU7xx reproducibility):
the advice table, function- and loop-local reading of the AST, literal values."""

from __future__ import annotations

import ast
import re

from ..engine.checker import Checker, Reference
from ..engine.tables import Tables
from ..engine.walk import child_fields

ADVICE_TABLE = "mappings/ascend_tools/advice.toml"
NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_NESTED = frozenset(NESTED)


_INDEXES: dict[tuple[int, str, str], tuple[Tables, dict[str, list[dict]]]] = {}


def rows(checker: Checker, section: str, key: str) -> dict[str, list[dict]]:
    """The advice table's `section` rows, by `key` (indexed once per loaded tables)."""
    tables = checker.tables
    if tables is None:
        return {}
    cached = _INDEXES.get((id(tables), section, key))
    if cached is not None and cached[0] is tables:
        return cached[1]
    out: dict[str, list[dict]] = {}
    for row in tables.advice.get(section, ()):
        out.setdefault(row[key], []).append(row)
    if len(_INDEXES) > 64:
        _INDEXES.clear()
    _INDEXES[(id(tables), section, key)] = (tables, out)
    return out


def within(checker: Checker, node: ast.AST, *needles: str) -> list[str]:
    """Which of `needles` occur on `node`'s lines, searched there alone: for words common in
    a file (`@`, `mean`) asked about the few nodes that name a gate word (Checker.named)."""
    text = _lines_of(checker, node)
    return [needle for needle in needles if needle in text]


def matches(checker: Checker, node: ast.AST, word: str, pattern: re.Pattern[str]) -> bool:
    """Whether `pattern`, whose matches start with `word`, matches on `node`'s lines: tried
    only where the word is (a regex search reads every character; a word search skips)."""
    text = _lines_of(checker, node)
    at = text.find(word)
    while at != -1:
        if pattern.match(text, at):
            return True
        at = text.find(word, at + 1)
    return False


def _lines_of(checker: Checker, node: ast.AST) -> str:
    """The text of `node`'s lines (joined: the file's line offsets would cost more to index)."""
    return "".join(checker.source.lines[node.lineno - 1:node.end_lineno])


def own_nodes(body: list[ast.stmt], kinds: frozenset[type] | None = None) -> list[ast.AST]:
    """Every node of `body` in source order (or those of `kinds` alone), not descending into
    nested functions and classes (which are read on their own)."""
    return _descend(body[::-1], _NESTED, kinds)


def subtree(node: ast.AST) -> list[ast.AST]:
    """`node` and every node under it: what ast.walk gives (in another order, without the
    `ctx` and `op` nodes), as a list, at a fraction of its cost."""
    return _descend([node], frozenset(), None)


def _descend(stack: list[ast.AST], nested: frozenset[type], kinds: frozenset[type] | None) -> list[ast.AST]:
    """The nodes of `stack` (popped from its end) and under them, in source order, not below
    a node of the `nested` types; of `kinds` alone if given."""
    out: list[ast.AST] = []
    pop, push, keep, AST = stack.pop, stack.append, out.append, ast.AST
    reversed_fields = _REVERSED_FIELDS
    while stack:
        node = pop()
        kind = type(node)
        if kinds is None or kind in kinds:
            keep(node)
        if kind in nested:
            continue
        fields = reversed_fields.get(kind)
        if fields is None:
            fields = reversed_fields[kind] = child_fields(kind)[::-1]  # reversed: the stack pops them in order
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for child in reversed(value):
                    if isinstance(child, AST):
                        push(child)
            elif isinstance(value, AST):
                push(value)
    return out


_REVERSED_FIELDS: dict[type, tuple[str, ...]] = {}


def called(ref: Reference, names: frozenset[str]) -> bool:
    """Whether `ref` is the callee of a call, and its qualified name ends with one of `names`."""
    call = ref.call
    return type(call) is ast.Call and call.func is ref.node and ref.qualname.rpartition(".")[2] in names


def call_name(call: ast.Call) -> str:
    func = call.func
    if type(func) is ast.Attribute:
        return func.attr
    return func.id if type(func) is ast.Name else ""


def literal(node: ast.expr | None) -> object:
    """The value of a constant (`-1` included); `...` (Ellipsis) when not a literal."""
    if type(node) is ast.Constant:
        return node.value
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub and type(node.operand) is ast.Constant \
            and type(node.operand.value) in (int, float):
        return -node.operand.value
    return ...


def argument(call: ast.Call, keyword: str, position: int | None) -> tuple[bool, ast.expr | None]:
    """(passed, the expression) of a parameter given by keyword or 0-based position."""
    for kw in call.keywords:
        if kw.arg == keyword:
            return True, kw.value
    if position is not None and position < len(call.args) and not any(
            type(a) is ast.Starred for a in call.args[:position + 1]):
        return True, call.args[position]
    return False, None


def open_ended(call: ast.Call) -> bool:
    """`f(*args)` or `f(**kwargs)`: what is passed cannot be read."""
    return any(kw.arg is None for kw in call.keywords) or any(type(a) is ast.Starred for a in call.args)


def assignments(nodes: list[ast.AST]) -> dict[str, list[ast.expr]]:
    """Local name → the values assigned to it (`a, b = x.chunk(2)` assigns the call to both)."""
    out: dict[str, list[ast.expr]] = {}
    for node in nodes:
        if type(node) is ast.Assign:
            for target in node.targets:
                names = [target] if type(target) is ast.Name else getattr(target, "elts", ())
                for name in names:
                    if type(name) is ast.Name:
                        out.setdefault(name.id, []).append(node.value)
        elif type(node) in (ast.AnnAssign, ast.AugAssign) and type(node.target) is ast.Name and node.value is not None:
            out.setdefault(node.target.id, []).append(node.value)
    return out


def reaches(expr: ast.AST, test, values: dict[str, list[ast.expr]], depth: int = 4) -> bool:
    """Whether `expr`, or a value a local name in it was assigned (up to `depth` steps
    back), contains a node for which `test` holds."""
    seen: set[str] = set()
    frontier = [expr]
    for _ in range(depth + 1):
        following: list[ast.AST] = []
        for root in frontier:
            for node in subtree(root):
                if test(node):
                    return True
                if type(node) is ast.Name and node.id not in seen:
                    seen.add(node.id)
                    following.extend(values.get(node.id, ()))
        if not following:
            return False
        frontier = following
    return False
