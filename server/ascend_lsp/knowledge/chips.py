"""The Ascend chips (mappings/platform/chips.toml): the one list of names and aliases that
every command and setting accepts, what each chip lacks, and what the emulate target assumes
it does to numbers."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .files import mappings_root, read_table


@dataclass(frozen=True)
class Feature:
    """Something some chips lack (bf16, IEEE inf/nan in float16, FP8, offline operators)."""

    name: str
    title: str
    chips: tuple[str, ...]  # the chips that lack it
    unknown: tuple[str, ...]  # the chips the facts say nothing about
    note: str
    source: str


@dataclass(frozen=True)
class Chip:
    name: str
    title: str
    aliases: tuple[str, ...]
    support_column: str  # the support list's column for this chip (the older chips read A2's)
    hf32: bool  # HF32 cube math exists (torch_npu: conv on, matmul off by default)
    emulation: tuple[str, ...]  # what emulating it assumes, each with its source
    lacks: frozenset[str]  # the features it lacks
    source: str


@dataclass(frozen=True)
class Chips:
    chips: dict[str, Chip]  # by canonical name, in the table's order
    features: dict[str, Feature]

    def names(self) -> str:
        """The accepted names, as messages and --help list them."""
        aliases = [alias for chip in self.chips.values() for alias in chip.aliases]
        return f"{', '.join(self.chips)} (or {', '.join(aliases)})"

    def canonical(self, name: object) -> str:
        """The chip's name for `name`, itself or an alias in any case (910b → A2); a
        ValueError that lists the accepted names otherwise."""
        if isinstance(name, str):
            for chip in self.chips.values():
                if name.upper() in (chip.name.upper(), *(alias.upper() for alias in chip.aliases)):
                    return chip.name
        raise ValueError(f"must be one of {self.names()}, got {name!r}")


@functools.cache
def load_chips() -> Chips:
    table = read_table(mappings_root() / "platform" / "chips.toml")
    features = {row["name"]: Feature(row["name"], row["title"], tuple(row["chips"]), tuple(row.get("unknown", ())),
                                      row["note"], row["source"])
                for row in table.get("feature", ())}
    chips = {row["name"]: Chip(row["name"], row["title"], tuple(row["aliases"]),
                               row.get("support-column", row["name"]), row["hf32"], tuple(row["emulation"]),
                               frozenset(f.name for f in features.values() if row["name"] in f.chips), row["source"])
             for row in table.get("chip", ())}
    return Chips(chips, features)


def chip_argument(text: str) -> str:
    """argparse's `type` for --chip: the canonical name, or the reason it is not one."""
    try:
        return load_chips().canonical(text)
    except ValueError as exc:
        import argparse  # only command lines get here

        raise argparse.ArgumentTypeError(str(exc)) from None
