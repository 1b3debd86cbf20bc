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
import hashlib
import io
import json
import linecache
import os
import random
import sys
import textwrap
import time
import traceback
import types

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
    result = {
        "status": "ok",
        "target": target.describe(),
        "outputs": outputs,
        "notes": target.notes + reference.notes + candidate.notes,
        "stdout": {"reference": reference.stdout, "target": candidate.stdout},
        "timing": {"import_s": round(import_s, 4), "reference_s": round(reference.seconds, 6),
                   "target_s": round(candidate.seconds, 6),
                   "compare_s": round(time.perf_counter() - compare_started, 6),
                   "total_s": round(time.perf_counter() - started, 6)},
        "worker": worker_info,
    }
    if options.get("capture_inputs"):
        result["inputs"] = {"reference": reference.draws, "target": candidate.draws}
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
        if self.emulate.get("conv_hf32", True):
            notes.append("fp32 convolutions in HF32 (Ascend A2/A3 default)")
        if self.emulate.get("matmul_hf32"):
            notes.append("fp32 matmul in HF32 (torch.npu.matmul.allow_hf32 = True)")
        if self.emulate.get("autocast"):
            notes.append(f"autocast to {self.emulate['autocast']}")
        return notes

    @classmethod
    def prepare(cls, torch, job: dict) -> "Target":
        name = job.get("target")
        options = job.get("options", {})
        if name == "cpu":
            return cls("cpu", "cpu")
        if name == "emulate":
            target = cls("emulate", "cpu", dict(options.get("emulate") or {}))
            if target.emulate.get("conv_hf32", True) or target.emulate.get("matmul_hf32"):
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
    result = Side()
    stdout = io.StringIO()
    with contextlib.ExitStack() as stack:
        patches = stack.enter_context(_Patches())
        _patch_random(torch, patches, rec, on_cpu)
        _patch_module_calls(torch, patches, rec)
        if on_cpu:
            _patch_devices_to_cpu(torch, patches)
        else:
            previous = torch.get_default_device()
            torch.set_default_device(target.device)
            stack.callback(torch.set_default_device, previous)
        if side == "target" and target.emulate is not None:
            _patch_emulation(torch, patches, target.emulate)
            if target.emulate.get("autocast"):
                stack.enter_context(torch.autocast("cpu", dtype=getattr(torch, target.emulate["autocast"])))
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
    result.outputs = _flatten(torch, "out", value)
    result.dropout = rec.dropout
    result.draws = rec.draws
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
    leaves = [t for _, t in _flatten(torch, "out", value, detach=False)
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


def _flatten(torch, path: str, value, detach: bool = True) -> list[tuple[str, object]]:
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
        return [leaf for key, item in value.items() for leaf in _flatten(torch, f"{path}[{key!r}]", item, detach)]
    if isinstance(value, (list, tuple)):
        return [leaf for i, item in enumerate(value) for leaf in _flatten(torch, f"{path}[{i}]", item, detach)]
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
    patches.set(torch.nn.Module, "__call__", call)

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


def _patch_emulation(torch, patches: _Patches, emulate: dict) -> None:
    def rounding(original, positions):
        def run(*args, **kwargs):
            args = tuple(round_to_hf32(torch, a) if i in positions and isinstance(a, torch.Tensor) else a
                         for i, a in enumerate(args))
            return original(*args, **kwargs)
        return run

    functional = torch.nn.functional
    if emulate.get("conv_hf32", True):
        for name in CONV_FUNCTIONS:
            patches.set(functional, name, rounding(getattr(functional, name), (0, 1)))
            patches.set(torch, name, rounding(getattr(torch, name), (0, 1)))
    if emulate.get("matmul_hf32"):
        for name, positions in MATMUL_FUNCTIONS.items():
            patches.set(torch, name, rounding(getattr(torch, name), positions))
            if name in ("matmul", "mm", "bmm"):
                patches.set(torch.Tensor, name, rounding(getattr(torch.Tensor, name), positions))
        patches.set(torch.Tensor, "__matmul__", rounding(torch.Tensor.__matmul__, (0, 1)))
        patches.set(functional, "linear", rounding(functional.linear, (0, 1)))


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
    result.outputs = _flatten(torch, "out", value)
    if options.get("grad"):
        result.notes.append("gradients are not compared for the mindspore target")
    # The final value of every mapped parameter: compare_sides pairs those the torch run changed.
    for cell_id, mapping in loaded_cells.items():
        params = dict(cells[cell_id].parameters_and_names())
        for key, ms_name in mapping.items():
            value = torch.from_numpy(numpy.array(params[ms_name].asnumpy(), copy=True))
            result.state.append((f"state:{cell_names[cell_id]}.{key}", value))
    result.dropout = reference.dropout
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


def compare_values(torch, path, ref, cand, cutoffs, eps_overrides, small_values, autocast) -> dict:
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
                  metrics=_float_metrics(torch, ref.double(), cand.double(), grade_dtype, cutoffs, eps_overrides,
                                         small_values))
    return report


def _float_metrics(torch, r, t, grade_dtype, cutoffs, eps_overrides, small_values) -> dict:
    numel = r.numel()
    mismatch = ((torch.isnan(r) != torch.isnan(t)) | (torch.isposinf(r) != torch.isposinf(t)) |
                (torch.isneginf(r) != torch.isneginf(t)))
    finite = torch.isfinite(r) & torch.isfinite(t)
    rf, tf = r[finite], t[finite]
    diff = (tf - rf).abs()
    info = torch.finfo(grade_dtype)
    eps = eps_overrides.get(str(grade_dtype).removeprefix("torch."), info.eps)
    rel = diff / (rf.abs() + eps)
    # ULP of the reference value in the graded dtype, over msprobe's non-small values only.
    mantissa = round(-torch.log2(torch.tensor(info.eps)).item())
    min_exponent = round(torch.log2(torch.tensor(info.tiny, dtype=torch.float64)).item())
    large = rf.abs() >= small_values.get(str(grade_dtype).removeprefix("torch."), 0.0)
    _, exponent = torch.frexp(rf[large])
    ulp = torch.ldexp(torch.ones_like(rf[large]), (exponent - 1).clamp(min=min_exponent) - mantissa)
    ulp_err = diff[large] / ulp
    norm_r, norm_t = rf.norm(), tf.norm()
    if norm_r == 0 and norm_t == 0:
        cosine = 1.0
    elif norm_r == 0 or norm_t == 0:
        cosine = 0.0
    else:
        cosine = float((rf @ tf) / (norm_r * norm_t))
    zeros_ref, zeros_target = int((r == 0).sum()), int((t == 0).sum())
    has = diff.numel() > 0
    return {
        "max_abs": float(diff.max()) if has else 0.0,
        "max_rel": float(rel.max()) if has else 0.0,
        "mean_rel": float(rel.mean()) if has else 0.0,
        "cosine": min(cosine, 1.0),
        "rel_err_share": {format(c, "g"): float((rel < c).double().mean()) if has else 1.0 for c in cutoffs},
        "ulp_max": float(ulp_err.max()) if ulp_err.numel() else 0.0,
        "ulp_mean": float(ulp_err.mean()) if ulp_err.numel() else 0.0,
        "nan_inf_mismatch": int(mismatch.sum()),
        "nan_ref": int(torch.isnan(r).sum()), "inf_ref": int(torch.isinf(r).sum()),
        "nan_target": int(torch.isnan(t).sum()), "inf_target": int(torch.isinf(t).sum()),
        "zeros_ref": zeros_ref, "zeros_target": zeros_target,
        "zero_count_diff_ratio": abs(zeros_target - zeros_ref) / max(numel, 1),
    }


if __name__ == "__main__":
    main()
