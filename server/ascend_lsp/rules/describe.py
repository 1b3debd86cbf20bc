"""What the tables know of an API, as lines for people: `lsp-check explain` and the hover."""

from __future__ import annotations

from ..engine.analyzer import tables_for
from ..engine.config import Settings
from . import RULE_SET
from . import RULES


def describe_api(name: str, settings: Settings) -> list[str]:
    """What the tables say about `name` (used by explain and the hover)."""
    tables = tables_for(settings, RULE_SET)
    lines: list[str] = []
    entry = tables.lookup(name) or tables.methods.get(name.lstrip(".").removesuffix("()")) or tables.env.get(name)
    if entry is not None:
        rule = RULES[entry.rule]
        lines.append(f"`{name}` — {entry.rule} {rule.name} ({rule.severity.name.lower()})")
        if entry.deprecated:
            lines.append("deprecated upstream")
        if entry.prefix and entry.name != name:
            lines.append(f"matched by the entry for `{entry.name}` and everything below it")
        if entry.replacement:
            new = entry.replacement + name[len(entry.name):] if name.startswith(entry.name) else entry.replacement
            lines.append(f"replacement: `{new}` (fix: {entry.fix or 'none'})")
        else:
            lines.append("replacement: none")
        if entry.if_keyword:
            lines.append(f"applies when called with `{entry.if_keyword}=`")
        if entry.note:
            lines.append(f"note: {entry.note}")
        lines.append(f"source: {entry.source}")
        lines.append(f"table: {entry.origin}")
    support = tables.support.get(name)
    if support is not None:
        chips = ", ".join(f"{chip} {'✔' if ok else '✘'}" for chip, ok in support.chips.items())
        lines.append(f"Ascend support list (torch_npu {tables.support_version}): {chips}")
        if support.dtypes:
            lines.append(f"dtypes: only {', '.join(support.dtypes)}")
        if support.cpu_fallback:
            lines.append("may fall back to the CPU")
        if support.npu_name:
            lines.append(f"NPU name: {support.npu_name}")
        if support.limitations:
            lines.append(f"limitations: {support.limitations}")
        if support.npu_kernels:
            lines.append(f"torch_npu {tables.support_version} registers NPU kernels for every aten operator it runs: "
                         f"{', '.join(support.npu_kernels)}")
        if support.unsettled:
            lines.append(f"not settled by the kernels: {support.unsettled}")
        if support.no_npu_kernels:
            lines.append(f"torch_npu {tables.support_version} registers no NPU kernel for: "
                         f"{', '.join(support.no_npu_kernels)}")
        if support.npu_patched:
            lines.append(f"torch_npu {tables.support_version} replaces it at import: {support.npu_patched}")
        lines.append(f"source: {support.source}")
    return lines
