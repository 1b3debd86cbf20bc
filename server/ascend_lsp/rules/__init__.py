"""The rule registry. Each family module registers its rules and handlers on import."""

from __future__ import annotations

import functools

from ..engine.config import Settings
from .base import EVENT_KINDS, HANDLERS, RULES, Doc, Rule
from .table import TABLE, TABLE_FILES
from . import syntax, cuda_usage, npu_support, third_party, npu_traps, mindspore_api, mindspore_traps, run_results  # noqa: F401
from . import port_markers  # noqa: F401
from . import real_world  # noqa: F401
from . import packaging, chips, argument_limits, mindspore_tensor  # noqa: F401
from . import performance, reproducibility  # noqa: F401

__all__ = ["RULES", "RULE_SET", "Doc", "Rule", "active_codes", "active_handlers", "rules_for"]


def rules_for(settings: Settings) -> list[Rule]:
    return [r for r in RULES.values() if settings.target in r.targets and settings.enabled(r.code)
            and (not r.opt_in or named(settings, r.code))]


def named(settings: Settings, code: str) -> bool:
    """An opt-in rule runs only when a selection entry with digits covers it (`NPU6`,
    `NPU615`), never through a bare family (`NPU`, the default)."""
    return any(code.startswith(p) and any(c.isdigit() for c in p) for p in settings.select)


@functools.lru_cache(maxsize=32)
def active_codes(settings: Settings) -> frozenset[str]:
    return frozenset(r.code for r in rules_for(settings))


@functools.lru_cache(maxsize=32)
def active_handlers(settings: Settings) -> dict[str, list]:
    """Handlers that can report at least one rule enabled for this target."""
    rules = rules_for(settings)
    enabled = {r.code for r in rules}
    if any(r.table.startswith(TABLE_FILES) for r in rules):
        enabled.add(TABLE)
    return {kind: [func for codes, func in HANDLERS[kind] if codes & enabled and runs(func, settings)]
            for kind in EVENT_KINDS}


def runs(handler, settings: Settings) -> bool:
    """Whether the handler can report with these settings (rules.base.handles' `when`). One
    whose test fails is kept: it fails again when run, where the failure is reported."""
    when = getattr(handler, "when", None)
    try:
        return when is None or bool(when(settings))
    except Exception:
        return True


class _Registry:
    """The shipped rules (and any registered by ASCEND_LSP_EXTRA_RULES), as the engine takes them
    (engine.checker.RuleSet): callers pass it to analyze() and fix_text()."""

    rules = RULES

    @staticmethod
    def codes(settings: Settings) -> frozenset[str]:
        return active_codes(settings)

    @staticmethod
    def handlers(settings: Settings) -> dict[str, list]:
        return active_handlers(settings)


RULE_SET = _Registry()
