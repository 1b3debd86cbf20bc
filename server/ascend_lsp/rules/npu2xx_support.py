"""NPU2xx: what the NPU does not support or limits — Ascend's support list for the
configured torch_npu version and chip, complex dtypes, CPU fallback; arguments the list
marks unsupported (mappings/platform/arguments-*.toml) and ops real projects found to fall
back to the CPU or run pathologically slowly (fallback.toml); dtypes the configured chip
lacks (bfloat16, FP8: chip_features)."""

from __future__ import annotations

import ast
import re

from ..engine.checker import Checker, Reference
from ..engine.model import Severity
from ..knowledge.platform import load_platform
from ..knowledge.api_tables import Support, Tables
from ..engine.walk import StringContext
from ..engine.registry import TableRef, handles, rule
from .chip_features import (BF16_KEYWORDS, BF16_NAMES, BF16_STRINGS, CHIP_TABLE, DTYPE_KEYWORDS, FP8_KEYWORDS,
                            FP8_NAMES, chip_doc, lacking, report_chip)
from .citations import real_world_citation
from .dtype_tests import dtype_test
from .import_uses import TYPE, import_uses
from .sdp_switches import sdp_switch_note

SUPPORT_LIST = ("Ascend/pytorch docs/zh/api/native_api/pytorch_<version>/*.md — the \"PyTorch原生接口清单\" "
                "(native API support list), per chip (Atlas A2, Atlas A3, Ascend 950DT).")

rule(
    code="NPU201", name="unsupported-api", severity=Severity.ERROR, fix="never", on_type_only=False,
    table=TableRef("mappings/torch_npu/support-<version>.toml", ("support",)),
    message="`{name}` is not supported on {chip} (torch_npu {version}).",
    doc=dict(
        what="Finds PyTorch APIs that Ascend's support list marks ✘ for the configured chip and torch_npu "
             "version (`chip`, `torch-npu-version` settings): `torch.nn.DataParallel`, `torch.func.vmap`, "
             "`torch.backends.cuda.sdp_kernel`, `torch.Tensor.mode`, sparse CSR constructors, ….",
        why="An unsupported API either raises on the NPU or runs on the CPU; the list is the vendor's statement "
            "of what works.",
        example="values, counts = x.mode(dim=1)  # NPU201 on A2 with torch_npu 2.13.0",
        fix="None automatic. Hover shows the list's limitation text; APIs the list does not mention are "
            "\"not verified\" by Ascend and are not flagged. `torch.compiler`'s functions (`disable`, "
            "`allow_in_graph`, …) are info: they only steer what `torch.compile` traces. So is an API not called "
            "where it is named: re-bound to a wrapper of itself (a flops profiler's `F.avg_pool3d = "
            "wrapFunc(F.avg_pool3d, ...)`) or back; the top-level import of a class the module names only as a type "
            "(`from torch.nn import RNNBase` for hints and `isinstance()` tests; a string equal to the name, as in "
            "`__all__`, keeps the error); CUDA's SDPA switches where torch_npu 2.13.0's SDPA stays on its fused "
            "kernel (`enable_flash_sdp(True)`, `enable_math_sdp(...)`, `enable_mem_efficient_sdp(...)`) or where "
            "the value is known only at run time (`enable_flash_sdp(allow_flash)`: False takes its math path, the "
            "same results, slower; a written `enable_flash_sdp(False)` stays an error); and an API the list marks ✘ although torch_npu 2.13.0 "
            "registers an NPU kernel for every aten operator it runs (`torch.unique_consecutive`, "
            "`nn.AdaptiveMaxPool2d`, `nn.RNN`: recorded on torch 2.13's CPU, forward and backward, and looked "
            "up in the wheel's registration table); the message names the kernels. So are the DLPack functions "
            "(`torch.utils.dlpack.to_dlpack`/`from_dlpack`, `torch.from_dlpack`), which torch_npu 2.13.0 "
            "replaces at import with its own conversion for NPU tensors (`torch_npu/utils/dlpack.py`). Where an "
            "operator the API runs has no NPU kernel, the message names it (`F.pdist`: "
            "`aten::_pdist_backward`).",
        source=SUPPORT_LIST,
    ),
)

rule(
    code="NPU202", name="complex-dtype", severity=Severity.WARNING, fix="never",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api",)),
    message="`{name}` creates complex tensors, which most NPU operators do not support.",
    doc=dict(
        what="Finds complex dtypes (`torch.complex64`, `torch.cfloat`, …) and `torch.view_as_complex`. A dtype "
             "compared with (`z.dtype == torch.cfloat`) creates nothing: info; so is an entry of a table that "
             "translates another library's dtype of the same name (`{np.complex64: torch.complex64}`), or of a table "
             "from dtype to dtype as its key or beside a complex key (`{torch.complex64: torch.complex128}`, "
             "`table[torch.complex32] = torch.complex128`; not `{torch.float32: torch.complex64}`), taken only "
             "for data that holds it already; and, on A2, A3 and 950DT, `torch.view_as_complex(x)` that is only multiplied "
             "and turned back (`torch.view_as_real(view_as_complex(x) * freqs)`, rotary embeddings), which the support "
             "list gives complex64 for.",
        why="Of the support-list entries that restrict dtypes, 922 of 1175 exclude complex; `polar` falls back "
            "to the CPU, and `complex` does on 910A and 310P (NPU203).",
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
             "`torch.optim.Adam(fused=True)`. Info where it is not called: re-bound to a wrapper of itself "
             "(`F.x = wrap(F.x, ...)`) or back; and where torch_npu 2.13.0 registers an NPU kernel for every "
             "aten operator the API runs (`torch.trunc`, `nn.ZeroPad2d`, `torch.std`, `torch.scatter`, "
             "`nn.Hardsigmoid`: recorded on torch 2.13's CPU, forward and backward, and looked up in the "
             "wheel's registration table), naming them. "
             "It stays a warning where an operator has no kernel (`Binomial`: `aten::binomial`; "
             "`nn.HuberLoss`: `aten::huber_loss`), which the message names, and where the list's note names a "
             "case the kernels do not settle (`x.double()` returns float32), which it says. The note's other "
             "limits (dtypes) follow. An operator whose CPU warning is compiled in but that op-plugin runs "
             "through an aclnn kernel on the configured chip (`torch.complex`, `torch.logit`, `nn.AdaptiveMaxPool3d` on "
             "A2) is info, and the message names the chips, the CANN and the dtype for which the CPU path runs; on "
             "those chips (910A, 310P, and those the facts do not settle) it stays a warning "
             "(`mappings/build/cpu_fallback_paths.tsv`).",
        why="A CPU fallback copies the tensors to the host and back on every call: correct, but slow, and easy "
            "to miss (one warning per process). Set `TORCH_NPU_FALLBACK_CPU_DISABLE=1` to make it an error.",
        example="opt = torch.optim.Adam(params, fused=True)  # aten::_fused_adam_ falls back\n\n"
                "opt = torch.optim.AdamW(params, fused=True)  # has an NPU kernel",
        fix="None automatic.",
        source=SUPPORT_LIST + " CPU-fallback messages in the torch_npu 2.14.0 wheel's shared libraries; where "
               "op-plugin's aclnn kernels run first, Ascend/op-plugin `op_plugin/ops/opapi/` (`DO_COMPATIBILITY`, "
               "`_logit_fallback_condition`).",
    ),
)


def support_extra(entry: Support, chip: str) -> dict:
    return {
        "api": entry.name, "chips": dict(entry.chips), "dtypes": list(entry.dtypes), "fp64": entry.fp64,
        "complex": entry.complex, "int64": entry.int64, "cpu_fallback": entry.cpu_fallback,
        "limitations": entry.limitations, "npu_name": entry.npu_name, "source": entry.source, "chip": chip,
        "npu_kernels": list(entry.npu_kernels), "no_npu_kernels": list(entry.no_npu_kernels),
        "unsettled": entry.unsettled, "npu_patched": entry.npu_patched,
    }


# the kernels a message names; the hover's `npu_kernels` holds them all
KERNELS_NAMED = 4


def kernels_phrase(kernels: tuple[str, ...]) -> str:
    """What torch_npu registers for an API whose every operator has a kernel (those named after it first)."""
    if len(kernels) == 1:
        return f"an NPU kernel for {kernels[0]}"
    if len(kernels) <= KERNELS_NAMED:
        return f"NPU kernels for {', '.join(kernels)}"
    return (f"an NPU kernel for each of the {len(kernels)} aten operators it runs "
            f"({', '.join(kernels[:KERNELS_NAMED])}, …)")


def evidence(entry: Support, version: str) -> str:
    """What the wheel says of an API the list flags: the operators it runs without an NPU kernel; the
    case its note names that the kernels do not settle."""
    said = ""
    if entry.no_npu_kernels:
        said += f" torch_npu {version} registers no NPU kernel for {', '.join(entry.no_npu_kernels)}."
    if entry.npu_kernels and entry.unsettled:
        said += f" torch_npu {version} registers {kernels_phrase(entry.npu_kernels)}, but {entry.unsettled}."
    return said


def lowered(entry: Support, flag: str, version: str) -> str | None:
    """The finding's text where the wheel contradicts the list (`flag`: what the list says), or None."""
    if entry.npu_patched:
        return (f"Ascend's support list {flag}, but torch_npu {version} replaces it at import with its own for NPU "
                f"tensors ({entry.npu_patched}).")
    if entry.npu_kernels and not entry.unsettled:
        return f"Ascend's support list {flag}, but torch_npu {version} registers {kernels_phrase(entry.npu_kernels)}."
    return None


# the note's own words for a CPU fallback, which NPU203's message already says
FALLBACK_NOTE = re.compile(r"\s*(?:- )?(?:在某些情况下)?(?:可能)?回退至CPU执行")


# torch.compiler's functions steer only what Dynamo traces (skip a function, keep it whole in
# the graph, clear or list its caches and backends): without torch.compile they do nothing, and under it the code
# they mark runs eagerly, which the NPU does (checked in torch 2.13's torch/compiler/__init__.py)
COMPILE_STEERING = "torch.compiler."
STEERS_COMPILE = (" (It only steers what `torch.compile` traces: the code it marks runs eagerly, on any device; "
                  "nothing to change unless the project compiles for the NPU.)")


NOT_CALLED = (" (Not called here: the name is re-bound to a wrapper of itself (`F.x = wrap(F.x, ...)`) or back, or "
              "an attribute of it is read; where the code calls it, that call runs on the NPU.)")


def rebinding(checker: Checker, call: ast.Call) -> bool:
    """The statement assigns `call` to its own first argument: `F.x = wrap(F.x, ...)`, `f = torch.jit.script(f)`."""
    if not call.args:
        return False
    first = ast.unparse(call.args[0])  # not ast.dump: a target's `ctx` is Store
    return any(stmt.value is call and any(ast.unparse(target) == first for target in stmt.targets)
               for stmt, _scope in checker.events.assigns if type(stmt) is ast.Assign)


def not_called(checker: Checker, node: ast.expr) -> bool:
    """An API named, not called: assigned to, wrapped in its own place (a profiler counting
    its calls), or a dunder attribute of it read (`F.avg_pool3d.__str__`)."""
    if type(node) is ast.Attribute and (type(node.ctx) is ast.Store or node.attr.startswith("__")):
        return True
    return any(value.args and value.args[0] is node and rebinding(checker, value)
               for stmt, _scope in checker.events.assigns if type(value := stmt.value) is ast.Call)


TYPE_ONLY_IMPORT = (" (Imported only to be named as a type here (a hint, an isinstance() test): nothing in the "
                    "module constructs or calls it, so nothing of it runs on the NPU.)")


def check_support(checker: Checker, node: ast.AST, qualname: str, uncalled: bool = False,
                  imported: tuple[ast.Import | ast.ImportFrom, ast.alias] | None = None) -> None:
    """`uncalled`: a reference not called where it stands, which may be info (not_called);
    `imported`: the import that binds it, whose uses may all be types (import_uses)."""
    tables = checker.tables
    entry = tables.support.get(qualname)
    if entry is None or tables.lookup(qualname) is not None:
        return  # unknown to the list, or a more specific rule owns the name
    if entry.supported_on(checker.settings.support_chip) and not entry.cpu_fallback:
        return
    note = NOT_CALLED if uncalled and isinstance(node, ast.expr) and not_called(checker, node) else ""
    if imported is not None and (uses := import_uses(checker, *imported)) and all(use == TYPE for use in uses):
        note = TYPE_ONLY_IMPORT
    note = note or sdp_switch_note(checker, node, qualname)
    chip, version = checker.settings.chip, tables.support_version
    if not entry.supported_on(checker.settings.support_chip):
        code, flag = "NPU201", f"marks `{qualname}` ✘ on {chip}"
        message = checker.rules[code].message.format(name=qualname, chip=chip, version=version)
        notes = entry.limitations
        if qualname.startswith(COMPILE_STEERING):
            note = STEERS_COMPILE
    else:
        code, flag = "NPU203", f"says `{qualname}` may fall back to the CPU"
        message = checker.rules[code].message.format(name=qualname)
        notes = FALLBACK_NOTE.sub("", entry.limitations).strip()
    contradicted = lowered(entry, flag, version)
    message = (contradicted or message + evidence(entry, version)) + (f" Ascend notes: {notes}" if notes else "")
    checker.report(code, node, message + note, origin=entry.origin, extra=support_extra(entry, chip),
                   severity=Severity.INFO if note or contradicted else None)


@handles("reference", "NPU201", "NPU203", names=lambda tables: {name.rpartition(".")[2] for name in tables.support})
def check_support_reference(checker: Checker, ref: Reference) -> None:
    if ref.binding != ref.qualname.partition(".")[0] and ref.binding in checker.tables.support:
        return  # reported at the import that names it
    check_support(checker, ref.node, ref.qualname, ref.call is None)


@handles("import", "NPU201", "NPU203")
def check_support_import(checker: Checker, stmt, alias: ast.alias, qualname: str) -> None:
    check_support(checker, alias, qualname, imported=(stmt, alias))


# --- dtypes the configured chip lacks (chip_features) ----------------------------------------
rule(
    code="NPU204", name="bf16-on-chip", severity=Severity.ERROR, fix="never", table=CHIP_TABLE,
    message="bfloat16 (`{name}`) is not supported on {chips}.",
    doc=dict(
        what="Finds bfloat16 when the configured `chip` has none (Atlas training 910A, Atlas inference 310P): "
             "`torch.bfloat16`, `bf16=True` (Hugging Face `TrainingArguments`), `torch_dtype=\"bfloat16\"`, "
             "`mixed_precision=\"bf16\"`. " + chip_doc("bf16"),
        why="Those chips have no bfloat16 units: the first cast fails (`aclnnCast ... not implemented for "
            "DT_BFLOAT16`), or the config is rejected. Many LLM recipes default to bf16.",
        example="model = AutoModel.from_pretrained(name, torch_dtype=torch.bfloat16)  # NPU204 on 910A\n\n"
                "# choose the dtype from the chip\n\n"
                "dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16",
        fix="None automatic: float16 needs loss scaling, a choice for a person.",
        source=real_world_citation(6, "NPU204", "hiyouga/LlamaFactory#4339, #4165, #7522; vllm-project/vllm-ascend#9294."),
    ),
)

rule(
    code="NPU205", name="fp8-on-chip", severity=Severity.ERROR, fix="never", table=CHIP_TABLE,
    message="FP8 (`{name}`) is not supported on {chips}.",
    doc=dict(
        what="Finds FP8 dtypes (`torch.float8_e4m3fn`, `torch.float8_e5m2`, …) and FP8 requested by "
             "configuration (`kv_cache_dtype=\"fp8\"`, `mixed_precision=\"fp8\"`, `quantization=\"fp8\"`) when the "
             "configured chip has no FP8 (910A, 310P, A2, A3). " + chip_doc("fp8")
             + " In a Python module named for FP8, or in a folder so named (`quantization/fp8.py`), the findings are "
             "info: that code runs only where FP8 is chosen, and the choice is what changes (a config or a script "
             "named so is the choice, and keeps them)."
             + " Ascend 950DT is not reported: the facts do not say.",
        why="FP8 KV caches crash at allocation on Atlas A2 and are not supported on A3 either; torch_npu marks "
            "the float8 storage methods ✘ on every chip.",
        example='llm = LLM(model, kv_cache_dtype="fp8")  # NPU205\n\nllm = LLM(model)',
        fix="None automatic: use bf16/fp16, or INT8 quantization through msModelSlim.",
        source=real_world_citation(17, "NPU205", "vllm-project/vllm-ascend#8102, #11498; flagos-ai/FlagTree#987") +
        "; Ascend native API support list 2.13.0, torch-Storage page.",
    ),
)


# qualified name → (code, feature)
DTYPES = {**{name: ("NPU204", "bf16") for name in BF16_NAMES}, **{name: ("NPU205", "fp8") for name in FP8_NAMES}}


@handles("reference", "NPU204", "NPU205", names=frozenset(name.rpartition(".")[2] for name in DTYPES))
def check_dtype_reference(checker: Checker, ref: Reference) -> None:
    hit = DTYPES.get(ref.qualname)
    if hit is None or dtype_test(checker, ref.node):
        return  # `x.dtype == torch.bfloat16`, `dtype in [torch.float8_e4m3fn, ...]`: asks, makes nothing
    code, feature = hit
    report_chip(checker, code, feature, ref.node, ref.qualname)


@handles("call", "NPU204", when=lacking("bf16"))
def check_bf16_keyword(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    for kw in call.keywords:
        value = kw.value
        if kw.arg in BF16_KEYWORDS and type(value) is ast.Constant and value.value is True:
            report_chip(checker, "NPU204", "bf16", kw, f"{kw.arg}=True")


@handles("string", "NPU204", "NPU205", when=lacking("bf16", "fp8"), contexts=("arg",))
def check_dtype_string(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if context.kind != "arg" or (context.keyword not in DTYPE_KEYWORDS and context.keyword not in FP8_KEYWORDS):
        return
    lowered = value.lower()
    if context.keyword in DTYPE_KEYWORDS and lowered in BF16_STRINGS:
        report_chip(checker, "NPU204", "bf16", node, f'{context.keyword}="{value}"')
    elif context.keyword in FP8_KEYWORDS and lowered.startswith("fp8"):
        report_chip(checker, "NPU205", "fp8", node, f'{context.keyword}="{value}"')


# --- arguments and known-slow ops ------------------------------------------------------------
rule(
    code="NPU208", name="known-slow-op", severity=Severity.INFO, fix="never",
    table=TableRef("mappings/platform/fallback.toml"),
    message="`{name}` falls back to the CPU or is pathologically slow on the NPU.",
    doc=dict(
        what="Finds ops that real projects found to fall back to the CPU or to be much slower (or to error) on "
             "the NPU: `torchvision.ops.nms` / `batched_nms`, `nn.TransformerEncoderLayer` (its "
             "inference fast path), `F.interpolate(mode=\"linear\")`, `torch.linalg.eig` / `eigvals`.",
        why="A CPU fallback copies the tensors to the host and back on every call and prints a CAUTION warning; "
            "in a loop (NMS per image) it dominates the step time. Ascend's support list does not mark these. "
            "`torch.isin` is not reported: its fallback is evidenced for torch_npu 2.2 only.",
        example="keep = torchvision.ops.nms(boxes, scores, 0.5)  # NPU208\n\n"
                "layer = nn.TransformerEncoderLayer(512, 8)  # NPU208\n"
                "torch.backends.mha.set_fastpath_enabled(False)",
        fix="None automatic: the message names the workaround the evidence gives.",
        source=real_world_citation(8, "NPU208", "Ascend/pytorch#40, #51, #69; opendatalab/MinerU#1695, #1941; "
                                    "pytorch/pytorch#116504, #136302") +
        "; torch_npu 2.14.0 wheel CPU-fallback strings.",
    ),
)

rule(
    code="NPU209", name="unsupported-argument", severity=Severity.INFO, fix="never",
    table=TableRef("mappings/platform/arguments-<version>.toml"),
    message="`{argument}` of `{api}` is not supported on the NPU ({chip}).",
    doc=dict(
        what="Finds arguments that Ascend's native API support list marks unsupported for an API that is "
             "otherwise supported: `nn.LSTM(dropout=…, proj_size=…)`, `nn.GRU(dropout=…)`, "
             "`F.interpolate(scale_factor=…)`, `torch.sum(dtype=…)`. The finding is on the argument; passing the "
             "default (`dropout=0.0`) is fine. Arguments that only relax a guarantee (`topk(sorted=False)`) are "
             "left out: sorted output keeps that contract.",
        why="Ascend marks the argument unsupported; the list does not say whether the call then fails or "
            "ignores the argument, so this is advice (info) to test that call on the NPU.",
        example="rnn = nn.LSTM(256, 256, num_layers=2, dropout=0.1)  # NPU209 on `dropout=0.1`\n\n"
                "# apply dropout between the layers yourself\n\n"
                "layers = [nn.LSTM(256, 256) for _ in range(2)]\ndrop = nn.Dropout(0.1)",
        fix="None automatic.",
        source="Ascend native API support list (PyTorch原生接口清单) 2.13.0, 限制与说明 column "
               "(`不支持`dropout`参数` …).",
    ),
)


def _evaluated(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ...  # not a literal: its value is unknown here


def _unsupported(row: dict, value: ast.expr) -> bool:
    literal = _evaluated(value)
    if "value" in row:
        return literal is not ... and repr(literal) == row["value"]
    if literal is None:
        return False
    if literal is not ... and "default" in row:
        return literal != ast.literal_eval(row["default"])
    return True


def _called(tables: Tables) -> frozenset[str]:
    """The last parts of the APIs the two tables name (the names this handler reads)."""
    platform = load_platform(tables.support_version)
    return frozenset(api.rpartition(".")[2] for api in (*platform.arguments, *platform.fallbacks))


@handles("reference", "NPU208", "NPU209", names=_called)
def check_limits(checker: Checker, ref: Reference) -> None:
    call = ref.call
    if type(call) is not ast.Call or call.func is not ref.node:
        return  # named, not called
    qualname = ref.qualname
    platform = load_platform(checker.settings.torch_npu_version)
    rows = platform.arguments.get(qualname)
    if rows and "NPU209" in checker.active:
        chip = checker.settings.support_chip
        keywords = {kw.arg: kw for kw in call.keywords if kw.arg}
        for row in rows:
            kw = keywords.get(row["argument"])
            if kw is None or not row["chips"].get(chip, True) or not _unsupported(row, kw.value):
                continue
            message = checker.rules["NPU209"].message.format(argument=row["argument"], api=qualname,
                                                             chip=checker.settings.chip)
            checker.report("NPU209", kw, f"{message} Ascend notes: {row['limitation']}",
                           origin=f"mappings/platform/arguments-{checker.settings.torch_npu_version}.toml",
                           extra={"api": qualname, "argument": row["argument"], "source": row["source"]})
    for row in platform.fallbacks.get(qualname, ()):
        if "keyword" in row:
            kw = next((k for k in call.keywords if k.arg == row["keyword"]), None)
            if kw is None or _evaluated(kw.value) != row["value"]:
                continue
        text = checker.rules["NPU208"].message.format(name=qualname) + " " + row["note"]
        checker.report("NPU208", call.func, text, origin="mappings/platform/fallback.toml",
                       extra={"api": qualname, "source": row["source"]})
