"""The layout of rules/: a rule's code names the module that declares it and holds its
handlers (NPU307 → rules/npu3xx_third_party.py), and the modules that help several
families (table.py, chip_features.py, ...) declare no rule."""

from __future__ import annotations

import pkgutil
import re

import ascend_lsp.rules
from ascend_lsp.engine.registry import HANDLERS, RULES, TABLE_HANDLER

PACKAGE = "ascend_lsp.rules"
FAMILY_CODE = re.compile(r"(?P<letters>[A-Z]+)(?P<digit>\d)\d+")
FAMILY_MODULE = re.compile(r"[a-z]+\dxx_[a-z0-9_]+")


def family_prefix(code: str) -> str:
    """`NPU307` → `npu3xx_`: how the module of the code's family begins."""
    found = FAMILY_CODE.fullmatch(code)
    assert found, f"{code} is not a family code"
    return f"{found['letters'].lower()}{found['digit']}xx_"


def modules() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(ascend_lsp.rules.__path__))


def shipped() -> dict[str, str]:
    """Code → the rules/ module that declares it (not the rules a test registers)."""
    return {code: rule.module.removeprefix(PACKAGE + ".") for code, rule in RULES.items()
            if rule.module.startswith(PACKAGE + ".")}


def test_family_prefix() -> None:
    assert family_prefix("NPU307") == "npu3xx_"
    assert family_prefix("MS260") == "ms2xx_"
    assert family_prefix("E999") == "e9xx_"
    assert family_prefix("RUN001") == "run0xx_"


def test_each_rule_is_declared_in_the_module_its_code_names() -> None:
    declared = shipped()
    assert len(declared) > 100
    assert {code: module for code, module in declared.items() if not module.startswith(family_prefix(code))} == {}


def test_one_module_per_family_and_no_family_module_without_rules() -> None:
    by_family: dict[str, set[str]] = {}
    for code, module in shipped().items():
        by_family.setdefault(family_prefix(code), set()).add(module)
    assert {prefix: found for prefix, found in by_family.items() if len(found) != 1} == {}
    family_modules = {name for name in modules() if FAMILY_MODULE.fullmatch(name)}
    assert family_modules == set(shipped().values())


def test_helper_modules_declare_no_rule() -> None:
    helpers = {name for name in modules() if not FAMILY_MODULE.fullmatch(name)}
    assert {"table", "advice_matching", "chip_features", "call_arguments", "citations"} <= helpers
    assert helpers & set(shipped().values()) == set()


def test_each_handler_lives_in_the_module_of_the_codes_it_reports() -> None:
    """The generic table handler is table.py's; every other handler is in its codes' family module."""
    wrong = []
    for kind, entries in HANDLERS.items():
        for codes, func in entries:
            if not func.__module__.startswith(PACKAGE + "."):
                continue  # a rule module of a test or of ASCEND_LSP_EXTRA_RULES
            module = func.__module__.removeprefix(PACKAGE + ".")
            expected = {"table" if code == TABLE_HANDLER else RULES[code].module.removeprefix(PACKAGE + ".")
                        for code in codes}
            if expected != {module}:
                wrong.append((kind, f"{module}.{func.__name__}", sorted(codes)))
    assert wrong == []
