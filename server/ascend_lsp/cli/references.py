"""The API references of a file, for the migration report: every name or attribute chain
that resolves through the file's imports to `torch`, `torch_npu` or a name the mapping
tables know. Found with the engine's own parse, walk and resolution (a Checker running
one collecting handler), so the report counts exactly what the rules see.

Not counted: type annotations (`x: torch.LongTensor` runs nothing on the device) and
values that are not APIs (dtypes, memory formats, constants). Either still counts where
a rule flags it, since every finding is a site of its own (report.py).
"""

from __future__ import annotations

import ast

from ..engine.analyzer import parse, tables_for
from ..engine.checker import Checker, Reference
from ..engine.config import Settings
from ..engine.text import SourceText
from ..engine.walk import module_context, walk_statement
from ..rules.base import EVENT_KINDS

API_ROOTS = ("torch", "torch_npu")
NOT_APIS = frozenset(f"torch.{name}" for name in (
    "float", "float16", "float32", "float64", "double", "half", "bfloat16", "complex32", "complex64", "complex128",
    "chalf", "cfloat", "cdouble", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "short",
    "int", "long", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "qint8", "quint8",
    "qint32", "quint4x2", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "strided",
    "sparse_coo", "inf", "nan", "pi", "e",
))


def references_of(text: str, settings: Settings) -> list[tuple[int, int, int, int, str, bool]]:
    """(line, col, end_line, end_col, qualified name, called) for each API reference;
    0-based lines, code-point columns, the same ranges findings carry."""
    tables = tables_for(settings)
    source = SourceText(text)
    tree, _ = parse(text)
    module = module_context(tree)
    found: list[Reference] = []
    checker = Checker(source, module, settings, tables)
    checker.handlers = {kind: [] for kind in EVENT_KINDS} | {"reference": [lambda _checker, ref: found.append(ref)]}
    for stmt in tree.body:
        checker.run(walk_statement(stmt, module.scope))
    annotations = annotation_nodes(tree)
    out = []
    for ref in found:
        name = ref.qualname
        if "." not in name or name in NOT_APIS or id(ref.node) in annotations:
            continue  # a bare module (`torch` passed around), a value or a type: not an API use
        if name.partition(".")[0] in API_ROOTS or tables.lookup(name) is not None:
            rng = source.range_of(ref.node)
            out.append((rng.start_line, rng.start_col, rng.end_line, rng.end_col, name, ref.call is not None))
    return out


def annotation_nodes(tree: ast.Module) -> set[int]:
    """ids of every node inside a parameter, return or variable annotation. Walks the
    statements only (expressions hold no annotations), which is cheap."""
    ids: set[int] = set()
    stack: list = list(tree.body)
    while stack:
        stmt = stack.pop()
        kind = type(stmt)
        found = []
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            args = stmt.args
            found = [a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                     if a is not None]
            found.append(stmt.returns)
        elif kind is ast.AnnAssign:
            found = [stmt.annotation]
        for annotation in found:
            if annotation is not None:
                ids.update(id(node) for node in ast.walk(annotation))
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(stmt, name, ()))
    return ids
