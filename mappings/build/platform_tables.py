"""Build mappings/platform/*.toml: chip profiles, packaging facts, argument-level limits.

Called by `python mappings/build platform` (see __main__.py). Pure stdlib at build time:

- `chips.toml`: the Ascend chips, their names and aliases (every command accepts these), what
  each lacks (bf16, IEEE inf/nan, FP8, offline operators) and what the emulate target assumes
  it does to numbers (HF32), from the facts in mappings/upstream/torch_npu (FACTS.md §6,
  real_world_failures.md #6, #9, #16, #17).
- `packaging.toml`: the torch ↔ torch-npu pairing read from the registry's own metadata
  of every torch-npu release (`build/pypi/torch-npu-releases.json`, written by
  `refresh_releases()` with pip's `--report`, which reads each wheel's PEP 658 metadata:
  the Requires-Dist the wheel really declares), plus the CUDA-only packages, wheel
  indexes and base images of packaging files.
- `configs.toml`: training configs (accelerate, DeepSpeed, LLaMA-Factory, TrainingArguments) and
  compose files: how each is recognised and the settings that differ on the NPU (config_rows.py).
- `arguments-<version>.toml`: the arguments Ascend's native API support list marks
  unsupported (`不支持`x`参数`), one row per (API, argument).

Every row carries its source. The runtime reads only the output.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from config_rows import DOCKER_OPTIONS, FRAMEWORKS, SETTINGS
from launch_rows import COMMANDS, VARIABLES
from torch_npu_tables import BNB_LEAD, BNB_PATHS, BNB_SOURCE, PT_SHORT, read_tsv, support_source, write_toml

RELEASES = Path(__file__).resolve().parent / "pypi" / "torch-npu-releases.json"
FAILURES = "mappings/upstream/torch_npu/real_world_failures.md"
FACTS = "mappings/upstream/torch_npu/FACTS.md"

# --- chips ---------------------------------------------------------------------------------
# What `lsp-check run --target emulate --chip` assumes a chip does to numbers, each with its
# source; fp16 saturation and bfloat16 themselves are the `saturation` and `bf16` features below.
SATURATION = ("fp16 saturation mode (torch_npu FACTS: Atlas training-series 910A supports saturation mode only; "
              "real_world_failures: 910A / 310P inf→65504, NaN→0)")
NO_HF32 = "no HF32 emulated (HF32 is the A2/A3 cube format; 910A-class fp32 handling is not emulated)"
NO_BF16 = "bfloat16 treated as absent (torch.npu.is_bf16_supported() is False on this chip: an assumption)"
INF_NAN = "IEEE inf/nan (INF_NAN_MODE_ENABLE=1, the A2/A3 default; 950DT supports INF_NAN mode only)"
HF32 = "HF32: fp32 convolutions on, fp32 matmul off, unless the code sets the switches (torch_npu defaults)"
HF32_SOURCE = f"{FACTS} §6 (HF32 defaults: convolutions on, matmul off, on A2/A3; 910A-class chips have no HF32)"
OLDER = {"hf32": False, "hf32-source": HF32_SOURCE, "emulation": [SATURATION, NO_HF32, NO_BF16]}
NEWER = {"hf32": True, "hf32-source": HF32_SOURCE, "emulation": [INF_NAN, HF32]}
CHIPS = [
    {"name": "910A", "title": "Atlas training series (Ascend 910A / 910ProB)", "aliases": ["910", "910ProB"],
     "support-column": "A2", **OLDER,
     "source": f"{FACTS} §6 (INF_NAN_MODE, ACL_PRECISION_MODE by SoC) and caveats (chip names follow the SoC "
               "checks in Ascend/pytorch)"},
    {"name": "310P", "title": "Atlas inference series (Ascend 310P)", "aliases": [], "support-column": "A2", **OLDER,
     "source": f"{FAILURES} #6, #9, #16"},
    {"name": "A2", "title": "Atlas A2 (Ascend 910B)", "aliases": ["910B"], **NEWER,
     "source": f"{FACTS} §2 (support list columns) and caveats"},
    {"name": "A3", "title": "Atlas A3 (Ascend 910C / 910_93)", "aliases": ["910C"], **NEWER,
     "source": f"{FACTS} §2 (support list columns) and caveats"},
    {"name": "950DT", "title": "Ascend 950DT", "aliases": ["950"], **NEWER,
     "source": f"{FACTS} §2 (support list columns)"},
]
ALL_CHIPS = [c["name"] for c in CHIPS]

# What a chip lacks. `chips` = where the limit applies; the other chips are fine or unknown
# (`unknown` lists those the facts say nothing about: they are not reported).
FEATURES = [
    {"name": "bf16", "title": "bfloat16", "chips": ["910A", "310P"],
     "note": "Atlas training (910A) and Atlas inference (310P) chips have no bfloat16: casts fail "
             "(aclnnCast ... DT_BFLOAT16 not implemented). Use float16 with loss scaling there, or choose the "
             "dtype at run time with torch.npu.is_bf16_supported().",
     "source": f"{FAILURES} #6: hiyouga/LlamaFactory#4339, #4165, #7522; vllm-project/vllm-ascend#9294 "
               "(maintainer: 910A supports fp16, not bf16)"},
    {"name": "saturation", "title": "IEEE inf/nan in float16", "chips": ["910A", "310P"],
     "note": "Atlas training (910A) and Atlas inference (310P) chips run float16 in saturation mode only: "
             "an overflow gives ±65504 instead of inf and NaN becomes 0, so inf/nan checks never fire and -inf "
             "masks are finite. Use torch.finfo(dtype).min for masks and a finite-overflow check.",
     "source": f"{FAILURES} #9: hiascend INF_NAN_MODE_ENABLE page; open-mmlab/mmdetection#9267; "
               f"{FACTS} §6 (INF_NAN_MODE_ENABLE defaults to 1 on A2/A3; 950DT INF_NAN only)"},
    {"name": "fp8", "title": "FP8 dtypes", "chips": ["910A", "310P", "A2", "A3"], "unknown": ["950DT"],
     "note": "No FP8 tensors on this chip (vLLM-Ascend: fp8 KV cache crashes on 910B; FP8 not supported on A3 "
             "either); torch_npu's float8 storage methods are ✘ on every chip. Use bf16/fp16, or INT8 "
             "quantization through msModelSlim.",
     "source": f"{FAILURES} #17: vllm-project/vllm-ascend#8102, #11498; flagos-ai/FlagTree#987; "
               f"{PT_SHORT}:docs/zh/api/native_api/pytorch_2-13-0/torch-Storage.md (float8_e4m3fn ✘)"},
    {"name": "jit-compile", "title": "offline (binary) operators by default", "chips": ["910A", "310P"],
     "note": "Atlas training (910A) and Atlas inference (310P) chips compile operators online on first use "
             "(jit_compile defaults to True; A2 defaults to False): the first step can take minutes.",
     "unknown": ["A3", "950DT"],
     "source": f"{FAILURES} #16: Comfy-Org/ComfyUI#10050 (600 s vs 40 s on 310P), open-mmlab/mmengine#847"},
]


def chip_rows() -> tuple[list[dict], list[dict]]:
    for feature in FEATURES:
        if not {*feature["chips"], *feature.get("unknown", ())} <= set(ALL_CHIPS):
            raise ValueError(f"feature {feature['name']} names an unknown chip")
    return CHIPS, FEATURES


# --- packaging -----------------------------------------------------------------------------
PYPI = "PyPI torch-npu {version}: Requires-Dist of {wheel} (PEP 658 metadata, read with pip --report)"
TORCH_PIN = re.compile(r"torch\s*\(?\s*==\s*(?P<version>[0-9][0-9.]*[0-9])(?P<star>\.\*)?(?P<local>\+\w+)?\s*\)?$")


def refresh_releases(path: Path = RELEASES) -> None:
    """Re-read every torch-npu release's metadata from the registry (needs network; run by hand)."""
    index = json.loads(subprocess.run(["curl", "-s", "https://pypi.org/pypi/torch-npu/json"], check=True,
                                      capture_output=True).stdout)
    out = {}
    for version in sorted(index["releases"]):
        if "rc" in version:
            continue
        report = path.parent / "report.json"
        subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
                        "--quiet", "--report", str(report), f"torch-npu=={version}", "--platform",
                        "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64", "--only-binary=:all:",
                        "--python-version", "3.10", "--target", str(path.parent / "target")], check=True)
        item = json.loads(report.read_text())["install"][0]
        out[version] = {"requires_dist": item["metadata"].get("requires_dist"),
                        "wheel": item["download_info"]["url"].rsplit("/", 1)[1],
                        "upload": min(f["upload_time_iso_8601"] for f in index["releases"][version])}
        report.unlink()
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


def pairing_rows(path: Path = RELEASES) -> list[dict]:
    """One row per torch-npu release that declares its torch: the torch it requires."""
    releases = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for version, info in releases.items():
        requires = [r for r in info.get("requires_dist") or () if re.match(r"torch\b(?!-)", r) and ";" not in r]
        if not requires:
            continue  # 2.1.0 and 2.2.0 declare no torch requirement: nothing to pair
        match = TORCH_PIN.match(requires[0].strip())
        if match is None:
            raise ValueError(f"torch-npu {version}: unexpected torch requirement {requires[0]!r}")
        rows.append({
            "torch-npu": version, "torch": match["version"], "local": (match["local"] or "").lstrip("+") or None,
            "requirement": requires[0].replace(" ", "").replace("(", "").replace(")", ""),
            "source": PYPI.format(version=version, wheel=info["wheel"]),
        })
    rows.sort(key=lambda r: [int(p) if p.isdigit() else p for p in re.split(r"[.]|post", r["torch-npu"])])
    return rows


TRD = "mappings/upstream/torch_npu/third_party_replacements.tsv"
# NVIDIA's monitoring bindings: what they do on a host without NVIDIA's driver, run in a fresh venv
MONITOR = "`{name}` queries NVIDIA's driver: it installs and imports on any host, and finds no GPU on an Ascend host."
NVML_NOTE = ("`pynvml.nvmlInit()` raises NVMLError_LibraryNotFound there. On Ascend use npu-smi or "
             "torch.npu.mem_get_info(); the code that calls it is reported where it does (NPU124).")
MONITOR_RUN = ("nvidia-ml-py 13.615.71 and GPUtil 1.4.0 installed with pip on a host without NVIDIA's driver "
               "(2026-11-27): both import; `pynvml.nvmlInit()` raises NVMLError_LibraryNotFound, "
               "`GPUtil.getGPUs()` returns []")

PACKAGES = [
    # conda's metapackage for the CUDA build of pytorch: the same fact as a `+cu` torch (NPU501)
    {"name": "pytorch-cuda", "rule": "NPU501", "note": "The conda package that makes `pytorch` the CUDA build "
     "(`conda install pytorch pytorch-cuda=12.1 -c pytorch -c nvidia`); `import torch_npu` then raises \"Two "
     "accelerators cannot be used at the same time in PyTorch: npu and cuda\". Install the CPU build of torch and "
     "the torch-npu paired with it with pip.",
     "source": "torch_npu 2.13.0 wheel: torch_npu/__init__.py:12-35 (_check_device_conflict); pytorch.org "
     "get-started/previous-versions (conda: pytorch-cuda=<version> -c pytorch -c nvidia)"},
    {"name": "flash-attn", "rule": "NPU502", "note": "flash-attn has CUDA kernels only and does not install on "
     "Ascend; attention goes through torch_npu.npu_fusion_attention or SDPA.",
     "source": f"{TRD} (flash_attn rows); {FAILURES} #1: huggingface/transformers#36618"},
    {"name": "xformers", "rule": "NPU502", "note": "xformers kernels are CUDA only; no official NPU mapping "
     "(port memory_efficient_attention to torch_npu.npu_fusion_attention by hand).", "source": f"{TRD} (xformers row)"},
    {"name": "triton", "rule": "NPU502", "replacement": "triton-ascend", "fix": "unsafe",
     "note": "Community Triton targets CUDA/ROCm; on Atlas A2/A3 install triton-ascend, which replaces the triton "
     "package directory.", "source": f"{TRD} (triton row: gitcode Ascend/triton-ascend quick_start, FAQ)"},
    # Not CUDA-only: it installs, and what it lacks on the NPU shows in the code that uses it (NPU304).
    # Its releases before 0.46.0 do not list the NPU (0.43.3, 0.44.1, 0.45.0 and 0.45.5 wheels: no
    # supported_torch_devices; 0.46.0's __init__.py:25-32 lists "npu"): a requirement admitting none
    # from 0.46.0 on asks for a CUDA-only package, and keeps the rule's severity.
    {"name": "bitsandbytes", "rule": "NPU502", "severity": "info", "severity-from": "0.46.0",
     "message": f"`{{name}}` is bitsandbytes, which {BNB_LEAD}.", "note": f"{BNB_PATHS[0].upper()}{BNB_PATHS[1:]} "
     "(bitsandbytes 0.50.2 checked).", "source": BNB_SOURCE + "; bitsandbytes 0.46.0 wheel (PyPI): "
     "bitsandbytes/__init__.py:25-32 (the first release whose supported_torch_devices lists \"npu\"; the 0.43.3, "
     "0.44.1, 0.45.0 and 0.45.5 wheels have no such set)"},
    {"name": "apex", "rule": "NPU502", "note": "NVIDIA apex builds CUDA kernels; Ascend keeps its own apex fork "
     "(amp in Python, no CUDA kernels) and torch_npu.optim.NpuFused* optimizers.",
     "source": f"{TRD} (apex rows: Ascend/apex README.zh.md, torch_npu/optim/__init__.py)"},
    {"name": "cupy-cuda", "prefix": True, "rule": "NPU502", "note": "A CuPy build for CUDA: it needs an NVIDIA "
     "driver and does not run on an Ascend host.", "source": f"{FAILURES} #2 (CUDA wheels in packaging files)"},
    {"name": "nvidia-", "prefix": True, "suffix": ["-cu11", "-cu12", "-cu13"], "rule": "NPU502",
     "note": "An NVIDIA CUDA runtime wheel (what CUDA builds of torch pull in); it has no use on an Ascend host.",
     "source": f"{FAILURES} #2 (nvidia-*-cu1x wheels)"},
    {"name": "auto-gptq", "rule": "NPU502", "note": "GPTQ/AWQ kernels are CUDA/HIP only; on the NPU quantize with "
     "msModelSlim (W8A8, --quantization ascend).", "source": f"{FAILURES} #13: vllm-project/vllm-ascend#195, #6603"},
    {"name": "autoawq", "rule": "NPU502", "note": "AWQ kernels are CUDA/HIP only; on the NPU quantize with "
     "msModelSlim (W8A8, --quantization ascend).", "source": f"{FAILURES} #13: vllm-project/vllm-ascend#195, #6800"},
    # Not CUDA-only to install: pure Python, they install and import on any host; their queries fail
    # where the code makes them, which NPU124 reports there.
    {"name": "pynvml", "rule": "NPU502", "severity": "info", "message": MONITOR, "note": NVML_NOTE,
     "source": f"{FAILURES} #29; {MONITOR_RUN}"},
    {"name": "nvidia-ml-py", "rule": "NPU502", "severity": "info", "message": MONITOR, "note": NVML_NOTE,
     "source": f"{FAILURES} #29; {MONITOR_RUN}"},
    {"name": "gputil", "rule": "NPU502", "severity": "info", "message": MONITOR,
     "note": "`GPUtil.getGPUs()` finds no GPU there (it parses nvidia-smi). On Ascend use npu-smi; the code that "
     "calls it is reported where it does (NPU124).", "source": f"{FAILURES} #29; {MONITOR_RUN}"},
    {"name": "faiss-gpu", "prefix": True, "rule": "NPU502", "note": "faiss's GPU build, linked against CUDA's runtime "
     "and cuBLAS; it does not run on an Ascend host. faiss-cpu gives the same indexes on the CPU.",
     "source": "PyPI metadata, read 2026-11-27: faiss-gpu 1.15.1 Requires-Dist nvidia-cuda-runtime-cu12<13,>=12.6, "
               "nvidia-cublas-cu12<13,>=12.6, nvidia-curand-cu12; faiss-gpu-cu12 1.14.1.post1 Requires-Dist "
               "nvidia-cuda-runtime-cu12>=12.1.105, nvidia-cublas-cu12>=12.1.3.1"},
    {"name": "transformer-engine", "prefix": True, "rule": "NPU502", "note": "NVIDIA's Transformer Engine (fused "
     "layers, FP8): its PyTorch part is built against CUDA and needs its CUDA library wheels and cuDNN's frontend; "
     "there is no NPU build. Leave it out on Ascend (Megatron-LM runs without it: `--transformer-impl local`).",
     "source": "PyPI metadata, read 2026-11-27 (pip install --dry-run --report): transformer_engine 2.20.2 "
               "Requires-Dist transformer_engine_cu12 (extra core), transformer_engine_torch (extra pytorch); "
               "transformer_engine_torch 2.20.2 (an sdist) Requires-Dist nvidia-cudnn-frontend>=1.29.0, "
               "transformer_engine_cu13==2.20.2; NVIDIA/Megatron-LM megatron/core/models/backends.py:206 "
               "(transformer_impl: Literal['local', 'transformer_engine', 'inference_optimized'])"},
]

INDEXES = [
    {"match": "download.pytorch.org/whl/cu", "rule": "NPU501", "replacement": "download.pytorch.org/whl/cpu",
     "fix": "unsafe",
     "note": "A CUDA wheel index: torch_npu needs the CPU build of torch (on x86 it requires torch==X+cpu).",
     "source": f"{FAILURES} #2: vllm-project/vllm-ascend#7089, kvcache-ai/ktransformers#1544; PyPI torch-npu "
               "Requires-Dist (torch==X+cpu)"},
]

# torch loads the packages named in the `torch.backends` entry-point group on `import torch`
# (device-backend autoload, torch 2.5+); which torch-npu wheels declare it, read from
# each wheel's *.dist-info/entry_points.txt (pip download --no-deps torch-npu==X).
AUTOLOAD_ENTRY = "[torch.backends] torch_npu = torch_npu:_autoload"
AUTOLOAD = [
    {"torch-npu": "2.4.0", "autoload": False,
     "source": "torch_npu-2.4.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl: entry_points.txt "
               "has no [torch.backends] group"},
    {"torch-npu": "2.5.1", "autoload": True,
     "source": f"torch_npu-2.5.1-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl: entry_points.txt "
               f"{AUTOLOAD_ENTRY}"},
    {"torch-npu": "2.7.1", "autoload": True,
     "source": f"torch_npu-2.7.1-cp311-cp311-manylinux_2_28_x86_64.whl: entry_points.txt {AUTOLOAD_ENTRY}"},
    {"torch-npu": "2.13.0", "autoload": True,
     "source": f"torch_npu-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl: entry_points.txt {AUTOLOAD_ENTRY}"},
]

IMAGES = [
    {"match": "nvidia/cuda", "rule": "NPU504", "source": f"{FAILURES} #2 (Dockerfiles)"},
    {"match": "nvcr.io/nvidia/", "rule": "NPU504", "source": f"{FAILURES} #2 (Dockerfiles)"},
    {"match": "pytorch/pytorch", "if-contains": "cuda", "rule": "NPU504", "source": f"{FAILURES} #2 (Dockerfiles)"},
    # any other image whose tag names a CUDA build as PyTorch's wheels do (`cu124`, `cuda12.4`, a word of its own)
    {"match": "", "tag-matches": r"(?:^|[-_.])cu(?:da)?\d", "rule": "NPU504",
     "source": "hiyouga/LLaMA-Factory docker/docker-cuda/Dockerfile:2-3 (hiyouga/pytorch:th2.6.0-cu124-flashattn2.7.4-"
               "cxx11abi0-devel, its docker-cuda image); volcengine/verl docker/ (verlai/verl:base-verl0.4-"
               "cu124-cudnn9.8-torch2.6-fa2.7.4, from nvcr.io/nvidia/pytorch:24.08-py3); PyTorch's CUDA build labels "
               "(+cu121)"},
]

# The CANN base images a CUDA image gives way to, one per chip (chips.toml's names): the CANN
# toolkit, kernels and NNAL, without torch or torch_npu.
CANN_IMAGE_SOURCE = ("hiyouga/LLaMA-Factory docker/docker-npu/Dockerfile:1-4 and docker-compose.yml "
                     "(quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12, 9.1.0-a3-ubuntu22.04-py3.12); "
                     "vLLM-Ascend installation docs (quay.io/ascend/cann tags)")
CANN_IMAGES = [
    {"chip": "A2", "image": "quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12", "source": CANN_IMAGE_SOURCE},
    {"chip": "A3", "image": "quay.io/ascend/cann:9.1.0-a3-ubuntu22.04-py3.12", "source": CANN_IMAGE_SOURCE},
]

# Variables that point at the CUDA toolkit's folder (NPU505): a CANN image has none, and its own
# environment comes from the toolkit's set_env.sh (CUDA_HOME itself is NPU124, realworld.toml).
CUDA_PATH_SOURCE = ("torch_npu-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl (reads ASCEND_HOME_PATH, "
                    "ASCEND_TOOLKIT_HOME, ASCEND_OPP_PATH); hiyouga/LLaMA-Factory docker/docker-npu/Dockerfile "
                    "(source /usr/local/Ascend/ascend-toolkit/set_env.sh)")
CUDA_PATHS = [
    {"name": "LD_LIBRARY_PATH", "contains": "/usr/local/cuda", "rule": "NPU505",
     "note": "An Ascend host or CANN image has no CUDA toolkit there. The CANN environment (ASCEND_HOME_PATH, "
             "ASCEND_TOOLKIT_HOME, ASCEND_OPP_PATH, its library paths) comes from "
             "`source /usr/local/Ascend/ascend-toolkit/set_env.sh` in the shell that runs torch_npu.",
     "source": CUDA_PATH_SOURCE},
]


# --- argument-level limits -----------------------------------------------------------------
# "不支持`dropout`参数" (the parameter is not supported), "不支持`scale_factor`" (a bare
# name: kept only when torch has a parameter of that name), "不支持`sorted=False`场景" (that value).
UNSUPPORTED = re.compile(r"不支持`(?P<arg>[A-Za-z_]\w*)(?:=(?P<value>True|False|None|\d+))?`(?P<tail>参数|场景)?")


# Arguments that only relax a guarantee: an NPU that ignores them still keeps the contract
# (`topk(sorted=False)` allows any order, and sorted output is one).
PERMISSIONS = {("torch.topk", "sorted")}


def parameters(torch, api: str) -> dict[str, object] | None:
    """The API's parameters and their defaults in the installed torch (classes: the first
    `__init__` in the MRO that names them), or None when torch or a signature is missing."""
    import inspect

    obj = torch
    for part in api.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    functions = [k.__init__ for k in obj.__mro__] if inspect.isclass(obj) else [obj]
    for function in functions:
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            continue
        named = {n: p.default for n, p in signature.parameters.items()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        if len(named) > 1:
            return named
    return None


def argument_rows(path: Path, version: str) -> list[dict]:
    try:
        import torch
    except ImportError:
        torch = None
    rows = []
    for row in read_tsv(path):
        api = row["api"].split("(")[0]
        for match in UNSUPPORTED.finditer(row["limitations_zh"]):
            if match["arg"] == "jit_compile":
                continue  # a torch_npu mode (set_compile_mode), not an argument of the API
            if (api, match["arg"]) in PERMISSIONS:
                continue
            known = parameters(torch, api) if torch is not None else None
            if match["tail"] != "参数" and match["value"] is None and (known is None or match["arg"] not in known):
                continue  # a bare name torch does not take: an input or dtype, not a parameter
            default = (known or {}).get(match["arg"])
            entry = {"api": api, "argument": match["arg"],
                     "value": match["value"],
                     # as Python source: the runtime compares literals with it
                     "default": repr(default) if isinstance(default, (bool, int, float)) else None,
                     "chips": {c: row[c] == "✔" for c in ("A2", "A3", "950DT")},
                     "limitation": match.group(0), "source": support_source(version, row["doc_page"])}
            rows.append({k: v for k, v in entry.items() if v is not None})
    return rows


# Ops real projects hit that fall back to the CPU or are pathologically slow on the NPU.
FALLBACK_SO = ("torch_npu-2.14.0 wheel: CPU-fallback warning strings "
               "(mappings/upstream/torch_npu/cpu_fallback_messages_wheel.txt)")
FALLBACKS = [
    # torch.isin is left out: its fallback is evidenced for torch_npu 2.2 (Ascend/pytorch#40), and the
    # 2.13.0 support list marks it supported.
    {"api": "torchvision.ops.nms", "note": "torchvision's nms runs on the CPU on the NPU (a CPU-fallback warning per "
     "call); use the NPU NMS of torch_npu or mmcv.", "source": f"{FAILURES} #8: opendatalab/MinerU#1695, #1941"},
    {"api": "torchvision.ops.batched_nms", "note": "torchvision's nms runs on the CPU on the NPU; use the NPU NMS of "
     "torch_npu or mmcv.", "source": f"{FAILURES} #8: opendatalab/MinerU#1695"},
    {"api": "torch.nn.TransformerEncoderLayer", "note": "In eval under no_grad the fast path "
     "(_transformer_encoder_layer_fwd, _transform_bias_rescale_qkv) falls back to the CPU; turn it off with "
     "torch.backends.mha.set_fastpath_enabled(False).",
     "source": f"{FAILURES} #8: Ascend/pytorch#51; {FALLBACK_SO} (_transform_bias_rescale_qkv)"},
    {"api": "torch.nn.functional.interpolate", "keyword": "mode", "value": "linear",
     "note": "Linear interpolation of long 1-D signals runs slower on the NPU than on the CPU.",
     "source": f"{FAILURES} #8: Ascend/pytorch#69"},
    {"api": "torch.linalg.eig", "note": "torch.linalg.eig takes a path on the NPU that errors; run small "
     "eigen-decompositions on the CPU explicitly.", "source": f"{FAILURES} #8: pytorch/pytorch#116504"},
    {"api": "torch.linalg.eigvals", "note": "torch.linalg.eigvals takes a path on the NPU that errors; run small "
     "eigen-decompositions on the CPU explicitly.", "source": f"{FAILURES} #8: pytorch/pytorch#116504"},
]


def build(data_dir: Path, out_dir: Path) -> list[Path]:
    d = Path(data_dir) / "torch_npu"
    chips, features = chip_rows()
    written = [write_toml(out_dir / "chips.toml", {
        "title": "Ascend chip profiles: their names, what each chip lacks, what it does to numbers",
        "sources": sorted({c["source"] for c in chips} | {HF32_SOURCE} | {f["source"] for f in features}),
    }, [("chip", chips), ("feature", features)])]
    pairing = pairing_rows()
    written.append(write_toml(out_dir / "packaging.toml", {
        "title": "Packaging files: torch <-> torch-npu pairing, CUDA-only packages, wheel indexes, base images, "
                 "CUDA toolkit paths",
        "sources": ["PyPI torch-npu release metadata (mappings/build/pypi/torch-npu-releases.json)",
                    FAILURES, TRD, CANN_IMAGE_SOURCE, CUDA_PATH_SOURCE],
    }, [("pairing", pairing), ("package", PACKAGES), ("index", INDEXES), ("image", IMAGES),
        ("cann-image", CANN_IMAGES), ("cuda-path", CUDA_PATHS), ("autoload", AUTOLOAD)]))
    written.append(write_toml(out_dir / "launch.toml", {
        "title": "Shell launch scripts: variables only scripts set or with no NPU counterpart, NVIDIA host commands",
        "sources": sorted({row["source"] for row in VARIABLES + COMMANDS}),
    }, [("variable", VARIABLES), ("command", COMMANDS)]))
    written.append(write_toml(out_dir / "configs.toml", {
        "title": "Training configs and container settings: how a config is recognised, the settings that behave "
                 "differently on an NPU, the NVIDIA container runtime's requests",
        "sources": sorted({row["source"] for row in FRAMEWORKS + SETTINGS + DOCKER_OPTIONS}),
    }, [("framework", FRAMEWORKS), ("setting", SETTINGS), ("docker-option", DOCKER_OPTIONS)]))
    for version in ("2.13.0",):
        rows = argument_rows(d / f"native_api_support_{version}.tsv", version)
        if not rows:
            raise ValueError(f"no argument limits found in the {version} support list")
        written.append(write_toml(out_dir / f"arguments-{version}.toml", {
            "title": f"Arguments Ascend's native API support list marks unsupported, torch {version}",
            "version": version, "sources": [f"{PT_SHORT}:docs/zh/api/native_api/pytorch_{version.replace('.', '-')}/"],
        }, [("argument", rows)]))
    written.append(write_toml(out_dir / "fallback.toml", {
        "title": "Ops that fall back to the CPU or are pathologically slow on the NPU",
        "sources": [f"{FAILURES} #8", FALLBACK_SO],
    }, [("fallback", FALLBACKS)]))
    return written
