"""Packaging documents through the engine: their items go to the rules' "packaging"
handlers. The analyzer makes an `Analysis` of the findings like a Python file's (noqa,
per-file ignores and selection apply the same way)."""

from __future__ import annotations

import ast

from ..knowledge.api_tables import Tables
from .checker import Checker
from .config import Settings
from .model import Finding
from .packaging import items_of
from .registry import RuleSet
from .text import SourceText
from .walk import module_context


def packaging_findings(source: SourceText, settings: Settings, tables: Tables, path: str, kind: str,
                       rules: RuleSet) -> tuple[list[Finding], list[str]]:
    """The findings of a packaging document of `kind` (packaging.document_kind), and the
    failures of the rules that crashed."""
    checker = Checker(source, module_context(ast.Module(body=[], type_ignores=[])), settings, tables, path, rules)
    if checker.handlers["packaging"]:
        checker.run_packaging(items_of(kind, source))
    return checker.findings, checker.errors
