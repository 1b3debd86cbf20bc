"""Packaging documents through the engine: their items go to the rules' "packaging"
handlers, and a launch script's assignments and commands (a Dockerfile's RUN and ENV) to the "launch" handlers. The analyzer makes an `Analysis` of the findings like a Python file's (noqa,
per-file ignores and selection apply the same way)."""

from __future__ import annotations

import ast

from ..knowledge.api_tables import Tables
from .checker import Checker
from .config import Settings
from .dockerfile import Dockerfile
from .model import Finding
from .packaging import items_of
from .registry import RuleSet
from .shell_script import ShellScript
from .text import SourceText
from .walk import module_context


def packaging_findings(source: SourceText, settings: Settings, tables: Tables, path: str, kind: str,
                       rules: RuleSet) -> tuple[list[Finding], list[str], frozenset[int] | None]:
    """The findings of a packaging document or launch script of `kind` (packaging.document_kind),
    the failures of the rules that crashed, and (a script's) the lines a noqa comment would change."""
    checker = Checker(source, module_context(ast.Module(body=[], type_ignores=[])), settings, tables, path, rules)
    packaging, launch = checker.handlers["packaging"], checker.handlers["launch"]
    dockerfile = Dockerfile(source) if kind == "dockerfile" else None
    script = dockerfile.script if dockerfile is not None else ShellScript(source) if kind == "shell" else None
    if packaging:
        checker.run_packaging(items_of(kind, source, script, dockerfile))
    if launch and script is not None:  # a Dockerfile's RUN and ENV too
        checker.run_launch(script)
    no_comment = dockerfile.no_comment if dockerfile is not None else script.no_comment if script is not None else None
    return checker.findings, checker.errors, no_comment
