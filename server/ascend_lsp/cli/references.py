"""The API references of a file, for the migration report: every name or attribute chain
that resolves through the file's imports to `torch`, `torch_npu` or a name the mapping
tables know. They come from the same analysis as the findings (`analyze(references=True)`),
so the report counts exactly what the rules see, in one pass.

Not counted: names that are only types, in a hint or in `isinstance()` (`x: torch.LongTensor`
runs nothing on the device), and
values that are not APIs (dtypes, memory formats, constants). Either still counts where
a rule flags it, since every finding is a site of its own (report.py).
"""

from __future__ import annotations

from ..engine.analyzer import Analysis
from ..knowledge.api_tables import Tables

API_ROOTS = ("torch", "torch_npu")
NOT_APIS = frozenset(f"torch.{name}" for name in (
    "float", "float16", "float32", "float64", "double", "half", "bfloat16", "complex32", "complex64", "complex128",
    "chalf", "cfloat", "cdouble", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "short",
    "int", "long", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "qint8", "quint8",
    "qint32", "quint4x2", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "strided",
    "sparse_coo", "inf", "nan", "pi", "e",
))


def api_references(analysis: Analysis, tables: Tables) -> list[tuple[int, int, int, int, str, bool]]:
    """(line, col, end_line, end_col, qualified name, called) for each API reference;
    0-based lines, code-point columns, the same ranges findings carry."""
    out = []
    for rng, name, called, type_only in analysis.references or ():
        if "." not in name or name in NOT_APIS or type_only:
            continue  # a bare module (`torch` passed around), a value or a type: not an API use
        if name.partition(".")[0] in API_ROOTS or tables.lookup(name) is not None:
            out.append((rng.start_line, rng.start_col, rng.end_line, rng.end_col, name, called))
    return out
