"""`advice.own_code`: what a function's own code holds, grouped from the walk's events of the
statement being run (the fused-pattern matchers read nothing of the AST again)."""

from __future__ import annotations

import ast

from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.analyzer import analyze_with
from ascend_lsp.rules.advice_matching import own_code, position

from ..rulesets import Handlers

TEXT = '''\
@decorate(first())
def outer(x, y=default()):
    a = x.softmax(-1)
    b = [row.mean() for row in a]
    f = lambda t: t.rsqrt()
    c: int = a @ b * 2 + y

    def inner(z):
        return z.silu() * z

    class Local:
        field = build()

    return a.cat(b)


def after():
    return 1 + 2
'''


def own_of(text: str) -> dict[str, tuple[dict[str, list[int]], list[str], list[int]]]:
    """Function name → (called name → lines, products as `left op right`, assignment lines)."""
    seen: dict[str, tuple[dict[str, list[int]], list[str], list[int]]] = {}

    def on_function(checker, func, scope) -> None:
        own = own_code(checker, scope)
        calls = {name: [c.lineno for c in sorted(nodes, key=position)] for name, nodes in own.calls.items()}
        products = sorted(ast.unparse(node) for node in own.products)
        seen[func.name] = calls, products, sorted(node.lineno for node in own.assigns)

    analyze_with(text, Settings(), "t.py", rules=Handlers(function=[on_function]))
    return seen


def test_a_function_owns_its_comprehensions_and_lambdas_not_its_nested_functions_and_classes() -> None:
    own = own_of(TEXT)
    calls, products, assigns = own["outer"]
    # not `decorate`/`first`/`default`: the decorator and the defaults run in the enclosing scope
    assert calls == {"softmax": [3], "mean": [4], "rsqrt": [5], "cat": [14]}
    assert products == ["a @ b", "a @ b * 2"]  # `*` and `@`, not `+`
    assert assigns == [3, 4, 5, 6]  # the annotated assignment too
    assert own["inner"] == ({"silu": [9]}, ["z.silu() * z"], [])
    assert own["after"] == ({}, [], [])


def test_the_methods_of_a_class_are_grouped_apart() -> None:
    text = "class Model:\n    def one(self, x):\n        return x.softmax(-1)\n\n    def two(self, x):\n" \
           "        return x.rsqrt() * x\n"
    own = own_of(text)
    assert own["one"] == ({"softmax": [3]}, [], [])
    assert own["two"] == ({"rsqrt": [6]}, ["x.rsqrt() * x"], [])
