"""Where a rule lives: the handlers that report it, the table rows that carry its code, the
builder function that writes those rows and the upstream fact files it reads.

Computed from the registry and the files (knowledge/provenance.py), never written by hand, so
a new rule's page and `lsp-check explain` say it too.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from ..engine.registry import HANDLERS, TABLE_HANDLER, Rule, TableRef
from ..knowledge.provenance import builder_functions, rule_rows


@dataclass(frozen=True)
class Location:
    declared: str  # the module that declares the rule
    handlers: tuple[str, ...]  # "ascend_lsp.rules.npu1xx_cuda.on_reference"
    table: str  # the tables it reads, as the rule declares them
    rows: tuple[tuple[str, int], ...]  # (table file, rows with `rule = CODE`)
    builders: tuple[str, ...]  # "mappings/build/torch_npu_tables.py: cuda_table"
    facts: tuple[str, ...]  # "mappings/upstream/torch_npu/env_var_mapping.tsv"
    reported_by: tuple[str, ...] = ()  # where a rule without a handler is reported (Rule.reported_by)


def locate(rule: Rule) -> Location:
    handlers = tuple(sorted({f"{func.__module__}.{func.__qualname__}"
                             for entries in HANDLERS.values() for codes, func in entries
                             if rule.code in codes or (rule.table_driven and TABLE_HANDLER in codes)}))
    rows = tuple((name, count) for name, counts in rule_rows().items()
                 if (count := counts.get(rule.code, 0)))
    # tables it reads whole (the support list): no row names the rule
    unnamed = [p for p in _declared_tables(rule.table) if not any(fnmatch.fnmatch(name, p) for name, _ in rows)]
    functions = [f for f in builder_functions() if rule.code in f.strings]
    # the code is in module-level data, or the table names no rule: the functions that write the table
    files = unnamed or ([] if functions else [name for name, _ in rows])
    names = {name.rpartition("/")[2] for name in files}
    functions += [f for f in builder_functions() if f not in functions
                  and any(fnmatch.fnmatch(n, p) or fnmatch.fnmatch(p, n) for n in names for p in f.writes)]
    facts = sorted({fact for f in functions for fact in f.facts})
    return Location(rule.module, handlers, str(rule.table) if unnamed else "", rows, tuple(f"{f.module}: {f.name}" for f in functions), tuple(facts),
                    rule.reported_by)


def location_lines(location: Location) -> list[str]:
    """Markdown list items, for the rule page and `lsp-check explain`."""
    lines = [f"- Declared in: `{location.declared}`"]
    if location.handlers:
        lines.append(f"- Handler: {', '.join(f'`{h}`' for h in location.handlers)}")
    if location.reported_by:
        lines.append(f"- Reported by: {', '.join(f'`{r}`' for r in location.reported_by)} (no handler)")
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
