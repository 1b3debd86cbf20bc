"""mindspore/*.toml: tables for the MindSpore target.

`build_api` writes mindspore/api-<version>.toml, the official PyTorch → MindSpore API
mapping per documentation branch, with each row's difference class and, where the
documentation has one, the difference page's signatures and parameter table.
`build_traps` writes mindspore/traps.toml: the documented semantic pitfalls (P01–P51)
that the MS2xx rules detect, each with the call shape that triggers it (see TRAPS in
mindspore_trap_tables.py). With mindspore installed, both record what the installed
package says where it differs from the documents.
`build_weights` writes mindspore/weights.toml, the torch → MindSpore parameter renames the
runner uses to load a torch module's weights into its MindSpore port. The renames come
from pitfalls.tsv (P05 names, P15 InstanceNorm's gamma/beta, P49 Conv1d layout); each row is checked here against the
fact text it cites, and tests/runner/test_weights_table.py checks every MindSpore name
against the installed mindspore by instantiating the cells.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

# (pitfall id, text the fact must contain, torch module, MindSpore cell, [(torch, mindspore)], extra keys)
RENAMES = [
    ("P05", "BatchNorm1d/2d weight->gamma, bias->beta, running_mean->moving_mean, running_var->moving_variance",
     "torch.nn.BatchNorm1d", "mindspore.nn.BatchNorm1d",
     [("weight", "gamma"), ("bias", "beta"), ("running_mean", "moving_mean"), ("running_var", "moving_variance")], {}),
    ("P05", "BatchNorm1d/2d weight->gamma, bias->beta, running_mean->moving_mean, running_var->moving_variance",
     "torch.nn.BatchNorm2d", "mindspore.nn.BatchNorm2d",
     [("weight", "gamma"), ("bias", "beta"), ("running_mean", "moving_mean"), ("running_var", "moving_variance")], {}),
    ("P05", "BatchNorm3d -> bn2d.gamma etc.",
     "torch.nn.BatchNorm3d", "mindspore.nn.BatchNorm3d",
     [("weight", "bn2d.gamma"), ("bias", "bn2d.beta"), ("running_mean", "bn2d.moving_mean"),
      ("running_var", "bn2d.moving_variance")], {}),
    ("P05", "GroupNorm/LayerNorm weight->gamma, bias->beta",
     "torch.nn.LayerNorm", "mindspore.nn.LayerNorm", [("weight", "gamma"), ("bias", "beta")], {}),
    ("P05", "GroupNorm/LayerNorm weight->gamma, bias->beta",
     "torch.nn.GroupNorm", "mindspore.nn.GroupNorm", [("weight", "gamma"), ("bias", "beta")], {}),
    ("P05", "Embedding weight->embedding_table",
     "torch.nn.Embedding", "mindspore.nn.Embedding", [("weight", "embedding_table")], {}),
    # TroubleShooter names PReLU's parameter `a`; mindspore 2.10's nn.PReLU names it `w`
    # (checked by instantiating it), and the installed package wins.
    ("P05", "PReLU weight->a",
     "torch.nn.PReLU", "mindspore.nn.PReLU", [("weight", "w")],
     {"note": "TroubleShooter's map says `a`; mindspore 2.10.0 names the parameter `w`"}),
    # The port writes InstanceNorm as GroupNorm(C, C) (mindspore 2.10's InstanceNorm2d has no
    # CPU kernel); its affine parameters carry MindSpore's norm names.
    *(("P15", "learns gamma/beta", f"torch.nn.InstanceNorm{d}", "mindspore.nn.GroupNorm",
       [("weight", "gamma"), ("bias", "beta")],
       {"note": "ported as GroupNorm(C, C): mindspore 2.10's InstanceNorm has no CPU kernel"}) for d in ("1d", "2d")),
    ("P49", "expand_dims(weight, 2)",
     "torch.nn.Conv1d", "mindspore.nn.Conv1d", [("weight", "weight")],
     {"transform": "unsqueeze-2", "note": "MindSpore's Conv1d weight is 4-D (out, in, 1, k)"}),
]


def _transformer_renames() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """nn.Transformer and its parts: MindSpore 2.10 names the feed-forward layers dense1/dense2 (torch:
    linear1/linear2) and its LayerNorms' parameters gamma/beta; the attention's names are torch's.
    Read from the installed mindspore 2.10.0 by instantiating the cells (mindspore/nn/layer/transformer.py);
    `*` stands for a layer's index."""
    def layer(norms: int) -> list[tuple[str, str]]:
        pairs = [(f"linear{i}.{p}", f"dense{i}.{p}") for i in (1, 2) for p in ("weight", "bias")]
        return pairs + [(f"norm{i}.{t}", f"norm{i}.{m}") for i in range(1, norms + 1)
                        for t, m in (("weight", "gamma"), ("bias", "beta"))]

    def stack(norms: int) -> list[tuple[str, str]]:
        return [(f"layers.*.{t}", f"layers.*.{m}") for t, m in layer(norms)] + \
            [("norm.weight", "norm.gamma"), ("norm.bias", "norm.beta")]

    return [("TransformerEncoderLayer", layer(2)), ("TransformerDecoderLayer", layer(3)),
            ("TransformerEncoder", stack(2)), ("TransformerDecoder", stack(3)),
            ("Transformer", [(f"encoder.{t}", f"encoder.{m}") for t, m in stack(2)]
             + [(f"decoder.{t}", f"decoder.{m}") for t, m in stack(3)])]


INSTALLED_SOURCE = ("mindspore 2.10.0 (installed): mindspore/nn/layer/transformer.py, the cells' parameter names "
                    "read by instantiating them")
KEY_ORDER = ["torch-module", "mindspore-cell", "torch", "mindspore", "transform", "note", "source"]


def build(data_dir: Path, out_dir: Path) -> list[Path]:
    from mindspore_api_tables import build_api
    from mindspore_trap_tables import build_traps
    from port_api_tables import build_port_api

    return [*build_api(data_dir, out_dir), *build_traps(data_dir, out_dir), *build_weights(data_dir, out_dir),
            *build_port_api(out_dir)]


def build_weights(data_dir: Path, out_dir: Path) -> list[Path]:
    pitfalls = _read_pitfalls(data_dir / "mindspore" / "pitfalls.tsv")
    lines = [
        "# Generated by `python mappings/build mindspore` from mappings/upstream/mindspore/pitfalls.tsv.",
        "# Do not edit by hand.",
        "",
        "[meta]",
        f"title = {_value('torch module parameter names -> MindSpore cell parameter names')}",
        f"version = {_value('2.10.0')}",
        f"sources = {_value(sorted({_source(pitfalls[p]) for p, *_ in RENAMES} | {INSTALLED_SOURCE}))}",
    ]
    for pitfall, fact, module, cell, pairs, extra in RENAMES:
        row = pitfalls[pitfall]
        if fact not in row["documented_fact"]:
            raise ValueError(f"{pitfall} no longer says {fact!r}: re-check the rename for {module}")
        for torch_name, ms_name in pairs:
            entry = {"torch-module": module, "mindspore-cell": cell, "torch": torch_name, "mindspore": ms_name,
                     **extra, "source": f"{_source(row)} (via pitfalls.tsv {pitfall}); checked against mindspore 2.10.0"}
            lines += ["", "[[weight]]"] + [f"{k} = {_value(entry[k])}" for k in KEY_ORDER if k in entry]
    for name, pairs in _transformer_renames():
        for torch_name, ms_name in pairs:
            entry = {"torch-module": f"torch.nn.{name}", "mindspore-cell": f"mindspore.nn.{name}", "torch": torch_name,
                     "mindspore": ms_name, "source": INSTALLED_SOURCE}
            lines += ["", "[[weight]]"] + [f"{k} = {_value(entry[k])}" for k in KEY_ORDER if k in entry]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "weights.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [path]


def _read_pitfalls(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return {row["id"]: row for row in csv.DictReader(f, delimiter="\t")}


def _source(row: dict[str, str]) -> str:
    return f"{row['source_repo']}: {row['source_ref']}"


def _value(value: object) -> str:
    # JSON strings, numbers, booleans and arrays of them are valid TOML values; tables
    # are written inline.
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)
