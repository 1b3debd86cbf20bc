"""The engine with the shipped rules: what the adapters (lsp-check, the language server) and
the tests call. The engine's analyze_with and fix_text_with take their rules as an argument
(engine.registry.RuleSet); `analyze` and `fix_text` here are those with ascend_lsp.rules.RULE_SET."""

from __future__ import annotations

import functools

from .engine.analyzer import analyze_with
from .engine.fixes import fix_text_with
from .rules import RULE_SET

analyze = functools.partial(analyze_with, rules=RULE_SET)
fix_text = functools.partial(fix_text_with, rules=RULE_SET)

__all__ = ["analyze", "fix_text"]
