"""NPU1xx: CUDA-only usage — device strings, `.cuda()`, `torch.cuda.*`, cuDNN/TF32
switches, NCCL, CUDA environment variables, the PyTorch profiler; and what real migrations
trip over (docs/real-world-rules.md): `torch.compile` with inductor, integer devices,
CUDA-or-CPU device selection, the `fork` start method, NVIDIA host tools, online operator
compilation on the chips that do it."""

from __future__ import annotations

import ast
import re
from typing import TypeGuard

from ..engine.checker import Checker, Reference
from ..engine.model import Applicability, Edit, Fix, Range, Related, Severity
from ..knowledge.platform import load_platform
from ..engine.registry import TableRef, handles, rule
from ..engine.shell_script import Assignment, Command, ShellScript, options, scaled_value
from ..engine.guards import name_words
from ..engine.walk import FUNCTION, Scope, StringContext, last_name
from ..knowledge.launch import load_launch
from ..engine.versions import allows_before, held_before, release
from .call_arguments import assigned_key, constant, keyword, passed
from .advice_matching import inside
from .harmless_calls import OPTION_LEFT_OFF_DOC, flag_off, state_dict_place, statement_path
from .transfer_scope import TRANSFER_SCOPE_DOC
from .chip_features import CHIP_TABLE, COMPILE_MODE, applies, chip_doc, lacking, lacks
from .citations import TORCH_NPU_INDUCTOR, TRANSFER_TO_NPU, real_world_citation
from .statement_facts import CPU_ONLY
from .portable_fixes import PORTABLY, form_of, styled
from .table import REAL_WORLD_TABLE, is_prose, report as report_entry

rule(
    code="NPU101", name="cuda-device-string", severity=Severity.WARNING, fix="always",
    table=TableRef("mappings/torch_npu/cuda.toml", ("literal",)),
    message="Device string `{name}` selects a CUDA device.",
    doc=dict(
        what="Finds string values that name a CUDA device: `\"cuda\"`, `\"cuda:0\"`, `f\"cuda:{rank}\"`, "
             "`\"cuda:%d\" % rank`, in `torch.device(...)`, `device=`, `.to(...)`, `map_location=`, comparisons, "
             "assignments and device-keyed dicts. Not where the string chooses no device: an attribute name "
             "(`getattr(torch.version, \"cuda\")`), text searched with `str` methods (not a device's type or a device "
             "compared by its beginning: `device.type.startswith(\"cuda\")`), a `Literal[...]` type, or "
             "one option in a list or dict that already has `\"npu\"`. A warning only where the string is a "
             "device: a device argument or keyword (the first argument `functools.partial` binds to `torch.autocast` "
             "and alike too), a comparison with a device or its type (`startswith` too), a value assigned to "
             "a device variable (`device`, `self.device`, `dev`), the value of a dict's `\"device\"` key "
             "(`run_opts = {\"device\": \"cuda\"}`), returned by a function named for a device, or passed to one "
             "(`to_device(batch, \"cuda\" if ngpu > 0 else \"cpu\")`; its rename unsafe: the function is the "
             "project's), or one of the `choices` of an option named for a device (`add_argument(\"--device\", "
             "choices=[\"cpu\", \"cuda\"])`, which refuses `npu`). A "
             "default (`getattr(args, \"device\", \"cuda\")`, a parameter's, an option's not named for a device) is "
             "info, but the default of the command line's device option (`add_argument(\"--device\", "
             "default=\"cuda\")`, a device parameter of a typer or click `@app.command()`) is a warning: what a run "
             "whose command names no device gets; so is a parameter's default (also an arm of a conditional one, "
             "`device=\"cuda\" if ... else \"mps\"`) that a call in the project leaves to it (`Wav2VecAlignment()`, "
             "the call as related information: call_sites.py), and one every call passes is info with those calls; "
             "each is a hint where the code handles `npu` too (a top-level import such as "
             "`torch_npu` or `is_torch_npu_available`, or the same statement); anywhere else (a mode or timer "
             "name, a key, a test marker or skip condition, a comparison with a setting, a copy's "
             "`non_blocking=` or `pin_memory=` flag, synchronous or unpinned and correct on the NPU, a comparison whose branch only logs or "
             "records the GPU's facts, `if device.type == \"cuda\": params[\"GPU\"] = name`, `results.setdefault(\"GPU "
             "memory\", []).append(m)`, `text += f\"| Memory: {m} GB\"`, values only such statements read (`m = "
             "torch.cuda.max_memory_allocated() / 1e9`), calls of functions named for checking or reporting "
             "(`check_nvlink_connectivity(fabric)`, not `check_and_set_device`), but not its RNG state, "
             "which a checkpoint restores, or only does what does nothing without CUDA, `torch.cuda.empty_cache()` "
             "or a CUDA seed beside `torch.manual_seed`, or lays tensors out anew for a CUDA kernel, `q = q.contiguous()`) "
             "info, since `\"npu\"` "
             "there may raise; so is one in a `pytest.param(...)` whose marks require CUDA. A parameter's default "
             "(`def create_loader(..., device=torch.device(\"cuda\"))`, a class's `__init__`) that every call in the "
             "project passes, by keyword or position, is info with those calls as related locations; where a call omits "
             "it, the warning names that call (a related location); it stays as it is where a call passes `*args` or "
             "`**kwargs` that may hold it, or the name is used otherwise "
             "(passed as a value, subclassed, imported under another name, named in a string), where there is no "
             "call (a library's default is what its users get), and for methods, whose callers are not followed. "
             "A comparison with a device's type is info too where the code handles `npu`, "
             "unless the path an NPU host takes past it falls to the CPU (`else: arg = \"cpu\"`) or raises in a "
             "function that names the NPU elsewhere (`if not bf16_ok: raise`). A comparison in the test of an `if` that "
             "chooses ONNX Runtime's `CUDAExecutionProvider` (its test or body names it) is info: ONNX Runtime has no "
             "provider for torch's `npu` device, so `npu` there is no fix; its CANN build (`onnxruntime-cann`) has "
             "`CANNExecutionProvider` (onnxruntime.ai, CANN Execution Provider). The device a kernel of an operator is "
             "registered for (`torch.library.custom_op(..., device_types=\"cuda\")`, `register_kernel(op, \"cuda\")`, "
             "`impl(name, \"cuda\")`) is info with no fix: the kernel is CUDA's, and NPU308 reports the calls of an "
             "operator with none for the NPU. A comparison held in a name "
             "(`check_sync = idx == 1 and self.device == \"cuda\"`, then `if check_sync:`) is the test of what "
             "that name guards (as NPU103 says); one of where a tensor is with a fallback beside it (`if "
             "x.device.type == \"cuda\": ... else: ...`, or `if x.device.type != \"cuda\": return self.loop(x)`) is "
             "info, with its arm; so is one in the test of a check "
             "only CUDA runs (`if x.device.type == \"cuda\" and not x.is_contiguous(): raise ...`, as NPU103 says). "
             "The message says which. In shell "
             "launch scripts (`*.sh`, sbatch jobs, `#!` scripts without a suffix) and a Dockerfile's `RUN`, a CUDA device given to a command's "
             "`--device` (`python train.py --device cuda:0`, `torchrun ... -m pkg.run --device=cuda`, `lm_eval "
             "--device cuda:0`) or to a Python program's override (`trainer.device=cuda`), naming whose option it "
             "is: the script or module a Python launcher runs, else the program. Not `cpu`, a variable "
             "(`--device \"$DEVICE\"`), the words of `echo`, or `make device=cuda`; info in the arm beside an `if` "
             "that tests for the NPU, and info without a fix where the same command runs vLLM (`--model vllm`), "
             "which chooses its device itself (lm_eval's vLLM model drops `device`). " + TRANSFER_SCOPE_DOC,
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
            "flagged. In a launch script, unsafe: the option's value becomes `npu` (`cuda:0` → `npu:0`), which the "
            "program may not accept where it lists its devices (argparse `choices`).",
        source=TRANSFER_TO_NPU + "; msFmkTransplt ReplaceStringRule (Ascend/mstt builtin_rules.json); launch "
               "scripts: lm_eval 0.4.13 lm_eval/models/huggingface.py:277-288 (`cuda:N` is in HFLM's device list, "
               "the model is moved there), lm_eval/models/vllm_causallms.py:107-113 (the vLLM model drops `device`).",
    ),
)

rule(
    code="NPU102", name="cuda-tensor-method", severity=Severity.WARNING, fix="always",
    table=TableRef("mappings/torch_npu/cuda.toml", ("method",)),
    message="`{name}` is CUDA-only.",
    doc=dict(
        what="Finds `.cuda()` on tensors and modules and the `.is_cuda` attribute. Info in a test of where a "
             "tensor is with a fallback beside it (`if torch.cuda.is_available() and pred.is_cuda: <CUDA kernel> "
             "else: <the same in PyTorch>`, or an early exit that returns what other devices get instead: `if not "
             "x.is_cuda: return self.loop(x)`, `return None`; not the input handed back as it came), or a branch "
             "that is what tensors on other devices get and does its job on any device (`if not "
             "next(self.lm.parameters()).is_cuda: self.lm.to(tokens.device)`, also where the test is an `or` that begins "
             "so: `if not x.is_cuda or not self.static_shapes:`; not a branch that raises, leaves, or names the CPU or "
             "CUDA): an NPU tensor takes the fallback; a test whose other path raises "
             "keeps its warning, and what it guards is listed with it (as NPU103 says). Info too in the test of a "
             "check only CUDA runs (`if not x.is_cuda and torch.cuda.is_available(): raise ...`, as NPU103 says). "
             + OPTION_LEFT_OFF_DOC + " " + TRANSFER_SCOPE_DOC,
        why="On an Ascend NPU the tensor methods are `.npu()` and `.is_npu`, added by `import torch_npu`.",
        example="model.cuda()\nif x.is_cuda: ...\n\n# becomes\n\nimport torch_npu\nmodel.npu()\nif x.is_npu: ...",
        fix="Safe: renames the method and adds `import torch_npu` when the file lacks it.",
        source=TRANSFER_TO_NPU + " direct reassignments `Tensor.cuda→Tensor.npu`, `Tensor.is_cuda→is_npu`.",
    ),
)

rule(
    code="NPU103", name="torch-cuda-api", severity=Severity.WARNING, fix="sometimes",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api",)),
    message="`{name}` is a CUDA API.",
    doc=dict(
        what="Finds every use of a `torch.cuda` API that has a `torch.npu` counterpart: AMP `autocast` and "
             "`GradScaler`, streams and events, memory statistics, seeds, `set_device`, `device_count`, …. "
             "Info where it is harmless on an NPU host (torch 2.13 without CUDA checked): "
             "`torch.cuda.manual_seed(_all)` beside `torch.manual_seed` (in the same function, or both at a "
             "script's top level), which seeds the NPU too; "
             "`torch.cuda.empty_cache()`; a name only in a type hint or `isinstance()`, or a member of a type "
             "union (`IndexType = Union[torch.LongTensor, torch.cuda.LongTensor]`, `Optional[...]`, "
             "`torch.cuda.Event | None`); `torch.cuda` as the "
             "fallback of `getattr(torch, device_type, torch.cuda)`; an environment report (`collect_env.py`, "
             "`env.py`, a file or function named like `collect_env_info`, `print_env()`), and the `torch.cuda` names it imports; a test's skip condition; the value of a per-device dict's `\"cuda\"` key; "
             "a class named only as the key a value is stored under (`hooks[torch.cuda.amp.GradScaler] = ...`); "
             "`import torch.cuda` alone, whose uses are reported where they are; code in a function or class named for CUDA "
             "graphs (`init_cuda_graph`, `CudaGraphWrapper`: an optimisation the project turns on; the message names "
             "torch_npu's `torch.npu.NPUGraph`; a class's fixes are shown only, as for other classes a project "
             "chooses); the code of transformers' naive model parallelism (deprecated) vendored in a project: `parallelize()`, "
             "`deparallelize()` and what runs under `if self.model_parallel:` where the file defines `parallelize`, "
             "which a user calls to spread layers over CUDA devices; `from torch.cuda import X` where the "
             "module imports `X` again from `torch.npu` or `torch_npu` inside a block (`if envs.is_npu(): from "
             "torch.npu import X`), its fix shown only: the module chooses per device; code after a test for ROCm in "
             "an `and` (`bool(torch.version.hip) and torch.cuda.is_available()`); "
             "`torch.cuda.is_available()` and `device_count()` where the code handles `npu` too (as NPU101 "
             "says); the test of a check only CUDA runs: an `if` without `else` whose test holds only with CUDA "
             "(`torch.cuda.is_available()`, `x.is_cuda`, `device.type == \"cuda\"`, alone or joined by `and`) and "
             "whose body only logs, raises or sets CUDA's sync debugging (`if cuda.is_available() and not x.is_cuda: "
             "raise ...`, `if device == \"cuda\": torch.cuda.set_sync_debug_mode(\"warn\")`), which an NPU "
             "host skips (a test with a part that asks that CUDA is missing keeps its warning, `if not "
             "torch.cuda.is_available(): raise` or `if device.type == \"cuda\" and not torch.cuda.is_available(): "
             "raise`: it may raise there); a "
             "top-level import of a `torch.cuda` name the module uses only as a type or in such tests "
             "(`from torch import cuda`; a string equal to the name, as in `__all__`, keeps it). A CUDA seed alone stays a warning: its message says the NPU's generator "
             "stays unseeded. Code under a test for CUDA (`if torch.cuda.is_available():`, `if args.device == "
             "\"cuda\":`, and the operands of an `and` after a comparison that tests for CUDA: `device.type == "
             "\"cuda\" and not torch.cuda.is_available()`, not after a flag, `args.cuda and "
             "torch.cuda.is_available()`) with no NPU branch beside it runs on an NPU host only once that test is changed: the "
             "test keeps its finding, which lists the NPU1xx findings under it as related locations (info that names "
             "the test where the test has no finding of its own). A parameter named for CUDA that defaults to True "
             "(`def __init__(self, ..., use_cuda=True)`, then `if use_cuda:`) is no such test: an NPU host takes its "
             "branch unless a caller passes False, so the code under it keeps its findings; nor is a name named for CUDA "
             "assigned once a test of no backend (`self._use_cuda = gpu > -1`, `use_cuda = n_gpu > 0`: the user's choice of "
             "a GPU, which an NPU host makes too). The test may be held in a name: a function's "
             "local assigned it once (`run_on_gpu = torch.cuda.is_available()`, or `True if ... else False`, then `if run_on_gpu:`; the "
             "assignment keeps the finding and takes the calls, also through another local: `use_io_binding = "
             "cuda and fits`), a module global or an instance attribute (`self.gpu_available`) assigned it once in "
             "the file (the calls are info that name it). Info too: the arm of a test of where a tensor is "
             "with a fallback beside it, and that test (`elif pred.is_cuda: <CUDA kernel> else: <the same in "
             "PyTorch>`, or an early exit that returns the fallback); an arm only a torch older than the target torch_npu's takes (`if torch_version_ge(2, "
             "4): ... else: torch.cuda.amp.custom_fwd`, flags named `TORCH_1_13`, `hasattr(torch.amp, "
             "\"GradScaler\")`, a `try`'s `except AttributeError:` falling back to `torch.cuda.amp.GradScaler()`; "
             "the target's torch is the oldest the project's torch-npu pin admits, else that of "
             "torch-npu-version where the project's torch pin admits it, else the oldest that pin admits); the "
             "else of `if not <another backend's test>:`; the arm of `if TYPE_CHECKING:`, which never runs. Info too is the "
             "rest of a block after `if not torch.cuda.is_available(): return` (or `raise`, `sys.exit()`, "
             "`continue` or `break` in a loop's body, and after `if device.type != \"cuda\": return`: the block "
             "that exit leaves, nested or not; and after `assert` of a probe of CUDA (`torch.cuda.is_available()`, "
             "`x.is_cuda`, `device.type == \"cuda\"`, `device_count() > 0`, or an `or` of such probes for CUDA "
             "and other backends: `assert torch.cuda.is_available() or torch.backends.mps.is_available()`; not a "
             "test that only names CUDA, `config.use_cuda_graph`, which may hold anywhere); after "
             "`pytest.skip(...)` that test is a skip condition, info, and the test after it is to port), the "
             "body of a module function that every call in the project makes under such a test or in a CUDA arm "
             "beside an NPU arm (the calls as related locations; not where its name is used otherwise, passed as "
             "a value or named in a string, nor for a function no call reaches or a method; a test's double "
             "replacing it, `monkeypatch.setattr(module, \"f\", fake)` or `mock.patch(\"pkg.f\")`, is no use), "
             "and so the bodies of the methods of a module class that the project makes only there (not its class "
             "body, run at import, nor a class subclassed, named in `__all__` or used as `C.method`), a "
             "`case \"cuda\":` of a `match`, and a `pytest.param(...)` whose marks require CUDA "
             "(`RunIf(min_cuda_gpus=1)`, `pytest.mark.skipif(not torch.cuda.is_available(), ...)`). Info too: "
             "a name in `typing.cast(torch.cuda.Stream, s)`; the object of `hasattr`, `setattr`, "
             "`monkeypatch.setattr` or `mock.patch.object` (`hasattr(torch.cuda.amp, \"custom_fwd\")` tests a "
             "feature, true without CUDA too, so the code under it keeps its findings); "
             "`torch.cuda.OutOfMemoryError`, which is `torch.OutOfMemoryError`, raised by torch_npu when the NPU "
             "runs out of memory; code in another device's class of a per-backend scheme (`HPU_Accelerator`); "
             "a memory statistic, `is_available()` or `device_count()` given to a print, a log (a call named `log...`: "
             "`LogItem(\"Mem (GB)\", ...)`) or an exception, or "
             "formatted into text with prose (`\"peak: {:.3f} GB\".format(...)`, `\"%d MB\" % ...`), or assigned "
             "in a function to a local it reads only so "
             "(`torch.cuda.max_memory_allocated()` reads 0 without CUDA, `is_available()` False: a script that only "
             "prints `torch.cuda.is_available()` reports the host); the test of an `if` whose branches only print or log, or only do, beside that, "
             "what does nothing without CUDA (`torch.cuda.empty_cache()`, a CUDA seed beside `torch.manual_seed`, "
             "setting cuDNN's flags, and where the test holds only with CUDA `with torch.cuda.device(d):` around "
             "those; `synchronize`, `ipc_collect` and `reset_peak_memory_stats` raise without it, so keep the test); a "
             "`torch.cuda` name a function imports by `from ... import` and does not use in the rest of its text "
             "(a check of the torch release: `try: from torch.cuda import amp` ... `except ImportError: raise`), "
             "since importing it needs no CUDA: any mention of the name in the function (`locals()[\"amp\"]`, "
             "`global amp`, a comment) keeps the warning; and a module-level import of a `torch.cuda` name the module "
             "never reads, not even in a string such as `__all__` (`from torch.cuda.amp import autocast` left over, "
             "or the stand-in of an `else:` for an old torch), except in a package's `__init__.py`, which hands "
             "names on; a branch for another operating system (`sys.platform == \"darwin\"`, `platform.system() "
             "== \"Windows\"`, `os.name == \"nt\"`), since torch_npu is built for Linux alone; code in a function of "
             "setup.py that nothing in it calls (setup.py is run, not imported: rules/uncalled_helpers.py); the CUDA "
             "test of a `map_location` whose state dict is only loaded into a module (as NPU113 says); a CUDA test "
             "that chooses ONNX Runtime's `CUDAExecutionProvider` (as NPU101 says), in an `if` or assigned to a name "
             "such an `if` tests. " + OPTION_LEFT_OFF_DOC + " " + TRANSFER_SCOPE_DOC,
        why="`torch.cuda.*` drives the CUDA runtime. torch_npu provides the same API as `torch.npu.*` "
            "(`torch_npu.npu.*`); `transfer_to_npu` patches exactly these names onto `torch.cuda`.",
        example="scaler = torch.cuda.amp.GradScaler()\ntorch.cuda.synchronize()\n\n# becomes\n\nimport torch_npu\n"
                "scaler = torch.npu.amp.GradScaler()\ntorch.npu.synchronize()",
        fix="Safe for the names `transfer_to_npu` maps one to one (adds `import torch_npu`); unsafe where the "
            "counterpart behaves differently (`DoubleTensor` becomes `FloatTensor`); display-only for names "
            "not in the list.",
        source=TRANSFER_TO_NPU + " `_patch_cuda` over `torch_npu.npu.__all__`.",
    ),
)

rule(
    code="NPU104", name="cuda-api-without-npu-counterpart", severity=Severity.ERROR, fix="never",
    table=TableRef("mappings/torch_npu/cuda.toml", ("api",)),
    message="`{name}` has no NPU counterpart.",
    doc=dict(
        what="Finds `torch.cuda` names that torch_npu does not provide: `nvtx`, `jiterator`, `nccl`, "
             "`get_arch_list`, `memory_usage`, …. " + OPTION_LEFT_OFF_DOC,
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
             "and `torch.set_float32_matmul_precision`. A switch only read (to log it) is info. "
             "A switch set to what its NPU analogue is while unset is info: `torch.backends.cudnn.allow_tf32 = True` "
             "(torch_npu 2.13.0's `torch.npu.conv.allow_hf32` reads True while unset, npu/npu_config.py, so fp32 "
             "convolutions already run in HF32, as asked) and `torch.backends.cuda.matmul.allow_tf32 = False` "
             "(`torch.npu.matmul.allow_hf32` reads False while unset); set the other way, it stays a warning. "
             + OPTION_LEFT_OFF_DOC,
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
             "`\"cpu:gloo,cuda:nccl\"`, and `torch.distributed.is_nccl_available`. Info: the backend of an mmengine "
             "config's `dist_cfg` (`env_cfg = dict(dist_cfg=dict(backend=\"nccl\"))`) where the project pins "
             "mmengine 0.3.0 or later (no release before it admitted), or the file imports mmengine and the project "
             "pins none: from 0.3.0 mmengine's `pytorch` launcher initialises with `hccl` wherever an NPU is "
             "available and does not read it (mmengine 0.10.7 `mmengine/dist/utils.py:113-120`); its `slurm` and "
             "`mpi` launchers pass it on, but call `torch.cuda.set_device` first, which raises without CUDA. "
             "Info too: a parameter's default (`def launch(main, backend=\"nccl\")`) that every call in the project "
             "passes, with the calls as related locations; where a call leaves it to its default, the warning names "
             "that call. " + TRANSFER_SCOPE_DOC,
        why="Ascend's collective library is HCCL; the backend is `\"hccl\"`.",
        example='dist.init_process_group(backend="nccl")\n\n# becomes\n\ndist.init_process_group(backend="hccl")',
        fix="Safe: replaces `nccl` with `hccl` (and `cuda` with `npu` in device-qualified specs).",
        source=TRANSFER_TO_NPU + " `init_process_group`/`new_group` backend rewrite; msFmkTransplt ReplaceStringRule; "
               "open-mmlab/mmengine `mmengine/dist/utils.py` `_init_dist_pytorch` (tags v0.3.0 to v0.10.7 read).",
    ),
)

rule(
    code="NPU108", name="cuda-env-var", severity=Severity.WARNING, fix="sometimes",
    table=TableRef("mappings/torch_npu/env.toml", ("env",)),
    message="`{name}` is a CUDA/NCCL environment variable.",
    doc=dict(
        what="Finds CUDA and NCCL environment variable names: `os.environ[\"CUDA_VISIBLE_DEVICES\"]`, "
             "`os.getenv(...)`, `os.environ.setdefault(...)`, `env={...}`; in shell launch scripts, `export NAME=`, "
             "`NAME=... cmd` and `env NAME=... cmd`, where mappings/platform/launch.toml adds the legacy NCCL names, "
             "the NCCL variables HCCL ignores (info), `TORCH_CUDA_ARCH_LIST` and `FORCE_CUDA=1` (info). "
             "`CUDA_VISIBLE_DEVICES=\"\"` or `=-1` (forcing the CPU) is not reported, in a script or in Python "
             "(`os.environ[...] = \"-1\"`, `os.environ.setdefault(...)`). `CUDA_VISIBLE_DEVICES` set for TensorFlow is info: "
             "in a function that hands that environment to a subprocess whose call names TensorFlow (`env={**env, "
             "**self.tf_env}`, a `tensorflow` script), or that runs TensorFlow itself and names no torch; TensorFlow "
             "has no NPU.",
        why="The Ascend runtime and HCCL read their own variables (`ASCEND_RT_VISIBLE_DEVICES`, "
            "`HCCL_BUFFSIZE`, …); the CUDA ones are ignored.",
        example='os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n\n# becomes\n\n'
                'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"',
        fix="Safe where the variable has a one-to-one NPU counterpart; otherwise the message says what to set. "
            "A counterpart read in another unit gets its value converted too, where a launch script, Dockerfile or "
            "compose file writes it as a whole number, its digits alone in one pair of quotes at most (`NCCL_BUFFSIZE=4194304`, "
            "bytes → `HCCL_BUFFSIZE=4`, MB, rounded up, at least 1); any other value (a leading 0, which NCCL reads "
            "as octal; 2**63 or more, which it ignores), and Python code, get no fix, and the message says why.",
        source="mappings/torch_npu/env.toml (torch_npu wheel, Ascend/pytorch docs, CANN environment reference, "
               "NCCL's environment variables); "
               "mappings/platform/launch.toml (torch_npu 2.13.0 wheel, torch 2.13, open-mmlab/mmcv, CANN HCCL "
               "environment reference).",
    ),
)

rule(
    code="NPU109", name="torch-npu-not-imported", severity=Severity.ERROR, fix="always",
    message="`{name}` needs `import torch_npu`.",
    doc=dict(
        what="Finds uses of `torch.npu` in a file that never imports `torch_npu`. Not in a function that imports "
             "it, nor inside a branch that tests for the NPU (`if is_torch_npu_available(): torch.npu...`, "
             "`if device.type == \"npu\":`, the NPU class of a per-backend scheme): that test loaded torch_npu.",
        why="`torch.npu` is registered by `import torch_npu`; without it, `torch.npu` raises `AttributeError`. "
            "torch_npu 2.5.1 and later declare a `torch.backends` entry point, so `import torch` (2.5+) loads "
            "them by itself unless `TORCH_DEVICE_BACKEND_AUTOLOAD=0`. Which applies is read from the versions the "
            "project pins (its requirements files, pyproject.toml, setup.py, setup.cfg, environment.yml): an "
            "error where the torch-npu pin holds the project before 2.5.1, or, with no torch-npu pin, where the "
            "torch pin holds it before 2.5 (it admits such a release and not the configured `torch-npu-version`, or "
            "the torch paired with it, which a port installs where the pin allows it: `torch>=2.4.1` admits 2.13.0); "
            "info where the pins exclude those or admit the ported release. With no pin, the configured "
            "`torch-npu-version` decides, and the message says that no pin was found.",
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
        source=TRANSFER_TO_NPU + " `_patch_profiler`; msFmkTransplt `torch.profiler` renames (Ascend/mstt); "
               "torch_npu 2.13.0 wheel `torch_npu/profiler`.",
    ),
)


# The torch release that loads device backends' `torch.backends` entry points on `import torch`
# (torch 2.13 `torch/__init__.py` `_import_device_backends`; pytorch/pytorch#127074, torch 2.5).
AUTOLOAD_TORCH = "2.5"


@handles("reference", "NPU109")
def check_torch_npu_import(checker: Checker, ref: Reference) -> None:
    if not ref.qualname.startswith("torch.npu") or checker.module.imports_module("torch_npu"):
        return
    if ref.scope.lookup("torch_npu") == "torch_npu":
        return  # imported in the function that uses it (often guarded by an availability check)
    if ref.qualname != "torch.npu" and not ref.qualname.startswith("torch.npu."):
        return
    fix = checker.fix("Add `import torch_npu`", Applicability.SAFE, checker.require_module("torch_npu"))
    message, severity = autoload_verdict(checker, ref.qualname)
    checker.report("NPU109", ref.node, message, (fix,), severity=severity,
                   related=pinned_at(checker, "torch-npu", "torch", "pytorch"))


def pinned_at(checker: Checker, *names: str) -> tuple[Related, ...]:
    """Where the project pins the first of `names` it pins (the pin a verdict read, in the same
    order), as a related location in that file."""
    project = checker.project
    for name in names if project is not None else ():
        place = project.pin_place(name)
        if place is not None:
            path, line = place
            return (Related(Range(line, 0, line, 0), f"`{name}` pinned here (`{project.pin(name)}`)", path),)
    return ()


def autoload_verdict(checker: Checker, qualname: str) -> tuple[str, Severity]:
    """What the versions the project pins (else the configured torch-npu-version) say about
    `import torch` loading torch_npu: an error where it may not, info where it does."""
    version = checker.settings.torch_npu_version
    platform = load_platform(version)
    first = min((row["torch-npu"] for row in platform.autoload if row["autoload"]), key=release)
    project = checker.project
    npu_pin = project.pin("torch-npu") if project is not None else None
    torch_pin = project.pin("torch") or project.pin("pytorch") if project is not None else None
    missing = f"`{qualname}` needs `import torch_npu`: "
    relies = (f"`{qualname}` relies on `import torch` loading torch_npu (its `torch.backends` entry point, from "
              f"torch_npu {first}), which TORCH_DEVICE_BACKEND_AUTOLOAD=0 turns off; `import torch_npu` says it. ")
    # a pin that admits what a port to the configured torch-npu-version installs does not hold it back
    target = version if platform.autoloaded(version) is not None else None
    torch, named = ported_torch(version) if target is not None else (None, "")
    if npu_pin is not None:
        if held_before(npu_pin, first, target):
            return (missing + f"the project pins torch-npu `{npu_pin}`, and `import torch` does not load torch_npu "
                    f"before {first} (`torch.npu` raises AttributeError).", Severity.ERROR)
        return relies + f"The project pins torch-npu `{npu_pin}`{_admits(npu_pin, first, version)}.", Severity.INFO
    if torch_pin is not None:
        if held_before(torch_pin, AUTOLOAD_TORCH, torch):
            return (missing + f"the project pins torch `{torch_pin}`, and `import torch` loads no device backend "
                    f"before torch {AUTOLOAD_TORCH} (`torch.npu` raises AttributeError).", Severity.ERROR)
        return (relies + f"The project pins torch `{torch_pin}`{_admits(torch_pin, AUTOLOAD_TORCH, named)} (and no "
                "torch-npu).", Severity.INFO)
    unpinned = "no torch-npu or torch pin found in the project" if project is not None else "no project read"
    if target is None:
        return (missing + f"torch_npu {version} (torch-npu-version; {unpinned}) is not loaded by `import torch` "
                "(`torch.npu` raises AttributeError).", Severity.ERROR)
    return (relies + f"torch-npu-version is {version}; {unpinned}, and a torch_npu before {first} would need the "
            "import.", Severity.INFO)


def ported_torch(version: str) -> tuple[str | None, str]:
    """The torch release paired with torch-npu-version `version` (what a port installs), and how a
    message names it; (None, "") where the registry pairs none."""
    paired = load_platform(version).torch_for(version)
    torch = paired["torch"] if paired is not None else None
    return torch, f"{torch}, torch-npu-version {version}'s torch" if torch else ""


def _admits(pin: str, version: str, target: str) -> str:
    """`, which admits <target>` where the pin admits a release before `version` too (a port installs the
    target where the pin allows it); "" where it does not."""
    return f", which admits {target}: a port to it is not held before {version}" if target and allows_before(pin, version) \
        else ""


# --- compilation (docs/real-world-rules.md, item 2) ------------------------------------------
rule(
    code="NPU111", name="torch-compile-inductor", severity=Severity.WARNING, fix="never",
    message="`{name}` compiles with inductor, which on the NPU needs triton-ascend installed; torch_npu's own "
            "backends `npu`, `npugraph_ex` and `npugraphs` are the alternatives.",
    doc=dict(
        what="Finds `torch.compile(...)` calls (and `@torch.compile`) that use the default `inductor` backend: "
             "no `backend=`, or `backend=\"inductor\"`. Not when the backend is chosen elsewhere (a variable, "
             "`torchair.get_npu_backend()`, `\"npugraph_ex\"`, `\"eager\"`) or `disable=` is passed. Info "
             "where a function binds the result to a name the file never reads again: nothing is compiled. Info "
             "under an `if` whose test names a switch for compiling (`if config.compile:`, `if \"nnUNet_compile\" in "
             "os.environ:`, `if self._enable_torch_compile:`) to which the project's Python files never give `True`: "
             "compiling is then the user's choice. " + OPTION_LEFT_OFF_DOC,
        why="torch_npu registers inductor's code generation for the NPU only when it finds Triton "
            "(`torch.utils._triton.has_triton()`), which on an Ascend host means triton-ascend (it installs the "
            "`triton` package in place of community Triton). Without it torch_npu warns \"triton-ascend is not installed. Please install it first.\" "
            "and registers nothing for the NPU, so inductor has no NPU code generation. The requirement is not "
            "visible in the code, hence a warning that names it. torch_npu also registers three Dynamo backends "
            "of its own: `npu` (TorchAir graph mode; eager when torch_npu was built without torchair), "
            "`npugraph_ex` and `npugraphs`. None is a drop-in equivalent of inductor, so they are named as "
            "choices, not written in. `TORCHINDUCTOR_NPU_BACKEND` chooses inductor's NPU code generator "
            "(`default`, the Triton one; `mlir`, `dvm`, `ascendc`, `triton_experimental`).",
        example='model = torch.compile(model)  # NPU111\n\n# on the NPU: install triton-ascend (not triton),\n'
                '# or choose one of torch_npu\'s backends\n\nmodel = torch.compile(model, backend="npugraph_ex")',
        fix="None automatic: installing triton-ascend is outside the code, and the other backends compile "
            "differently.",
        source=TORCH_NPU_INDUCTOR + "; `third_party_replacements.tsv` (torch.compile row: inductor works on the "
                                    "NPU since TorchNPU 7.3.0).",
    ),
)


def compile_uses_inductor(call: ast.Call) -> bool:
    if any(kw.arg is None or kw.arg == "disable" for kw in call.keywords):
        return False  # `**options` may choose the backend; `disable=` already guards the NPU
    backend = passed(call, "backend")
    return backend is None or constant(backend) == "inductor"


UNUSED_COMPILE = " (Its result `{name}` is never read in this file: nothing is compiled until it is called.)"


def unused_result(checker: Checker, call: ast.Call) -> str | None:
    """The local name `compiled = torch.compile(model)` binds, if the file never reads it again."""
    for stmt, scope in checker.events.assigns:
        if stmt.value is call and scope.kind == FUNCTION and type(stmt) is ast.Assign and len(stmt.targets) == 1 \
                and type(stmt.targets[0]) is ast.Name:
            name = stmt.targets[0].id
            uses = re.findall(rf"(?<![\w.]){re.escape(name)}\b", checker.source.text)
            return name if len(uses) == 1 else None
    return None


COMPILE_SWITCH = (" (Under `if {test}:`, a switch of the project's for compiling: it compiles only where that is "
                  "on, and the project never turns it on in its code. On the NPU keep it off, or install triton-ascend.)")


def compile_switch(checker: Checker, call: ast.Call) -> str | None:
    """The test (as written, on one line) of an `if` around `call`, in its body, that reads a switch for
    compiling (`if config.compile:`, `if "nnUNet_compile" in os.environ and ...:`, `if self._enable_torch_compile:`;
    not a function's answer, `if self._do_i_compile():`), none of whose names the project's Python files ever
    give True (flag_defaults.py)."""
    for block, index in reversed(statement_path(checker, call)):
        stmt = block[index]
        if type(stmt) is not ast.If or not any(inside(call, child) for child in stmt.body):
            continue
        nodes = list(ast.walk(stmt.test))
        callees = [n.func for n in nodes if isinstance(n, ast.Call)]
        names = [n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else last_name(n)
                 for n in nodes if isinstance(n, (ast.Name, ast.Attribute, ast.Constant))]
        if any("compile" in name_words(last_name(callee)) for callee in callees):
            continue  # what a function decides (`if self._do_i_compile():`) may be on by default
        if any("compile" in name_words(name) for name in names) \
                and not (checker.project is not None and checker.project.flags.turns_on(names)):
            return " ".join(checker.source.segment(checker.range(stmt.test)).split())
    return None


def check_torch_compile(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    if qualname == "torch.compile" and compile_uses_inductor(call):
        reason = None
        if (unused := unused_result(checker, call)) is not None:
            reason = UNUSED_COMPILE.format(name=unused)
        elif (off := flag_off(checker, call)) is not None:
            reason = off[1]
        elif (switch := compile_switch(checker, call)) is not None:
            reason = COMPILE_SWITCH.format(test=switch)
        if reason is None:
            checker.report("NPU111", call.func, name="torch.compile")
        else:
            message = checker.rules["NPU111"].message.format(name="torch.compile") + reason
            checker.report("NPU111", call.func, message, severity=Severity.INFO)


def check_compile_decorator(checker: Checker, ref: Reference) -> None:
    """`@torch.compile` without arguments. Other uncalled uses (`original = torch.compile`, a
    wrapper patched in) do not compile anything by themselves."""
    where = checker.range(ref.node)
    if checker.source.line(where.start_line)[:where.start_col].strip() == "@":
        checker.report("NPU111", where, name="torch.compile")


rule(
    code="NPU118", name="inductor-config", severity=Severity.INFO, fix="never", table=REAL_WORLD_TABLE,
    message="`{name}` configures inductor.",
    doc=dict(
        what="Finds uses of `torch._inductor.config` (`triton.cudagraphs`, `coordinate_descent_tuning`, …).",
        why="These settings are read by inductor, which runs on the NPU only with triton-ascend installed "
            "(torch_npu then registers its NPU code generation, NPU111). A setting tuned for CUDA may not apply "
            "to the NPU's code generator: information, to check.",
        example="torch._inductor.config.triton.cudagraphs = True  # NPU118",
        fix="None automatic.",
        source=TORCH_NPU_INDUCTOR + ".",
    ),
)


# --- device selection (item 3) ---------------------------------------------------------------
rule(
    code="NPU112", name="integer-device", severity=Severity.INFO, fix="never",
    message="Device `{name}` is an integer: it means the current accelerator only from torch 2.5 on.",
    doc=dict(
        what="Finds integer devices: `.to(0)`, `torch.device(0)`, `device=0`, `device_map={\"\": 0}`, FSDP's "
             "`device_id=0`. An error where the project's torch pin (requirements files, pyproject.toml, setup.py, "
             "setup.cfg, environment.yml) holds it before 2.5 (it admits an older release and not the torch paired with "
             "the configured `torch-npu-version`, as NPU109 reads it); info otherwise, saying which pin (or that "
             "none was found), in a `device_map`, which the loading library places, and in a test that expects the "
             "call to fail (`with self.assertRaises(...)`, `with pytest.raises(...)`). Only literal integers: a "
             "variable (`device_map={\"\": local_rank}`) is not read.",
        why="Before torch 2.5 an integer device was a CUDA ordinal (\"Torch not compiled with CUDA enabled\" on "
            "an NPU host, Ascend/pytorch#16; DeepSpeed#3933 on torch 2.1). From torch 2.5 (pytorch/pytorch#129119) "
            "it means that index of the current accelerator, so with torch_npu loaded it is the NPU; torch 2.13 "
            "raises \"Cannot access accelerator device when none is available\" where there is none (checked). "
            "Libraries still turn integers into `cuda:N` themselves (transformers#38468, "
            "insanely-fast-whisper#287); accelerate (1.15) turns an integer into `npu:N` where the NPU is "
            "available, and FSDP in torch 2.13 passes `device_id` to `torch.device`. With torch 2.5 or later it "
            "is advice: a device string says what it means on every version.",
        example='x = x.to(0)\n\n# explicit\n\nx = x.to("npu:0")',
        fix="None automatic.",
        source=real_world_citation(5, "NPU112", "Ascend/pytorch#16; huggingface/transformers#38468; m-bain/whisperX#1482; "
                                    "Vaibhavs10/insanely-fast-whisper#287; Comfy-Org/ComfyUI#6483; "
                                    "vllm-project/vllm-ascend#516") +
        "; pytorch/pytorch#129119 (device index alone → current accelerator); torch 2.13.0 `torch.device(0)` "
        "checked on a CPU host; torch 2.13 `torch/distributed/fsdp/_init_utils.py` (`_get_device_from_device_id`); "
        "accelerate 1.15.0.dev0 `utils/modeling.py` (`set_module_tensor_to_device`: an integer becomes "
        "`npu:{device}` when `is_npu_available()`).",
    ),
)


# From this torch release an integer device is that index of the current accelerator
# (pytorch/pytorch#129119); before it, a CUDA ordinal.
ACCELERATOR_INDEX_TORCH = "2.5"
FSDP = "torch.distributed.fsdp.FullyShardedDataParallel"  # its `device_id=` is a device


def integer(node: ast.expr | None) -> TypeGuard[ast.Constant]:
    return type(node) is ast.Constant and type(node.value) is int


def check_integer_device(checker: Checker, call: ast.Call, qualname: str | None) -> None:
    candidates: list[ast.expr] = []
    if qualname == "torch.device" and len(call.args) == 1:
        candidates.append(call.args[0])
    elif type(call.func) is ast.Attribute and call.func.attr == "to" and len(call.args) == 1 and not call.keywords:
        candidates.append(call.args[0])
    device = keyword(call, "device_id" if qualname == FSDP else "device")
    if device is not None:
        candidates.append(device.value)
    mapped: list[ast.expr] = []  # a device_map's: the loading library places the weights
    device_map = keyword(call, "device_map")
    if device_map is not None:
        value = device_map.value
        mapped.extend(value.values if type(value) is ast.Dict else [value])
    for node in (*candidates, *mapped):
        if integer(node):
            message, severity = integer_device_verdict(checker, repr(node.value), node in mapped)
            if severity is Severity.ERROR and expects_error(checker, node):
                severity = Severity.INFO  # a test that the call fails
            checker.report("NPU112", node, message, severity=severity,
                           related=() if node in mapped else pinned_at(checker, "torch", "pytorch"))


EXPECTS_ERROR = re.compile(r"with\s+(?:self\.assertRaises\w*|pytest\.raises)\(")


def expects_error(checker: Checker, node: ast.AST) -> bool:
    """Whether the block holding `node`'s line is a `with self.assertRaises(...)` or
    `with pytest.raises(...)`: the header of the nearest line above indented less."""
    index = checker.range(node).start_line
    line = checker.source.line(index)
    indent = len(line) - len(line.lstrip())
    for above in range(index - 1, max(-1, index - 50), -1):
        text = checker.source.line(above)
        if text.strip() and len(text) - len(text.lstrip()) < indent:
            return EXPECTS_ERROR.match(text.lstrip()) is not None
    return False


def integer_device_verdict(checker: Checker, name: str, mapped: bool) -> tuple[str, Severity]:
    """An error where the project's torch pin holds it to a release before 2.5 (one that admits an
    older release and not the torch paired with the configured torch-npu-version), which reads an
    integer device as a CUDA ordinal; info otherwise, and for a device_map, whose integers
    accelerate turns into `npu:N` itself."""
    project = checker.project
    pin = project.pin("torch") or project.pin("pytorch") if project is not None else None
    if mapped:
        return (checker.rules["NPU112"].message.format(name=name) + " In a device_map accelerate turns it into "
                "`npu:N` where the NPU is available.", Severity.INFO)
    torch, named = ported_torch(checker.settings.torch_npu_version)
    if pin is not None and held_before(pin, ACCELERATOR_INDEX_TORCH, torch):
        return (f"Device `{name}` is an integer: the project pins torch `{pin}`, and before torch "
                f"{ACCELERATOR_INDEX_TORCH} an integer device is a CUDA ordinal (\"Torch not compiled with CUDA "
                "enabled\" on an NPU host); `\"npu:N\"` says the NPU.", Severity.ERROR)
    message = checker.rules["NPU112"].message.format(name=name)
    if pin is not None:
        return f"{message} The project pins torch `{pin}`{_admits(pin, ACCELERATOR_INDEX_TORCH, named)}.", Severity.INFO
    return f"{message} No torch pin found in the project." if project is not None else message, Severity.INFO


rule(
    code="NPU113", name="cuda-or-cpu", severity=Severity.WARNING, fix="never",
    message="`{name}` picks the CPU on an NPU host, silently.",
    doc=dict(
        what="Finds device selection that only knows CUDA: `\"cuda\" if torch.cuda.is_available() else \"cpu\"` "
             "(also with `torch.cuda.device_count()`), assigned or passed as a device. Info where it is the "
             "`map_location` of a `torch.load(...)` or `load_state_dict_from_url(...)` whose state dict only goes "
             "into `.load_state_dict(...)` (not with `assign=True`), directly or through a name used nowhere else in "
             "the function: the module copies each tensor into its own parameters, on whatever device they are "
             "(torch 2.13 `nn/modules/module.py:2495`, `param.copy_(input_param)`), so the CPU is correct there; a "
             "plain `map_location=\"cuda\"` raises without CUDA (NPU101).",
        why="Without `transfer_to_npu`, `torch.cuda.is_available()` is False on an Ascend host, so the program "
            "runs entirely on the CPU with no error: slow training, and NPU-vs-CPU comparisons that compare the "
            "CPU with itself.",
        example='device = "cuda" if torch.cuda.is_available() else "cpu"\n\n# becomes\n\n'
                'device = "npu" if torch.npu.is_available() else "cpu"\n'
                '# or, device-agnostic (torch >= 2.6)\n'
                'device = torch.accelerator.current_accelerator() or torch.device("cpu")',
        fix="None from this rule; NPU101 and NPU103 rewrite the string and the test.",
        source=real_world_citation(7, "NPU113", "m-bain/whisperX#1482; open-compass/opencompass#1618; "
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
        name = checker.source.segment(checker.range(node))
        loaded = state_dict_place(checker, node)  # harmless_calls: a state dict loaded into a module
        text = checker.rules["NPU113"].message.format(name=name) + loaded[1] if loaded else None
        checker.report("NPU113", node, text, name=name, severity=loaded[0] if loaded else None)


def check_cuda_or_cpu_argument(checker: Checker, call: ast.Call, scope: Scope) -> None:
    for node in (*call.args, *(kw.value for kw in call.keywords)):
        if type(node) is ast.IfExp:
            report_cuda_or_cpu(checker, node, scope)


# --- the fork start method (item 5) ----------------------------------------------------------
rule(
    code="NPU114", name="fork-start-method", severity=Severity.WARNING, fix="always",
    message="The `fork` start method cannot re-initialise the NPU in the child process.",
    doc=dict(
        what="Finds the `fork` start method: `multiprocessing.set_start_method(\"fork\")`, `get_context(\"fork\")`, "
             "`multiprocessing_context=\"fork\"`, and `VLLM_WORKER_MULTIPROC_METHOD` set to `fork`. Info on a "
             "branch for another operating system (`if sys.platform == \"darwin\":`): torch_npu is built for "
             "Linux alone (PyPI has no Windows or macOS wheel of torch-npu 2.13.0).",
        why="torch_npu initialises the device early (autoload, `get_soc_version()`, any `torch.npu` call), and a "
            "forked child cannot initialise it again: \"Cannot re-initialize NPU in forked subprocess\". CUDA "
            "frameworks check `torch.cuda.is_initialized()` before forking, which says nothing about the NPU.",
        example='mp.set_start_method("fork")\n\n# becomes\n\nmp.set_start_method("spawn")',
        fix="Unsafe: writes `\"spawn\"`. A spawned child re-imports the main module: the entry point needs an "
            "`if __name__ == \"__main__\":` guard and what is passed to the child must pickle.",
        source=real_world_citation(12, "NPU114", "vllm-project/vllm-omni#2828; vllm-project/vllm-ascend#4502, #3133, #7256; "
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


# --- host tools and probes (item 6) ----------------------------------------------------------
rule(
    code="NPU124", name="gpu-query-tool", severity=Severity.WARNING, fix="sometimes",
    table=TableRef(REAL_WORLD_TABLE.path, ("api", "env")),
    message="`{name}` needs NVIDIA's driver or toolkit.",
    doc=dict(
        what="Finds NVIDIA host tools and probes: running `nvidia-smi` or `nvcc` (`subprocess.*`, `os.system`, "
             "`os.popen`, `shutil.which`), the `pynvml` and `GPUtil` packages, `CUDA_HOME`/`CUDA_PATH` and "
             "`torch.utils.cpp_extension.CUDA_HOME`; in shell launch scripts, the `nvidia-smi` and `nvcc` commands. "
             "Info where the package is imported under `try:` whose handler goes on without it (`except "
             "Exception:` around `import pynvml` and `nvmlInit()`).",
        why="None of them exists on an Ascend host: the command is not found, NVML fails to load, `CUDA_HOME` is "
            "unset. The NPU counterparts are `npu-smi info`, `torch.npu.mem_get_info()`, "
            "`torch.npu.get_device_name()` and `ASCEND_HOME_PATH`/`ASCEND_TOOLKIT_HOME`.",
        example='subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])  # NPU124\n\n'
                '# on the NPU\n\nfree, total = torch.npu.mem_get_info()',
        fix="In a launch script, unsafe: a bare `nvidia-smi` becomes `npu-smi info` and `nvidia-smi -L` "
            "`npu-smi info -l` (their output differs). Otherwise none: `npu-smi` takes other arguments and prints "
            "another format.",
        source=real_world_citation(29, "NPU124", "flagos-ai/FlagGems#4045; XuehaiPan/nvitop#227; opendatalab/MinerU#1695; "
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
    code="NPU126", name="cuda-version-probe", severity=Severity.WARNING, fix="never", table=REAL_WORLD_TABLE,
    message="`{name}` is None on an NPU host.",
    doc=dict(
        what="Finds `torch.version.cuda`. Info where it is only read for a message (a print, a log, an "
             "exception's text), which then says None.",
        why="torch on an Ascend host is a CPU build: `torch.version.cuda` is None. A test of it takes the "
            "non-CUDA branch; parsing it (`float(torch.version.cuda)`) raises.",
        example="if torch.version.cuda >= \"11.8\": ...  # NPU126\n\n# on the NPU\n\n"
                "if torch.npu.is_available(): ...",
        fix="None automatic.",
        source=real_world_citation(29, "NPU124", "opendatalab/MinerU#1695 (code reading the CUDA version and cards must be "
                                     "adapted)") + "; torch 2.13.0+cpu: `torch.version.cuda` is None (checked).",
    ),
)


# --- online operator compilation (chip_features) ---------------------------------------------
rule(
    code="NPU116", name="online-operator-compilation", severity=Severity.INFO, fix="never", table=CHIP_TABLE,
    message="{chips} compile operators online on first use; call "
            "`torch_npu.npu.set_compile_mode(jit_compile=False)` after importing torch_npu.",
    doc=dict(
        what="Finds entry scripts (with `if __name__ == \"__main__\":`) that import torch_npu but never call "
             "`torch_npu.npu.set_compile_mode` when the configured chip compiles operators online by default "
             "(910A, 310P). " + chip_doc("jit-compile"),
        why="There `jit_compile` defaults to True: operators are compiled at first use and the first step "
            "can take minutes (600 s instead of 40 s for a Stable Diffusion image on 310P).",
        example="import torch_npu\n\n# add\n\ntorch_npu.npu.set_compile_mode(jit_compile=False)",
        fix="None automatic: it belongs right after the imports of the entry script.",
        source=real_world_citation(16, "NPU116", "Comfy-Org/ComfyUI#10050, open-mmlab/mmengine#847."),
    ),
)


@handles("reference", "NPU116", names=frozenset(name.rpartition(".")[2] for name in COMPILE_MODE))
def note_compile_mode(checker: Checker, ref: Reference) -> None:
    if ref.qualname in COMPILE_MODE:
        checker.note("set-compile-mode", ref.node)


@handles("import", "NPU116")
def note_torch_npu_import(checker: Checker, stmt: ast.stmt, alias: ast.alias, qualname: str) -> None:
    if "jit-compile" in lacks(checker) and (qualname == "torch_npu" or qualname.startswith("torch_npu.")):
        checker.note("imports-torch-npu", alias)


@handles("string", "NPU116", when=lacking("jit-compile"), contexts=("compare",))
def note_entry_script(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if context.kind == "compare" and value == "__main__":
        checker.note("entry-script", node)


@handles("module", "NPU116")
def check_compile_mode(checker: Checker, facts: dict) -> None:
    if "entry-script" not in facts or "imports-torch-npu" not in facts or "set-compile-mode" in facts:
        return
    feature = applies(checker, "jit-compile")
    if feature is not None:
        checker.report("NPU116", facts["imports-torch-npu"], chips=", ".join(feature.chips), origin=CHIP_TABLE.path,
                       extra={"chip": checker.settings.chip, "chips": list(feature.chips), "feature": feature.name})


# --- dispatch of the rules above from real migrations: one handler per event kind ------------
CALLEE_CHECKS = {
    "torch.compile": check_torch_compile,
    "torch.device": check_integer_device,
    FSDP: check_integer_device,
}
KEYWORD_CHECKS = {
    "device": check_integer_device,
    "device_map": check_integer_device,
}


@handles("reference", "NPU111", "NPU112", "NPU113")
def on_reference(checker: Checker, ref: Reference) -> None:
    call = ref.call
    if type(call) is not ast.Call or call.func is not ref.node:
        if call is None and ref.qualname == "torch.compile":
            check_compile_decorator(checker, ref)
        return
    qualname = ref.qualname
    checks = set()
    check = CALLEE_CHECKS.get(qualname)
    if check is not None:
        checks.add(check)
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


@handles("string", "NPU114", "NPU124", contexts=("arg",))
def on_string(checker: Checker, node: ast.AST, value: str, context: StringContext) -> None:
    if context.kind != "arg" or type(node) is not ast.Constant:
        return
    if context.keyword is not None:
        if context.keyword in START_METHOD_KEYS:
            check_fork(checker, node, value, context)
    elif context.position == 0:
        check_fork(checker, node, value, context)
        check_nvidia_command(checker, node, value, context)


@handles("assign", "NPU113", "NPU114", values=(ast.IfExp, ast.Constant))
def on_assign(checker: Checker, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
    value = node.value
    if type(value) is ast.IfExp:
        report_cuda_or_cpu(checker, value, scope)
    elif type(value) is ast.Constant and type(value.value) is str:
        targets: list[ast.expr] = node.targets if isinstance(node, ast.Assign) else [node.target]
        check_vllm_fork(checker, value.value, targets, value)


# --- shell launch scripts ---------------------------------------------------------------------
LAUNCH_TABLE = TableRef("mappings/platform/launch.toml", ("variable",))

rule(
    code="NPU127", name="cuda-accelerator-variable", severity=Severity.WARNING, fix="always", table=LAUNCH_TABLE,
    message="`{name}` selects CUDA.",
    doc=dict(
        what="Finds environment variables whose value picks CUDA in a launch script: `DS_ACCELERATOR=cuda` "
             "(`export`, a command's prefix, `env`).",
        why="DeepSpeed then uses its CUDA accelerator, which fails on an Ascend host; its accelerator list has "
            "`npu`, and with the variable unset it detects the NPU before CUDA.",
        example="export DS_ACCELERATOR=cuda  # NPU127\n\n# becomes\n\nexport DS_ACCELERATOR=npu",
        fix="Safe: the value becomes `npu`.",
        source="deepspeedai/DeepSpeed accelerator/real_accelerator.py (SUPPORTED_ACCELERATOR_LIST), PR #3831; "
               "mappings/platform/launch.toml.",
    ),
)


@handles("launch", "NPU101", "NPU108", "NPU124", "NPU127")
def check_launch_script(checker: Checker, found: Assignment | Command, script: ShellScript) -> None:
    if isinstance(found, Assignment):
        check_launch_variable(checker, found, script)
    else:
        check_launch_command(checker, found)
        check_device_options(checker, found)


# `cuda`, `cuda:0`, `cuda:$LOCAL_RANK`: torch's device syntax, the type written as is
CUDA_DEVICE_VALUE = re.compile(r"cuda(?::\S+)?")


def check_device_options(checker: Checker, found: Command) -> None:
    """A CUDA device given to a program's `--device` (NPU101, as a device string in Python):
    `python train.py --device cuda:0`, `lm_eval ... --device=cuda`, `trainer.device=cuda`."""
    if not any("cuda" in word.text for word in found.words):
        return
    found_options = options(found, checker.source)
    # vLLM picks its device by its platform (vllm-ascend's on an NPU host), and a program that hands
    # it the work drops the device string (lm_eval 0.4.13 lm_eval/models/vllm_causallms.py:107-113)
    vllm = next((o for o in found_options if o.value == "vllm"), None)
    for option in found_options:
        if option.name.rpartition(".")[2] != "device" or not CUDA_DEVICE_VALUE.fullmatch(option.value):
            continue
        entry = next(e for e in checker.tables.literals if e.kind == "device" and e.name == "cuda")
        new = entry.replacement + option.value[4:]
        text = checker.rules["NPU101"].message.format(name=option.value) + \
            f" `{option.owner}` reads it as its `{option.name}` option,"
        fixes: tuple[Fix, ...] = ()
        if vllm is not None:
            text += (f" and runs vLLM (its `{vllm.name}` is `vllm`), which chooses its device itself (vllm-ascend's on an NPU "
                     "host) and is handed no device string.")
        else:
            text += (f" a torch device that fails on a host without CUDA. Use `{new}`; review it: the program may "
                     "accept only the devices it lists.")
            written = checker.source.segment(option.range)
            fix = checker.fix(f"Replace `{option.value}` with `{new}`", Applicability.UNSAFE,
                              checker.replace(option.range, written.replace("cuda", entry.replacement, 1)))
            fixes = styled(checker, fix, None, None)[0]
        checker.report("NPU101", option.range, text, fixes, origin=entry.origin,
                       severity=Severity.INFO if vllm is not None else None,
                       extra={"api": option.value, "replacement": new, "note": entry.note, "source": entry.source})


def check_launch_variable(checker: Checker, found: Assignment, script: ShellScript) -> None:
    """The same env.toml rows as `os.environ[...]` in Python, then launch.toml's."""
    entry = checker.tables.env.get(found.name)
    if entry is not None:
        # forcing the CPU is harmless where torch_npu ignores the variable, and not what
        # ASCEND_RT_VISIBLE_DEVICES should say unasked
        if found.name == "CUDA_VISIBLE_DEVICES" and found.literal and found.value.strip() in CPU_ONLY:
            return
        if not entry.replacement and hccl_twin_set(found.name, script):
            return
        fix = portable = None
        form = form_of("env", found.name)
        if entry.value_scale is not None and entry.replacement and entry.fix is not None:
            fix, why = scaled_fix(checker, found, script, entry.replacement, entry.value_scale,
                                  Applicability(entry.fix))
            report_entry(checker, entry, found.name_range, found.name, entry.replacement, fix, None, None,
                         (None, why) if why else None)
            return
        if entry.replacement and entry.fix is not None:
            fix = checker.fix(f"Replace `{found.name}` with `{entry.replacement}`", Applicability(entry.fix),
                              *renamed(checker, found, script, entry.replacement))
            if form is not None:
                portable = checker.fix(f"{PORTABLY}Replace `{found.name}` with `{form.replacement}`",
                                       Applicability(entry.fix), *renamed(checker, found, script, form.replacement))
        report_entry(checker, entry, found.name_range, found.name, entry.replacement, fix, portable, form)
        return
    row = load_launch().variable(found.name, found.value if found.literal else "")
    if row is None or (not row.get("replacement") and hccl_twin_set(found.name, script)):
        return
    # a row with a value reports the assignment (`DS_ACCELERATOR=cuda`, `FORCE_CUDA=1`), and its fix the value
    by_value = "value" in row
    name = f"{found.name}={found.value}" if by_value else found.name
    text = checker.rules[row["rule"]].message.format(name=name)
    fixes: tuple[Fix, ...] = ()
    if row.get("replacement"):
        text += f" Use `{row['replacement']}`."
        new = f"{found.name}={row['replacement']}" if by_value else row["replacement"]
        edits = [checker.replace(found.value_range, row["replacement"])] if by_value else \
            renamed(checker, found, script, row["replacement"])
        fixes = (checker.fix(f"Replace `{name}` with `{new}`", Applicability(row["fix"]), *edits),)
    checker.report(row["rule"], found.range if by_value else found.name_range, f"{text} {row['note']}", fixes,
                   origin=LAUNCH_TABLE.path, severity=Severity.parse(row["severity"]) if row.get("severity") else None,
                   extra={"note": row["note"], "source": row["source"]})


# A value's text that is a number alone: its digits, in one pair of quotes at most (spaces inside them).
WRITTEN_NUMBER = re.compile(r"""(?P<quote>["'])?(?(quote)\s*)(?P<digits>[0-9]+)(?(quote)\s*(?P=quote))""")


def renamed(checker: Checker, found: Assignment, script: ShellScript, new: str) -> list[Edit]:
    """The edits that rename the assigned variable: its name, and the script's declarations of
    the name without a value (`NCCL_X=1` then `export NCCL_X` on a line of its own), which would
    export a variable no longer set."""
    return [checker.replace(found.name_range, new),
            *(checker.replace(where, new) for name, where in script.declared if name == found.name)]


def scaled_fix(checker: Checker, found: Assignment, script: ShellScript, replacement: str, scale: tuple[int, int],
               applicability: Applicability) -> tuple[Fix | None, str]:
    """The rename of a variable whose replacement reads its value in a larger unit, with the
    value converted (`NCCL_BUFFSIZE=4194304` → `HCCL_BUFFSIZE=4`) where its text is the digits
    alone, in one pair of quotes at most (a Dockerfile's legacy `ENV NAME "4194304"` too): the
    digits are what is replaced. Any other value (`"4194"304`, a `\\` line continuation), no fix
    and why."""
    written = checker.source.segment(found.value_range)
    number = WRITTEN_NUMBER.fullmatch(written)
    digits = number.group("digits") if number is not None else " ".join(written.split())  # shown on one line
    value, why = scaled_value(digits, *scale)
    if value is None:
        return None, f" No fix: {why}."
    start, end = number.span("digits")
    return checker.fix(f"Replace `{found.name}={digits}` with `{replacement}={value}`", applicability,
                       *renamed(checker, found, script, replacement),
                       checker.replace(found.value_range, written[:start] + value + written[end:])), ""


def hccl_twin_set(name: str, script: ShellScript) -> bool:
    """Whether the script sets HCCL's own variable of an NCCL variable's name (`HCCL_DETERMINISTIC=true`
    beside `NCCL_DETERMINISTIC=1`): written for both, where "no effect on Ascend" asks nothing. Only for
    variables no source renames: `CUDA_VISIBLE_DEVICES=0 cmd` still differs from an ASCEND_RT_… set above."""
    return name.startswith("NCCL_") and any(other.name == "HCCL_" + name[5:] for other in script.assignments)


def check_launch_command(checker: Checker, found: Command) -> None:
    """NVIDIA's host commands (NPU124, as when Python runs them)."""
    program = found.program
    if program not in NVIDIA_COMMANDS or not found.words[0].literal:
        return
    row = load_launch().command(program, [w.text for w in found.words[1:]])
    if row is None:
        return
    text = checker.rules["NPU124"].message.format(name=program)
    fixes: tuple[Fix, ...] = ()
    if row.get("replacement"):
        text += f" Use `{row['replacement']}`."
        fixes = (checker.fix(f"Replace with `{row['replacement']}`", Applicability(row["fix"]),
                             checker.replace(found.range, row["replacement"])),)
    checker.report("NPU124", found.words[0].range, f"{text} {row['note']}", fixes, origin=LAUNCH_TABLE.path,
                   extra={"note": row["note"], "source": row["source"]})
