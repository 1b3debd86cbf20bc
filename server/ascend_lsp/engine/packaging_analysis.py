"""Packaging documents through the engine: their items go to the rules' "packaging"
handlers, and a launch script's assignments and commands (a Dockerfile's RUN and ENV) to the "launch" handlers;
a config (config_files.py) to the "packaging" handlers whole, a compose file's environment to the "launch" ones. The analyzer makes an `Analysis` of the findings like a Python file's (noqa,
per-file ignores and selection apply the same way)."""

from __future__ import annotations

import ast

from typing import TYPE_CHECKING

from ..knowledge.api_tables import Tables
from .checker import Checker
from .config import Settings
from .config_files import Config, read_config
from .dockerfile import Dockerfile
from .model import Finding
from .packaging import Item, gpu_extras, items_of
from .registry import RuleSet
from .shell_script import ShellScript
from .text import SourceText
from .walk import module_context

if TYPE_CHECKING:
    from ..project import ProjectContext


def packaging_findings(source: SourceText, settings: Settings, tables: Tables, path: str, kind: str,
                       rules: RuleSet, project: ProjectContext | None = None
                       ) -> tuple[list[Finding], list[str], frozenset[int] | None]:
    """The findings of a packaging document or launch script of `kind` (packaging.document_kind),
    the failures of the rules that crashed, and (a script's) the lines a noqa comment would change.
    `project`: the file's project (a config's rules read its pinned versions)."""
    checker = Checker(source, module_context(ast.Module(body=[], type_ignores=[])), settings, tables, path, rules,
                      project)
    packaging, launch = checker.handlers["packaging"], checker.handlers["launch"]
    if kind in ("config", "compose"):
        config = read_config(source, kind) if packaging or launch else None
        if config is None:
            return [], [], None
        _config(checker, config)
        return checker.findings, checker.errors, frozenset(range(len(source.lines))) if config.json else None
    dockerfile = Dockerfile(source) if kind == "dockerfile" else None
    script = dockerfile.script if dockerfile is not None else ShellScript(source) if kind == "shell" else None
    if script is not None:  # an NPU-aware script's arms (shell_script.py) and a Dockerfile's other devices' stages
        checker.off_why = script.off_why
        checker.off_npu = [*script.off_npu, *(rng for rng, _ in script.off_why),
                           *(dockerfile.off_npu if dockerfile is not None else ())]
        checker.on_npu = script.on_npu
    if kind == "pyproject":  # the extras for the GPU (`gpu = ["flash-attn", ...]`) and their sources
        checker.off_why = gpu_extras(source)
        checker.off_npu = [rng for rng, _ in checker.off_why]
    if packaging:
        checker.run_packaging(items_of(kind, source, script, dockerfile))
    if launch and script is not None:  # a Dockerfile's RUN and ENV too
        checker.run_launch(script)
    no_comment = dockerfile.no_comment if dockerfile is not None else script.no_comment if script is not None else None
    return checker.findings, checker.errors, no_comment


def _config(checker: Checker, config: Config) -> None:
    """A config goes to the "packaging" handlers whole (they read its settings beside each other);
    a compose file's images go there as a Dockerfile's do, and its services' environment to the
    "launch" handlers as a script's variables."""
    images = [Item("image", s.value or "", s.value_range or s.key_range, document="compose") for s in config.images()]
    checker.run_packaging([*images, config])
    if config.kind == "compose":
        script = ShellScript(SourceText(""))
        script.assignments = config.environment()
        checker.run_launch(script)
