"""CUDA names used in ways that run fine on an NPU host, each with the reason said in the
message: a copy's `non_blocking=` flag set from a test for CUDA (device_strings.py), `import
torch.cuda` alone, a `torch.cuda` name imported by an environment report, a package imported
under `try:` with a fallback. (A class object named only as a type or a key: harmless_calls.py;
ROCm's tests: engine/guards.py.)"""

from __future__ import annotations

import ast

from ..engine.checker import Checker
from ..engine.model import Severity
from .harmless_calls import ENV_REPORT, FALLBACK_IMPORT, import_with_fallback, in_environment_report
from .statement_facts import statement_facts

NON_BLOCKING = (" (It only sets `non_blocking=`: on an NPU host the copy is made synchronously, which is correct, "
                "only not overlapped.)")
IMPORT_ALONE = " (It imports the module, which works on any host; its uses are reported where they are.)"


def import_place(checker: Checker, stmt: ast.Import | ast.ImportFrom, alias: ast.alias,
                 qualname: str) -> tuple[Severity, str] | None:
    """`import torch.cuda` binds `torch`, whose CUDA uses have findings of their own; a `torch.cuda`
    name an environment report imports (`from torch.cuda import device_count` in collect_env.py):
    its uses there carry no finding of their own, and only describe the host; a package other than
    torch imported with a fallback where it is missing (`try: import pynvml` ... `except
    Exception:` going on without it)."""
    if isinstance(stmt, ast.Import) and alias.asname is None and qualname.startswith("torch."):
        return Severity.INFO, IMPORT_ALONE
    if qualname.startswith("torch.cuda") and in_environment_report(checker, statement_facts(checker), stmt):
        return Severity.INFO, ENV_REPORT
    if not qualname.startswith("torch") and import_with_fallback(checker, stmt):
        return Severity.INFO, FALLBACK_IMPORT
    return None
