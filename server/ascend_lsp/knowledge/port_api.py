"""The port's API table (mappings/mindspore/port-api.toml): torch functions, tensor methods and
layers with the MindSpore expression each becomes, and whether an executed equivalence test
on MindSpore's CPU proved the row (tests/port/test_api_table.py)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .files import mappings_root, read_table

# `x.split(...)`, `s.add(...)`, `", ".join(...)`: a method of a built-in type may be called on no
# tensor at all, so the table has no row for such a name and the port leaves those calls alone
BUILTIN_METHODS = frozenset(name for kind in (str, bytes, list, tuple, dict, set, int, float) for name in dir(kind))


@dataclass(frozen=True, slots=True)
class ApiRow:
    torch: str  # the torch API: torch.x, torch.nn.functional.x, torch.nn.X, torch.Tensor.x
    kind: str  # function | method | layer
    params: str  # torch's parameters, as a Python parameter list (defaults as torch's)
    mindspore: str  # the expression template: {param}, {*param}, {param!}
    also: tuple[str, ...]  # other torch names of the same callable (torch.Tensor.x: the receiver is the first)
    drop: tuple[str, ...]  # torch-only parameters without effect here (device, inplace)
    calls: int  # calls in the counted model files (benchmarks/port_api_coverage.py)
    source: str  # the mapping row or doc page it rests on, or "composition: why"
    proven: bool
    left: str  # when not proven: why the executed test failed
    random: bool  # a random draw: only the shape and dtype are compared


@dataclass(frozen=True)
class PortApi:
    rows: tuple[ApiRow, ...]
    by_name: dict[str, ApiRow]  # every torch name (the row's and its `also`) → its row

    def apis(self) -> set[str]:
        return set(self.by_name)

    def proven_apis(self) -> set[str]:
        return {name for name, row in self.by_name.items() if row.proven}

    def method(self, name: str) -> ApiRow | None:
        return self.by_name.get(f"torch.Tensor.{name}")


@functools.cache
def load_port_api() -> PortApi:
    rows = tuple(ApiRow(torch=row["torch"], kind=row["kind"], params=row["params"], mindspore=row["mindspore"],
                        also=tuple(row.get("also", ())), drop=tuple(row.get("drop", ())), calls=row["calls"],
                        source=row["source"], proven=row["proven"], left=row.get("left", ""),
                        random=row.get("random", False))
                 for row in read_table(mappings_root() / "mindspore" / "port-api.toml").get("api", ()))
    return PortApi(rows, {name: row for row in rows for name in (row.torch, *row.also)})
