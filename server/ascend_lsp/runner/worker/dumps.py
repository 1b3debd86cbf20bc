"""msprobe's dump layout: one side written as msprobe writes it, two dumps read and compared."""

from __future__ import annotations

import hashlib
import json
import linecache
import os
import re
import time

from .failures import SetupError, failure, import_required
from .layer_calls import Layers, compare_layers
from .run_target import Target

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
        torch = import_required("torch", "torch")
        bench, bench_info = read_dump(torch, job["bench"])
        npu, npu_info = read_dump(torch, job["npu"])
    except SetupError as exc:
        return failure(exc.code, str(exc))
    target = Target("dumps", "dump")
    # msprobe matches float16, float32 and bfloat16 with each other (DTYPE_MATCH_GROUPS)
    layers = compare_layers(torch, bench, npu, job.get("metrics", {}), target, low_precision=True)
    for entry, call in zip(layers, bench.calls):
        entry["stack"] = call["stack"]
    return {"status": "ok", "target": target.describe(), "outputs": [], "layers": layers,
            "notes": [f"bench: {bench_info['dump_json']}", f"npu: {npu_info['dump_json']}"],
            "timing": {"total_s": round(time.perf_counter() - started, 6)}, "worker": {"torch": torch.__version__}}
