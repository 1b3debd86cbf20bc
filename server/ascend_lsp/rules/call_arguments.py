"""Reading a call's arguments and an assignment's key, for the rules that judge a call by its
shape (the NPU1xx, NPU3xx and NPU4xx rules of real-world failures)."""

from __future__ import annotations

import ast


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def constant(node: ast.expr | None) -> object:
    """The value of a literal, else a marker that equals nothing."""
    return node.value if type(node) is ast.Constant else NotImplemented


def passed(call: ast.Call, name: str, position: int | None = None) -> ast.expr | None:
    """The argument given for a parameter, by keyword or position; None when absent or `None`."""
    kw = keyword(call, name)
    node = kw.value if kw else (call.args[position] if position is not None and len(call.args) > position else None)
    return None if node is None or constant(node) is None else node


def assigned_key(target: ast.expr) -> str | None:
    """`x.key = ...` and `x["key"] = ...`: the key."""
    if type(target) is ast.Attribute:
        return target.attr
    if type(target) is ast.Subscript and type(target.slice) is ast.Constant and type(target.slice.value) is str:
        return target.slice.value
    return None
