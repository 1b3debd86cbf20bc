"""NPU2xx: APIs the NPU does not support or limits — Ascend's support list for the
configured torch_npu version and chip, complex dtypes, CPU fallback."""

from __future__ import annotations

import ast

from ..engine.checker import Checker, Reference
from ..engine.model import Severity
from ..knowledge.api_tables import Support
from ..engine.registry import TableRef, handles, rule

SUPPORT_LIST = ("Ascend/pytorch docs/zh/api/native_api/pytorch_<version>/*.md — the \"PyTorch原生接口清单\" "
                "(native API support list), per chip (Atlas A2, Atlas A3, Ascend 950DT).")

rule(
    code="NPU201", name="unsupported-api", severity=Severity.ERROR, fix="never", on_type_only=False,
    table=TableRef("mappings/torch_npu/support-<version>.toml", ("support",)),
    message="`{name}` is not supported on {chip} (torch_npu {version}).",
    doc=dict(
        what="Finds PyTorch APIs that Ascend's support list marks ✘ for the configured chip and torch_npu "
             "version (`chip`, `torch-npu-version` settings): `torch.nn.DataParallel`, `torch.nn.RNN`, "
             "`torch.func.vmap`, `torch.backends.cuda.sdp_kernel`, sparse CSR constructors, ….",
        why="An unsupported API either raises on the NPU or runs on the CPU; the list is the vendor's statement "
            "of what works.",
        example="rnn = torch.nn.RNN(10, 20)  # NPU201 on A2 with torch_npu 2.13.0",
        fix="None automatic. Hover shows the list's limitation text; APIs the list does not mention are "
            "\"not verified\" by Ascend and are not flagged.",
        source=SUPPORT_LIST,
    ),
)

rule(
    code="NPU202", name="complex-dtype", severity=Severity.WARNING, fix="never",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api",)),
    message="`{name}` creates complex tensors, which most NPU operators do not support.",
    doc=dict(
        what="Finds complex dtypes (`torch.complex64`, `torch.cfloat`, …) and `torch.view_as_complex`.",
        why="Of the support-list entries that restrict dtypes, 922 of 1175 exclude complex; `complex` and "
            "`polar` fall back to the CPU.",
        example="freqs = torch.polar(torch.ones_like(f), f)  # rotary embeddings via complex numbers\n\n"
                "# keep cos/sin as two real tensors instead",
        fix="None automatic: rewrite the computation with real tensors (for rotary embeddings, "
            "`torch_npu.npu_rotary_mul`).",
        source=SUPPORT_LIST + " Complex CPU-fallback messages in the torch_npu 2.14.0 wheel.",
    ),
)

rule(
    code="NPU203", name="cpu-fallback", severity=Severity.WARNING, fix="never", on_type_only=False,
    table=TableRef("mappings/torch_npu/support-<version>.toml", ("support",)),
    message="`{name}` may fall back to the CPU on the NPU.",
    doc=dict(
        what="Finds APIs that run on the CPU when called on an NPU tensor: those the support list says \"may fall "
             "back to the CPU\", the operators with CPU-fallback warnings compiled into torch_npu, and "
             "`torch.optim.Adam(fused=True)`.",
        why="A CPU fallback copies the tensors to the host and back on every call: correct, but slow, and easy "
            "to miss (one warning per process). Set `TORCH_NPU_FALLBACK_CPU_DISABLE=1` to make it an error.",
        example="opt = torch.optim.Adam(params, fused=True)  # aten::_fused_adam_ falls back\n\n"
                "opt = torch.optim.AdamW(params, fused=True)  # has an NPU kernel",
        fix="None automatic.",
        source=SUPPORT_LIST + " CPU-fallback messages in the torch_npu 2.14.0 wheel's shared libraries.",
    ),
)


def support_extra(entry: Support, chip: str) -> dict:
    return {
        "api": entry.name, "chips": dict(entry.chips), "dtypes": list(entry.dtypes), "fp64": entry.fp64,
        "complex": entry.complex, "int64": entry.int64, "cpu_fallback": entry.cpu_fallback,
        "limitations": entry.limitations, "npu_name": entry.npu_name, "source": entry.source, "chip": chip,
    }


def check_support(checker: Checker, node: ast.AST, qualname: str) -> None:
    tables = checker.tables
    entry = tables.support.get(qualname)
    if entry is None or tables.lookup(qualname) is not None:
        return  # unknown to the list, or a more specific rule owns the name
    chip, version = checker.settings.chip, tables.support_version
    if not entry.supported_on(checker.settings.support_chip):
        message = checker.rules["NPU201"].message.format(name=qualname, chip=chip, version=version)
        if entry.limitations:
            message += f" Ascend notes: {entry.limitations}"
        checker.report("NPU201", node, message, origin=entry.origin, extra=support_extra(entry, chip))
    elif entry.cpu_fallback:
        checker.report("NPU203", node, origin=entry.origin, extra=support_extra(entry, chip), name=qualname)


@handles("reference", "NPU201", "NPU203", names=lambda tables: {name.rpartition(".")[2] for name in tables.support})
def check_support_reference(checker: Checker, ref: Reference) -> None:
    if ref.binding != ref.qualname.partition(".")[0] and ref.binding in checker.tables.support:
        return  # reported at the import that names it
    check_support(checker, ref.node, ref.qualname)


@handles("import", "NPU201", "NPU203")
def check_support_import(checker: Checker, stmt, alias: ast.alias, qualname: str) -> None:
    check_support(checker, alias, qualname)
