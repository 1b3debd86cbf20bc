"""Which functions can run, and which MindSpore port pairs with one: a pure `ast` parse.

Runs in the language server, so it never imports torch; a file that does not parse
(the user is typing) simply has no targets.
"""

from __future__ import annotations

import ast
import re

PAIR_SUFFIX = "_ms"
PAIR_MARKER = re.compile(r"#\s*ascend-lsp:\s*mindspore-pair\s*=\s*([A-Za-z_][A-Za-z0-9_]*)")


def extract_targets(text: str) -> list[tuple[str, int]]:
    """Top-level functions that can run without arguments: (name, 0-based line of `def`).

    A function qualifies when every parameter has a default (so fixture-free pytest tests
    do too); async functions and functions needing arguments (fixtures) do not.
    """
    tree = parsed(text)
    if tree is None:
        return []
    return [(node.name, node.lineno - 1) for node in tree.body
            if isinstance(node, ast.FunctionDef) and not _required_parameters(node)]


def find_mindspore_pair(text: str, function: str) -> str | None:
    """The MindSpore port of `function`: named by a `# ascend-lsp: mindspore-pair=NAME` comment
    on the `def` line or the line above it (or above its decorators), else `<function>_ms`."""
    tree = parsed(text)
    if tree is None:
        return None
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    node = functions.get(function)
    if node is None:
        return None
    lines = text.splitlines()
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    for number in (node.lineno, first - 1):
        if 1 <= number <= len(lines) and (match := PAIR_MARKER.search(lines[number - 1])):
            return match.group(1)
    candidate = function + PAIR_SUFFIX
    return candidate if candidate in functions else None


def function_line(text: str, function: str) -> int | None:
    """1-based line of the top-level `def function`, or None."""
    tree = parsed(text)
    if tree is None:
        return None
    return next((node.lineno for node in tree.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function), None)


def _required_parameters(node: ast.FunctionDef) -> list[str]:
    args = node.args
    positional = args.posonlyargs + args.args
    required = positional[: len(positional) - len(args.defaults)]
    required += [a for a, default in zip(args.kwonlyargs, args.kw_defaults) if default is None]
    return [a.arg for a in required]


def parsed(text: str) -> ast.Module | None:
    """The module's AST, or None when it does not parse: a syntax error, a NUL byte, or
    nesting too deep for Python's parser (MemoryError) or its AST builder (RecursionError)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
