"""Opt-in rules (Rule.opt_in) run only when a selection entry with digits names them."""

from __future__ import annotations

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.config import from_mapping
from ascend_lsp.rules import RULE_SET, RULES

SOURCE = "import torch\ny = torch.matmul(a, b)\n"


def codes(settings: Settings) -> set[str]:
    return {f.code for f in analyze(SOURCE, settings).findings}


def test_opt_in_rules_are_off_by_default_and_under_a_bare_family() -> None:
    opt_in = {code for code, rule in RULES.items() if rule.opt_in}
    assert {"NPU606", "NPU608", "NPU613", "NPU615"} <= opt_in
    assert not opt_in & RULE_SET.codes(Settings())
    assert not opt_in & RULE_SET.codes(from_mapping({"select": ["NPU"]}, RULE_SET.prefixes))
    assert "NPU606" not in codes(Settings())


def test_opt_in_rules_run_when_named() -> None:
    assert "NPU606" in codes(from_mapping({"extend-select": ["NPU606"]}, RULE_SET.prefixes))
    assert "NPU606" in codes(from_mapping({"select": ["NPU6"]}, RULE_SET.prefixes))
    assert "NPU606" not in codes(from_mapping({"select": ["NPU6"], "ignore": ["NPU606"]}, RULE_SET.prefixes))


def test_default_rules_of_the_family_stay_on() -> None:
    assert {"NPU601", "NPU611", "NPU701"} <= RULE_SET.codes(Settings())
