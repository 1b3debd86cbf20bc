"""NPU6xx: performance advice — what Ascend's msprof-analyze advisor and msFmkTransplt
would recommend after a profile, where the source already shows it: fused APIs for
hand-written operator sequences, fused optimizers, msFmkTransplt's affinity APIs,
dataloader settings, host synchronisation in the training loop, debug switches left on,
environment variables. All `info`; the noisy ones are opt-in."""

from __future__ import annotations

import ast

from ..engine.checker import Checker, Reference
from ..engine.model import Applicability, Range, Severity
from ..knowledge.api_tables import Tables
from ..engine.walk import Scope, child_nodes
from .advice_matching import (ADVICE_TABLE, DATALOADERS, NESTED, ON_BY_DEFAULT, Calls, Own, argument, assignments, call_name,
                              callee_of, inside, literal, open_ended, own_code, position, reaches, rows, subtree)
from ..engine.registry import handles, rule
from .citations import ASCEND_TOOLS

ADVISOR = "Ascend/mstt msprof-analyze advisor"
TRANSPLT = "Ascend/mstt msFmkTransplt"

rule(
    code="NPU601", name="fused-optimizer", severity=Severity.INFO, fix="sometimes", table=ADVICE_TABLE,
    message="`{name}` has a fused NPU counterpart `{replacement}` (CANN >= {cann}). {note}",
    doc=dict(
        what="Finds calls of `torch.optim.Adam`, `AdamW`, `SGD`, `RMSprop` and `Adadelta` (not those passing "
             "`fused=`, which already choose a fused kernel). "
             + ON_BY_DEFAULT + "the advisor reports every such optimizer "
             "as replaceable, and the call is exactly what it names.",
        why="The profiler advisor (`timeline_fusion_ops.yaml`, Optimizer rules since CANN 6.3.RC2) and msFmkTransplt "
            "recommend `torch_npu.optim.NpuFused*`: it combines all parameters and gradients into a few contiguous "
            "buffers and updates them with one kernel, instead of one small kernel per parameter.",
        example="opt = torch.optim.AdamW(model.parameters(), lr=1e-4)\n\n# becomes\n\nimport torch_npu\n"
                "opt = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-4)",
        fix="Unsafe, and only when every argument is one the fused class accepts (read from the torch_npu 2.13.0 "
            "wheel): the fused optimizers take float32 and float16 parameters only (bfloat16 raises TypeError), lack "
            "`foreach`/`maximize`/`capturable`/`differentiable`/`fused`, combine gradients (clip them with "
            "`optimizer.clip_grad_norm_fused_`), and use more device memory (msFmkTransplt's doc: about 70% more). "
            "`NpuFusedSGD` needs `lr`. For AdamW, `fused=True` also runs on an NPU kernel in torch_npu 2.13.0.",
        source=f"{ADVISOR} rules/timeline_fusion_ops.yaml (Optimizer), doc/Samples of Fused Operator API "
               f"Replacement.md; {TRANSPLT} resource/precision_performance_advice.json (api_performance_dict) "
               f"{ASCEND_TOOLS}; "
               "torch_npu 2.13.0 wheel torch_npu/optim/npu_fused_*.py.",
    ),
)

rule(
    code="NPU602", name="fused-rms-norm", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    message="Hand-written RMSNorm: `{replacement}` fuses it (CANN >= {cann}). {note}",
    doc=dict(
        what="Finds `rsqrt(mean(x²) + eps)` — `x.pow(2).mean(-1, keepdim=True)`, `x * x`, `x ** 2`, `x.square()` — "
             "directly or through a local variable, in one function; not a variance (`mean((x - m)²)`, "
             "`mean(x²) - m²`), which is LayerNorm's. " + ON_BY_DEFAULT + "the shape is RMSNorm's and nothing "
             "else's.",
        why="The advisor matches the operator sequence `pow-mean-add-rsqrt-mul` in a profile and recommends "
            "`torch_npu.npu_rms_norm`, one kernel instead of five.",
        example="variance = x.pow(2).mean(-1, keepdim=True)\nx = x * torch.rsqrt(variance + eps)  # NPU602\n\n"
                "# on the NPU\n\nx = torch_npu.npu_rms_norm(x, weight, epsilon=eps)[0]",
        fix="None automatic: the fused call replaces the whole module body and takes the weight.",
        source=f"{ADVISOR} rules/timeline_fusion_ops.yaml (torch_npu.npu_rms_norm, rule set of CANN 7.0.0), "
               f"doc/Samples of Fused Operator API Replacement.md {ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU603", name="fused-rotary-embedding", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    message="Hand-written rotary embedding (`rotate_half`): `{replacement}` fuses it (CANN >= {cann}). {note}",
    doc=dict(
        what="Finds `torch.cat((-x2, x1), dim=-1)` (or `concat`, `concatenate`, under any name they are imported "
             "as), the `rotate_half` step of rotary position embeddings, wherever it is called: a function, a "
             "lambda, module level. "
             + ON_BY_DEFAULT + "concatenating a negated half before the other half on the last axis is this operation.",
        why="The advisor matches `chunk/slice-neg-cat-mul-add` and recommends `torch_npu.npu_rotary_mul`, which "
            "computes `x * cos + rotate_half(x) * sin` in one kernel.",
        example="def rotate_half(x):\n    x1, x2 = x.chunk(2, dim=-1)\n    return torch.cat((-x2, x1), dim=-1)  "
                "# NPU603\n\n# on the NPU\n\nq = torch_npu.npu_rotary_mul(q, cos, sin)",
        fix="None automatic: the fused call replaces `apply_rotary_pos_emb`, not `rotate_half`.",
        source=f"{ADVISOR} rules/timeline_fusion_ops.yaml (torch_npu.npu_rotary_mul, rule set of CANN 7.0.RC1) "
               f"{ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU604", name="fused-swiglu", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    message="Hand-written SwiGLU: `{replacement}` fuses it (CANN >= {cann}). {note}",
    doc=dict(
        what="Finds `silu(a) * b` where `a` and `b` are the two halves of one tensor (`a, b = x.chunk(2, -1)`, "
             "`x[..., :d]` and `x[..., d:]`). Not `act(gate(x)) * up(x)` with two projections, which the advisor's "
             "pattern (a slice or chunk first) does not match either. " + ON_BY_DEFAULT + "the shape is SwiGLU's.",
        why="The advisor matches `slice/chunk-silu-mul` and recommends `torch_npu.npu_swiglu`.",
        example="a, b = x.chunk(2, dim=-1)\ny = F.silu(a) * b  # NPU604\n\n# on the NPU\n\n"
                "y = torch_npu.npu_swiglu(x, dim=-1)",
        fix="None automatic.",
        source=f"{ADVISOR} rules/timeline_fusion_ops.yaml (torch_npu.npu_swiglu, rule set of CANN 7.0.0) "
               f"{ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU605", name="fused-attention", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    message="Attention written as softmax(q @ kᵀ) @ v: `{replacement}` fuses it (CANN >= {cann}). {note}",
    doc=dict(
        what="Finds a `softmax` whose input comes from a matrix product (`@`, `matmul`, `bmm`, `einsum`) and whose "
             "output feeds another one, in one function. `F.scaled_dot_product_attention` is not reported: "
             "the torch_npu 2.13.0 wheel registers an NPU kernel for it. "
             + ON_BY_DEFAULT + "the data flow is attention's.",
        why="The advisor matches `matmul-[add]-[mul]-[masked_fill]-softmax-[dropout]-matmul` and recommends "
            "`torch_npu.npu_fusion_attention` (flash attention: no S×S score matrix in device memory).",
        example="scores = q @ k.transpose(-2, -1) / math.sqrt(d)\nattn = scores.softmax(-1)  # NPU605\nout = attn @ v"
                "\n\n# on the NPU\n\nout = F.scaled_dot_product_attention(q, k, v)",
        fix="None automatic: masks, dropout and layouts differ per model.",
        source=f"{ADVISOR} rules/timeline_fusion_ops.yaml (torch_npu.npu_fusion_attention, rule set of CANN "
               f"7.0.RC1) {ASCEND_TOOLS}; torch_npu 2.13.0 wheel libtorch_npu.so (NPU kernel for "
               "scaled_dot_product_attention).",
    ),
)

rule(
    code="NPU606", name="affinity-torch-api", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    opt_in="msFmkTransplt lists every `torch.matmul`, `torch.roll` and `torch.nn.SiLU` call; most are not hot",
    message="`{name}` has an msFmkTransplt affinity API.",
    doc=dict(
        what="Finds `torch.matmul`, `torch.roll` and `torch.nn.SiLU` as msFmkTransplt's affinity analysis does: "
             "the qualified name after resolving imports equals the list's name exactly, so `a.matmul(b)`, `a @ b` "
             "and `F.silu` are not reported.",
        why="msFmkTransplt's `affinity_api_call.csv` lists these calls with a `torch_npu.contrib` replacement that "
            "runs better on the NPU.",
        example="y = torch.matmul(a, b.transpose(-1, -2))  # NPU606\n\n"
                "y = torch_npu.contrib.function.matmul_transpose(a, b)",
        fix="None automatic (display only): the contrib functions take different arguments.",
        source=f"{TRANSPLT} resource/affinity_list_1_11_0.json (\"torch\"), analysis/affinity_api_analysis/"
               f"affinity_api_visitor.py (visit_Call) {ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU607", name="affinity-definition", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    message="`{name}` matches msFmkTransplt's affinity API list: consider `{replacement}`.",
    doc=dict(
        what="Finds a function or class defined with exactly the name and parameter names msFmkTransplt's "
             "affinity list gives (for a class, its `__init__` and `forward` parameters; a missing method counts "
             "as no parameters; the base class is not checked), as its libcst visitor does. msFmkTransplt then "
             "reports the calls it resolves to that definition; a per-file checker reports the definition. "
             + ON_BY_DEFAULT + "the exact parameter lists leave no room for a different function.",
        why="These are fairseq, mmdet, YOLOv5 and timm building blocks that `torch_npu.contrib` reimplements for "
            "the NPU.",
        example="class DropPath(nn.Module):  # NPU607\n    def __init__(self, drop_prob): ...\n"
                "    def forward(self, x): ...\n\n# use torch_npu.contrib.module.NpuDropPath",
        fix="None automatic.",
        source=f"{TRANSPLT} resource/affinity_list_1_11_0.json (\"function\", \"class\"), analysis/"
               f"affinity_api_analysis/affinity_api_visitor.py (visit_FunctionDef, visit_ClassDef) {ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU608", name="affinity-index-put", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    opt_in="the pattern `a[b] = c` of bare names is also every dict and list store",
    message="`{name}`: msFmkTransplt suggests `{replacement}` for a masked store.",
    doc=dict(
        what="Finds the assignment msFmkTransplt hard-codes: one target `name[name]` and a bare name as value "
             "(`x[mask] = y`; not `x[mask] = 0`, `x[a > 0] = y` or `self.x[m] = y`).",
        why="msFmkTransplt reports it as Api Type `special`: an index-put with a boolean mask runs on the AI CPU; "
            "`npu_fast_condition_index_put` keeps it on the AI Core.",
        example="x[mask] = value  # NPU608\n\n"
                "x = torch_npu.contrib.function.npu_fast_condition_index_put(x, mask, value)",
        fix="None automatic: only a boolean-tensor index qualifies, which the source does not show.",
        source=f"{TRANSPLT} analysis/affinity_api_analysis/affinity_api_visitor.py (visit_Assign) {ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU610", name="dataloader-settings", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    message="DataLoader {problems} feeds a training loop: {advice}",
    doc=dict(
        what="Finds `torch.utils.data.DataLoader(...)` without `pin_memory=True` (missing or literal `False`) or "
             "with `num_workers` missing or `0`, assigned to a name (`train_loader = ...`, `self.loader = ...`) that "
             "a training loop in the same file iterates (`for x in train_loader`, `enumerate(self.loader)`). "
             "Arguments passed as `**kwargs` or through variables are not judged (msFmkTransplt compares the "
             "source text, so it flags `pin_memory=args.pin` too). "
             + ON_BY_DEFAULT + "the loader feeds the training step, "
             "and the arguments are read, not guessed.",
        why="The advisor's slow-dataloader rule and msFmkTransplt both ask for pinned host memory (faster, "
            "asynchronous copies to the device) and worker processes (loading overlapped with the step).",
        example="loader = DataLoader(ds, batch_size=32)  # NPU610\n\n"
                "loader = DataLoader(ds, batch_size=32, num_workers=8, pin_memory=True)",
        fix="None automatic: the number of workers depends on the host.",
        source=f"{ADVISOR} rules/en/dataloader.yaml; {TRANSPLT} resource/precision_performance_advice.json "
               f"(api_parameters_performance_dict) {ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU611", name="host-sync-in-training-loop", severity=Severity.INFO, fix="never",
    message="`{name}` waits for the device in every training step.",
    doc=dict(
        what="Finds, inside the innermost loop that runs a training step (`.backward()` or `optimizer.step()`), "
             "calls that copy a result to the host or wait for the device: `.item()`, `.cpu()`, `.numpy()`, "
             "`.tolist()`, `torch.npu.synchronize()`/`torch.cuda.synchronize()`, and `print` of the loss. Not "
             "inside an `if` whose test uses `%` (logging every N steps), and not `.numpy()`/`.item()` on the "
             "result of one already reported. " + ON_BY_DEFAULT + "each is a host-device synchronisation per step.",
        why="The NPU runs operators asynchronously from a task queue; a synchronisation stalls the host until the "
            "queue drains, so the next step's operators are not dispatched in time. The advisor reports "
            "`aclrtSynchronizeDevice` calls in the step and asks to remove them.",
        example="for x, y in loader:\n    loss = model(x, y)\n    loss.backward()\n    opt.step()\n"
                "    total += loss.item()  # NPU611\n\n# accumulate on the device, read it once\n\n"
                "    total += loss.detach()\nprint(total.item())",
        fix="None automatic.",
        source=f"{ADVISOR} advisor_backend/timeline_advice/op_schedule_advice.py (device synchronize), "
               f"rules/en/synchronize.yaml {ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU612", name="anomaly-detection-on", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    message="`{name}` checks every backward operator: {advice}",
    doc=dict(
        what="Finds `torch.autograd.set_detect_anomaly(True)` and `torch.autograd.detect_anomaly()`. "
             + ON_BY_DEFAULT + "these are debugging switches.",
        why="msFmkTransplt lists them as overflow/anomaly checking APIs to delete for performance: anomaly mode "
            "records a stack for every forward operator and checks every backward result for NaN.",
        example="torch.autograd.set_detect_anomaly(True)  # NPU612",
        fix="None automatic: remove it once the debugging is done.",
        source=f"{TRANSPLT} resource/precision_performance_advice.json (api_performance_dict) {ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU613", name="ddp-bucket-size", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    opt_in="msFmkTransplt's 500 MB is a blanket value, not a measurement of this model",
    message="DistributedDataParallel without `bucket_cap_mb`: {advice}",
    doc=dict(
        what="Finds `torch.nn.parallel.DistributedDataParallel(...)` that does not pass `bucket_cap_mb` (calls with "
             "`**kwargs` are not judged).",
        why="msFmkTransplt recommends `bucket_cap_mb=500` (PyTorch's default is 25) so HCCL all-reduces fewer, "
            "larger buckets.",
        example="model = DDP(model, device_ids=[rank])  # NPU613\n\n"
                "model = DDP(model, device_ids=[rank], bucket_cap_mb=500)",
        fix="None automatic.",
        source=f"{TRANSPLT} resource/precision_performance_advice.json (api_parameters_performance_dict) "
               f"{ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU614", name="performance-env-var", severity=Severity.INFO, fix="never", table=ADVICE_TABLE,
    message="`{name}={value}`: {advice} ({setting})",
    doc=dict(
        what="Finds environment variables set in Python (`os.environ[...] = `, `setdefault`, `update`, "
             "`os.putenv`) to a value the advisor reports: `ASCEND_LAUNCH_BLOCKING=1`, `TASK_QUEUE_ENABLE=0`, "
             "`PYTORCH_NPU_ALLOC_CONF` without `expandable_segments:True`, `ASCEND_GLOBAL_LOG_LEVEL` other than 3, "
             "`HCCL_ALGO` set, `ACLNN_CACHE_LIMIT` below 10000, `HOST_CACHE_CAPACITY=0`. Only literal values are "
             "judged. " + ON_BY_DEFAULT + "the value is the one the advisor's checker flags.",
        why="The advisor's environment-variable checker evaluates these conditions on the variables recorded in a "
            "profile; msFmkTransplt always recommends `TASK_QUEUE_ENABLE=1`.",
        example='os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"  # NPU614: synchronous operators',
        fix="None automatic: a blocking launch may be wanted while debugging.",
        source=f"{ADVISOR} rules/en/environment_variable_info.yaml, analyzer/overall/environment_variable_checker.py; "
               f"{TRANSPLT} resource/precision_performance_advice.json (performance_configuration_dict) "
               f"{ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU615", name="cube-alignment", severity=Severity.INFO, fix="never",
    opt_in="the advisor only reports operators over 100 MB, which a literal shape does not show",
    message="`{name}` has a dimension of {value}, not a multiple of 256: matrix units run best on multiples of 256.",
    doc=dict(
        what="Finds `torch.nn.Linear(in, out)` with a literal dimension that is not a multiple of 256.",
        why="The advisor's AI Core performance check marks matmul operators whose inner axes are not multiples "
            "of 256 as not cube-affine (`INNER_AXIS_256`), for operators over 100 MB.",
        example="proj = nn.Linear(1000, 4000)  # NPU615",
        fix="None automatic: padding a dimension changes the model.",
        source=f"{ADVISOR} rules/en/aicore_performance.yaml and its checker {ASCEND_TOOLS}.",
    ),
)

rule(
    code="NPU616", name="empty-cache-in-training-loop", severity=Severity.INFO, fix="never",
    message="`{name}` in the training loop frees and re-allocates device memory every step.",
    doc=dict(
        what="Finds `torch.npu.empty_cache()`/`torch.cuda.empty_cache()` inside the innermost loop that runs a "
             "training step. " + ON_BY_DEFAULT + "the call is there.",
        why="The advisor's memory rule reports long `aclrtFree` time and asks to remove `empty_cache` calls: the "
            "caching allocator has to get the memory back from the driver on the next step.",
        example="for batch in loader:\n    ...\n    loss.backward()\n    torch.cuda.empty_cache()  # NPU616",
        fix="None automatic.",
        source=f"{ADVISOR} rules/en/memory.yaml (aclrtFree) {ASCEND_TOOLS}.",
    ),
)


def _advice(checker: Checker, section: str, key: str, name: str) -> dict | None:
    found = rows(checker, section, key).get(name)
    return found[0] if found else None


# --- calls --------------------------------------------------------------------------------
DDP = ("torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel")
ANOMALY = {"torch.autograd.set_detect_anomaly": "torch.autograd.set_detect_anomaly",
           "torch.autograd.anomaly_mode.set_detect_anomaly": "torch.autograd.set_detect_anomaly",
           "torch.autograd.detect_anomaly": "torch.autograd.detect_anomaly",
           "torch.autograd.anomaly_mode.detect_anomaly": "torch.autograd.detect_anomaly"}
ENV_SETTERS = ("os.environ.setdefault", "os.putenv", "os.environ.update")
LINEAR = ("torch.nn.Linear", "torch.nn.modules.linear.Linear")
CALL_NAMES = frozenset({"Adam", "AdamW", "SGD", "RMSprop", "Adadelta", "set_detect_anomaly", "detect_anomaly",
                        "setdefault", "putenv", "update"})


@handles("reference", "NPU601", "NPU612", "NPU614", names=CALL_NAMES)
def check_call(checker: Checker, ref: Reference) -> None:
    """Calls of resolved APIs (a reference event: cheaper than every call)."""
    call = callee_of(ref, CALL_NAMES)
    if call is None:
        return
    qualname = ref.qualname
    if qualname.startswith("torch.optim."):
        _optimizer(checker, call, qualname)
    elif qualname in ANOMALY:
        _anomaly(checker, call, ANOMALY[qualname])
    elif qualname in ENV_SETTERS:
        _env_call(checker, call, qualname)


# Opt-in rules of calls most models make (every `Linear`): handlers of their own, not run by default.
DDP_NAMES, LINEAR_NAMES = frozenset({"DistributedDataParallel"}), frozenset({"Linear"})


@handles("reference", "NPU613", names=DDP_NAMES)
def check_ddp(checker: Checker, ref: Reference) -> None:
    call = callee_of(ref, DDP_NAMES)
    if call is not None and ref.qualname in DDP:
        if not open_ended(call) and not argument(call, "bucket_cap_mb", 6)[0]:
            row = _advice(checker, "parameter", "api", DDP[0])
            checker.report("NPU613", call.func, advice=row["advice"] if row else "")


@handles("reference", "NPU615", names=LINEAR_NAMES)
def check_linear(checker: Checker, ref: Reference) -> None:
    call = callee_of(ref, LINEAR_NAMES)
    if call is not None and ref.qualname in LINEAR:
        for position, keyword in ((0, "in_features"), (1, "out_features")):
            value = literal(argument(call, keyword, position)[1])
            if type(value) is int and value % 256:
                checker.report("NPU615", call, name=ref.qualname, value=value)
                return


def _optimizer(checker: Checker, call: ast.Call, qualname: str) -> None:
    row = _advice(checker, "optimizer", "name", qualname)
    if row is None or argument(call, "fused", None)[0]:
        return
    fix = None
    accepted = row["parameters"]
    fits = (not open_ended(call) and len(call.args) <= len(accepted)
            and all(kw.arg in accepted for kw in call.keywords)
            and (row["name"] != "torch.optim.SGD" or argument(call, "lr", 1)[0]))
    if fits:
        fix = checker.fix(f"Use `{row['replacement']}`", Applicability.UNSAFE,
                          checker.replace(call.func, row["replacement"]), checker.require_name("torch_npu"))
    checker.report("NPU601", call.func, fixes=(fix,) if fix else (), name=qualname, replacement=row["replacement"],
                   cann=row["cann"], note=row["note"])


def _may_be_dataloader(checker: Checker, func: ast.expr) -> bool:
    """A cheap test before resolving the callee: `DataLoader(...)`, `data.DataLoader(...)`,
    or a name imported as DataLoader under another name."""
    if type(func) is ast.Attribute:
        return func.attr == "DataLoader"
    if type(func) is ast.Name:
        return func.id == "DataLoader" or checker.module.scope.imports.get(func.id, "").endswith(".DataLoader")
    return False


def _dataloader(checker: Checker, call: ast.Call, name: str) -> None:
    """Note what a DataLoader assigned to `name` lacks; the module handler reports it if a
    training loop iterates `name`."""
    if open_ended(call):
        return
    problems = []
    for row in rows(checker, "parameter", "api").get(DATALOADERS[0], ()):
        passed, value = argument(call, row["parameter"], row["position"] - 1)
        if not passed:
            problems.append(f"without `{row['parameter']}`")
        elif "expected" in row and literal(value) is False:
            problems.append(f"with `{row['parameter']}=False`")
        elif "unexpected" in row and literal(value) == int(row["unexpected"]):
            problems.append(f"with `{row['parameter']}={row['unexpected']}`")
    if problems:
        checker.note(f"NPU610 {' and '.join(problems)} @{call.lineno}:{call.col_offset} ={name}", call.func)


def _anomaly(checker: Checker, call: ast.Call, name: str) -> None:
    if name.endswith("set_detect_anomaly"):
        passed, mode = argument(call, "mode", 0)
        if not passed or literal(mode) is not True:
            return
    row = _advice(checker, "parameter", "api", name)
    checker.report("NPU612", call, name=name, advice=row["advice"] if row else "")


# --- environment variables ------------------------------------------------------------------
def _env_value(value: ast.expr | None) -> str | None:
    found = literal(value)
    return found if type(found) is str else None


def _judge_env(checker: Checker, where: ast.AST, name: str, value_node: ast.expr | None) -> None:
    row = _advice(checker, "env-advice", "name", name)
    if row is None:
        return
    value = _env_value(value_node)
    condition, expected = row["condition"], row["value"]
    if condition == "set":
        hit = True
    elif value is None:
        return
    elif condition == "equals":
        hit = value.strip() == expected
    elif condition == "not-equals":
        hit = value.strip() != expected
    elif condition == "not-contains":
        hit = expected not in value.replace(" ", "")
    else:  # below
        hit = value.strip().isdigit() and int(value) < int(expected)
    if hit:
        checker.report("NPU614", where, name=name, value=value if value is not None else "…", advice=row["advice"],
                       setting=row["setting"])


def _env_call(checker: Checker, call: ast.Call, qualname: str) -> None:
    if qualname == "os.environ.update":
        pairs = []
        if call.args and type(call.args[0]) is ast.Dict:
            pairs = list(zip(call.args[0].keys, call.args[0].values))
        pairs += [(ast.Constant(kw.arg), kw.value) for kw in call.keywords if kw.arg]
        for key, value in pairs:
            if type(key) is ast.Constant and type(key.value) is str:
                _judge_env(checker, value if hasattr(value, "lineno") else call, key.value, value)
        return
    if len(call.args) == 2 and type(call.args[0]) is ast.Constant and type(call.args[0].value) is str:
        _judge_env(checker, call, call.args[0].value, call.args[1])


@handles("assign", "NPU610", "NPU614", words=("DataLoader", "environ"))
def check_assign(checker: Checker, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
    if type(node) is not ast.Assign or len(node.targets) != 1:
        return
    target = node.targets[0]
    if isinstance(target, (ast.Name, ast.Attribute)):
        value = node.value
        if type(value) is ast.Call and _may_be_dataloader(checker, value.func) \
                and checker.qualname(value.func, scope) in DATALOADERS:
            _dataloader(checker, value, target.id if isinstance(target, ast.Name) else target.attr)
        return
    if type(target) is ast.Subscript and type(target.slice) is ast.Constant and type(target.slice.value) is str \
            and checker.qualname(target.value, scope) == "os.environ":
        _judge_env(checker, node, target.slice.value, node.value)


@handles("assign", "NPU608")
def check_item_assign(checker: Checker, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
    """`a[i] = b`, names all: msFmkTransplt's special affinity pattern."""
    if type(node) is not ast.Assign or len(node.targets) != 1 or type(node.targets[0]) is not ast.Subscript:
        return
    target = node.targets[0]
    if type(target.value) is ast.Name and type(target.slice) is ast.Name and type(node.value) is ast.Name:
        special = next(iter(rows(checker, "affinity", "kind").get("special", ())), None)
        if special is not None:
            checker.report("NPU608", node, name=f"{target.value.id}[{target.slice.id}] = {node.value.id}",
                           replacement=special["replacement"])


# --- msFmkTransplt affinity definitions ------------------------------------------------------
def _parameters(func: ast.FunctionDef | ast.AsyncFunctionDef | None) -> list[str]:
    if func is None:
        return []
    args = func.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


@handles("base", "NPU607")
def check_class(checker: Checker, ref: Reference) -> None:
    cls = ref.call
    if type(cls) is not ast.ClassDef or ref.node is not cls.bases[0]:
        return
    for row in rows(checker, "affinity", "name").get(cls.name, ()):
        if row["kind"] != "class":
            continue
        methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if (_parameters(methods.get("__init__")) == row["parameters"]
                and _parameters(methods.get("forward")) == row["forward-parameters"]):
            checker.report("NPU607", cls.bases[0], name=cls.name, replacement=row["replacement"])


# --- fused operator patterns, read per function -------------------------------------------
def _report_fused(checker: Checker, code: str, node: ast.AST) -> None:
    row = rows(checker, "fused", "rule").get(code, [{"replacement": "", "cann": "", "note": ""}])[0]
    checker.report(code, node, replacement=row["replacement"], cann=row["cann"], note=row["note"])


def _is_square(node: ast.AST) -> bool:
    if type(node) is ast.BinOp:
        if type(node.op) is ast.Pow:
            return literal(node.right) == 2
        if type(node.op) is ast.Mult:
            return ast.dump(node.left) == ast.dump(node.right)
        return False
    if type(node) is ast.Call:
        name = call_name(node)
        if name == "square":
            return True
        if name == "pow":
            exponent = node.args[-1] if node.args else None
            return literal(exponent) == 2
    return False


def _squared(node: ast.AST) -> ast.AST | None:
    """What `node` squares: `x` for `x ** 2`, `x.pow(2)`, `x * x`, `x.square()`."""
    if type(node) is ast.BinOp:
        return node.left if _is_square(node) else None
    if type(node) is ast.Call and _is_square(node):
        func = node.func
        if type(func) is ast.Attribute and not _module_like(func.value):
            return func.value
        return node.args[0] if node.args else None
    return None


def _mean_of_square(node: ast.AST) -> bool:
    """`mean(x²)` of an uncentred `x`: RMSNorm's statistic. `mean((x - mean)²)` is a
    variance, LayerNorm's."""
    if type(node) is not ast.Call or call_name(node) != "mean":
        return False
    func = node.func
    operand = node.args[0] if type(func) is ast.Attribute and _module_like(func.value) and node.args \
        else getattr(func, "value", None)
    if operand is None or not _is_square(operand):
        return False
    base = _squared(operand)
    while type(base) is ast.Call and call_name(base) in ("to", "float", "type", "type_as"):
        base = getattr(base.func, "value", None)
    return not (type(base) is ast.BinOp and type(base.op) is ast.Sub)


def _rms_norm(checker: Checker, calls: Calls, values: dict[str, list[ast.expr]]) -> None:
    for node in calls.get("rsqrt", ()):
        operand = node.args[0] if node.args else getattr(node.func, "value", None)
        if type(operand) is ast.BinOp and type(operand.op) is ast.Add and (
                _rms_statistic(operand.left, values) or _rms_statistic(operand.right, values)):
            _report_fused(checker, "NPU602", node)


def _rms_statistic(node: ast.AST, values: dict[str, list[ast.expr]], depth: int = 2) -> bool:
    """`mean(x²)` itself, a cast of it, or a local name assigned only that: not
    `mean(x²) - mean(x)²` (a variance, LayerNorm's)."""
    if _mean_of_square(node):
        return True
    if depth == 0:
        return False
    if type(node) is ast.Name:
        assigned = values.get(node.id, ())
        return len(assigned) == 1 and _rms_statistic(assigned[0], values, depth - 1)
    if type(node) is ast.Call and call_name(node) in ("to", "float", "type", "type_as") \
            and type(node.func) is ast.Attribute:
        return _rms_statistic(node.func.value, values, depth - 1)
    return False


def _last_axis(call: ast.Call) -> bool:
    passed, dim = argument(call, "dim", 1)
    if not passed:
        passed, dim = argument(call, "axis", 1)
    return passed and literal(dim) == -1


CATS = frozenset({"cat", "concat", "concatenate"})


def _rotate_half(checker: Checker, callee: ast.expr, call: ast.Call | ast.ClassDef | None) -> None:
    """`cat((-x2, x1), dim=-1)`: read where it is called, as it needs nothing else of the function."""
    if type(call) is not ast.Call or call.func is not callee or not call.args:
        return
    parts = call.args[0]
    if isinstance(parts, (ast.Tuple, ast.List)) and len(parts.elts) == 2:
        first, second = parts.elts
        if type(first) is ast.UnaryOp and type(first.op) is ast.USub and type(second) is not ast.UnaryOp \
                and _last_axis(call):
            _report_fused(checker, "NPU603", call)


@handles("reference", "NPU603", names=CATS)
def check_cat(checker: Checker, ref: Reference) -> None:
    _rotate_half(checker, ref.node, ref.call)


@handles("attribute", "NPU603", names=CATS)
def check_cat_method(checker: Checker, node: ast.Attribute, attr: str, call: ast.Call | None) -> None:
    _rotate_half(checker, node, call)


SPLITS = frozenset({"chunk", "split", "tensor_split", "unbind"})


def _half_of(node: ast.expr, values: dict[str, list[ast.expr]]) -> tuple[str, str] | None:
    """(what is split, which part) for a half of one tensor: a name unpacked from
    `x.chunk(2)`, `x[..., :d]`, or `parts[0]` of `parts = x.chunk(2)`."""
    if type(node) is ast.Name:
        assigned = values.get(node.id, ())
        if len(assigned) == 1 and type(assigned[0]) is ast.Call and call_name(assigned[0]) in SPLITS:
            return ast.dump(assigned[0]), node.id
        return None  # not a split, or changed after it (`gate = gate.clamp(...)`): not the fused op
    if type(node) is ast.Subscript:
        base = node.value
        if type(base) is ast.Name and any(type(v) is ast.Call and call_name(v) in SPLITS
                                          for v in values.get(base.id, ())):
            return base.id, ast.dump(node.slice)
        index = node.slice.elts[-1] if type(node.slice) is ast.Tuple and node.slice.elts else node.slice
        if type(index) is ast.Slice:
            return ast.dump(base), ast.dump(node.slice)
    return None


def _swiglu(checker: Checker, products: list[ast.BinOp], values: dict[str, list[ast.expr]], scope: Scope) -> None:
    for node in products:
        if type(node.op) is not ast.Mult:
            continue
        for silu, other in ((node.left, node.right), (node.right, node.left)):
            if type(silu) is not ast.Call or not silu.args or checker.qualname(silu.func, scope) not in (
                    "torch.nn.functional.silu", "torch.nn.functional.silu_"):
                continue
            a, b = _half_of(silu.args[0], values), _half_of(other, values)
            if a is not None and b is not None and a[0] == b[0] and a[1] != b[1]:
                _report_fused(checker, "NPU604", node)
                break


MATMULS = frozenset({"matmul", "bmm", "baddbmm", "einsum"})


def _is_matmul(node: ast.AST) -> bool:
    return (type(node) is ast.BinOp and type(node.op) is ast.MatMult) or (
        type(node) is ast.Call and call_name(node) in MATMULS)


def _attention(checker: Checker, own: Own, values: dict[str, list[ast.expr]]) -> None:
    calls = own.calls
    matmuls = [n for n in own.products if type(n.op) is ast.MatMult] + [
        call for name in MATMULS for call in calls.get(name, ())]
    if len(matmuls) < 2:
        return
    assigns = sorted((n for n in own.assigns if type(n) is ast.Assign), key=position)
    for node in sorted(calls["softmax"], key=position):  # the first that is attention is reported
        func = node.func
        receiver = func.value if type(func) is ast.Attribute else None
        tensor_method = receiver is not None and not (type(receiver) in (ast.Name, ast.Attribute) and
                                                      _module_like(receiver))
        source = receiver if tensor_method else (node.args[0] if node.args else None)
        if source is None or not reaches(source, _is_matmul, values, 3):
            continue
        if _feeds_matmul(checker, node, [m for m in matmuls if not inside(m, node)], assigns):
            _report_fused(checker, "NPU605", node)
            return


def _module_like(node: ast.expr) -> bool:
    """`torch`, `F`, `nn.functional`, `torch.nn.functional`: a namespace, not a tensor."""
    while type(node) is ast.Attribute:
        node = node.value
    return type(node) is ast.Name and node.id in ("torch", "F", "nn", "functional", "jnp", "np")


def _feeds_matmul(checker: Checker, call: ast.Call, matmuls: list[ast.expr], assigns: list[ast.Assign]) -> bool:
    """Whether one of `matmuls` takes `call`, or a local name whose value comes from it
    (through later assignments too: `assigns` in source order). The names are followed
    only until a matmul reads one."""
    if any(inside(call, matmul) for matmul in matmuls):
        return True
    names: set[str] = set()
    for node in assigns:
        if node.end_lineno < call.lineno:
            continue
        if inside(call, node.value) or _reads(checker, node.value, names):
            new = {t.id for target in node.targets for t in subtree(target) if type(t) is ast.Name} - names
            if new:
                names |= new
                if any(_reads(checker, matmul, new) for matmul in matmuls):
                    return True
    return False


def _reads(checker: Checker, node: ast.expr, names: set[str]) -> bool:
    """Whether `node` reads one of the local `names`: its text first (most expressions
    name none of them, and a text search costs less than a walk)."""
    if not names:
        return False
    text = checker.source.lines[node.lineno - 1] if node.lineno == node.end_lineno else \
        "".join(checker.source.lines[node.lineno - 1:node.end_lineno])
    return any(name in text for name in names) and any(
        type(n) is ast.Name and n.id in names for n in subtree(node))


# the names a matcher needs called in a function (call_name), and so the handler's words
RSQRT, SILUS, SOFTMAX = ("rsqrt",), ("silu", "silu_"), ("softmax",)
FUSED_WORDS = RSQRT + SILUS + SOFTMAX


def _affinity_functions(tables: Tables) -> list[str]:
    return [row["name"] for row in tables.advice.get("affinity", ()) if row["kind"] == "function"]


@handles("function", "NPU607", names=_affinity_functions)
def check_affinity_function(checker: Checker, func: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
    for row in rows(checker, "affinity", "name").get(func.name, ()):
        if row["kind"] == "function" and _parameters(func) == row["parameters"]:
            line = func.lineno - 1
            col = checker.source.line(line).find(func.name, func.col_offset)
            where = Range(line, col, line, col + len(func.name)) if col >= 0 else func
            checker.report("NPU607", where, name=func.name, replacement=row["replacement"])


@handles("function", "NPU602", "NPU604", "NPU605", words=FUSED_WORDS)
def check_fused(checker: Checker, func: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
    own = own_code(checker, scope)
    calls = own.calls
    rms_norm = "rsqrt" in calls and "mean" in calls
    swiglu = ("silu" in calls or "silu_" in calls) and own.products
    attention = "softmax" in calls
    if not (rms_norm or swiglu or attention):
        return
    values = assignments(own.assigns)
    if rms_norm:
        _rms_norm(checker, calls, values)
    if swiglu:
        _swiglu(checker, own.products, values, scope)
    if attention:
        _attention(checker, own, values)


# --- the training loop ----------------------------------------------------------------------
SYNC_METHODS = frozenset({"item", "cpu", "numpy", "tolist"})
SYNC_CALLS = frozenset({"torch.cuda.synchronize", "torch.npu.synchronize", "torch_npu.npu.synchronize"})
EMPTY_CACHE = frozenset({"torch.cuda.empty_cache", "torch.npu.empty_cache", "torch_npu.npu.empty_cache"})
TRAINS = ("backward", "step")  # _trains' calls: the loop handler's words
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _trains(node: ast.AST) -> bool:
    if type(node) is not ast.Call or type(node.func) is not ast.Attribute:
        return False
    if node.func.attr == "backward":
        return True
    return node.func.attr == "step" and "optim" in ast.unparse(node.func.value).lower()


def _loop_nodes(loop: ast.For | ast.AsyncFor | ast.While) -> list[tuple[ast.AST, bool]]:
    """The loop body's own nodes, each with whether it sits under an `if ... % ...:`."""
    out: list[tuple[ast.AST, bool]] = []
    stack: list[tuple[ast.AST, bool]] = [(n, False) for n in reversed(loop.body)]
    while stack:
        node, periodic = stack.pop()
        out.append((node, periodic))
        if isinstance(node, NESTED):
            continue
        inner = periodic or (type(node) is ast.If and any(
            type(n) is ast.BinOp and type(n.op) is ast.Mod for n in ast.walk(node.test)))
        stack.extend((child, inner if child is not getattr(node, "test", None) else periodic)
                     for child in reversed(child_nodes(node)))
    return out


@handles("loop", "NPU610", "NPU611", "NPU616", words=TRAINS)
def check_loop(checker: Checker, loop: ast.For | ast.AsyncFor | ast.While, scope: Scope) -> None:
    if not checker.named(loop, *TRAINS):
        return
    nodes = _loop_nodes(loop)
    if not any(_trains(n) for n, _ in nodes):
        return
    if any(type(n) in LOOPS and any(_trains(m) for m in ast.walk(n)) for n, _ in nodes):
        return  # an inner loop is the training loop: it gets its own event
    if not isinstance(loop, ast.While):  # what the training loop iterates: NPU610 judges those loaders
        for node in ast.walk(loop.iter):
            if isinstance(node, (ast.Name, ast.Attribute)):
                checker.note(f"iterated {node.id if isinstance(node, ast.Name) else node.attr}", node)
    losses = {n.func.value.id for n, _ in nodes if type(n) is ast.Call and type(n.func) is ast.Attribute
              and n.func.attr == "backward" and type(n.func.value) is ast.Name}
    for node, periodic in nodes:
        if type(node) is not ast.Call:
            continue
        func = node.func
        if type(func) is ast.Attribute and func.attr in SYNC_METHODS and not node.args and not node.keywords:
            receiver = func.value
            synced = type(receiver) is ast.Call and type(receiver.func) is ast.Attribute and (
                receiver.func.attr in SYNC_METHODS or (receiver.func.attr == "detach" and type(
                    receiver.func.value) is ast.Call and call_name(receiver.func.value) in SYNC_METHODS))
            if not periodic and not synced:
                checker.report("NPU611", func, name=f".{func.attr}()")
            continue
        qualname = checker.qualname(func, scope)
        if qualname in SYNC_CALLS and not periodic:
            checker.report("NPU611", node, name=f"{qualname}()")
        elif qualname in EMPTY_CACHE:
            checker.report("NPU616", node, name=f"{qualname}()")
        elif type(func) is ast.Name and func.id == "print" and not periodic and checker.qualname(func, scope) is None:
            for arg in node.args:
                inside = list(ast.walk(arg))
                if any(type(n) is ast.Call and call_name(n) in SYNC_METHODS for n in inside):
                    continue  # reported as that call
                shown = [n for n in inside if type(n) is ast.Name and n.id in losses]
                if shown:
                    checker.report("NPU611", arg, name=f"print({shown[0].id})")
                    break


@handles("module", "NPU610")
def check_module(checker: Checker, facts: dict) -> None:
    for fact, where in facts.items():
        if fact.startswith("NPU610 "):
            problems, _, name = fact[len("NPU610 "):].rpartition(" =")
            if f"iterated {name}" in facts:
                advice = "; ".join(r["advice"] for r in rows(checker, "parameter", "api").get(DATALOADERS[0], ()))
                checker.report("NPU610", where, problems=problems.rpartition(" @")[0], advice=advice)
