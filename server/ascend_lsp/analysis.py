"""The engine with the shipped rules: what the adapters (lsp-check, the language server) and
the tests call. The engine takes its rules as an argument (engine.registry.RuleSet); this binds
the registry of ascend_lsp.rules."""

from __future__ import annotations

import functools

from .engine.analyzer import analyze as analyze_with
from .engine.fixes import fix_text as fix_text_with
from .rules import RULE_SET

analyze = functools.partial(analyze_with, rules=RULE_SET)
fix_text = functools.partial(fix_text_with, rules=RULE_SET)

__all__ = ["analyze", "fix_text"]
