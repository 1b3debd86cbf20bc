"""Whether a file is too deeply nested for libcst, told cheaply, before a port process starts.

libcst's Python code gives up (RecursionError) a little past 320 levels of the stdlib AST
— 320 unary minus signs, a chain of 320 `+`, `and`, attributes or conditional expressions,
160 chained method calls, 138 nested lists, dicts or calls — and its native parser crashes
(SIGSEGV) further on: at 1,272 nested parentheses, 8,174 unary minus signs. Past
MAX_DEPTH a file is refused here with TOO_DEEP, where no port could be made but the port
process would crash or spend minutes (its parser takes 19 s for a chain of 3,000 `+`, 5 min
for 10,000); below it, the port process answers the same when libcst gives up. Nesting the
stdlib's own parser refuses is too deep as well: 200 parentheses, 100 levels of indentation.
"""

from __future__ import annotations

import ast

MAX_DEPTH = 400
# What the stdlib's tokenizer says of the nesting it refuses (other syntax errors are left to
# libcst, which reads syntax the running Python may not).
NESTING_ERRORS = frozenset({"too many nested parentheses", "too many levels of indentation",
                            "too many nested f-strings", "f-string: expressions nested too deeply"})


def too_deep(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except (RecursionError, MemoryError):  # MemoryError: "Parser stack overflowed"
        return True
    except SyntaxError as exc:
        return exc.msg in NESTING_ERRORS
    except ValueError:  # a NUL byte: libcst says what it makes of that
        return False
    return depth(tree) > MAX_DEPTH


def depth(tree: ast.AST) -> int:
    """The deepest node's level, a chain `a and b and c` counting one level per operand as
    in libcst's tree; without recursion, as the tree may be deeper than Python's stack."""
    deepest = 0
    stack = [(tree, 0)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        below = level + (len(node.values) if isinstance(node, ast.BoolOp) else 1)
        stack.extend((child, below) for child in ast.iter_child_nodes(node))
    return deepest
