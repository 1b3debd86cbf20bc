"""What one run produced (Side), what a torch run records to get it (Recorder), and the two
sides compared output by output."""

from __future__ import annotations

import hashlib
from typing import Any

from .layer_calls import Layers
from .metrics import compare_values, same_values
from .run_target import Target
from .tensor_values import MISSING, describe_value

TAIL_CHARS = 4000


class Side:
    """What one run produced: flattened outputs, gradients, changed module state, draws."""

    def __init__(self) -> None:
        self.outputs: list[tuple[str, Any]] = []
        self.grads: list[tuple[str, Any]] = []
        self.state: list[tuple[str, Any]] = []
        self.draws: list[list] = []
        self.notes: list[str] = []
        self.stdout = ""
        self.seconds = 0.0
        self.dropout = False
        # reference only, for the MindSpore port: the outermost module calls, in order,
        # each module's state before its first call, and a display name per module
        self.top_calls: list[tuple[Any, tuple]] = []
        self.initial_state: dict[int, dict] = {}
        self.module_names: dict[int, str] = {}
        self.layers: Layers | None = None  # every module / cell call, with `--layers`


class Recorder:
    """Collects, during a torch run, what the comparison needs beyond the return value."""

    def __init__(self, torch, capture: bool):
        self.torch, self.capture = torch, capture
        self.depth = 0
        self.modules: list = []
        self.initial_state: dict[int, dict] = {}
        self.calls: list[tuple[Any, tuple]] = []
        self.leaves: dict[int, Any] = {}
        self.draws: list[list] = []
        self.dropout = False
        self.layers: Layers | None = None

    def drew(self, name: str, cpu_tensor) -> None:
        if self.capture:
            data = cpu_tensor.detach().contiguous().reshape(-1).view(self.torch.uint8).numpy().tobytes()
            self.draws.append([name, list(cpu_tensor.shape), hashlib.sha256(data).hexdigest()])

    def leaf(self, tensor) -> None:
        if tensor.is_leaf and tensor.requires_grad:
            self.leaves.setdefault(id(tensor), tensor)

    def top_call(self, module, args: tuple) -> None:
        if id(module) not in self.initial_state:
            self.modules.append(module)
            self.initial_state[id(module)] = {k: v.detach().to("cpu", copy=True)
                                              for k, v in module.state_dict().items()}
        self.calls.append((module, args))
        for arg in args:
            if isinstance(arg, self.torch.Tensor):
                self.leaf(arg)

    def module_names(self) -> dict[int, str]:
        counts: dict[str, int] = {}
        for module in self.modules:
            counts[type(module).__name__] = counts.get(type(module).__name__, 0) + 1
        names: dict[int, str] = {}
        seen: dict[str, int] = {}
        for module in self.modules:
            cls = type(module).__name__
            seen[cls] = seen.get(cls, 0) + 1
            names[id(module)] = cls if counts[cls] == 1 else f"{cls}#{seen[cls]}"
        return names


def compare_sides(torch, reference: Side, candidate: Side, job: dict, target: Target,
                  benchmark: Side | None = None) -> list[dict]:
    """Each output, gradient and changed state of the candidate against the reference; with a
    benchmark (the third side), each float report also holds that side's metrics against the reference."""
    params = job.get("metrics", {})
    low_precision = benchmark is not None or bool(target.emulate and target.emulate.get("autocast"))
    # Dropout masks come from each device's own generator: only the zero share can agree.
    dropout = reference.dropout and not (target.on_cpu and target.name != "mindspore")
    reports = []
    for group, ref_items, cand_items, bench_items in (
            ("output", reference.outputs, candidate.outputs, benchmark.outputs if benchmark else []),
            ("grad", reference.grads, candidate.grads, benchmark.grads if benchmark else []),
            ("state", reference.state, candidate.state, benchmark.state if benchmark else [])):
        cand, bench = dict(cand_items), dict(bench_items)
        if group == "state" and target.name == "mindspore":
            # torch state with no MindSpore counterpart (num_batches_tracked) is in the notes;
            # the port's parameters the torch run left alone are not outputs.
            ref_items = [(p, v) for p, v in ref_items if p in cand]
            cand = {p: v for p, v in cand.items() if any(p == q for q, _ in ref_items)}
        for path, ref_value in ref_items:
            mine = cand.pop(path, MISSING)
            report = compare_values(torch, path, ref_value, mine, params, low_precision)
            if report.get("kind") == "float" and path in bench:
                report["benchmark"] = report["metrics"] if same_values(torch, mine, bench[path]) else \
                    compare_values(torch, path, ref_value, bench[path], params, True).get("metrics")
            report["group"] = group
            report["dropout"] = dropout and group != "state"
            reports.append(report)
        for path, value in cand.items():
            reports.append({"path": path, "group": group, "problem": "missing-reference",
                            "target": describe_value(torch, value)})
    return reports
