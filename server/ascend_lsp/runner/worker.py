"""The "Run on NPU" worker: runs a snippet on a CPU reference and on a target, compares.

Self-contained on purpose: only the standard library at import time, torch / numpy /
mindspore imported lazily, and nothing from ascend_lsp, so the client can ship this file
as source to any interpreter (`python -c BOOTSTRAP`, the source then arrives as the first
stdin line) as well as run it installed (`python -m ascend_lsp.runner.worker`).

Protocol (newline-delimited JSON, one warm worker serves many jobs):
  worker → {"type": "hello", "protocol": 1, "pid": ..., "python": ...}   once, at start
  client → {"protocol": 1, "id": ..., "kind": "run", "file": {...}, "entry": {...},
            "target": "cpu|cuda|npu|emulate|mindspore", "options": {...}, "metrics": {...}}
  worker → {"type": "progress", "id": ..., "message": ...}                  zero or more
  worker → {"type": "result", "id": ..., "status": "ok|failed", ...}        exactly one
The protocol stream is a private copy of fd 1; fd 1 itself is pointed at stderr so that
prints from the snippet (Python or C level) cannot corrupt it.

Grading is not done here: the worker measures, the client grades with the msprobe table.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import io
import json
import linecache
import os
import random
import re
import sys
import textwrap
import time
import traceback
import types
import weakref

PROTOCOL = 1
TAIL_CHARS = 4000
_SELF_FILE = sys._getframe().f_code.co_filename  # this file, or "<ascend-lsp worker>" when shipped
_MISSING = object()

# HF32 as Ascend documents it (CANN ATC `--allow_hf32`, AscendC `SetHF32`): the float32
# range (8 exponent bits) with an 11-bit mantissa, converted round-to-nearest-even by
# default. ../shared/data does not give the bit layout; this is the assumption the
# emulation makes, and every emulated result says so.
HF32_MANTISSA_BITS = 11
HF32_NOTE = ("HF32 emulated as float32 rounded to 11 mantissa bits, round-to-nearest-even (Ascend's documented "
             "1-8-11 format; accumulation kept in float32; backward uses HF32-rounded operands only)")

RANDOM_FACTORIES = ("rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
                    "rand_like", "randn_like", "randint_like")
RANDOM_METHODS = ("normal_", "uniform_", "bernoulli_", "random_", "exponential_", "geometric_", "log_normal_",
                  "cauchy_")
DEVICE_FACTORIES = ("tensor", "as_tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye",
                    "zeros_like", "ones_like", "empty_like", "full_like", "empty_strided", "scalar_tensor",
                    "tril_indices", "triu_indices")
DEVICE_METHODS = ("new_tensor", "new_zeros", "new_ones", "new_empty", "new_full")
ACCELERATORS = ("cuda", "npu", "xpu", "mps")
CONV_FUNCTIONS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
# function name → positions of the matrix operands that HF32 matmul rounds (bias is not)
MATMUL_FUNCTIONS = {"matmul": (0, 1), "mm": (0, 1), "bmm": (0, 1), "addmm": (1, 2), "baddbmm": (1, 2)}
DROPOUT_FUNCTIONS = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
FP16_MAX = 65504.0
# Calls the API level does not record: attribute access and bookkeeping, no computation.
API_SKIP = frozenset({"__get__", "__set__", "__repr__", "__format__", "__len__", "__bool__", "__index__", "__iter__",
                      "__hash__", "__reduce_ex__", "__setstate__", "__deepcopy__", "size", "dim", "numel", "detach",
                      "is_floating_point", "requires_grad_", "item", "tolist", "numpy", "data_ptr", "stride",
                      "storage_offset", "element_size", "is_contiguous", "type", "__torch_function__",
                      # uninitialised memory: its bytes are not a result
                      "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})


class SetupError(Exception):
    """The target cannot run here (missing package or device); `code` names the case."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class SnippetError(Exception):
    """The user's code raised; carries the traceback mapped to the user's file."""

    def __init__(self, side: str, error: dict):
        super().__init__(error["message"])
        self.side = side
        self.error = error


# --------------------------------------------------------------------------- main loop


def main() -> None:
    out = _claim_stdout()
    _send(out, {"type": "hello", "protocol": PROTOCOL, "pid": os.getpid(), "python": sys.version.split()[0],
                "executable": sys.executable})
    served = 0
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        if not line.strip():
            continue
        served += 1
        try:
            job = json.loads(line)
        except ValueError as exc:
            job, result = {}, _failed("bad-job", f"job is not JSON: {exc}")
        else:
            result = handle(job, lambda message, _id=job.get("id"): _send(
                out, {"type": "progress", "id": _id, "message": message}))
        result.update(type="result", id=job.get("id"), protocol=PROTOCOL)
        result["worker"] = {"pid": os.getpid(), "jobs_served": served, **result.get("worker", {})}
        _send(out, result)


def _claim_stdout():
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "w", encoding="utf-8")


def _send(out, message: dict) -> None:
    out.write(json.dumps(message, default=str) + "\n")
    out.flush()


def _failed(code: str, message: str, **extra) -> dict:
    return {"status": "failed", "code": code, "message": message, **extra}


def handle(job: dict, progress) -> dict:
    if job.get("protocol") != PROTOCOL:
        return _failed("protocol", f"client speaks protocol {job.get('protocol')}, this worker {PROTOCOL}")
    started = time.perf_counter()
    options = job.get("options", {})
    _apply_memory_limit(options.get("memory_limit_mb"))
    if job.get("kind") == "compare-dumps":
        return compare_dump_dirs(job)
    fresh_import = "torch" not in sys.modules
    try:
        torch = _import("torch", "torch")
        import_s = time.perf_counter() - started if fresh_import else 0.0
        target = Target.prepare(torch, job)
    except SetupError as exc:
        return _failed(exc.code, str(exc))
    worker_info = {"torch": torch.__version__, "torch_import_s": round(import_s, 3)}
    try:
        source = Source(job)
        progress("reference run on CPU")
        reference = run_torch_side(torch, source, job, target, side="reference")
        progress(f"target run on {target.label}")
        if target.name == "mindspore":
            candidate = run_mindspore_side(torch, source, job, reference)
        else:
            candidate = run_torch_side(torch, source, job, target, side="target")
    except SnippetError as exc:
        return _failed("exception", f"{exc.side} run raised {exc.error['type']}: {exc.error['message']}",
                       error={**exc.error, "side": exc.side}, target=target.describe(), worker=worker_info,
                       notes=target.notes)
    except SetupError as exc:
        return _failed(exc.code, str(exc), target=target.describe(), worker=worker_info)
    compare_started = time.perf_counter()
    outputs = compare_sides(torch, reference, candidate, job, target)
    layers = None
    if reference.layers is not None and candidate.layers is not None:
        progress("comparing layers")
        layers = compare_layers(torch, reference.layers, candidate.layers, job.get("metrics", {}), target)
        dump = options.get("dump")
        if dump:
            try:
                write_dump(torch, reference.layers, os.path.join(dump["dir"], "bench"), dump.get("tensors", True))
                write_dump(torch, candidate.layers, os.path.join(dump["dir"], "npu"), dump.get("tensors", True))
            except OSError as exc:
                return _failed("dump", f"cannot write the dump under {dump['dir']}: {exc}")
    result = {
        "status": "ok",
        "target": target.describe(),
        "outputs": outputs,
        "notes": [f"emulated: {note}" for note in target.emulation_notes()] + target.notes + reference.notes +
                 candidate.notes,
        "stdout": {"reference": reference.stdout, "target": candidate.stdout},
        "timing": {"import_s": round(import_s, 4), "reference_s": round(reference.seconds, 6),
                   "target_s": round(candidate.seconds, 6),
                   "compare_s": round(time.perf_counter() - compare_started, 6),
                   "total_s": round(time.perf_counter() - started, 6)},
        "worker": worker_info,
    }
    if options.get("capture_inputs"):
        result["inputs"] = {"reference": reference.draws, "target": candidate.draws}
    if layers is not None:
        result["layers"] = layers
    return result


def _import(module: str, package: str):
    try:
        return __import__(module)
    except ImportError as exc:
        raise SetupError("missing-package", f"{package} is not importable in {sys.executable}: {exc}") from None


def _apply_memory_limit(limit_mb) -> None:
    # The client sets RLIMIT_AS before exec for local workers; a remote worker gets the
    # same limit here (only ever lowered, never raised).
    if not limit_mb:
        return
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = int(limit_mb) * 2**20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft == resource.RLIM_INFINITY or soft > want:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))


# --------------------------------------------------------------------------- targets


class Target:
    """Where the second run happens, and how (device, emulation, mindspore)."""

    def __init__(self, name: str, device: str, emulate: dict | None = None):
        self.name, self.device, self.emulate = name, device, emulate
        self.notes: list[str] = []
        self.extra: dict = {}

    @property
    def label(self) -> str:
        return "MindSpore" if self.name == "mindspore" else self.device

    @property
    def on_cpu(self) -> bool:
        return self.device == "cpu"

    def describe(self) -> dict:
        return {"name": self.name, "device": self.device, "emulated": self.emulate is not None,
                "emulation": self.emulation_notes(), **self.extra}

    def emulation_notes(self) -> list[str]:
        if self.emulate is None:
            return []
        notes = []
        hf32 = self.emulate.get("hf32", True)
        if hf32 and self.emulate.get("conv_hf32", True):
            notes.append("fp32 convolutions in HF32 (Ascend A2/A3 default)")
        if hf32 and self.emulate.get("matmul_hf32"):
            notes.append("fp32 matmul in HF32 (torch.npu.matmul.allow_hf32 = True)")
        if self.emulate.get("autocast"):
            notes.append(f"autocast to {self.emulate['autocast']}")
        if self.emulate.get("fp16_saturation"):
            notes.append(f"fp16 saturation mode: overflow gives ±{FP16_MAX:g}, NaN gives 0")
        return notes + list(self.emulate.get("assumptions", []))

    @classmethod
    def prepare(cls, torch, job: dict) -> "Target":
        name = job.get("target")
        options = job.get("options", {})
        if name == "cpu":
            return cls("cpu", "cpu")
        if name == "emulate":
            target = cls("emulate", "cpu", dict(options.get("emulate") or {}))
            if target.emulate.get("hf32", True) and (target.emulate.get("conv_hf32", True)
                                                     or target.emulate.get("matmul_hf32")):
                target.notes.append(HF32_NOTE)
            return target
        if name == "cuda":
            if not torch.cuda.is_available():
                why = "torch was built without CUDA" if torch.version.cuda is None else "no GPU is visible"
                raise SetupError("no-device", f"no CUDA device: torch.cuda.is_available() is False ({why}; "
                                              f"torch {torch.__version__})")
            return cls("cuda", "cuda:0")
        if name == "npu":
            return cls._prepare_npu(torch, options)
        if name == "mindspore":
            ms = _import("mindspore", "mindspore")
            device = (options.get("mindspore") or {}).get("device")
            if device:
                ms.set_device(device)
            target = cls("mindspore", "cpu")
            target.extra = {"mindspore": ms.__version__, "mindspore_device": ms.get_context("device_target")}
            return target
        raise SetupError("bad-job", f"unknown target {name!r}")

    @classmethod
    def _prepare_npu(cls, torch, options: dict) -> "Target":
        if options.get("fallback_cpu_disable"):
            # Read by torch_npu at import time: unsupported ops raise instead of silently
            # running on the CPU.
            os.environ["TORCH_NPU_FALLBACK_CPU_DISABLE"] = "1"
        try:
            import torch_npu  # noqa: F401
            from torch_npu.contrib import transfer_to_npu  # noqa: F401  (CUDA calls → NPU)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("torch_npu"):
                raise SetupError("missing-package", f"torch_npu is not installed in {sys.executable}") from None
            raise SetupError("missing-package", f"torch_npu cannot load CANN: {exc}") from None
        except (ImportError, OSError, RuntimeError) as exc:
            raise SetupError("missing-package", f"torch_npu cannot load CANN: {type(exc).__name__}: {exc}") from None
        if not torch.npu.is_available():
            raise SetupError("no-device", "no NPU device: torch.npu.is_available() is False")
        target = cls("npu", "npu:0")
        target.extra = {"torch_npu": getattr(torch_npu, "__version__", "?")}
        if options.get("fallback_cpu_disable"):
            target.notes.append("TORCH_NPU_FALLBACK_CPU_DISABLE=1: ops without an NPU kernel raise")
        return target


# --------------------------------------------------------------------------- the user's code


class Source:
    """The user's file, compiled with its real path so tracebacks point at its lines."""

    def __init__(self, job: dict):
        file = job.get("file") or {}
        self.path = file.get("path") or "<snippet>"
        self.text = file.get("text")
        if self.text is None:
            raise SetupError("bad-job", "job has no file text")
        self.module_name = file.get("module") or "snippet"
        self.cwd = file.get("cwd")
        entry = job.get("entry") or {}
        self.function = entry.get("function")
        self.pair = (job.get("options", {}).get("mindspore") or {}).get("pair")
        self.lines = entry.get("lines")
        linecache.cache[self.path] = (len(self.text), None, self.text.splitlines(True), self.path)
        try:
            self.code = compile(self.text, self.path, "exec")
            self.selection = self._compile_selection() if self.lines else None
        except SyntaxError as exc:
            raise SnippetError("reference", _syntax_error(exc)) from None
        if not self.function and not self.lines:
            raise SetupError("bad-job", "job names neither a function nor a line range")

    def _compile_selection(self):
        start, end = self.lines
        block = textwrap.dedent("".join(self.text.splitlines(True)[start - 1:end]))
        tree = ast.parse(block, self.path)
        ast.increment_lineno(tree, start - 1)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = compile(ast.Expression(tree.body.pop().value), self.path, "eval")
        return compile(tree, self.path, "exec"), last

    def execute(self, function: str | None = None):
        """Run the module's top level (as an import: `__main__` blocks stay off), then the entry."""
        module = types.ModuleType(self.module_name)
        module.__file__ = self.path
        folder = os.path.dirname(os.path.abspath(self.path))
        before = set(sys.modules)
        sys.modules[self.module_name] = module
        sys.path.insert(0, folder)
        if self.cwd and os.path.isdir(self.cwd):  # a remote host may not have the folder
            os.chdir(self.cwd)  # relative paths in the user's code mean what they mean in its project
        try:
            exec(self.code, module.__dict__)
            if self.selection is not None and function is None:
                return self._run_selection(module.__dict__)
            return _call_entry(module.__dict__, function or self.function)
        finally:
            sys.path.remove(folder)
            # Forget the user's own modules so the next job sees their edits; leave
            # library modules (torch submodules imported lazily) alone.
            for name in set(sys.modules) - before:
                file = getattr(sys.modules[name], "__file__", None) or ""
                if name == self.module_name or os.path.abspath(file).startswith(folder + os.sep):
                    sys.modules.pop(name, None)

    def _run_selection(self, namespace: dict):
        body, last = self.selection
        before = dict(namespace)
        exec(body, namespace)
        if last is not None:
            return eval(last, namespace)
        # No trailing expression: the result is the tensors the block (re)bound, by name.
        return {name: value for name, value in sorted(namespace.items())
                if _is_tensor_like(value) and before.get(name, _MISSING) is not value}


def _call_entry(namespace: dict, name: str):
    import inspect

    function = namespace.get(name)
    if not callable(function):
        raise SetupError("bad-job", f"no function {name!r} at the top level of the file")
    required = [p.name for p in inspect.signature(function).parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if required:
        raise SetupError("bad-job", f"{name}() needs arguments ({', '.join(required)}): only functions without "
                                    "required arguments (or fixture-free tests) can run")
    if inspect.iscoroutinefunction(function):
        raise SetupError("bad-job", f"{name}() is async: not supported")
    return function()


def _is_tensor_like(value) -> bool:
    kind = type(value)
    return kind.__module__.split(".")[0] in ("torch", "mindspore") and kind.__name__ in ("Tensor", "Parameter")


def _syntax_error(exc: SyntaxError) -> dict:
    return {"type": "SyntaxError", "message": str(exc.msg), "user_line": exc.lineno,
            "traceback": "".join(traceback.format_exception_only(type(exc), exc)),
            "frames": [{"file": exc.filename, "line": exc.lineno, "function": "<module>", "text": exc.text or ""}]}


def _mapped_error(exc: BaseException, path: str, memory_limit_mb) -> dict:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != _SELF_FILE]
    user = [f for f in frames if f.filename == path]
    message = str(exc)
    if isinstance(exc, MemoryError) or "can't allocate memory" in message or "not enough memory" in message:
        message = f"{message or 'out of memory'} (worker memory limit {memory_limit_mb} MiB)"
    text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + \
        "".join(traceback.format_exception_only(type(exc), exc))
    return {"type": type(exc).__name__, "message": message, "traceback": text,
            "user_line": user[-1].lineno if user else None,
            "frames": [{"file": f.filename, "line": f.lineno, "function": f.name, "text": f.line or ""}
                       for f in frames]}


# --------------------------------------------------------------------------- one side


class Side:
    """What one run produced: flattened outputs, gradients, changed module state, draws."""

    def __init__(self):
        self.outputs: list[tuple[str, object]] = []
        self.grads: list[tuple[str, object]] = []
        self.state: list[tuple[str, object]] = []
        self.draws: list[list] = []
        self.notes: list[str] = []
        self.stdout = ""
        self.seconds = 0.0
        self.dropout = False
        # reference only, for the MindSpore port: the outermost module calls, in order,
        # each module's state before its first call, and a display name per module
        self.top_calls: list[tuple[object, tuple]] = []
        self.initial_state: dict[int, dict] = {}
        self.module_names: dict[int, str] = {}
        self.layers: Layers | None = None  # every module / cell call, with `--layers`


class Recorder:
    """Collects, during a torch run, what the comparison needs beyond the return value."""

    def __init__(self, torch, capture: bool):
        self.torch, self.capture = torch, capture
        self.depth = 0
        self.modules: list = []
        self.initial_state: dict[int, dict] = {}
        self.calls: list[tuple[object, tuple]] = []
        self.leaves: dict[int, object] = {}
        self.draws: list[list] = []
        self.dropout = False
        self.layers: Layers | None = None

    def drew(self, name: str, cpu_tensor) -> None:
        if self.capture:
            data = cpu_tensor.detach().contiguous().reshape(-1).view(self.torch.uint8).numpy().tobytes()
            self.draws.append([name, list(cpu_tensor.shape), hashlib.sha256(data).hexdigest()])

    def leaf(self, tensor) -> None:
        if tensor.is_leaf and tensor.requires_grad:
            self.leaves.setdefault(id(tensor), tensor)

    def top_call(self, module, args: tuple) -> None:
        if id(module) not in self.initial_state:
            self.modules.append(module)
            self.initial_state[id(module)] = {k: v.detach().to("cpu", copy=True)
                                              for k, v in module.state_dict().items()}
        self.calls.append((module, args))
        for arg in args:
            if isinstance(arg, self.torch.Tensor):
                self.leaf(arg)

    def module_names(self) -> dict[int, str]:
        counts: dict[str, int] = {}
        for module in self.modules:
            counts[type(module).__name__] = counts.get(type(module).__name__, 0) + 1
        names: dict[int, str] = {}
        seen: dict[str, int] = {}
        for module in self.modules:
            cls = type(module).__name__
            seen[cls] = seen.get(cls, 0) + 1
            names[id(module)] = cls if counts[cls] == 1 else f"{cls}#{seen[cls]}"
        return names


def run_torch_side(torch, source: Source, job: dict, target: Target, side: str) -> Side:
    options = job.get("options", {})
    on_cpu = side == "reference" or target.on_cpu
    rec = Recorder(torch, bool(options.get("capture_inputs")))
    if options.get("layers"):
        rec.layers = Layers(torch, source.path, api=options["layers"] == "api")
    emulate = target.emulate if side == "target" else None
    result = Side()
    stdout = io.StringIO()
    with contextlib.ExitStack() as stack:
        patches = stack.enter_context(_Patches())
        _keep_switches(torch, stack)
        _patch_random(torch, patches, rec, on_cpu)
        _patch_module_calls(torch, patches, rec)
        if rec.layers is not None:
            _patch_module_construction(torch.nn.Module, patches, rec.layers)
        if on_cpu:
            _patch_devices_to_cpu(torch, patches)
        else:
            previous = torch.get_default_device()
            torch.set_default_device(target.device)
            stack.callback(torch.set_default_device, previous)
        if emulate is not None:
            _patch_emulation(torch, patches, emulate, result.notes)
            if emulate.get("autocast"):
                stack.enter_context(torch.autocast("cpu", dtype=getattr(torch, emulate["autocast"])))
        saturate = bool(emulate and emulate.get("fp16_saturation"))
        if saturate or (rec.layers is not None and rec.layers.api):
            stack.enter_context(_function_mode(torch, rec.layers, saturate))
        stack.enter_context(contextlib.redirect_stdout(stdout))
        _seed(torch, options.get("seed", 0))
        started = time.perf_counter()
        try:
            value = source.execute()
            if options.get("grad"):
                _backward(torch, value)
        except SetupError:
            raise
        except BaseException as exc:  # the user's code: anything it raises is a result
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise SnippetError(side, _mapped_error(exc, source.path, options.get("memory_limit_mb"))) from None
        result.seconds = time.perf_counter() - started
    result.stdout = stdout.getvalue()[-TAIL_CHARS:]
    result.outputs = flatten(torch, "out", value)
    result.dropout = rec.dropout
    result.draws = rec.draws
    if rec.layers is not None:
        rec.layers.name_modules(rec.modules)
        result.layers = rec.layers
    names = rec.module_names()
    result.state = _changed_state(torch, rec, names)
    if options.get("grad"):
        result.grads = _grads(torch, rec, names)
    if side == "reference":
        result.top_calls, result.initial_state, result.module_names = rec.calls, rec.initial_state, names
    return result


def _seed(torch, seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)  # also seeds every accelerator's generator
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass


def _backward(torch, value) -> None:
    # One scalar from everything differentiable the snippet returned; if it returned
    # nothing differentiable (it may have called backward itself), gradients stay as they are.
    leaves = [t for _, t in flatten(torch, "out", value, detach=False)
              if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
    if leaves:
        sum(t.float().sum() for t in leaves).backward()


def _grads(torch, rec: Recorder, names: dict) -> list:
    grads = []
    parameters = {id(p) for m in rec.modules for p in m.parameters()}
    for index, leaf in enumerate(rec.leaves.values()):
        if leaf.grad is not None and id(leaf) not in parameters:
            grads.append((f"grad:input[{index}]", _to_cpu(torch, leaf.grad)))
    for module in rec.modules:
        for pname, param in module.named_parameters():
            if param.grad is not None:
                grads.append((f"grad:{names[id(module)]}.{pname}", _to_cpu(torch, param.grad)))
    return grads


def _changed_state(torch, rec: Recorder, names: dict) -> list:
    # Parameters and buffers the run changed (running stats, an optimizer step): their
    # final values are outputs too. Unchanged weights would only repeat the inputs.
    state = []
    for module in rec.modules:
        initial = rec.initial_state[id(module)]
        for key, value in module.state_dict().items():
            final = _to_cpu(torch, value)
            if key in initial and not torch.equal(initial[key], final):
                state.append((f"state:{names[id(module)]}.{key}", final))
    return state


def _to_cpu(torch, tensor):
    return tensor.detach().to("cpu", copy=True)


def flatten(torch, path: str, value, detach: bool = True) -> list[tuple[str, object]]:
    """Tensors and scalars by path (`out[0]`, `out['logits']`), as detached CPU torch tensors
    (or the live tensors with `detach=False`)."""
    if value is None:
        return []
    if isinstance(value, torch.Tensor):
        return [(path, _to_cpu(torch, value) if detach else value)]
    kind = type(value)
    if kind.__module__.startswith("mindspore") and hasattr(value, "asnumpy"):
        return [(path, torch.from_numpy(value.asnumpy().copy()))]
    if kind.__module__ == "numpy" and hasattr(value, "dtype"):
        import numpy
        return [(path, torch.from_numpy(numpy.array(value, copy=True)))]
    if isinstance(value, bool):
        return [(path, torch.tensor(value))]
    if isinstance(value, (int, float)):
        return [(path, torch.tensor(value, dtype=torch.int64 if isinstance(value, int) else torch.float64))]
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in flatten(torch, f"{path}[{key!r}]", item, detach)]
    if isinstance(value, (list, tuple)):
        return [leaf for i, item in enumerate(value) for leaf in flatten(torch, f"{path}[{i}]", item, detach)]
    if isinstance(value, torch.nn.Module) or callable(value):
        return []
    return [(path, value)]


# --------------------------------------------------------------------------- patches


class _Patches:
    """setattr with undo, so a warm worker is clean again after each run."""

    def __init__(self):
        self.saved: list[tuple[object, str, object]] = []

    def __enter__(self):
        return self

    def set(self, owner, name: str, value) -> None:
        if hasattr(owner, name):
            self.saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, value)

    def __exit__(self, *exc):
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)
        self.saved.clear()


def _cpu_if_accelerator(torch, device):
    """Map a device argument (str, torch.device or index) to the CPU if it names an accelerator."""
    if isinstance(device, int) and not isinstance(device, bool):
        return torch.device("cpu")
    if isinstance(device, (str, torch.device)):
        try:
            if torch.device(device).type in ACCELERATORS:
                return torch.device("cpu")
        except RuntimeError:
            return device
    return device


def _patch_random(torch, patches: _Patches, rec: Recorder, on_cpu: bool) -> None:
    """Random draws come from the CPU generator, then move: same values on every device."""

    def final_device(args, kwargs):
        if kwargs.get("device") is not None:
            device = kwargs["device"]
        else:
            device = next((a.device for a in args if isinstance(a, torch.Tensor)), None) or torch.get_default_device()
        device = torch.device(device) if not isinstance(device, torch.device) else device
        return torch.device("cpu") if on_cpu and device.type in ACCELERATORS else device

    def factory(name, original):
        def draw(*args, **kwargs):
            generator = kwargs.get("generator")
            if (generator is not None and generator.device.type != "cpu") or "out" in kwargs:
                return original(*args, **kwargs)
            device = final_device(args, kwargs)
            requires_grad = kwargs.pop("requires_grad", False)
            has_tensor = any(isinstance(a, torch.Tensor) for a in args)
            if "device" in kwargs or not has_tensor:
                kwargs["device"] = "cpu"
            args = tuple(a.to("cpu") if isinstance(a, torch.Tensor) else a for a in args)
            tensor = original(*args, **kwargs)
            rec.drew(name, tensor)
            if tensor.device != device:
                tensor = tensor.to(device)
            if requires_grad:
                tensor.requires_grad_(True)
                rec.leaf(tensor)
            return tensor
        return draw

    def method(name, original):
        def draw_(self, *args, **kwargs):
            generator = kwargs.get("generator")
            if generator is not None and generator.device.type != "cpu":
                return original(self, *args, **kwargs)
            if self.device.type == "cpu":
                result = original(self, *args, **kwargs)
                rec.drew(name, self)
                return result
            scratch = torch.empty(self.shape, dtype=self.dtype, device="cpu")
            original(scratch, *(a.to("cpu") if isinstance(a, torch.Tensor) else a for a in args), **kwargs)
            rec.drew(name, scratch)
            self.copy_(scratch)
            return self
        return draw_

    for name in RANDOM_FACTORIES:
        if hasattr(torch, name):
            patches.set(torch, name, factory(name, getattr(torch, name)))
    for name in RANDOM_METHODS:
        patches.set(torch.Tensor, name, method(name, getattr(torch.Tensor, name)))
    original_requires_grad = torch.Tensor.requires_grad_

    def requires_grad_(self, requires_grad=True):
        result = original_requires_grad(self, requires_grad)
        if requires_grad:
            rec.leaf(self)
        return result
    patches.set(torch.Tensor, "requires_grad_", requires_grad_)


def _patch_devices_to_cpu(torch, patches: _Patches) -> None:
    """CUDA/NPU code runs unchanged on the CPU: device arguments that name an accelerator become "cpu"."""

    def stay(self, *args, **kwargs):
        return self

    def moving(original):
        def to(self, *args, **kwargs):
            args = tuple(_cpu_if_accelerator(torch, a) for a in args)
            if "device" in kwargs:
                kwargs["device"] = _cpu_if_accelerator(torch, kwargs["device"])
            return original(self, *args, **kwargs)
        return to

    def creating(original):
        def create(*args, **kwargs):
            if kwargs.get("device") is not None:
                kwargs["device"] = _cpu_if_accelerator(torch, kwargs["device"])
            return original(*args, **kwargs)
        return create

    for owner in (torch.Tensor, torch.nn.Module):
        for name in ("cuda", "npu", "xpu", "mps"):
            patches.set(owner, name, stay)
        patches.set(owner, "to", moving(owner.to))
    for name in DEVICE_FACTORIES:
        patches.set(torch, name, creating(getattr(torch, name)))
    for name in DEVICE_METHODS:
        patches.set(torch.Tensor, name, creating(getattr(torch.Tensor, name)))
    # CUDA calls with no CPU meaning are no-ops on the reference.
    for name in ("synchronize", "empty_cache", "reset_peak_memory_stats"):
        patches.set(torch.cuda, name, lambda *a, **k: None)


def _patch_module_calls(torch, patches: _Patches, rec: Recorder) -> None:
    original_call = torch.nn.Module.__call__

    def call(self, *args, **kwargs):
        if rec.depth == 0:
            rec.top_call(self, args)
        rec.depth += 1
        try:
            return original_call(self, *args, **kwargs)
        finally:
            rec.depth -= 1

    def recording_call(self, *args, **kwargs):
        index = rec.layers.enter("module", self, type(self).__name__, args, kwargs)
        output = call(self, *args, **kwargs)
        rec.layers.exit(index, output)
        return output
    patches.set(torch.nn.Module, "__call__", call if rec.layers is None else recording_call)

    functional = torch.nn.functional
    for name in DROPOUT_FUNCTIONS:
        original = getattr(functional, name, None)
        if original is None:
            continue

        def dropout(input, p=0.5, training=True, *args, _original=original, **kwargs):
            if training and p > 0:
                rec.dropout = True
            return _original(input, p, training, *args, **kwargs)
        patches.set(functional, name, dropout)


def round_to_hf32(torch, tensor):
    """float32 → nearest HF32 value (RNE on the 12 dropped mantissa bits), gradient passed straight through."""
    if tensor.dtype != torch.float32:
        return tensor
    drop = 23 - HF32_MANTISSA_BITS
    with torch.no_grad():
        bits = tensor.detach().contiguous().view(torch.int32)
        half = (1 << (drop - 1)) - 1
        rounded = ((bits + half + ((bits >> drop) & 1)) & ~((1 << drop) - 1)).view(torch.float32).view(tensor.shape)
        finite = torch.isfinite(tensor)
    return torch.where(finite, tensor + (rounded - tensor).detach(), tensor)


def _patch_emulation(torch, patches: _Patches, emulate: dict, notes: list[str]) -> None:
    # The switches the code itself sets decide at call time, as on the NPU: under
    # transfer_to_npu, `torch.backends.cudnn.allow_tf32` is `torch.npu.conv.allow_hf32` and
    # `torch.backends.cuda.matmul.allow_tf32` is `torch.npu.matmul.allow_hf32`.
    def conv_on() -> bool:
        on = bool(emulate.get("conv_hf32", True) and torch.backends.cudnn.allow_tf32)
        if not on and emulate.get("conv_hf32", True):
            said("fp32 convolutions kept in fp32: the code set torch.backends.cudnn.allow_tf32 = False")
        return on

    def matmul_on() -> bool:
        if not emulate.get("matmul_hf32") and torch.backends.cuda.matmul.allow_tf32:
            said("fp32 matmul in HF32: the code set torch.backends.cuda.matmul.allow_tf32 = True")
            return True
        return bool(emulate.get("matmul_hf32"))

    def said(note: str) -> None:
        if note not in notes:
            notes.append(note)

    def rounding(original, positions, enabled):
        @functools.wraps(original)
        def run(*args, **kwargs):
            if enabled():
                args = tuple(round_to_hf32(torch, a) if i in positions and isinstance(a, torch.Tensor) else a
                             for i, a in enumerate(args))
            return original(*args, **kwargs)
        return run

    functional = torch.nn.functional
    if emulate.get("hf32", True):
        for name in CONV_FUNCTIONS:
            patches.set(functional, name, rounding(getattr(functional, name), (0, 1), conv_on))
            patches.set(torch, name, rounding(getattr(torch, name), (0, 1), conv_on))
        for name, positions in MATMUL_FUNCTIONS.items():
            patches.set(torch, name, rounding(getattr(torch, name), positions, matmul_on))
            if name in ("matmul", "mm", "bmm"):
                patches.set(torch.Tensor, name, rounding(getattr(torch.Tensor, name), positions, matmul_on))
        patches.set(torch.Tensor, "__matmul__", rounding(torch.Tensor.__matmul__, (0, 1), matmul_on))
        patches.set(functional, "linear", rounding(functional.linear, (0, 1), matmul_on))


def _keep_switches(torch, stack: contextlib.ExitStack) -> None:
    """The code may set the TF32/HF32 switches; a warm worker must not carry them to the next run."""
    saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)

    def restore() -> None:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved
    stack.callback(restore)


def _function_mode(torch, layers, saturate: bool):
    """A TorchFunctionMode that records torch functions and tensor methods (the API level)
    and/or applies fp16 saturation (overflow → ±65504, NaN → 0) to every float16 result."""
    functional = {id(f) for v in vars(torch.nn.functional).values() if callable(v)
                  for f in (v, getattr(v, "__wrapped__", None)) if f is not None}  # and what emulation wraps

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = _api_name(func, functional) if layers is not None and layers.api and not layers.busy else None
            index = layers.enter("api", None, name, args, kwargs) if name else None
            result = func(*args, **kwargs)
            if saturate:
                result = _saturate(torch, func, result)
            if index is not None:
                layers.exit(index, result)
            return result
    return Mode()


def _api_name(func, functional: set) -> str | None:
    name = getattr(func, "__name__", None)
    if not name or name in API_SKIP or (name.startswith("_") and not name.startswith("__")):
        return None
    if id(func) in functional:
        return f"Functional.{name}"
    qualname = getattr(func, "__qualname__", "") or ""
    if qualname.startswith(("Tensor.", "TensorBase.", "_TensorBase.")):
        return f"Tensor.{name}"
    return f"Torch.{name}"


def _saturate(torch, func, result):
    if isinstance(result, torch.Tensor):
        if result.dtype != torch.float16:
            return result
        in_place = getattr(func, "__name__", "").endswith("_")
        with torch.no_grad() if in_place else contextlib.nullcontext():
            if in_place:
                return result.nan_to_num_(0.0, FP16_MAX, -FP16_MAX)
        return torch.nan_to_num(result, nan=0.0, posinf=FP16_MAX, neginf=-FP16_MAX)
    if isinstance(result, (tuple, list)) and any(isinstance(r, torch.Tensor) for r in result):
        items = [_saturate(torch, func, r) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    return result


# --------------------------------------------------------------------------- mindspore


def run_mindspore_side(torch, source: Source, job: dict, reference: Side) -> Side:
    """Run the MindSpore port on the reference's inputs, with the torch weights loaded by name."""
    import mindspore
    import numpy

    options = job.get("options", {})
    settings = options.get("mindspore") or {}
    pair = settings.get("pair")
    if not pair:
        raise SetupError("bad-job", "no MindSpore port to pair with: name it <function>_ms or mark the torch "
                                    "function with `# ascend-lsp: mindspore-pair=<name>`")
    renames = {(r["torch-module"], r["torch"]): r for r in settings.get("weights", [])}
    result = Side()
    loaded_cells: dict[int, dict[str, str]] = {}  # id(cell) → torch state key → MindSpore parameter name
    cells: dict[int, object] = {}
    cell_names: dict[int, str] = {}
    state = {"depth": 0, "calls": 0}
    original_call = mindspore.nn.Cell.__call__

    def call(cell, *args, **kwargs):
        if state["depth"] == 0:
            index = state["calls"]
            state["calls"] += 1
            if index < len(reference.top_calls):
                module, torch_args = reference.top_calls[index]
                torch_args = [a.detach().cpu() if isinstance(a, torch.Tensor) else a for a in torch_args]
                if id(cell) not in loaded_cells:
                    cells[id(cell)] = cell
                    loaded_cells[id(cell)] = _load_weights(mindspore, numpy, cell, module,
                                                           reference.initial_state[id(module)], renames, result)
                    cell_names[id(cell)] = reference.module_names[id(module)]
                args = _same_inputs(mindspore, args, torch_args, index, result)
        state["depth"] += 1
        try:
            return original_call(cell, *args, **kwargs)
        finally:
            state["depth"] -= 1

    stdout = io.StringIO()
    with _Patches() as patches, contextlib.redirect_stdout(stdout):
        if reference.layers is not None:
            result.layers = Layers(torch, source.path)
            original_call = _record_cells(mindspore, patches, result.layers, original_call)
        patches.set(mindspore.nn.Cell, "__call__", call)
        random.seed(options.get("seed", 0))
        numpy.random.seed(options.get("seed", 0))
        mindspore.set_seed(options.get("seed", 0))
        started = time.perf_counter()
        try:
            value = _port_source(job, source).execute(pair)
        except SetupError:
            raise
        except Exception as exc:
            raise SnippetError("target", _mapped_error(exc, source.path, options.get("memory_limit_mb"))) from None
        result.seconds = time.perf_counter() - started
    result.stdout = stdout.getvalue()[-TAIL_CHARS:]
    result.outputs = flatten(torch, "out", value)
    if options.get("grad"):
        result.notes.append("gradients are not compared for the mindspore target")
    # The final value of every mapped parameter: compare_sides pairs those the torch run changed.
    for cell_id, mapping in loaded_cells.items():
        params = dict(cells[cell_id].parameters_and_names())
        for key, ms_name in mapping.items():
            value = torch.from_numpy(numpy.array(params[ms_name].asnumpy(), copy=True))
            result.state.append((f"state:{cell_names[cell_id]}.{key}", value))
    result.dropout = reference.dropout
    if result.layers is not None:
        result.layers.name_modules(list(cells.values()), names_of=lambda cell: cell.cells_and_names())
    if reference.top_calls and not loaded_cells:
        result.notes.append("the MindSpore port called no Cell: torch weights and inputs were not transferred")
    return result


def _port_source(job: dict, source: Source) -> Source:
    """The ported file (`lsp-check port`) when the job pairs with one, else the job's own file."""
    port = ((job.get("options") or {}).get("mindspore") or {}).get("port")
    if not port:
        return source
    return Source({"file": port, "entry": {"function": job["options"]["mindspore"]["pair"]},
                   "options": job.get("options", {})})


def _record_cells(mindspore, patches: _Patches, layers: Layers, original_call):
    """Every Cell call, recorded after the outermost call's inputs were replaced by torch's."""
    _patch_module_construction(mindspore.nn.Cell, patches, layers)

    def recording(cell, *args, **kwargs):
        index = layers.enter("module", cell, type(cell).__name__, args, kwargs)
        output = original_call(cell, *args, **kwargs)
        layers.exit(index, output)
        return output
    return recording


def _load_weights(mindspore, numpy, cell, module, initial: dict, renames: dict, side: Side) -> dict[str, str]:
    params = dict(cell.parameters_and_names())
    submodules = dict(module.named_modules())
    mapping, skipped = {}, []
    for key, value in initial.items():
        prefix, _, local = key.rpartition(".")
        kind = type(submodules.get(prefix, module))
        qualified = f"torch.nn.{kind.__name__}" if kind.__module__.startswith("torch.nn") else kind.__qualname__
        rename = renames.get((qualified, local), {})
        ms_name = ".".join(filter(None, [prefix, rename.get("mindspore", local)]))
        if ms_name not in params:
            skipped.append(key)
            continue
        array = value.numpy()
        if rename.get("transform") == "unsqueeze-2":
            array = numpy.expand_dims(array, 2)
        param = params[ms_name]
        if tuple(array.shape) != tuple(param.shape):
            skipped.append(f"{key} (shape {list(array.shape)} vs {list(param.shape)})")
            continue
        param.set_data(mindspore.Tensor(array.astype(mindspore.dtype_to_nptype(param.dtype))))
        mapping[key] = ms_name
    unset = sorted(set(params) - set(mapping.values()))
    side.notes.append(f"loaded {len(mapping)} torch tensors into {type(cell).__name__}")
    if skipped:
        side.notes.append(f"torch state with no MindSpore counterpart: {', '.join(skipped)}")
    if unset:
        side.notes.append(f"MindSpore parameters not loaded from torch: {', '.join(unset)}")
    return mapping


def _same_inputs(mindspore, args: tuple, torch_args: list, index: int, side: Side) -> tuple:
    replaced = []
    for position, arg in enumerate(args):
        source = torch_args[position] if position < len(torch_args) else None
        if isinstance(arg, mindspore.Tensor) and source is not None and hasattr(source, "numpy"):
            if tuple(arg.shape) == tuple(source.shape):
                replaced.append(mindspore.Tensor(source.numpy().astype(mindspore.dtype_to_nptype(arg.dtype))))
                continue
            side.notes.append(f"call {index} input {position}: shape {list(arg.shape)} differs from torch's "
                              f"{list(source.shape)}; not replaced")
        replaced.append(arg)
    return tuple(replaced)


# --------------------------------------------------------------------------- comparison


def compare_sides(torch, reference: Side, candidate: Side, job: dict, target: Target) -> list[dict]:
    metrics = job.get("metrics", {})
    cutoffs = metrics.get("rel_err_cutoffs", [0.01, 0.001, 0.0001])
    eps_overrides = metrics.get("rel_err_eps", {"bfloat16": 2**-8})
    small_values = metrics.get("small_value", {})
    autocast = bool(target.emulate and target.emulate.get("autocast"))
    # Dropout masks come from each device's own generator: only the zero share can agree.
    dropout = reference.dropout and not (target.on_cpu and target.name != "mindspore")
    reports = []
    for group, ref_items, cand_items in (("output", reference.outputs, candidate.outputs),
                                         ("grad", reference.grads, candidate.grads),
                                         ("state", reference.state, candidate.state)):
        cand = dict(cand_items)
        if group == "state" and target.name == "mindspore":
            # torch state with no MindSpore counterpart (num_batches_tracked) is in the notes;
            # the port's parameters the torch run left alone are not outputs.
            ref_items = [(p, v) for p, v in ref_items if p in cand]
            cand = {p: v for p, v in cand.items() if any(p == q for q, _ in ref_items)}
        for path, ref_value in ref_items:
            report = compare_values(torch, path, ref_value, cand.pop(path, _MISSING), cutoffs, eps_overrides,
                                    small_values, autocast)
            report["group"] = group
            report["dropout"] = dropout and group != "state"
            reports.append(report)
        for path, value in cand.items():
            reports.append({"path": path, "group": group, "problem": "missing-reference",
                            "target": _describe(torch, value)})
    return reports


def _describe(torch, value) -> dict:
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch.")}
    return {"repr": repr(value)[:200]}


def compare_values(torch, path, ref, cand, cutoffs, eps_overrides, small_values, autocast, ulp=True) -> dict:
    report = {"path": path, "reference": _describe(torch, ref)}
    if cand is _MISSING:
        report["problem"] = "missing-target"
        return report
    report["target"] = _describe(torch, cand)
    if not (isinstance(ref, torch.Tensor) and isinstance(cand, torch.Tensor)):
        report.update(kind="value", equal=(type(ref) is type(cand) and repr(ref) == repr(cand)))
        return report
    if ref.shape != cand.shape:
        report["problem"] = "shape"
        return report
    ref_float, cand_float = ref.is_floating_point(), cand.is_floating_point()
    if ref.dtype != cand.dtype:
        report["dtype_mismatch"] = True
    if not ref_float and not cand_float and not ref.is_complex():
        mismatch = int((ref.to(torch.int64) != cand.to(torch.int64)).sum()) if ref.numel() else 0
        report.update(kind="exact", grade_dtype=report["reference"]["dtype"], numel=ref.numel(),
                      metrics={"mismatch": mismatch, "mismatch_ratio": mismatch / max(ref.numel(), 1),
                               "max_abs": float((ref.double() - cand.double()).abs().max()) if ref.numel() else 0.0})
        return report
    if ref.is_complex() or cand.is_complex():
        ref, cand = torch.view_as_real(ref.resolve_conj()), torch.view_as_real(cand.resolve_conj())
    grade_dtype = cand.dtype if autocast and cand.dtype in (torch.float16, torch.bfloat16) else ref.dtype
    if not grade_dtype.is_floating_point:
        grade_dtype = torch.float32
    report.update(kind="float", grade_dtype=str(grade_dtype).removeprefix("torch."), numel=ref.numel(),
                  metrics=_float_metrics(torch, ref, cand, grade_dtype, cutoffs, eps_overrides, small_values, ulp))
    return report


def _float_metrics(torch, r, t, grade_dtype, cutoffs, eps_overrides, small_values, ulp: bool = True) -> dict:
    numel = r.numel()
    if numel and r.dtype == t.dtype and torch.equal(r, t):
        # Bit-identical (so no NaN): decided by comparison, not by a reduction's rounding.
        infinite, zeros = int(torch.isinf(r).sum()), int((r == 0).sum())
        return {"max_abs": 0.0, "max_rel": 0.0, "mean_rel": 0.0, "cosine": 1.0,
                "rel_err_share": {format(c, "g"): 1.0 for c in cutoffs}, "ulp_max": 0.0, "ulp_mean": 0.0,
                "compared": numel - infinite, "nan_inf_mismatch": 0, "nan_ref": 0, "inf_ref": infinite,
                "nan_target": 0, "inf_target": infinite, "zeros_ref": zeros, "zeros_target": zeros,
                "zero_count_diff_ratio": 0.0}
    # counted in the tensors' own dtype (float64 copies cost memory bandwidth), measured in float64
    nan_inf = [int(torch.isnan(r).sum()), int(torch.isinf(r).sum()), int(torch.isnan(t).sum()),
               int(torch.isinf(t).sum())]
    zeros_ref, zeros_target = int((r == 0).sum()), int((t == 0).sum())
    r, t = r.double(), t.double()
    if any(nan_inf):
        mismatch = int(((torch.isnan(r) != torch.isnan(t)) | (torch.isposinf(r) != torch.isposinf(t)) |
                        (torch.isneginf(r) != torch.isneginf(t))).sum())
        finite = torch.isfinite(r) & torch.isfinite(t)
        rf, tf = r[finite], t[finite]
    else:  # the common case: no mask, no copy
        mismatch, rf, tf = 0, r.reshape(-1), t.reshape(-1)
    counts = {
        "compared": rf.numel(),  # the elements finite on both sides: what every metric below is over
        "nan_inf_mismatch": mismatch,
        "nan_ref": nan_inf[0], "inf_ref": nan_inf[1], "nan_target": nan_inf[2], "inf_target": nan_inf[3],
        "zeros_ref": zeros_ref, "zeros_target": zeros_target,
        "zero_count_diff_ratio": abs(zeros_target - zeros_ref) / max(numel, 1),
    }
    if rf.numel() == 0:  # nothing finite on both sides: no number to show, not a perfect one
        return {"max_abs": None, "max_rel": None, "mean_rel": None, "cosine": None,
                "rel_err_share": {format(c, "g"): None for c in cutoffs}, "ulp_max": None, "ulp_mean": None,
                **counts}
    if torch.equal(rf, tf):  # equal where both are finite: decided by comparison, not by a reduction
        return {"max_abs": 0.0, "max_rel": 0.0, "mean_rel": 0.0, "cosine": 1.0,
                "rel_err_share": {format(c, "g"): 1.0 for c in cutoffs}, "ulp_max": 0.0, "ulp_mean": 0.0, **counts}
    diff = (tf - rf).abs()
    info = torch.finfo(grade_dtype)
    eps = eps_overrides.get(str(grade_dtype).removeprefix("torch."), info.eps)
    rel = diff / (rf.abs() + eps)
    ulp_max = ulp_mean = None
    if ulp:  # shown, not graded: the per-layer comparison leaves it out
        # ULP of the reference value in the graded dtype, over msprobe's non-small values only.
        mantissa = round(-torch.log2(torch.tensor(info.eps)).item())
        min_exponent = round(torch.log2(torch.tensor(info.tiny, dtype=torch.float64)).item())
        large = rf.abs() >= small_values.get(str(grade_dtype).removeprefix("torch."), 0.0)
        _, exponent = torch.frexp(rf[large])
        ulp_err = diff[large] / torch.ldexp(torch.ones_like(rf[large]), (exponent - 1).clamp(min=min_exponent) -
                                            mantissa)
        ulp_max = float(ulp_err.max()) if ulp_err.numel() else 0.0
        ulp_mean = float(ulp_err.mean()) if ulp_err.numel() else 0.0
    norm_r, norm_t = rf.norm(), tf.norm()
    if norm_r == 0 and norm_t == 0:
        cosine = 1.0
    elif norm_r == 0 or norm_t == 0:
        cosine = 0.0
    else:
        cosine = float((rf @ tf) / (norm_r * norm_t))
    return {
        "max_abs": float(diff.max()),
        "max_rel": float(rel.max()),
        "mean_rel": float(rel.mean()),
        "cosine": min(cosine, 1.0),
        "rel_err_share": {format(c, "g"): int((rel < c).sum()) / rel.numel() for c in cutoffs},
        "ulp_max": ulp_max,
        "ulp_mean": ulp_mean,
        **counts,
    }


# --------------------------------------------------------------------------- layers


class Layers:
    """Every nn.Module (or MindSpore Cell) call of one run, and at the API level every torch
    function and tensor method, with CPU copies of their tensors. A tensor handed unchanged
    from one call to the next (same object, same version counter) is stored once."""

    def __init__(self, torch, path: str, api: bool = False):
        self.torch, self.path, self.api = torch, path, api
        self.calls: list[dict] = []
        self.tensors: list = []
        self.built: dict[int, dict] = {}  # id(module or cell) → where the user's file constructed it
        self.busy = False  # our own copies must not be recorded as API calls
        self._objects: dict[int, object] = {}  # call index → module (until named)
        self._live: dict[int, tuple] = {}  # id(live tensor) → (weakref, version, index)
        self._open: list[int] = []
        self._api_counts: dict[str, int] = {}

    def user_frame(self, owner=None) -> dict | None:
        """The innermost frame in the user's file (outside `owner`'s own __init__ chain)."""
        frame = sys._getframe(2)
        while frame is not None:
            code = frame.f_code
            if code.co_filename == self.path and not (
                    owner is not None and code.co_name == "__init__" and frame.f_locals.get("self") is owner):
                return {"path": self.path, "line": frame.f_lineno, "function": code.co_name}
            frame = frame.f_back
        return None

    def constructed(self, obj) -> None:
        if id(obj) not in self.built:
            self.built[id(obj)] = self.user_frame(obj)

    def enter(self, kind: str, obj, name: str, args: tuple, kwargs: dict) -> int:
        self.busy = True
        try:
            inputs = [self._index(t) for t in self._tensors((args, kwargs))]
            index = len(self.calls)
            self.calls.append({"kind": kind, "name": name, "class": name if kind == "module" else None,
                               "parent": self._open[-1] if self._open else None, "depth": len(self._open),
                               "inputs": inputs, "outputs": [], "call_source": self.user_frame(),
                               "source": self.built.get(id(obj)) if obj is not None else None})
            if obj is not None:
                self._objects[index] = obj
            self._open.append(index)
            return index
        finally:
            self.busy = False

    def exit(self, index: int, output) -> None:
        self.busy = True
        try:
            self._open.pop()
            call = self.calls[index]
            call["outputs"] = [self._index(t) for t in self._tensors(output)]
            if call["kind"] == "api":
                if not any(self.tensors[i].is_floating_point() for i in call["outputs"]):
                    if index == len(self.calls) - 1:
                        self.calls.pop()  # no float result: bookkeeping, not computation
                    return
                count = self._api_counts.get(call["name"], 0)
                self._api_counts[call["name"]] = count + 1
                call["call"] = count
        finally:
            self.busy = False

    def _tensors(self, value) -> list:
        return [t for _, t in flatten(self.torch, "", value, detach=False) if isinstance(t, self.torch.Tensor)]

    def _index(self, tensor) -> int:
        entry = self._live.get(id(tensor))
        if entry is not None and entry[0]() is tensor and entry[1] == tensor._version:
            return entry[2]
        self.tensors.append(tensor.detach().to("cpu", copy=True))
        index = len(self.tensors) - 1
        try:
            self._live[id(tensor)] = (weakref.ref(tensor), tensor._version, index)
        except TypeError:
            pass  # a tensor that takes no weak reference is copied again when met again
        return index

    def name_modules(self, tops: list, names_of=None) -> None:
        """Module paths as `named_modules()` gives them (prefixed by the top module's index
        when the run called several), then a call index per path, in call order."""
        names: dict[int, str] = {}
        for number, top in enumerate(tops):
            prefix = f"{number}." if len(tops) > 1 else ""
            for path, module in (names_of or _named_modules)(top):
                names.setdefault(id(module), (prefix + path).rstrip("."))
        counts: dict[str, int] = {}
        for index, call in enumerate(self.calls):
            if call["kind"] != "module":
                continue
            obj = self._objects.get(index)
            call["name"] = names.get(id(obj), f"<{call['class']}>")
            call["call"] = counts.get(call["name"], 0)
            counts[call["name"]] = call["call"] + 1
        self._objects.clear()
        self._live.clear()


def _named_modules(module):
    return module.named_modules()


def _patch_module_construction(base, patches: _Patches, layers: Layers) -> None:
    """Remember where the user's file constructs each module (or cell)."""
    original_init = base.__init__

    def init(self, *args, **kwargs):
        layers.constructed(self)
        original_init(self, *args, **kwargs)
    patches.set(base, "__init__", init)


def compare_layers(torch, ref: Layers, cand: Layers, metrics: dict, target, low_precision: bool = False) -> list[dict]:
    """One entry per reference call, in execution order, with its inputs and outputs compared;
    calls are paired by (kind, name, call index), then (MindSpore) the rest by call order.
    `low_precision`: a float16/bfloat16 target against a float32 reference is graded in its dtype."""
    params = (metrics.get("rel_err_cutoffs", [0.01, 0.001, 0.0001]), metrics.get("rel_err_eps", {}),
              metrics.get("small_value", {}), low_precision or bool(target.emulate and target.emulate.get("autocast")))
    pairs = _pair_calls(ref.calls, cand.calls, target.name == "mindspore")
    memo: dict[tuple, dict] = {}

    def compare(label: str, i: int | None, j: int | None) -> dict:
        if (i, j) not in memo:
            if i is None:
                memo[i, j] = {"problem": "missing-reference", "target": _describe(torch, cand.tensors[j])}
            else:
                memo[i, j] = compare_values(torch, label, ref.tensors[i],
                                            cand.tensors[j] if j is not None else _MISSING, *params, ulp=False)
        return {**memo[i, j], "path": label}

    layers = []
    for index, call in enumerate(ref.calls):
        other = pairs.get(index)
        entry = {"module": call["name"], "class": call["class"], "kind": call["kind"], "call": call.get("call", 0),
                 "parent": call["parent"], "depth": call["depth"], "source": call["source"],
                 "call_source": call["call_source"]}
        if other is None:
            entry["problem"] = "missing-target"
            entry["outputs"] = [compare(f"output.{k}", i, None) for k, i in enumerate(call["outputs"])]
            entry["inputs"] = []
        else:
            theirs = cand.calls[other]
            if theirs.get("class") and theirs["class"] != call["class"]:
                entry["target_class"] = theirs["class"]
            if target.name == "mindspore":
                entry["source"], entry["reference_source"] = theirs["source"] or call["source"], call["source"]
            entry["outputs"] = _compare_lists(compare, "output", call["outputs"], theirs["outputs"])
            entry["inputs"] = _compare_lists(compare, "input", call["inputs"], theirs["inputs"])
        layers.append(entry)
    matched = set(pairs.values())
    for other, call in enumerate(cand.calls):
        if other not in matched:
            layers.append({"module": call["name"], "class": call["class"], "kind": call["kind"],
                           "call": call.get("call", 0), "parent": None, "depth": call["depth"],
                           "source": call["source"], "call_source": call["call_source"],
                           "problem": "missing-reference", "inputs": [],
                           "outputs": [compare(f"output.{k}", None, j) for k, j in enumerate(call["outputs"])]})
    return layers


def _compare_lists(compare, label: str, mine: list, theirs: list) -> list[dict]:
    return [compare(f"{label}.{k}", mine[k] if k < len(mine) else None, theirs[k] if k < len(theirs) else None)
            for k in range(max(len(mine), len(theirs)))]


def _pair_calls(mine: list[dict], theirs: list[dict], by_order: bool) -> dict[int, int]:
    keys = {(c["kind"], c["name"], c.get("call", 0)): j for j, c in enumerate(theirs)}
    pairs = {}
    for i, call in enumerate(mine):
        j = keys.pop((call["kind"], call["name"], call.get("call", 0)), None)
        if j is not None:
            pairs[i] = j
    if by_order:
        rest = [j for j in range(len(theirs)) if j not in set(pairs.values()) and theirs[j]["kind"] == "module"]
        for i in (i for i, c in enumerate(mine) if i not in pairs and c["kind"] == "module"):
            if not rest:
                break
            pairs[i] = rest.pop(0)
    return pairs


# --------------------------------------------------------------------------- msprobe dumps


def dump_name(call: dict) -> str:
    """msprobe's row names: Module.{path}.{Class}.forward.{n}, or {Api}.{n}.forward."""
    if call["kind"] == "module":
        return f"Module.{call['name']}.{call['class']}.forward.{call.get('call', 0)}"
    return f"{call['name']}.{call.get('call', 0)}.forward"


# msprobe's own check of a dump path (FileCheckConst.FILE_VALID_PATTERN), without "/": a
# tensor file's name keeps to it, and to the 255 bytes a file name may have.
UNSAFE_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9_.:-]")
FILE_NAME_STEM = 200  # of 255: room for ".output.<n>.pt"


def dump_file_stem(name: str) -> str:
    """The stem of a row's tensor files: the row name itself, as msprobe names them, unless
    the module's name has a character a file name cannot (a ModuleDict key "a/b" would make
    a folder) or it is too long: then those characters become "_" and a digest of the name
    follows, so two rows never share a file. dump.json names each file (data_name), which is
    how msprobe's compare and compare-dumps find it; the row names are unchanged."""
    if not UNSAFE_IN_FILE_NAME.search(name) and len(name) <= FILE_NAME_STEM:
        return name
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
    return f"{UNSAFE_IN_FILE_NAME.sub('_', name)[:FILE_NAME_STEM - len(digest) - 1]}-{digest}"


def write_dump(torch, layers: Layers, root: str, tensors: bool = True) -> str:
    """Write one side in msprobe's layout (step0/rank/dump.json, construct.json, stack.json,
    dump_tensor_data/*.pt); the root module is not dumped, as msprobe does not."""
    rank = os.path.join(root, "step0", "rank")
    data_dir = os.path.join(rank, "dump_tensor_data")
    os.makedirs(data_dir if tensors else rank, exist_ok=True)
    data: dict = {}
    construct: dict = {}
    stack: dict = {}
    names = [dump_name(c) if c["name"] else None for c in layers.calls]

    def stat(index: int, file_name: str) -> dict:
        tensor = layers.tensors[index]
        entry = {"type": "torch.Tensor", "dtype": str(tensor.dtype), "shape": list(tensor.shape),
                 "requires_grad": False, **_statistics(torch, tensor)}
        if tensors:
            torch.save(tensor.contiguous(), os.path.join(data_dir, file_name))
            entry["data_name"] = file_name
        return entry

    for index, call in enumerate(layers.calls):
        name = names[index]
        if name is None:
            continue
        stem = dump_file_stem(name)
        data[name] = {"input_args": [stat(i, f"{stem}.input.{k}.pt") for k, i in enumerate(call["inputs"])],
                      "input_kwargs": {},
                      "output": [stat(i, f"{stem}.output.{k}.pt") for k, i in enumerate(call["outputs"])]}
        if call["kind"] == "module":
            data[name]["parameters"] = {}
        parent = call["parent"]
        while parent is not None and names[parent] is None:
            parent = layers.calls[parent]["parent"]
        construct[name] = names[parent] if parent is not None else None
        frame = call["call_source"]
        if frame:
            stack[str(len(stack))] = [[name], [f"File {frame['path']}, line {frame['line']}, in {frame['function']}, "
                                               f"\n {linecache.getline(frame['path'], frame['line']).strip()}"]]
    header = {"task": "tensor" if tensors else "statistics", "level": "L0" if not layers.api else "mix",
              "framework": "pytorch", "dump_data_dir": data_dir if tensors else None}
    for file_name, value in (("dump.json", {**header, "data": data}), ("construct.json", construct),
                             ("stack.json", stack)):
        with open(os.path.join(rank, file_name), "w", encoding="utf-8") as f:
            json.dump(value, f, indent=1)
    return rank


def _statistics(torch, tensor) -> dict:
    if tensor.numel() == 0:
        return {"Max": None, "Min": None, "Mean": None, "Norm": None}
    value = tensor.double() if not tensor.is_complex() else tensor.abs().double()
    return {"Max": float(value.max()), "Min": float(value.min()), "Mean": float(value.mean()),
            "Norm": float(value.norm())}


def read_dump(torch, root: str) -> tuple[Layers, dict]:
    """One side of an msprobe dump (a dump.json, its rank directory, or a tree holding one):
    forward rows become calls, parents from construct.json, call lines from stack.json."""
    path = _find_dump_json(root)
    rank = os.path.dirname(path)
    dump = _read_json(path)
    if not isinstance(dump, dict) or not isinstance(dump.get("data"), dict):
        raise SetupError("bad-dump", f"{path} is not an msprobe dump.json (no \"data\" object)")
    construct = _read_json(os.path.join(rank, "construct.json"))
    construct = construct if isinstance(construct, dict) else {}
    frames = _stack_frames(_read_json(os.path.join(rank, "stack.json")))
    data_dir = dump.get("dump_data_dir")
    # The folder the dump names (an absolute path where it was taken) only when it is this
    # dump's own: a dump.json does not choose what else is read.
    if not (isinstance(data_dir, str) and os.path.isdir(data_dir) and _inside(data_dir, rank)):
        data_dir = os.path.join(rank, "dump_tensor_data")
    layers = Layers(torch, "", api=dump.get("level") != "L0")
    index_of: dict[str, int] = {}
    for name, entry in (dump.get("data") or {}).items():
        parsed = _parse_dump_name(name)
        if parsed is None or not isinstance(entry, dict):
            continue
        kind, module, cls, call = parsed

        def load(items) -> list[int]:
            out = []
            for item in _dump_tensors(items):
                tensor = _load_dumped(torch, data_dir, item)
                layers.tensors.append(tensor)
                out.append(len(layers.tensors) - 1)
            return out
        parent = index_of.get(construct.get(name) or "")
        index_of[name] = len(layers.calls)
        layers.calls.append({"kind": kind, "name": module, "class": cls, "call": call, "parent": parent,
                             "depth": 0 if parent is None else layers.calls[parent]["depth"] + 1,
                             "inputs": load([entry.get("input_args"), entry.get("input_kwargs")]),
                             "outputs": load(entry.get("output")), "source": None,
                             "call_source": None, "stack": frames.get(name, [])})
    return layers, {"dump_json": path, "task": dump.get("task"), "level": dump.get("level")}


def _stack_frames(stack) -> dict[str, list[str]]:
    """row name → its stack frames; stack.json is {"0": [[names...], [frames...]]} (msprobe 26.x)
    or {name: [frames...]} (older releases)."""
    frames: dict[str, list[str]] = {}
    for key, value in (stack.items() if isinstance(stack, dict) else ()):
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, list) for v in value):
            for name in value[0]:
                frames[str(name)] = [str(f) for f in value[1]]
        elif isinstance(value, list):
            frames[key] = [str(f) for f in value]
    return frames


def _find_dump_json(root: str) -> str:
    if os.path.isfile(root):
        return root
    found = sorted(os.path.join(folder, "dump.json") for folder, _, files in os.walk(root) if "dump.json" in files)
    if not found:
        raise SetupError("bad-dump", f"no dump.json under {root}")
    if len(found) > 1:
        raise SetupError("bad-dump", f"{len(found)} dump.json files under {root} (one per step and rank): name one "
                                     f"rank directory, e.g. {os.path.dirname(found[0])}")
    return found[0]


def _read_json(path: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _parse_dump_name(name: str):
    """("module", path, Class, n) or ("api", "Functional.conv2d", None, n); None for backward rows."""
    parts = name.split(".")
    if parts[0] == "Module" and len(parts) >= 5 and parts[-2] == "forward" and parts[-1].isdigit():
        return "module", ".".join(parts[1:-3]), parts[-3], int(parts[-1])
    if len(parts) >= 4 and parts[-1] == "forward" and parts[-2].isdigit():
        return "api", ".".join(parts[:-2]), None, int(parts[-2])
    return None


def _dump_tensors(value) -> list[dict]:
    if isinstance(value, dict) and "type" in value and "shape" in value:
        return [value] if value.get("type") in ("torch.Tensor", "mindspore.Tensor", "numpy.ndarray") else []
    if isinstance(value, dict):
        return [t for item in value.values() for t in _dump_tensors(item)]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _dump_tensors(item)]
    return []


def _inside(path: str, folder: str) -> bool:
    return os.path.realpath(path).startswith(os.path.join(os.path.realpath(folder), ""))


def _load_dumped(torch, data_dir: str, item: dict):
    name = item.get("data_name")
    if not name:
        raise SetupError("bad-dump", "this dump holds statistics only (task \"statistics\"): compare-dumps needs "
                                     "tensors (dump with task \"tensor\")")
    path = os.path.join(data_dir, name)
    if not _inside(path, data_dir):
        raise SetupError("bad-dump", f"data_name {name!r} points outside the dump's {data_dir}")
    try:
        tensor = torch.load(path, map_location="cpu", weights_only=True) if name.endswith(".pt") else \
            torch.from_numpy(__import__("numpy").load(path))
    except Exception as exc:  # torch.load raises OSError, RuntimeError, pickle errors...
        raise SetupError("bad-dump", f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    return tensor


def compare_dump_dirs(job: dict) -> dict:
    """kind "compare-dumps": two msprobe dumps (bench, npu), compared call by call."""
    started = time.perf_counter()
    try:
        torch = _import("torch", "torch")
        bench, bench_info = read_dump(torch, job["bench"])
        npu, npu_info = read_dump(torch, job["npu"])
    except SetupError as exc:
        return _failed(exc.code, str(exc))
    target = Target("dumps", "dump")
    # msprobe matches float16, float32 and bfloat16 with each other (DTYPE_MATCH_GROUPS)
    layers = compare_layers(torch, bench, npu, job.get("metrics", {}), target, low_precision=True)
    for entry, call in zip(layers, bench.calls):
        entry["stack"] = call["stack"]
    return {"status": "ok", "target": target.describe(), "outputs": [], "layers": layers,
            "notes": [f"bench: {bench_info['dump_json']}", f"npu: {npu_info['dump_json']}"],
            "timing": {"total_s": round(time.perf_counter() - started, 6)}, "worker": {"torch": torch.__version__}}


if __name__ == "__main__":
    main()
