"""`handles("string", ..., contexts=)` and `handles("assign", ..., values=)`: a handler runs
only for the strings standing where it reads them and the assignments of the values it
reads (engine.checker.context_dispatch, value_dispatch); the shipped rules' findings are
those of running every handler for every string and assignment."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine import checker
from ascend_lsp.engine.analyzer import analyze_with
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.registry import STRING_CONTEXTS, handles

from ..rulesets import Handlers

FIXTURES = Path(__file__).resolve().parents[1] / "rules" / "fixtures"
TEXT = ('import os\n'
        'x = "a"\n'                      # a value
        'if mode == "b":\n'              # compared
        '    print("c")\n'               # a message
        'os.environ.get("d")\n'          # an argument
        'y = "e" if z else "f"\n')


def test_a_string_handler_runs_only_where_its_strings_stand() -> None:
    runs: list[tuple[str, str]] = []

    def compared(checker, node, value, context):
        runs.append(("compared", value))

    def every(checker, node, value, context):
        runs.append(("every", value))

    compared.contexts = frozenset({"compare"})  # type: ignore[attr-defined]
    analyze_with(TEXT, Settings(), rules=Handlers(string=[compared, every]))
    # in the walk's order (an `if`'s body before its test), each string's handlers in the registry's
    assert runs == [("every", "a"), ("every", "c"), ("compared", "b"), ("every", "b"), ("every", "d"),
                    ("every", "f"), ("every", "e")]


def test_an_assign_handler_runs_only_for_its_values() -> None:
    runs: list[int] = []

    def constants(checker, node, scope):
        runs.append(node.lineno)

    constants.values = (ast.Constant,)  # type: ignore[attr-defined]
    analyze_with(TEXT, Settings(), rules=Handlers(assign=[constants]))
    assert runs == [2]


def test_contexts_and_values_narrow_their_event_kinds_only() -> None:
    with pytest.raises(ValueError, match="contexts= narrows string events"):
        handles("assign", "NPU101", contexts=("arg",))
    with pytest.raises(ValueError, match="contexts= narrows string events"):
        handles("string", "NPU101", contexts=("argument",))
    with pytest.raises(ValueError, match="values= narrows assign events only"):
        handles("string", "NPU101", values=(ast.Constant,))


def every_handler(handlers):
    return {kind: tuple(handlers) for kind in STRING_CONTEXTS}


def every_value(handlers):
    return {}, tuple(handlers)


SETTINGS = [Settings(select=("NPU", "NPU6", "NPU7", "E9")), Settings(chip="310P"),
            Settings(target="mindspore", select=("MS", "E9"))]


@pytest.mark.parametrize("settings", SETTINGS, ids=["npu", "310p", "mindspore"])
def test_the_declarations_keep_every_finding(settings, monkeypatch) -> None:
    paths = sorted(FIXTURES.glob("*.py"))
    assert len(paths) > 100

    def findings() -> list:
        return [(path.name, f.code, f.range, f.message) for path in paths
                for f in analyze(path.read_text(encoding="utf-8"), settings, str(path)).findings]

    narrowed = findings()
    monkeypatch.setattr(checker, "context_dispatch", every_handler)
    monkeypatch.setattr(checker, "value_dispatch", every_value)
    assert findings() == narrowed
    assert narrowed
