"""The project's own operators: which `ns::op` a C++/CUDA extension or a Python module of
the project registers, and for which dispatch keys. Read once per project (project.py keeps
the index) by a regex pre-scan of the sources (no compiler, no import), so that
`torch.ops.ns.op(...)` can be judged at the call (rule NPU308).

C++: `TORCH_LIBRARY(ns, m)` / `TORCH_LIBRARY_FRAGMENT` blocks with `m.def("op(...)", fn)`
and `m.impl("op", [key,] fn)`, `TORCH_LIBRARY_IMPL(ns, KEY, m)` blocks with `m.impl("op",
fn)` (also vLLM's `TORCH_LIBRARY_EXPAND` / `TORCH_LIBRARY_IMPL_EXPAND`). Python:
`torch.library.custom_op("ns::op", device_types=...)`, `register_kernel("ns::op", device)`,
`torch.library.impl("ns::op", device)` and `Library("ns", kind).impl("op", fn, key)`.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .discovery import DEFAULT_EXCLUDE
from .sources import SourceError, read_regular

CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".cuh", ".hip")
MAX_FILE_BYTES = 2_000_000  # generated or amalgamated sources: not where a project registers its ops
MAX_FILES = 50_000  # a bound on one scan, for a root that is a home folder
# Vendored code registers its own ops, not the project's.
SKIPPED_FOLDERS = DEFAULT_EXCLUDE | {"third_party", "3rdparty", "thirdparty", "vendor", "external", "extern",
                                     "submodules"}
# A macro namespace is the extension's name, known only to the build: it matches any namespace.
ANY_NAMESPACE = "*"

CUDA = "CUDA"
CPU = "CPU"
# Kernels that serve NPU tensors too: a composite (decomposed into other ops), a catch-all
# (`m.def("op", fn)`, `custom_op` without device_types), the NPU's own key.
PORTABLE = frozenset({"CompositeImplicitAutograd", "CompositeExplicitAutograd",
                      "CompositeExplicitAutogradNonFunctional", "default", "PrivateUse1", "NPU"})
CUDA_KEYS = frozenset({"CUDA", "SparseCUDA", "QuantizedCUDA", "NestedTensorCUDA", "SparseCsrCUDA"})
# Python device names → dispatch keys.
DEVICES = {"cuda": CUDA, "cpu": CPU, "npu": "NPU", "privateuseone": "PrivateUse1", "default": "default"}


@dataclass(frozen=True, slots=True)
class Registration:
    key: str  # dispatch key: "CUDA", "CPU", "default" (catch-all), "Meta", …
    path: str
    line: int  # 1-based


@dataclass(frozen=True, slots=True)
class Verdict:
    """An op whose kernels this project registers for CUDA and not for the NPU."""

    cuda: Registration  # where the first CUDA kernel is registered
    cpu: bool  # it has a CPU kernel too (CPU tensors would run)


class OpIndex:
    def __init__(self, root: str = "") -> None:
        self.root = root
        self.ops: dict[tuple[str, str], list[Registration]] = {}

    def add(self, namespace: str, name: str, key: str, path: str, line: int) -> None:
        self.ops.setdefault((namespace, name.partition(".")[0]), []).append(Registration(key, path, line))

    def verdict(self, namespace: str, name: str) -> Verdict | None:
        """CUDA kernels and none that serves NPU tensors; None when the op has a portable
        kernel, no CUDA kernel, or is not the project's."""
        regs = self.ops.get((namespace, name), []) + self.ops.get((ANY_NAMESPACE, name), [])
        if any(r.key in PORTABLE for r in regs):
            return None
        cuda = next((r for r in regs if r.key in CUDA_KEYS), None)
        if cuda is None:
            return None
        return Verdict(cuda, any(r.key == CPU for r in regs))

    def where(self, registration: Registration) -> str:
        """`csrc/ops.cu:12`: the registration's place, relative to the project root."""
        path = os.path.relpath(registration.path, self.root) if self.root else registration.path
        return f"{Path(path).as_posix()}:{registration.line}"

    def digest(self) -> str:
        items = sorted((ns, op, r.key, r.path, r.line) for (ns, op), regs in self.ops.items() for r in regs)
        return hashlib.blake2b(repr(items).encode(), digest_size=8).hexdigest()


# --- C++ ----------------------------------------------------------------------------------
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_BLOCK = re.compile(r"\b(?:STABLE_)?TORCH_LIBRARY(?:_FRAGMENT|_EXPAND|_IMPL|_IMPL_EXPAND)?\s*\(\s*(\w+(?:\s*\([^()]*\))?)\s*,\s*(\w+)\s*"
                    r"(?:,\s*(\w+)\s*)?\)\s*\{")
_CPP_CALL = re.compile(r"\b(\w+)\s*\.\s*(def|impl)\s*\(\s*(?:TORCH_SELECTIVE_SCHEMA\s*\(\s*|TORCH_SELECTIVE_NAME\s*\(\s*)?"
                       r"\"([\w.]+)")
_CPP_KEY = re.compile(r"\s*\)?\s*,\s*(?:torch::dispatch\s*\(\s*)?(?:c10::DispatchKey::|DispatchKey::|torch::k|at::k|c10::k)"
                      r"(\w+)")
_CPP_KERNEL = re.compile(r"\s*\)?\s*,\s*(?:&|TORCH_FN\b|torch::CppFunction|\[|[A-Za-z_][\w:]*\s*[),])")


def _block_end(text: str, start: int) -> int:
    """The index of the `}` that closes the block opened just before `start`."""
    depth = 1
    for match in re.finditer(r"[{}]", text[start:]):
        depth += 1 if match.group() == "{" else -1
        if depth == 0:
            return start + match.start()
    return len(text)


def _past_strings(text: str) -> str:
    """What follows the string literal `text` is inside of, and the literals adjacent to it
    (`"op(Tensor x, " "Tensor y) -> ()"`)."""
    rest = text[text.find('"') + 1:]
    while rest.lstrip().startswith('"'):
        rest = rest.lstrip()[1:]
        rest = rest[rest.find('"') + 1:]
    return rest


def _namespace(token: str) -> str:
    """`ns`; a macro (`TORCH_EXTENSION_NAME`, the build names it) matches any; vLLM's
    `CONCAT(_C, _ascend)` is `_C_ascend`."""
    concat = re.fullmatch(r"CONCAT\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", token)
    if concat is not None:
        return concat.group(1) + concat.group(2)
    return ANY_NAMESPACE if token.isupper() or "(" in token else token


def scan_cpp(text: str, path: str, index: OpIndex) -> None:
    if "TORCH_LIBRARY" not in text:
        return
    # Comments blanked to spaces of the same length: line numbers stay right.
    code = _COMMENTS.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    for block in _BLOCK.finditer(code):
        impl_block = "_IMPL" in block.group()
        namespace = _namespace(block.group(1))
        block_key = block.group(2) if impl_block else None
        var = block.group(3) if impl_block else block.group(2)
        end = _block_end(code, block.end())
        body = code[block.end():end]
        for call in _CPP_CALL.finditer(body):
            if call.group(1) != var:
                continue
            kind, name = call.group(2), call.group(3)
            after = _past_strings(body[call.end():call.end() + 400])
            key_match = _CPP_KEY.match(after)
            if block_key is not None:
                key: str | None = block_key
            elif key_match is not None:
                key = key_match.group(1)
            elif _CPP_KERNEL.match(after):
                key = "default"  # a kernel without a key in TORCH_LIBRARY: the catch-all
            else:
                key = None  # a schema alone
            if key is None:
                continue
            line = code.count("\n", 0, block.end() + call.start()) + 1
            index.add(namespace, name.partition("(")[0] if kind == "def" else name, key, path, line)


# --- Python -------------------------------------------------------------------------------
# torch.library's registrations of an operator's kernel for a device (`custom_op(name, device_types="cuda")`,
# `register_kernel(op, "cuda")`, `impl(name, "cuda")`) → the position of the device argument given without its
# keyword (rules/device_strings.py reads the same calls in the tree)
KERNEL_REGISTRATIONS = {"custom_op": None, "register_kernel": 1, "impl": 1}
_PY_OP = re.compile(r"\b(" + "|".join(KERNEL_REGISTRATIONS) + r")\s*\(\s*[\"'](\w+)::([\w.]+)[\"']")
_LIBRARY = re.compile(r"\b(\w+)\s*=\s*(?:torch\.library\.|library\.)?Library\s*\(\s*[\"'](\w+)[\"']")
_STRING = re.compile(r"[\"'](\w+)[\"']")
# the function a decorator call ends above: `...)` then more decorators, then `def name`
_DECORATED = re.compile(r"[^\n]*\n(?:\s*@[^\n]*\n)*\s*(?:async\s+)?def\s+(\w+)")
# a device (type) argument: a string, a tuple or list of strings, or None (every device)
_DEVICE_ARG = r"(\([^)]*\)|\[[^\]]*\]|[\"'][^\"']*[\"']|None\b)"


def _call_text(text: str, start: int) -> str:
    """The arguments of the call whose `(` is at or after `start`, up to its `)`."""
    depth, i = 0, text.index("(", start)
    for j in range(i, min(len(text), i + 4000)):
        c = text[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j]
    return text[i + 1:i + 4000]


def _devices(args: str) -> list[str]:
    if args == "None":
        return ["default"]
    return [DEVICES.get(s.lower(), s) for s in _STRING.findall(args)]


def scan_python(text: str, path: str, index: OpIndex) -> None:
    if "library" not in text and "custom_op" not in text:
        return
    for match in _PY_OP.finditer(text):
        kind, namespace, name = match.groups()
        rest = _call_text(text, match.start())
        line = text.count("\n", 0, match.start()) + 1
        tail = rest[rest.find(name) + len(name) + 1:]  # past the op's string
        if kind == "custom_op":  # device_types=None (the default): every device
            types = re.search(r"\bdevice_types\s*=\s*" + _DEVICE_ARG, tail)
            keys = _devices(types.group(1)) if types else ["default"]
            # and the kernels the decorated function adds: `@fn.register_kernel("npu")`
            decorated = _DECORATED.match(text, text.index("(", match.start()) + len(rest) + 2)  # past its `)`
            if decorated is not None:
                for method in re.finditer(rf"\b{decorated.group(1)}\.register_kernel\(\s*" + _DEVICE_ARG, text):
                    keys += _devices(method.group(1))
        else:  # register_kernel / impl: ("ns::op", device types, …)
            types = re.match(r"\s*,\s*(?:device_types\s*=\s*|types\s*=\s*)?" + _DEVICE_ARG, tail)
            keys = _devices(types.group(1)) if types else []
        for key in keys:
            index.add(namespace, name, key, path, line)
    for lib in _LIBRARY.finditer(text):
        var, namespace = lib.groups()
        for impl in re.finditer(rf"\b{re.escape(var)}\s*\.\s*impl\s*\(", text):
            args = _STRING.findall(_call_text(text, impl.start()))
            if len(args) >= 2:
                line = text.count("\n", 0, impl.start()) + 1
                index.add(namespace, args[0], DEVICES.get(args[-1].lower(), args[-1]), path, line)


# --- the project ----------------------------------------------------------------------------
def project_files(root: str, exclude: tuple[str, ...], wanted: Callable[[str], bool]) -> Iterator[str]:
    """The files under `root` whose paths are `wanted`, folders and files in sorted order,
    past vendored, build and hidden folders and the `exclude` patterns; MAX_FILES at most."""
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not d.startswith(".")
                         and not _excluded(os.path.join(folder, d), root, exclude))
        for name in sorted(files):
            path = os.path.join(folder, name)
            if not wanted(path):
                continue
            seen += 1
            if seen > MAX_FILES:
                return
            if not _excluded(path, root, exclude):
                yield path


def registering(path: str) -> bool:
    """Whether the file is a source that may register operators."""
    return path.endswith((*CPP_SUFFIXES, ".py"))


def scan(root: str, exclude: tuple[str, ...] = (), files: Iterable[str] | None = None) -> OpIndex:
    """The operators the sources under `root` register (`exclude`: the settings' patterns;
    `files`: those sources, where the caller has listed them)."""
    index = OpIndex(root)
    for path in project_files(root, exclude, registering) if files is None else files:
        try:
            # a FIFO or a device named like a source is refused unread: opening one would hang
            data = read_regular(path, MAX_FILE_BYTES)[0]
        except SourceError:
            continue
        if path.endswith(CPP_SUFFIXES):
            if b"TORCH_LIBRARY" in data:
                scan_cpp(data.decode("utf-8", "replace"), path, index)
        elif b"torch.library" in data or b"import library" in data:
            scan_python(data.decode("utf-8", "replace"), path, index)
    return index


def _excluded(path: str, root: str, patterns: tuple[str, ...]) -> bool:
    if not patterns:
        return False
    rel = os.path.relpath(path, root)
    name = os.path.basename(path)
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns)


def registers_ops(text: str) -> bool:
    """Whether a source may register ops (a saved file worth a new scan)."""
    return "TORCH_LIBRARY" in text or bool(_PY_OP.search(text)) or bool(_LIBRARY.search(text))
