"""The portable forms (mappings/torch/portable.toml): what `fix-style = "portable"` writes
in place of a `torch.npu` rename, and the torch release each needs."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .files import mappings_root, read_table

DEVICE = "{device}"  # in a row's templates: the name the binding gives the device


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


@dataclass(frozen=True)
class Form:
    """The portable form of one table row: `replacement` (a qualified name, a method, or
    an expression in place of a string), the arguments put first in its call, the keywords
    added when the call lacks them, and `guard`: the value the call stands for where there
    is no accelerator (the portable call raises there; the CUDA one did not)."""

    replacement: str
    torch: str
    source: str
    note: str = ""
    arguments: str = ""
    keywords: tuple[tuple[str, str], ...] = ()
    guard: str | None = None
    methods: tuple[tuple[str, str], ...] = ()  # an api's: the guard of each method of what it makes
    calls: frozenset[str] = frozenset()  # a literal's: only as an argument of these
    parameters: frozenset[str] = frozenset()  # a method's: the keywords its call may pass
    by_call: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # a literal's keywords per call

    @property
    def needs(self) -> tuple[int, ...]:
        return version_tuple(self.torch)


@dataclass(frozen=True)
class Portable:
    binding: str  # the device's name
    binding_expression: str
    binding_torch: str
    apis: dict[str, Form]
    literals: dict[str, Form]  # by kind: device, backend
    methods: dict[str, Form]
    branches: dict[str, Form]  # an api's replacement: the device's module, whose attributes stand for torch.npu's
    env: dict[str, Form]  # replacement: the variable both backends read

    def binding_line(self) -> str:
        return f"{self.binding} = {self.binding_expression}"

    def fill(self, template: str) -> str:
        return template.replace(DEVICE, self.binding)


def _form(row: dict, replacement_key: str = "replacement") -> Form:
    keywords = tuple(row.get("keywords", {}).items()) if "keywords" in row and "kind" not in row else ()
    by_call = {call: tuple(kw.items()) for call, kw in row.get("keywords", {}).items()} if "kind" in row else {}
    return Form(replacement=row[replacement_key], torch=row["torch"], source=row["source"], note=row.get("note", ""),
                arguments=row.get("arguments", ""), keywords=keywords, guard=row.get("guard"),
                methods=tuple(row.get("methods", {}).items()),
                calls=frozenset(row.get("calls", ())), parameters=frozenset(row.get("parameters", ())),
                by_call=by_call)


@functools.cache
def load_portable() -> Portable:
    data = read_table(mappings_root() / "torch" / "portable.toml")
    binding = data["binding"][0]
    return Portable(
        binding=binding["name"], binding_expression=binding["expression"], binding_torch=binding["torch"],
        apis={row["name"]: _form(row) for row in data["api"]},
        literals={row["kind"]: _form(row, "expression") for row in data["literal"]},
        methods={row["name"]: _form(row) for row in data["method"]},
        branches={row["name"]: Form(replacement=row.get("module", ""), torch=row["torch"], source=row["source"])
                  for row in data["branch"]},
        env={row["name"]: _form(row) for row in data["env"]},
    )
