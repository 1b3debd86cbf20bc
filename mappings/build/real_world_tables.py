"""Build mappings/torch_npu/realworld.toml: the lookups behind the rules for failures real
migrations hit (mappings/upstream/torch_npu/real_world_failures.md).

Called from torch_npu_tables.build. Every row cites its entry of the facts file (number,
proposed code and the entry's evidence line) or the source it was checked against; the
builder fails when an entry it cites is missing or no longer says what the row relies on.
"""

from __future__ import annotations

import re
from pathlib import Path

from torch_npu_tables import API_KEYS, api, ordered, write_toml

FACTS = "real_world_failures.md"
WHEEL_213 = "torch_npu-2.13.0 wheel (PyPI)"
INDUCTOR_SOURCE = (f"{WHEEL_213}:torch_npu/_inductor/__init__.py:136-141 (without Triton it warns \"triton-ascend is "
                   "not installed. Please install it first.\" and registers nothing), 213-222 "
                   "(register_backend_for_device(\"npu\", NPUCombinedScheduling, NPUPythonWrapperCodeGen, "
                   "CppWrapperNpu)), 52-53 (TORCHINDUCTOR_NPU_BACKEND)")
ENTRY = re.compile(r"^### (?P<number>\d+)\. (?P<code>NPU\d{3}) — (?P<title>.+)$", re.M)


class Facts:
    """The numbered entries of real_world_failures.md, looked up by proposed code."""

    def __init__(self, path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        self.entries: dict[str, tuple[str, str]] = {}
        matches = list(ENTRY.finditer(text))
        for match, following in zip(matches, matches[1:] + [None]):
            body = text[match.end():following.start() if following else len(text)]
            self.entries[match["code"]] = (match["number"], body)

    def source(self, code: str, *needles: str) -> str:
        """`real_world_failures.md #N (CODE): <evidence>`, after checking the entry mentions each needle."""
        if code not in self.entries:
            raise LookupError(f"{FACTS}: no entry {code}")
        number, body = self.entries[code]
        for needle in needles:
            if needle not in body:
                raise LookupError(f"{FACTS} {code}: the entry no longer mentions {needle!r}")
        evidence = re.search(r"\*\*Evidence:\*\* (.+)", body)
        if evidence is None:
            raise LookupError(f"{FACTS} {code}: no evidence line")
        return f"mappings/upstream/torch_npu/{FACTS} #{number} ({code}): {evidence[1].strip()}"


def api_rows(facts: Facts) -> list[dict]:
    rows: list[dict] = []
    apex_sync = ("NVIDIA/apex:apex/parallel/__init__.py (convert_syncbn_model swaps every _BatchNorm for "
                 "apex's SyncBatchNorm); torch 2.13 torch.nn.SyncBatchNorm.convert_sync_batchnorm (same job); "
                 "Ascend/pytorch@9e73e708a:docs/zh/api/native_api/pytorch_2-13-0/torch-nn.md (SyncBatchNorm ✔)")
    rows.append(api("apex.parallel.convert_syncbn_model", "NPU301", apex_sync,
                    replacement="torch.nn.SyncBatchNorm.convert_sync_batchnorm", fix="display",
                    note="torch.nn.SyncBatchNorm.convert_sync_batchnorm(module) does the same on the NPU (HCCL)."))
    rows.append(api("apex.parallel.SyncBatchNorm", "NPU301", apex_sync,
                    replacement="torch.nn.SyncBatchNorm", fix="display",
                    note="torch.nn.SyncBatchNorm is supported on the NPU; apex's fused one needs its CUDA extension."))
    rows.append(api("apex.parallel.DistributedDataParallel", "NPU301",
                    "NVIDIA/apex:apex/parallel/distributed.py; torch 2.13 torch.nn.parallel.DistributedDataParallel",
                    replacement="torch.nn.parallel.DistributedDataParallel", fix="display",
                    note="Use torch's DistributedDataParallel (backend hccl); the constructor arguments differ."))

    # NPU311: GPU-only quantisation packages and configs
    quant = facts.source("NPU311", "AutoAWQ", "auto_gptq", "GPTQConfig")
    for name, note in (
        ("awq", "AutoAWQ's kernels are CUDA/HIP only. On the NPU quantise with msModelSlim (W8A8/W4A8)."),
        ("auto_gptq", "AutoGPTQ's kernels are CUDA only. On the NPU quantise with msModelSlim (W8A8/W4A8)."),
        ("transformers.AwqConfig", "AWQ needs CUDA kernels (autoawq). On the NPU quantise with msModelSlim."),
        ("transformers.GPTQConfig", "GPTQ kernels are CUDA; vllm-ascend runs GPTQ only with desc_act=False and "
                                    "no MoE. Prefer msModelSlim W8A8 on the NPU."),
    ):
        rows.append(api(name, "NPU311", quant, prefix=name.islower() or None, note=note))

    # NPU313 reports no DeepSpeed optimizer: DeepSpeed master builds FusedAdam, FusedLamb and FusedLion on
    # its NPU accelerator (op_builder/npu/__init__.py@0c9b0f62, fused_lion.py@b61f2c4f, fused_adam.py@61bdd6ca),
    # and which release first ships each is not known.

    # NPU409: HCCL collective gaps
    hccl = facts.source("NPU409", "dist.gather", "ReduceOp.AVG")
    # torch.distributed.gather_object is no row: torch_npu puts its own in its place
    # (_init/patches/distributed_patches.py:37-42 -> distributed_c10d.py:254-317), which pickles each object
    # to a byte tensor and gathers those through the gather below: it works on HCCL, and the bytes of a
    # few objects reaching every rank change nothing a project must.
    gather_src = (f"{WHEEL_213}:torch_npu/_init/patches/distributed_patches.py:29-34 (torch.distributed.gather is "
                  "torch_npu's _gather), torch_npu/distributed/distributed_c10d.py:137-251 (on NPU tensors: the "
                  "shapes broadcast, then an allgather into a full gather_list on every rank, warning \"HCCL "
                  "doesn't support gather at the moment. Implemented with allgather instead.\" at 201, 229; a "
                  "real gather only with torch_npu's compatible implementation enabled on Ascend910B1-910B4_1 and "
                  f"Ascend910_9362-9392, 183-189); {hccl}")
    rows.append(api("torch.distributed.gather", "NPU409", gather_src, severity="info",
                    note="HCCL has no gather: torch_npu runs it as an all_gather, so every rank allocates and "
                         "receives the whole gather_list (world size × the tensor). It works; mind the memory of "
                         "large tensors (a reduce, where one does the job, moves less)."))
    rows.append(api("torch.distributed.scatter", "NPU409",
                    f"{WHEEL_213}:torch_npu/lib/libtorch_npu.so (message \"does not support scatter\"); {hccl}",
                    note="HCCL's scatter support is limited: broadcast (or all_gather) and slice instead."))
    # HCCL has no AVG; torch_npu's getHcclReduceOp hands it to HCCL as a sum and divides after. The wheel holds
    # the revision with that branch: the messages of the checks after it ("Cannot use ReduceOp.", "Unhandled
    # ReduceOp"), which the revisions without it lack. Which release first had it is not known.
    avg_src = ("Ascend/pytorch torch_npu/csrc/distributed/ProcessGroupHCCL.cpp (getHcclReduceOp: ReduceOp::AVG "
               "becomes HCCL_REDUCE_SUM, \"HCCL does not support ReduceOp::AVG yet, PTA supports it by summing "
               f"first, then dividing\"); {WHEEL_213}:torch_npu/lib/libtorch_npu.so (that revision's messages in "
               f"getHcclReduceOp: \"Cannot use ReduceOp.\", \"Unhandled ReduceOp\"); {hccl}")
    rows.append(api("torch.distributed.ReduceOp.AVG", "NPU409", avg_src, severity="info",
                    note="HCCL has no AVG reduction: torch_npu reduces with SUM and divides by the group size, so "
                         "it works. An older torch_npu may reject it (DeepLink-org/ditorch#74): there, reduce with "
                         "SUM and divide by the world size (FSDP2: set_force_sum_reduction_for_comms)."))

    # NPU118: inductor knobs
    rows.append(api("torch._inductor.config", "NPU118", INDUCTOR_SOURCE, prefix=True,
                    note="On the NPU inductor runs only with triton-ascend installed (torch_npu then registers its "
                         "NPU code generation); check that a setting written for CUDA (CUDA graphs, Triton "
                         "autotuning) applies there."))

    # NPU124: GPU query tools
    tools = facts.source("NPU124", "pynvml", "GPUtil", "CUDA_HOME")
    for name, note in (
        ("pynvml", "NVML exists only with NVIDIA drivers. On the NPU use npu-smi, torch.npu.mem_get_info() and "
                   "torch.npu.get_device_name()."),
        ("GPUtil", "GPUtil parses nvidia-smi. On the NPU use npu-smi or torch.npu.mem_get_info()."),
        ("torch.utils.cpp_extension.CUDA_HOME", "None on an NPU host. The CANN toolkit is at ASCEND_HOME_PATH / "
                                                "ASCEND_TOOLKIT_HOME."),
    ):
        rows.append(api(name, "NPU124", tools, prefix=name.islower() or None, note=note))

    # NPU126: CUDA version probes
    rows.append(api("torch.version.cuda", "NPU126", tools + "; torch 2.13.0+cpu: torch.version.cuda is None",
                    note="None on an NPU host (torch is a CPU build there): a test of it takes the non-CUDA branch "
                         "and parsing it fails. Test torch.npu.is_available() or read torch_npu.__version__."))
    return [ordered(r, API_KEYS) for r in rows]


def env_rows(facts: Facts) -> list[dict]:
    tools = facts.source("NPU124", "CUDA_HOME", "ASCEND_HOME_PATH")
    note = "Not set on an NPU host. The CANN toolkit is at ASCEND_HOME_PATH (or ASCEND_TOOLKIT_HOME)."
    return [{"name": name, "rule": "NPU124", "note": note, "source": tools} for name in ("CUDA_HOME", "CUDA_PATH")]


def build(d: Path, out_dir: Path) -> Path:
    facts = Facts(d / FACTS)
    apis, env = api_rows(facts), env_rows(facts)
    return write_toml(
        out_dir / "realworld.toml",
        {
            "title": "Failures real CUDA -> Ascend migrations hit: third-party libraries, distributed, host tools",
            "sources": [f"mappings/upstream/torch_npu/{FACTS}", "torch_npu-2.13.0 wheel (PyPI)", "NVIDIA/apex"],
        },
        [("api", apis), ("env", env)],
    )
