"""The shipped rules. Each family module registers its rules and handlers (engine/registry.py)
on import; RULE_SET is what the adapters hand the engine."""

from __future__ import annotations

from ..engine.registry import HANDLERS, RULES, RuleSet
from . import e9xx_syntax, npu1xx_cuda, npu2xx_support, npu3xx_third_party, npu4xx_traps  # noqa: F401
from . import npu5xx_packaging, npu6xx_performance, npu7xx_reproducibility, npu8xx_configs  # noqa: F401
from . import ms1xx_api, ms2xx_traps, ms3xx_port_markers, run0xx_results  # noqa: F401

RULE_SET = RuleSet(RULES, HANDLERS)

__all__ = ["RULES", "RULE_SET"]
