"""Code already written for several backends: in an `if`/`elif` chain (or a conditional
expression) with a branch that tests for the NPU (`elif is_npu_available():`,
`if device_type == "npu":`, `torch.npu.is_available()`), that branch runs on the NPU and
the branches after it never do; a CUDA-testing branch before it (`if
torch.cuda.is_available():`, `device.type == "cuda"`) does not either. The operands of an
`and` after one that tests for the NPU (`is_npu_available() and torch.npu.device_count()`)
run only there too. Findings about CUDA code there are advice at most, and `torch.npu` code
in the NPU branch is the port already done."""

from __future__ import annotations

import ast
import re
from typing import Any

# whole words inside identifiers and strings: `is_npu_available`, "npu:0"; not `input`
NPU_WORD = re.compile(r"(?<![a-z])(?:npu|hccl|ascend)(?![a-z])")
CUDA_WORD = re.compile(r"(?<![a-z])(?:cuda|nccl)(?![a-z])")


def may_test_npu(text: str) -> bool:
    """Whether code with this text can hold a test for the NPU (the words _mentions looks
    for, in any case); without one its `if`s need not be read. An `npu` after an `i` is
    never one (`input`, in most files): an identifier or a string holding it has the `i`
    before it too. (A regex with IGNORECASE reads text ten times slower than lowering it.)"""
    lowered = text.lower()
    return lowered.count("npu") > lowered.count("inpu") or "hccl" in lowered or "ascend" in lowered


def _mentions(test: ast.expr) -> tuple[bool, bool]:
    """(tests for the NPU, tests for CUDA): names, attributes, calls and compared strings;
    a negated test (`not is_npu_available()`, `!= "npu"`) tests for neither. Runs for every
    `if` in a file, so it walks by hand and looks at a word twice only when it may match."""
    npu = cuda = False
    stack: list[Any] = [test]  # AST nodes, read by their exact type
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            word = node.id.lower()
        elif kind is ast.Attribute:
            word = node.attr.lower()
            stack.append(node.value)
        elif kind is ast.Constant:
            if type(node.value) is not str:
                continue
            word = node.value.lower()
        elif kind is ast.Call:
            stack.append(node.func)
            stack.extend(node.args)
            stack.extend(kw.value for kw in node.keywords)
            continue
        elif kind is ast.UnaryOp and type(node.op) is ast.Not:
            return False, False
        elif kind is ast.Compare:
            if any(type(op) in (ast.NotEq, ast.IsNot, ast.NotIn) for op in node.ops):
                return False, False
            stack.append(node.left)
            stack.extend(node.comparators)
            continue
        else:
            stack.extend(ast.iter_child_nodes(node))
            continue
        if not npu and ("npu" in word or "hccl" in word or "ascend" in word):
            npu = NPU_WORD.search(word) is not None
        if not cuda and ("cuda" in word or "nccl" in word):
            cuda = CUDA_WORD.search(word) is not None
    return npu, cuda


def _chain(node: ast.If | ast.IfExp, links: set) -> list[tuple[ast.expr | None, object]]:
    """(test, branch) for each branch of an if/elif/else chain; the else has no test. The
    `elif` nodes (and nested conditional expressions) are added to `links`."""
    out: list[tuple[ast.expr | None, object]] = []
    current: Any = node
    while True:
        if type(current) is ast.IfExp:
            out.append((current.test, current.body))
            current = current.orelse
            if type(current) is ast.IfExp:
                links.add(current)
            else:
                out.append((None, current))
                return out
        else:
            out.append((current.test, current.body))
            orelse = current.orelse
            if len(orelse) == 1 and type(orelse[0]) is ast.If:
                current = orelse[0]
                links.add(current)
                continue
            if orelse:
                out.append((None, orelse))
            return out


def backend_branches(node: ast.If | ast.IfExp, links: set) -> tuple[list, list] | None:
    """(branches that never run on the NPU, branches that run only there), each a node or a
    list of statements; None when the chain has no NPU branch. The chain's later links go
    into `links`, so that the walker does not read them again."""
    branches = _chain(node, links)
    tests = [(_mentions(test) if test is not None else (False, False)) for test, _ in branches]
    first_npu = next((i for i, (npu, cuda) in enumerate(tests) if npu and not cuda), None)
    if first_npu is None:
        return None
    off: list = []
    for i, (test, branch) in enumerate(branches):
        npu, cuda = tests[i]
        if i > first_npu or (i < first_npu and cuda and not npu):
            off.append(branch)
        if test is not None and cuda and not npu and i != first_npu:
            off.append(test)  # `device_type == "cuda"` beside `== "npu"` is not a device being chosen
    return off, [branches[first_npu][1]]


def and_branches(node: ast.BoolOp) -> tuple[list, list] | None:
    """`is_npu_available() and torch.npu.device_count()`: the operands after one that tests
    for the NPU run only there, as backend_branches gives them; None for other operations."""
    if type(node.op) is not ast.And:
        return None
    for i, value in enumerate(node.values[:-1]):
        npu, cuda = _mentions(value)
        if npu and not cuda:
            return [], [node.values[i + 1:]]
    return None


# --- a class per backend ---------------------------------------------------------------------
# The words of a class name: `CUDA_Accelerator`, `CudaPlatform`, `NvmlCudaPlatform`, `NPUPlatform`.
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# What the base of a scheme of device backends is called: DeepSpeed's `DeepSpeedAccelerator`,
# ColossalAI's `BaseAccelerator`, Lightning's `Accelerator`, vLLM's `Platform` /
# `CudaPlatformBase`, `…DeviceInterface`. Not "backend": an `AttentionBackend` is a choice of
# kernels, and its CUDA one may be the one an NPU run picks (ColossalAI's `use_cuda_kernel`).
_SCHEME_WORDS = frozenset({"accelerator", "platform", "device"})


def _words(name: str) -> set[str]:
    return {w.lower() for w in _NAME_WORD.findall(name)}


def _base_name(base: ast.expr) -> str:
    return base.attr if type(base) is ast.Attribute else getattr(base, "id", "")


def backend_class(node: ast.ClassDef) -> str | None:
    """"cuda" or "npu" for a class that is one backend of a per-backend scheme: its name
    says CUDA (or the NPU) and it subclasses an accelerator / platform / device
    base (`class CUDA_Accelerator(DeepSpeedAccelerator)`, `class CudaPlatform(Platform)`).
    Such a class runs only where its backend was chosen. Runs for every class, so the name
    is tested with a substring first."""
    lowered = node.name.lower()
    if "cuda" not in lowered and "npu" not in lowered:
        return None
    words = _words(node.name)
    cuda, npu = "cuda" in words, "npu" in words
    if cuda == npu or not any(_SCHEME_WORDS & _words(_base_name(base)) for base in node.bases):
        return None
    return "cuda" if cuda else "npu"


def class_branches(backend: str | None, body: list[ast.stmt]) -> list[tuple[list, list]]:
    """The multi-backend branches (as backend_branches gives them) of a backend class's
    body statements `body`: never on the NPU for CUDA's, only there for the NPU's."""
    if backend is None or not body:
        return []
    return [([body], [])] if backend == "cuda" else [([], [body])]
