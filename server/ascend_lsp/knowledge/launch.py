"""mappings/platform/launch.toml: the variables and host commands of shell launch scripts,
loaded once. (The variables torch_npu has a counterpart for are env.toml's, in api_tables.)"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .files import mappings_root, read_table

ORIGIN = "mappings/platform/launch.toml"


@dataclass(frozen=True, slots=True)
class Launch:
    variables: tuple[dict, ...]  # the exact names first, then the prefix rows in the table's order
    commands: tuple[dict, ...]

    def variable(self, name: str, value: str) -> dict | None:
        """The first row for `name=value`."""
        for row in self.variables:
            named = name.startswith(row["name"]) if row.get("prefix") else name == row["name"]
            if named and row.get("contains", "") in name and row.get("value", value) == value:
                return row
        return None

    def command(self, program: str, args: list[str]) -> dict | None:
        """The first row for `program` run with `args`."""
        for row in self.commands:
            if row["program"] != program:
                continue
            if "args" in row and row["args"] != args:
                continue
            if "option" in row and not any(a == row["option"] or a.startswith(row["option"] + "=") for a in args):
                continue
            return row
        return None


@functools.cache
def load_launch() -> Launch:
    data = read_table(mappings_root() / "platform" / "launch.toml")
    variables = sorted(data.get("variable", ()), key=lambda row: bool(row.get("prefix")))
    return Launch(tuple(variables), tuple(data.get("command", ())))
