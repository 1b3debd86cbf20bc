"""NPU4xx: NPU semantic traps — code that runs on the NPU but silently does something else."""

from __future__ import annotations

import ast

from ..engine.checker import Checker
from ..engine.model import Applicability, Severity
from ..engine.walk import StringContext
from ..engine.registry import TableRef, handles, rule
from .table import TRANSFER_NOTE, backend_spec, word_fix

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
        source=TRANSFER_NOTE + "; Ascend/mstt msfmktransplt README (change backend checks by hand).",
    ),
)

rule(
    code="NPU402", name="device-capability", severity=Severity.WARNING, fix="sometimes", table=CUDA_TABLE,
    message="`{name}` describes a CUDA compute capability.",
    doc=dict(
        what="Finds `torch.cuda.get_device_capability` and `torch.cuda.get_device_properties`.",
        why="On the NPU, `torch.npu.get_device_capability` returns a compatibility value set by "
            "`TORCH_NPU_DEVICE_CAPABILITY`, not a property of the hardware. Code that branches on the CUDA "
            "compute capability (`>= (8, 0)` for bf16 or flash attention) takes a meaningless branch.",
        example="if torch.cuda.get_device_capability()[0] >= 8: ...  # NPU402\n\n"
                "# test the feature instead\n\nif torch.npu.is_bf16_supported(): ...",
        fix="Unsafe: renames the call to its `torch.npu` counterpart so it runs; the branch still needs a person.",
        source="Ascend native API support list, torch-cuda page (限制与说明); " + "torch_npu `transfer_to_npu`.",
    ),
)

rule(
    code="NPU403", name="data-parallel", severity=Severity.ERROR, fix="never", table=CUDA_TABLE,
    on_type_only=False,
    message="`{name}` is not supported on the NPU.",
    doc=dict(
        what="Finds `torch.nn.DataParallel` and `torch.nn.parallel.data_parallel`.",
        why="Single-process multi-device DataParallel is marked unsupported (✘) in Ascend's support list.",
        example="model = torch.nn.DataParallel(model)\n\n# use one process per device\n\n"
                'dist.init_process_group("hccl")\nmodel = DistributedDataParallel(model, device_ids=[local_rank])',
        fix="None automatic: switching to DistributedDataParallel changes how the script is launched.",
        source="Ascend native API support list (torch-nn page), third_party_replacements.tsv.",
    ),
)

rule(
    code="NPU404", name="jit-script-disabled", severity=Severity.WARNING, fix="never", table=CUDA_TABLE,
    message="`{name}` does nothing under `transfer_to_npu`.",
    doc=dict(
        what="Finds `torch.jit.script` and `torch.jit.script_method`.",
        why="`transfer_to_npu`, the recommended migration path, replaces `torch.jit.script` with a function "
            "that returns its argument unchanged: the scripted model is plain eager Python on the NPU, and "
            "anything that relied on TorchScript (saving with `torch.jit.save`, scripting errors) changes.",
        example="model = torch.jit.script(model)  # eager on the NPU under transfer_to_npu",
        fix="None automatic: use `torch.compile` (supported since TorchNPU 7.3.0) or keep eager mode.",
        source=TRANSFER_NOTE,
    ),
)

rule(
    code="NPU405", name="float64-downcast", severity=Severity.WARNING, fix="never",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api", "method")),
    message="`{name}` means float64, which the NPU silently replaces with float32.",
    doc=dict(
        what="Finds `torch.float64`, `torch.double` and `.double()`.",
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


@handles("string", "NPU401")
def check_backend_comparison(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if context.kind != "compare" or not backend_spec(value):
        return
    fix = word_fix(checker, node, [("nccl", "hccl")], Applicability.UNSAFE, f"Compare with `{value.replace('nccl', 'hccl')}`")
    checker.report("NPU401", node, fixes=(fix,) if fix else (), name=value)
