"""Where the facts of mappings/ come from: which rows of which table name each rule code, and
which builder function (mappings/build/*_tables.py) writes a table from which upstream fact
files. The builder and the facts are found in a source checkout (`mappings/build/`,
`mappings/upstream/`); an installed package has only the tables."""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import functools
from dataclasses import dataclass

from .files import mappings_root, read_table

FACT_SUFFIXES = (".tsv", ".txt", ".md", ".jsonl")


@functools.cache
def rule_rows() -> dict[str, dict[str, int]]:
    """table file (as `mappings/...`) → rule code → rows that name it."""
    root = mappings_root()
    out: dict[str, dict[str, int]] = {}
    for path in sorted(root.glob("*/*.toml")):
        counts: dict[str, int] = {}
        for section in read_table(path).values():
            if isinstance(section, list):
                for row in section:
                    if isinstance(row, dict) and isinstance(row.get("rule"), str):
                        counts[row["rule"]] = counts.get(row["rule"], 0) + 1
        out[f"mappings/{path.relative_to(root).as_posix()}"] = counts
    return out


@dataclass(frozen=True)
class BuilderFunction:
    module: str  # mappings/build/torch_npu_tables.py
    name: str
    strings: frozenset[str]  # its string constants
    patterns: tuple[str, ...]  # its file names, f-string holes as `*`
    facts: tuple[str, ...]  # the upstream fact files those name


@functools.cache
def builder_functions() -> tuple[BuilderFunction, ...]:
    build = mappings_root() / "build"
    upstream = mappings_root() / "upstream"
    if not build.is_dir():  # an installed package ships the tables only
        return ()
    facts = sorted(p.relative_to(upstream.parent.parent).as_posix() for p in upstream.rglob("*")
                   if p.suffix in FACT_SUFFIXES and p.parent != upstream)
    out: list[BuilderFunction] = []
    for module in sorted(build.glob("*_tables.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        # module-level string constants (FACTS = "x.md"): a function that names one reads it
        constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                     and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                     for target in node.targets if isinstance(target, ast.Name)}
        functions: list[BuilderFunction] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                strings, patterns = _strings(node, constants)
                named = tuple(f for f in facts if any(fnmatch.fnmatch(f.rpartition("/")[2], p) for p in patterns))
                functions.append(BuilderFunction(f"mappings/build/{module.name}", node.name, frozenset(strings), patterns,
                                           named))
        # a function handed its facts by the module's build() reads what build() names
        read = tuple(sorted({fact for f in functions for fact in f.facts}))
        out.extend(f if f.facts else dataclasses.replace(f, facts=read) for f in functions)
    return tuple(out)


def _strings(node: ast.AST, constants: dict[str, str]) -> tuple[set[str], tuple[str, ...]]:
    strings: set[str] = set()
    patterns: list[str] = []
    for child in ast.walk(node):
        value = child.value if isinstance(child, ast.Constant) else \
            constants.get(child.id) if isinstance(child, ast.Name) else None
        if isinstance(value, str):
            strings.add(value)
            if "." in value and " " not in value:
                patterns.append(value)
        elif isinstance(child, ast.JoinedStr):
            pattern = "".join(str(v.value) if isinstance(v, ast.Constant) else "*" for v in child.values)
            if "." in pattern and " " not in pattern and "/" not in pattern:
                patterns.append(pattern)
    return strings, tuple(dict.fromkeys(p for p in patterns if p.endswith((".toml", *FACT_SUFFIXES))))

