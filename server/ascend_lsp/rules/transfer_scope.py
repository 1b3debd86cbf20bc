"""Where a module imports `transfer_to_npu`, what it maps runs on the NPU as written: the `torch.cuda`
names it patches, `.cuda()` and `.is_cuda`, a device string or `nccl` passed into a function (the
rows marked `transfer-maps` in mappings/torch_npu/cuda.toml, from its patches). Their findings are
info there, naming the import, with their fixes: a port that must also run without `transfer_to_npu`
still makes them.

What an import covers: after one at the module's level (a script's `from torch_npu.contrib import
transfer_to_npu`, also under an `if` or a `try:` there), the rest of the module and every function of
it; after one inside a function (`if importlib.util.find_spec("torch_npu"): ... from torch_npu.contrib
import transfer_to_npu` in a model's loader), the rest of that function. Not a comparison
(`x.device.type == "cuda"`), which it does not rewrite; not the code above an import at the module's
level; not another module, which may run before it."""

from __future__ import annotations

import ast

from ..engine.checker import Checker
from ..engine.guards import TRANSFER_TO_NPU_IMPORT, transfer_to_npu_imports
from ..engine.model import Severity
from ..engine.text import with_newlines
from ..engine.walk import StringContext, last_name
from ..knowledge.api_tables import Entry
from ..opt_in_modules import block_headers
from .advice_matching import inside
from .statement_facts import statement_facts

# the rule pages' words (NPU101, NPU102, NPU103, NPU107)
TRANSFER_SCOPE_DOC = (
    "Info after the module imports `transfer_to_npu` (at its level: above the line, or anywhere for the code of its "
    "functions; or earlier in the same function), for what that maps to the NPU as written: the rows marked "
    "`transfer-maps` (the `torch.cuda` names it patches, `.cuda()`, `.is_cuda`, a device string or `nccl` passed into a "
    "function; not a comparison, `torch.device(\"cuda\")`, `torch.cuda.DoubleTensor` or the graph APIs). The message "
    "names the import, and the fix stays, for a port that must also run without it (rules/transfer_scope.py).")
TRANSFER_MAPS = (" (After `transfer_to_npu` is imported (line {line}), which maps this to the NPU: it runs there as "
                 "written. Port it where the code must also run without `transfer_to_npu`.)")


def transfer_imports(text: str) -> list[int]:
    """The 0-based lines of the imports of `transfer_to_npu` at the module's level: unindented, or
    under an `if` or a `try:` there (block_headers: every block around it read, none a function or a
    class)."""
    found = []
    text = with_newlines(text)
    for start in transfer_to_npu_imports(text):
        indent = _indent_of(text, start)
        if indent:
            headers = block_headers(text, start, indent)
            if not headers or _indent_of(text, headers[-1][0]) or any(
                    header.startswith(("def", "async", "class")) for _, header in headers):
                continue
        found.append(text.count("\n", 0, start))
    return found


def _indent_of(text: str, offset: int) -> int:
    end = text.find("\n", offset) % (len(text) + 1)
    line = text[offset:end]
    return len(line) - len(line.lstrip(" \t"))


def _imports_in(checker: Checker, function: ast.AST) -> list[int]:
    """The 1-based lines of the imports of `transfer_to_npu` in a function, read once per function."""
    key = ("transfer-imports", id(function))
    known = checker.derived.get(key)
    if known is None or known[0] is not function:
        lines = [node.lineno for node in ast.walk(function) if isinstance(node, (ast.Import, ast.ImportFrom))
                 and any(TRANSFER_TO_NPU_IMPORT.search(f"{getattr(node, 'module', '') or ''} import {alias.name}")
                         for alias in node.names)]
        known = checker.derived[key] = (function, lines)
    return known[1]  # type: ignore[return-value]


def transfer_place(checker: Checker, entry: Entry, node: ast.AST) -> tuple[Severity, str] | None:
    """Info and why, for a row `transfer_to_npu` maps at a node after an import of it covers it: one at
    the module's level above it, or above it in a function that holds it."""
    if not entry.transfer_maps or not checker.text_fact(
            "names-transfer", lambda c: "transfer_to_npu" in c.source.text):
        return None
    line = node.lineno  # type: ignore[attr-defined]  # a reported node is an expression or a statement
    facts = statement_facts(checker)
    functions = [f for f in facts.functions if inside(node, f)]
    for function in sorted(functions, key=lambda f: -f.lineno):  # type: ignore[attr-defined]
        imported = [at for at in _imports_in(checker, function) if at < line]
        if imported:
            return Severity.INFO, TRANSFER_MAPS.format(line=imported[-1])
    module = checker.text_fact("transfer-imports", lambda c: transfer_imports(c.source.text))
    imported = [at + 1 for at in module if at + 1 < line or functions]
    if imported:
        return Severity.INFO, TRANSFER_MAPS.format(line=imported[0])
    return None


def passed_in_place(checker: Checker, entry: Entry, node: ast.AST, context: StringContext) -> tuple[Severity, str] | None:
    """transfer_place for a string passed into a function, which `transfer_to_npu` rewrites where the function is one
    it wraps; not into `torch.device(...)`, which it leaves a CUDA device (compared later, it stays one)."""
    if context.kind != "arg" or context.call is None or last_name(context.call.func) == "device":
        return None
    return transfer_place(checker, entry, node)
