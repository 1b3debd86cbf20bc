"""platform/launch.toml: what shell launch scripts set and run that torch_npu, HCCL or an
Ascend host reads differently. The CUDA/NCCL variables torch_npu has a counterpart for are
torch_npu/env.toml's (the same rows for Python and scripts); these rows add the ones only
scripts set, the variables with no counterpart, values that select CUDA, and NVIDIA's host
commands. Every fact was read in a package's own files (the torch_npu 2.13.0 wheel, torch
2.13), in a public repository at a commit, or in a plain statement of Ascend's documents."""

from __future__ import annotations

WHEEL = "torch_npu-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"
NO_NCCL = (f"{WHEEL}: no NCCL_* name in any torch_npu/*.py or in the strings of torch_npu/lib/libtorch_npu.so "
           "(the torch_npu_run console script and ProcessGroupHCCL read HCCL_* names only)")
NPU_SMI = "hiascend npu-smi reference (Atlas 200I A2 25.2.0)"

# First match wins: exact names, then the prefix rows in order.
VARIABLES = [
    {"name": "NCCL_ASYNC_ERROR_HANDLING", "rule": "NPU108", "replacement": "TORCH_HCCL_ASYNC_ERROR_HANDLING",
     "fix": "safe", "note": "The legacy name of TORCH_NCCL_ASYNC_ERROR_HANDLING; torch_npu reads "
     "TORCH_HCCL_ASYNC_ERROR_HANDLING.",
     "source": f"{WHEEL}: strings TORCH_HCCL_ASYNC_ERROR_HANDLING, HCCL_ASYNC_ERROR_HANDLING in "
               "torch_npu/lib/libtorch_npu.so; mappings/upstream/torch_npu/env_var_mapping.tsv (TORCH_NCCL_* rows)"},
    {"name": "NCCL_BLOCKING_WAIT", "rule": "NPU108", "replacement": "TORCH_HCCL_BLOCKING_WAIT", "fix": "safe",
     "note": "The legacy name of TORCH_NCCL_BLOCKING_WAIT; torch_npu reads TORCH_HCCL_BLOCKING_WAIT.",
     "source": f"{WHEEL}: strings TORCH_HCCL_BLOCKING_WAIT, HCCL_BLOCKING_WAIT in torch_npu/lib/libtorch_npu.so; "
               "mappings/upstream/torch_npu/env_var_mapping.tsv (TORCH_NCCL_* rows)"},
    {"name": "NCCL_DESYNC_DEBUG", "rule": "NPU108", "replacement": "TORCH_HCCL_DESYNC_DEBUG", "fix": "safe",
     "note": "The legacy name of TORCH_NCCL_DESYNC_DEBUG; torch_npu reads TORCH_HCCL_DESYNC_DEBUG.",
     "source": f"{WHEEL}: strings TORCH_HCCL_DESYNC_DEBUG, HCCL_DESYNC_DEBUG in torch_npu/lib/libtorch_npu.so; "
               "mappings/upstream/torch_npu/env_var_mapping.tsv (TORCH_NCCL_* rows)"},
    {"name": "TORCH_CUDA_ARCH_LIST", "rule": "NPU108", "severity": "info",
     "note": "Only torch's CUDA extension build reads it (torch/utils/cpp_extension.py); "
     "torch_npu.utils.cpp_extension never does, so it has no effect on the NPU: remove it.",
     "source": f"torch 2.13 torch/utils/cpp_extension.py (_get_cuda_arch_flags); {WHEEL}: "
               "torch_npu/utils/cpp_extension.py does not read it"},
    {"name": "FORCE_CUDA", "value": "1", "rule": "NPU108", "severity": "info",
     "note": "A switch each project defines for building its CUDA ops; mmcv builds its NPU ops with FORCE_NPU=1 "
     "instead (other projects: see their build script).",
     "source": "open-mmlab/mmcv setup.py@1bb3dea9 (get_extensions: os.getenv('FORCE_NPU', '0') == '1' builds "
               "NpuExtension with MMCV_WITH_NPU)"},
    {"name": "DS_ACCELERATOR", "value": "cuda", "rule": "NPU127", "replacement": "npu", "fix": "safe",
     "note": "DeepSpeed's accelerator list has npu; unset, DeepSpeed detects the NPU before CUDA.",
     "source": "deepspeedai/DeepSpeed accelerator/real_accelerator.py (SUPPORTED_ACCELERATOR_LIST; npu checked "
               "before cuda), PR #3831 (commit 23a11a3)"},
    {"name": "NVIDIA_VISIBLE_DEVICES", "rule": "NPU108", "severity": "warning",
     "note": "Only the NVIDIA container runtime reads it. Ascend Docker Runtime mounts the NPUs that "
     "ASCEND_VISIBLE_DEVICES names into a container (inside, a process picks among them with "
     "ASCEND_RT_VISIBLE_DEVICES); without that runtime, pass the devices themselves (`/dev/davinci<N>`, ...).",
     "source": "gitee.com/ascend/ascend-docker-runtime README (the prestart hook mounts the devices "
               "ASCEND_VISIBLE_DEVICES names); hiyouga/LLaMA-Factory docker/docker-npu/docker-compose.yml:8-24"},
    {"name": "NCCL_", "prefix": True, "contains": "TIMEOUT", "rule": "NPU108", "severity": "info",
     "note": "HCCL ignores it; its own timeouts are HCCL_CONNECT_TIMEOUT (link setup, seconds, "
     "120 to 7200, default 120) and HCCL_EXEC_TIMEOUT (collective execution, default 1836 s); no NCCL value "
     "carries over, so choose them anew.",
     "source": f"hiascend CANN 8.0.0 envref_07_0077 (HCCL_CONNECT_TIMEOUT), envref_07_0078 (HCCL_EXEC_TIMEOUT); "
               f"{WHEEL}: both names in the strings of torch_npu/lib/libtorch_npu.so; {NO_NCCL}"},
    {"name": "NCCL_", "prefix": True, "rule": "NPU108", "severity": "info",
     "note": "No effect on Ascend: HCCL reads no NCCL_* variable, and no source names an HCCL counterpart for "
     "this one.", "source": NO_NCCL},
]

# A row matches a command whose program is `program` and, with `args`, whose arguments are
# exactly those, or with `option`, one of whose arguments is that option (`--query-gpu` or
# `--query-gpu=...`); neither: any other use of the program.
COMMANDS = [
    {"program": "nvidia-smi", "args": [], "rule": "NPU124", "replacement": "npu-smi info", "fix": "unsafe",
     "note": "`npu-smi info` prints the NPUs' health, power, temperature, AI Core use and memory, in its own "
     "table.", "source": f"{NPU_SMI}: npusmi_007; Atlas 300I Pro 300Ipro_015"},
    {"program": "nvidia-smi", "args": ["-L"], "rule": "NPU124", "replacement": "npu-smi info -l", "fix": "unsafe",
     "note": "`npu-smi info -l` lists the NPU IDs.", "source": f"{NPU_SMI}: npusmi_005 (help text)"},
    {"program": "nvidia-smi", "option": "--query-gpu", "rule": "NPU124",
     "note": "`npu-smi info -t usages -i <id>` prints `key : value` lines, not CSV, and takes no field list: "
     "whatever parses this output has to change.", "source": f"{NPU_SMI}: npusmi_019, npusmi_020"},
    *({"program": "nvidia-smi", "option": option, "rule": "NPU124",
       "note": "`npu-smi info watch [-i <id>]` prints power, temperature, AI Core, AI CPU and memory use over time, "
       "in its own columns.", "source": f"{NPU_SMI}: npusmi_010 (23.0.RC3)"} for option in ("dmon", "-l", "--loop")),
    {"program": "nvidia-smi", "rule": "NPU124",
     "note": "Ascend hosts have npu-smi (`npu-smi info`), with other options and output.",
     "source": f"{NPU_SMI}: npusmi_005, npusmi_007"},
    {"program": "nvcc", "rule": "NPU124", "note": "Ascend hosts have no CUDA toolkit.",
     "source": "mappings/upstream/torch_npu/real_world_failures.md #29"},
]
