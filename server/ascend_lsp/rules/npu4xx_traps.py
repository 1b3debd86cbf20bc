"""NPU4xx: NPU semantic traps — code that runs on the NPU but silently does something else;
with what real migrations trip over (docs/real-world-rules.md): attention masks the NPU
reads otherwise, fused-attention arguments that torch_npu reads otherwise (NPU416),
forced CUDA attention kernels, HCCL's collective gaps and timeouts, and
IEEE inf/nan on the chips that run float16 in saturation mode (chip_features)."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from ..engine.checker import Checker, Reference
from ..engine.model import Applicability, Fix, Severity
from ..engine.walk import StringContext, last_name
from ..engine.registry import TableRef, handles, rule
from .call_arguments import constant, passed
from .chip_features import CHIP_TABLE, INF_CHECKS, INF_CONSTANTS, INF_METHODS, chip_doc, lacking, report_chip
from .citations import THIRD_PARTY_REPLACEMENTS, TRANSFER_TO_NPU, real_world_citation
from .portable_fixes import PORTABLY, styled
from .table import REAL_WORLD_TABLE, backend_spec, word_fix

CUDA_TABLE = TableRef("mappings/torch_npu/cuda.toml", ("api",))

rule(
    code="NPU401", name="nccl-backend-check", severity=Severity.ERROR, fix="sometimes",
    message="Comparison with backend `{name}` is never true on the NPU, where the backend is HCCL.",
    doc=dict(
        what="Finds comparisons with the NCCL backend name: `dist.get_backend() == \"nccl\"`, "
             "`if args.backend != \"nccl\":`.",
        why="`transfer_to_npu` rewrites the backend passed to `init_process_group`, so the process group is "
            "HCCL — but it does not rewrite your comparisons, which silently take the non-NCCL branch.",
        example='if dist.get_backend() == "nccl":\n\n# becomes\n\nif dist.get_backend() == "hccl":',
        fix="Unsafe: compares with `hccl` instead; check what the branch was for.",
        source=TRANSFER_TO_NPU + "; Ascend/mstt msfmktransplt README (change backend checks by hand).",
    ),
)

rule(
    code="NPU402", name="device-capability", severity=Severity.WARNING, fix="sometimes", table=CUDA_TABLE,
    message="`{name}` describes a CUDA compute capability.",
    doc=dict(
        what="Finds `torch.cuda.get_device_capability` and `torch.cuda.get_device_properties`. Under a test for "
             "CUDA (`if x.device.type == \"cuda\": cap = torch.cuda.get_device_capability(x.device)`) it is info, "
             "like a CUDA name there (NPU101): the query runs only where the test passes, and the test is what "
             "changes; where the test is changed to admit the NPU, this needs the change too.",
        why="On the NPU, `torch.npu.get_device_capability` returns a compatibility value set by "
            "`TORCH_NPU_DEVICE_CAPABILITY`, not a property of the hardware. Code that branches on the CUDA "
            "compute capability (`>= (8, 0)` for bf16 or flash attention) takes a meaningless branch.",
        example="if torch.cuda.get_device_capability()[0] >= 8: ...  # NPU402\n\n"
                "# test the feature instead\n\nif torch.npu.is_bf16_supported(): ...",
        fix="Unsafe: renames the call to its `torch.npu` counterpart so it runs; the branch still needs a person.",
        source="Ascend native API support list, torch-cuda page (限制与说明); " + TRANSFER_TO_NPU + ".",
    ),
)

rule(
    code="NPU403", name="data-parallel", severity=Severity.ERROR, fix="never", table=CUDA_TABLE,
    on_type_only=False,
    message="`{name}` is marked unsupported (✘) in Ascend's support list.",
    doc=dict(
        what="Finds `torch.nn.DataParallel` and `torch.nn.parallel.data_parallel`. Info where the torch_npu wheel "
             "binds the communication DataParallel calls (2.13.0 does: `torch._C._broadcast_coalesced`, `_scatter` "
             "and `_gather` from `torch_npu/csrc/npu/DataParallelComm.cpp`, the table's row says so).",
        why="Single-process multi-device DataParallel is marked unsupported (✘) in Ascend's support list. torch 2.13's "
            "DataParallel is device-generic (it finds the NPU through `torch.accelerator`) and torch_npu 2.13.0 "
            "provides the broadcast, scatter and gather it calls, so it runs; it is still one process driving every "
            "NPU, slower than one process per device, and outside what Ascend verifies.",
        example="model = torch.nn.DataParallel(model)\n\n# use one process per device\n\n"
                'dist.init_process_group("hccl")\nmodel = DistributedDataParallel(model, device_ids=[local_rank])',
        fix="None automatic: switching to DistributedDataParallel changes how the script is launched.",
        source="Ascend native API support list (torch-nn page); " + THIRD_PARTY_REPLACEMENTS + ".",
    ),
)

rule(
    code="NPU404", name="jit-script-disabled", severity=Severity.WARNING, fix="never", table=CUDA_TABLE,
    message="`{name}` does nothing under `transfer_to_npu`.", transfer_only=True,
    doc=dict(
        what="Finds `torch.jit.script` and `torch.jit.script_method`. Code scripted only to be run is info: a "
             "function or class scripted in place (`@torch.jit.script`, `f = torch.jit.script(f)`), a function of "
             "the module scripted under another name (`loss_jit = torch.jit.script(loss_fn)`) where the module "
             "never saves or inspects a TorchScript object (`torch.jit.save`, `.graph`, `.code`), and `from "
             "torch.jit import script` where the module uses the name only as a decorator (`@script`): it stays "
             "plain Python with the same results, and only code that needs the TorchScript object changes. Every "
             "finding is info where no Python file of the project (without a project: the file) imports "
             "`transfer_to_npu`: with `import torch_npu` alone, scripting works as on CUDA.",
        why="`transfer_to_npu`, the recommended migration path, replaces `torch.jit.script` with a function "
            "that returns its argument unchanged: the scripted model is plain eager Python on the NPU, and "
            "anything that relied on TorchScript (saving with `torch.jit.save`, scripting errors) changes.",
        example="model = torch.jit.script(model)  # eager on the NPU under transfer_to_npu",
        fix="None automatic: use `torch.compile` (supported since TorchNPU 7.3.0) or keep eager mode.",
        source=TRANSFER_TO_NPU,
    ),
)

rule(
    code="NPU405", name="float64-downcast", severity=Severity.WARNING, fix="never",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api", "method")),
    message="`{name}` means float64, which the NPU silently replaces with float32.",
    doc=dict(
        what="Finds `torch.float64`, `torch.double` and `.double()` where the tensor may be on the device: "
             "`device=` given, `.to(device)`, a collective, a function that places tensors on a device, or a "
             "tensor handed to a module (`register_buffer`, `nn.Parameter`, a metric's `add_state`), which the "
             "module's `.to(device)` takes along. "
             "Float64 the code shows on the CPU is info, with the reason: a factory (`torch.tensor(...)`, "
             "`torch.zeros(...)`) given no `device=`, a module or tensor made in the statement and not moved, "
             "a function or statement that places nothing on a device (for a cast of a tensor made elsewhere, "
             "`x.double()`, only in CPU-side code: a test, data loading, a checkpoint's conversion; in a model's "
             "code the tensor may be on the device), a dtype compared with (`x.dtype in (torch.float16, "
             "torch.float64)`), one of a list of dtypes a check accepts (`validate(x, accepted_dtypes=[torch.float16, "
             "torch.float32, torch.float64])`: a call or keyword named for accepting, allowing, supporting, "
             "validating, checking or expecting) or a key of a dict display (`{torch.float64: 3.4e13}`, a table "
             "of peak FLOPs), or an entry of a table that translates another library's dtype of the same name "
             "(`{np.float64: torch.float64}`) or of a table from dtype to dtype beside a float64 key (not "
             "`{torch.float32: torch.float64}`, which makes float64) or the value of one that looks a dtype up by its name (`{\"float64\": "
             "torch.float64}`, the user's choice), or chosen only where the data already is float64, or a cast of a tensor on the "
             "CPU (`x.detach().cpu().to(torch.float64)`, or `x.to(torch.double).numpy()`, which only a CPU tensor "
             "allows). So is a tensor made of a size or "
             "a dimension count (`torch.tensor(x.shape[-1], dtype=torch.float64, device=x.device)`), an integer "
             "float32 holds exactly (up to 2**24), wherever it is; and `from torch import float64` where every other "
             "use of the name in the file (as a word, comments too) is in such a list written on one line "
             "(`accepted_dtypes=[float16, float32, float64]`).",
        why="Casting an NPU tensor to float64 gives float32 with a single warning (\"Device do not support "
            "double dtype now, dtype cast replace with float.\"), and 919 of the 1175 dtype-restricted "
            "operators exclude float64. Code that relies on double precision (loss accumulation, metrics, "
            "numerics tests) silently loses it.",
        example="loss_sum = loss.double()  # float32 on the NPU\n\n# keep float64 work on the CPU\n\n"
                "loss_sum = loss.cpu().double()",
        fix="None automatic.",
        source="Ascend/pytorch torch_npu/csrc/aten/common/ToKernelNpu.cpp; native API support list dtype notes.",
    ),
)

rule(
    code="NPU406", name="channels-last", severity=Severity.WARNING, fix="never", table=CUDA_TABLE,
    message="`{name}` is not supported under automatic migration.",
    doc=dict(
        what="Finds `torch.channels_last`.",
        why="Ascend's migration guide lists `channels_last` as unsupported under `transfer_to_npu` and "
            "suggests contiguous tensors.",
        example="x = x.to(memory_format=torch.channels_last)  # NPU406\n\nx = x.contiguous()",
        fix="None automatic.",
        source="Ascend/mstt msfmktransplt README.",
    ),
)


@handles("string", "NPU401", contexts=("compare",))
def check_backend_comparison(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if context.kind != "compare" or not backend_spec(value):
        return
    npu = value.replace("nccl", "hccl")
    if any(type(other) is ast.Constant and other.value == npu for other in context.siblings):
        return  # `in ("nccl", "hccl")`: the NPU's backend is tested too
    fix = word_fix(checker, node, [("nccl", "hccl")], Applicability.UNSAFE, f"Compare with `{value.replace('nccl', 'hccl')}`")
    fixes, _ = styled(checker, fix, either_accelerator(checker, node, value, context.node), None)
    checker.report("NPU401", node, fixes=fixes, name=value)


def either_accelerator(checker: Checker, node: ast.AST, value: str, compare: ast.AST | None) -> Fix | None:
    """The portable form of `backend == "nccl"`: `backend in ("nccl", "hccl")`, true where
    either accelerator's collective backend runs and, as before, false for gloo on a CPU."""
    if value != "nccl" or type(compare) is not ast.Compare or len(compare.ops) != 1 \
            or type(compare.ops[0]) not in (ast.Eq, ast.NotEq):
        return None
    other = compare.comparators[0] if compare.left is node else compare.left
    if type(other) is ast.Constant:
        return None
    test = "in" if type(compare.ops[0]) is ast.Eq else "not in"
    text = f'{checker.source.segment(checker.range(other))} {test} ("nccl", "hccl")'
    return checker.fix(f'{PORTABLY}Compare with both accelerators\' backends: `{test} ("nccl", "hccl")`',
                       Applicability.UNSAFE, checker.replace(compare, text))


# --- attention semantics (docs/real-world-rules.md, item 7) ----------------------------------
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
        source=real_world_citation(4, "NPU407", "Ascend/pytorch#88; huggingface/transformers#41143, #48843; "
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
    code="NPU416", name="fused-attention-arguments", severity=Severity.WARNING, fix="never",
    message="`{api}`: {problem}.",
    doc=dict(
        what="Finds literal arguments of torch_npu's fused attention that give a wrong result or fail. "
             "`npu_fusion_attention`: no `scale=`; `sparse_mode=1`…`8` without `atten_mask`; `keep_prob=` given a "
             "value named as a dropout probability (`dropout_p`, `self.attn_drop`); an `input_layout` other than "
             "`BSH`, `SBH`, `BSND`, `BNSD`, `TND` (an error), and `TND` without `actual_seq_qlen` and `actual_seq_kvlen` (an error). "
             "`npu_fused_infer_attention_score`: no `scale=`; `sparse_mode=5`…`8` (an error); `sparse_mode=2`, `3` "
             "or `4` without `atten_mask`. Only what the call itself says: not values computed elsewhere, nor the "
             "head dimension, which is in the tensors' shapes (16-aligned for float16/bfloat16 in "
             "`npu_fused_infer_attention_score`), nor a call that passes `*args` or `**kwargs`.",
        why="Both default `scale` to 1.0, not 1/√head_dim as flash-attn and SDPA do: unscaled attention unless the "
            "query was scaled before. In `npu_fusion_attention`, \"when atten_mask is None, sparse_mode, "
            "pre_tockens and next_tockens have no effect: full computation\", so `sparse_mode=2`/`3` meant as causal "
            "attends to the future, silently; `keep_prob` is the probability to keep (1 − dropout), so a dropout "
            "rate there drops most values; the layout must be one of its five, and TND (varlen) needs the "
            "cumulative `actual_seq_qlen`/`actual_seq_kvlen`. In `npu_fused_infer_attention_score`, modes 5–8 "
            "\"are not implemented, do not use\", and modes 2, 3 and 4 need the 2048×2048 optimised mask: without "
            "it the call fails when the query has more than one token.",
        example='out = torch_npu.npu_fusion_attention(q, k, v, n, "BSND", sparse_mode=3)  # NPU416 twice\n\n'
                '# becomes\n\nmask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), diagonal=1)\n'
                'out = torch_npu.npu_fusion_attention(q, k, v, n, "BSND", atten_mask=mask, sparse_mode=3,\n'
                '                                     scale=1 / math.sqrt(q.shape[-1]))',
        fix="None automatic: the head dimension and the mask are the code's.",
        source="torch_npu-2.13.0 wheel (PyPI): `torch_npu/_op_plugin_docs.py` — `npu_fusion_attention` l.1600-1692 "
               "(signature: `scale=1.`, `keep_prob=1.`; `input_layout` l.1607; `sparse_mode` without `atten_mask` "
               "l.1689), `npu_fused_infer_attention_score` l.8053-8330 (`scale` default 1.0 l.8109, `sparse_mode` "
               "5–8 not implemented l.8117, modes 2–4 need the 2048×2048 mask l.8214).",
    ),
)

FUSION = "npu_fusion_attention"
INFER = "npu_fused_infer_attention_score"
# npu_fusion_attention's positional parameters (query, key, value, head_num, input_layout, pse,
# padding_mask, atten_mask, scale, keep_prob, …); npu_fused_infer_attention_score takes these by keyword.
FUSION_POSITIONS = {"input_layout": 4, "atten_mask": 7, "scale": 8, "keep_prob": 9}
FUSION_LAYOUTS = ("BSH", "SBH", "BSND", "BNSD", "TND")


@handles("reference", "NPU416", names=(FUSION, INFER))
def check_fused_attention(checker: Checker, ref: Reference) -> None:
    call = ref.call
    if type(call) is not ast.Call or call.func is not ref.node or \
            not ref.qualname.startswith(("torch_npu.", "torch.ops.npu.")):
        return
    if any(kw.arg is None for kw in call.keywords) or any(type(a) is ast.Starred for a in call.args):
        return  # `**options` may pass any of them
    api = ref.qualname.rpartition(".")[2]
    positions = FUSION_POSITIONS if api == FUSION else {}

    def given(name: str) -> ast.expr | None:
        return passed(call, name, positions.get(name))

    if given("scale") is None:
        checker.report("NPU416", call.func, api=api, problem="no `scale=`, so it is 1.0, not 1/√head_dim as in "
                       "flash-attn and SDPA: attention is unscaled unless the query was scaled before; pass "
                       "`scale=1 / math.sqrt(head_dim)`")
    mode_node = given("sparse_mode")
    mode = constant(mode_node)
    if type(mode) is int and mode_node is not None:
        if api == INFER and 5 <= mode <= 8:
            checker.report("NPU416", mode_node, api=api, problem=f"`sparse_mode={mode}` is not implemented (modes "
                           "5–8: \"do not use\"); it supports 0–4 and 9", severity=Severity.ERROR)
        elif given("atten_mask") is None and (1 <= mode <= 8 if api == FUSION else 2 <= mode <= 4):
            effect = ("is ignored: the attention is full (not causal); pass the mask the mode needs (for the causal "
                      "modes the 2048×2048 `torch.triu(torch.ones(2048, 2048, dtype=torch.bool), diagonal=1)`)"
                      if api == FUSION else "fails when the query has more than one token; pass the 2048×2048 mask "
                      "the mode needs")
            checker.report("NPU416", mode_node, api=api, problem=f"`sparse_mode={mode}` without `atten_mask` {effect}")
    if api == FUSION:
        check_fusion_layout(checker, call, given)


def check_fusion_layout(checker: Checker, call: ast.Call, given) -> None:
    """npu_fusion_attention's `keep_prob` and `input_layout`."""
    keep = given("keep_prob")
    if keep is not None and type(keep) in (ast.Name, ast.Attribute) and "drop" in last_name(keep).lower():
        text = checker.source.segment(checker.range(keep))
        checker.report("NPU416", keep, api=FUSION, problem=f"`keep_prob={text}` is a dropout rate, but keep_prob "
                       f"is the probability to keep (1 − dropout): most values are dropped; pass `keep_prob=1 - {text}`")
    layout_node = given("input_layout")
    layout = constant(layout_node)
    if type(layout) is not str or layout_node is None:
        return
    if layout not in FUSION_LAYOUTS:
        checker.report("NPU416", layout_node, api=FUSION, problem=f"`input_layout={layout!r}` is none of "
                       f"{', '.join(FUSION_LAYOUTS)}", severity=Severity.ERROR)
    elif layout == "TND" and (given("actual_seq_qlen") is None or given("actual_seq_kvlen") is None):
        checker.report("NPU416", layout_node, api=FUSION, problem="`input_layout='TND'` (varlen) needs "
                       "`actual_seq_qlen` and `actual_seq_kvlen` (cumulative lengths, no leading 0)",
                       severity=Severity.ERROR)


rule(
    code="NPU417", name="cuda-oom-text", severity=Severity.WARNING, fix="sometimes",
    message="`{name}` is CUDA's out-of-memory text: on the NPU the message reads \"NPU out of memory\", so this test "
            "never matches there.",
    doc=dict(
        what="Finds out-of-memory handling that matches CUDA's message: `if \"CUDA out of memory\" in str(e):`, "
             "`str(e).startswith(\"CUDA out of memory\")`, `re.search(\"CUDA error: out of memory\", msg)` (in any "
             "case), and the texts a loop or a comprehension tries in turn (`any(s in str(e) for s in [\"CUDA out "
             "of memory\", \"CUDA error: out of memory\"])`). Not in an `assert`, which checks text a test "
             "recorded. Info where an `or` asks `isinstance(e, torch.cuda.OutOfMemoryError)` beside the text: "
             "that class is the NPU's error too, so the whole test holds there.",
        why="torch_npu's allocator raises the same exception class as CUDA's, `torch.OutOfMemoryError` (a "
            "`RuntimeError`; `torch.cuda.OutOfMemoryError` is that class), with the text \"NPU out of memory. Tried "
            "to allocate …\". A test of the text for CUDA's words is never true on the NPU: the batch-size back-off "
            "or cache clearing it guards never runs, and the error propagates.",
        example='except RuntimeError as e:\n    if "CUDA out of memory" in str(e):  # NPU417\n        ...\n\n'
                '# becomes\n\nexcept torch.OutOfMemoryError:\n    ...',
        fix="Unsafe, where the text is searched for anywhere (`in`, `find`, `re.search`, a loop's `s in str(e)`): "
            "matches `out of memory`, which both messages contain. None where it is anchored (`startswith`, "
            "`re.match`) or a loop's test is not read. Catching "
            "`torch.OutOfMemoryError` is the better change.",
        source="torch_npu-2.13.0 wheel (PyPI): `torch_npu/lib/libtorch_npu.so` (strings \"NPU out of memory. Tried to "
               "allocate \", \"NPU out of memory. device id: \"; it constructs `c10::OutOfMemoryError`); torch 2.13 "
               "(`torch.OutOfMemoryError` subclasses `RuntimeError`, `torch.cuda.OutOfMemoryError is "
               "torch.OutOfMemoryError`).",
    ),
)

CUDA_OOM = re.compile(r"cuda(?: error:)? out of memory", re.IGNORECASE)
# str methods and `re` functions that look for the text anywhere (an unsafe fix can shorten it), and
# those that anchor it (no fix: "NPU out of memory" starts otherwise)
SEARCHES = frozenset({"find", "index", "count", "search", "findall"})
ANCHORED = frozenset({"startswith", "endswith", "match", "fullmatch"})


@handles("string", "NPU417", contexts=("arg", "compare", "value"))
def check_oom_text(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    """The literal is the text searched for: an operand of `in`, what a str method or `re`
    function looks for, or one of the texts a loop tries in turn."""
    if (context.kind == "value" and not context.siblings) or "out of memory" not in value.lower() \
            or type(node) is not ast.Constant:
        return
    match = CUDA_OOM.search(value)
    if match is None:
        return
    call = context.call if context.kind == "arg" else None
    if call is not None and last_name(call.func) in SEARCHES | ANCHORED:
        report_oom_text(checker, node, match, searched=last_name(call.func) not in ANCHORED)
    elif context.kind == "compare" and type(compare := context.node) is ast.Compare and compare.left is node \
            and any(type(op) in (ast.In, ast.NotIn) for op in compare.ops):
        if not checker.source.line(checker.range(compare).start_line).lstrip().startswith("assert"):
            report_oom_text(checker, node, match, searched=True, beside_class=beside_oom_class(checker, compare))
        # (an assert: a test that a recorded CUDA error text is kept, not handling of one)
    elif context.siblings:
        tried = _tried_texts(checker, node)
        if tried is not None:
            report_oom_text(checker, node, match, searched=tried)


# the class torch_npu raises when the NPU runs out of memory, under both its names (torch 2.13:
# `torch.cuda.OutOfMemoryError is torch.OutOfMemoryError`, run)
OOM_CLASSES = frozenset({"torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError"})
CLASS_BESIDE = (" (But the `or` beside it asks `isinstance(..., {name})` too: that class is `torch.OutOfMemoryError`, "
                "which torch_npu raises when the NPU runs out of memory, so the whole test holds there.)")


def beside_oom_class(checker: Checker, compare: ast.Compare) -> str | None:
    """`"CUDA out of memory" in str(e) or isinstance(e, torch.cuda.OutOfMemoryError)`: the class's
    name as written, where an `or` holds the text's test beside such an isinstance() test."""
    for root in checker.events.roots:
        for node in ast.walk(root):
            if type(node) is ast.BoolOp and type(node.op) is ast.Or and any(v is compare for v in node.values):
                for value in node.values:
                    if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "isinstance" \
                            and len(value.args) == 2 and checker.qualname(value.args[1], checker.module.scope) in OOM_CLASSES:
                        return checker.source.segment(checker.range(value.args[1]))
    return None


def report_oom_text(checker: Checker, node: ast.AST, match: re.Match[str], searched: bool,
                    beside_class: str | None = None) -> None:
    """NPU417 on `node`, with the unsafe fix where the text is searched for anywhere; info where
    an isinstance() test beside it catches the NPU's error already."""
    where = checker.range(node)
    source = checker.source.segment(where)
    fixes: tuple[Fix, ...] = ()
    if match.group() in source and searched:  # written as it reads (no escapes in the way)
        fixes = (checker.fix("Match `out of memory`", Applicability.UNSAFE,
                             checker.replace(where, source.replace(match.group(), "out of memory", 1))),)
    if beside_class is None:
        checker.report("NPU417", node, fixes=fixes, name=match.group())
    else:
        checker.report("NPU417", node, checker.rules["NPU417"].message.format(name=match.group())
                       + CLASS_BESIDE.format(name=beside_class), fixes=fixes, severity=Severity.INFO)


def _tried_texts(checker: Checker, node: ast.AST) -> bool | None:
    """For a string in a list, tuple or set of strings that a `for` or a comprehension iterates:
    whether the loop searches for each in a text (`s in str(e)`, `s` the loop's name); None when
    the display is not iterated so (a constant kept for later, a call's argument: not followed)."""
    for root in checker.events.roots:
        for owner in ast.walk(root):
            loops: Sequence[ast.For | ast.AsyncFor | ast.comprehension]
            if isinstance(owner, (ast.For, ast.AsyncFor)):
                loops = [owner]
            elif isinstance(owner, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
                loops = owner.generators
            else:
                continue
            for loop in loops:
                display, target = loop.iter, loop.target
                if isinstance(display, (ast.List, ast.Tuple, ast.Set)) and any(e is node for e in display.elts):
                    if not all(type(e) is ast.Constant and type(e.value) is str for e in display.elts):
                        return None
                    return isinstance(target, ast.Name) and any(
                        isinstance(n, ast.Compare) and isinstance(n.left, ast.Name) and n.left.id == target.id
                        and type(n.ops[0]) is ast.In for n in ast.walk(owner))
    return None


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
        source=real_world_citation(27, "NPU413", "ostris/ai-toolkit#933 (analog: ROCm/XPU/MPS fail when a CUDA backend is forced); "
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


# --- distributed (item 5) --------------------------------------------------------------------
rule(
    code="NPU409", name="hccl-collective-gap", severity=Severity.WARNING, fix="never", table=REAL_WORLD_TABLE,
    message="`{name}` is not a native HCCL collective.",
    doc=dict(
        what="Finds `torch.distributed.scatter`; `torch.distributed.gather` and `ReduceOp.AVG` are info: they "
             "work, as an all_gather and as a sum divided by the group size. Not `gather_object`: torch_npu "
             "replaces it with its own, which pickles the objects and gathers the bytes, and it works on HCCL.",
        why="HCCL has no gather: torch_npu 2.13.0 runs `dist.gather` as an all_gather after broadcasting the "
            "shapes (it warns \"HCCL doesn't support gather at the moment\"), so every rank allocates and receives "
            "the whole gather list. HCCL has no AVG either: torch_npu hands it a sum and divides (an older torch_npu "
            "may reject it). Scatter support is limited.",
        example="dist.scatter(chunk, chunks, src=0)  # NPU409\n\n# on the NPU\n\n"
                "dist.broadcast(full, src=0)\nchunk = full.chunk(dist.get_world_size())[dist.get_rank()]",
        fix="None automatic.",
        source=real_world_citation(10, "NPU409", "sgl-project/sgl-kernel-npu#669; vllm-project/vllm-ascend#541; Ascend/pytorch#54; "
                                     "DeepLink-org/ditorch#74; Ascend/pytorch#3") +
        "; torch_npu-2.13.0 wheel: torch_npu/distributed/distributed_c10d.py (gather via allgather, 137-251; "
        "gather_object pickled, then gathered, 254-317), torch_npu/_init/patches/distributed_patches.py (both put "
        "in place of torch's, 29-42).",
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
        source=real_world_citation(11, "NPU410", "modelscope/ms-swift#8281; vllm-project/afd-plugin#229; InternLM/lmdeploy#2482; "
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


@handles("string", "NPU410")
def note_hccl_timeout(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if value in HCCL_TIMEOUTS:
        checker.note("hccl-timeout", node)


@handles("module", "NPU410")
def check_hccl_timeout(checker: Checker, facts: dict) -> None:
    if "pg-timeout" in facts and "hccl-timeout" not in facts:
        checker.report("NPU410", facts["pg-timeout"], name="timeout")


# --- float16 saturation mode (chip_features) -------------------------------------------------
rule(
    code="NPU408", name="fp16-saturation", severity=Severity.WARNING, fix="never", table=CHIP_TABLE,
    message="`{name}` relies on IEEE inf/nan, but {chips} run float16 in saturation mode.",
    doc=dict(
        what="Finds inf/nan checks (`torch.isnan`, `isinf`, `isfinite`, `nan_to_num`, `x.isnan()`) and inf "
             "sentinels (`float(\"-inf\")`, `torch.inf`, `math.inf`) when the configured chip runs float16 in "
             "saturation mode only (910A, 310P). " + chip_doc("saturation"),
        why="In saturation mode an overflow gives ±65504 instead of inf and NaN becomes 0: overflow checks "
            "never fire, and a `-inf` attention mask in float16 is a finite number, so masked positions still "
            "get weight.",
        example='scores = scores.masked_fill(mask, float("-inf"))  # NPU408 on 910A\n\n'
                "scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)",
        fix="None automatic.",
        source=real_world_citation(9, "NPU408", "hiascend INF_NAN_MODE_ENABLE page; open-mmlab/mmdetection#9267") +
        "; `FACTS.md` §6 inf/nan handling.",
    ),
)


# qualified name → whether it is reported only when called (`torch.isnan(x)`; `torch.inf` always)
SATURATION_NAMES = {**dict.fromkeys(INF_CONSTANTS, False), **dict.fromkeys(INF_CHECKS, True)}


@handles("reference", "NPU408", names=frozenset(name.rpartition(".")[2] for name in SATURATION_NAMES))
def check_inf_reference(checker: Checker, ref: Reference) -> None:
    only_called = SATURATION_NAMES.get(ref.qualname)
    if only_called is not None and (ref.call is not None or not only_called):
        report_chip(checker, "NPU408", "saturation", ref.node, ref.qualname)


@handles("call", "NPU408", when=lacking("saturation"))
def check_inf_call(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    func = call.func
    if type(func) is ast.Attribute and func.attr in INF_METHODS and qualname is None and not call.args:
        report_chip(checker, "NPU408", "saturation", func, f".{func.attr}()")
    elif type(func) is ast.Name and func.id == "float" and qualname is None and len(call.args) == 1:
        arg = call.args[0]
        if type(arg) is ast.Constant and type(arg.value) is str and arg.value.strip().lower() in ("inf", "-inf",
                                                                                                  "nan", "+inf"):
            report_chip(checker, "NPU408", "saturation", call, f'float("{arg.value}")')


# --- dispatch of the rules above from real migrations: one handler per event kind ------------
CALLEE_CHECKS = {
    "torch.distributed.init_process_group": note_process_group_timeout,
    "torch.nn.functional.scaled_dot_product_attention": check_attention_mask,
    "torch_npu.npu_fusion_attention": check_attention_mask,
    "torch.nn.attention.sdpa_kernel": check_sdpa_kernel,
}


@handles("reference", "NPU407", "NPU410", "NPU413")
def on_reference(checker: Checker, ref: Reference) -> None:
    call = ref.call
    if type(call) is not ast.Call or call.func is not ref.node:
        return
    qualname = ref.qualname
    check = CALLEE_CHECKS.get(qualname)
    if check is not None:
        check(checker, call, qualname)
    if check is not note_process_group_timeout and any(kw.arg == "ddp_timeout" for kw in call.keywords):
        note_process_group_timeout(checker, call, qualname)
