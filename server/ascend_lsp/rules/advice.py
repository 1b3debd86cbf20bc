"""Helpers shared by the advice families (NPU6xx performance, NPU7xx reproducibility):
the advice table, function- and loop-local reading of the AST, literal values."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass

from ..engine.checker import Checker
from ..engine.tables import Tables
from ..engine.walk import child_fields

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


@dataclass(frozen=True, slots=True)
class WordPattern:
    """A pattern whose matches start with `word`: looked for from the word's first place."""

    word: str
    pattern: re.Pattern[str]


Needle = str | WordPattern


def places(checker: Checker, node: ast.AST, needle: Needle) -> list[int]:
    """Where `needle` (a word most code lacks, or a pattern) starts on `node`'s lines
    (offsets in the file's text). Its places in the file are found once, with their lines:
    functions nest and loops sit in functions, so searching each one's lines again would
    read the file many times over, and a file without the word (most) costs one search,
    shared with the word gates (Checker.first)."""
    offsets, lines = _found(checker, needle)
    if not offsets:
        return offsets
    return offsets[bisect.bisect_left(lines, node.lineno - 1):bisect.bisect_right(lines, node.end_lineno - 1)]


def mentions(checker: Checker, node: ast.AST, *needles: Needle) -> list[Needle]:
    """Which of `needles` occur on `node`'s lines."""
    return [needle for needle in needles if places(checker, node, needle)]


def on_lines(checker: Checker, node: ast.AST, needles: tuple[Needle, ...]) -> bool:
    """Whether one of `needles` occurs on `node`'s lines: one search of the sorted lines of
    them all, for the many nodes (functions) of a file asked about the same needles."""
    known = checker.derived.get(id(needles))
    if known is None or known[0] is not needles:
        known = checker.derived[id(needles)] = (needles, sorted({line for needle in needles
                                                                 for line in _found(checker, needle)[1]}))
    lines: list[int] = known[1]
    at = bisect.bisect_left(lines, node.lineno - 1)
    return at < len(lines) and lines[at] <= node.end_lineno - 1


def within(checker: Checker, node: ast.AST, *needles: str) -> list[str]:
    """Which of `needles` occur on `node`'s lines, searched there alone: for words common in
    a file (`@`, `mean`) asked about only a few of its nodes."""
    source = checker.source
    start, end = source.offset(node.lineno - 1, 0), source.offset(node.end_lineno, 0)
    return [needle for needle in needles if source.text.find(needle, start, end) != -1]


def _index(checker: Checker) -> dict:
    """The file's needle → (offsets, lines) (per Checker)."""
    text = checker.source.text
    known = checker.derived.get(id(text))
    if known is None:
        known = checker.derived[id(text)] = (text, {})
    return known[1]  # type: ignore[return-value]


def _found(checker: Checker, needle: Needle) -> tuple[list[int], list[int]]:
    index = _index(checker)
    found = index.get(needle)
    if found is None:
        text = checker.source.text
        if isinstance(needle, str):
            offsets: list[int] = []
            at = checker.first(needle)
            while at != -1:
                offsets.append(at)
                at = text.find(needle, at + 1)
        else:
            start = checker.first(needle.word)
            offsets = [m.start() for m in needle.pattern.finditer(text, start)] if start >= 0 else []
        found = index[needle] = (offsets, _lines(text, offsets))
    return found


def _lines(text: str, offsets: list[int]) -> list[int]:
    """The 0-based line of each of `offsets` (ascending), counted between them (str.count:
    no split of the text into lines, which nothing else here needs); a needle never starts
    at a line break, so none is cut in two."""
    lines: list[int] = []
    crs = "\r" in text if offsets else False
    line = previous = 0
    for at in offsets:
        line += text.count("\n", previous, at)
        if crs:  # \r\n, \r and \n each end a line
            line += text.count("\r", previous, at) - text.count("\r\n", previous, at)
        lines.append(line)
        previous = at
    return lines


def own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node of `body` in source order, not descending into nested functions and
    classes (which are read on their own)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = body[::-1]
    pop, push, keep, AST = stack.pop, stack.append, out.append, ast.AST
    while stack:
        node = pop()
        keep(node)
        if isinstance(node, NESTED):
            continue
        for name in reversed(child_fields(type(node))):  # child_nodes, inline and reversed: the stack pops them in order
            value = getattr(node, name, None)
            if type(value) is list:
                for child in reversed(value):
                    if isinstance(child, AST):
                        push(child)
            elif isinstance(value, AST):
                push(value)
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
