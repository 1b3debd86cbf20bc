"""`lsp-check convert-weights`: a PyTorch state dict → a MindSpore checkpoint for the port.

Names and layouts follow the rules the port used: the layer each `self.X = nn.Layer(...)`
(or the i-th element of a literal `nn.Sequential(...)`) holds, read from the source, and
mappings/mindspore/weights.toml for what that layer's parameters are called in MindSpore
(P05 names, P49 Conv1d layout). torch and mindspore are imported only by `convert_file`,
in this subcommand's process.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import BinaryIO

from ..knowledge.weights import WeightTable, load_weight_table
from ..safe_write import write_file
from ..sources import SourceError, open_regular

# Where checkpoints usually keep the state dict.
STATE_KEYS = ("state_dict", "model_state_dict", "model", "net", "module", "weights")
DROPPED = {"num_batches_tracked": "BatchNorm's step counter has no MindSpore counterpart"}


@dataclass
class Conversion:
    tensors: dict[str, object] = field(default_factory=dict)  # MindSpore name → numpy array
    renamed: list[tuple[str, str, str]] = field(default_factory=list)  # torch name, MindSpore name, why
    dropped: list[tuple[str, str]] = field(default_factory=list)  # torch name, why
    unmapped: list[tuple[str, str]] = field(default_factory=list)  # torch name, why

    def to_dict(self) -> dict:
        return {"tensors": len(self.tensors), "renamed": [dict(zip(("torch", "mindspore", "why"), r))
                                                          for r in self.renamed],
                "dropped": [dict(zip(("torch", "why"), d)) for d in self.dropped],
                "unmapped": [dict(zip(("torch", "why"), u)) for u in self.unmapped]}


class SourceLayers(ast.NodeVisitor):
    """Which torch layer each attribute (and each element of a literal Sequential) holds."""

    def __init__(self, text: str) -> None:
        self.aliases: dict[str, str] = {}
        self.attributes: dict[str, set[str]] = {}
        self.sequences: dict[str, set[tuple[str, ...]]] = {}
        self.called: set[str] = set()  # every torch layer the source constructs or names, wherever
        self.ties: list[tuple[str, str]] = []  # `self.a.weight = self.b.weight`: (a.weight, b.weight)
        tree = ast.parse(text)
        # the file's classes and their bases
        self.bases: dict[str, list[ast.expr]] = {node.name: node.bases for node in ast.walk(tree)
                                                 if isinstance(node, ast.ClassDef)}
        self.visit(tree)

    def kind(self, node: ast.expr, seen: frozenset[str] = frozenset()) -> str:
        """The class a call of `node` builds: a torch class's qualified name; for a class of this file
        that derives from a torch layer (`class LayerNorm(nn.LayerNorm)`), that layer, whose parameters
        it has; else the class's own name, whose parameters the port keeps ("" for anything else)."""
        name = self.qualname(node)
        if name or not isinstance(node, ast.Name) or node.id not in self.bases or node.id in seen:
            return name
        for base in self.bases[node.id]:
            found = self.kind(base, seen | {node.id})
            if found.startswith("torch.nn.") and found.rsplit(".", 1)[1] not in ("Module", "Sequential",
                                                                                 "ModuleList", "ModuleDict"):
                return found
        return node.id

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] == "torch":
                self.aliases[alias.asname or "torch"] = alias.name if alias.asname else "torch"

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.module.split(".")[0] == "torch" and not node.level:
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def qualname(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, "")
        if isinstance(node, ast.Attribute):
            head = self.qualname(node.value)
            return f"{head}.{node.attr}" if head else ""
        return ""

    def visit_Assign(self, node: ast.Assign) -> None:
        value = _self_path(node.value)
        if value:
            self.ties += [(target, value) for target in map(_self_path, node.targets) if target]
        if isinstance(node.value, ast.Call):
            kind = self.kind(node.value.func)
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self":
                    self.attributes.setdefault(target.attr, set()).add(kind)
                    elements = self._elements(kind, node.value.args)
                    if elements is not None:
                        self.sequences.setdefault(target.attr, set()).add(elements)
        self.generic_visit(node)

    def _elements(self, kind: str, args: list[ast.expr]) -> tuple[str, ...] | None:
        """The layers of a literal nn.Sequential(a, b) / nn.ModuleList([a, b]), by index."""
        if kind == "torch.nn.ModuleList" and len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
            args = args[0].elts
        elif kind != "torch.nn.Sequential":
            return None
        if any(isinstance(a, ast.Starred) for a in args):
            return None
        return tuple(self.kind(a.func) if isinstance(a, ast.Call) else "" for a in args)

    def visit_Call(self, node: ast.Call) -> None:
        if self.kind(node.func).startswith("torch.nn."):
            self.called.add(self.kind(node.func))
        # dict(wte=nn.Embedding(...)) for an nn.ModuleDict
        for keyword in node.keywords:
            if keyword.arg and isinstance(keyword.value, ast.Call) and self.kind(keyword.value.func):
                self.attributes.setdefault(keyword.arg, set()).add(self.kind(keyword.value.func))
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self.qualname(node).startswith("torch.nn.") and node.attr[:1].isupper():
            self.called.add(self.qualname(node))  # norm_layer=nn.LayerNorm: built where it is called
        self.generic_visit(node)

    def visit_Tuple(self, node: ast.Tuple) -> None:
        # ("c_fc", nn.Linear(...)): a named child of an OrderedDict-built nn.Sequential
        if len(node.elts) == 2 and isinstance(node.elts[0], ast.Constant) and isinstance(node.elts[0].value, str) \
                and isinstance(node.elts[1], ast.Call) and self.kind(node.elts[1].func):
            self.attributes.setdefault(node.elts[0].value, set()).add(self.kind(node.elts[1].func))
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Call) \
                    and self.kind(value.func):
                self.attributes.setdefault(key.value, set()).add(self.kind(value.func))
        self.generic_visit(node)

    def layer(self, path: str) -> str:
        """The torch layer at the module path `a.b.c`, or "" when the source does not say."""
        parts = path.split(".")
        if not parts[-1].isdigit():
            kinds = self.attributes.get(parts[-1], set())
            return next(iter(kinds)) if len(kinds) == 1 else ""
        if len(parts) >= 2:
            lists = self.sequences.get(parts[-2], set())
            index = int(parts[-1])
            kinds = {elements[index] if index < len(elements) else "" for elements in lists}
            if len(kinds) == 1 and len(self.attributes.get(parts[-2], ())) == 1:
                return kinds.pop()
        return ""


def _self_path(node: ast.expr) -> str:
    """`self.a.b` → "a.b" (at least two attributes deep: a parameter of a submodule), else ""."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join(reversed(parts)) if isinstance(node, ast.Name) and node.id == "self" and len(parts) > 1 else ""


def _tied(state: dict, layers: SourceLayers) -> dict[str, str]:
    """Tensors the source ties to another one (`self.wte.weight = self.lm_head.weight`): torch's state
    dict lists both names, MindSpore's cell holds one Parameter. The port names every parameter by its
    first path once the cell is built (`update_parameters_name`, as the class ties): that of the two
    that comes first in the state dict, which lists them in the same order."""
    import numpy

    order = {key: index for index, key in enumerate(state)}
    tied = {}
    for target, value in layers.ties:
        for key in state:
            if key == target or key.endswith("." + target):
                other = key[:len(key) - len(target)] + value
                if other in state and numpy.shares_memory(state[key], state[other]):
                    first, later = sorted((key, other), key=order.__getitem__)
                    tied[later] = first
    return tied


def convert_state(state: dict, source_text: str, rows: WeightTable | None = None) -> Conversion:
    """Map a torch state dict (name → numpy array) to the port's parameter names."""
    import numpy

    rows = rows or load_weight_table()
    layers = SourceLayers(source_text)
    result = Conversion()
    params_of: dict[str, dict[str, int]] = {}  # module path → its tensors' names → their ranks
    for key in state:
        prefix, _, local = key.rpartition(".")
        params_of.setdefault(prefix, {})[local] = numpy.ndim(state[key])
    tied = _tied(state, layers)
    for key, array in state.items():
        prefix, _, local = key.rpartition(".")
        if key in tied:
            result.dropped.append((key, f"tied to {tied[key]} (the source ties them): one MindSpore Parameter, "
                                        f"named by its first path"))
            continue
        if local in DROPPED:
            result.dropped.append((key, DROPPED[local]))
            continue
        nested = _nested(key, layers, rows)
        if nested:
            result.renamed.append((key, nested[0], nested[1]))
            result.tensors[nested[0]] = array
            continue
        layer = layers.layer(prefix) if prefix else ""
        why = f"{layer} (from the source)" if layer else ""
        if not layer and {"running_mean", "running_var"} <= params_of[prefix].keys():
            layer, why = "torch.nn.BatchNorm2d", "BatchNorm (it has running statistics)"
        renames = rows.renames.get(layer, {})
        ms_local = renames.get(local, local)
        if not layer and local in ("weight", "bias"):
            guess = _unnamed_layer(local, numpy.ndim(array), params_of[prefix], layers, rows)
            if guess is None:
                result.unmapped.append((key, "the source does not say which layer this is, and layers that name "
                                             "it differently in MindSpore are used"))
                continue
            ms_local, why = guess
        transform = rows.transforms.get((layer, local))
        if transform == "unsqueeze-2":
            array = numpy.expand_dims(array, 2)
        name = ".".join(filter(None, [prefix, ms_local]))
        if name != key or transform:
            result.renamed.append((key, name, why + (f", {transform}" if transform else "")))
        result.tensors[name] = array
    return result


def _nested(key: str, layers: SourceLayers, rows: WeightTable) -> tuple[str, str] | None:
    """The MindSpore name of a tensor inside a layer the source builds whose parts MindSpore names
    otherwise (nn.Transformer's dense1 for linear1), and why; None when no such layer holds it."""
    parts = key.split(".")
    for end in range(len(parts) - 2, 0, -1):
        kind = layers.layer(".".join(parts[:end]))
        rest = parts[end:]
        new = rows.renames.get(kind, {}).get(".".join("*" if p.isdigit() else p for p in rest))
        if new:
            indices = iter(p for p in rest if p.isdigit())
            return ".".join(parts[:end] + [next(indices) if p == "*" else p for p in new.split(".")]), \
                f"inside {kind} (from the source)"
    return None


def _unnamed_layer(local: str, ndim: int, siblings: dict[str, int], layers: SourceLayers,
                   rows: WeightTable) -> tuple[str, str] | None:
    """The MindSpore name of `weight`/`bias` in a module the source does not name: every layer
    the source uses that could hold a tensor of this rank must agree."""
    used = layers.called | {alias for alias in layers.aliases.values() if alias.startswith("torch.nn.")}
    # 1-D weights belong to norms (and PReLU); 2-D to Linear and Embedding; more dims to convolutions
    candidates = {kind for kind in used if _rank_fits(kind, local, ndim, siblings)}
    names = {rows.renames.get(kind, {}).get(local, local) for kind in candidates} or {local}
    if len(names) != 1:
        return None
    name = names.pop()
    return name, f"the only name the source's layers give a {ndim}-D `{local}`"


NORMS = ("BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm")


def _rank_fits(kind: str, local: str, ndim: int, siblings: dict[str, int]) -> bool:
    """Whether a layer of `kind` holds `local` of this rank beside these siblings (name → rank)."""
    name = kind.rsplit(".", 1)[-1]
    if name.startswith(NORMS):  # a norm's weight is 1-D like its bias
        return ndim == 1 and siblings.get("weight", 1) == 1 and ("running_mean" in siblings) == \
            name.startswith("BatchNorm")
    if name == "PReLU":
        return ndim == 1 and local == "weight"
    if name == "Embedding":
        return ndim == 2 and local == "weight" and "bias" not in siblings
    if name == "Linear":
        return ndim == 2 or (ndim == 1 and local == "bias" and siblings.get("weight", 2) == 2)
    return False  # Conv, RNN: names kept, and no other layer holds such a tensor


def read_state_dict(path: str) -> dict:
    """The state dict in a .pth file: the file's dict itself, or one held under the usual keys.
    Only tensors and plain containers are loaded: anything else would run code from the file."""
    import pickle

    import torch

    handle = _open(path)
    try:
        with handle:
            data = torch.load(handle, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        # torch's own message advises weights_only=False, which would run the file's code: not repeated
        detail = next((part.strip() for part in str(exc).split("\n\n") if part.strip() and "weights_only" not in part),
                      "")
        raise ValueError(f"{path}: not loaded: it is not a state dict of tensors and plain containers, which "
                         f"alone can be loaded without running code from the file" +
                         (f" ({detail})" if detail else "")) from None
    if isinstance(data, dict) and not _is_state(data):
        for key in STATE_KEYS:
            if isinstance(data.get(key), dict) and _is_state(data[key]):
                data = data[key]
                break
    if not isinstance(data, dict) or not _is_state(data):
        raise ValueError(f"{path} holds no state dict (a dict of tensors, or one under {', '.join(STATE_KEYS)})")
    return {key: value.detach().cpu().numpy() for key, value in data.items() if isinstance(value, torch.Tensor)}


def _is_state(data: dict) -> bool:
    import torch

    return bool(data) and all(isinstance(v, torch.Tensor) for v in data.values())


def write_checkpoint(tensors: dict, path: str) -> None:
    """Save the checkpoint in a private folder (MindSpore removes, chmods and writes names
    beside its target), then copy it to `path` with safe_write."""
    import os
    import shutil
    import tempfile

    import mindspore

    with tempfile.TemporaryDirectory(prefix="lsp-check-ckpt-") as private:
        saved = os.path.join(private, "weights.ckpt")
        mindspore.save_checkpoint([{"name": name, "data": mindspore.Tensor(array)}
                                   for name, array in tensors.items()], saved)
        with open(saved, "rb") as checkpoint:
            write_file(path, lambda out: shutil.copyfileobj(checkpoint, out))


def _open(path: str) -> BinaryIO:
    try:
        return open_regular(path)[0]
    except SourceError as exc:
        raise ValueError(f"{path}: {exc}") from None


def convert_file(pth: str, out: str, source_path: str) -> Conversion:
    with _open(source_path) as handle:
        try:
            source_text = handle.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source_path}: not valid utf-8 text ({exc.reason} at byte {exc.start})") from None
    conversion = convert_state(read_state_dict(pth), source_text)
    write_checkpoint(conversion.tensors, out)
    return conversion
