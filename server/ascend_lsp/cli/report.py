"""`lsp-check report`: the size of a migration, per file and in total.

Every API reference (a site) gets exactly one status, so the columns add up to the
references found:

- a site is a resolved `torch.*` / `torch_npu.*` / table-known name (references.py), or
  the range of a finding that is not at such a name (`.cuda()`, `"cuda:0"`, `"nccl"`,
  `CUDA_VISIBLE_DEVICES`, an import the tables flag);
- a site with findings takes the status of its hardest one: unsupported > manual >
  unsafe > safe (a finding lowered to info is manual at most: the code or the facts show
  the API runs, or runs only where the user opts in);
- a site without findings is supported, unknown or other (see STATUSES).

Syntax errors (E999) and files that could not be checked (E902) are findings but not
sites; the files not checked are also listed on their own, with the reason. Advice (NPU6xx
performance, NPU7xx reproducibility) is not migration work: it has its own section
(fused-API opportunities and host synchronisations per file) and counts neither as a site
nor towards the effort.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
from collections import Counter
from typing import Callable

from .. import __version__
from ..engine.analyzer import tables_for
from ..engine.config import Settings
from ..engine.model import Severity
from ..knowledge.api_tables import Tables
from ..rules import RULE_SET, RULES
from .baseline import collapse_spaces
from .check import FileResult, Record
from .output import NOT_CHECKED, not_checked
from .report_terms import (COLUMNS, EFFORT, EFFORT_RULE, STATUS_KEYS, STATUSES, mindspore_sentence,
                           not_checked_sentence, performance_sentence, plural, target_line)

REPORT_FORMATS = ("html", "md", "csv", "json")
UNSUPPORTED_RULES = ("NPU104", "NPU201", "NPU3", "NPU403", "MS101")
SEVERITY_RANK = {"safe": 0, "unsafe": 1, "manual": 2, "unsupported": 3}
TOP = 10
ADVICE_RULES = ("NPU6", "NPU7")
FUSED_RULES = ("NPU601", "NPU602", "NPU603", "NPU604", "NPU605", "NPU606", "NPU607", "NPU608")
HOST_SYNC_RULES = ("NPU611",)
PERFORMANCE_COLUMNS = ("path", "fused_apis", "host_syncs", "other_advice")


def finding_status(record: Record) -> str:
    """A finding's status; one the code or the facts lowered to info (an API the list marks ✘ that
    the wheel has kernels for, an opt-in import) is for a person to look at, not unsupported."""
    if record.fix_applicability in ("safe", "unsafe"):
        return record.fix_applicability
    if record.code.startswith(UNSUPPORTED_RULES) and record.severity < Severity.INFO:
        return "unsupported"
    return "manual"


def effort(counts: Counter, findings: int) -> str:
    unsupported, person = counts["unsupported"], counts["manual"] + counts["unsafe"]
    if not findings:
        return "none"
    if unsupported >= 3 or person > 15:
        return "high"
    if unsupported or person > 3:
        return "medium"
    return "low"


def reference_status(name: str, tables: Tables, settings: Settings) -> str:
    """The status of a reference without a finding."""
    if settings.target == "mindspore":
        return "unknown" if name not in tables.counterparts else "other"
    if tables.lookup(name) is not None:
        return "other"  # a mapped name needs changing even where the support list has it (torch.cuda.*)
    support = tables.support.get(name)
    if support is None:
        return "unknown"
    return "supported" if support.supported_on(settings.chip) else "other"


class FileReport:
    """One file's sites, their statuses and what feeds the totals."""

    def __init__(self, result: FileResult, settings: Settings) -> None:
        tables = tables_for(settings, RULE_SET)
        self.path = result.path
        self.error = result.error
        self.lines = result.lines
        records = [r for r in result.records if not r.code.startswith(ADVICE_RULES)]
        self.advice = Counter(r.code for r in result.records if r.code.startswith(ADVICE_RULES))
        self.findings = len(records)
        self.rules = Counter(r.code for r in records)
        self.fixable = {kind: Counter(r.code for r in records if r.fix_applicability == kind)
                        for kind in ("safe", "unsafe")}
        sites: dict[tuple, str] = {}
        self.unsupported_apis: Counter = Counter()
        for record in records:
            if record.code in ("E999", NOT_CHECKED):
                continue
            where = (record.line, record.col, record.end_line, record.end_col)
            status = finding_status(record)
            if status == "unsupported":  # by API, or by the line for shapes without one (a `.cu` source)
                api = record.extra.get("api") or collapse_spaces(record.source_line)[:80]
                self.unsupported_apis[(api, record.code)] += 1
            if SEVERITY_RANK[status] >= SEVERITY_RANK.get(sites.get(where, "safe"), 0):
                sites[where] = status
        self.unknown_apis: Counter = Counter()
        self.torch_calls: Counter = Counter()  # by what the MindSpore table says of the callee
        for line, col, end_line, end_col, name, called in result.references or ():
            where = (line, col, end_line, end_col)
            if where not in sites:
                sites[where] = reference_status(name, tables, settings)
                if sites[where] == "unknown":
                    self.unknown_apis[name] += 1
            if called and name.startswith("torch."):
                counterpart = tables.counterparts.get(name)
                self.torch_calls["none" if counterpart is None else
                                 "consistent" if counterpart.consistent else "differs"] += 1
        self.counts = Counter(sites.values())
        self.references = len(sites)
        self.effort = effort(self.counts, self.findings)

    def row(self) -> dict:
        return {"path": self.path, "lines": self.lines, "references": self.references,
                **{key: self.counts[key] for key in STATUS_KEYS}, "findings": self.findings,
                "effort": self.effort, "error": self.error or None, **self.performance()}

    def performance(self) -> dict:
        fused = sum(n for code, n in self.advice.items() if code in FUSED_RULES)
        syncs = sum(n for code, n in self.advice.items() if code in HOST_SYNC_RULES)
        return {"fused_apis": fused, "host_syncs": syncs, "other_advice": sum(self.advice.values()) - fused - syncs}


def build(results: list[FileResult], settings_of: Callable[[str], Settings], base: Settings) -> dict:
    """The report as plain data; every format renders this (JSON is it verbatim)."""
    files = [FileReport(result, settings_of(result.path)) for result in not_checked(results)]
    totals: Counter = Counter()
    rules: Counter = Counter()
    safe: Counter = Counter()
    unsafe: Counter = Counter()
    unsupported: Counter = Counter()
    unknown: Counter = Counter()
    calls: Counter = Counter()
    advice: Counter = Counter()
    for f in files:
        advice.update(f.advice)
        totals.update(f.counts)
        totals.update(lines=f.lines, references=f.references, findings=f.findings)
        rules.update(f.rules)
        safe.update(f.fixable["safe"])
        unsafe.update(f.fixable["unsafe"])
        unsupported.update(f.unsupported_apis)
        unknown.update(f.unknown_apis)
        calls.update(f.torch_calls)
    report = {
        "tool": f"lsp-check {__version__}",
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "settings": {"target": base.target, "chip": base.chip, "torch_npu_version": base.torch_npu_version,
                     "mindspore_version": base.mindspore_version},
        "statuses": [{"key": key, "label": label, "meaning": meaning} for key, label, meaning in STATUSES],
        "effort_rule": EFFORT_RULE,
        "totals": {"files": len(files), "files_with_findings": sum(1 for f in files if f.findings),
                   "lines": totals["lines"], "references": totals["references"],
                   **{key: totals[key] for key in STATUS_KEYS}, "findings": totals["findings"],
                   "effort": {bucket: sum(1 for f in files if f.effort == bucket) for bucket in EFFORT}},
        "files": [f.row() for f in files],
        "not_checked": [{"path": f.path, "error": f.error} for f in files if f.error],
        "top_rules": [{"code": code, "name": RULES[code].name if code in RULES else "", "count": count,
                       "safe": safe[code], "unsafe": unsafe[code]} for code, count in rules.most_common(TOP)],
        "top_unsupported": [{"api": api, "code": code, "count": count}
                            for (api, code), count in unsupported.most_common(TOP)],
        "unknown_apis": [{"api": api, "count": count}
                         for api, count in sorted(unknown.items(), key=lambda item: (-item[1], item[0]))],
        "mindspore": None,
        "performance": {
            "rules": "fused_apis: " + ", ".join(FUSED_RULES) + "; host_syncs: " + ", ".join(HOST_SYNC_RULES)
                     + "; other_advice: the other NPU6xx/NPU7xx rules; opt-in rules count only when selected",
            "totals": {key: sum(f.performance()[key] for f in files) for key in PERFORMANCE_COLUMNS[1:]},
            "files": [{"path": f.path, **f.performance()} for f in files if f.advice],
            "by_rule": [{"code": code, "name": RULES[code].name if code in RULES else "", "count": count}
                        for code, count in sorted(advice.items(), key=lambda item: (-item[1], item[0]))],
        },
    }
    if base.target == "mindspore":
        total = sum(calls.values())
        report["mindspore"] = {
            "table_version": tables_for(base, RULE_SET).counterparts_version,
            "torch_calls": total, "consistent": calls["consistent"], "differs": calls["differs"],
            "no_counterpart": calls["none"], "share": round(calls["consistent"] / total, 4) if total else None,
        }
    return report


# --- formats -------------------------------------------------------------------------------
def report_json(report: dict) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False)


CSV_COLUMNS = (*COLUMNS, *PERFORMANCE_COLUMNS[1:])


def as_csv(report: dict) -> str:
    """The per-file table (migration, then the performance advice), then a TOTAL row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in report["files"]:
        writer.writerow([row[c] for c in CSV_COLUMNS])
    totals, performance = report["totals"], report["performance"]["totals"]
    writer.writerow(["TOTAL", *(totals[c] for c in COLUMNS[1:-1]), "",
                     *(performance[c] for c in PERFORMANCE_COLUMNS[1:])])
    return out.getvalue().rstrip("\n")


def _md_cell(text) -> str:
    return str(text).replace("|", "\\|")


def as_markdown(report: dict) -> str:
    totals, settings = report["totals"], report["settings"]
    labels = {s["key"]: s["label"] for s in report["statuses"]}
    lines = [
        "# Migration report",
        "",
        f"{report['tool']}, {report['generated']} — {target_line(settings)}.",
        "",
        f"**{plural(totals['files'], 'file')}** ({totals['lines']} lines), "
        f"**{plural(totals['references'], 'API reference')}**, {plural(totals['findings'], 'finding')} in "
        f"{plural(totals['files_with_findings'], 'file')}.",
        "",
        *not_checked_markdown(report["not_checked"]),
        "| | references | share |",
        "|---|---:|---:|",
    ]
    for key in STATUS_KEYS:
        share = totals[key] / totals["references"] if totals["references"] else 0
        lines.append(f"| {labels[key]} | {totals[key]} | {share:.1%} |")
    lines += ["", "Effort per file: " + ", ".join(f"{bucket} {totals['effort'][bucket]}" for bucket in EFFORT) + ".",
              f"Rule: {report['effort_rule']}", ""]
    if report["mindspore"] is not None:
        lines += ["## MindSpore", "", mindspore_sentence(report["mindspore"]), ""]
    lines += ["## Files", "", "| " + " | ".join(["file", "lines", "references", *(labels[k] for k in STATUS_KEYS),
                                                  "findings", "effort"]) + " |",
              "|---|" + "---:|" * (len(COLUMNS) - 2) + "---|"]
    for row in report["files"]:
        lines.append("| " + " | ".join(_md_cell(row[c]) for c in COLUMNS) + " |")
    lines += ["", "## Top rules", "", "| rule | name | findings | safe fix | unsafe fix |", "|---|---|---:|---:|---:|"]
    lines += [f"| {r['code']} | {r['name']} | {r['count']} | {r['safe']} | {r['unsafe']} |"
              for r in report["top_rules"]]
    lines += ["", *performance_markdown(report["performance"])]
    lines += ["", "## Top unsupported APIs", ""]
    lines += [f"- `{u['api']}` ({u['code']}): {u['count']}" for u in report["top_unsupported"]] or ["None."]
    lines += ["", "## Unknown APIs", "", "The tables know nothing about these; check each one on the target.", ""]
    lines += [f"- `{u['api']}`: {u['count']}" for u in report["unknown_apis"]] or ["None."]
    lines += ["", "## What the columns mean", ""]
    lines += [f"- **{s['label']}**: {s['meaning']}" for s in report["statuses"]]
    return "\n".join(lines)


def not_checked_markdown(files: list[dict]) -> list[str]:
    if not files:
        return []
    return [f"**{not_checked_sentence(files)}:**", "",
            *(f"- {_md_cell(f['path'])}: {_md_cell(f['error'])}" for f in files), ""]


def performance_markdown(performance: dict) -> list[str]:
    lines = ["## Performance", "", performance_sentence(performance) + ".", ""]
    if not performance["files"]:
        return lines + ["No advice."]
    lines += ["| file | fused APIs | host syncs | other advice |", "|---|---:|---:|---:|"]
    lines += [f"| {_md_cell(f['path'])} | {f['fused_apis']} | {f['host_syncs']} | {f['other_advice']} |"
              for f in performance["files"]]
    lines += ["", "| rule | name | findings |", "|---|---|---:|"]
    lines += [f"| {r['code']} | {r['name']} | {r['count']} |" for r in performance["by_rule"]]
    return lines


def render(report: dict, fmt: str) -> str:
    if fmt == "html":
        from .report_html import as_html

        return as_html(report)
    return {"json": report_json, "csv": as_csv, "md": as_markdown}[fmt](report)
