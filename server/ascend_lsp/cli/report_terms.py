"""The words of a migration report, shared by every format (report.py renders the text
ones, report_html.py the page): the statuses a site can have, the effort buckets, the file
table's columns, and the sentences that say the totals."""

from __future__ import annotations

from .output import NOT_CHECKED

# (key, column label, what it means) in the order the report shows them.
STATUSES = (
    ("supported", "Supported", "no finding, and Ascend's support list marks the API ✔ for the configured chip "
                               "(target torch_npu; a port to MindSpore changes every torch call, see the "
                               "MindSpore section)"),
    ("safe", "Auto-fix (safe)", "`lsp-check --fix` rewrites it, meaning kept"),
    ("unsafe", "Auto-fix (unsafe)", "`--fix --unsafe-fixes` rewrites it; review the change"),
    ("manual", "Manual", "a finding without an applicable fix: a person changes the code"),
    ("unsupported", "Unsupported", "a finding of a rule meaning the target has no counterpart (NPU104, NPU201, "
                                   "NPU3xx third-party CUDA libraries, NPU403 DataParallel, MS101) and no fix: "
                                   "the code must be redesigned"),
    ("unknown", "Unknown", "a torch API the tables do not know (not in the support list and no mapping; "
                           "target mindspore: not in the MindSpore mapping): check it by hand; listed below"),
    ("other", "Other", "known to the tables but not flagged here: reported at its import, suppressed by "
                       "`# noqa` or configuration, or a conditional entry that does not apply"),
)
STATUS_KEYS = tuple(key for key, _, _ in STATUSES)
EFFORT = ("none", "low", "medium", "high")
EFFORT_RULE = ("none: no finding. high: 3 or more unsupported sites, or more than 15 that need a person "
               "(manual + unsafe). medium: 1–2 unsupported, or 4–15 that need a person. low: the rest "
               "(at most 3 that need a person; safe fixes are free).")
COLUMNS = ("path", "lines", "references", *STATUS_KEYS, "findings", "effort")


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"


def target_line(settings: dict) -> str:
    if settings["target"] == "mindspore":
        return f"target mindspore, MindSpore {settings['mindspore_version']}"
    return f"target torch_npu, chip {settings['chip']}, torch_npu {settings['torch_npu_version']}"


def mindspore_sentence(ms: dict) -> str:
    share = f"{ms['share']:.1%}" if ms["share"] is not None else "n/a"
    return (f"{ms['consistent']} of {ms['torch_calls']} torch calls ({share}) have a consistent MindSpore "
            f"counterpart (a rename); with a counterpart that differs: {ms['differs']}; with none: "
            f"{ms['no_counterpart']} (MindSpore {ms['table_version']} mapping table).")


def not_checked_sentence(files: list[dict]) -> str:
    return f"{plural(len(files), 'file')} could not be checked ({NOT_CHECKED}); their findings are missing"


def performance_sentence(performance: dict) -> str:
    totals = performance["totals"]
    fused = totals["fused_apis"]
    return (f"{fused} fused-API {'opportunity' if fused == 1 else 'opportunities'}, "
            f"{plural(totals['host_syncs'], 'host synchronisation')} in a training loop, "
            f"{totals['other_advice']} other advice ({performance['rules']})")
