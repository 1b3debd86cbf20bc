"""NPU3xx: third-party CUDA libraries and custom kernels — apex, flash_attn, xformers,
bitsandbytes, triton, CUDA extensions."""

from __future__ import annotations

import ast

from ..engine.checker import Checker, Reference
from ..engine.model import Severity
from ..engine.walk import StringContext
from ..engine.registry import TableRef, handles, rule
from .table import is_prose

THIRD_PARTY = TableRef("mappings/torch_npu/thirdparty.toml", ("api",))
REPLACEMENTS = "shared facts: third_party_replacements.tsv (torch_npu wheel, Ascend/op-plugin docs, Ascend/apex)"

rule(
    code="NPU301", name="apex", severity=Severity.ERROR, fix="sometimes", table=THIRD_PARTY,
    message="`{name}` is NVIDIA apex, built on CUDA kernels.",
    doc=dict(
        what="Finds imports and uses of NVIDIA apex (`apex.amp`, `apex.optimizers.Fused*`, "
             "`apex.normalization`, `amp_C`).",
        why="apex's fused kernels are CUDA code. torch_npu ships fused optimizers "
            "(`torch_npu.optim.NpuFused*`) and native AMP (`torch.npu.amp`).",
        example="from apex.optimizers import FusedAdam\n\n# becomes\n\nfrom torch_npu.optim import NpuFusedAdam as FusedAdam",
        fix="Unsafe for the fused optimizers and `FusedLayerNorm` (same role, check the arguments); the message "
            "says what replaces `apex.amp`.",
        source=REPLACEMENTS,
    ),
)

rule(
    code="NPU302", name="flash-attn", severity=Severity.ERROR, fix="never", table=THIRD_PARTY,
    message="`{name}` is the CUDA flash-attention library.",
    doc=dict(
        what="Finds imports and uses of `flash_attn`.",
        why="flash-attention's kernels are CUDA-only. On the NPU the fused attention is "
            "`torch_npu.npu_fusion_attention`, with a different signature: `head_num`, `input_layout`, "
            "`keep_prob = 1 - dropout_p`, and a 2048×2048 mask plus `sparse_mode` for causal attention.",
        example="out = flash_attn_func(q, k, v, dropout_p, causal=True)\n\n# on the NPU\n\n"
                "out = torch_npu.npu_fusion_attention(q, k, v, head_num=q.shape[2], input_layout=\"BSND\",\n"
                "    keep_prob=1 - dropout_p, atten_mask=mask, sparse_mode=3)[0]",
        fix="Display-only: the message gives the call shape; the layout and mask need a person.",
        source=REPLACEMENTS + "; huggingface/transformers integrations/npu_flash_attention.py.",
    ),
)

rule(
    code="NPU303", name="xformers", severity=Severity.ERROR, fix="never", table=THIRD_PARTY,
    message="`{name}` is xformers, built on CUDA kernels.",
    doc=dict(
        what="Finds imports and uses of `xformers`.",
        why="xformers' memory-efficient attention is CUDA code; there is no official NPU mapping.",
        example="from xformers.ops import memory_efficient_attention  # NPU303",
        fix="None automatic: port to `torch.nn.functional.scaled_dot_product_attention` or "
            "`torch_npu.npu_fusion_attention`.",
        source=REPLACEMENTS,
    ),
)

rule(
    code="NPU304", name="bitsandbytes", severity=Severity.WARNING, fix="never", table=THIRD_PARTY,
    message="`{name}` is bitsandbytes, whose NPU support is partial.",
    doc=dict(
        what="Finds imports and uses of `bitsandbytes`.",
        why="bitsandbytes has an Ascend NPU backend for NF4 quantisation only; the int8 paths are limited.",
        example="import bitsandbytes as bnb  # NPU304",
        fix="None automatic.",
        source=REPLACEMENTS,
    ),
)

rule(
    code="NPU305", name="triton", severity=Severity.ERROR, fix="never", table=THIRD_PARTY,
    message="`{name}` is Triton, whose kernels target NVIDIA GPUs.",
    doc=dict(
        what="Finds imports and uses of `triton`.",
        why="Community Triton generates CUDA code. On Ascend A2/A3 use `triton-ascend` "
            "(`pip install triton-ascend`, which replaces the `triton` package); kernels may need tuning.",
        example="import triton\n\n@triton.jit\ndef kernel(...): ...  # NPU305",
        fix="None automatic.",
        source=REPLACEMENTS,
    ),
)

rule(
    code="NPU306", name="cuda-extension", severity=Severity.ERROR, fix="never", table=THIRD_PARTY,
    message="`{name}` builds CUDA code.",
    doc=dict(
        what="Finds CUDA extensions: `torch.utils.cpp_extension.CUDAExtension`, "
             "`load_inline(cuda_sources=...)`, and `.cu`/`.cuh` source files named in the code.",
        why="CUDA kernels do not run on the NPU. torch_npu's `NpuExtension` builds C++ only; custom "
            "operators go through OpPlugin/aclnn (AscendC).",
        example='CUDAExtension("ops", ["ops.cpp", "kernel.cu"])  # NPU306 twice',
        fix="None automatic: the kernels must be rewritten.",
        source=REPLACEMENTS,
    ),
)


@handles("string", "NPU306")
def check_cuda_source(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    # A file name, not a sentence that happens to end in ".cu".
    if not is_prose(context) and value.endswith((".cu", ".cuh")) and " " not in value and type(node) is ast.Constant:
        checker.report("NPU306", node, name=value)


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
               "`torch._register_device_module(\"npu\", torch_npu.npu)`). " + REPLACEMENTS + ".",
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
    checker.report("NPU308", ref.node, message, name=qualname, op=f"{parts[2]}::{parts[3]}",
                   place=index.where(verdict.cuda), severity=Severity.WARNING if verdict.cpu else None)
