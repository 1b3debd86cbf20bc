"""A rule set for engine tests: the shipped rules' metadata and codes, with given handlers."""

from __future__ import annotations

from collections.abc import Callable

from ascend_lsp.engine import Settings
from ascend_lsp.rules import RULE_SET


class Handlers:
    """`handlers` (event kind → handlers) in place of the shipped ones; the other kinds none."""

    rules = RULE_SET.rules

    def __init__(self, **handlers: list[Callable]) -> None:
        self._handlers = {**{kind: [] for kind in RULE_SET.handlers(Settings())}, **handlers}

    @staticmethod
    def codes(settings: Settings) -> frozenset[str]:
        return RULE_SET.codes(settings)

    def handlers(self, settings: Settings) -> dict[str, list[Callable]]:
        return self._handlers
