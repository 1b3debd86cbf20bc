"""A rule set for engine tests: the shipped rules' metadata and codes, with given handlers."""

from __future__ import annotations

from collections.abc import Callable

from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.registry import EVENT_KINDS, HANDLERS, RuleSet
from ascend_lsp.rules import RULES


class Handlers(RuleSet):
    """`handlers` (event kind → handlers) in place of the shipped ones; the other kinds none."""

    def __init__(self, **handlers: list[Callable]) -> None:
        super().__init__(RULES, HANDLERS)
        self._given = {**{kind: [] for kind in EVENT_KINDS}, **handlers}

    def handlers(self, settings: Settings) -> dict[str, list[Callable]]:
        return self._given
