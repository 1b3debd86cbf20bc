"""Build mappings/torch/portable.toml: the device-agnostic forms (`torch.accelerator`,
`torch.amp`) that `fix-style = "portable"` writes instead of `torch.npu`.

Called by `python mappings/build torch` (see __main__.py). Each row names the torch release
its form needs and the source that says so (the release's own documentation or source), and
what the call does on a machine without an accelerator, measured on torch 2.13.0+cpu next to
what the `torch.cuda` call it replaces does there: where the portable call raises and the CUDA
one did not, the fix guards it, so a program that ran on the CPU still does. The build
refuses a row whose names torch 2.13 does not have, or that its schema rejects.
"""

from __future__ import annotations

import json
from pathlib import Path

from installed import exists
from torch_npu_tables import env_table, write_toml
from upstream import MAPPINGS

from ascend_lsp.knowledge.schema import first_error

MEASURED = "torch 2.13.0+cpu, measured"
RAISES = "raises RuntimeError \"Cannot access accelerator device when none is available\""
DOCS_26 = ("pytorch.org/docs/2.6/_modules/torch/accelerator.html (device_count, is_available, current_accelerator, "
           "current_stream, synchronize)")
DOCS_27 = ("docs.pytorch.org/docs/2.7/_sources/accelerator.rst.txt and generated/torch.accelerator.current_accelerator"
           ".html (check_available=False; set_device_index, current_device_index)")
DOCS_29 = ("docs.pytorch.org/docs/2.9/generated/torch.accelerator.memory.memory_allocated.html (the memory functions; "
           "absent from docs.pytorch.org/docs/2.8/_sources/accelerator.md.txt)")
AMP = ("torch/cuda/amp/grad_scaler.py and autocast_mode.py: `torch.cuda.amp.X(args...)` is `torch.amp.X(\"cuda\", "
       "args...)` (pytorch.org/docs/2.3/_modules/torch/cuda/amp/grad_scaler.html for GradScaler)")
NPU_REGISTRATION = ("torch_npu 2.13.0 wheel: torch_npu/_init/registry/backend.py:47-49 "
                    "(rename_privateuse1_backend(\"npu\"), _register_device_module(\"npu\", torch_npu.npu)), "
                    "libtorch_npu.so NPUHooksInterface (the PrivateUse1 hooks torch.accelerator asks)")
HCCL_REGISTRATION = ("torch_npu 2.13.0 wheel: torch_npu/_init/registry/distributed.py:37-45 "
                     "(Backend.register_backend(\"hccl\", ..., devices=[\"npu\"]))")

EVENT = ("pytorch/pytorch#123611 (2024-04, \"Build device generic torch.Stream and torch.Event based on "
         "c10::Stream/Event\": enable_timing from the start), in main by 2024-07 (pytorch/pytorch#129363 documents "
         "torch.Event.record), before 2.6 branched; docs.pytorch.org/docs/2.9/generated/torch.Event.html (\"If not "
         "given, the current accelerator type will be used\"); 2.6 for the guard's torch.accelerator.is_available")
EVENT_CPU = ("torch.Event(enable_timing=True) is a cpu event; record() raises RuntimeError \"cpu backend doesn't "
             "support events.\"; synchronize() returns None; elapsed_time() of unrecorded events raises ValueError "
             "\"Both events must be recorded before calculating elapsed time.\" (" + MEASURED + ")")
DEVICE_MODULE = ("torch.get_device_module: in torch 2.13 (checked); pytorch/pytorch#149207 (2025-03) caches it, before "
                 "the 2.7 release")
DEVICE_MODULE_CALL = "torch.get_device_module({device})"

# The name every portable fix of a file uses for its device, bound once below its imports.
BINDING = {
    "name": "accelerator_device",
    # Not check_available=True: that asks torch.cuda.is_available(), which initialises CUDA at import
    # time, so a CUDA_VISIBLE_DEVICES set after the imports would no longer count.
    "expression": 'torch.accelerator.current_accelerator() or torch.device("cpu")',
    "torch": "2.7",
    "cpu": ("torch.device(\"cpu\"): current_accelerator() is None on a torch built without an accelerator ("
            + MEASURED + "); a CUDA build on a machine without a GPU gives cuda, where the CUDA code failed too"),
    "npu": "torch.device(\"npu\") once torch_npu is imported; " + NPU_REGISTRATION,
    "source": DOCS_27 + "; torch 2.13 torch/accelerator/__init__.py (current_accelerator: \"does NOT poison fork\", "
                        "the runtime check only with check_available)",
}

# Leading argument and added keyword of the AMP objects: the device's type, and off without an
# accelerator, as torch.cuda.amp's were (they warn and disable themselves on a CPU-only torch).
AMP_ARGUMENTS = "{device}.type"
AMP_KEYWORDS = {"enabled": '{device}.type != "cpu"'}


def api(name: str, replacement: str, torch: str, source: str, cpu: str, cuda_cpu: str, *,
        guard: str | None = None, arguments: str | None = None, keywords: dict | None = None,
        methods: dict | None = None, note: str | None = None) -> dict:
    """One `torch.cuda` name and its portable form. `guard`: the value the call stands for
    where there is no accelerator (what the CUDA call returned there), given when the
    portable call raises there and the CUDA one did not; `methods`: likewise for the methods
    of the object it makes (a name bound to it is used only through them)."""
    return {"name": name, "replacement": replacement, "torch": torch, "guard": guard, "arguments": arguments,
            "keywords": keywords, "methods": methods, "cpu": cpu, "cuda-cpu": cuda_cpu, "note": note,
            "source": source}


MEMORY = [
    ("memory_allocated", "0"), ("max_memory_allocated", "0"), ("memory_reserved", "0"),
    ("max_memory_reserved", "0"), ("memory_stats", "{}"),
]
APIS = [
    api("torch.cuda.is_available", "torch.accelerator.is_available", "2.6", DOCS_26, "returns False",
        "returns False"),
    api("torch.cuda.device_count", "torch.accelerator.device_count", "2.6", DOCS_26, "returns 0", "returns 0"),
    api("torch.cuda.synchronize", "torch.accelerator.synchronize", "2.6", DOCS_26, RAISES,
        "raises AssertionError \"Torch not compiled with CUDA enabled\"", guard="None"),
    api("torch.cuda.current_stream", "torch.accelerator.current_stream", "2.6", DOCS_26, RAISES,
        "raises AssertionError \"Torch not compiled with CUDA enabled\""),
    api("torch.cuda.current_device", "torch.accelerator.current_device_index", "2.7", DOCS_27, RAISES,
        "raises AssertionError \"Torch not compiled with CUDA enabled\""),
    api("torch.cuda.set_device", "torch.accelerator.set_device_index", "2.7", DOCS_27, RAISES,
        "raises AttributeError (no torch._C._cuda_setDevice)"),
    api("torch.cuda.empty_cache", "torch.accelerator.empty_cache", "2.9", DOCS_29, RAISES, "returns None",
        guard="None"),
    *(api(f"torch.cuda.{name}", f"torch.accelerator.{name}", "2.9", DOCS_29, RAISES,
          f"returns {'OrderedDict()' if value == '{}' else value}", guard=value) for name, value in MEMORY),
    api("torch.cuda.reset_peak_memory_stats", "torch.accelerator.reset_peak_memory_stats", "2.9", DOCS_29, RAISES,
        "raises AttributeError (no torch._C._cuda_resetPeakMemoryStats)", guard="None"),
    # no torch.accelerator counterpart: the device's own module, which CUDA's and torch_npu's both have
    *(api(f"torch.cuda.{name}", f"{DEVICE_MODULE_CALL}.{name}", "2.7",
          f"{DEVICE_MODULE}; torch_npu's torch.npu.{name} (mappings/torch_npu/cuda.toml)",
          f"torch.get_device_module(\"cpu\") is torch.cpu, which has no {name} ({MEASURED})", "returns None",
          guard="None") for name in ("manual_seed", "manual_seed_all")),
    api("torch.cuda.get_device_name", f"{DEVICE_MODULE_CALL}.get_device_name", "2.7",
        f"{DEVICE_MODULE}; torch_npu's torch.npu.get_device_name (mappings/torch_npu/cuda.toml)",
        f"raises AttributeError: torch.get_device_module(\"cpu\") is torch.cpu, which has no get_device_name "
        f"({MEASURED})", "raises AssertionError \"Torch not compiled with CUDA enabled\""),
    # the events' timing runs only where there is an accelerator: without one record() raises
    api("torch.cuda.Event", "torch.Event", "2.6", EVENT, EVENT_CPU,
        "raises RuntimeError \"Tried to instantiate dummy base class Event\"",
        methods={"record": "None", "synchronize": "None", "elapsed_time": "0.0"},
        note="without one `record()` raises; the events are then made but not recorded, and the elapsed time "
             "is 0.0 ms"),
    api("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "2.7", AMP + "; 2.7 for the device binding",
        "torch.amp.GradScaler(\"cpu\", enabled=False) is a disabled scaler",
        "warns that CUDA is not available and disables itself",
        arguments=AMP_ARGUMENTS, keywords=AMP_KEYWORDS),
    api("torch.cuda.amp.autocast", "torch.amp.autocast", "2.7", AMP + "; 2.7 for the device binding",
        "torch.amp.autocast(\"cpu\", enabled=False) casts nothing",
        "warns that CUDA is not available and disables itself",
        arguments=AMP_ARGUMENTS, keywords=AMP_KEYWORDS,
        note="The dtype stays each device's autocast default (float16 on CUDA and the NPU) unless `dtype=` says."),
]

LITERALS = [
    {"kind": "device", "match": "cuda", "expression": "{device}.type", "torch": "2.7",
     "keywords": {"autocast": AMP_KEYWORDS},
     "note": "The device type of the machine: cuda, npu (torch_npu registers it as the accelerator) or cpu.",
     "source": f"{DOCS_27}; {NPU_REGISTRATION}"},
    {"kind": "backend", "match": "nccl", "expression": "None", "torch": "2.7",
     "calls": ["init_process_group", "new_group"],
     "note": "Without a backend, torch.distributed picks each device type's default: nccl for cuda, hccl for npu, "
             "gloo for cpu.",
     "source": f"torch 2.13 torch.distributed.Backend.default_device_backend_map ({MEASURED}); {HCCL_REGISTRATION}"},
]

# Environment variables both backends read: torch's own (c10's allocator configuration) and
# torch_npu's (its caching allocator), so one name serves CUDA and the NPU.
ENVIRONMENT = [
    {"name": "PYTORCH_CUDA_ALLOC_CONF", "replacement": "PYTORCH_ALLOC_CONF", "torch": "2.10",
     "note": "Read by torch's allocator configuration and by torch_npu's; setting it beside PYTORCH_NPU_ALLOC_CONF "
             "is an error on the NPU.",
     "source": "mappings/upstream/torch_npu/env_var_mapping.tsv (TorchNPU >= 26.2.0 with torch >= 2.10 accepts "
               "PYTORCH_ALLOC_CONF); torch 2.13.0 wheel: lib/libc10.so reads PYTORCH_ALLOC_CONF beside "
               "PYTORCH_CUDA_ALLOC_CONF; torch_npu 2.13.0 wheel: lib/libtorch_npu.so (\"Both PYTORCH_NPU_ALLOC_CONF "
               "and PYTORCH_ALLOC_CONF have been set, please set only one of them.\")"},
]

# NPU-only tuning behind a backend check: the CUDA statement where the device is CUDA, its
# torch.npu counterpart (the row's in torch_npu/cuda.toml) through the device's module where it
# is the NPU, so the file names neither torch_npu nor torch.npu.
BRANCH_CPU = ("neither branch runs: the CUDA statement was a no-op on the CPU (" + MEASURED + ": the TF32 switches "
              "change nothing a CPU matmul or convolution computes; the CUDA and NCCL variables are read by CUDA and "
              "NCCL alone)")


def branches(data_dir: Path) -> list[dict]:
    """The TF32 switches, and the CUDA and NCCL variables renamed for the NPU (the rows of
    torch_npu/env.toml, from the same facts) that both backends do not share; not one whose
    counterpart reads its value in another unit (the NPU branch would keep the CUDA value)."""
    rows = [{"name": name, "kind": "api", "module": DEVICE_MODULE_CALL, "torch": "2.7", "cpu": BRANCH_CPU,
             "source": f"{DEVICE_MODULE}; {NPU_REGISTRATION}"}
            for name in ("torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32")]
    shared = {row["name"] for row in ENVIRONMENT}
    rows += [{"name": row["name"], "kind": "env", "torch": "2.7", "cpu": BRANCH_CPU,
              "source": f"{row['source']}; {BINDING['source']}"}
             for row in env_table(data_dir / "torch_npu")
             if row.get("fix") and row["name"] not in shared and "value-divisor" not in row]
    return rows


METHODS = [
    {"name": "cuda", "replacement": "to", "arguments": "{device}", "parameters": ["non_blocking", "memory_format"],
     "torch": "2.7", "source": f"torch.Tensor.to and torch.nn.Module.to take a torch.device; {DOCS_27}"},
]


def names(row: dict) -> list[str]:
    """The names a row's form needs in torch 2.13 (a device module's function: CUDA's)."""
    replacement = row["replacement"].replace(DEVICE_MODULE_CALL, "torch.cuda")
    return [row["name"], replacement] + (["torch.get_device_module"] if DEVICE_MODULE_CALL in row["replacement"] else [])


def build(data_dir: Path, out_dir: Path) -> list[Path]:
    if not exists("torch.get_device_module"):
        raise ValueError("torch 2.13 has no torch.get_device_module")
    for row in APIS:
        missing = [n for n in names(row) if not exists(n)]
        if missing:
            raise ValueError(f"{row['name']}: torch 2.13 has no {', '.join(missing)}")
    rows = branches(data_dir)
    for row in rows:
        if row["kind"] == "api" and not exists(row["name"]):
            raise ValueError(f"{row['name']}: torch 2.13 has no such switch")
    sections = [("binding", [BINDING]), ("api", APIS), ("literal", LITERALS), ("method", METHODS),
                ("branch", rows), ("env", ENVIRONMENT)]
    table = {"meta": {"title": "Portable forms: torch.accelerator and torch.amp instead of torch.cuda and torch.npu",
                      "sources": sorted({DOCS_26, DOCS_27, DOCS_29, AMP, EVENT, NPU_REGISTRATION, HCCL_REGISTRATION})}}
    for section, rows in sections:
        table[section] = [{k: v for k, v in row.items() if v is not None} for row in rows]
    schema = json.loads((MAPPINGS / "schema" / "torch.json").read_text(encoding="utf-8"))
    error = first_error(table, schema)
    if error is not None:
        raise ValueError(f"portable.toml does not validate: {error}")
    return [write_toml(out_dir / "portable.toml", table["meta"], sections)]
