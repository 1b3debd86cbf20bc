"""What really breaks in CUDA → Ascend migrations (shared facts: real_world_failures.md):
third-party CUDA libraries at their call sites and in configuration strings, torch.compile,
device selection, distributed settings, host tools, attention semantics. The lookups are
rows of `mappings/torch_npu/realworld.toml` (read by `rules/table.py`); the rules that need
the shape of a call are here."""

from __future__ import annotations

import ast
from typing import TypeGuard

from ..engine.checker import Checker, Reference
from ..engine.model import Applicability, Fix, Severity
from ..engine.walk import Scope, StringContext, last_name
from ..engine.registry import TableRef, handles, rule
from .table import carried_by_import, is_prose, report, replacement_for

TABLE = TableRef("mappings/torch_npu/realworld.toml", ("api",))
FACTS = "mappings/upstream/torch_npu/real_world_failures.md"
# Reported at each call too: apex, flash_attn, xformers, CUDA extensions. Not bitsandbytes (its NF4
# calls run on the NPU) nor triton (triton-ascend replaces the package; `tl.*` calls in a kernel are its body).
THIRD_PARTY_CODES = ("NPU301", "NPU302", "NPU303", "NPU306")


def facts(number: int, code: str, evidence: str) -> str:
    return f"{FACTS} #{number} ({code}): {evidence}"


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def constant(node: ast.expr | None) -> object:
    """The value of a literal, else a marker that equals nothing."""
    return node.value if type(node) is ast.Constant else NotImplemented


def passed(call: ast.Call, name: str, position: int | None = None) -> ast.expr | None:
    """The argument given for a parameter, by keyword or position; None when absent or `None`."""
    kw = keyword(call, name)
    node = kw.value if kw else (call.args[position] if position is not None and len(call.args) > position else None)
    return None if node is None or constant(node) is None else node


# --- item 1: third-party CUDA libraries at their call sites --------------------------------
def check_library_call(checker: Checker, ref: Reference) -> None:
    """A call of a name imported from a CUDA library: the import carries the table's finding,
    and each call gets its own, so guarding the import does not hide where the library runs."""
    entry = checker.tables.lookup(ref.qualname)
    if entry is None or entry.rule not in THIRD_PARTY_CODES or entry.if_keyword is not None:
        return
    new = replacement_for(entry, ref.qualname)
    if carried_by_import(checker, entry, ref, new):
        report(checker, entry, ref.node, ref.qualname, new, None)


rule(
    code="NPU307", name="flash-attention-config", severity=Severity.WARNING, fix="sometimes",
    message="`{name}` needs the flash-attn package (CUDA only) unless transformers maps it to the NPU; "
            "`sdpa` works on every release.",
    doc=dict(
        what="Finds FlashAttention requested by configuration: `attn_implementation=\"flash_attention_2\"` "
             "(or `\"flash_attention_3\"`, also as `_attn_implementation`, in a call or assigned to an attribute "
             "or key of that name) and `use_flash_attention_2=True`.",
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
        source=facts(1, "NPU307", "huggingface/transformers#36383, #36618, #36696, #39844, #38189, #37859; "
                                  "verl-project/verl#198; modelscope/ms-swift#2238; hiyouga/LlamaFactory#9397."),
    ),
)

FLASH_IMPLEMENTATIONS = frozenset({"flash_attention_2", "flash_attention_3"})
ATTENTION_KEYS = frozenset({"attn_implementation", "_attn_implementation"})


def report_flash_string(checker: Checker, node: ast.AST, value: str) -> None:
    fix = checker.fix('Use `"sdpa"`', Applicability.UNSAFE, checker.replace(node, '"sdpa"'))
    checker.report("NPU307", node, fixes=(fix,), name=value)


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
    checker.report("NPU307", kw, fixes=fixes, name="use_flash_attention_2=True")


def assigned_key(target: ast.expr) -> str | None:
    """`x.key = ...` and `x["key"] = ...`: the key."""
    if type(target) is ast.Attribute:
        return target.attr
    if type(target) is ast.Subscript and type(target.slice) is ast.Constant and type(target.slice.value) is str:
        return target.slice.value
    return None


def check_flash_assignment(checker: Checker, value: str, targets: list[ast.expr], node: ast.expr) -> None:
    if value in FLASH_IMPLEMENTATIONS and any(assigned_key(t) in ATTENTION_KEYS for t in targets):
        report_flash_string(checker, node, value)


rule(
    code="NPU311", name="gpu-only-quantisation", severity=Severity.ERROR, fix="never", table=TABLE,
    message="`{name}` is a GPU-only quantisation method.",
    doc=dict(
        what="Finds quantisation that has CUDA kernels only: the AutoAWQ (`awq`) and AutoGPTQ (`auto_gptq`) "
             "packages, transformers' `AwqConfig` and `GPTQConfig`, `quantization=`/`quant_method=` set to "
             "`awq`, `gptq`, `marlin`, `awq_marlin`, `gptq_marlin` or `fp8` (vLLM, SGLang, configs), "
             "`kv_cache_dtype=\"fp8…\"`, and bitsandbytes beyond NF4: `BitsAndBytesConfig(load_in_8bit=True)` "
             "and `bnb_4bit_quant_type=\"fp4\"`.",
        why="AWQ/GPTQ/Marlin/FP8 kernels are CUDA (or HIP); on the NPU they fail at load (\"Only CUDA and HIP "
            "support AWQ\"). A2/A3 have no FP8, so an FP8 KV cache crashes at allocation. bitsandbytes' NPU "
            "backend implements NF4 only. Ascend quantises with msModelSlim (W8A8, W4A8: `--quantization ascend` "
            "in vllm-ascend).",
        example='llm = LLM(model, quantization="awq")  # NPU311\n'
                'BitsAndBytesConfig(load_in_8bit=True)  # NPU311\n\n'
                '# on the NPU\n\nBitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")',
        fix="None automatic: the model must be quantised again with an NPU method.",
        source=facts(13, "NPU311", "vllm-project/vllm-ascend#195, #6800, #6603, #902; sgl-project/sglang#8004; "
                                   "hiyouga/LlamaFactory#4594; bitsandbytes-foundation/bitsandbytes#1442, #1695") +
        "; " + facts(17, "NPU205", "vllm-project/vllm-ascend#8102 (fp8 KV cache crashes on 910B2; no FP8 on A3)."),
    ),
)

GPU_QUANTISATION = frozenset({"awq", "gptq", "marlin", "awq_marlin", "gptq_marlin", "fp8"})
QUANTISATION_KEYS = frozenset({"quantization", "quant_method"})


def check_quantisation_string(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if context.kind != "arg" or type(node) is not ast.Constant:
        return
    if (context.keyword in QUANTISATION_KEYS and value.lower() in GPU_QUANTISATION) or \
            (context.keyword == "kv_cache_dtype" and value.startswith("fp8")):
        checker.report("NPU311", node, name=f"{context.keyword}={value!r}")


def check_bitsandbytes_config(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    eight_bit = passed(call, "load_in_8bit")
    if constant(eight_bit) is True:
        checker.report("NPU311", eight_bit, name="load_in_8bit=True")
    quant_type = passed(call, "bnb_4bit_quant_type")
    if constant(quant_type) == "fp4":
        checker.report("NPU311", quant_type, name="bnb_4bit_quant_type='fp4'")


rule(
    code="NPU313", name="fused-optimizer", severity=Severity.WARNING, fix="never", table=TABLE,
    message="`{name}` is a CUDA fused optimizer.",
    doc=dict(
        what="Finds DeepSpeed's fused optimizers (`deepspeed.ops.adam.FusedAdam`, `deepspeed.ops.lamb.FusedLamb`, "
             "`deepspeed.ops.lion.FusedLion`) and the trainer setting `optim=\"adamw_apex_fused\"`.",
        why="These optimizers are CUDA kernels. DeepSpeed's FusedAdam has an NPU build only with DeepSpeed's NPU "
            "accelerator (and an accuracy bug fixed later), there is no NPU FusedLion, and `adamw_apex_fused` "
            "needs NVIDIA apex. torch_npu ships `torch_npu.optim.NpuFusedAdamW` and friends.",
        example='TrainingArguments(output_dir, optim="adamw_apex_fused")  # NPU313\n\n# on the NPU\n\n'
                'TrainingArguments(output_dir, optim="adamw_torch")',
        fix="None automatic: the optimizer choice is the user's (`adamw_torch` is the plain one).",
        source=facts(19, "NPU313", "deepspeedai/DeepSpeed#4343, #5777, #4568; modelscope/ms-swift#7327."),
    ),
)


def check_fused_optimizer_name(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if value == "adamw_apex_fused" and context.kind == "arg" and context.keyword == "optim":
        checker.report("NPU313", node, name=f"optim={value!r}")


# --- item 2: compilation ---------------------------------------------------------------------
rule(
    code="NPU111", name="torch-compile-inductor", severity=Severity.WARNING, fix="never",
    message="`{name}` compiles with the inductor backend, which the NPU does not run by default.{mode}",
    doc=dict(
        what="Finds `torch.compile(...)` calls (and `@torch.compile`) that use the default `inductor` backend: "
             "no `backend=`, or `backend=\"inductor\"`. Not when the backend is chosen elsewhere (a variable, "
             "`torchair.get_npu_backend()`, `\"npugraph_ex\"`, `\"eager\"`) or `disable=` is passed.",
        why="Ascend documents inductor as unsupported: compilation fails or crashes in codegen, especially on "
            "dynamic shapes. `mode=\"reduce-overhead\"` and `\"max-autotune\"` rely on CUDA graphs and Triton "
            "autotuning. NPU graph mode goes through TorchAir: `backend=torchair.get_npu_backend(compiler_config=...)` "
            "(import `torch_npu` first), or `backend=\"npugraph_ex\"` (aclgraph capture: inference only, no "
            "backward, no random ops, one NPU per process). Triton-Ascend compiles Triton kernels, not inductor "
            "graphs.",
        example='model = torch.compile(model, mode="reduce-overhead")  # NPU111\n\n# on the NPU\n\n'
                'import torch_npu, torchair\nmodel = torch.compile(model, backend=torchair.get_npu_backend())\n'
                '# or keep eager: torch.compile(model, disable=is_npu)',
        fix="None automatic: the backend and its configuration are a choice.",
        source=facts(3, "NPU111", "hiascend TorchAir guide (inductor unsupported, npugraph_ex limits, import "
                                  "torch_npu before torchair); vllm-project/vllm-omni#1108; "
                                  "vllm-project/speculators#600; sgl-project/sglang#26403, #26573; "
                                  "sgl-project/sglang-omni#1721; huggingface/transformers#37859."),
    ),
)

CUDA_GRAPH_MODES = frozenset({"reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"})


def compile_uses_inductor(call: ast.Call) -> bool:
    if any(kw.arg is None or kw.arg == "disable" for kw in call.keywords):
        return False  # `**options` may choose the backend; `disable=` already guards the NPU
    backend = passed(call, "backend")
    return backend is None or constant(backend) == "inductor"


def check_torch_compile(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    if qualname != "torch.compile" or not compile_uses_inductor(call):
        return
    mode = constant(passed(call, "mode"))
    note = f" `mode={mode!r}` relies on CUDA graphs and Triton." if mode in CUDA_GRAPH_MODES else ""
    checker.report("NPU111", call.func, name="torch.compile", mode=note)


def check_compile_decorator(checker: Checker, ref: Reference) -> None:
    """`@torch.compile` without arguments. Other uncalled uses (`original = torch.compile`, a
    wrapper patched in) do not compile anything by themselves."""
    where = checker.range(ref.node)
    if checker.source.line(where.start_line)[:where.start_col].strip() == "@":
        checker.report("NPU111", where, name="torch.compile", mode="")


rule(
    code="NPU118", name="inductor-config", severity=Severity.INFO, fix="never", table=TABLE,
    message="`{name}` configures inductor.",
    doc=dict(
        what="Finds uses of `torch._inductor.config` (`triton.cudagraphs`, `coordinate_descent_tuning`, …).",
        why="These settings are read by the inductor backend only. On the NPU, graphs are compiled by TorchAir "
            "(`torchair.get_npu_backend()` with a `CompilerConfig`) or captured by `npugraph_ex`; inductor's "
            "CUDA-graph and Triton switches change nothing there.",
        example="torch._inductor.config.triton.cudagraphs = True  # NPU118\n\n# on the NPU\n\n"
                "config = torchair.CompilerConfig()\nconfig.mode = \"reduce-overhead\"",
        fix="None automatic.",
        source=facts(3, "NPU111", "hiascend TorchAir guide (inductor unsupported; CompilerConfig, npugraph_ex)."),
    ),
)


# --- item 3: device selection ----------------------------------------------------------------
rule(
    code="NPU112", name="integer-device", severity=Severity.INFO, fix="never",
    message="Device `{name}` is an integer: it means the current accelerator only from torch 2.5 on.",
    doc=dict(
        what="Finds integer devices: `.to(0)`, `torch.device(0)`, `device=0`, `device_map={\"\": 0}`.",
        why="Before torch 2.5 an integer device was a CUDA ordinal (\"Torch not compiled with CUDA enabled\" on "
            "an NPU host, Ascend/pytorch#16; DeepSpeed#3933 on torch 2.1). From torch 2.5 (pytorch/pytorch#129119) "
            "it means that index of the current accelerator, so with torch_npu loaded it is the NPU; torch 2.13 "
            "raises \"Cannot access accelerator device when none is available\" where there is none (checked). "
            "Libraries still turn integers into `cuda:N` themselves (transformers#38468, "
            "insanely-fast-whisper#287). The torch_npu versions this checker has tables for (2.7.1, 2.13.0) pair "
            "with torch ≥ 2.5, so this is advice: a device string says what it means on every version.",
        example='x = x.to(0)\n\n# explicit\n\nx = x.to("npu:0")',
        fix="None automatic.",
        source=facts(5, "NPU112", "Ascend/pytorch#16; huggingface/transformers#38468; m-bain/whisperX#1482; "
                                  "Vaibhavs10/insanely-fast-whisper#287; Comfy-Org/ComfyUI#6483; "
                                  "vllm-project/vllm-ascend#516") +
        "; pytorch/pytorch#129119 (device index alone → current accelerator); torch 2.13.0 `torch.device(0)` "
        "checked on a CPU host.",
    ),
)


def integer(node: ast.expr | None) -> TypeGuard[ast.Constant]:
    return type(node) is ast.Constant and type(node.value) is int


def check_integer_device(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    candidates: list[ast.expr] = []
    if qualname == "torch.device" and len(call.args) == 1:
        candidates.append(call.args[0])
    elif type(call.func) is ast.Attribute and call.func.attr == "to" and len(call.args) == 1 and not call.keywords:
        candidates.append(call.args[0])
    device = keyword(call, "device")
    if device is not None:
        candidates.append(device.value)
    device_map = keyword(call, "device_map")
    if device_map is not None:
        value = device_map.value
        candidates.extend(value.values if type(value) is ast.Dict else [value])
    for node in candidates:
        if integer(node):
            checker.report("NPU112", node, name=repr(node.value))


rule(
    code="NPU113", name="cuda-or-cpu", severity=Severity.WARNING, fix="never",
    message="`{name}` picks the CPU on an NPU host, silently.",
    doc=dict(
        what="Finds device selection that only knows CUDA: `\"cuda\" if torch.cuda.is_available() else \"cpu\"` "
             "(also with `torch.cuda.device_count()`), assigned or passed as a device.",
        why="Without `transfer_to_npu`, `torch.cuda.is_available()` is False on an Ascend host, so the program "
            "runs entirely on the CPU with no error: slow training, and NPU-vs-CPU comparisons that compare the "
            "CPU with itself.",
        example='device = "cuda" if torch.cuda.is_available() else "cpu"\n\n# becomes\n\n'
                'device = "npu" if torch.npu.is_available() else "cpu"\n'
                '# or, device-agnostic (torch >= 2.6)\n'
                'device = torch.accelerator.current_accelerator() or torch.device("cpu")',
        fix="None from this rule; NPU101 and NPU103 rewrite the string and the test.",
        source=facts(7, "NPU113", "m-bain/whisperX#1482; open-compass/opencompass#1618; "
                                  "ivan-chai/torch-linear-assignment#28; ascend-ai-coding/awesome-ascend-skills#126; "
                                  "Comfy-Org/ComfyUI#6483."),
    ),
)

CUDA_PROBES = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})


def is_cuda_string(node: ast.expr) -> bool:
    value = constant(node)
    return isinstance(value, str) and (value == "cuda" or value.startswith("cuda:"))


def cuda_or_cpu(checker: Checker, node: ast.expr, scope: Scope) -> bool:
    if type(node) is not ast.IfExp or not is_cuda_string(node.body) or constant(node.orelse) != "cpu":
        return False
    return any(type(n) is ast.Call and checker.qualname(n.func, scope) in CUDA_PROBES for n in ast.walk(node.test))


def report_cuda_or_cpu(checker: Checker, node: ast.expr, scope: Scope) -> None:
    if cuda_or_cpu(checker, node, scope):
        checker.report("NPU113", node, name=checker.source.segment(checker.range(node)))


def check_cuda_or_cpu_argument(checker: Checker, call: ast.Call, scope: Scope) -> None:
    for node in (*call.args, *(kw.value for kw in call.keywords)):
        if type(node) is ast.IfExp:
            report_cuda_or_cpu(checker, node, scope)


# --- item 5: distributed -----------------------------------------------------------------------
rule(
    code="NPU409", name="hccl-collective-gap", severity=Severity.WARNING, fix="never", table=TABLE,
    message="`{name}` is not a native HCCL collective.",
    doc=dict(
        what="Finds `torch.distributed.gather`, `gather_object`, `scatter` and `ReduceOp.AVG`.",
        why="HCCL has no gather: torch_npu 2.13.0 runs `dist.gather` as an all_gather after broadcasting the "
            "shapes (it warns \"HCCL doesn't support gather at the moment\"), so every rank receives every tensor. "
            "`ReduceOp.AVG` is rejected by HCCL on 910B, and scatter support is limited.",
        example="dist.all_reduce(grad, op=dist.ReduceOp.AVG)  # NPU409\n\n# on the NPU\n\n"
                "dist.all_reduce(grad, op=dist.ReduceOp.SUM)\ngrad /= dist.get_world_size()",
        fix="None automatic.",
        source=facts(10, "NPU409", "sgl-project/sgl-kernel-npu#669; vllm-project/vllm-ascend#541; Ascend/pytorch#54; "
                                   "DeepLink-org/ditorch#74; Ascend/pytorch#3") +
        "; torch_npu-2.13.0 wheel: torch_npu/distributed/distributed_c10d.py (gather via allgather).",
    ),
)

rule(
    code="NPU410", name="hccl-timeout", severity=Severity.WARNING, fix="never",
    message="`{name}` does not set HCCL's timeouts; set HCCL_CONNECT_TIMEOUT and HCCL_EXEC_TIMEOUT.",
    doc=dict(
        what="Finds `init_process_group(timeout=...)` and `ddp_timeout=` in a file that never names "
             "`HCCL_CONNECT_TIMEOUT` or `HCCL_EXEC_TIMEOUT`.",
        why="HCCL establishes links within `HCCL_CONNECT_TIMEOUT` (default 120 s) and runs collectives within "
            "`HCCL_EXEC_TIMEOUT`; the process group's `timeout` (NCCL's 10 minutes) and the NCCL variables do not "
            "govern them. Rank skew at start-up (loading a model, rank 0 reading a checkpoint) then kills the job "
            "with EI0006 \"Getting socket times out\".",
        example='dist.init_process_group("hccl", timeout=timedelta(minutes=30))  # NPU410\n\n# add\n\n'
                'os.environ.setdefault("HCCL_CONNECT_TIMEOUT", "1800")\n'
                'os.environ.setdefault("HCCL_EXEC_TIMEOUT", "1800")',
        fix="None automatic: export the variables on every rank (launch script or before the first collective).",
        source=facts(11, "NPU410", "modelscope/ms-swift#8281; vllm-project/afd-plugin#229; InternLM/lmdeploy#2482; "
                                   "Ascend/pytorch#54; vllm-project/vllm-ascend#486."),
    ),
)

HCCL_TIMEOUTS = frozenset({"HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT"})


def note_process_group_timeout(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    if qualname == "torch.distributed.init_process_group":
        timeout = passed(call, "timeout")
        if timeout is not None:
            checker.note("pg-timeout", timeout)
    timeout = passed(call, "ddp_timeout")
    if timeout is not None:
        checker.note("pg-timeout", timeout)


def note_hccl_timeout(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if value in HCCL_TIMEOUTS:
        checker.note("hccl-timeout", node)


@handles("module", "NPU410")
def check_hccl_timeout(checker: Checker, facts_: dict) -> None:
    if "pg-timeout" in facts_ and "hccl-timeout" not in facts_:
        checker.report("NPU410", facts_["pg-timeout"], name="timeout")


rule(
    code="NPU114", name="fork-start-method", severity=Severity.WARNING, fix="always",
    message="The `fork` start method cannot re-initialise the NPU in the child process.",
    doc=dict(
        what="Finds the `fork` start method: `multiprocessing.set_start_method(\"fork\")`, `get_context(\"fork\")`, "
             "`multiprocessing_context=\"fork\"`, and `VLLM_WORKER_MULTIPROC_METHOD` set to `fork`.",
        why="torch_npu initialises the device early (autoload, `get_soc_version()`, any `torch.npu` call), and a "
            "forked child cannot initialise it again: \"Cannot re-initialize NPU in forked subprocess\". CUDA "
            "frameworks check `torch.cuda.is_initialized()` before forking, which says nothing about the NPU.",
        example='mp.set_start_method("fork")\n\n# becomes\n\nmp.set_start_method("spawn")',
        fix="Unsafe: writes `\"spawn\"`. A spawned child re-imports the main module: the entry point needs an "
            "`if __name__ == \"__main__\":` guard and what is passed to the child must pickle.",
        source=facts(12, "NPU114", "vllm-project/vllm-omni#2828; vllm-project/vllm-ascend#4502, #3133, #7256; "
                                   "hiyouga/LlamaFactory#7447."),
    ),
)

START_METHOD_CALLS = frozenset({"set_start_method", "get_context"})
START_METHOD_KEYS = frozenset({"multiprocessing_context", "start_method", "mp_context", "method"})


def report_fork(checker: Checker, node: ast.AST) -> None:
    fix = checker.fix('Use `"spawn"`', Applicability.UNSAFE, checker.replace(node, '"spawn"'))
    checker.report("NPU114", node, fixes=(fix,))


def check_fork(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if value != "fork" or context.kind != "arg" or type(node) is not ast.Constant:
        return
    call = context.call
    if (context.position == 0 and last_name(call.func) in START_METHOD_CALLS) or context.keyword in START_METHOD_KEYS:
        report_fork(checker, node)


def check_vllm_fork(checker: Checker, value: str, targets: list[ast.expr], node: ast.expr) -> None:
    if value == "fork" and any(assigned_key(t) == "VLLM_WORKER_MULTIPROC_METHOD" for t in targets):
        report_fork(checker, node)


# --- item 6: host tools and probes ---------------------------------------------------------------
rule(
    code="NPU124", name="gpu-query-tool", severity=Severity.WARNING, fix="never",
    table=TableRef(TABLE.path, ("api", "env")),
    message="`{name}` needs NVIDIA's driver or toolkit.",
    doc=dict(
        what="Finds NVIDIA host tools and probes: running `nvidia-smi` or `nvcc` (`subprocess.*`, `os.system`, "
             "`os.popen`, `shutil.which`), the `pynvml` and `GPUtil` packages, `CUDA_HOME`/`CUDA_PATH` and "
             "`torch.utils.cpp_extension.CUDA_HOME`.",
        why="None of them exists on an Ascend host: the command is not found, NVML fails to load, `CUDA_HOME` is "
            "unset. The NPU counterparts are `npu-smi info`, `torch.npu.mem_get_info()`, "
            "`torch.npu.get_device_name()` and `ASCEND_HOME_PATH`/`ASCEND_TOOLKIT_HOME`.",
        example='subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])  # NPU124\n\n'
                '# on the NPU\n\nfree, total = torch.npu.mem_get_info()',
        fix="None automatic: `npu-smi` takes other arguments and prints another format.",
        source=facts(29, "NPU124", "flagos-ai/FlagGems#4045; XuehaiPan/nvitop#227; opendatalab/MinerU#1695; "
                                   "huggingface/accelerate#2186; 1Panel-dev/1Panel#11910."),
    ),
)

NVIDIA_COMMANDS = ("nvidia-smi", "nvcc")
COMMAND_RUNNERS = frozenset({"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput",
                             "system", "popen", "which", "spawn"})


def nvidia_command(value: str) -> str | None:
    word = value.strip().split(" ", 1)[0].rpartition("/")[2]
    return word if word in NVIDIA_COMMANDS else None


def check_nvidia_command(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if is_prose(context) or context.kind != "arg" or context.position != 0:
        return
    command = nvidia_command(value)
    if command is None or last_name(context.call.func) not in COMMAND_RUNNERS:
        return
    # the program itself: the first argument, or the first element of the argument list
    siblings = context.siblings
    if siblings and siblings[0] is not node:
        return
    checker.report("NPU124", node, name=command)


rule(
    code="NPU126", name="cuda-version-probe", severity=Severity.WARNING, fix="never", table=TABLE,
    message="`{name}` is None on an NPU host.",
    doc=dict(
        what="Finds `torch.version.cuda`.",
        why="torch on an Ascend host is a CPU build: `torch.version.cuda` is None. A test of it takes the "
            "non-CUDA branch; parsing it (`float(torch.version.cuda)`) raises.",
        example="if torch.version.cuda >= \"11.8\": ...  # NPU126\n\n# on the NPU\n\n"
                "if torch.npu.is_available(): ...",
        fix="None automatic.",
        source=facts(29, "NPU124", "opendatalab/MinerU#1695 (code reading the CUDA version and cards must be "
                                   "adapted)") + "; torch 2.13.0+cpu: `torch.version.cuda` is None (checked).",
    ),
)


# --- item 7: attention semantics -----------------------------------------------------------------
rule(
    code="NPU407", name="attention-mask-semantics", severity=Severity.WARNING, fix="never",
    message="Attention mask: {name}",
    doc=dict(
        what="Finds attention calls whose mask means something else on the NPU: "
             "`F.scaled_dot_product_attention` with both `attn_mask` and `is_causal=True`, and "
             "`torch_npu.npu_fusion_attention` given a floating-point `atten_mask` (`.float()`, `.half()`, "
             "`.to(dtype)`, …).",
        why="On the NPU, SDPA takes the fused FlashAttentionScore path only when `is_causal=True` comes without a "
            "mask and masks are bool; torch itself rejects a mask together with `is_causal=True` on its math path. "
            "`npu_fusion_attention` reads `atten_mask` as bool/uint8 with the opposite polarity to torch "
            "(True/1 = masked out), so an additive float mask (0 to keep, -inf to drop) is read as \"mask "
            "everything that is -inf or non-zero\" — or, booleanised, silently drops relative-position biases.",
        example="out = torch_npu.npu_fusion_attention(q, k, v, n, \"BSND\", atten_mask=mask.to(q.dtype))  # NPU407\n\n"
                "# pass a bool mask, True where attention is forbidden\n\n"
                "out = torch_npu.npu_fusion_attention(q, k, v, n, \"BSND\", atten_mask=~keep)",
        fix="None automatic: which positions a mask keeps is the code's meaning.",
        source=facts(4, "NPU407", "Ascend/pytorch#88; huggingface/transformers#41143, #48843; "
                                  "huggingface/diffusers#14396, #14397; PKU-YuanGroup/Open-Sora-Plan#360, #381."),
    ),
)

SDPA = frozenset({"torch.nn.functional.scaled_dot_product_attention"})
FUSION_ATTENTION = frozenset({"torch_npu.npu_fusion_attention"})
FLOAT_CASTS = frozenset({"float", "half", "bfloat16", "to", "type_as"})


def is_float_cast(node: ast.expr | None) -> bool:
    if type(node) is not ast.Call or type(node.func) is not ast.Attribute or node.func.attr not in FLOAT_CASTS:
        return False
    if node.func.attr == "to":  # .to(torch.bool) keeps it a bool mask
        return bool(node.args) and not any(last_name(a) in ("bool", "uint8") for a in node.args)
    return True


def check_attention_mask(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    if qualname in SDPA:
        mask, causal = passed(call, "attn_mask", 3), passed(call, "is_causal", 5)
        if mask is not None and constant(causal) is True:  # a variable is usually False whenever a mask is given
            checker.report("NPU407", mask, name="`attn_mask` together with `is_causal`: torch rejects the pair on its "
                                                "math path, and the NPU's fused path takes one or the other.")
    elif qualname in FUSION_ATTENTION:
        mask = passed(call, "atten_mask")
        if is_float_cast(mask):
            checker.report("NPU407", mask, name="`atten_mask` is a float mask: npu_fusion_attention reads it as a bool "
                                                "mask where True means masked out.")


rule(
    code="NPU413", name="forced-sdpa-backend", severity=Severity.WARNING, fix="never",
    message="`{name}` allows only CUDA attention kernels.",
    doc=dict(
        what="Finds `torch.nn.attention.sdpa_kernel(...)` given backends without `SDPBackend.MATH` (nor "
             "`OVERRIDEABLE`, the backend out-of-tree devices register).",
        why="Flash, memory-efficient and cuDNN attention are CUDA kernels. Restricting SDPA to them leaves a "
            "non-NVIDIA device no kernel: \"No available kernel. Aborting execution.\"",
        example="with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # NPU413\n\n# becomes\n\n"
                "with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):",
        fix="None automatic (the list order is a priority since torch 2.6 only with `set_priority=True`).",
        source=facts(27, "NPU413", "ostris/ai-toolkit#933 (analog: ROCm/XPU/MPS fail when a CUDA backend is forced); "
                                   "fpgaminer/joytag#11."),
    ),
)

PORTABLE_BACKENDS = frozenset({"MATH", "OVERRIDEABLE"})


def check_sdpa_kernel(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    if qualname != "torch.nn.attention.sdpa_kernel":
        return
    backends = passed(call, "backends", 0)
    if backends is None:
        return
    elements = backends.elts if isinstance(backends, (ast.List, ast.Tuple)) else [backends]
    named = [e for e in elements if type(e) is ast.Attribute]
    if len(named) != len(elements):
        return  # a variable or a call: not visible here
    if not any(e.attr in PORTABLE_BACKENDS for e in named):
        checker.report("NPU413", backends, name=checker.source.segment(checker.range(backends)))


# --- dispatch: one handler per event kind, so these rules add one call per event ---------------
CALLEE_CHECKS = {
    "torch.compile": check_torch_compile,
    "torch.device": check_integer_device,
    "torch.distributed.init_process_group": note_process_group_timeout,
    "torch.nn.functional.scaled_dot_product_attention": check_attention_mask,
    "torch_npu.npu_fusion_attention": check_attention_mask,
    "torch.nn.attention.sdpa_kernel": check_sdpa_kernel,
}
KEYWORD_CHECKS = {
    "use_flash_attention_2": check_use_flash_attention_2,
    "device": check_integer_device,
    "device_map": check_integer_device,
    "ddp_timeout": note_process_group_timeout,
}
KEYWORD_STRING_CHECKS = {
    **dict.fromkeys(ATTENTION_KEYS, check_flash_keyword),
    **dict.fromkeys((*QUANTISATION_KEYS, "kv_cache_dtype"), check_quantisation_string),
    "optim": check_fused_optimizer_name,
    **dict.fromkeys(START_METHOD_KEYS, check_fork),
}
CALL_CODES = ("NPU111", "NPU112", "NPU113", "NPU307", "NPU311", "NPU407", "NPU410", "NPU413")


@handles("reference", *THIRD_PARTY_CODES, *CALL_CODES)
def on_reference(checker: Checker, ref: Reference) -> None:
    call = ref.call
    if type(call) is not ast.Call or call.func is not ref.node:
        if call is None and ref.qualname == "torch.compile":
            check_compile_decorator(checker, ref)
        return
    check_library_call(checker, ref)
    qualname = ref.qualname
    checks = set()
    check = CALLEE_CHECKS.get(qualname)
    if check is not None:
        checks.add(check)
    elif qualname.endswith(".BitsAndBytesConfig"):
        checks.add(check_bitsandbytes_config)
    for kw in call.keywords:
        check = KEYWORD_CHECKS.get(kw.arg)
        if check is not None:
            checks.add(check)
    for check in checks:
        check(checker, call, qualname)
    if any(type(node) is ast.IfExp for node in (*call.args, *(kw.value for kw in call.keywords))):
        check_cuda_or_cpu_argument(checker, call, ref.scope)


@handles("attribute", "NPU112", "NPU113", names=("to",))
def on_method(checker: Checker, node: ast.Attribute, attr: str, call: ast.Call | None) -> None:
    """`x.to(...)` on any value."""
    if attr == "to" and call is not None and call.func is node and call.args:
        check_integer_device(checker, call, None)
        if type(call.args[0]) is ast.IfExp:
            check_cuda_or_cpu_argument(checker, call, checker.module.scope)  # no scope here: the module's


@handles("string", "NPU307", "NPU311", "NPU313", "NPU410", "NPU114", "NPU124")
def on_string(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if value in HCCL_TIMEOUTS:
        note_hccl_timeout(checker, node, value, context)
    if context.kind != "arg" or type(node) is not ast.Constant:
        return
    if context.keyword is not None:
        check = KEYWORD_STRING_CHECKS.get(context.keyword)
        if check is not None:
            check(checker, node, value, context)
    elif context.position == 0:
        check_fork(checker, node, value, context)
        check_nvidia_command(checker, node, value, context)


@handles("assign", "NPU307", "NPU113", "NPU114")
def on_assign(checker: Checker, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
    value = node.value
    if type(value) is ast.IfExp:
        report_cuda_or_cpu(checker, value, scope)
    elif type(value) is ast.Constant and type(value.value) is str:
        targets: list[ast.expr] = node.targets if isinstance(node, ast.Assign) else [node.target]
        check_flash_assignment(checker, value.value, targets, value)
        check_vllm_fork(checker, value.value, targets, value)

