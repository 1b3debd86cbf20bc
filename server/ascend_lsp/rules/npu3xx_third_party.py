"""NPU3xx: third-party CUDA libraries and custom kernels — apex, flash_attn, xformers,
bitsandbytes, triton, CUDA extensions, a project's own CUDA-only operators; and, from what
real migrations trip over (docs/real-world-rules.md, item 1), each call of such a library,
FlashAttention requested by configuration, GPU-only quantisation, CUDA fused optimizers."""

from __future__ import annotations

import ast
from typing import cast

from ..engine.checker import Checker, Reference
from ..engine.model import Applicability, Fix, Range, Related, Severity
from ..engine.walk import Scope, StringContext, last_name
from ..engine.registry import TableRef, handles, rule
from ..engine.versions import overlap
from ..knowledge.platform import load_configs
from .call_arguments import assigned_key, constant, keyword, passed
from .citations import BITSANDBYTES_WHEEL, THIRD_PARTY_REPLACEMENTS, real_world_citation
from .harmless_calls import OPTION_LEFT_OFF_DOC, flag_off, opt_in_place, reference_place
from .opt_in_imports import after_opt_in_import, or_opt_in_binding
from .uncalled_helpers import uncalled_place
from .npu1xx_cuda import pinned_at
from .table import REAL_WORLD_TABLE, carried_by_import, is_prose, report, replacement_for

THIRD_PARTY = TableRef("mappings/torch_npu/thirdparty.toml", ("api",))
# the imports and uses of every table-driven rule here (rules/harmless_calls)
FALLBACK = (" An import under `try:` whose `except ImportError:` goes on without the package, or under "
            "`if is_<package>_available():` or `if is_<package>_installed():` (also around a `try:` whose handler "
            "raises again), is info: where it is missing, as on an NPU host, the code goes on "
            "without it. So is a use or an import under an `if` (in the same function) whose test names the "
            "package or the name it is imported as (`if self.use_apex:`, `if args.quant_method == \"awq\":`): "
            "the feature runs only where the user turns it on; and one after an `if not ...:` naming it that leaves "
            "at once (`if not HAS_BNB: pytest.skip(...)`) (rules/harmless_calls.feature_test); and one in a class "
            "named for apex or TensorRT, or built on one of their classes (`ApexOptimWrapper`, `class "
            "Calibrator(trt.IInt8Calibrator)`), used only where the user picks that library "
            "(engine/backend_members.py). A call of a name that only such imports bind in the file is info too, "
            "with the import as its related location (`flash_attn_func(...)` in a FlashAttention2 class after "
            "`if is_flash_attn_2_available(): from flash_attn import flash_attn_func`): it runs only where they did "
            "(rules/opt_in_imports.py). " + OPTION_LEFT_OFF_DOC + " So are the calls, settings and optimizers of "
            "NPU304, NPU311 and NPU313 found by their arguments (`Adam8bit(...)`, `quantization=\"awq\"`, "
            "`optim=\"adamw_apex_fused\"`), under either kind of test.")

rule(
    code="NPU301", name="apex", severity=Severity.ERROR, fix="sometimes", table=THIRD_PARTY,
    message="`{name}` is NVIDIA apex, built on CUDA kernels.",
    doc=dict(
        what="Finds imports and uses of NVIDIA apex (`apex.amp`, `apex.optimizers.Fused*`, "
             "`apex.normalization`, `amp_C`)." + FALLBACK,
        why="apex's fused kernels are CUDA code. torch_npu ships fused optimizers "
            "(`torch_npu.optim.NpuFused*`) and native AMP (`torch.npu.amp`).",
        example="from apex.optimizers import FusedAdam\n\n# becomes\n\nfrom torch_npu.optim import NpuFusedAdam as FusedAdam",
        fix="Unsafe for the fused optimizers and `FusedLayerNorm` (same role, check the arguments); the message "
            "says what replaces `apex.amp`.",
        source=THIRD_PARTY_REPLACEMENTS,
    ),
)

rule(
    code="NPU302", name="flash-attn", severity=Severity.ERROR, fix="never", table=THIRD_PARTY,
    message="`{name}` is the CUDA flash-attention library.",
    doc=dict(
        what="Finds imports and uses of `flash_attn`." + FALLBACK,
        why="flash-attention's kernels are CUDA-only. On the NPU the fused attention is "
            "`torch_npu.npu_fusion_attention`, with a different signature: `head_num`, `input_layout`, "
            "`keep_prob = 1 - dropout_p`, and a 2048×2048 mask plus `sparse_mode` for causal attention.",
        example="out = flash_attn_func(q, k, v, dropout_p, causal=True)\n\n# on the NPU\n\n"
                "out = torch_npu.npu_fusion_attention(q, k, v, head_num=q.shape[2], input_layout=\"BSND\",\n"
                "    keep_prob=1 - dropout_p, atten_mask=mask, sparse_mode=3)[0]",
        fix="Display-only: the message gives the call shape; the layout and mask need a person.",
        source=THIRD_PARTY_REPLACEMENTS + "; huggingface/transformers integrations/npu_flash_attention.py.",
    ),
)

rule(
    code="NPU303", name="xformers", severity=Severity.ERROR, fix="never", table=THIRD_PARTY,
    message="`{name}` is xformers, built on CUDA kernels.",
    doc=dict(
        what="Finds imports and uses of `xformers`." + FALLBACK,
        why="xformers' memory-efficient attention is CUDA code; there is no official NPU mapping.",
        example="from xformers.ops import memory_efficient_attention  # NPU303",
        fix="None automatic: port to `torch.nn.functional.scaled_dot_product_attention` or "
            "`torch_npu.npu_fusion_attention`.",
        source=THIRD_PARTY_REPLACEMENTS,
    ),
)

rule(
    code="NPU304", name="bitsandbytes", severity=Severity.WARNING, fix="never", table=THIRD_PARTY,
    message="`{name}` is bitsandbytes, whose NPU support is partial.",
    doc=dict(
        what="Finds imports and uses of `bitsandbytes`, `BitsAndBytesConfig(load_in_8bit=True)` and "
             "`from_pretrained(..., load_in_8bit=True)`; as errors, bitsandbytes' 8-bit and paged optimizers: calls "
             "of `bitsandbytes.optim.*8bit` and `Paged*` classes (and of its base classes with `optim_bits=8` or "
             "`is_paged=True`) and transformers' `optim=` names for them (`adamw_bnb_8bit`, `adamw_8bit`, `paged_adamw_32bit`, "
             "`paged_adamw_8bit`, `lion_8bit`, `paged_lion_*`, `*ademamix_8bit`, `paged_ademamix_32bit`, "
             "`rmsprop_bnb_8bit`). Not `load_in_4bit`: its NF4 and FP4 ops fall back like the int8 ones, and "
             "the import (or the config's `load_in_8bit`) already says where bitsandbytes stands." + FALLBACK,
        why="bitsandbytes (0.50.2 checked) lists the NPU as a device but ships no NPU kernels. Its int8 and "
            "4-bit ops (LLM.int8, NF4 and FP4 quantise, dequantise, matmul) have pure-PyTorch \"default\" "
            "kernels, to which NPU tensors dispatch (a generic fallback, not NPU kernels); its 8-bit optimizers (blockwise update) and "
            "paged optimizers have no NPU path. transformers accepts the NPU for bitsandbytes quantisation only "
            "when the installed bitsandbytes lists it.",
        example="import bitsandbytes as bnb  # NPU304\n"
                "BitsAndBytesConfig(load_in_8bit=True)  # NPU304\n"
                "TrainingArguments(output_dir, optim=\"paged_adamw_8bit\")  # NPU304 (error)\n\n# on the NPU\n\n"
                "TrainingArguments(output_dir, optim=\"adamw_torch_npu_fused\")",
        fix="None automatic.",
        source=BITSANDBYTES_WHEEL + "; transformers-4.56.0 wheel (PyPI): `trainer.py` (the bitsandbytes `optim` "
               "names: \"8bit\" → `optim_bits=8`, \"paged\" → `is_paged`).",
    ),
)

rule(
    code="NPU305", name="triton", severity=Severity.ERROR, fix="never", table=THIRD_PARTY,
    message="`{name}` is Triton, whose kernels target NVIDIA GPUs.",
    doc=dict(
        what="Finds imports and uses of `triton`. An import in a file or folder named for the NPU (`kernels/_ascend/`, "
             "`rope_npu.py`) is info: Triton kernels there are written for triton-ascend, which installs as "
             "`triton`." + FALLBACK,
        why="Community Triton generates CUDA code. On Ascend A2/A3 use `triton-ascend` "
            "(`pip install triton-ascend`, which replaces the `triton` package); kernels may need tuning.",
        example="import triton\n\n@triton.jit\ndef kernel(...): ...  # NPU305",
        fix="None automatic.",
        source=THIRD_PARTY_REPLACEMENTS,
    ),
)

rule(
    code="NPU306", name="cuda-extension", severity=Severity.ERROR, fix="never", table=THIRD_PARTY,
    message="`{name}` builds CUDA code.",
    doc=dict(
        what="Finds CUDA extensions: `torch.utils.cpp_extension.CUDAExtension`, "
             "`load_inline(cuda_sources=...)`, and `.cu`/`.cuh` source files named in the code. A file named in "
             "`setup(package_data=...)` / `data_files=`, or in a variable so named, is info (installed, not compiled there), and so are the "
             "sources of a builder built on CUDA's (`class FusedAdamBuilder(CUDAOpBuilder)`: DeepSpeed builds "
             "each op once per accelerator). So is one in a function of setup.py that nothing in it calls (mmdet's "
             "`make_cuda_ext` beside `ext_modules=[]`), and a name setup.py imports only for such functions: "
             "setup.py is run, not imported, so they never run (rules/uncalled_helpers.py). A build in a function "
             "that builds against torch_npu (its code names `torch_npu` or CANN's `ascendcl`: an aclnn binding "
             "loaded with `torch.utils.cpp_extension.load`) is info: an extension for the NPU. So is a `load()` of C++ "
             "sources alone (a literal list whose file names end in `.cpp`, `.cc`, `.cxx` or `.c`, a glob of them) "
             "that asks for no CUDA (`with_cuda`, `extra_cuda_cflags`): torch builds it for the CPU on any host, "
             "choosing CUDA only for `.cu`/`.cuh` sources; and the import of `load` where every call of it in "
             "the module is such a build (rules/cpp_builds.py). " + OPTION_LEFT_OFF_DOC,
        why="CUDA kernels do not run on the NPU. torch_npu's `NpuExtension` builds C++ only; custom "
            "operators go through OpPlugin/aclnn (AscendC).",
        example='CUDAExtension("ops", ["ops.cpp", "kernel.cu"])  # NPU306 twice',
        fix="None automatic: the kernels must be rewritten.",
        source=THIRD_PARTY_REPLACEMENTS,
    ),
)


# setup()'s keywords that install files as they are: a source named there is copied, not built
SHIPPING_KEYWORDS = frozenset({"package_data", "data_files", "exclude_package_data"})
SHIPPED = (" (Named as a file to install, not compiled here: where the project builds it, that place is reported; on the "
           "NPU nothing loads it unless that build runs.)")


@handles("string", "NPU306", contexts=("arg", "compare", "subscript", "value"))
def check_cuda_source(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    # A file name, not a sentence that happens to end in ".cu".
    if not is_prose(context) and value.endswith((".cu", ".cuh")) and " " not in value and type(node) is ast.Constant:
        place = (Severity.INFO, SHIPPED) if _shipped(checker, node) \
            else uncalled_place(checker, node) or flag_off(checker, node)
        if place is not None:
            checker.report("NPU306", node, checker.rules["NPU306"].message.format(name=value) + place[1],
                           severity=place[0])
        else:
            checker.report("NPU306", node, name=value)


def _shipped(checker: Checker, node: ast.AST) -> bool:
    """`node` stands in a keyword of SHIPPING_KEYWORDS (`package_data={"pkg": ["kernel.cu"]}`), or in
    the value of a name so called (`package_data = {"": ["*.cpp", "*.cu"]}`, handed to setup() later)."""
    return any(kw.arg in SHIPPING_KEYWORDS and any(inner is node for inner in ast.walk(kw.value))
               for call, _scope in checker.events.calls for kw in call.keywords) \
        or any(any(type(t) is ast.Name and t.id in SHIPPING_KEYWORDS for t in stmt.targets)
               and any(inner is node for inner in ast.walk(stmt.value))
               for stmt, _scope in checker.events.assigns if type(stmt) is ast.Assign)


rule(
    code="NPU308", name="cuda-only-custom-op", severity=Severity.ERROR, fix="never",
    message="`{name}` runs `{op}`, which this project registers with a CUDA kernel ({place}) and none for the NPU.",
    doc=dict(
        what="Finds calls `torch.ops.<ns>.<op>(...)` of an operator that the same project registers with a CUDA "
             "kernel and no kernel that serves NPU tensors. The project's sources are scanned once per run: C++/CUDA "
             "files for `TORCH_LIBRARY(ns, m)` / `TORCH_LIBRARY_FRAGMENT` with `m.def(\"op(...)\", fn)` and "
             "`m.impl(\"op\", torch::kCUDA, fn)`, `TORCH_LIBRARY_IMPL(ns, CUDA, m)` with `m.impl(\"op\", fn)`; Python "
             "files for `torch.library.custom_op(\"ns::op\", device_types=\"cuda\")`, "
             "`torch.library.register_kernel(\"ns::op\", \"cuda\")`, `torch.library.impl(\"ns::op\", \"cuda\")` and "
             "`Library(\"ns\", ...).impl(\"op\", fn, \"CUDA\")`. An op is not reported when it also has a composite "
             "(`CompositeImplicitAutograd`, `CompositeExplicitAutograd`), catch-all (`m.def(\"op(...)\", fn)`, "
             "`m.impl` without a key in `TORCH_LIBRARY`, `custom_op` without `device_types`), `PrivateUse1` or `npu` "
             "kernel (also one the decorated function adds: `@fn.register_kernel(\"npu\")`). The project root is the configured one (the folder of the `[tool.ascend-lsp]` pyproject.toml), "
             "else the nearest folder above the file with a pyproject.toml, setup.py or .git; vendored folders "
             "(`third_party`, `3rdparty`, `vendor`, `external`, build output) and `exclude` patterns are skipped.",
        why="The dispatcher picks a kernel by the tensors' device. torch_npu tensors dispatch to `PrivateUse1`; an op "
            "with only CUDA kernels fails there (\"Could not run 'ns::op' with arguments from the 'PrivateUse1' "
            "backend\"), even with `transfer_to_npu`, which rewrites device strings, not kernels. The extension itself "
            "is reported where Python builds it (NPU306); this finding is at each place that runs it. With a CPU "
            "kernel too, the call runs only on CPU tensors: a warning.",
        example='// csrc/ops.cpp\nTORCH_LIBRARY(myops, m) { m.def("fused_gelu(Tensor x) -> Tensor"); }\n'
                'TORCH_LIBRARY_IMPL(myops, CUDA, m) { m.impl("fused_gelu", &fused_gelu_cuda); }\n\n'
                '# model.py\ny = torch.ops.myops.fused_gelu(x)  # NPU308',
        fix="None automatic: register an NPU kernel (an AscendC/aclnn operator through OpPlugin, or a "
            "`CompositeImplicitAutograd` implementation in torch ops), or call the torch composition on the NPU path.",
        source="PyTorch dispatcher documentation (\"Registering a Dispatched Operator in C++\", "
               "`torch.library` reference); torch_npu registers its device as `PrivateUse1` (torch_npu wheel "
               "`torch_npu/_init/registry/backend.py`: `rename_privateuse1_backend(\"npu\")`, "
               "`torch._register_device_module(\"npu\", torch_npu.npu)`). " + THIRD_PARTY_REPLACEMENTS + ".",
    ),
)


@handles("reference", "NPU308")
def check_custom_op(checker: Checker, ref: Reference) -> None:
    qualname = ref.qualname
    if not qualname.startswith("torch.ops.") or ref.call is None or type(ref.call) is not ast.Call \
            or ref.call.func is not ref.node:
        return
    parts = qualname.split(".")
    if len(parts) < 4 or len(parts) > 5:  # torch.ops.ns.op, torch.ops.ns.op.overload
        return
    index = checker.project.ops if checker.project is not None else None
    verdict = index.verdict(parts[2], parts[3]) if index is not None else None
    if verdict is None:
        return
    message = None
    if verdict.cpu:
        message = (f"`{qualname}` runs `{parts[2]}::{parts[3]}`, which this project registers with CUDA and CPU "
                   f"kernels ({index.where(verdict.cuda)}) and none for the NPU: NPU tensors have no kernel.")
    registered = verdict.cuda  # its line in the file on disk: related by path, even where that is this file
    checker.report("NPU308", ref.node, message, name=qualname, op=f"{parts[2]}::{parts[3]}",
                   place=index.where(registered), severity=Severity.WARNING if verdict.cpu else None,
                   related=(Related(Range(registered.line - 1, 0, registered.line - 1, 0),
                                    f"`{parts[2]}::{parts[3]}` registered with a CUDA kernel", registered.path),))


# --- each call of a CUDA library; CUDA kernels chosen by configuration (real-world-rules.md, item 1)
# Reported at each call too: apex, flash_attn, xformers, CUDA extensions. Not bitsandbytes (its int8
# and 4-bit calls fall back to generic PyTorch code there) nor triton (triton-ascend replaces the package; `tl.*` calls in a kernel are its body).
LIBRARY_CODES = ("NPU301", "NPU302", "NPU303", "NPU306")


def check_library_call(checker: Checker, ref: Reference) -> None:
    """A call of a name imported from a CUDA library: the import carries the table's finding,
    and each call gets its own, so an import kept for another reason does not hide where the library
    runs. A call of a name that only opt-in imports bind is info, related to the import."""
    entry = checker.tables.lookup(ref.qualname)
    if entry is None or entry.rule not in LIBRARY_CODES or entry.if_keyword is not None:
        return
    new = replacement_for(entry, ref.qualname)
    if not carried_by_import(checker, entry, ref, new):
        return
    remark, related = or_opt_in_binding(checker, ref, reference_place(checker, entry.rule, ref))
    report(checker, entry, ref.node, ref.qualname, new, None, remark=remark, related=related)


rule(
    code="NPU307", name="flash-attention-config", severity=Severity.WARNING, fix="sometimes",
    message="`{name}` needs the flash-attn package (CUDA only) unless transformers maps it to the NPU; "
            "`sdpa` works on every release.",
    doc=dict(
        what="Finds FlashAttention requested by configuration: `attn_implementation=\"flash_attention_2\"` "
             "(or `\"flash_attention_3\"`, also as `_attn_implementation`, in a call or assigned to an attribute "
             "or key of that name) and `use_flash_attention_2=True`. Info where only an option the project leaves off "
             "chooses it (`\"flash_attention_2\" if model_args.use_flash_attn else None`, or under `if "
             "args.use_flash_attn:`, where its Python files give `use_flash_attn` only `False`: a dataclass field "
             "`field(default=False)`, argparse's `store_true`; never `True`; or a string option compared with values "
             "they never give it, as NPU301 says): the message names the option and where (flag_defaults.py); after `import flash_attn` in a `try:` whose `except ImportError` goes on "
             "without it, and under `if is_flash_attn_2_available():` (without arguments): where flash_attn is "
             "missing, as on an NPU host, neither runs (rules/opt_in_imports.py). FlashAttention-2 is info too where "
             "the project pins transformers (its requirements, pyproject.toml, setup.py or environment file) to "
             "releases that all run it on the NPU (by the failing releases NPU803 reads in "
             "mappings/platform/configs.toml), with the pin as related information; a pin that allows one "
             "is named in the warning.",
        why="The flash-attn package cannot be built for the NPU. transformers releases without its NPU path "
            "load `flash_attn` for these settings and fail (\"flash_attn seems not installed\"); releases with it "
            "(transformers#36696; 5.x routes `flash_attention_2` to `torch_npu.npu_fusion_attention` in "
            "`modeling_flash_attention_utils.py`) work, but the path has regressed (#39844) and VL models failed "
            "on it (#38189); frameworks that read the setting import `flash_attn` themselves (verl#198). On the "
            "NPU, `sdpa` dispatches to the fused FlashAttentionScore kernel on every release. A warning, not an "
            "error: whether it breaks depends on the transformers version and the framework.",
        example='model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="flash_attention_2")\n\n'
                '# becomes\n\nmodel = AutoModelForCausalLM.from_pretrained(path, attn_implementation="sdpa")',
        fix="Unsafe: writes `\"sdpa\"` (or `attn_implementation=\"sdpa\"` for `use_flash_attention_2=True`). "
            "Review it: flash-attention also packs padding-free batches by `position_ids`, which `sdpa` does not, "
            "so training with packed sequences must turn packing off.",
        source=real_world_citation(1, "NPU307", "huggingface/transformers#36383, #36618, #36696, #39844, #38189, #37859; "
                                    "verl-project/verl#198; modelscope/ms-swift#2238; hiyouga/LlamaFactory#9397."),
    ),
)

FLASH_IMPLEMENTATIONS = frozenset({"flash_attention_2", "flash_attention_3"})
ATTENTION_KEYS = frozenset({"attn_implementation", "_attn_implementation"})


FLASH_PACKAGES = frozenset({"flash_attn"})


PIN_EXCLUDES = (" (The project pins `{pin}`, which admits no release where this fails on the NPU ({windows}): "
                "those transformers run it with torch_npu's fused attention.)")
PIN_ALLOWS = (" (The project's pin `{pin}` allows `{window}`, releases that fail with it on the NPU: raise the pin or "
              "use `sdpa`.)")


def pinned_transformers(checker: Checker, name: str) -> tuple | None:
    """What the project's transformers pin says of FlashAttention-2 (mappings/platform/configs.toml,
    the releases NPU803 reads too): info where it admits no release that fails, with the pin's place;
    a warning naming the failing releases it allows; None without a pin or a row for the setting."""
    row = load_configs().pinned_failure("attn_implementation", "flash_attention_2" if name.startswith("use_") else name)
    pin = checker.project.pin(row["pin"]) if row is not None and checker.project is not None else None
    if row is None or pin is None:
        return None
    related = pinned_at(checker, row["pin"])
    window = overlap(pin, row["broken"])
    if window is None:
        windows = ", ".join(f"`{w}`" for w in row["broken"])
        return (Severity.INFO, PIN_EXCLUDES.format(pin=row["pin"] + pin, windows=windows), *related)
    return (Severity.WARNING, PIN_ALLOWS.format(pin=row["pin"] + pin, window=row["pin"] + window), *related)


def report_flash(checker: Checker, node: ast.AST, fixes: tuple[Fix, ...], name: str) -> None:
    """The finding, info where the setting is taken only under a flag the project leaves off
    (harmless_calls.flag_off), after flash_attn's opt-in import (opt_in_imports.after_opt_in_import)
    or where the project pins transformers to releases that run it on the NPU (pinned_transformers)."""
    remark = flag_off(checker, node) or after_opt_in_import(checker, node, FLASH_PACKAGES) \
        or pinned_transformers(checker, name)
    if remark is None:
        checker.report("NPU307", node, fixes=fixes, name=name)
        return
    message = checker.rules["NPU307"].message.format(name=name) + remark[1]
    checker.report("NPU307", node, message, fixes, severity=remark[0], related=remark[2:])


def report_flash_string(checker: Checker, node: ast.AST, value: str) -> None:
    fix = checker.fix('Use `"sdpa"`', Applicability.UNSAFE, checker.replace(node, '"sdpa"'))
    report_flash(checker, node, (fix,), value)


def check_flash_keyword(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if value in FLASH_IMPLEMENTATIONS and context.kind == "arg" and context.keyword in ATTENTION_KEYS \
            and type(node) is ast.Constant:
        report_flash_string(checker, node, value)


def check_use_flash_attention_2(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    kw = keyword(call, "use_flash_attention_2")
    if kw is None or constant(kw.value) is not True:
        return
    fixes: tuple[Fix, ...] = ()
    if keyword(call, "attn_implementation") is None:  # else the rewrite would repeat the keyword
        fixes = (checker.fix('Use `attn_implementation="sdpa"`', Applicability.UNSAFE,
                             checker.replace(kw, 'attn_implementation="sdpa"')),)
    report_flash(checker, kw, fixes, "use_flash_attention_2=True")


def check_flash_assignment(checker: Checker, value: str, targets: list[ast.expr], node: ast.expr) -> None:
    if value in FLASH_IMPLEMENTATIONS and any(assigned_key(t) in ATTENTION_KEYS for t in targets):
        report_flash_string(checker, node, value)


rule(
    code="NPU311", name="gpu-only-quantisation", severity=Severity.ERROR, fix="never", table=REAL_WORLD_TABLE,
    message="`{name}` is a GPU-only quantisation method.",
    doc=dict(
        what="Finds quantisation that has CUDA kernels only: the AutoAWQ (`awq`) and AutoGPTQ (`auto_gptq`) "
             "packages, transformers' `AwqConfig` and `GPTQConfig`, `quantization=`/`quant_method=` set to "
             "`awq`, `gptq`, `marlin`, `awq_marlin`, `gptq_marlin` or `fp8` (vLLM, SGLang, configs), "
             "and `kv_cache_dtype=\"fp8…\"`. Not bitsandbytes (NPU304): its int8 and 4-bit ops fall back to its "
             "generic PyTorch code on the NPU. Info under a test that names the method or an option the project "
             "leaves off (`if autogptq:` where it gives `autogptq` only `False`), as NPU301 says.",
        why="AWQ/GPTQ/Marlin/FP8 kernels are CUDA (or HIP); on the NPU they fail at load (\"Only CUDA and HIP "
            "support AWQ\"). A2/A3 have no FP8, so an FP8 KV cache crashes at allocation. Ascend quantises with "
            "msModelSlim (W8A8, W4A8: `--quantization ascend` in vllm-ascend).",
        example='llm = LLM(model, quantization="awq")  # NPU311\n\n'
                '# on the NPU, with a model quantised by msModelSlim\n\nllm = LLM(model, quantization="ascend")',
        fix="None automatic: the model must be quantised again with an NPU method.",
        source=real_world_citation(13, "NPU311", "vllm-project/vllm-ascend#195, #6800, #6603, #902; sgl-project/sglang#8004; "
                                     "hiyouga/LlamaFactory#4594") +
        "; " + real_world_citation(17, "NPU205", "vllm-project/vllm-ascend#8102 (fp8 KV cache crashes on 910B2; no FP8 on A3)."),
    ),
)

GPU_QUANTISATION = frozenset({"awq", "gptq", "marlin", "awq_marlin", "gptq_marlin", "fp8"})
QUANTISATION_KEYS = frozenset({"quantization", "quant_method"})


def check_quantisation_string(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if context.kind != "arg" or type(node) is not ast.Constant:
        return
    if (context.keyword in QUANTISATION_KEYS and value.lower() in GPU_QUANTISATION) or \
            (context.keyword == "kv_cache_dtype" and value.startswith("fp8")):
        report_opt_in(checker, "NPU311", node, checker.rules["NPU311"].message.format(name=f"{context.keyword}={value!r}"),
                      value.lower())


def report_opt_in(checker: Checker, code: str, node: ast.AST, message: str, package: str, local: str = "",
                  severity: Severity | None = None) -> None:
    """A finding of a setting or a call that runs a CUDA-only package, info under a test of its
    feature or an option the project leaves off (harmless_calls.opt_in_place)."""
    remark = opt_in_place(checker, cast(ast.expr, node), package, local)  # a keyword's value, a call's name
    if remark is None:
        checker.report(code, node, message, severity=severity)
    else:
        checker.report(code, node, message + remark[1], severity=remark[0])


# classes whose from_pretrained loads no bitsandbytes weights: tokenizers and processors, optimum's ONNX Runtime models
NOT_MODELS = ("Tokenizer", "Processor", "FeatureExtractor", "ORTModel")


def check_load_in_8bit(checker: Checker, call: ast.Call) -> None:
    """`BitsAndBytesConfig(load_in_8bit=True)` and transformers' shorthand for it,
    `from_pretrained(..., load_in_8bit=True)`. Not `load_in_4bit`: its NF4/FP4 ops fall back to
    the same generic code, which is where bitsandbytes' NPU support stands."""
    if type(call.func) is ast.Attribute and any(word in last_name(call.func.value) for word in NOT_MODELS):
        return  # `AutoTokenizer.from_pretrained(..., load_in_8bit=True)` quantises nothing
    eight_bit = passed(call, "load_in_8bit")
    if constant(eight_bit) is True:
        report_opt_in(checker, "NPU304", eight_bit, "`load_in_8bit=True` runs bitsandbytes' int8 ops, which have no "
                      "NPU kernel: on the NPU they fall back to its generic PyTorch code, and transformers accepts the NPU "
                      "only with a bitsandbytes that lists it as a device (0.50.2 does).", "bitsandbytes")


# transformers' `optim=` names that build a bitsandbytes optimizer with 8-bit or paged state (trainer.py of
# 4.56.0: "8bit" in the name → optim_bits=8, "paged" → is_paged); its 32-bit unpaged ones have a generic kernel.
BNB_OPTIM_NAMES = frozenset({
    "adamw_bnb_8bit", "adamw_8bit", "paged_adamw_32bit", "paged_adamw_8bit", "ademamix_8bit", "paged_ademamix_32bit",
    "paged_ademamix_8bit", "lion_8bit", "paged_lion_32bit", "paged_lion_8bit", "rmsprop_bnb_8bit"})
BNB_OPTIMIZER_FIX = ("Use a 32-bit, unpaged optimizer (for AdamW: torch_npu.optim.NpuFusedAdamW, "
                     "`optim=\"adamw_torch_npu_fused\"`).")


def report_bitsandbytes_optimizer(checker: Checker, node: ast.AST, name: str, eight_bit: bool, paged: bool,
                                  local: str = "") -> None:
    """An optimizer whose bitsandbytes state has no NPU path: an error, where NPU304 is otherwise a warning
    (info where it is opt-in: report_opt_in; `local`: the name the class is called by)."""
    kind = " and ".join(k for k, on in (("8-bit", eight_bit), ("paged", paged)) if on)
    reasons = [r for r, on in (("its 8-bit blockwise update has kernels for CUDA, CPU and XPU only", eight_bit),
                               ("its paged state needs bitsandbytes' CUDA library", paged)) if on]
    report_opt_in(checker, "NPU304", node, f"`{name}` is a bitsandbytes {kind} optimizer: {' and '.join(reasons)}, so "
                  f"it does not run on the NPU (bitsandbytes 0.50.2). {BNB_OPTIMIZER_FIX}", "bitsandbytes", local,
                  Severity.ERROR)


def check_bitsandbytes_optimizer_class(checker: Checker, ref: Reference, call: ast.Call) -> None:
    """`bnb.optim.PagedAdamW8bit(...)`: the class names say 8-bit (`…8bit`) and paged (`Paged…`) state,
    and so do the base classes' `optim_bits=8` and `is_paged=True` (bitsandbytes 0.50.2 `optim/*.py`)."""
    name = ref.qualname.rpartition(".")[2]
    chosen = [kw for kw, on in (("optim_bits=8", constant(passed(call, "optim_bits")) == 8),
                                ("is_paged=True", constant(passed(call, "is_paged")) is True)) if on]
    eight_bit = name.endswith("8bit") or "optim_bits=8" in chosen
    paged = name.startswith("Paged") or "is_paged=True" in chosen
    if eight_bit or paged:
        shown = f"{ref.qualname}({', '.join(chosen)})" if chosen else ref.qualname
        first = ref.node
        while type(first) is ast.Attribute:
            first = first.value
        report_bitsandbytes_optimizer(checker, ref.node, shown, eight_bit, paged, getattr(first, "id", ""))


rule(
    code="NPU313", name="fused-optimizer", severity=Severity.WARNING, fix="never",
    message="`{name}` is a CUDA fused optimizer.",
    doc=dict(
        what="Finds the trainer setting `optim=\"adamw_apex_fused\"`. Not `optim=\"adamw_torch_fused\"` nor "
             "`torch.optim.AdamW(fused=True)`: torch allows fused optimizers on the NPU's backend and torch_npu has "
             "an NPU kernel for `_fused_adamw_`. Not DeepSpeed's `FusedAdam`, `FusedLamb` or `FusedLion`: "
             "DeepSpeed builds all three on its NPU accelerator (checked on its master branch; the first release "
             "that ships each was not checked). Info under a test that names apex or an option the project leaves off, "
             "as NPU301 says.",
        why="transformers' `adamw_apex_fused` imports `apex.optimizers.FusedAdam`, NVIDIA apex's CUDA kernel. "
            "torch_npu ships `torch_npu.optim.NpuFusedAdamW` (transformers: `optim=\"adamw_torch_npu_fused\"`).",
        example='TrainingArguments(output_dir, optim="adamw_apex_fused")  # NPU313\n\n# on the NPU\n\n'
                'TrainingArguments(output_dir, optim="adamw_torch")',
        fix="None automatic: the optimizer choice is the user's (`adamw_torch` is the plain one).",
        source="transformers-4.56.0 wheel (PyPI): `trainer.py:1518-1529` (`adamw_torch_npu_fused` → "
               "`torch_npu.optim.NpuFusedAdamW`, `adamw_apex_fused` → `apex.optimizers.FusedAdam`); torch 2.13 "
               "`torch/utils/_foreach_utils.py:13-23` (fused optimizers on the privateuse1 backend); "
               "mappings/upstream/torch_npu/op_plugin_functions_summary.tsv (`_fused_adamw_`, section official); "
               "deepspeedai/DeepSpeed `op_builder/npu/__init__.py`@0c9b0f62, `fused_lion.py`@b61f2c4f, "
               "`fused_adam.py`@61bdd6ca (NPU builders of FusedAdam, FusedLamb, FusedLion).",
    ),
)


def check_optimizer_name(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    """transformers' `optim=`: apex's fused AdamW (NPU313), bitsandbytes' 8-bit and paged optimizers (NPU304)."""
    if context.kind != "arg" or context.keyword != "optim":
        return
    if value == "adamw_apex_fused":
        report_opt_in(checker, "NPU313", node, checker.rules["NPU313"].message.format(name=f"optim={value!r}"), "apex")
    elif value in BNB_OPTIM_NAMES:
        report_bitsandbytes_optimizer(checker, node, f"optim={value!r}", "8bit" in value, "paged" in value)


# --- dispatch of the rules above from real migrations: one handler per event kind ------------
KEYWORD_STRING_CHECKS = {
    **dict.fromkeys(ATTENTION_KEYS, check_flash_keyword),
    **dict.fromkeys((*QUANTISATION_KEYS, "kv_cache_dtype"), check_quantisation_string),
    "optim": check_optimizer_name,
}


@handles("reference", *LIBRARY_CODES, "NPU304", "NPU307")
def on_reference(checker: Checker, ref: Reference) -> None:
    call = ref.call
    if type(call) is not ast.Call or call.func is not ref.node:
        return
    check_library_call(checker, ref)
    qualname = ref.qualname
    if qualname.endswith((".BitsAndBytesConfig", ".from_pretrained")):
        check_load_in_8bit(checker, call)
    elif qualname.startswith("bitsandbytes.optim."):
        check_bitsandbytes_optimizer_class(checker, ref, call)
    if any(kw.arg == "use_flash_attention_2" for kw in call.keywords):
        check_use_flash_attention_2(checker, call, qualname)


@handles("attribute", "NPU304", names=("from_pretrained",))
def on_from_pretrained(checker: Checker, node: ast.Attribute, attr: str, call: ast.Call | None) -> None:
    """`model_class.from_pretrained(...)` on a value no import names (a resolved one is a reference)."""
    if call is not None and call.func is node:
        check_load_in_8bit(checker, call)


@handles("string", "NPU304", "NPU307", "NPU311", "NPU313", contexts=("arg",))
def on_string(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if context.kind != "arg" or type(node) is not ast.Constant or context.keyword is None:
        return
    check = KEYWORD_STRING_CHECKS.get(context.keyword)
    if check is not None:
        check(checker, node, value, context)


@handles("assign", "NPU307", values=(ast.Constant,))
def on_assign(checker: Checker, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
    value = node.value
    if type(value) is ast.Constant and type(value.value) is str:
        targets: list[ast.expr] = node.targets if isinstance(node, ast.Assign) else [node.target]
        check_flash_assignment(checker, value.value, targets, value)
