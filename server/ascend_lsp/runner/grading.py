"""PASS / WARNING / ERROR per output, with msprobe's acc_check cascade from thresholds.toml."""

from __future__ import annotations

import operator
from dataclasses import dataclass

from ..knowledge.thresholds import Threshold

PASS, WARNING, ERROR = "PASS", "WARNING", "ERROR"
SEVERITY = {PASS: 0, WARNING: 1, ERROR: 2}
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
LOW_PRECISION = ("float16", "bfloat16")


@dataclass(frozen=True)
class Grade:
    verdict: str
    reason: str
    threshold: Threshold | None = None


def metric_parameters(thresholds: tuple[Threshold, ...]) -> dict:
    """What the worker must measure: the relative-error cutoffs and eps overrides in the table."""
    cutoffs = sorted({t.below for t in thresholds if t.below is not None}, reverse=True)
    eps = {dtype: t.value for t in thresholds if t.metric == "rel-err-eps" for dtype in t.dtypes}
    small = {dtype: t.value for t in thresholds if t.metric == "small-value" for dtype in t.dtypes}
    return {"rel_err_cutoffs": cutoffs, "rel_err_eps": eps, "small_value": small}


def grade_output(output: dict, thresholds: tuple[Threshold, ...], autocast: bool = False) -> Grade:
    problem = output.get("problem")
    ref, tgt = output.get("reference", {}), output.get("target", {})
    if problem == "missing-target":
        return Grade(ERROR, "missing from the target's result")
    if problem == "missing-reference":
        return Grade(ERROR, "the target returned it, the reference did not")
    if problem == "shape":
        return Grade(ERROR, f"shape mismatch: reference {ref.get('shape')} vs target {tgt.get('shape')}")
    if output.get("kind") == "value":
        if output.get("equal"):
            return Grade(PASS, "equal values")
        return Grade(ERROR, f"values differ: reference {ref.get('repr')} vs target {tgt.get('repr')}")
    if output.get("dtype_mismatch") and not (autocast and tgt.get("dtype") in LOW_PRECISION):
        return Grade(ERROR, f"dtype mismatch: reference {ref.get('dtype')} vs target {tgt.get('dtype')}")
    stage = "dropout" if output.get("dropout") and output.get("kind") == "float" else "acc-check"
    metrics, numel = output.get("metrics", {}), output.get("numel", 0)
    compared = metrics.get("compared", numel)
    if stage == "acc-check" and compared == 0 and not metrics.get("nan_inf_mismatch"):
        return Grade(PASS, "empty on both sides" if not numel else
                     f"no element finite on both sides: NaN/Inf in the same {numel} places")
    grade = _cascade(output, stage, thresholds)
    if compared < numel:  # say what the metrics were computed over
        what = "no element" if not compared else f"{compared} of {numel} elements"
        nan_inf = (f"reference {metrics.get('nan_ref', 0)} NaN {metrics.get('inf_ref', 0)} Inf, "
                   f"target {metrics.get('nan_target', 0)} NaN {metrics.get('inf_target', 0)} Inf")
        grade = Grade(grade.verdict, f"{grade.reason} ({what} finite on both sides: {nan_inf})", grade.threshold)
    return grade


def _cascade(output: dict, stage: str, thresholds: tuple[Threshold, ...]) -> Grade:
    dtype = output.get("grade_dtype")
    metrics = output.get("metrics", {})
    rows = sorted((t for t in thresholds if t.stage == stage and dtype in t.dtypes), key=lambda t: t.order)
    if not rows:
        return Grade(WARNING, f"no msprobe threshold for dtype {dtype}")
    for row in rows:
        if row.min_numel and output.get("numel", 0) < row.min_numel:
            return Grade(WARNING, f"{output.get('numel')} elements: too few for {row.id} "
                                  f"(needs {row.min_numel})", row)
        value = _metric(metrics, row)
        holds = OPS[row.op](value, row.value)
        if holds or row.otherwise:
            verdict = (row.outcome if holds else row.otherwise).upper()
            sign = row.op if holds else _negate(row.op)
            return Grade(verdict, f"{_label(row)} {_fmt(value)} {sign} {row.value:g}", row)
    return Grade(WARNING, f"no {stage} threshold decided for dtype {dtype}")


def _metric(metrics: dict, row: Threshold) -> float:
    if row.metric == "rel-err-share":
        return metrics["rel_err_share"][format(row.below, "g")]
    return metrics[row.metric.replace("-", "_")]


def _label(row: Threshold) -> str:
    if row.metric == "rel-err-share":
        return f"share of rel err < {row.below:g}"
    return row.metric.replace("-", " ")


def _negate(op: str) -> str:
    return {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def worst(verdicts) -> str:
    return max(verdicts, key=SEVERITY.__getitem__, default=PASS)
