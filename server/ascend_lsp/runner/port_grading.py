"""Grade a port's outputs against torch's with the runner's msprobe cascade (tests, benchmark)."""

from __future__ import annotations

from ..knowledge.thresholds import load_thresholds
from .grading import grade_output, metric_parameters, worst
from .worker.metrics import compare_values
from .worker.tensor_values import flatten


def grade(torch, reference, candidate) -> tuple[str, list[dict]]:
    """The worst verdict over the outputs, and one report per output (path, verdict, reason,
    metrics). `reference` holds torch tensors, `candidate` MindSpore tensors, nested alike."""
    thresholds = load_thresholds()
    parameters = metric_parameters(thresholds)
    ref, cand = dict(flatten(torch, "out", reference)), dict(flatten(torch, "out", candidate))
    reports = []
    for path in sorted(set(ref) | set(cand)):
        if path not in cand or path not in ref:
            reports.append({"path": path, "verdict": "ERROR", "reason": "missing on one side"})
            continue
        report = compare_values(torch, path, ref[path], cand[path], parameters["rel_err_cutoffs"],
                                parameters["rel_err_eps"], parameters["small_value"], False)
        verdict = grade_output(report, thresholds)
        reports.append({"path": path, "verdict": verdict.verdict, "reason": verdict.reason,
                        "metrics": report.get("metrics", {})})
    return worst(r["verdict"] for r in reports), reports
