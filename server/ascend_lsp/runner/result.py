"""`RunResult`: a worker's answer (or the reason there is none), graded, for any front end."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..knowledge.thresholds import load_thresholds
from .grading import ERROR, PASS, WARNING, grade_output, worst
from .job import Job
from .layers import (LayerResult, divergence_dict, first_divergence, first_overflow, grade_layers, layer_label,
                     map_dump_sources)
from .targets import function_line

PASSED, WARNED, ERRORED, FAILED = "passed", "warning", "error", "failed"
STATUS = {PASS: PASSED, WARNING: WARNED, ERROR: ERRORED}


@dataclass
class OutputResult:
    path: str  # out[0], out['logits'], grad:Linear.weight, state:Sequential.1.running_mean
    group: str  # output | grad | state
    verdict: str
    reason: str
    threshold: str | None  # the table row that decided, e.g. "cosine: cosine <= 0.99 → error"
    reference: dict  # shape, dtype
    target: dict
    metrics: dict
    dropout: bool = False
    decided_by: str | None = None  # the standard that decided (grading.Grade.decided_by)
    benchmark: dict | None = None  # the third side's metrics against the reference, when it ran


@dataclass
class RunResult:
    """status: passed | warning | error (the precision verdict) or failed (no verdict: the run failed)."""

    status: str
    message: str
    path: str
    entry: str
    target: str
    line: int | None = None  # 1-based: the entry's `def` (or first selected line), the raising line on an exception
    emulated: bool = False
    device: str | None = None
    outputs: list[OutputResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: dict | None = None  # type, message, traceback, frames, user_line, side
    stdout: dict = field(default_factory=dict)
    timing: dict = field(default_factory=dict)
    worker: dict = field(default_factory=dict)
    inputs: dict | None = None
    code: str | None = None  # why it failed: timeout, cancelled, crashed, exception, no-device, ...
    layers: list[LayerResult] | None = None  # with `layers`: every module (or API) call, in execution order
    first_divergence: int | None = None  # index into `layers`: the call that introduced an ERROR
    first_warning: int | None = None  # likewise for a WARNING with passing inputs
    first_overflow: int | None = None  # the call whose outputs first hold Inf/NaN its inputs and the reference's do not
    benchmark: dict | None = None  # the third side, when it ran: {dtype, device}

    @property
    def verdict(self) -> str | None:
        return {PASSED: PASS, WARNED: WARNING, ERRORED: ERROR}.get(self.status)

    @property
    def ok(self) -> bool:
        return self.status != FAILED

    def to_dict(self) -> dict:
        data = asdict(self)
        if self.layers is None:
            for key in ("layers", "first_divergence", "first_warning", "first_overflow"):
                data.pop(key)
            return data
        data["layers"] = [layer.to_dict() for layer in self.layers]
        data["first_divergence"] = divergence_dict(self.divergence)
        data["first_warning"] = divergence_dict(self.warning)
        data["first_overflow"] = divergence_dict(self.overflow)
        return data

    @property
    def divergence(self) -> LayerResult | None:
        return self.layers[self.first_divergence] if self.layers and self.first_divergence is not None else None

    @property
    def overflow(self) -> LayerResult | None:
        return self.layers[self.first_overflow] if self.layers and self.first_overflow is not None else None

    @property
    def warning(self) -> LayerResult | None:
        return self.layers[self.first_warning] if self.layers and self.first_warning is not None else None


def failed(job: Job, code: str, message: str, **extra) -> RunResult:
    return RunResult(status=FAILED, message=message, path=str(job.path), entry=job.entry, target=job.target,
                     code=code, line=entry_line(job), **extra)


def entry_line(job: Job) -> int | None:
    if job.lines:
        return job.lines[0]
    return function_line(job.text or "", job.function) if job.function else None


def from_worker(job: Job, answer: dict, round_trip_s: float) -> RunResult:
    target = answer.get("target") or {}
    common: dict[str, Any] = dict(path=str(job.path), entry=job.entry, target=job.target, emulated=bool(target.get("emulated")),
                  device=target.get("device"), notes=list(answer.get("notes", [])),
                  worker=answer.get("worker", {}), timing={**answer.get("timing", {}), "round_trip_s": round_trip_s})
    if answer.get("status") != "ok":
        error = answer.get("error")
        return RunResult(status=FAILED, message=answer.get("message", "the worker failed"), error=error,
                         line=(error or {}).get("user_line") or entry_line(job), code=answer.get("code"), **common)
    thresholds = load_thresholds()
    # a low-precision target's float16/bfloat16 results are graded in their dtype, not as a dtype mismatch
    autocast = bool(job.target == "emulate" and job.emulation.autocast) or bool(job.dumps) or \
        bool(answer.get("benchmark"))
    outputs = []
    for raw in answer.get("outputs", []):
        grade = grade_output(raw, thresholds, autocast)
        outputs.append(OutputResult(
            path=raw["path"], group=raw.get("group", "output"), verdict=grade.verdict, reason=grade.reason,
            threshold=grade.threshold.describe() if grade.threshold else None,
            reference=raw.get("reference", {}), target=raw.get("target", {}), metrics=raw.get("metrics", {}),
            dropout=bool(raw.get("dropout")), decided_by=grade.decided_by, benchmark=raw.get("benchmark")))
    overall = worst(o.verdict for o in outputs)
    if outputs:
        decisive = next(o for o in outputs if o.verdict == overall)
        counts = ", ".join(f"{sum(o.verdict == v for o in outputs)} {v.lower()}" for v in (ERROR, WARNING, PASS)
                           if any(o.verdict == v for o in outputs))
        message = f"{overall}: {decisive.path}: {decisive.reason} ({len(outputs)} compared: {counts})"
    else:
        message = f"{PASS}: ran on the reference and the target without error; nothing returned to compare"
    located: dict[str, Any] = {}
    if "layers" in answer:
        layers = grade_layers(answer["layers"], thresholds, autocast)
        if job.dumps and job.path:
            map_dump_sources(layers, answer["layers"], str(job.path), job.source_text())
        located = dict(layers=layers, first_divergence=first_divergence(layers, ERROR),
                       first_warning=first_divergence(layers, WARNING), first_overflow=first_overflow(layers))
        message = _layers_message(message, layers, located, bool(job.dumps))
        if job.dumps:
            overall = worst(layer.verdict for layer in layers)
    if common["emulated"]:
        message = f"[emulated] {message}"
    return RunResult(status=STATUS[overall], message=message, outputs=outputs, stdout=answer.get("stdout", {}),
                     inputs=answer.get("inputs"), line=entry_line(job), benchmark=answer.get("benchmark"), **located,
                     **common)


def _layers_message(message: str, layers: list[LayerResult], located: dict, dumps: bool) -> str:
    found: dict[int, list[str]] = {}  # layer index → its labels: one layer may be the first overflow and divergence
    for key, label in (("first_overflow", "first overflow"), ("first_divergence", "first divergence"),
                       ("first_warning", "first warning")):
        if located[key] is not None:
            found.setdefault(located[key], []).append(label)
    parts = [f"{' and '.join(labels)}: {layer_label(layers[i])} {layers[i].verdict}: {layers[i].reason}" +
             (f" (line {layers[i].source['line']})" if layers[i].source else "") for i, labels in found.items()]
    summary = "; ".join(parts) or f"no layer diverges ({len(layers)} calls compared)"
    if dumps:
        return f"{worst(layer.verdict for layer in layers)}: {summary}"
    return f"{message}; {summary}"
