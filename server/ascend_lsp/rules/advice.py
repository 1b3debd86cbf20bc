"""Helpers shared by the advice families (NPU6xx performance, NPU7xx reproducibility):
the advice table, function- and loop-local reading of the AST, literal values."""

from __future__ import annotations

import ast
import bisect
from ..engine.checker import Checker
from ..engine.tables import Tables
from ..engine.walk import child_nodes

ADVICE_TABLE = "mappings/ascend_tools/advice.toml"
NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


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


def places(checker: Checker, node: ast.stmt, needle: str) -> list[int]:
    """Where `needle`, a word most code lacks, starts on `node`'s lines (offsets in the
    file's text). Its places in the file are found once, with their lines: functions nest
    and loops sit in functions, so searching each one's lines again would read the file
    many times over, and a file without the word (most) costs one search."""
    text = checker.source.text
    known = checker.derived.get(id(text))
    if known is None:
        known = checker.derived[id(text)] = (text, {})
    index: dict[str, tuple[list[int], list[int]]] = known[1]
    found = index.get(needle)
    if found is None:
        found = index[needle] = _places(text, needle)
    offsets, lines = found
    if not offsets:
        return offsets
    return offsets[bisect.bisect_left(lines, node.lineno - 1):bisect.bisect_right(lines, node.end_lineno - 1)]


def mentions(checker: Checker, node: ast.stmt, *needles: str) -> list[str]:
    """Which of `needles` occur on `node`'s lines."""
    return [needle for needle in needles if places(checker, node, needle)]


def _places(text: str, needle: str) -> tuple[list[int], list[int]]:
    """(where `needle` starts in `text`, the 0-based line of each). The lines are counted
    between places (str.count: no split of the text into lines, which nothing else here
    needs); a needle never starts at a line break, so none is cut in two."""
    offsets: list[int] = []
    lines: list[int] = []
    crs = "\r" in text
    line = previous = 0
    at = text.find(needle)
    while at != -1:
        line += text.count("\n", previous, at)
        if crs:  # \r\n, \r and \n each end a line
            line += text.count("\r", previous, at) - text.count("\r\n", previous, at)
        offsets.append(at)
        lines.append(line)
        previous = at
        at = text.find(needle, at + 1)
    return offsets, lines


def own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node of `body` in source order, not descending into nested functions and
    classes (which are read on their own)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = body[::-1]
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, NESTED):
            stack.extend(reversed(child_nodes(node)))
    return out


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
            for node in ast.walk(root):
                if test(node):
                    return True
                if type(node) is ast.Name and node.id not in seen:
                    seen.add(node.id)
                    following.extend(values.get(node.id, ()))
        if not following:
            return False
        frontier = following
    return False
