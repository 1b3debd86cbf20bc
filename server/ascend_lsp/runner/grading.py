"""PASS / WARNING / ERROR per output, with msprobe's standards from thresholds.toml: the benchmark
method when a third side ran (the reference model at the target's dtype), else the acc_check
cascade. Each grade names the standard that decided it (`decided_by`, docs/run-on-npu.md#what-decides-a-verdict)."""

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
    decided_by: str = ""  # the threshold's standard, or what decided without one (shape, dtype, ...)

    def __post_init__(self) -> None:
        if not self.decided_by and self.threshold is not None:
            object.__setattr__(self, "decided_by", self.threshold.standard or self.threshold.id)


def metric_parameters(thresholds: tuple[Threshold, ...]) -> dict:
    """What the worker measures with, from the table: the relative-error cutoffs, eps overrides,
    the small-value domain and its atol, and each dtype's ULP [min exponent, mantissa bits, counted]."""
    cutoffs = sorted({t.below for t in thresholds if t.below is not None}, reverse=True)
    ulp = {dtype: [int(per_dtype(thresholds, "ulp-min-exponent")[dtype]),
                   int(per_dtype(thresholds, "ulp-mantissa-bits")[dtype]), per_dtype(thresholds, "ulp-counted")[dtype]]
           for dtype in per_dtype(thresholds, "ulp-mantissa-bits")}
    return {"rel_err_cutoffs": cutoffs, "rel_err_eps": per_dtype(thresholds, "rel-err-eps"),
            "small_value": per_dtype(thresholds, "small-value"),
            "small_value_atol": per_dtype(thresholds, "small-value-atol"), "ulp": ulp}


def per_dtype(thresholds: tuple[Threshold, ...], metric: str) -> dict[str, float]:
    return {dtype: t.value for t in thresholds if t.metric == metric for dtype in t.dtypes}


def grade_output(output: dict, thresholds: tuple[Threshold, ...], autocast: bool = False) -> Grade:
    problem = output.get("problem")
    ref, tgt = output.get("reference", {}), output.get("target", {})
    if problem == "missing-target":
        return Grade(ERROR, "missing from the target's result", decided_by="missing")
    if problem == "missing-reference":
        return Grade(ERROR, "the target returned it, the reference did not", decided_by="missing")
    if problem == "shape":
        return Grade(ERROR, f"shape mismatch: reference {ref.get('shape')} vs target {tgt.get('shape')}",
                     decided_by="shape")
    if output.get("kind") == "value":
        if output.get("equal"):
            return Grade(PASS, "equal values", decided_by="value")
        return Grade(ERROR, f"values differ: reference {ref.get('repr')} vs target {tgt.get('repr')}",
                     decided_by="value")
    if output.get("dtype_mismatch") and not (autocast and tgt.get("dtype") in LOW_PRECISION):
        return Grade(ERROR, f"dtype mismatch: reference {ref.get('dtype')} vs target {tgt.get('dtype')}",
                     decided_by="dtype")
    float_kind = output.get("kind") == "float"
    # a benchmark with no value finite beside the reference's (it overflowed) says nothing of the dtype's
    # error, and msprobe's benchmark method has no ratio limits for float64
    benchmarked = (output.get("benchmark") or {}).get("compared") and any(
        t.stage == "benchmark" and t.op == ">" and t.metric != "nan-inf-mismatch" and output.get("grade_dtype") in t.dtypes
        for t in thresholds)
    stage = "dropout" if output.get("dropout") and float_kind else "benchmark" if float_kind and benchmarked \
        else "acc-check"
    metrics, numel = output.get("metrics", {}), output.get("numel", 0)
    compared = metrics.get("compared", numel)
    if stage != "dropout" and compared == 0 and not metrics.get("nan_inf_mismatch"):
        return Grade(PASS, "empty on both sides" if not numel else
                     f"no element finite on both sides: NaN/Inf in the same {numel} places", decided_by="nan/inf")
    grade = _cascade(output, stage, thresholds)
    if compared < numel:  # say what the metrics were computed over
        what = "no element" if not compared else f"{compared} of {numel} elements"
        nan_inf = (f"reference {metrics.get('nan_ref', 0)} NaN {metrics.get('inf_ref', 0)} Inf, "
                   f"target {metrics.get('nan_target', 0)} NaN {metrics.get('inf_target', 0)} Inf")
        grade = Grade(grade.verdict, f"{grade.reason} ({what} finite on both sides: {nan_inf})", grade.threshold,
                      grade.decided_by)
    return grade


def _cascade(output: dict, stage: str, thresholds: tuple[Threshold, ...]) -> Grade:
    dtype = output.get("grade_dtype")
    rows = sorted((t for t in thresholds if t.stage == stage and dtype in t.dtypes), key=lambda t: t.order)
    if not rows:
        return Grade(WARNING, f"no msprobe threshold for dtype {dtype}")
    ratios = []
    for row in rows:
        if row.min_numel and output.get("numel", 0) < row.min_numel:
            return Grade(WARNING, f"{output.get('numel')} elements: too few for {row.id} "
                                  f"(needs {row.min_numel})", row)
        value = _metric(output, row, thresholds)
        if value is None:  # a ratio over a benchmark with no finite value: msprobe passes that metric
            continue
        if row.stage == "benchmark" and row.metric != "nan-inf-mismatch":
            ratios.append(f"{_label(row)} {value:.3g}")
        holds = OPS[row.op](value, row.value)
        if holds or row.otherwise:
            verdict = (row.outcome if holds else row.otherwise).upper()
            sign = row.op if holds else _negate(row.op)
            return Grade(verdict, f"{_label(row)} {_fmt(value)} {sign} {row.value:g}", row)
    if stage == "benchmark":
        return Grade(PASS, f"within its dtype's own error ({dtype} benchmark): {', '.join(ratios)}",
                     decided_by="benchmark ratio")
    return Grade(WARNING, f"no {stage} threshold decided for dtype {dtype}", decided_by="none")


def _metric(output: dict, row: Threshold, thresholds: tuple[Threshold, ...]) -> float | None:
    metrics = output.get("metrics", {})
    if row.metric == "rel-err-share":
        return metrics["rel_err_share"][format(row.below, "g")]
    key = row.metric.replace("-", "_")
    if row.stage == "benchmark" and row.metric != "nan-inf-mismatch":
        # msprobe's calc_ratio: |target's error| / max(|the benchmark's error|, the dtype's minimum error)
        mine, theirs = metrics.get(key), output["benchmark"].get(key)
        if mine is None or theirs is None:
            return None
        floor = per_dtype(thresholds, "minimum-err").get(output.get("grade_dtype"), 0.0)
        return abs(mine) / max(abs(theirs), floor) if max(abs(theirs), floor) else None
    return metrics[key]


def _label(row: Threshold) -> str:
    if row.metric == "rel-err-share":
        return f"share of rel err < {row.below:g}"
    if row.stage == "benchmark" and row.metric != "nan-inf-mismatch":
        return f"{row.metric.removesuffix('-ratio').replace('-', ' ')} ratio"
    return row.metric.replace("-", " ")


def _negate(op: str) -> str:
    return {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def worst(verdicts) -> str:
    return max(verdicts, key=SEVERITY.__getitem__, default=PASS)
