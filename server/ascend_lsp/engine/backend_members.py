"""Code that runs only where a caller chose CUDA, beside the code for the NPU or the CPU.

A class's `cuda()` method (or `to_cuda`, `cuda_*`, `forward_cuda`, `is_gpu_available`) beside a method named
the same for another device (`npu()`, `musa()`, `xpu()`, `mlu()`, `cpu()`; `to_cpu`, `forward_npu`,
`is_npu_available`), or its
`cuda()` beside a `to()` as on a Module, runs only when a caller asks for CUDA, and that call is reported where it is. A top-level class whose module
also holds its NPU variant (`ProfilerHook` beside `NPUProfilerHook`, `CudaGraphRunner` beside
`NpuGraphRunner`) is the one an NPU run does not use; so is a class for a library CUDA-only by
design that a user picks (`TensorRTBackend`, `ApexOptimWrapper`). Findings there are advice at most.

The CUDA classes are read from the whole text (`cuda_classes`), so that an analysis of one
statement knows whether the module's other classes changed (a fact of the whole text: Checker.text_fact)."""

from __future__ import annotations

import ast
import re

from .guards import name_words

# the devices whose method beside a CUDA one gives a caller another way than CUDA (not ROCm's
# `hip`: a class with `cuda` and `hip` methods alone has none for the NPU)
OTHER_DEVICES = ("npu", "musa", "xpu", "mlu", "cpu")
# what names the GPU in a method's name (`forward_cuda`, `is_gpu_available`)
GPU_PARTS = ("cuda", "gpu")
_BACKEND_PARTS = frozenset({*GPU_PARTS, *OTHER_DEVICES})
# a top-level class statement, read from the text: `class NPUProfilerHook(Hook):`
_CLASS_LINE = re.compile(r"^class[ \t]+(\w+)[ \t]*(?:\(([^)]*)\))?", re.MULTILINE)
_NPU_CLASS_LINE = re.compile(r"^class[ \t]+\w*npu", re.MULTILINE | re.IGNORECASE)  # one there, or no pair
# the words of a class name: `NPUProfilerHook` → NPU, Profiler, Hook

# libraries CUDA-only by design that a run uses only where its user picks them: a class named for
# one or built on one (`TensorRTBackend`, `ApexOptimWrapper`, `class Calibrator(trt.IInt8Calibrator)`)
OPT_IN_LIBRARIES = {"tensorrt": "TensorRT", "trt": "TensorRT", "apex": "apex"}

METHOD = " (In `{cls}.{method}()`, beside `{cls}.{sibling}()`: it runs only when a caller asks for CUDA.)"
OPT_IN_CLASS = (" (In `{cls}`, a class for {library}, which runs only on CUDA: it is used only where the user "
                "chooses {library}, which an NPU run does not.)")
SIBLING_CLASS = (" (In `{cls}`, beside `{npu}` in the same module: an NPU run uses that class, and this one "
                 "only where CUDA was chosen.)")


def backend_named(name: str) -> bool:
    """A method named for a device: `cuda`, `to_cpu`, `forward_npu`."""
    return not _BACKEND_PARTS.isdisjoint(name.lower().split("_"))


def _methods(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    return {stmt.name: stmt for stmt in body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}


def backend_methods(body: list[ast.stmt]) -> frozenset[str]:
    """The names of a class body's methods named for a device (the class's fact that an edit of
    one method may change for another)."""
    return frozenset(name for name, stmt in _methods(body).items() if device_method(stmt))


def device_method(stmt: ast.stmt) -> bool:
    """A method named for a device (`cuda`, `to_cpu`, `forward_npu`) or `to`: what its siblings say
    depends on it (method_reasons)."""
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and (backend_named(stmt.name) or stmt.name == "to")


def method_reasons(cls: str, body: list[ast.stmt]) -> dict[int, str]:
    """id of each CUDA method of a class body that has a sibling for another device → the reason."""
    methods = _methods(body)
    out: dict[int, str] = {}
    for name, stmt in methods.items():
        parts = name.split("_")
        gpu = next((part for part in GPU_PARTS if part in parts), None)
        if gpu is None:
            continue
        siblings = ["_".join(device if part == gpu else part for part in parts) for device in OTHER_DEVICES]
        if name == "cuda":  # `cuda()` beside `to()`, as on a Module: callers that move it elsewhere call `to`
            siblings.append("to")
        sibling = next((s for s in siblings if s in methods), None)
        if sibling is not None:
            out[id(stmt)] = METHOD.format(cls=cls, method=name, sibling=sibling)
    return out


def names_cuda_graph(name: str) -> bool:
    """A name for CUDA graphs: the two words run together (`CUDAGraphWrapper`, `enable_cudagraph`), or
    `cuda_graph` beside a word of capturing one (`init_cuda_graph`, `cuda_graph_decoding`); not
    `cuda_graph` alone, which may move a graph of data (a GNN's) to CUDA."""
    if "cudagraph" in name.lower():
        return True
    words = name_words(name)
    return any(word == "cuda" and words[i + 1:i + 2] in (["graph"], ["graphs"]) for i, word in enumerate(words)) \
        and not GRAPH_CAPTURE_WORDS.isdisjoint(words)


# what a function or class for CUDA graphs is named with besides `cuda_graph`
GRAPH_CAPTURE_WORDS = frozenset({"capture", "replay", "init", "warmup", "wrap", "wrapper", "runner", "manager", "decoding",
                                 "decode", "enable", "pool", "step", "forward", "run"})


def opt_in_class(node: ast.ClassDef) -> str:
    """OPT_IN_CLASS for a class named for a library in OPT_IN_LIBRARIES, or built on one of its
    classes, or named for CUDA graphs (`CudaGraphWrapper`, an optimisation a project turns on); else ""."""
    names = [node.name]
    for base in node.bases:
        while isinstance(base, ast.Attribute):
            names.append(base.attr)
            base = base.value
        names.append(getattr(base, "id", ""))
    for name in names:
        words = name_words(name) + (["tensorrt"] if "tensorrt" in name.lower() else [])  # `TensorRTBackend`: Tensor, RT
        library = next((OPT_IN_LIBRARIES[w] for w in words if w in OPT_IN_LIBRARIES), None) \
            or ("CUDA graphs" if name is node.name and names_cuda_graph(name) else None)  # its own name only
        if library is not None:
            return OPT_IN_CLASS.format(cls=node.name, library=library)
    return ""


def cuda_classes(text: str) -> dict[str, str]:
    """The module's top-level classes that have an NPU variant beside them → the reason: the
    NPU class's name is the other's with `NPU` added (`NPUProfilerHook`) or in place of `CUDA` or
    `GPU` (`NpuGraphRunner` beside `CudaGraphRunner`), and it is not built on the other (whose
    code then runs on the NPU too)."""
    if not _NPU_CLASS_LINE.search(text):
        return {}
    classes = [(name, bases) for name, bases in _CLASS_LINE.findall(text)]
    npu_classes = {}
    for name, bases in classes:
        words = name_words(name)
        if "npu" in words:
            npu_classes[tuple(w for w in words if w != "npu")] = (name, set(re.findall(r"\w+", bases)))
    out = {}
    for name, _bases in classes:
        words = name_words(name)
        key = tuple(w for w in words if w not in ("cuda", "gpu"))
        npu = npu_classes.get(key) if key and "npu" not in words else None
        if npu is not None and name not in npu[1]:
            out[name] = SIBLING_CLASS.format(cls=name, npu=npu[0])
    return out

