"""msprobe's grading standards (mappings/msprobe/thresholds.toml), one row each."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from .files import mappings_root, read_table


@dataclass(frozen=True)
class Threshold:
    id: str
    stage: str
    order: int
    metric: str
    dtypes: tuple[str, ...]
    value: float
    rule: str
    source: str
    op: str | None = None
    outcome: str | None = None
    otherwise: str | None = None
    below: float | None = None
    min_numel: int | None = None
    standard: str | None = None  # the name a verdict gives as "decided by"
    package: str | None = None  # file:line of the installed msprobe that holds the value

    def describe(self) -> str:
        what = f"rel err < {self.below:g} share" if self.metric == "rel-err-share" else self.metric
        return f"{self.id}: {what} {self.op} {self.value:g} → {self.outcome}" + \
            (f", else {self.otherwise}" if self.otherwise else "")


@functools.cache
def load_thresholds() -> tuple[Threshold, ...]:
    rows = read_table(mappings_root() / "msprobe" / "thresholds.toml")["threshold"]
    fields: list[dict[str, Any]] = [{k.replace("-", "_"): tuple(v) if k == "dtypes" else v for k, v in row.items()}
                                    for row in rows]
    return tuple(Threshold(**f) for f in fields)
