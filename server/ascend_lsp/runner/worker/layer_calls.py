"""Layer-wise recording: every module (Cell) call, and at the API level every torch function,
with its tensors; two recordings compared call by call."""

from __future__ import annotations

import sys
import weakref
from typing import Any

from .emulation import saturate_fp16
from .metrics import compare_values, same_values
from .patches import Patches
from .tensor_values import MISSING, describe_value, flatten

# Calls the API level does not record: attribute access and bookkeeping, no computation.
API_SKIP = frozenset({"__get__", "__set__", "__repr__", "__format__", "__len__", "__bool__", "__index__", "__iter__",
                      "__hash__", "__reduce_ex__", "__setstate__", "__deepcopy__", "size", "dim", "numel", "detach",
                      "is_floating_point", "requires_grad_", "item", "tolist", "numpy", "data_ptr", "stride",
                      "storage_offset", "element_size", "is_contiguous", "type", "__torch_function__",
                      # uninitialised memory: its bytes are not a result
                      "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})


def function_mode(torch, layers, saturate: bool):
    """A TorchFunctionMode that records torch functions and tensor methods (the API level)
    and/or applies fp16 saturation (overflow → ±65504, NaN → 0) to every float16 result."""
    functional = {id(f) for v in vars(torch.nn.functional).values() if callable(v)
                  for f in (v, getattr(v, "__wrapped__", None)) if f is not None}  # and what emulation wraps

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = _api_name(func, functional) if layers is not None and layers.api and not layers.busy else None
            index = layers.enter("api", None, name, args, kwargs) if name else None
            result = func(*args, **kwargs)
            if saturate:
                result = saturate_fp16(torch, func, result)
            if index is not None:
                layers.exit(index, result)
            return result
    return Mode()


def _api_name(func, functional: set) -> str | None:
    name = getattr(func, "__name__", None)
    if not name or name in API_SKIP or (name.startswith("_") and not name.startswith("__")):
        return None
    if id(func) in functional:
        return f"Functional.{name}"
    qualname = getattr(func, "__qualname__", "") or ""
    if qualname.startswith(("Tensor.", "TensorBase.", "_TensorBase.")):
        return f"Tensor.{name}"
    return f"Torch.{name}"


class Layers:
    """Every nn.Module (or MindSpore Cell) call of one run, and at the API level every torch
    function and tensor method, with CPU copies of their tensors. A tensor handed unchanged
    from one call to the next (same object, same version counter) is stored once."""

    def __init__(self, torch, path: str, api: bool = False):
        self.torch, self.path, self.api = torch, path, api
        self.calls: list[dict] = []
        self.tensors: list = []
        self.built: dict[int, dict] = {}  # id(module or cell) → where the user's file constructed it
        self.busy = False  # our own copies must not be recorded as API calls
        self._objects: dict[int, Any] = {}  # call index → module (until named)
        self._live: dict[int, tuple] = {}  # id(live tensor) → (weakref, version, index)
        self._open: list[int] = []
        self._api_counts: dict[str, int] = {}

    def user_frame(self, owner=None) -> dict | None:
        """The innermost frame in the user's file (outside `owner`'s own __init__ chain)."""
        frame = sys._getframe(2)
        while frame is not None:
            code = frame.f_code
            if code.co_filename == self.path and not (
                    owner is not None and code.co_name == "__init__" and frame.f_locals.get("self") is owner):
                return {"path": self.path, "line": frame.f_lineno, "function": code.co_name}
            frame = frame.f_back
        return None

    def constructed(self, obj) -> None:
        if id(obj) not in self.built:
            self.built[id(obj)] = self.user_frame(obj)

    def enter(self, kind: str, obj, name: str, args: tuple, kwargs: dict) -> int:
        self.busy = True
        try:
            inputs = [self._index(t) for t in self._tensors((args, kwargs))]
            index = len(self.calls)
            self.calls.append({"kind": kind, "name": name, "class": name if kind == "module" else None,
                               "parent": self._open[-1] if self._open else None, "depth": len(self._open),
                               "inputs": inputs, "outputs": [], "call_source": self.user_frame(),
                               "source": self.built.get(id(obj)) if obj is not None else None})
            if obj is not None:
                self._objects[index] = obj
            self._open.append(index)
            return index
        finally:
            self.busy = False

    def exit(self, index: int, output) -> None:
        self.busy = True
        try:
            self._open.pop()
            call = self.calls[index]
            call["outputs"] = [self._index(t) for t in self._tensors(output)]
            if call["kind"] == "api":
                if not any(self.tensors[i].is_floating_point() for i in call["outputs"]):
                    if index == len(self.calls) - 1:
                        self.calls.pop()  # no float result: bookkeeping, not computation
                    return
                count = self._api_counts.get(call["name"], 0)
                self._api_counts[call["name"]] = count + 1
                call["call"] = count
        finally:
            self.busy = False

    def _tensors(self, value) -> list:
        return [t for _, t in flatten(self.torch, "", value, detach=False) if isinstance(t, self.torch.Tensor)]

    def _index(self, tensor) -> int:
        entry = self._live.get(id(tensor))
        if entry is not None and entry[0]() is tensor and entry[1] == tensor._version:
            return entry[2]
        self.tensors.append(tensor.detach().to("cpu", copy=True))
        index = len(self.tensors) - 1
        try:
            self._live[id(tensor)] = (weakref.ref(tensor), tensor._version, index)
        except TypeError:
            pass  # a tensor that takes no weak reference is copied again when met again
        return index

    def name_modules(self, tops: list, names_of=None) -> None:
        """Module paths as `named_modules()` gives them (prefixed by the top module's index
        when the run called several), then a call index per path, in call order."""
        names: dict[int, str] = {}
        for number, top in enumerate(tops):
            prefix = f"{number}." if len(tops) > 1 else ""
            for path, module in (names_of or _named_modules)(top):
                names.setdefault(id(module), (prefix + path).rstrip("."))
        counts: dict[str, int] = {}
        for index, call in enumerate(self.calls):
            if call["kind"] != "module":
                continue
            obj = self._objects.get(index)
            call["name"] = names.get(id(obj), f"<{call['class']}>")
            call["call"] = counts.get(call["name"], 0)
            counts[call["name"]] = call["call"] + 1
        self._objects.clear()
        self._live.clear()


def _named_modules(module):
    return module.named_modules()


def patch_module_construction(base, patches: Patches, layers: Layers) -> None:
    """Remember where the user's file constructs each module (or cell)."""
    original_init = base.__init__

    def init(self, *args, **kwargs):
        layers.constructed(self)
        original_init(self, *args, **kwargs)
    patches.set(base, "__init__", init)


def compare_layers(torch, ref: Layers, cand: Layers, metrics: dict, target, low_precision: bool = False,
                   bench: Layers | None = None) -> list[dict]:
    """One entry per reference call, in execution order, with its inputs and outputs compared;
    calls are paired by (kind, name, call index), then (MindSpore) the rest by call order.
    `low_precision`: a float16/bfloat16 target against a float32 reference is graded in its dtype.
    `bench`: the third side's calls (the reference model at the target's dtype): each float
    comparison also holds that side's metrics against the reference, under "benchmark"."""
    low = low_precision or bench is not None or bool(target.emulate and target.emulate.get("autocast"))
    pairs = _pair_calls(ref.calls, cand.calls, target.name == "mindspore")
    bench_pairs = _pair_calls(ref.calls, bench.calls, False) if bench is not None else {}
    memo: dict[tuple, dict] = {}
    bench_memo: dict[tuple, dict | None] = {}

    def compare(label: str, i: int | None, j: int | None, b: int | None = None) -> dict:
        if (i, j) not in memo:
            if i is None:
                memo[i, j] = {"problem": "missing-reference", "target": describe_value(torch, cand.tensors[j])}
            else:
                memo[i, j] = compare_values(torch, label, ref.tensors[i],
                                            cand.tensors[j] if j is not None else MISSING, metrics, low, full=False)
        report = {**memo[i, j], "path": label}
        if b is not None and i is not None and report.get("kind") == "float":
            if (i, b) not in bench_memo:
                assert bench is not None
                theirs = bench.tensors[b]
                if j is not None and same_values(torch, cand.tensors[j], theirs):  # emulation: the same numbers
                    bench_memo[i, b] = memo[i, j].get("metrics")
                else:
                    bench_memo[i, b] = compare_values(torch, label, ref.tensors[i], theirs, metrics, True,
                                                      full=False).get("metrics")
            report["benchmark"] = bench_memo[i, b]
        return report

    layers = []
    for index, call in enumerate(ref.calls):
        other = pairs.get(index)
        entry = {"module": call["name"], "class": call["class"], "kind": call["kind"], "call": call.get("call", 0),
                 "parent": call["parent"], "depth": call["depth"], "source": call["source"],
                 "call_source": call["call_source"]}
        ours = bench.calls[bench_pairs[index]] if index in bench_pairs and bench is not None else None
        if other is None:
            entry["problem"] = "missing-target"
            entry["outputs"] = [compare(f"output.{k}", i, None) for k, i in enumerate(call["outputs"])]
            entry["inputs"] = []
        else:
            theirs = cand.calls[other]
            if theirs.get("class") and theirs["class"] != call["class"]:
                entry["target_class"] = theirs["class"]
            if target.name == "mindspore":
                entry["source"], entry["reference_source"] = theirs["source"] or call["source"], call["source"]
            entry["outputs"] = _compare_lists(compare, "output", call["outputs"], theirs["outputs"],
                                              ours["outputs"] if ours else [])
            entry["inputs"] = _compare_lists(compare, "input", call["inputs"], theirs["inputs"],
                                             ours["inputs"] if ours else [])
        layers.append(entry)
    matched = set(pairs.values())
    for other, call in enumerate(cand.calls):
        if other not in matched:
            layers.append({"module": call["name"], "class": call["class"], "kind": call["kind"],
                           "call": call.get("call", 0), "parent": None, "depth": call["depth"],
                           "source": call["source"], "call_source": call["call_source"],
                           "problem": "missing-reference", "inputs": [],
                           "outputs": [compare(f"output.{k}", None, j) for k, j in enumerate(call["outputs"])]})
    return layers


def _compare_lists(compare, label: str, mine: list, theirs: list, bench: list) -> list[dict]:
    def at(items: list, k: int):
        return items[k] if k < len(items) else None
    return [compare(f"{label}.{k}", at(mine, k), at(theirs, k), at(bench, k)) for k in range(max(len(mine), len(theirs)))]


def _pair_calls(mine: list[dict], theirs: list[dict], by_order: bool) -> dict[int, int]:
    keys = {(c["kind"], c["name"], c.get("call", 0)): j for j, c in enumerate(theirs)}
    pairs = {}
    for i, call in enumerate(mine):
        j = keys.pop((call["kind"], call["name"], call.get("call", 0)), None)
        if j is not None:
            pairs[i] = j
    if by_order:
        rest = [j for j in range(len(theirs)) if j not in set(pairs.values()) and theirs[j]["kind"] == "module"]
        for i in (i for i, c in enumerate(mine) if i not in pairs and c["kind"] == "module"):
            if not rest:
                break
            pairs[i] = rest.pop(0)
    return pairs
