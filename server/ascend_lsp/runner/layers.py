"""Find the layer: grade every recorded module (or API) call and locate the first divergence
and the first overflow.

The first divergence is the innermost call, in execution order, whose output is graded ERROR
while its inputs were not: the call that introduced the error, not those downstream that
inherit it (likewise the first WARNING, with inputs that pass). The first overflow is the
innermost call whose outputs hold Inf/NaN the reference's do not while its inputs hold none.
Runs in the client: no torch.
"""

from __future__ import annotations

import ast
import os
from dataclasses import asdict, dataclass, field

from .grading import ERROR, PASS, SEVERITY, grade_output, worst
from .targets import parsed

PROBLEMS = {"missing-target": "not called on the target", "missing-reference": "called on the target only"}


@dataclass
class LayerResult:
    module: str  # named_modules() path (MindSpore: the torch name of the matched cell); API: Functional.conv2d
    cls: str | None  # the module's class (None for an API call)
    kind: str  # module | api
    call: int  # how many times this module (or API) was called before
    verdict: str
    reason: str
    input_verdict: str
    metrics: dict  # of the output that decided the verdict
    source: dict | None  # where the module is constructed: {path, line}
    call_source: dict | None  # where it is called: {path, line, function}
    parent: int | None = None  # index of the enclosing call in the list
    depth: int = 0
    target_class: str | None = None  # MindSpore: the cell's class, when it differs
    problem: str | None = None
    outputs: list[dict] = field(default_factory=list)  # per output: path, verdict, reason, metrics, shapes
    decided_by: str | None = None  # the standard that decided the verdict (grading.Grade.decided_by)
    benchmark: dict | None = None  # the third side's metrics for the deciding output (same keys as metrics)
    overflow: bool = False  # an output holds Inf/NaN the reference's does not, and no input does

    def to_dict(self) -> dict:
        data = asdict(self)
        data["class"] = data.pop("cls")
        return data


def grade_layers(raw: list[dict], thresholds, autocast: bool = False) -> list[LayerResult]:
    layers = []
    for entry in raw:
        outputs = [(o, grade_output(o, thresholds, autocast)) for o in entry.get("outputs", [])]
        inputs = [grade_output(i, thresholds, autocast) for i in entry.get("inputs", [])]
        problem = entry.get("problem")
        decisive: dict = {}
        if problem:
            verdict, reason, decided_by = ERROR, PROBLEMS.get(problem, problem), "missing"
        elif outputs:
            verdict = worst(g.verdict for _, g in outputs)
            decisive, grade = next((o, g) for o, g in outputs if g.verdict == verdict)
            reason = grade.reason if len(outputs) == 1 else f"{decisive['path']}: {grade.reason}"
            decided_by = grade.decided_by
        else:
            verdict, reason, decided_by = PASS, "no tensor output", None
        layers.append(LayerResult(
            module=entry["module"], cls=entry.get("class"), kind=entry.get("kind", "module"),
            call=entry.get("call", 0), verdict=verdict, reason=reason,
            input_verdict=worst(g.verdict for g in inputs), metrics=decisive.get("metrics", {}),
            decided_by=decided_by, benchmark=decisive.get("benchmark"),
            overflow=any(map(_overflows, entry.get("outputs", []))) and not any(map(_overflows, entry.get("inputs", []))),
            source=entry.get("source"),
            call_source=entry.get("call_source"), parent=entry.get("parent"), depth=entry.get("depth", 0),
            target_class=entry.get("target_class"), problem=problem,
            outputs=[{"path": o["path"], "verdict": g.verdict, "reason": g.reason, "decided_by": g.decided_by,
                      "metrics": o.get("metrics", {}), "benchmark": o.get("benchmark"),
                      "reference": o.get("reference", {}), "target": o.get("target", {})} for o, g in outputs]))
    return layers


def _overflows(compared: dict) -> bool:
    """Inf/NaN on the target where the reference has none (more of them, in other places)."""
    m = compared.get("metrics") or {}
    return bool(m.get("nan_inf_mismatch")) and \
        m.get("nan_target", 0) + m.get("inf_target", 0) > m.get("nan_ref", 0) + m.get("inf_ref", 0)


def first_divergence(layers: list[LayerResult], level: str = ERROR) -> int | None:
    """Index of the innermost call, in execution order, that introduced a `level` verdict: graded
    `level` while its inputs were graded below it (ERROR: inputs not ERROR; WARNING: inputs PASS).
    A call enclosing one that introduced something at least as bad is not innermost. Calls
    missing on one side are structure, not numbers: in the table, never the divergence."""
    rank = SEVERITY[level]
    introduced = [i for i, layer in enumerate(layers) if not layer.problem and SEVERITY[layer.verdict] >= rank
                  and SEVERITY[layer.input_verdict] < rank]
    return next((i for i in _innermost(layers, introduced) if layers[i].verdict == level), None)


def first_overflow(layers: list[LayerResult]) -> int | None:
    """Index of the innermost call, in execution order, whose outputs hold Inf/NaN the
    reference's do not while its inputs hold none (msprobe's first-overflow search)."""
    return next(iter(_innermost(layers, [i for i, layer in enumerate(layers) if layer.overflow])), None)


def _innermost(layers: list[LayerResult], introduced: list[int]) -> list[int]:
    """`introduced` without the calls that enclose another of them."""
    enclosing = set()
    for i in introduced:
        parent = layers[i].parent
        while parent is not None:
            enclosing.add(parent)
            parent = layers[parent].parent
    return [i for i in introduced if i not in enclosing]


def divergence_dict(layer: LayerResult | None) -> dict | None:
    if layer is None:
        return None
    return {"module": layer.module, "class": layer.cls, "kind": layer.kind, "call": layer.call,
            "verdict": layer.verdict, "reason": layer.reason, "decided_by": layer.decided_by, "metrics": layer.metrics,
            "benchmark": layer.benchmark, "source": layer.source, "call_source": layer.call_source}


def layer_label(layer: LayerResult) -> str:
    """`fc2 (Linear) call 0`, or `Functional.linear call 3`."""
    name = layer.module or "(root)"
    kind = f" ({layer.cls})" if layer.cls and layer.kind == "module" else ""
    return f"{name}{kind}" + (f" call {layer.call}" if layer.call else "")


# --------------------------------------------------------------------------- source lines for dumps


def map_dump_sources(layers: list[LayerResult], raw: list[dict], path: str, text: str) -> None:
    """For `compare-dumps --source PATH`: the call line from the dump's stack.json frames, the
    construction line from `self.<name> = ...` in the file (a pure `ast` walk)."""
    real = os.path.realpath(path)
    built = construction_lines(text)
    for layer, entry in zip(layers, raw):
        for frame in entry.get("stack") or []:
            file, line, function = _parse_frame(frame)
            if file and (os.path.realpath(file) == real or os.path.basename(file) == os.path.basename(path)):
                layer.call_source = {"path": path, "line": line, "function": function}
                break
        if layer.kind == "module":
            name = next((part for part in reversed(layer.module.split(".")) if not part.isdigit()), None)
            if name in built:
                layer.source = {"path": path, "line": built[name]}


def construction_lines(text: str) -> dict[str, int]:
    """attribute name → 1-based line of the first `self.<name> = ...` that builds it."""
    tree = parsed(text)
    if tree is None:
        return {}
    lines: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                        target.value.id == "self":
                    lines.setdefault(target.attr, node.lineno)
    return lines


def _parse_frame(frame: str) -> tuple[str | None, int | None, str | None]:
    """`File /a/b.py, line 7, in forward, \\n code` → ("/a/b.py", 7, "forward")."""
    head = frame.split("\n", 1)[0]
    if not head.startswith("File "):
        return None, None, None
    parts = [p.strip() for p in head[5:].rsplit(",", 3)]
    if len(parts) < 3 or not parts[1].startswith("line "):
        return None, None, None
    try:
        line = int(parts[1][5:])
    except ValueError:
        return None, None, None
    return parts[0], line, parts[2].removeprefix("in ").strip()
