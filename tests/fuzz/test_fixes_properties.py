"""Properties of safe fixes: the file still parses, a second pass changes nothing, each fix
changes only its own ranges; and a generated program (hypothesmith) that compiles still
compiles after `lsp-check --fix`."""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from ascend_lsp.cli.check import Options, check_file
from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.analysis import fix_text
from ascend_lsp.engine.fixes import applicable, apply_edits
from ascend_lsp.engine.text import SourceText

from .corpus import FRAGMENTS, programs, texts

CONFIG = Settings(select=("NPU", "MS", "E"))
# Derandomized: `make test` runs the same examples every time (the campaign in fuzz/ explores).
BOUNDED = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


@BOUNDED
@given(st.one_of(programs, texts))
def test_safe_fixes_keep_parsing_are_idempotent_and_stay_in_their_ranges(text: str) -> None:
    assume(parses(text))
    analysis = analyze(text, CONFIG, "fuzz.py")
    source = SourceText(text)
    for finding in analysis.findings:
        if not applicable(finding.fix, unsafe=False):
            continue
        alone, count = apply_edits(text, [finding.fix])
        assert count == 1
        starts = [source.offset(e.range.start_line, e.range.start_col) for e in finding.fix.edits]
        ends = [source.offset(e.range.end_line, e.range.end_col) for e in finding.fix.edits]
        first, last = min(starts), max(ends)
        assert alone[:first] == text[:first], finding  # nothing before the first edit changed
        assert alone[len(alone) - (len(text) - last):] == text[last:], finding  # nor after the last
    fixed = fix_text(text, CONFIG, "fuzz.py")
    assert parses(fixed.text), (text, fixed.text)
    again = fix_text(fixed.text, CONFIG, "fuzz.py")
    assert again.applied == 0 and again.text == fixed.text


def with_cuda(program: str, extra: list[str]) -> str:
    """A generated program with some CUDA usage after it, so fixes have work to do."""
    return program + ("\n" if program and not program.endswith("\n") else "") + "".join(line + "\n" for line in extra)


@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar(), st.lists(st.sampled_from(FRAGMENTS[:30]), max_size=5))
def test_fix_never_breaks_a_compiling_generated_program(program: str, extra: list[str]) -> None:
    text = with_cuda(program, extra)
    try:
        compile(text, "gen.py", "exec")
    except (SyntaxError, ValueError):
        assume(False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gen.py"
        path.write_text(text, encoding="utf-8", newline="")
        result = check_file(str(path), CONFIG, Options(fix=True))
        assert not result.error and not result.rule_errors and not result.skipped_write, result
        fixed = path.read_bytes().decode("utf-8")
    compile(fixed, "gen.py", "exec")  # still compiles
