"""Properties of the engine on arbitrary text (carriage returns, form feeds, U+2028, NUL,
emoji, Chinese): it never raises, and every finding lies inside the text."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.text import SourceText

from .corpus import shell_texts, texts

ALL = Settings(select=("NPU", "MS", "RUN", "E"))
MINDSPORE = Settings(target="mindspore")
# Derandomized: `make test` runs the same examples every time (fuzz/cli_campaign.py explores).
BOUNDED = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow])


def assert_inside(text: str, analysis) -> None:
    source = SourceText(text)
    for f in analysis.findings:
        r = f.range
        assert 0 <= r.start_line <= r.end_line < len(source.lines), (f, len(source.lines))
        assert (r.start_line, r.start_col) <= (r.end_line, r.end_col), f
        assert 0 <= r.start_col <= len(source.line(r.start_line)), f
        assert 0 <= r.end_col <= len(source.line(r.end_line)), f
        for fix in f.fixes:
            for edit in fix.edits:
                e = edit.range
                assert 0 <= e.start_line <= e.end_line < len(source.lines), (fix, len(source.lines))
                assert e.start_col <= len(source.line(e.start_line)) and e.end_col <= len(source.line(e.end_line))


@BOUNDED
@given(texts)
def test_the_engine_never_raises_and_findings_lie_inside_the_text(text: str) -> None:
    for config in (ALL, MINDSPORE):
        analysis = analyze(text, config, "fuzz.py")
        assert analysis.errors == [], analysis.errors  # no rule failed on it
        assert_inside(text, analysis)


@BOUNDED
@given(shell_texts)
def test_a_launch_script_never_raises_and_its_findings_lie_inside_the_text(text: str) -> None:
    analysis = analyze(text, ALL, "fuzz.sh")
    assert analysis.errors == [], analysis.errors
    assert_inside(text, analysis)
