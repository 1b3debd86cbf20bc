"""Code already written for several backends, or only for CUDA.

In an `if`/`elif` chain (or a conditional expression) with a branch that tests for the NPU
(`elif is_npu_available():`, `if device_type == "npu":`, `torch.npu.is_available()`), that
branch runs on the NPU and the branches after it never do; a CUDA-testing branch before it
(`if torch.cuda.is_available():`, `device.type == "cuda"`) does not either. The operands of an
`and` after one that tests for the NPU (`is_npu_available() and torch.npu.device_count()`)
run only there too. A branch that tests for another backend (`if torch.version.hip:`,
`device.type == "mps"`) never runs on the NPU, with or without an NPU branch beside it.
Findings about CUDA code there are advice at most, and `torch.npu` code in the NPU branch is
the port already done.

Without an NPU branch, a branch that tests for CUDA (`if torch.cuda.is_available():`,
`backend == "nccl"`, `args.device == "cuda"`) runs on an NPU host only once its test is
changed: the test is what to report, and the CUDA code inside follows from it. So does the
rest of a function after `if not torch.cuda.is_available(): return` (exit_guards; not after a
test's skip, which is a skip condition), and a test
case whose marks require CUDA (`pytest.param(..., marks=RunIf(min_cuda_gpus=1))`,
case_branches). A `match` statement's cases are read as a chain (`case "cuda":`, `case "npu":`),
and the class of another device in a per-backend scheme (`HPU_Accelerator`) as another backend's."""

from __future__ import annotations

import ast
import re
from typing import Any, NamedTuple

# whole words inside identifiers and strings: `is_npu_available`, "npu:0"; not `input`
NPU_WORD = re.compile(r"(?<![a-z])(?:npu|hccl|ascend)(?![a-z])")
CUDA_WORD = re.compile(r"(?<![a-z])(?:cuda|nccl)(?![a-z])")
# backends that are neither: ROCm (`torch.version.hip`), Intel GPUs, Apple's MPS, Habana's HPU,
# Cambricon's MLU
OTHER_WORD = re.compile(r"(?<![a-z])(?:hip|rocm|xpu|mps|hpu|mlu)(?![a-z])")


class Branches(NamedTuple):
    """The branches of one backend chain (or class), each a node or a list of statements."""

    never: list  # never run on the NPU: the code beside them handles it
    only: list  # run only there
    other: list  # run only on another backend (ROCm, Intel's XPU, Apple's MPS)
    guarded: list  # (test, branch): run only when a CUDA test passes, in a chain without an NPU branch


def may_test_backend(text: str) -> bool:
    """Whether code with this text can hold a backend test (the words _mentions looks for, in
    any case); without one its `if`s need not be read. An `npu` after an `i` is never one
    (`input`, in most files): an identifier or a string holding it has the `i` before it
    too. (A regex with IGNORECASE reads text ten times slower than lowering it.)"""
    lowered = text.lower()
    return (lowered.count("npu") > lowered.count("inpu") or "cuda" in lowered or "hccl" in lowered
            or "nccl" in lowered or "ascend" in lowered)


NOTHING = (False, False, False)


def _mentions(test: ast.expr) -> tuple[bool, bool, bool]:
    """(tests for the NPU, for CUDA, for another backend): names, attributes, calls and
    compared strings; a negated test (`not is_npu_available()`, `!= "npu"`) tests for none.
    Runs for every `if` in a file, so it walks by hand and looks at a word twice only when
    it may match."""
    npu = cuda = other = False
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
            if type(node.func) is ast.Name and node.func.id == "hasattr":
                # `hasattr(torch, "npu")` tests for torch_npu; `hasattr(torch, "cuda")` or
                # `hasattr(torch.cuda.amp, "custom_fwd")` for nothing CUDA needs: every torch build has them
                if not npu and len(node.args) > 1:
                    npu = _mentions(node.args[1])[0]
                continue
            stack.append(node.func)
            stack.extend(node.args)
            stack.extend(kw.value for kw in node.keywords)
            continue
        elif kind is ast.UnaryOp and type(node.op) is ast.Not:
            return NOTHING
        elif kind is ast.Compare:
            if any(type(op) in (ast.NotEq, ast.IsNot, ast.NotIn) for op in node.ops):
                return NOTHING
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
        if not other and ("hip" in word or "rocm" in word or "xpu" in word or "mps" in word or "hpu" in word
                          or "mlu" in word):
            other = OTHER_WORD.search(word) is not None
    return npu, cuda, other


def _gates(test: ast.expr) -> tuple[bool, bool, bool]:
    """_mentions of a test, conjunct by conjunct: `torch.cuda.is_available() and not
    args.cpu` tests for CUDA, the negated part for nothing."""
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        npu = cuda = other = False
        for value in test.values:
            n, c, o = _gates(value)
            npu, cuda, other = npu or n, cuda or c, other or o
        return npu, cuda, other
    return _mentions(test)


def _chain(node: ast.If | ast.IfExp | ast.Match, links: set) -> list[tuple[Any, object]]:
    """(test, branch) for each branch of an if/elif/else chain; the else has no test. The
    `elif` nodes (and nested conditional expressions) are added to `links`. A `match`
    statement's cases are its branches, each pattern its test (`case "cuda":`); `case _:` is
    the else."""
    out: list[tuple[Any, object]] = []
    if type(node) is ast.Match:
        for case in node.cases:
            pattern = case.pattern
            wildcard = type(pattern) is ast.MatchAs and pattern.pattern is None and case.guard is None
            out.append((None if wildcard else pattern, case.body))
        return out
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


def backend_branches(node: ast.If | ast.IfExp | ast.Match, links: set) -> Branches | None:
    """The Branches of a chain; None when no branch tests for a backend. The chain's later
    links go into `links`, so that the walker does not read them again."""
    branches = _chain(node, links)
    tests = [(_gates(test) if test is not None else NOTHING) for test, _ in branches]
    if not any(npu or cuda or other for npu, cuda, other in tests):
        return None
    first_npu = next((i for i, (npu, cuda, _) in enumerate(tests) if npu and not cuda), None)
    off: list = []
    other_backend: list = []
    guarded: list = []
    for i, (test, branch) in enumerate(branches):
        npu, cuda, other = tests[i]
        if test is None or npu:
            if first_npu is not None and i > first_npu:
                off.append(branch)
            continue
        if other and not cuda:
            other_backend.append(branch)  # `if torch.version.hip:`: ROCm's branch
        elif first_npu is None:
            if cuda and not (type(test) is ast.BoolOp and type(test.op) is ast.Or) and type(test) is not ast.MatchOr:
                guarded.append((test, branch))  # `use_cuda or force`, `case "cuda" | "cpu":` may pass without CUDA
        elif cuda or i > first_npu:
            off.append(branch)
            if cuda:
                off.append(test)  # `device_type == "cuda"` beside `== "npu"` is not a device being chosen
    if first_npu is None:
        return Branches([], [], other_backend, guarded) if other_backend or guarded else None
    return Branches(off, [branches[first_npu][1]], other_backend, [])


def and_branches(node: ast.BoolOp) -> Branches | None:
    """`is_npu_available() and torch.npu.device_count()`: the operands after one that tests
    for the NPU run only there, and after one for another backend (`bool(torch.version.hip) and
    torch.cuda.is_available()`) only on that backend, as backend_branches gives them; None for
    other operations."""
    if type(node.op) is not ast.And:
        return None
    for i, value in enumerate(node.values[:-1]):
        npu, cuda, other = _mentions(value)
        if npu and not cuda:
            return Branches([], [node.values[i + 1:]], [], [])
        if other and not cuda:
            return Branches([], [], [node.values[i + 1:]], [])
    return None


# what leaves a block at once: `return`, `raise`, `continue`, `break`, `pytest.skip(...)`,
# `self.skipTest(...)`, `sys.exit(...)`
_EXIT_STATEMENTS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_EXIT_CALLS = frozenset({"skip", "skipTest", "exit"})  # pytest.skip, self.skipTest, sys.exit


def leaves(body: list[ast.stmt]) -> bool:
    """The block ends by leaving: its last statement is one of those."""
    last = body[-1]
    if isinstance(last, _EXIT_STATEMENTS):
        return True
    call = last.value if type(last) is ast.Expr else None
    if type(call) is not ast.Call:
        return False
    func = call.func
    return (func.attr if type(func) is ast.Attribute else getattr(func, "id", "")) in _EXIT_CALLS


def _failed_cuda_test(test: ast.expr) -> ast.expr | None:
    """X of `not X` where X tests for CUDA and not the NPU, alone or as one operand of an `or`
    (`not torch.cuda.is_available() or torch.cuda.device_count() < 2`): where the test
    is true, X failed."""
    for value in test.values if type(test) is ast.BoolOp and type(test.op) is ast.Or else (test,):
        if type(value) is ast.UnaryOp and type(value.op) is ast.Not:
            npu, cuda, _other = _gates(value.operand)
            if cuda and not npu:
                return value.operand
    return None


_SKIP_CALLS = frozenset({"skip", "skipTest", "SkipTest"})


def _skip_call(node: ast.expr | None) -> bool:
    """`pytest.skip(...)`, `self.skipTest(...)`, `unittest.SkipTest(...)`, `unittest.skip(reason)(test)`."""
    if type(node) is not ast.Call:
        return False
    func = node.func
    if type(func) is ast.Call:
        return _skip_call(func)
    return (func.attr if type(func) is ast.Attribute else getattr(func, "id", "")) in _SKIP_CALLS


def skips(body: list[ast.stmt]) -> bool:
    """The block ends by skipping a test: `pytest.skip(...)`, `raise unittest.SkipTest(...)`, a
    decorator's `return unittest.skip(reason)(test_case)`."""
    last = body[-1]
    value = last.exc if type(last) is ast.Raise else getattr(last, "value", None)
    return type(last) in (ast.Expr, ast.Return, ast.Raise) and _skip_call(value)


def exit_guards(body: list[ast.stmt]) -> list[Branches]:
    """`if not torch.cuda.is_available(): return` in a function's body: the statements after
    it run only where the CUDA test passes, as under `if torch.cuda.is_available():`. Not after
    a test's skip (`pytest.skip(...)`): that test is a skip condition, as in a skip decorator,
    and what follows it is the test to port."""
    out = []
    for i, stmt in enumerate(body[:-1]):
        if type(stmt) is ast.If and not stmt.orelse and leaves(stmt.body) and not skips(stmt.body):
            test = _failed_cuda_test(stmt.test)
            if test is not None:
                out.append(Branches([], [], [], [(test, body[i + 1:])]))
    return out


_SKIP_IF = frozenset({"skipif", "skip_if", "skipIf"})
_SKIP_UNLESS = frozenset({"skipUnless", "skip_unless"})


def _cuda_mark(mark: ast.expr) -> ast.expr | None:
    """What a test mark requires of CUDA, if it requires it: X of `pytest.mark.skipif(not X, ...)`
    or `unittest.skipUnless(X, ...)` where X tests for CUDA; a mark with a keyword naming CUDA
    (Lightning's `RunIf(min_cuda_gpus=1)`) itself."""
    if type(mark) is not ast.Call:
        return None
    func = mark.func
    name = func.attr if type(func) is ast.Attribute else getattr(func, "id", "")
    if mark.args and name in _SKIP_IF:
        return _failed_cuda_test(mark.args[0])
    if mark.args and name in _SKIP_UNLESS:
        npu, cuda, _other = _gates(mark.args[0])
        return mark.args[0] if cuda and not npu else None
    for kw in mark.keywords:
        if kw.arg is not None and CUDA_WORD.search(kw.arg.lower()) \
                and not (type(kw.value) is ast.Constant and not kw.value.value):
            return mark
    return None


def case_branches(call: ast.Call) -> Branches | None:
    """`pytest.param(torch.device("cuda"), marks=RunIf(min_cuda_gpus=1))`: one case of a
    parametrized test, which its marks skip where CUDA is not; its values are CUDA code
    under that test (the test's other cases run on an NPU host)."""
    marks = next((kw.value for kw in call.keywords if kw.arg == "marks"), None)
    if marks is None or not call.args:
        return None
    for mark in marks.elts if isinstance(marks, (ast.List, ast.Tuple)) else (marks,):
        test = _cuda_mark(mark)
        if test is not None:
            return Branches([], [], [], [(test, call.args)])
    return None


# --- a class per backend ---------------------------------------------------------------------
# The words of a class name: `CUDA_Accelerator`, `CudaPlatform`, `NvmlCudaPlatform`, `NPUPlatform`.
NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# What the base of a scheme of device backends is called: DeepSpeed's `DeepSpeedAccelerator`,
# ColossalAI's `BaseAccelerator`, Lightning's `Accelerator`, vLLM's `Platform` /
# `CudaPlatformBase`, `…DeviceInterface`. Not "backend": an `AttentionBackend` is a choice of
# kernels, and its CUDA one may be the one an NPU run picks (ColossalAI's `use_cuda_kernel`).
_SCHEME_WORDS = frozenset({"accelerator", "platform", "device"})
# a base that is a choice of kernels: its CUDA variant (`CudaAttentionBackend(AttentionBackend)`)
# may be what an NPU run picks
_KERNEL_WORDS = frozenset({"backend", "kernel", "attention", "impl"})


def name_words(name: str) -> list[str]:
    """The words of a name, lower-cased, in order: `CudaGraphRunner` → cuda, graph, runner; `HAS_CUDA`."""
    return [w.lower() for w in NAME_WORD.findall(name)]


def _words(name: str) -> set[str]:
    return set(name_words(name))


def _base_name(base: ast.expr) -> str:
    return base.attr if type(base) is ast.Attribute else getattr(base, "id", "")


def backend_class(node: ast.ClassDef) -> str | None:
    """"cuda" or "npu" for a class that is one backend of a per-backend scheme: its name says
    CUDA or GPU (or the NPU) and it subclasses an accelerator / platform / device base (`class
    CUDA_Accelerator(DeepSpeedAccelerator)`, `class CudaPlatform(Platform)`) or the base it
    names (`class CUDAOpBuilder(OpBuilder)`). Such a class runs only where its backend was
    chosen; not so a class built on a CUDA one (`class DSVAE(CUDAGraph, torch.nn.Module)` is a
    model that captures CUDA graphs, and runs wherever the model does). A class whose name says no
    backend is one if its base is a backend's variant of its own kind (_backend_variant_base).
    "other" for the class of another device in such a scheme (`class HPU_Accelerator(DeepSpeedAccelerator)`,
    the NPU's sibling). Runs for every class, so the name is tested with a substring first."""
    lowered = node.name.lower()
    if "cuda" not in lowered and "gpu" not in lowered and "npu" not in lowered:
        return _other_device_class(node) or _backend_variant_base(node)
    words = _words(node.name)
    cuda, npu = "cuda" in words or "gpu" in words, "npu" in words
    if cuda == npu:
        return None
    for base in node.bases:
        named = _words(_base_name(base))
        if _SCHEME_WORDS & named or (named and named < words and not _KERNEL_WORDS & named):
            return "cuda" if cuda else "npu"
    return None


# the devices of other per-backend classes: an NPU host chooses none of them. Not the CPU: a scheme
# that knows no NPU (Lightning's "auto") chooses its CPU class there
_OTHER_DEVICES = frozenset({"hpu", "xpu", "mps", "mlu", "sdaa", "hip", "rocm", "musa", "xla", "tpu"})


def _other_device_class(node: ast.ClassDef) -> str | None:
    words = _words(node.name)
    if not words & _OTHER_DEVICES or not words & _SCHEME_WORDS:
        return None
    return "other" if any(_SCHEME_WORDS & _words(_base_name(base)) for base in node.bases) else None


def _backend_variant_base(node: ast.ClassDef) -> str | None:
    """"cuda" or "npu" for a class whose name says no backend, built on one backend's variant of
    its own kind: `class FusedAdamBuilder(CUDAOpBuilder)` is a builder on CUDA's builder
    (DeepSpeed builds each op once per accelerator, the NPU's in op_builder/npu/). Not `class
    DSVAE(CUDAGraph, nn.Module)`: a VAE is no graph, and it runs wherever the model does."""
    kind = NAME_WORD.findall(node.name)[-1:]
    for base in node.bases:
        name = _base_name(base)
        lowered = name.lower()
        if kind and ("cuda" in lowered or "gpu" in lowered or "npu" in lowered):
            words = NAME_WORD.findall(name)
            backends = {w.lower() for w in words[:-1]} & {"cuda", "gpu", "npu"}
            if len(backends) == 1 and words[-1].lower() == kind[0].lower():
                return "npu" if backends == {"npu"} else "cuda"
    return None


# the folders of a per-backend scheme, one module per backend: Lightning's `accelerators/cuda.py`,
# vLLM's `platforms/cuda.py`, DeepSpeed's `accelerator/cuda_accelerator.py`
_SCHEME_FOLDERS = frozenset({"accelerator", "accelerators", "platform", "platforms", "device", "devices", "backends"})


def backend_module(path: str | None) -> str | None:
    """`folder/module.py` for a module that is the CUDA backend of such a scheme: its name says
    CUDA, GPU or TensorRT (`backends/tensorrt.py`, run only where its engine was chosen) and not
    the NPU, in a folder named for the scheme."""
    if not path:
        return None
    parts = path.replace("\\", "/").rsplit("/", 2)  # read for every file: no PurePath
    if len(parts) < 2 or parts[-2].lower() not in _SCHEME_FOLDERS:
        return None
    words = set(re.split(r"[_\W]+", parts[-1].rpartition(".")[0].lower()))
    return f"{parts[-2]}/{parts[-1]}" if words & {"cuda", "gpu", "tensorrt", "trt"} and "npu" not in words else None


def class_branches(backend: str | None, body: list[ast.stmt]) -> list[Branches]:
    """The Branches of a backend class's body statements `body`: never on the NPU for
    CUDA's, only there for the NPU's, another backend's for another device's."""
    if backend is None or not body:
        return []
    if backend == "other":
        return [Branches([], [], [body], [])]
    return [Branches([body], [], [], [])] if backend == "cuda" else [Branches([], [body], [], [])]
