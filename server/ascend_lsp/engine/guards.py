"""Code already written for several backends, or only for CUDA.

In an `if`/`elif` chain (or a conditional expression) with a branch that tests for the NPU
(`elif is_npu_available():`, `if device_type == "npu":`, `torch.npu.is_available()`), that
branch runs on the NPU and the branches after it never do; a CUDA-testing branch before it
(`if torch.cuda.is_available():`, `device.type == "cuda"`) does not either. The operands of an
`and` after one that tests for the NPU (`is_npu_available() and torch.npu.device_count()`)
run only there too. A branch that tests for another backend (`if torch.version.hip:`,
`device.type == "mps"`, `hasattr(torch, "musa")`), and the rest of a block after `if not
torch.xpu.is_available(): return`, never runs on the NPU, with or without an NPU branch beside it. In a chain
with an NPU branch, one before it whose test names a GPU (`Torch.is_gpu_available()`) is CUDA's,
and an `else` whose code names only the NPU is the NPU's; a CUDA test in an `or` beside an NPU
test decides nothing there. A branch under a test naming TensorRT runs only where that engine is
chosen, and `with A and B:` never enters A. Findings about CUDA code there are advice at most, and
`torch.npu` code in the NPU branch is the port already done.

Without an NPU branch, a branch that tests for CUDA (`if torch.cuda.is_available():`,
`backend == "nccl"`, `args.device == "cuda"`) runs on an NPU host only once its test is
changed: the test is what to report, and the CUDA code inside follows from it. So does the
rest of a block after `if not torch.cuda.is_available(): return` (or `continue`, `break`,
`raise`, `sys.exit()`; exit_guards, block_exits; not after a test's skip, which is a skip
condition), and a test
case whose marks require CUDA (`pytest.param(..., marks=RunIf(min_cuda_gpus=1))`,
case_branches). A `match` statement's cases are read as a chain (`case "cuda":`, `case "npu":`),
and the class of another device in a per-backend scheme (`HPU_Accelerator`) as another backend's."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from ..knowledge.platform import load_platform
from ..knowledge.portable import load_portable
from .versions import admits, floor, release

# whole words inside identifiers and strings: `is_npu_available`, "npu:0"; not `input`
NPU_WORD = re.compile(r"(?<![a-z])(?:npu|hccl|ascend)(?![a-z])")
CUDA_WORD = re.compile(r"(?<![a-z])(?:cuda|nccl)(?![a-z])")
# backends that are neither: ROCm (`torch.version.hip`), Intel GPUs, Apple's MPS, Habana's HPU,
# Cambricon's MLU, Moore Threads' MUSA
OTHER_WORD = re.compile(r"(?<![a-z])(?:hip|rocm|xpu|mps|hpu|mlu|dipu|musa)(?![a-z])")
# the modules of torch that only another backend's plug-in adds (torch 2.13 has `torch.xpu` and
# `torch.mps` itself): `hasattr(torch, "musa")` holds only where that plug-in is loaded
PLUGIN_MODULES = frozenset({"musa", "mlu", "hpu", "dipu"})


class Branches(NamedTuple):
    """The branches of one backend chain (or class), each a node or a list of statements."""

    never: list  # never run on the NPU: the code beside them handles it
    only: list  # run only there
    other: list  # run only on another backend (ROCm, Intel's XPU, Apple's MPS)
    guarded: list  # (test, branch): run only when a CUDA test passes, in a chain without an NPU branch
    why: str = ""  # why the `never` branches do not run there, when not for an NPU branch beside them


def may_test_backend(lowered: str) -> bool:
    """Whether code with this text, lowered, can hold a backend test (the words _mentions looks for, in
    any case); without one its `if`s need not be read. An `npu` after an `i` is never one
    (`input`, in most files): an identifier or a string holding it has the `i` before it
    too. Another backend's words too (`is_mps_tensor_safe(x)`), but not `hip`, in too many words
    (`ship`, `chip`): ROCm's test says `torch.version.hip`. And an operating system's test
    (other_platform: `sys.platform`, `platform.system()`, `os.name`). (A regex with IGNORECASE reads
    text ten times slower than lowering it.)"""
    return (lowered.count("npu") > lowered.count("inpu") or "cuda" in lowered or "hccl" in lowered
            or "nccl" in lowered or "ascend" in lowered or "mps" in lowered or "rocm" in lowered
            or "version.hip" in lowered or "xpu" in lowered or "hpu" in lowered or "mlu" in lowered
            or "dipu" in lowered or "musa" in lowered or "platform" in lowered or "os.name" in lowered)


NOTHING = (False, False, False)
# names and instance attributes (`self.x`) that hold a CUDA test (held_tests, local_held), and what
# each holds: the test's node in the function, or its text elsewhere in the file; or NO_BACKEND for a
# name with `cuda` in it that holds a test of no backend (holds_no_backend_test)
Held = Mapping[str, Any]
NONE_HELD: Held = MappingProxyType({})


def _mentions(test: ast.expr, held: Held = NONE_HELD) -> tuple[bool, bool, bool]:
    """(tests for the NPU, for CUDA, for another backend): names, attributes, calls and
    compared strings; a negated test (`not is_npu_available()`, `!= "npu"`) tests for none.
    A name in `held` tests for CUDA. Runs for every `if` in a file, so it walks by hand and
    looks at a word twice only when it may match."""
    npu = cuda = other = False
    stack: list[Any] = [test]  # AST nodes, read by their exact type
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            if held and node.id in held:
                cuda = cuda or held[node.id] != NO_BACKEND
                continue
            word = node.id.lower()
        elif kind is ast.Attribute:
            if held and type(node.value) is ast.Name and node.value.id == "self" and "self." + node.attr in held:
                cuda = cuda or held["self." + node.attr] != NO_BACKEND
                continue
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
                if len(node.args) > 1 and type(node.args[1]) is ast.Constant and node.args[1].value in PLUGIN_MODULES \
                        and getattr(node.args[0], "id", "") == "torch":
                    other = True  # `hasattr(torch, "musa")`
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
                          or "mlu" in word or "dipu" in word or "musa" in word):
            other = OTHER_WORD.search(word) is not None
    return npu, cuda, other


def _gates(test: ast.expr, held: Held = NONE_HELD) -> tuple[bool, bool, bool]:
    """_mentions of a test, conjunct by conjunct: `torch.cuda.is_available() and not
    args.cpu` tests for CUDA, the negated part for nothing."""
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        npu = cuda = other = False
        for value in test.values:
            n, c, o = _gates(value, held)
            npu, cuda, other = npu or n, cuda or c, other or o
        return npu, cuda, other
    return _mentions(test, held)


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


def backend_branches(node: ast.If | ast.IfExp | ast.Match, links: set, held: Held = NONE_HELD,
                     torch: TorchTarget | None = None, engines: bool = True) -> list[Branches]:
    """The Branches of a chain, none when no branch tests for a backend or a torch release.
    The chain's later links go into `links`, so that the walker does not read them again.
    `if not X: A else: B` is read as `if X: B else: A` (and `!=` as `==`). A name in `held` tests for CUDA; arms
    only a torch older than `torch` takes never run on the NPU; with `engines`, those under a test naming
    TensorRT neither (engine_test)."""
    branches = _chain(node, links)
    found = [Branches([branches.pop(0)[1]], [], [], [], TYPE_CHECKING_ONLY)] if _type_checking(branches[0][0]) else []
    if len(branches) == 2 and branches[1][0] is None:
        passed = _negated(branches[0][0])  # `if not is_mps_tensor_safe(x):`, `if x.device.type != "mps":`
        if passed is not None:
            branches = [(passed, branches[1][1]), (None, branches[0][1])]
    elif len(branches) == 1 and _other_tensors_pass(branches[0][0]) \
            and isinstance(branches[0][1], list) and _elsewhere_path(branches[0][1]):
        return found + [Branches([branches[0][0]], [], [], [], OTHER_TENSORS)]
    elsewhere = [i for i, (test, _) in enumerate(branches) if test is not None and other_platform(test)]
    if elsewhere:
        found.append(Branches([branches[i][1] for i in elsewhere], [], [], [], OTHER_PLATFORM))
        branches = [arm for i, arm in enumerate(branches) if i not in elsewhere]
    old = _old_torch_arms(branches, torch) if torch is not None else ()
    if torch is not None and old:
        found.append(Branches([branches[i][1] for i in old], [], [], [], torch.why))
        branches = [arm for i, arm in enumerate(branches) if i not in old]
    engine = [i for i, (test, _) in enumerate(branches) if test is not None and engine_test(test)] if engines else ()
    if engine:
        found.append(Branches([branches[i][1] for i in engine], [], [], [], ENGINE_TEST))
        branches = [arm for i, arm in enumerate(branches) if i not in engine]
    tests = [(_gates(test, held) if test is not None else NOTHING) for test, _ in branches]
    if not any(npu or cuda or other for npu, cuda, other in tests):
        return found
    first_npu = next((i for i, (npu, cuda, _) in enumerate(tests) if npu and not cuda), None)
    if first_npu is None and branches[-1][0] is None and any(cuda for _, cuda, _ in tests) \
            and _code_names(branches[-1][1]) == (True, False):
        first_npu = len(branches) - 1  # `torch.cuda.current_device() if backend == "nccl" else torch.npu.current_device()`
    if first_npu is not None:  # `if Torch.is_gpu_available(): ... elif Torch.is_npu_available(): ...`
        tests = [(npu, cuda or (i < first_npu and test is not None and _names_gpu(test)), other)
                 for i, ((test, _), (npu, cuda, other)) in enumerate(zip(branches, tests))]
    off: list = []
    other_backend: list = []
    guarded: list = []
    placed: list = []
    for i, (test, branch) in enumerate(branches):
        npu, cuda, other = tests[i]
        if test is None or npu:
            if first_npu is not None and i > first_npu:
                off.append(branch)
            continue
        if other and not cuda:
            other_backend.append(branch)  # `if torch.version.hip:`: ROCm's branch
        elif first_npu is None:
            if not cuda or (type(test) is ast.BoolOp and type(test.op) is ast.Or) or type(test) is ast.MatchOr \
                    or _among_others(test):
                continue  # `use_cuda or force`, `case "cuda" | "cpu":`, `name in ("auto", "cuda")` may pass without CUDA
            if _placement(test) and _falls_back(branch, branches[i + 1:]):
                placed += [branch, test]  # `elif pred.is_cuda: <CUDA kernel> else: <the same in PyTorch>`
            else:
                guarded.append((held_test(test, held), branch))
        elif cuda or i > first_npu:
            off.append(branch)
            if cuda:
                off.append(test)  # `device_type == "cuda"` beside `== "npu"` is not a device being chosen
    if placed:
        found.append(Branches(placed, [], [], [], PLACEMENT))
    if first_npu is None:
        return found + [Branches([], [], other_backend, guarded)] if other_backend or guarded else found
    return found + [Branches(off, [branches[first_npu][1]], other_backend, [])]


TYPE_CHECKING_ONLY = " (Under `if TYPE_CHECKING:`, which only type checkers read: it never runs.)"


def _code_names(branch: Any) -> tuple[bool, bool]:
    """(names the NPU, names CUDA) in a branch's code (an expression or statements), by its names,
    attributes and imports (`torch.npu.current_device()`, `import torch_npu`), not the strings in it (a log
    line's "NPU"); a conditional expression's arm that is a string, by its words."""
    if type(branch) is ast.Constant and type(branch.value) is str:  # `"nccl" if ... else "hccl"`: the value itself
        return NPU_WORD.search(branch.value.lower()) is not None, CUDA_WORD.search(branch.value.lower()) is not None
    npu = cuda = False
    for root in branch if type(branch) is list else [branch]:
        for node in ast.walk(root):
            word = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) \
                else node.name if isinstance(node, ast.alias) else None
            if word is not None:
                word = word.lower()
                npu = npu or NPU_WORD.search(word) is not None
                cuda = cuda or CUDA_WORD.search(word) is not None
    return npu, cuda


GPU_WORD = re.compile(r"(?<![a-z])gpus?(?![a-z])")


def _names_gpu(test: ast.expr) -> bool:
    """A test that names a GPU (`Torch.is_gpu_available()`, `args.use_gpu`): before an NPU branch of
    the same chain, the GPU it means is not the NPU."""
    return any(GPU_WORD.search((getattr(node, "id", None) or getattr(node, "attr", "")).lower()) is not None
               for node in ast.walk(test) if type(node) in (ast.Name, ast.Attribute))


ENGINE_TEST = (" (Under a test that names TensorRT, NVIDIA's inference engine: it runs only where that engine was "
               "chosen, on NVIDIA GPUs.)")


def engine_test(test: ast.expr) -> bool:
    """A test that passes where TensorRT is chosen: it names TensorRT (`if trt_file is not None:`,
    `if args.trt:`, `backend == "tensorrt"`) and is no negation (`if not args.trt:`, `trt_file is None`)."""
    if type(test) is ast.BoolOp:
        return type(test.op) is ast.And and any(engine_test(value) for value in test.values)
    if type(test) is ast.UnaryOp or (type(test) is ast.Compare and any(
            type(op) in (ast.NotEq, ast.NotIn) or (type(op) is ast.Is and _none(right))
            or (type(op) is ast.Eq and _none(right)) for op, right in zip(test.ops, test.comparators))):
        return False
    for node in ast.walk(test):
        word = node.id if type(node) is ast.Name else node.attr if type(node) is ast.Attribute \
            else node.value if type(node) is ast.Constant and type(node.value) is str else None
        if word is not None and not part_words(word).isdisjoint(TENSORRT_WORDS):
            return True
    return False


def _none(node: ast.expr) -> bool:
    return type(node) is ast.Constant and node.value in (None, False)


NOT_ENTERED = (" (Made but never entered: `with A and B:` enters only B, the value of the `and`; A is only tested "
               "for truth.)")


def unentered(node: ast.With | ast.AsyncWith) -> list[Branches]:
    """The context managers a `with` makes but does not enter: all but the last operand of an
    `and` given as one item (`with torch.cuda.amp.autocast() and ctx:` enters `ctx`)."""
    return [Branches(item.context_expr.values[:-1], [], [], [], NOT_ENTERED) for item in node.items
            if type(item.context_expr) is ast.BoolOp and type(item.context_expr.op) is ast.And]


def _type_checking(test: ast.expr | None) -> bool:
    """`TYPE_CHECKING` or `typing.TYPE_CHECKING`, the test whose arm never runs."""
    return (type(test) is ast.Name and test.id == "TYPE_CHECKING") or (
        type(test) is ast.Attribute and test.attr == "TYPE_CHECKING" and type(test.value) is ast.Name
        and test.value.id in ("typing", "typing_extensions"))


# torch_npu is published for Linux alone: PyPI has torch-npu 2.13.0 wheels for manylinux_2_28 x86_64 and
# aarch64 and none for Windows or macOS (`pip download torch-npu==2.13.0 --only-binary :all: --platform ...`)
OTHER_PLATFORM = (" (On a branch for another operating system (macOS, Windows): torch_npu runs on Linux alone, so an "
                  "NPU host never takes it.)")
# what sys.platform, os.name and platform.system() say on the systems torch_npu has no build for
PLATFORM_NAMES = frozenset({"darwin", "win32", "cygwin", "msys", "nt", "windows", "java"})
PLATFORM_PREFIXES = ("win", "darwin", "cygwin")


def other_platform(test: ast.expr) -> bool:
    """A test that holds only on an operating system other than Linux: `sys.platform == "darwin"`,
    `platform.system() in ("Darwin", "Windows")`, `os.name == "nt"`, `sys.platform.startswith("win")`,
    or a conjunction with one such part."""
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        return any(other_platform(value) for value in test.values)
    if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in (ast.Eq, ast.In) \
            and _names_platform(test.left):
        right = test.comparators[0]
        values = right.elts if type(test.ops[0]) is ast.In and isinstance(right, (ast.Tuple, ast.List, ast.Set)) \
            else [right]
        return bool(values) and all(type(v) is ast.Constant and type(v.value) is str
                                    and v.value.lower() in PLATFORM_NAMES for v in values)
    if type(test) is ast.Call and type(test.func) is ast.Attribute and test.func.attr == "startswith" \
            and _names_platform(test.func.value) and len(test.args) == 1:
        arg = test.args[0]
        values = arg.elts if type(arg) is ast.Tuple else [arg]
        return all(type(v) is ast.Constant and type(v.value) is str and v.value.lower().startswith(PLATFORM_PREFIXES)
                   for v in values)
    return False


def _names_platform(node: ast.expr) -> bool:
    """`sys.platform`, `os.name`, `platform.system()` (or `platform` from `from sys import platform`)."""
    if type(node) is ast.Call and not node.args:
        node = node.func
        return type(node) is ast.Attribute and node.attr == "system" and type(node.value) is ast.Name \
            and node.value.id == "platform"
    if type(node) is ast.Attribute and type(node.value) is ast.Name:
        return (node.value.id, node.attr) in (("sys", "platform"), ("os", "name"))
    return type(node) is ast.Name and node.id == "platform"


_POSITIVE = {ast.NotEq: ast.Eq, ast.IsNot: ast.Is, ast.NotIn: ast.In}


def _negated(test: Any) -> ast.expr | None:
    """X of `not X`; `a == b` for `a != b` (placed where it stands, `written` gives its text); None
    for another test."""
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        return test.operand
    if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in _POSITIVE:
        passed = ast.copy_location(ast.Compare(test.left, [_POSITIVE[type(test.ops[0])]()], test.comparators), test)
        passed.negates = test  # type: ignore[attr-defined]
        return passed
    return None


def written(test: ast.expr) -> str | None:
    """The text of a test that _negated made (`device.type == 'cuda'` where the code says
    `device.type != "cuda"`), whose place in the source holds the other; None for one written there."""
    return ast.unparse(test) if hasattr(test, "negates") else None


def _among_others(test: ast.expr) -> bool:
    """`name in ("auto", "cuda", "gpu")`: one value of several, some of which are no CUDA device or backend."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.In \
            or type(test.comparators[0]) not in (ast.Tuple, ast.List, ast.Set):
        return False
    return any(type(e) is ast.Constant and type(e.value) is str and CUDA_WORD.search(e.value.lower()) is None
               and e.value.lower() not in ("gpu", "gpus") for e in test.comparators[0].elts)  # type: ignore[attr-defined]


PLACEMENT = (" (Taken for a tensor on a CUDA device only: an NPU tensor takes the path beside it, which does the "
             "same job.)")


def _placement(test: ast.expr) -> bool:
    """The test (or a conjunct of it) asks where a tensor is: `x.is_cuda`, `x.device.type == "cuda"`
    (not `self.device.type`: a module's or a run's device is chosen, not found)."""
    for value in test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else (test,):
        if type(value) is ast.Attribute and value.attr == "is_cuda":
            return True
        if type(value) is ast.Compare and len(value.ops) == 1 and type(value.ops[0]) is ast.Eq:
            side = value.left
            if type(side) is ast.Attribute and side.attr == "type" and type(side.value) is ast.Attribute \
                    and side.value.attr == "device" and not (type(side.value.value) is ast.Name
                                                             and side.value.value.id == "self"):
                return True
    return False


OTHER_TENSORS = (" (A test of where a tensor is whose branch is what tensors on other devices get: an NPU tensor "
                 "takes it, and it names no device of its own.)")


def _other_tensors_pass(test: Any) -> bool:
    """A tensor on any device but CUDA passes the test, read no further: `not x.is_cuda`,
    `x.device.type != "cuda"`, or an `or` that begins with one (`not x.is_cuda or not
    self.static_shapes`: the parts after it are not read for such a tensor)."""
    first = test.values[0] if type(test) is ast.BoolOp and type(test.op) is ast.Or else test
    passed = _negated(first)
    return passed is not None and _placement(passed)


def _elsewhere_path(body: list[ast.stmt]) -> bool:
    """The branch of `if not x.is_cuda:` (`x.device.type != "cuda"`) does a job on any device
    (`self.lm.to(tokens.device)`, `x = x.float()`): it does not raise, nor names the CPU (`.cpu()`,
    `.numpy()`, `"cpu"`, `cpu_rnnt.apply(...)`) or CUDA by a word of a name or a string, which would
    make it a path for one device; nor leaves (`return x` may skip what follows for the other
    devices: exit_guards reads that)."""
    if leaves(body):
        return False
    for node in (n for stmt in body for n in ast.walk(stmt)):
        name = node.attr if type(node) is ast.Attribute else node.id if type(node) is ast.Name else None
        text = node.value if type(node) is ast.Constant else None
        words = set(name_words(name)) if name is not None else {text.lower()} if type(text) is str else set()
        if words & {"cpu", "numpy", "cuda", "nccl"}:
            return False  # `cpu_rnnt.LogSoftmaxGradModification.apply(...)`: the CPU's own path
    return True


# what sets the precision a computation runs at: a CUDA arm that does it and an arm beside it that
# does not differ in more than the kernel (`.half()` before a flash attention kernel)
PRECISION_CALLS = frozenset({"half", "bfloat16", "autocast"})


def _falls_back(branch: Any, arms: list) -> bool:
    """A later arm does the work without CUDA: the else, which does not raise, and whose calls are
    not a part of the CUDA arm's (`with torch.autocast(..., dtype=torch.float32): x = einsum(...)`
    beside `x = einsum(...)` is more than a kernel chosen: the NPU would skip the float32), nor
    lack a call that sets the precision (`x.half()`)."""
    if not arms or arms[-1][0] is not None:
        return False  # no else: a tensor elsewhere does nothing here
    body = arms[-1][1]
    if isinstance(body, list) and type(body[-1]) is ast.Raise:
        return False
    mine, theirs = _callees(branch), _callees(body)
    return not theirs < mine and (mine & PRECISION_CALLS) <= theirs


def _returns_instead(exit: ast.stmt, rest: list[ast.stmt]) -> bool:
    """The early exit of a test of where a tensor is gives what the other devices get instead of the CUDA
    path after it (`if x.device.type != "cuda": return self._loop(x)`): a call that is no part of that path,
    or no result (`return None`, `return False`: the caller's own fallback); not a raise, nor the input
    handed back as it came (`return x`), which may skip work."""
    if type(exit) is ast.Continue:
        return True
    if type(exit) is not ast.Return:
        return False
    value = exit.value
    if value is None or type(value) is ast.Constant and value.value in (None, False):
        return True
    return type(value) is ast.Call and not _callees(value) <= _callees(rest)


def _callees(branch: Any) -> set[str]:
    """The names of what a branch calls (`einsum`, `autocast`)."""
    nodes = branch if isinstance(branch, list) else [branch]
    return {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            for node in nodes for n in ast.walk(node) if isinstance(n, ast.Call)}


def held_test(test: ast.expr, held: Held) -> ast.expr:
    """The test to report for `test`: the CUDA test a local name in it holds (`run_on_gpu =
    torch.cuda.is_available()`, then `if run_on_gpu:`, `if count > 0:`, `if run_on_gpu and
    verbose:`), else `test`."""
    name = _held_name(test, held) if held else None
    return held[name] if name is not None else test


def _held_name(test: ast.expr, held: Held) -> str | None:
    """The local name the test reads its CUDA test from: the name, one compared with constants,
    or the one conjunct of an `and` that does so where the others test for no backend."""
    if isinstance(test, ast.Name):
        return test.id if isinstance(held.get(test.id), ast.expr) else None
    if isinstance(test, ast.Compare):
        operands = [o for o in (test.left, *test.comparators) if not isinstance(o, ast.Constant)]
        return _held_name(operands[0], held) if len(operands) == 1 else None
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        found = [(value, _held_name(value, held)) for value in test.values]
        names = [name for _, name in found if name is not None]
        others = [value for value, name in found if name is None]
        return names[0] if len(names) == 1 and not any(any(_gates(v)) for v in others) else None
    return None


def parameter_defaults(arguments: ast.arguments) -> list[tuple[ast.arg, ast.expr | None]]:
    """Each parameter that may have a default, with it: the last positional ones that have one,
    then every keyword-only one (None where it has none)."""
    positional = [*arguments.posonlyargs, *arguments.args]
    return [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
            *zip(arguments.kwonlyargs, arguments.kw_defaults)]


def on_by_default(test: ast.expr, functions: list) -> bool:
    """`if use_cuda:` where `use_cuda` is a parameter of the innermost function around it
    (`functions`: the walk's (function, scope) events) that defaults to True (`def __init__(self,
    ..., use_cuda=True)`): an NPU host takes that branch unless a caller passes False, so the
    code under it is not held back by a test, as under `if torch.cuda.is_available():`."""
    if type(test) is not ast.Name:
        return False
    around = [func for func, _scope in functions
              if func.lineno <= test.lineno <= (func.end_lineno or func.lineno) and not inside_args(test, func)]
    if not around:
        return False
    args = max(around, key=lambda func: (func.lineno, func.col_offset)).args
    return any(arg.arg == test.id and type(default) is ast.Constant and default.value is True
               for arg, default in parameter_defaults(args))


def inside_args(node: ast.expr, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`node` is in the function's header (a default, an annotation), not its body."""
    first = func.body[0]
    return (node.lineno, node.col_offset) < (first.lineno, first.col_offset)


# --- held tests: a name or an attribute set from a CUDA test ---------------------------------
# an assignment line (`run_on_gpu = torch.cuda.is_available()`, `self.gpu_available = ...`): the
# indentation, `self.`, the name, the value
_ASSIGNMENT_LINE = re.compile(r"([ \t]*)(self\.)?([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)(.*)")
_CUDA_SPELLINGS = ("cuda", "CUDA", "Cuda", "nccl", "NCCL")


def _lines_naming_cuda(text: str) -> set[int]:
    """Where each line that names CUDA in one of its usual spellings begins (str.find: a regex
    or a lowered copy of the file costs ten times more, and this is read for every edit)."""
    starts = set()
    for word in _CUDA_SPELLINGS:
        at = text.find(word)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find(word, at + 4)
    return starts


_FALSY = (False, None, 0)


def as_test(value: ast.expr | None) -> ast.expr | None:
    """X of `True if X else False` and of `bool(X)`, which hold the same test; `value` otherwise."""
    if type(value) is ast.IfExp and type(value.body) is ast.Constant and value.body.value is True \
            and type(value.orelse) is ast.Constant and value.orelse.value is False:
        return value.test
    if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "bool" and len(value.args) == 1 \
            and not value.keywords:
        return value.args[0]
    return value


def _is_test(value: ast.expr) -> bool:
    """An expression that is a test: a comparison, an `and`, a name, or a call or an attribute
    named as one (`torch.cuda.is_available()`, `device_count()`, `x.is_cuda`, `args.cuda`); not a
    device, a module or an object (`torch.device("cuda")`, `torch.cuda.Stream()`), nor a value
    chosen by one (`"cuda" if ok else "cpu"`, `use_cuda or force`)."""
    if isinstance(value, (ast.Compare, ast.Name)):
        return True
    if isinstance(value, ast.BoolOp):
        return isinstance(value.op, ast.And)
    if isinstance(value, ast.Call):
        name = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", "")
        return name.startswith(_TEST_PREFIXES) or name.endswith("available") or name == "device_count"
    return isinstance(value, ast.Attribute) and (value.attr.startswith(_TEST_PREFIXES) or value.attr == "cuda")


_TEST_PREFIXES = ("is_", "has_", "use_")


def holds_cuda_test(value: ast.expr | None, held: Held = NONE_HELD) -> bool:
    """The value assigned is a test for CUDA (and no other backend): what a name that holds it guards."""
    if value is None or not _is_test(value):
        return False
    npu, cuda, other = _gates(value, held)
    return cuda and not npu and not other


NO_BACKEND = ""


def holds_no_backend_test(name: str, value: ast.expr | None) -> bool:
    """A name with `cuda` in it (`self._use_cuda`, `use_cuda`) assigned a test that names no backend
    (`gpu > -1`, `n_gpu > 0`): it holds the user's choice of a GPU, which an NPU host makes too, not a
    test for CUDA, so its name does not make it one."""
    value = as_test(value)
    return value is not None and CUDA_WORD.search(name.lower()) is not None and _is_test(value) \
        and not any(_gates(value))


def held_tests(text: str) -> dict[str, str]:
    """The module's globals and instance attributes that hold a CUDA test, with its text: a
    top-level `USE_GPU = torch.cuda.is_available()` assigned once in the file and never
    declared `global`, a `self.gpu_available = torch.cuda.is_available()` assigned once in the
    file; and, as NO_BACKEND, one named for CUDA that holds a test of no backend
    (`self._use_cuda = gpu > -1`). Read from the text line by line (a fact of the whole text, read
    again for every edit: no parse of the file); a value over several lines is not read."""
    out: dict[str, str] = {}
    for start in sorted(_lines_naming_cuda(text)):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        match = _ASSIGNMENT_LINE.match(text, start, end)
        if match is None:
            continue
        indent, attribute, name = match.group(1), match.group(2), match.group(3)
        if not attribute and indent:
            continue  # a local: local_held reads it from the function
        start, end = match.span(4)
        try:
            value = as_test(ast.parse(text[start:end].strip(), mode="eval").body)
        except SyntaxError:
            continue
        if holds_cuda_test(value, NONE_HELD):
            held = " ".join(text[start:end].split())
        elif holds_no_backend_test(name, value):
            held = NO_BACKEND
        else:
            continue
        if attribute:
            stores = re.findall(rf"self\.{name}\b[^=\n(]*=(?!=)", text)
        else:
            stores = re.findall(rf"(?m)^{name}\b[^=\n(]*=(?!=)", text)
            if re.search(rf"\bglobal\b[^\n]*\b{name}\b", text):
                continue
        if len(stores) == 1:
            out[("self." if attribute else "") + name] = held
    return out


def local_held(func: ast.FunctionDef | ast.AsyncFunctionDef, outer: Held) -> Held:
    """`outer` (the file's held_tests) without the names the function binds, with its own names
    that hold a CUDA test (`run_on_gpu = torch.cuda.is_available()`, `use_io_binding = cuda
    and fits`): assigned that test once in the function, and else only something false (`cuda =
    False` where it turns out missing); each with the test's node (or, held through another
    local name, that name's: the test to change is there)."""
    args = func.args
    assigned: dict[str, list] = {arg.arg: [None] for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                                                            args.vararg, args.kwarg) if arg is not None}
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if kind is ast.Assign or kind is ast.AnnAssign:
            value = node.value  # type: ignore[attr-defined]
            for target in node.targets if kind is ast.Assign else [node.target]:  # type: ignore[attr-defined]
                if type(target) is ast.Tuple and type(value) is ast.Tuple and len(target.elts) == len(value.elts):
                    pairs = list(zip(target.elts, value.elts))
                else:
                    pairs = [(target, value)]
                for part, part_value in pairs:
                    for stored in ast.walk(part):
                        if type(stored) is ast.Name:
                            assigned.setdefault(stored.id, []).append(part_value if stored is part else None)
        elif kind is ast.Name and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
            assigned.setdefault(node.id, []).append(None)  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            for declared in node.names:  # type: ignore[attr-defined]
                assigned.setdefault(declared, []).append(None)
        if kind is not ast.Assign and kind is not ast.AnnAssign:
            stack.extend(ast.iter_child_nodes(node))
        elif node.value is not None:  # type: ignore[attr-defined]
            stack.append(node.value)  # type: ignore[attr-defined]
    held = {key: value for key, value in outer.items() if key not in assigned}
    for name, values in sorted(assigned.items(), key=lambda item: [getattr(v, "lineno", 0) for v in item[1]]):
        tests = [as_test(v) for v in values if not (type(v) is ast.Constant and v.value in _FALSY)]
        if len(tests) == 1 and holds_cuda_test(tests[0], held):
            through = next((held[n.id] for n in ast.walk(tests[0]) if type(n) is ast.Name and n.id in held), None)
            held[name] = through if isinstance(through, ast.expr) else tests[0]
        elif len(tests) == 1 and holds_no_backend_test(name, tests[0]):
            held[name] = NO_BACKEND
    return held


# --- arms for an older torch -----------------------------------------------------------------
class TorchTarget:
    """The oldest torch the target torch_npu runs with (`release`), and why (`why`, for the
    findings' message): read when a test first compares a release (most files compare none)."""

    __slots__ = ("_read", "_found")

    def __init__(self, read: Callable[[], tuple[tuple[int, ...], str]]) -> None:
        self._read = read
        self._found: tuple[tuple[int, ...], str] | None = None

    def _value(self) -> tuple[tuple[int, ...], str]:
        if self._found is None:
            self._found = self._read()
        return self._found

    @property
    def release(self) -> tuple[int, ...]:
        return self._value()[0]

    @property
    def why(self) -> str:
        return self._value()[1]


# the words of a version test's name that mean "older than": `torch_version_lt(1, 10)`, `TORCH_LT_2_4`
_OLDER = frozenset({"lt", "less", "older", "before", "below", "lower"})
_OLDER_OR_SAME = frozenset({"le", "lte"})
_NEWER = frozenset({"gt"})
_COMPARISONS = {ast.GtE: ">=", ast.Gt: ">", ast.Lt: "<", ast.LtE: "<="}
_FLIPPED = {">=": "<=", ">": "<", "<": ">", "<=": ">="}


def _version(node: ast.expr) -> tuple[int, ...] | None:
    """A release as written: `(2, 4)`, `"2.4.0"`, `version.parse("2.4")`, `digit_version("1.10")`."""
    if type(node) is ast.Tuple and node.elts and all(type(e) is ast.Constant and type(e.value) is int
                                                        for e in node.elts):
        return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    if type(node) is ast.Constant and type(node.value) is str:
        match = re.fullmatch(r"v?(\d+(?:\.\d+)*)\S*", node.value)
        return tuple(int(p) for p in match.group(1).split(".")) if match else None
    if type(node) is ast.Call and len(node.args) == 1 and not node.keywords:
        return _version(node.args[0])
    return None


def _torch_release(node: ast.expr) -> bool:
    """The running torch's release: `torch.__version__`, `TORCH_VERSION`, `torch_version()`,
    `version.parse(torch.__version__)`, `digit_version(torch.__version__).release`."""
    if type(node) is ast.Attribute and node.attr in ("release", "base_version"):
        node = node.value
    if type(node) is ast.Call:
        if node.args:
            return len(node.args) == 1 and _torch_release(node.args[0])
        node = node.func
    if type(node) is ast.Attribute:
        return node.attr == "__version__" and type(node.value) is ast.Name and node.value.id == "torch"
    return type(node) is ast.Name and {"torch", "version"} <= set(name_words(node.id))


def _passes(op: str, version: tuple[int, ...], oldest: tuple[int, ...]) -> bool | None:
    """Whether `torch OP version` holds for every torch from `oldest` on (True), for none (False), or may."""
    width = max(len(version), len(oldest))
    version, oldest = version + (0,) * (width - len(version)), oldest + (0,) * (width - len(oldest))
    if op in (">=", ">"):
        return True if (oldest >= version if op == ">=" else oldest > version) else None
    return False if (oldest >= version if op == "<" else oldest > version) else None


def _torch_verdict(test: ast.expr, torch: TorchTarget) -> bool | None:
    """Whether the test passes with every torch from `oldest` on, with none, or may: a release
    compared (`torch_version < (2, 4)`, `version.parse(torch.__version__) >= version.parse("2.1")`),
    a flag named for one (`TORCH_1_13`, `_TORCH_GREATER_EQUAL_2_1`, `not TORCH_2_0`), a call
    that compares (`torch_version_ge(2, 4)`, `is_torch_version(">=", "2.1")`), and `and`/`or`/`not` of
    those."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _torch_verdict(test.operand, torch)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        verdicts = [_torch_verdict(v, torch) for v in test.values]
        decisive = isinstance(test.op, ast.Or)
        if decisive in verdicts:
            return decisive
        return (not decisive) if all(v is not None for v in verdicts) else None
    if isinstance(test, ast.Compare):
        if len(test.ops) != 1 or type(test.ops[0]) not in _COMPARISONS:
            return None
        op = _COMPARISONS[type(test.ops[0])]
        if _torch_release(test.left) and (version := _version(test.comparators[0])) is not None:
            return _passes(op, version, torch.release)
        if _torch_release(test.comparators[0]) and (version := _version(test.left)) is not None:
            return _passes(_FLIPPED[op], version, torch.release)
        return None
    if isinstance(test, ast.Name):
        words = name_words(test.id) if "torch" in test.id.lower() else []
        digits = [w for w in words if w.isdigit()]
        if "torch" not in words or not digits or not words[-1].isdigit():
            return None
        return _passes(_named_comparison(words), tuple(int(d) for d in digits), torch.release)
    if isinstance(test, ast.Call):
        name = test.func.attr if isinstance(test.func, ast.Attribute) else getattr(test.func, "id", "")
        args = test.args
        if name == "hasattr" and len(args) == 2 and isinstance(args[1], ast.Constant) and type(args[1].value) is str:
            # `hasattr(torch.amp, "GradScaler")`: true from the torch that has that portable form
            needs = _portable_since().get(f"{dotted(args[0])}.{args[1].value}")
            return True if needs is not None and _passes(">=", needs, torch.release) else None
        if "torch" not in name.lower():
            return None
        if len(args) == 2 and isinstance(args[0], ast.Constant) and args[0].value in _FLIPPED:
            found = _version(args[1])  # is_torch_version(">=", "2.1")
            return None if found is None else _passes(args[0].value, found, torch.release)
        words = name_words(name)
        if "version" not in words and not {"greater", "ge", "newer"} & set(words) and not _OLDER & set(words):
            return None
        numbers = [a.value for a in args if isinstance(a, ast.Constant) and type(a.value) is int]
        found = tuple(numbers) if args and len(numbers) == len(args) else _version(args[0]) if len(args) == 1 else None
        return _passes(_named_comparison(words), found, torch.release) if found else None
    return None


def _named_comparison(words: list[str]) -> str:
    """The comparison a version test's name says: `torch_version_lt` <, `TORCH_1_13` >=."""
    present = set(words)
    return "<" if present & _OLDER else "<=" if present & _OLDER_OR_SAME else ">" if present & _NEWER else ">="


def dotted(node: ast.expr) -> str:
    """`torch.cuda.amp.GradScaler` for that attribute chain; "" for one that does not start with a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


@functools.cache
def _portable_since() -> dict[str, tuple[int, ...]]:
    """The portable forms of CUDA APIs (`torch.amp.GradScaler`) and the torch each needs (knowledge/portable.py)."""
    return {form.replacement: form.needs for form in load_portable().apis.values()}


# what a torch without an API raises where the code names it or passes it a new argument
_MISSING = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError", "TypeError", "NameError"})


def try_branches(node: ast.Try, torch: TorchTarget) -> list[Branches]:
    """`try: scaler = torch.amp.GradScaler(device=device)` / `except (AttributeError, TypeError):
    scaler = torch.cuda.amp.GradScaler()`: a handler of what an older torch lacks whose CUDA
    calls are the old forms of portable ones the try calls (knowledge/portable.py), that the
    target's torch has, runs only on an older torch."""
    tried: set[str] | None = None
    dead = []
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type] if handler.type else []
        if not kinds or not {getattr(kind, "id", "") for kind in kinds} <= _MISSING:
            continue
        forms = [load_portable().apis.get(name) for stmt in handler.body for n in ast.walk(stmt)
                 if isinstance(n, ast.Call) and (name := dotted(n.func)).startswith("torch.cuda.")]
        if forms and tried is None:
            tried = {dotted(n.func) for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Call)}
        if forms and tried and all(form is not None and form.replacement in tried
                                   and _passes(">=", _portable_since()[form.replacement], torch.release)
                                   for form in forms):
            dead.append(handler.body)
    return [Branches(dead, [], [], [], torch.why)] if dead else []


class GuardFacts(NamedTuple):
    """What the walk reads beside a statement to judge its tests (engine/walk.py)."""

    held: Held  # held_tests of the whole text
    torch: TorchTarget
    engines: bool = True  # whether the text, lowered, has `trt` or `tensorrt`: else no test names TensorRT


def torch_target(torch_npu_version: str, project: Any) -> TorchTarget:
    """_oldest_torch, read when first asked."""
    return TorchTarget(lambda: _oldest_torch(torch_npu_version, project))


@functools.cache
def _pairs(torch_npu_version: str) -> tuple[tuple[tuple[int, ...], str, tuple[int, ...]], ...]:
    """(torch_npu's release, its version, its torch's release) of every pairing the facts list, oldest first."""
    return tuple(sorted((release(row["torch-npu"]), row["torch-npu"], release(row["torch"]))
                        for row in load_platform(torch_npu_version).pairing))


def _oldest_torch(torch_npu_version: str, project: Any) -> tuple[tuple[int, ...], str]:
    """The oldest torch the target torch_npu runs with (torch_npu X.Y.Z is built for torch
    X.Y.Z): the oldest release the project's torch-npu pin admits; else the torch the configured
    torch-npu-version pairs with, unless the project's torch pin excludes it (then the oldest that
    pin admits, and no older than the oldest torch_npu the facts list is built for). A torch-npu pin
    without a lower bound, or a torch-npu-version the facts do not pair, is read as the oldest
    torch_npu the facts list."""
    pairs = _pairs(torch_npu_version)
    _, first_npu, lowest = pairs[0]
    oldest_known = f"the one the oldest torch_npu the facts list ({first_npu}) is built for"
    npu_pin = project.pin("torch-npu") if project is not None else None
    torch_pin = project.pin("torch") or project.pin("pytorch") if project is not None else None
    if npu_pin is not None:
        pinned = floor(npu_pin)
        pinned = pinned[:3] if pinned is not None else None
        oldest, why = (lowest, f"{oldest_known}; the project's torch-npu pin `{npu_pin}` has no lower bound") \
            if pinned is None else (next((t for n, _, t in pairs if n[:3] == pinned), pinned),
                                    f"the oldest the project's torch-npu pin `{npu_pin}` admits")
    else:
        paired = next((t for _, n, t in pairs if n == torch_npu_version), None)
        oldest, why = (paired, f"the one torch_npu {torch_npu_version} (torch-npu-version) is built for") \
            if paired is not None else (lowest, oldest_known)
        if torch_pin is not None and not admits(torch_pin, oldest):
            oldest = max((floor(torch_pin) or lowest)[:3], lowest)
            why = f"the oldest the project's torch pin `{torch_pin}` admits that a torch_npu is built for"
    shown = ".".join(map(str, oldest))
    return oldest, f" (Taken only by a torch older than {shown}, {why}: it does not run on the NPU.)"


def _old_torch_arms(branches: list, torch: TorchTarget) -> set[int]:
    """The arms of a chain that only a torch older than the target's takes: those whose test fails
    with every newer torch, and those after one that passes with every newer torch."""
    dead: set[int] = set()
    for i, (test, _branch) in enumerate(branches):
        verdict = _torch_verdict(test, torch) if type(test) in _VERSION_TESTS else None
        if verdict:
            return dead | set(range(i + 1, len(branches)))
        if verdict is False:
            dead.add(i)
    return dead


_VERSION_TESTS = frozenset({ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Name, ast.Call})


OR_NPU = " (Beside a test for the NPU in the same `or`: on the NPU that one passes.)"


def bool_branches(node: ast.BoolOp) -> Branches | None:
    """and_branches of an `and`; of an `or`, the operands that test for CUDA beside one that tests
    for the NPU (`t.is_cuda or getattr(t, "is_npu", False)`), which never decide on the NPU."""
    if type(node.op) is ast.And:
        return and_branches(node)
    tests = [_mentions(value) for value in node.values]
    if not any(npu and not cuda for npu, cuda, _ in tests):
        return None
    cuda_only = [value for value, (npu, cuda, _) in zip(node.values, tests) if cuda and not npu]
    return Branches(cuda_only, [], [], [], OR_NPU) if cuda_only else None


def and_branches(node: ast.BoolOp) -> Branches | None:
    """`is_npu_available() and torch.npu.device_count()`: the operands after one that tests
    for the NPU run only there, and after one for another backend (`bool(torch.version.hip) and
    torch.cuda.is_available()`) only on that backend, as backend_branches gives them; after a
    comparison that tests for CUDA (`device.type == "cuda" and not torch.cuda.is_available()`,
    `torch.cuda.device_count() > 1 and ...`) or `x.is_cuda`, only where it passes, as under an
    `if` (not after a flag, `args.cuda and torch.cuda.is_available()`: the second operand is the
    test that finds no CUDA on an NPU host; _compares_cuda); None for other operations."""
    if type(node.op) is not ast.And:
        return None
    for i, value in enumerate(node.values[:-1]):
        npu, cuda, other = _mentions(value)
        if npu and not cuda:
            return Branches([], [node.values[i + 1:]], [], [])
        if other and not cuda:
            return Branches([], [], [node.values[i + 1:]], [])
        if cuda and not npu and not other and _compares_cuda(value):
            return Branches([], [], [], [(value, node.values[i + 1:])])
    return None


_DEVICE_STRING = re.compile(r"(?:cuda|nccl)(?::\d+)?")


def _compares_cuda(test: ast.expr) -> bool:
    """`x.is_cuda`, `torch.cuda.is_available()`, or a comparison that names CUDA by a device or
    backend string (`"cuda"`, `"nccl"`, `dist.Backend.NCCL`) or by torch's CUDA module
    (`torch.cuda.device_count() > 1`, `torch.version.cuda`); not by a word in another name or string
    (`os.getenv("USE_CUDA_KERNELS", "0") == "1"`, a flag)."""
    if type(test) is ast.Attribute:
        return test.attr == "is_cuda"
    if type(test) is ast.Call and type(test.func) is ast.Attribute and test.func.attr == "is_available":
        return type(test.func.value) is ast.Attribute and test.func.value.attr == "cuda" or \
            type(test.func.value) is ast.Name and test.func.value.id == "cuda"
    return type(test) is ast.Compare and any(
        type(n) is ast.Attribute and (n.attr in ("cuda", "is_cuda") or n.attr == "NCCL" and _names_backend_enum(n.value))
        or type(n) is ast.Constant and type(n.value) is str and _DEVICE_STRING.fullmatch(n.value) is not None
        for n in ast.walk(test))


def _names_backend_enum(node: ast.expr) -> bool:
    """`Backend` or `x.Backend`: torch.distributed's enum of backend names (`Backend.NCCL == "nccl"`)."""
    return (node.attr if type(node) is ast.Attribute else getattr(node, "id", "")) == "Backend"


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


def _failed_cuda_test(test: ast.expr, held: Held = NONE_HELD) -> ast.expr | None:
    """X of `not X` where X tests for CUDA and not the NPU, alone or as one operand of an `or`
    (`not torch.cuda.is_available() or torch.cuda.device_count() < 2`), and `a == b` of `a != b`
    (`device.type != "cuda"`): where the test is true, X failed."""
    for value in test.values if type(test) is ast.BoolOp and type(test.op) is ast.Or else (test,):
        passed = _negated(value) if type(value) in (ast.UnaryOp, ast.Compare) else None
        if passed is not None:
            npu, cuda, _other = _gates(passed, held)
            if cuda and not npu:
                return passed
    return None


def _failed_other_test(test: ast.expr, held: Held = NONE_HELD) -> bool:
    """`not X` where X tests for another backend alone (`not hasattr(torch, "musa")`,
    `not torch.xpu.is_available()`): where the test is true, X failed, and what follows runs
    only on that backend."""
    passed = _negated(test) if type(test) in (ast.UnaryOp, ast.Compare) else None
    if type(passed) is ast.Compare and any(_none(side) for side in (passed.left, *passed.comparators)):
        return False  # `torch.version.hip is not None`: the backend is there, and what follows runs without it
    return passed is not None and _gates(passed, held) == (False, False, True)


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


def exit_guards(body: list[ast.stmt], held: Held = NONE_HELD) -> list[Branches]:
    """`if not torch.cuda.is_available(): return` in a block (`continue` or `break` in a loop's,
    `raise`, `sys.exit(...)`), or `assert torch.cuda.is_available()`: the statements after it in
    that block run only where the CUDA test passes, as under `if torch.cuda.is_available():`. And
    `if x.is_cuda: return <CUDA path>` before a path of its own for the other devices: the test
    and its branch are what a tensor on CUDA alone gets (PLACEMENT). Not after a test's skip
    (`pytest.skip(...)`): that test is a skip condition, as in a skip decorator, and what
    follows it is the test to port."""
    out = []
    for i, stmt in enumerate(body[:-1]):
        if type(stmt) is ast.If and not stmt.orelse and leaves(stmt.body) and not skips(stmt.body):
            test = _failed_cuda_test(stmt.test, held)
            if test is not None and _placement(test) and _returns_instead(stmt.body[-1], body[i + 1:]):
                out.append(Branches([body[i + 1:], stmt.test], [], [], [], PLACEMENT))
            elif test is not None:
                out.append(Branches([], [], [], [(held_test(test, held), body[i + 1:])]))
            elif _failed_other_test(stmt.test, held):
                out.append(Branches([], [], [body[i + 1:]], []))
            elif _placement(stmt.test) and type(stmt.body[-1]) is ast.Return and stmt.body[-1].value is not None \
                    and _falls_back(stmt.body, [(None, body[i + 1:])]):
                # `if x.is_cuda: return _kernel(x)` before the same job in PyTorch: what other tensors get
                out.append(Branches([stmt.body, stmt.test], [], [], [], PLACEMENT))
        elif type(stmt) is ast.Assert and _asserts_cuda(stmt.test, held):
            out.append(Branches([], [], [], [(held_test(stmt.test, held), body[i + 1:])]))
    return out


def _asserts_cuda(test: ast.expr, held: Held = NONE_HELD) -> bool:
    """`assert torch.cuda.is_available(), "only supports GPU"` (an `if not ...: raise`): the test
    holds only on a CUDA host, or one of another backend, never on an NPU host: a probe of CUDA
    (_probe), alone or in an `and`, or an `or` of probes of CUDA or another backend
    (`torch.cuda.is_available() or torch.backends.mps.is_available()`). Not a test that only
    names CUDA (`os.environ.get("NCCL_BLOCKING_WAIT", "0") == "0"`, `config.nccl_ub`): it may hold anywhere."""
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        return any(_asserts_cuda(part, held) for part in test.values)
    parts = test.values if type(test) is ast.BoolOp and type(test.op) is ast.Or else [test]
    probes = [_probe(part, held) for part in parts]
    return all(probes) and any(cuda for cuda in probes if cuda is True)


PROBE_CALLS = frozenset({"is_available", "device_count"})


def _probe(test: ast.expr, held: Held = NONE_HELD) -> bool | str:
    """True for a probe of CUDA, "other" for one of another backend, False otherwise:
    `torch.cuda.is_available()`, `torch.cuda.device_count() > 0`, `x.is_cuda`, `device.type ==
    "cuda"`, a name holding such a probe (held_tests: `self.on_gpu = torch.cuda.is_available()`)."""
    if type(test) is ast.Compare and len(test.ops) == 1:
        if type(test.ops[0]) is ast.Eq:
            for side, other_side in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
                if type(side) is ast.Constant and type(side.value) is str and type(other_side) is not ast.Constant:
                    return _backend_of(side.value.partition(":")[0].lower())
            return False
        test = test.left if type(test.ops[0]) in (ast.Gt, ast.GtE) else test
    if type(test) is ast.Call and type(test.func) is ast.Attribute and test.func.attr in PROBE_CALLS:
        npu, cuda, other = _mentions(test.func.value)
        return False if npu else True if cuda else "other" if other else False
    if type(test) is ast.Attribute and test.attr == "is_cuda":
        return True
    name = test.id if type(test) is ast.Name else "self." + test.attr \
        if type(test) is ast.Attribute and type(test.value) is ast.Name and test.value.id == "self" else None
    value = held.get(name) if name is not None else None
    if isinstance(value, str):  # a test held in the file, as written
        try:
            value = ast.parse(value, mode="eval").body
        except SyntaxError:
            return False
    # what the name holds must be a probe itself: `self.use_cuda_graph = config.use_cuda_graph` is an option
    return isinstance(value, ast.expr) and _probe(value)


def _backend_of(word: str) -> bool | str:
    if word == "cuda":
        return True
    return "other" if word in ("xpu", "mps", "hpu", "mlu", "rocm", "hip", "dipu") else False


# the blocks of each statement (and handler, case) that holds some: where exit_guards reads
BLOCKS: dict[type, tuple[str, ...]] = {
    ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"), ast.While: ("body", "orelse"),
    ast.With: ("body",), ast.AsyncWith: ("body",), ast.Try: ("body", "orelse", "finalbody"),
    ast.ExceptHandler: ("body",), ast.match_case: ("body",),
    **({ast.TryStar: ("body", "orelse", "finalbody")} if hasattr(ast, "TryStar") else {})}


def block_exits(node: ast.AST, held: Held = NONE_HELD) -> list[Branches]:
    """exit_guards of each block of `node` (a function's body, a loop's, an `if`'s arms, a
    `try`'s parts, a handler's, a case's); none for another node."""
    return [found for name in BLOCKS.get(type(node), ()) for found in exit_guards(getattr(node, name), held)]


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
_OTHER_DEVICES = frozenset({"hpu", "xpu", "mps", "mlu", "sdaa", "hip", "rocm", "musa", "xla", "tpu", "dipu"})


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
    words = part_words(parts[-1].rpartition(".")[0])
    return f"{parts[-2]}/{parts[-1]}" if words & {"cuda", "gpu", "tensorrt", "trt"} and "npu" not in words else None


# what a folder for NVIDIA's TensorRT is named (`runtime/triton_trtllm/`, `deploy/tensorrt/`, `trt/`)
TENSORRT_WORDS = frozenset({"tensorrt", "trt", "trtllm"})
# `import torch_npu.contrib.transfer_to_npu`, `from torch_npu.contrib import transfer_to_npu`
TRANSFER_TO_NPU_IMPORT = re.compile(r"torch_npu\.contrib(?:\.transfer_to_npu\b|[ \t]+import[ \t]+transfer_to_npu\b)")


def transfer_to_npu_imports(text: str) -> list[int]:
    """Where each line that imports `transfer_to_npu` begins (TRANSFER_TO_NPU_IMPORT in a statement
    that begins the line: not one in a comment, `# from torch_npu.contrib import transfer_to_npu`, nor
    in a string)."""
    found = []
    for match in TRANSFER_TO_NPU_IMPORT.finditer(text):
        start = max(text.rfind("\n", 0, match.start()), text.rfind("\r", 0, match.start())) + 1
        if text[start:match.start()].lstrip(" \t").startswith(("from", "import")):
            found.append(start)
    return found
# what code for another device is named (a word of a file's or folder's name), and the device
OTHER_DEVICE_WORDS = {"mlu": "Cambricon's MLU", "xpu": "Intel's XPU", "hpu": "Habana's HPU", "mps": "Apple's MPS",
                      "musa": "Moore Threads' MUSA", "rocm": "AMD's ROCm", "hip": "AMD's ROCm",
                      "dipu": "DeepLink's DIPU"}  # torch_dipu, a device layer of its own: not torch_npu's
# what code for the NPU is named (`kernels/_ascend/`, `modeling_npu.py`)
NPU_WORDS = frozenset({"npu", "ascend"})
# what a package or module of one device's kernels is named (`fastvideo-kernel/`, `ops/kernels/`,
# `kernel/triton/`, `auto_round_extension/cuda/`, `gguf_triton.py`, `flash_attn_cute.py`): held-out
# projects' findings there were right twice in some 80 judgements, each kernel chosen by the project per device
KERNEL_WORDS = frozenset({"kernel", "kernels", "triton", "cutlass", "cute"})
# and what only a folder of them is named (`csrc/`, `auto_round_extension/`, `cuda/`): a module `extensions.py`
# holds a model's code, `utils/cuda.py` a project's CUDA helpers
KERNEL_FOLDER_WORDS = KERNEL_WORDS | {"csrc", "cuda", "extension", "extensions"}
# what an environment report is called, a function (`print_env()`, `get_env_info()`, `collect_system_info()`)
# or a module (`collect_env.py`, `collect_env_info.py`, `sys_info.py`)
ENV_REPORT_NAME = re.compile(r"(?:collect|print|get|show|report|dump|log)_?(?:env|environment|sys|system)(?:_?info)?$"
                             r"|^(?:env_?info|sys(?:tem)?_info)$")
# what code that exists only for FP8 is named (`quantization/fp8.py`, `nanotron/fp8/`, `float8_linear.py`)
FP8_WORDS = frozenset({"fp8", "float8"})


def part_words(name: str) -> set[str]:
    """The words of a file's or folder's name, or of a snake-case identifier, lower-cased: `_ascend`,
    `mlu_group_gemm.py`, `trt_file`."""
    return set(re.split(r"[_\W]+", name.lower()))


def named_for(path: str, words: Collection[str], files: bool = False, unless: str | None = "npu") -> str | None:
    """The first folder holding the file (`fp8/`), or with `files` the file itself (`vdn_fp8.py`),
    whose name has one of `words` and not `unless`: `runtime/triton_trtllm/` for TensorRT, FP8's code."""
    *folders, file = path.replace("\\", "/").split("/")
    named = [(folder, folder + "/") for folder in folders] + ([(file.rpartition(".")[0] or file, file)] if files else [])
    for stem, shown in named:
        stem_words = part_words(stem)
        if not stem_words.isdisjoint(words) and (unless is None or unless not in stem_words):
            return shown
    return None


def class_branches(backend: str | None, body: list[ast.stmt]) -> list[Branches]:
    """The Branches of a backend class's body statements `body`: never on the NPU for
    CUDA's, only there for the NPU's, another backend's for another device's."""
    if backend is None or not body:
        return []
    if backend == "other":
        return [Branches([], [], [body], [])]
    return [Branches([body], [], [], [])] if backend == "cuda" else [Branches([], [body], [], [])]
