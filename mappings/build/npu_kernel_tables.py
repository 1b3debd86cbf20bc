"""mappings/torch_npu/kernels-2.13.0.toml: the aten operators the torch_npu 2.13.0 wheel registers
NPU kernels for and the APIs it replaces with its own at import; and the evidence they give the rows
of support-2.13.0.toml that Ascend's support list marks ✘ or says may fall back to the CPU:
`npu-kernels` where every operator the API runs has an NPU kernel (with `unsettled` where the row's
note names a case the kernels do not settle), `no-npu-kernels` where one has none, and `npu-patched`
where torch_npu replaces the API; and the communication functions its library binds into torch._C
for `torch.nn.DataParallel` (`[[bound]]`), which make NPU403's rows advice.

Called from torch_npu_tables.build. The facts are read from the wheel when `ASCEND_LSP_TORCH_NPU_WHEEL`
names it (`pip download torch-npu==2.13.0 --no-deps`): its registration table (REGISTRATIONS: the
aten operators its code generator registered NPU kernels for), its patch of DLPack (PATCHES) and the
functions its library binds for DataParallel (COMM_LIBRARY); without it the committed file is kept,
and the build says so. The operators an API runs are recorded on the installed torch (2.13, CPU)
from support_kernel_examples.toml; without torch 2.13 no row gets that evidence (a warning says so).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import NamedTuple

from torch_npu_tables import write_toml

VERSION = "2.13.0"
WHEEL_VARIABLE = "ASCEND_LSP_TORCH_NPU_WHEEL"
REGISTRATIONS = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"
# its sections of aten operators with NPU kernels (the code generator registers each for the NPU,
# or for AutogradNPU where torch's own is a composite); not custom (torch_npu's npu:: operators)
# nor quant (quantized tensors)
SECTIONS = ("supported", "symint", "autograd")
# torch's kernels for every device, followed where torch_npu registers none
COMPOSITES = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
# the module whose import-time patch replaces torch's DLPack functions (alias.name = create_patched_...)
PATCHES = "torch_npu/utils/dlpack.py"
PATCH_ALIAS = re.compile(r"^\s*import ([\w.]+) as (\w+)$", re.M)
PATCHED = re.compile(r"^\s*([\w.]+)\.(\w+) = create_patched_\w+\(", re.M)
NPU_IMPLEMENTATION = re.compile(r"^from torch_npu\._C import (_npu_\w+)$", re.M)
# the library that binds torch._C's DataParallel communication (torch's own are CUDA's, absent from a
# CPU build: `torch._C._broadcast_coalesced` raises AttributeError on torch 2.13 CPU), and the source
# file its assertion strings name
COMM_LIBRARY = "torch_npu/lib/libtorch_npu.so"
COMM_SOURCE = "torch_npu/csrc/npu/DataParallelComm.cpp"
COMM_FUNCTIONS = ("_broadcast_coalesced", "_scatter", "_gather")  # what nn.parallel.comm calls
HERE = Path(__file__).resolve().parent
COMMITTED = HERE.parent / "torch_npu" / f"kernels-{VERSION}.toml"
EXAMPLES = HERE / "support_kernel_examples.toml"
SECTION = re.compile(r"^(\w+):")
ITEM = re.compile(r"^\s*-\s+(?:func:\s*)?([\w.]+)\s*(?:\(|$)")  # `- view`, `- func: clone`, `- func: abs(Tensor ...`
FUNC = re.compile(r"^\s+func:\s*([\w.]+)\s*(?:\(|$)")  # an item whose func comes after other keys


class WheelFacts(NamedTuple):
    kernels: dict[str, list[str]]  # section of the registration table → its operators
    patched: list[dict]  # {apis, by, implementation}: the APIs a module of the wheel replaces at import
    bound: list[dict]  # {functions, by}: the torch._C functions the wheel's library binds, and its source file


def registered(text: str) -> dict[str, list[str]]:
    """Section → the operators (`name` or `name.overload`) the table lists in it."""
    found: dict[str, set[str]] = {section: set() for section in SECTIONS}
    section = None
    for line in text.splitlines():
        head = SECTION.match(line)
        if head:
            section = head[1]
            continue
        item = ITEM.match(line) or FUNC.match(line)
        if item and section in found:
            found[section].add(item[1])
    for section, ops in found.items():
        if not ops:
            raise ValueError(f"{REGISTRATIONS}: no operator in its section {section}")
    return {section: sorted(ops) for section, ops in found.items()}


def patched_apis(text: str) -> dict:
    """The APIs PATCHES replaces with its own (`torch_dlpack.to_dlpack = create_patched_to_dlpack(...)`
    after `import torch.utils.dlpack as torch_dlpack`), and the torch_npu functions it calls for NPU tensors."""
    aliases = {alias: module for module, alias in PATCH_ALIAS.findall(text)}
    apis = sorted(f"{aliases.get(owner, owner)}.{name}" for owner, name in PATCHED.findall(text))
    implementation = NPU_IMPLEMENTATION.findall(text)
    if not apis or not implementation or not all(api.startswith("torch.") for api in apis):
        raise ValueError(f"{PATCHES}: no torch API replaced by a torch_npu implementation")
    return {"apis": apis, "by": PATCHES,
            "implementation": ", ".join(f"torch_npu._C.{name}" for name in implementation)}


def bound_comm(library: bytes) -> dict:
    """COMM_FUNCTIONS as the library's symbol names (NUL-delimited strings) beside COMM_SOURCE."""
    missing = [name for name in COMM_FUNCTIONS if f"\0{name}\0".encode() not in library]
    if COMM_SOURCE.encode() not in library or missing:
        raise ValueError(f"{COMM_LIBRARY}: no {COMM_SOURCE} binding {', '.join(missing) or 'its functions'}")
    return {"functions": [f"torch._C.{name}" for name in COMM_FUNCTIONS], "by": COMM_SOURCE}


def data_parallel(entries: list[dict], facts: WheelFacts) -> None:
    """NPU403's rows (cuda.toml): advice where the wheel binds DataParallel's communication, as
    torch 2.13's DataParallel finds the NPU through torch.accelerator (nn/parallel/data_parallel.py,
    parallel_apply.py) and calls those functions through nn/parallel/comm.py."""
    bound = next((row for row in facts.bound if row["by"] == COMM_SOURCE), None)
    rows = [e for e in entries if e["rule"] == "NPU403"]
    if bound is None or not rows:
        raise ValueError(f"no NPU403 row or no {COMM_SOURCE} fact")
    for row in rows:
        row["severity"] = "info"
        row["note"] = (f"Yet torch_npu {VERSION} binds the communication it calls "
                       f"({', '.join(bound['functions'])}: {COMM_SOURCE}) and torch 2.13's DataParallel finds the NPU "
                       "through torch.accelerator: it runs, in one process, slower than DistributedDataParallel "
                       "with the 'hccl' backend, the way Ascend supports.")
        row["source"] += f"; mappings/torch_npu/{COMMITTED.name} (the wheel's {COMM_LIBRARY}: {COMM_SOURCE})"


def kernel_facts(out_dir: Path) -> tuple[WheelFacts, Path | None]:
    """The wheel's facts, from the wheel (written to out_dir) or else from the committed file."""
    wheel = os.environ.get(WHEEL_VARIABLE)
    if not wheel:
        print(f"kept {COMMITTED.relative_to(HERE.parent.parent)}: no torch_npu {VERSION} wheel ({WHEEL_VARIABLE} "
              "names none)", file=sys.stderr)
        with COMMITTED.open("rb") as f:
            table = tomllib.load(f)
        return WheelFacts({row["section"]: row["ops"] for row in table["kernels"]},
                          [{key: row[key] for key in ("apis", "by", "implementation")} for row in table["patched"]],
                          [{key: row[key] for key in ("functions", "by")} for row in table["bound"]]), None
    path = Path(wheel)
    if not path.name.startswith(f"torch_npu-{VERSION}-") or path.suffix != ".whl":
        raise ValueError(f"{WHEEL_VARIABLE}={wheel}: not a torch_npu {VERSION} wheel")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with zipfile.ZipFile(path) as archive:
        kernels = registered(archive.read(REGISTRATIONS).decode("utf-8"))
        facts = WheelFacts(kernels, [patched_apis(archive.read(PATCHES).decode("utf-8"))],
                           [bound_comm(archive.read(COMM_LIBRARY))])
    source = f"{path.name} (PyPI, sha256 {digest})"
    written = write_toml(
        out_dir / COMMITTED.name,
        {"title": f"The aten operators torch_npu {VERSION} registers NPU kernels for, per section of its table; the APIs "
                  "it replaces at import; the torch._C functions it binds for DataParallel",
         "version": VERSION, "sources": [f"{source}: {REGISTRATIONS}, {PATCHES}, {COMM_LIBRARY}"]},
        [("kernels", [{"section": section, "ops": ops, "source": f"{source}: {REGISTRATIONS}, section {section}"}
                      for section, ops in kernels.items()]),
         ("patched", [{**row, "source": f"{source}: {PATCHES}"} for row in facts.patched]),
         ("bound", [{**row, "source": f"{source}: {COMM_LIBRARY} (strings)"} for row in facts.bound])],
    )
    return facts, written


def recorded_ops(torch, setup: str, call: str, with_kernel: set[str]) -> tuple[set[str], set[str]]:
    """The aten operators the call runs, forward and backward (and, for a layer, in inference: its
    modules in eval mode under no_grad), that have an NPU kernel, and those
    that have none: each operator that reaches the CPU below autograd is looked up in `with_kernel`;
    one without a kernel that torch implements for every device (a CompositeImplicitAutograd or
    CompositeExplicitAutograd kernel: views, `zeros_like`, `_safe_softmax`) is followed into the
    operators its kernel calls, which are looked up in turn."""
    from torch.utils._python_dispatch import TorchDispatchMode  # noqa: PLC0415 - torch is optional

    named: set[str] = set()
    left: set[str] = set()
    followed: list[str] = []  # the operators whose composite kernels are being followed

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = func._schema.name
            op = name.removeprefix("aten::") + ("" if func._overloadname == "default" else f".{func._overloadname}")
            if name.startswith("aten::") and op in with_kernel:
                named.add(f"aten::{op}")
                return func(*args, **kwargs)
            qualified = f"{name}.{func._overloadname}" if func._overloadname != "default" else name
            composite = next((key for key in COMPOSITES
                              if torch._C._dispatch_has_kernel_for_dispatch_key(qualified, key)), None)
            if qualified in followed:  # its own composite kernel calling it again: the kernel being followed
                return func(*args, **kwargs)
            if composite is None:
                left.add(qualified)
                return func(*args, **kwargs)
            followed.append(qualified)
            try:
                with self:
                    if composite == "CompositeImplicitAutograd":
                        return func.decompose(*args, **kwargs)
                    return func._op_dk(getattr(torch._C.DispatchKey, composite), *args, **kwargs)
            finally:
                followed.pop()

    torch.manual_seed(0)
    space = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional}
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415 - torch is optional

    # oneDNN and the CPU's flash attention are the CPU's own kernels: the math path is what every device shares
    with torch.backends.mkldnn.flags(enabled=False), sdpa_kernel([SDPBackend.MATH]):
        exec(setup, space)  # noqa: S102 - the builder's own examples
        with Record():
            result = eval(call, space)  # noqa: S307 - the builder's own examples
        outputs = [t for t in (result if isinstance(result, (tuple, list)) else [result])
                   if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        if outputs:
            grads = [torch.ones_like(t) for t in outputs]
            with Record():
                torch.autograd.backward(outputs, grads)
        modules = [value for value in space.values() if isinstance(value, torch.nn.Module)]
        if modules:  # a layer may infer by another path (the transformer layers' fused fast path)
            for module in modules:
                module.eval()
            with torch.no_grad(), Record():
                eval(call, space)  # noqa: S307 - the builder's own examples
    return named, left


def named_after(api: str, op: str) -> bool:
    """`aten::adaptive_max_pool2d` for `torch.nn.AdaptiveMaxPool2d`: what a message names first."""
    base = op.removeprefix("aten::").partition(".")[0].replace("_", "")
    return base in api.rpartition(".")[2].lower().replace("_", "")


def flagged(row: dict) -> bool:
    """A row NPU201 or NPU203 reports: ✘ on a chip, or said to fall back to the CPU."""
    return not all(row.get("chips", {"A2": True}).values()) or row.get("cpu-fallback", False)


def annotate(entries: list[dict], facts: WheelFacts, torch) -> list[str]:
    """Give each flagged row its evidence: `npu-patched` where the wheel replaces its API; from its
    example's operators (followed through torch's composites), `npu-kernels` where each has an NPU
    kernel (with `unsettled`, the case its note names that they do not settle),
    else `no-npu-kernels`. The sources that say how (none recorded without torch 2.13)."""
    rows = {e["name"]: e for e in entries}
    sources = []
    for patch in facts.patched:
        for api in patch["apis"]:
            row = rows.get(api)
            if row is not None and flagged(row):
                row["npu-patched"] = f"{patch['by']} ({patch['implementation']})"
                row["source"] = row.pop("source")  # the provenance stays the row's last key
        sources.append(f"npu-patched: mappings/torch_npu/{COMMITTED.name} (the wheel's {patch['by']})")
    if torch is None or not torch.__version__.startswith(VERSION.rpartition(".")[0] + "."):
        print(f"warning: npu-kernels left out: they are recorded on torch {VERSION.rpartition('.')[0]}",
              file=sys.stderr)
        return sources
    with EXAMPLES.open("rb") as f:
        examples = tomllib.load(f)["example"]
    with_kernel = {op for ops in facts.kernels.values() for op in ops}
    for example in examples:
        api = example["api"]
        row = rows.get(api)
        if row is None or not flagged(row):
            raise ValueError(f"{EXAMPLES.name}: {api} is not a row the support list marks ✘ or says may fall back "
                             "to the CPU")
        named, left = recorded_ops(torch, example["setup"], example["call"], with_kernel)
        if not named and not left:
            raise ValueError(f"{EXAMPLES.name}: {api}'s call runs no aten operator")
        if "case" in example and example["says"] not in row.get("limitations", ""):
            raise ValueError(f"{EXAMPLES.name}: {api}'s note does not say {example['says']!r}")
        if left:
            print(f"warning: {api} keeps its finding: no NPU kernel for "
                  f"{', '.join(sorted(left))}", file=sys.stderr)
            row["no-npu-kernels"] = sorted(left)
        else:
            row["npu-kernels"] = sorted(named, key=lambda op: (not named_after(api, op), op))
            row["unsettled"] = example.get("case")
        row["source"] = row.pop("source")
    sources.append(f"npu-kernels, no-npu-kernels: mappings/torch_npu/{COMMITTED.name} (the wheel's "
                   f"registration table), the aten operators each API runs on torch "
                   f"{torch.__version__} (mappings/build/{EXAMPLES.name})")
    return sources
