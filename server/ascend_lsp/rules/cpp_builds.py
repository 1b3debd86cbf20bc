"""C++ extension builds that are not CUDA's (NPU306): one that builds against torch_npu, and a
`torch.utils.cpp_extension.load()` of C++ sources alone, which torch compiles for the CPU with
the host's compiler on any host (torch 2.13 `cpp_extension.py`: `with_cuda=None` becomes
`any(map(_is_cuda_file, sources))`, and `_is_cuda_file` is a `.cu`/`.cuh` suffix)."""

from __future__ import annotations

import ast
import re

from ..engine.checker import Checker
from .statement_facts import innermost_function, statement_facts

NPU_BUILD = (" (In a function that builds against torch_npu (it names torch_npu or CANN's `ascendcl`): an extension "
             "for the NPU, which torch's C++ toolchain builds there.)")
NPU_BUILD_WORDS = re.compile(r"\b(?:torch_npu|ascendcl)\b")

CPU_BUILD = (" (Its sources are C++ files alone and it does not ask for CUDA (`with_cuda`): torch builds such an "
             "extension for the CPU, with the host's compiler, on an NPU host as on any other.)")
CPU_BUILD_IMPORT = (" (Every call of it here builds C++ sources alone, for the CPU: on an NPU host they build and run "
                    "as on any other.)")
# what torch's build hands to the C++ compiler; `.cu`/`.cuh` (and ROCm's `.hip`) go to nvcc/hipcc
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".c++")


def npu_build(checker: Checker, node: ast.AST) -> bool:
    """`node` is in a function whose code names torch_npu or CANN's `ascendcl` (twinkle's aclnn
    `build_op`: `import torch_npu`, `-ltorch_npu`, `-lascendcl`)."""
    function = innermost_function(statement_facts(checker), node)
    return function is not None and NPU_BUILD_WORDS.search(checker.source.segment(checker.range(function))) is not None


def cpu_build(call: ast.Call) -> bool:
    """`load(name, sources, ...)` whose sources are a literal list (or one path) of C++ files,
    each element's file name readable (`"ops.cpp"`, `os.path.join(here, "ops.cpp")`,
    `f"{here}/ops.cpp"`, `here / "ops.cpp"`), and which sets neither `with_cuda` (other than
    False or None) nor CUDA's compiler flags."""
    keywords = {kw.arg: kw.value for kw in call.keywords}
    if None in keywords or "extra_cuda_cflags" in keywords:
        return False  # `**options` may ask for CUDA
    with_cuda = keywords.get("with_cuda")
    if with_cuda is not None and not (type(with_cuda) is ast.Constant and with_cuda.value in (None, False)):
        return False
    sources = keywords.get("sources", call.args[1] if len(call.args) > 1 else None)
    if sources is None:
        return False
    elements = sources.elts if isinstance(sources, (ast.List, ast.Tuple)) else [sources]
    return bool(elements) and all(_file_name(element).endswith(CPP_SUFFIXES) for element in elements)


def _file_name(node: ast.expr) -> str:
    """The file name an element of `sources` ends in, where its last written part says it: a
    string, the last argument of a call (`os.path.join`), the right side of `/` or `+`, the last
    literal part of an f-string; "" otherwise."""
    if type(node) is ast.Constant:
        return node.value if type(node.value) is str else ""
    if type(node) is ast.Call and node.args and not node.keywords and type(node.args[-1]) is not ast.Starred:
        return _file_name(node.args[-1])
    if type(node) is ast.BinOp and type(node.op) in (ast.Div, ast.Add):
        return _file_name(node.right)
    if type(node) is ast.JoinedStr and node.values:
        return _file_name(node.values[-1])
    return ""
