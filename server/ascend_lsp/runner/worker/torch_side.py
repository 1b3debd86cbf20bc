"""One torch run (the reference on the CPU, or the target): patched, seeded, timed, recorded."""

from __future__ import annotations

import contextlib
import io
import random
import time

from .emulation import keep_switches, patch_emulation
from .failures import SetupError, SnippetError, mapped_error
from .layer_calls import Layers, function_mode, patch_module_construction
from .patches import Patches
from .run_target import Target
from .sides import TAIL_CHARS, Recorder, Side
from .tensor_values import flatten, to_cpu
from .torch_patches import patch_devices_to_cpu, patch_module_calls, patch_random
from .user_code import UserCode

def run_torch_side(torch, source: UserCode, job: dict, target: Target, side: str, autocast: str | None = None) -> Side:
    """`side`: reference (float32 on the CPU), target, or benchmark (the reference model on the
    CPU under autocast to `autocast`, the target's dtype)."""
    options = job.get("options", {})
    on_cpu = side != "target" or target.on_cpu
    rec = Recorder(torch, bool(options.get("capture_inputs")))
    if options.get("layers"):
        rec.layers = Layers(torch, source.path, api=options["layers"] == "api")
    emulate = target.emulate if side == "target" else None
    result = Side()
    stdout = io.StringIO()
    with contextlib.ExitStack() as stack:
        patches = stack.enter_context(Patches())
        keep_switches(torch, stack)
        patch_random(torch, patches, rec, on_cpu)
        patch_module_calls(torch, patches, rec)
        if rec.layers is not None:
            patch_module_construction(torch.nn.Module, patches, rec.layers)
        if on_cpu:
            patch_devices_to_cpu(torch, patches)
        else:
            previous = torch.get_default_device()
            torch.set_default_device(target.device)
            stack.callback(torch.set_default_device, previous)
        if emulate is not None:
            patch_emulation(torch, patches, emulate, result.notes)
            autocast = emulate.get("autocast")
        if autocast:
            stack.enter_context(torch.autocast("cpu", dtype=getattr(torch, autocast)))
        saturate = bool(emulate and emulate.get("fp16_saturation"))
        if saturate or (rec.layers is not None and rec.layers.api):
            stack.enter_context(function_mode(torch, rec.layers, saturate))
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
            raise SnippetError(side, mapped_error(exc, source.path, options.get("memory_limit_mb"))) from None
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
            grads.append((f"grad:input[{index}]", to_cpu(torch, leaf.grad)))
    for module in rec.modules:
        for pname, param in module.named_parameters():
            if param.grad is not None:
                grads.append((f"grad:{names[id(module)]}.{pname}", to_cpu(torch, param.grad)))
    return grads


def _changed_state(torch, rec: Recorder, names: dict) -> list:
    # Parameters and buffers the run changed (running stats, an optimizer step): their
    # final values are outputs too. Unchanged weights would only repeat the inputs.
    state = []
    for module in rec.modules:
        initial = rec.initial_state[id(module)]
        for key, value in module.state_dict().items():
            final = to_cpu(torch, value)
            if key in initial and not torch.equal(initial[key], final):
                state.append((f"state:{names[id(module)]}.{key}", final))
    return state
