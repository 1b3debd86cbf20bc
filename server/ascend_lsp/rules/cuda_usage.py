"""NPU1xx: CUDA-only usage — device strings, `.cuda()`, `torch.cuda.*`, cuDNN/TF32
switches, NCCL, CUDA environment variables, the PyTorch profiler."""

from __future__ import annotations

from ..engine.checker import Checker, Reference
from ..engine.model import Applicability, Severity
from ..knowledge.platform import load_platform
from ..engine.registry import TableRef, handles, rule
from .table import TRANSFER_NOTE as TRANSFER

rule(
    code="NPU101", name="cuda-device-string", severity=Severity.WARNING, fix="always",
    table=TableRef("mappings/torch_npu/cuda.toml", ("literal",)),
    message="Device string `{name}` selects a CUDA device.",
    doc=dict(
        what="Finds string values that name a CUDA device: `\"cuda\"`, `\"cuda:0\"`, `f\"cuda:{rank}\"`, "
             "`\"cuda:%d\" % rank`, in `torch.device(...)`, `device=`, `.to(...)`, `map_location=`, comparisons, "
             "assignments and device-keyed dicts. Not where the string chooses no device: an attribute name "
             "(`getattr(torch.version, \"cuda\")`), text searched with `str` methods, a `Literal[...]` type, or "
             "one option in a list or dict that already has `\"npu\"`.",
        why="There is no CUDA device on an Ascend host. `transfer_to_npu` rewrites device strings passed to the "
            "functions it wraps, but not `torch.device(\"cuda\")` itself nor comparisons such as "
            "`x.device.type == \"cuda\"`, which then silently take the other branch.",
        example='device = torch.device("cuda:0")\nx = x.to("cuda")\n\n# becomes\n\ndevice = torch.device("npu:0")\n'
                'x = x.to("npu")',
        fix="Replaces `cuda` with `npu` in the literal text (never inside an f-string's `{...}`). Safe where the "
            "literal selects a device: an argument of `torch.device(...)`, `.to(...)`, `torch.autocast(...)`, a "
            "`device=`, `device_type=`, `map_location=` or `output_device=` keyword, or a comparison with a device "
            "or its type (`x.device.type == \"cuda\"`). Unsafe elsewhere (a value assigned, a dict key, an enum "
            "member, one element of a list): such a string may be a name or a key looked up elsewhere, so the "
            "rename needs review. Strings in log messages, docstrings, exception texts and `__all__` are never "
            "flagged.",
        source=TRANSFER + "; msFmkTransplt ReplaceStringRule (Ascend/mstt builtin_rules.json).",
    ),
)

rule(
    code="NPU102", name="cuda-tensor-method", severity=Severity.WARNING, fix="always",
    table=TableRef("mappings/torch_npu/cuda.toml", ("method",)),
    message="`{name}` is CUDA-only.",
    doc=dict(
        what="Finds `.cuda()` on tensors and modules and the `.is_cuda` attribute.",
        why="On an Ascend NPU the tensor methods are `.npu()` and `.is_npu`, added by `import torch_npu`.",
        example="model.cuda()\nif x.is_cuda: ...\n\n# becomes\n\nimport torch_npu\nmodel.npu()\nif x.is_npu: ...",
        fix="Safe: renames the method and adds `import torch_npu` when the file lacks it.",
        source=TRANSFER + " direct reassignments `Tensor.cuda→Tensor.npu`, `Tensor.is_cuda→is_npu`.",
    ),
)

rule(
    code="NPU103", name="torch-cuda-api", severity=Severity.WARNING, fix="sometimes",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api",)),
    message="`{name}` is a CUDA API.",
    doc=dict(
        what="Finds every use of a `torch.cuda` API that has a `torch.npu` counterpart: AMP `autocast` and "
             "`GradScaler`, streams and events, memory statistics, seeds, `set_device`, `device_count`, ….",
        why="`torch.cuda.*` drives the CUDA runtime. torch_npu provides the same API as `torch.npu.*` "
            "(`torch_npu.npu.*`); `transfer_to_npu` patches exactly these names onto `torch.cuda`.",
        example="scaler = torch.cuda.amp.GradScaler()\ntorch.cuda.synchronize()\n\n# becomes\n\nimport torch_npu\n"
                "scaler = torch.npu.amp.GradScaler()\ntorch.npu.synchronize()",
        fix="Safe for the names `transfer_to_npu` maps one to one (adds `import torch_npu`); unsafe where the "
            "counterpart behaves differently (`DoubleTensor` becomes `FloatTensor`); display-only for names "
            "not in the list.",
        source=TRANSFER + " `_patch_cuda` over `torch_npu.npu.__all__`.",
    ),
)

rule(
    code="NPU104", name="cuda-api-without-npu-counterpart", severity=Severity.ERROR, fix="never",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api",)),
    message="`{name}` has no NPU counterpart.",
    doc=dict(
        what="Finds `torch.cuda` names that torch_npu does not provide: `nvtx`, `jiterator`, `nccl`, "
             "`get_arch_list`, `memory_usage`, ….",
        why="`transfer_to_npu` copies only the names in `torch_npu.npu.__all__` onto `torch.cuda`; these keep "
            "their CUDA implementation and fail (or do nothing) on an Ascend host.",
        example="torch.cuda.nvtx.range_push(\"step\")  # NPU104\n\n# use the NPU profiler markers instead\n"
                "torch_npu.npu.mstx.range_push(\"step\")",
        fix="None automatic; the message names the NPU alternative where one is documented.",
        source="`torch.cuda.__all__` (torch 2.14) vs `torch_npu.npu.__all__` (torch_npu 2.14.0 wheel).",
    ),
)

rule(
    code="NPU105", name="cudnn-switch-no-effect", severity=Severity.INFO, fix="never",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api",)),
    message="`{name}` has no effect on the NPU.",
    doc=dict(
        what="Finds `torch.backends.cudnn` switches: `benchmark`, `deterministic`, `enabled`.",
        why="torch_npu never reads the cuDNN flags, so setting them changes nothing on an Ascend NPU — in "
            "particular `cudnn.deterministic = True` does not make the run deterministic.",
        example="torch.backends.cudnn.deterministic = True\n\n# on the NPU\n\ntorch.use_deterministic_algorithms(True)",
        fix="None automatic: decide what the switch was for (determinism, speed) and use the NPU setting.",
        source="`git grep` over Ascend/pytorch and op-plugin: no reads of `deterministicCuDNN`/`benchmarkCuDNN`.",
    ),
)

rule(
    code="NPU106", name="tf32-switch", severity=Severity.WARNING, fix="sometimes",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api",)),
    message="`{name}` is a CUDA TF32 switch.",
    doc=dict(
        what="Finds the TF32 switches `torch.backends.cuda.matmul.allow_tf32`, `torch.backends.cudnn.allow_tf32` "
             "and `torch.set_float32_matmul_precision`.",
        why="The NPU's reduced-precision fp32 mode is HF32, switched by `torch.npu.matmul.allow_hf32` and "
            "`torch.npu.conv.allow_hf32` — with different defaults: matmul HF32 is off, convolution HF32 is "
            "**on**, so fp32 convolutions on A2/A3 already run in HF32.",
        example="torch.backends.cuda.matmul.allow_tf32 = True\n\n# becomes\n\nimport torch_npu\n"
                "torch.npu.matmul.allow_hf32 = True",
        fix="Unsafe: renames the switch; review it, because the defaults differ.",
        source="Ascend/op-plugin docs (allow_hf32 'similar to' allow_tf32); torch_npu npu_config.py defaults.",
    ),
)

rule(
    code="NPU107", name="nccl-backend", severity=Severity.WARNING, fix="always",
    table=TableRef("mappings/torch_npu/cuda.toml", ("literal",)),
    message="`{name}` selects NCCL, NVIDIA's collective library.",
    doc=dict(
        what="Finds the NCCL backend name in `init_process_group(\"nccl\")`, `backend=\"nccl\"`, "
             "`\"cpu:gloo,cuda:nccl\"`, and `torch.distributed.is_nccl_available`.",
        why="Ascend's collective library is HCCL; the backend is `\"hccl\"`.",
        example='dist.init_process_group(backend="nccl")\n\n# becomes\n\ndist.init_process_group(backend="hccl")',
        fix="Safe: replaces `nccl` with `hccl` (and `cuda` with `npu` in device-qualified specs).",
        source=TRANSFER + " `init_process_group`/`new_group` backend rewrite; msFmkTransplt ReplaceStringRule.",
    ),
)

rule(
    code="NPU108", name="cuda-env-var", severity=Severity.WARNING, fix="sometimes",
    table=TableRef("mappings/torch_npu/env.toml", ("env",)),
    message="`{name}` is a CUDA/NCCL environment variable.",
    doc=dict(
        what="Finds CUDA and NCCL environment variable names: `os.environ[\"CUDA_VISIBLE_DEVICES\"]`, "
             "`os.getenv(...)`, `os.environ.setdefault(...)`, `env={...}`.",
        why="The Ascend runtime and HCCL read their own variables (`ASCEND_RT_VISIBLE_DEVICES`, "
            "`HCCL_BUFFSIZE`, …); the CUDA ones are ignored.",
        example='os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n\n# becomes\n\n'
                'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"',
        fix="Safe where the variable has a one-to-one NPU counterpart; otherwise the message says what to set.",
        source="mappings/torch_npu/env.toml (torch_npu wheel, Ascend/pytorch docs, CANN environment reference).",
    ),
)

rule(
    code="NPU109", name="torch-npu-not-imported", severity=Severity.ERROR, fix="always",
    message="`{name}` needs `import torch_npu`.",
    doc=dict(
        what="Finds uses of `torch.npu` in a file that never imports `torch_npu`.",
        why="`torch.npu` is registered by `import torch_npu`; without it, `torch.npu` raises `AttributeError`. "
            "torch_npu 2.5.1 and later declare a `torch.backends` entry point, so `import torch` (2.5+) loads "
            "them by itself unless `TORCH_DEVICE_BACKEND_AUTOLOAD=0`: for such a `torch-npu-version` the "
            "finding is info. It is info too inside a branch that tests for the NPU "
            "(`if is_torch_npu_available(): torch.npu...`).",
        example="torch.npu.set_device(0)  # AttributeError\n\n# becomes\n\nimport torch_npu\ntorch.npu.set_device(0)",
        fix="Safe: adds `import torch_npu` below the file's imports.",
        source="Ascend/pytorch README: `import torch_npu` registers the `npu` device and `torch.npu`; "
               "entry_points.txt of the torch_npu 2.4.0, 2.5.1, 2.7.1 and 2.13.0 wheels "
               "(mappings/platform/packaging.toml [[autoload]]).",
    ),
)

rule(
    code="NPU110", name="torch-profiler", severity=Severity.WARNING, fix="always",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api",)),
    message="`{name}` belongs to the PyTorch profiler; NPU kernels are profiled by `torch_npu.profiler`.",
    doc=dict(
        what="Finds `torch.profiler.profile`, `schedule`, `tensorboard_trace_handler`, `ProfilerAction` and "
             "`ProfilerActivity` (with `ProfilerActivity.CUDA`).",
        why="NPU kernels are profiled by `torch_npu.profiler`, whose activities are `CPU` and `NPU`. "
            "`transfer_to_npu` and msFmkTransplt swap exactly these names; the profile, its schedule, its "
            "trace handler and its activities must all come from the same profiler.",
        example="with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof: ...\n\n"
                "# becomes\n\nimport torch_npu\n"
                "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]) as prof: ...",
        fix="Unsafe: renames to `torch_npu.profiler` (`ProfilerActivity.CUDA` becomes `NPU`). Review the "
            "keywords: the NPU `tensorboard_trace_handler` has no `use_gzip` and writes `*_ascend_pt` folders of "
            "Ascend profiling data.",
        source=TRANSFER + " `_patch_profiler`; msFmkTransplt `torch.profiler` renames (Ascend/mstt); "
               "torch_npu 2.13.0 wheel `torch_npu/profiler`.",
    ),
)


@handles("reference", "NPU109")
def check_torch_npu_import(checker: Checker, ref: Reference) -> None:
    if not ref.qualname.startswith("torch.npu") or checker.module.imports_module("torch_npu"):
        return
    if ref.scope.lookup("torch_npu") == "torch_npu":
        return  # imported in the function that uses it (often guarded by an availability check)
    if ref.qualname != "torch.npu" and not ref.qualname.startswith("torch.npu."):
        return
    fix = checker.fix("Add `import torch_npu`", Applicability.SAFE, checker.require_module("torch_npu"))
    autoload = load_platform(checker.settings.torch_npu_version).autoloaded(checker.settings.torch_npu_version)
    if autoload is None:
        checker.report("NPU109", ref.node, name=ref.qualname, fixes=(fix,))
        return
    message = (f"`{ref.qualname}` relies on `import torch` loading torch_npu {checker.settings.torch_npu_version} "
               "(device-backend autoload, its `torch.backends` entry point), which TORCH_DEVICE_BACKEND_AUTOLOAD=0 "
               "turns off; `import torch_npu` says it.")
    checker.report("NPU109", ref.node, message, (fix,), severity=Severity.INFO)
