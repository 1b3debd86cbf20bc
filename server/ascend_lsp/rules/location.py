"""Where a rule lives: the handlers that report it, the table rows that carry its code, the
builder function that writes those rows and the upstream fact files it reads.

Computed from the registry and the files, never written by hand, so a new rule's page and
`lsp-check explain` say it too. The builder and the facts are found in a source checkout
(`mappings/build/`, `mappings/upstream/`); an installed package has only the tables.
"""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import functools
from dataclasses import dataclass

from ..knowledge.files import mappings_root, read_table
from ..engine.registry import HANDLERS, TABLE_HANDLER, Rule, TableRef

FACT_SUFFIXES = (".tsv", ".txt", ".md", ".jsonl")


@dataclass(frozen=True)
class Location:
    declared: str  # the module that declares the rule
    handlers: tuple[str, ...]  # "ascend_lsp.rules.cuda_usage.check_call"
    table: str  # the tables it reads, as the rule declares them
    rows: tuple[tuple[str, int], ...]  # (table file, rows with `rule = CODE`)
    builders: tuple[str, ...]  # "mappings/build/torch_npu_tables.py: cuda_table"
    facts: tuple[str, ...]  # "mappings/upstream/torch_npu/env_var_mapping.tsv"


def locate(rule: Rule) -> Location:
    handlers = tuple(sorted({f"{func.__module__}.{func.__qualname__}"
                             for entries in HANDLERS.values() for codes, func in entries
                             if rule.code in codes or (rule.table_driven and TABLE_HANDLER in codes)}))
    rows = tuple((name, count) for name, counts in _rule_rows().items()
                 if (count := counts.get(rule.code, 0)))
    # tables it reads whole (the support list): no row names the rule
    unnamed = [p for p in _declared_tables(rule.table) if not any(fnmatch.fnmatch(name, p) for name, _ in rows)]
    functions = [f for f in _builder_functions() if rule.code in f.strings]
    # the code is in module-level data, or the table names no rule: the functions that write the table
    files = unnamed or ([] if functions else [name for name, _ in rows])
    names = {name.rpartition("/")[2] for name in files}
    functions += [f for f in _builder_functions() if f not in functions
                  and any(fnmatch.fnmatch(n, p) or fnmatch.fnmatch(p, n) for n in names for p in f.patterns)]
    facts = sorted({fact for f in functions for fact in f.facts})
    return Location(rule.module, handlers, str(rule.table) if unnamed else "", rows, tuple(f"{f.module}: {f.name}" for f in functions), tuple(facts))


def describe(location: Location) -> list[str]:
    """Markdown list items, for the rule page and `lsp-check explain`."""
    lines = [f"- Declared in: `{location.declared}`"]
    if location.handlers:
        lines.append(f"- Handler: {', '.join(f'`{h}`' for h in location.handlers)}")
    else:
        lines.append("- Handler: none; the engine or the runner reports it (see the declaring module)")
    for name, count in location.rows:
        lines.append(f"- Table: `{name}`, {count} row{'s' * (count != 1)} with this code")
    if location.table:
        lines.append(f"- Table: `{location.table}` (read whole: its rows name no rule)")
    if location.builders:
        lines.append(f"- Built by: {', '.join(f'`{b}`' for b in location.builders)} (`make mappings`)")
    if location.facts:
        lines.append(f"- Upstream facts: {', '.join(f'`{f}`' for f in location.facts)}")
    return lines


def _declared_tables(table: TableRef | None) -> list[str]:
    """The file a rule's `table` names, `<version>` as a glob (`mappings/torch_npu/support-*.toml`)."""
    return [table.path.replace("<version>", "*")] if table else []


@functools.cache
def _rule_rows() -> dict[str, dict[str, int]]:
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
class _Function:
    module: str  # mappings/build/torch_npu_tables.py
    name: str
    strings: frozenset[str]  # its string constants
    patterns: tuple[str, ...]  # its file names, f-string holes as `*`
    facts: tuple[str, ...]  # the upstream fact files those name


@functools.cache
def _builder_functions() -> tuple[_Function, ...]:
    build = mappings_root() / "build"
    upstream = mappings_root() / "upstream"
    if not build.is_dir():  # an installed package ships the tables only
        return ()
    facts = sorted(p.relative_to(upstream.parent.parent).as_posix() for p in upstream.rglob("*")
                   if p.suffix in FACT_SUFFIXES and p.parent != upstream)
    out: list[_Function] = []
    for module in sorted(build.glob("*_tables.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        # module-level string constants (FACTS = "x.md"): a function that names one reads it
        constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                     and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                     for target in node.targets if isinstance(target, ast.Name)}
        functions: list[_Function] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                strings, patterns = _strings(node, constants)
                named = tuple(f for f in facts if any(fnmatch.fnmatch(f.rpartition("/")[2], p) for p in patterns))
                functions.append(_Function(f"mappings/build/{module.name}", node.name, frozenset(strings), patterns,
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

