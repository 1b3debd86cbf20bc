"""The mindspore target: the port runs on the reference's inputs with the torch weights loaded."""

from __future__ import annotations

import contextlib
import io
import random
import time
from typing import Any

from .failures import SetupError, SnippetError, mapped_error
from .layer_calls import Layers, patch_module_construction
from .patches import Patches
from .sides import TAIL_CHARS, Side
from .tensor_values import flatten
from .user_code import UserCode

def run_mindspore_side(torch, source: UserCode, job: dict, reference: Side) -> Side:
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
    cells: dict[int, Any] = {}  # the port's cells
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
    with Patches() as patches, contextlib.redirect_stdout(stdout):
        port = _port_source(job, source)
        if reference.layers is not None:  # cells built and called in the port's file, when it has one
            result.layers = Layers(torch, port.path)
            original_call = _record_cells(mindspore, patches, result.layers, original_call)
        patches.set(mindspore.nn.Cell, "__call__", call)
        random.seed(options.get("seed", 0))
        numpy.random.seed(options.get("seed", 0))
        mindspore.set_seed(options.get("seed", 0))
        started = time.perf_counter()
        try:
            value = port.execute(pair)
        except SetupError:
            raise
        except Exception as exc:
            raise SnippetError("target", mapped_error(exc, source.path, options.get("memory_limit_mb"))) from None
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


def _port_source(job: dict, source: UserCode) -> UserCode:
    """The ported file (`lsp-check port`) when the job pairs with one, else the job's own file."""
    port = ((job.get("options") or {}).get("mindspore") or {}).get("port")
    if not port:
        return source
    return UserCode({"file": port, "entry": {"function": job["options"]["mindspore"]["pair"]},
                   "options": job.get("options", {})})


def _record_cells(mindspore, patches: Patches, layers: Layers, original_call):
    """Every Cell call, recorded after the outermost call's inputs were replaced by torch's."""
    patch_module_construction(mindspore.nn.Cell, patches, layers)

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
