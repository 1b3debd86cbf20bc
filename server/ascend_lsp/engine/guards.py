"""Code already written for several backends: in an `if`/`elif` chain (or a conditional
expression) with a branch that tests for the NPU (`elif is_npu_available():`,
`if device_type == "npu":`, `torch.npu.is_available()`), that branch runs on the NPU and
the branches after it never do; a CUDA-testing branch before it (`if
torch.cuda.is_available():`, `device.type == "cuda"`) does not either. Findings about CUDA
code there are advice at most, and `torch.npu` code in the NPU branch is the port already
done."""

from __future__ import annotations

import ast
import re

# whole words inside identifiers and strings: `is_npu_available`, "npu:0"; not `input`
NPU_WORD = re.compile(r"(?<![a-z])(?:npu|hccl|ascend)(?![a-z])")
CUDA_WORD = re.compile(r"(?<![a-z])(?:cuda|nccl)(?![a-z])")


def _mentions(test: ast.expr) -> tuple[bool, bool]:
    """(tests for the NPU, tests for CUDA): names, attributes, calls and compared strings;
    a negated test (`not is_npu_available()`) tests for neither."""
    npu = cuda = False
    for node in ast.walk(test):
        kind = type(node)
        if kind is ast.UnaryOp and type(node.op) is ast.Not:
            return False, False
        if kind is ast.Compare and any(type(op) in (ast.NotEq, ast.IsNot, ast.NotIn) for op in node.ops):
            return False, False
        if kind is ast.Name:
            word = node.id.lower()
        elif kind is ast.Attribute:
            word = node.attr.lower()
        elif kind is ast.Constant and type(node.value) is str:
            word = node.value.lower()
        else:
            continue
        npu = npu or NPU_WORD.search(word) is not None
        cuda = cuda or CUDA_WORD.search(word) is not None
    return npu, cuda


def _chain(node: ast.If | ast.IfExp) -> list[tuple[ast.expr | None, object]]:
    """(test, branch) for each branch of an if/elif/else chain; the else has no test."""
    out: list[tuple[ast.expr | None, object]] = []
    current: object = node
    while True:
        if type(current) is ast.IfExp:
            out.append((current.test, current.body))
            current = current.orelse
            if type(current) is not ast.IfExp:
                out.append((None, current))
                return out
        else:
            out.append((current.test, current.body))
            orelse = current.orelse
            if len(orelse) == 1 and type(orelse[0]) is ast.If:
                current = orelse[0]
                continue
            if orelse:
                out.append((None, orelse))
            return out


def backend_branches(node: ast.If | ast.IfExp) -> tuple[list, list] | None:
    """(branches that never run on the NPU, branches that run only there), each a node or a
    list of statements; None when the chain has no NPU branch."""
    branches = _chain(node)
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
