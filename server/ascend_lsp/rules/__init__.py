"""The shipped rules. Each family module registers its rules and handlers (engine/registry.py)
on import; RULE_SET is what the adapters hand the engine."""

from __future__ import annotations

from ..engine.registry import HANDLERS, RULES, RuleSet
from . import syntax, cuda_usage, npu_support, third_party, npu_traps, mindspore_api, mindspore_traps, run_results  # noqa: F401
from . import port_markers  # noqa: F401
from . import real_world  # noqa: F401
from . import packaging, chips, argument_limits, mindspore_tensor  # noqa: F401
from . import performance, reproducibility  # noqa: F401

RULE_SET = RuleSet(RULES, HANDLERS)

__all__ = ["RULES", "RULE_SET"]
