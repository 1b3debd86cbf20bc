"""The upstream sources that rule pages of several families cite (a rule's `Doc.source`),
each written once."""

from __future__ import annotations

TRANSFER_TO_NPU = "torch_npu `transfer_to_npu` (torch_npu-2.14.0 wheel: torch_npu/contrib/transfer_to_npu.py)"
REAL_WORLD_FAILURES = "mappings/upstream/torch_npu/real_world_failures.md"
THIRD_PARTY_REPLACEMENTS = ("shared facts: third_party_replacements.tsv (torch_npu wheel, Ascend/op-plugin docs, "
                            "Ascend/apex)")
ASCEND_TOOLS = "(via mappings/upstream/ascend_tools, Ascend/mstt @99c2e0f99)"
MSPROBE = "msprobe (mindstudio-probe 26.2.0)"
BITSANDBYTES_WHEEL = ("bitsandbytes-0.50.2 wheel (PyPI): `__init__.py` supported_torch_devices lists \"npu\"; "
                      "`backends/default/ops.py` (pure-PyTorch kernels of the int8 and 4-bit ops); "
                      "optimizer_update_8bit_blockwise has cuda, cpu and xpu kernels only; paged buffers need "
                      "`cget_managed_ptr`, in the CUDA libraries only")
TORCH_NPU_INDUCTOR = ("torch_npu-2.13.0 wheel (PyPI): `torch_npu/_inductor/__init__.py:136-141, 213-222` (inductor "
                      "registered for `npu` when Triton is importable, else the warning \"triton-ascend is not "
                      "installed\"), `:52-53` (TORCHINDUCTOR_NPU_BACKEND); `torch_npu-2.13.0.dist-info/"
                      "entry_points.txt` [torch_dynamo_backends] `npu`, `npugraph_ex`, `npugraphs`")


def real_world_citation(number: int, code: str, evidence: str = "") -> str:
    """Entry `number` of the real-world failures, headed by rule `code`, and the evidence cited from it."""
    cited = f"{REAL_WORLD_FAILURES} #{number} ({code})"
    return f"{cited}: {evidence}" if evidence else cited
