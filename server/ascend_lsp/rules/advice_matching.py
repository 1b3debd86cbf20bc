"""Helpers shared by the advice families (NPU6xx performance, NPU7xx reproducibility):
the advice table, function- and loop-local reading of the AST, literal values."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import cast

from ..engine.checker import Checker, Reference
from ..engine.registry import TableRef
from ..knowledge.api_tables import Tables
from ..engine.walk import FUNCTION, Events, Scope, child_fields

ADVICE_TABLE = TableRef("mappings/ascend_tools/advice.toml")
ON_BY_DEFAULT = "On by default: "  # a rule page's reason for running an advice rule by default
DATALOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
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


def own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node of `body` in source order, not descending into nested functions and
    classes (which are read on their own)."""
    return _descend([*reversed(body)], _NESTED)


Calls = dict[str, list[ast.Call]]  # calls by the name they call (call_name)


@dataclass(slots=True)
class Own:
    """What a function's own code holds (its comprehensions and lambdas included, its nested
    functions and classes not): its calls by the name they call (call_name), its products
    (`*`, `@`) and its assignments, in the walk's order (sort by `position` where the
    source's order matters)."""

    calls: Calls = field(default_factory=dict)
    products: list[ast.BinOp] = field(default_factory=list)
    assigns: list[ast.Assign | ast.AnnAssign] = field(default_factory=list)


NOTHING_OWN = Own()  # for a function the statement does not hold; shared, so read only


def own_code(checker: Checker, scope: Scope) -> Own:
    """The Own of the function whose scope is `scope`, from the events of the statement being
    run: the walk has read its nodes already (grouped once per statement)."""
    events = checker.events
    known = checker.derived.get(id(events))
    if known is None or known[0] is not events:
        known = checker.derived[id(events)] = (events, _by_function(events))
    return cast(dict[Scope, Own], known[1]).get(scope, NOTHING_OWN)


def _by_function(events: Events) -> dict[Scope, Own]:
    """A function's scope → its Own, for the functions of `events`."""
    groups = {inner: Own() for _, inner in events.functions}
    owners: dict[Scope, Own | None] = dict(groups)  # a scope → the Own its code is part of (None: no function's)

    def owner(scope: Scope) -> Own | None:
        inner = scope
        while inner.kind == FUNCTION and inner not in groups:  # a comprehension's or a lambda's
            inner = inner.parent
        found = owners[scope] = groups.get(inner)
        return found

    for call, scope in events.calls:
        group = owners[scope] if scope in owners else owner(scope)
        if group is not None:
            group.calls.setdefault(call_name(call), []).append(call)
    for node, scope in events.products:
        group = owners[scope] if scope in owners else owner(scope)
        if group is not None:
            group.products.append(node)
    for node, scope in events.assigns:
        group = owners[scope] if scope in owners else owner(scope)
        if group is not None:
            group.assigns.append(node)
    return groups


def position(node: ast.expr | ast.stmt) -> tuple[int, int]:
    """A sort key for source order."""
    return node.lineno, node.col_offset


def inside(inner: ast.AST, outer: ast.AST) -> bool:
    """Whether `inner` is `outer` or under it, from their spans (which nest as the tree does)."""
    return ((outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset)  # type: ignore[attr-defined]
            and (inner.end_lineno, inner.end_col_offset) <= (outer.end_lineno, outer.end_col_offset))  # type: ignore[attr-defined]


def subtree(node: ast.AST) -> list[ast.AST]:
    """`node` and every node under it: what ast.walk gives (in another order, without the
    `ctx` and `op` nodes), as a list, at a fraction of its cost."""
    return _descend([node], frozenset())


def _descend(stack: list[ast.AST], nested: frozenset[type]) -> list[ast.AST]:
    """The nodes of `stack` (popped from its end) and under them, in source order, not below
    a node of the `nested` types."""
    out: list[ast.AST] = []
    pop, push, keep, AST = stack.pop, stack.append, out.append, ast.AST
    reversed_fields = _REVERSED_FIELDS
    while stack:
        node = pop()
        kind = type(node)
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


def callee_of(ref: Reference, names: frozenset[str]) -> ast.Call | None:
    """The call whose callee `ref` is, when its qualified name ends with one of `names`."""
    call = ref.call
    if type(call) is ast.Call and call.func is ref.node and ref.qualname.rpartition(".")[2] in names:
        return call
    return None


def call_name(call: ast.Call) -> str:
    func = call.func
    if type(func) is ast.Attribute:
        return func.attr
    return func.id if type(func) is ast.Name else ""


def literal(node: ast.expr | None) -> object:
    """The value of a constant (`-1` included); `...` (Ellipsis) when not a literal."""
    if type(node) is ast.Constant:
        return node.value
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub and type(node.operand) is ast.Constant:
        value = node.operand.value
        if type(value) is int or type(value) is float:
            return -value
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


def assignments(nodes: list[ast.Assign | ast.AnnAssign]) -> dict[str, list[ast.expr]]:
    """Local name → the values assigned to it (`a, b = x.chunk(2)` assigns the call to both)."""
    out: dict[str, list[ast.expr]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                names = [target] if type(target) is ast.Name else getattr(target, "elts", ())
                for name in names:
                    if type(name) is ast.Name:
                        out.setdefault(name.id, []).append(node.value)
        elif type(node.target) is ast.Name and node.value is not None:
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
