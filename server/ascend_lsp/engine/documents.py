"""Packaging documents through the engine: their items go to the rules' "packaging"
handlers (and a launch script's assignments and commands to the "launch" handlers), and the findings come back as an `Analysis` like a Python file's (noqa,
per-file ignores and selection apply the same way)."""

from __future__ import annotations

import ast

from .analyzer import Analysis, Span, _finish, tables_for
from .checker import Checker
from .registry import RuleSet
from .config import Settings
from .packaging import items_of
from .shell_script import ShellScript
from .text import SourceText
from .walk import module_context


def analyze_packaging(text: str, settings: Settings, path: str, kind: str, rules: RuleSet) -> Analysis:
    source = SourceText(text)
    tables = tables_for(settings, rules)
    checker = Checker(source, module_context(ast.Module(body=[], type_ignores=[])), settings, tables, path, rules)
    handlers, launch = checker.handlers["packaging"], checker.handlers["launch"]
    script = ShellScript(source) if kind == "shell" and (handlers or launch) else None
    if handlers:
        items = items_of(kind, source, script)
        for item in items:
            checker._call(handlers, item, items)
    if launch and script is not None:
        for found in (*script.assignments, *script.commands):
            checker._call(launch, found, script)
    span = Span(0, max(len(source.lines) - 1, 0), checker.findings, False)
    analysis = _finish(source, settings, tables, path, [span], [], checker.errors, None, 1, rules)
    analysis.references = []  # no Python API is named in a packaging file
    if kind == "shell":
        analysis.no_comment = (script or ShellScript(source)).no_comment
    return analysis
