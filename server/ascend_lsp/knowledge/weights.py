"""What torch layers' parameters are called in MindSpore (mappings/mindspore/weights.toml)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .files import mappings_root, read_table


@dataclass(frozen=True)
class WeightTable:
    renames: dict[str, dict[str, str]]  # torch layer → torch parameter → MindSpore parameter
    transforms: dict[tuple[str, str], str]  # (torch layer, torch parameter) → layout change, e.g. unsqueeze-2


@functools.cache
def load_weight_table() -> WeightTable:
    renames: dict[str, dict[str, str]] = {}
    transforms: dict[tuple[str, str], str] = {}
    for row in read_table(mappings_root() / "mindspore" / "weights.toml").get("weight", ()):
        renames.setdefault(row["torch-module"], {})[row["torch"]] = row["mindspore"]
        if row.get("transform"):
            transforms[(row["torch-module"], row["torch"])] = row["transform"]
    return WeightTable(renames, transforms)
