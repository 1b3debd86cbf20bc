"""An unmatched closing bracket typed into one statement (the user is between two keys) is
re-analysed as locally as a valid edit, and gives exactly the findings of a full analysis."""

from __future__ import annotations

import ast
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.analyzer import TextEdit

SETTINGS = Settings()
TEXT = '''import torch


DEVICE = torch.device("cuda")


def train(model):
    x = torch.ones(2).cuda()

    def step():
        torch.cuda.synchronize()
        return x

    y = torch.cat(
        [x, x],
        dim=0,
    )
    return step(), y


@decorate
class Model(torch.nn.Module):
    KIND = "cuda"

    def forward(
        self,
        x,
    ):
        torch.cuda.empty_cache()
        return x.cuda()

    @torch.no_grad()
    def evaluate(
        self,
        batch,
    ):
        return batch.cuda()

    def reset(self):
        def inner():
            return torch.cuda.current_device()
        return inner()


def helper():
    return torch.cuda.is_available()
'''
LINES = TEXT.splitlines(keepends=True)


def snapshot(analysis):
    return [(f.code, f.range, f.message, [(e.range, e.new_text) for fix in f.fixes for e in fix.edits])
            for f in analysis.findings]


def line_of(text: str, occurrence: int = 0) -> int:
    return [i for i, line in enumerate(LINES) if line.strip() == text][occurrence]


# (where, the line's text with an unmatched closing bracket): a top-level statement, a function,
# a nested function, a class member, a function nested in a member, the end of a multi-line call,
# and a method's multi-line parameters closed early
PLACES = [
    ("top level", 'DEVICE = torch.device("cuda"))'),
    ("function", "x = torch.ones(2).cuda())"),
    ("nested function", "torch.cuda.synchronize()]"),
    ("class member", "torch.cuda.empty_cache())"),
    ("nested in a member", "return torch.cuda.current_device()}"),
    ("multi-line call", "))"),
    ("multi-line parameters", "self,)"),
]
# A multi-line call's arguments closed early: the lines after it are then indented for no
# reason, an error Python reports only after reading the rest of the file.
EARLY = ("multi-line arguments", "[x, x]),")


def edited(place: str, typed: str) -> tuple[str, int]:
    original = {"top level": 'DEVICE = torch.device("cuda")', "function": "x = torch.ones(2).cuda()",
                "nested function": "torch.cuda.synchronize()", "class member": "torch.cuda.empty_cache()",
                "nested in a member": "return torch.cuda.current_device()", "multi-line call": ")",
                "multi-line arguments": "[x, x],", "multi-line parameters": "self,"}[place]
    index = line_of(original)
    indent = LINES[index][:len(LINES[index]) - len(LINES[index].lstrip())]
    return "".join(LINES[:index] + [indent + typed + "\n"] + LINES[index + 1:]), index


@pytest.mark.parametrize("place,typed", PLACES, ids=[p for p, _ in PLACES])
def test_an_unmatched_closing_bracket_is_rewalked_locally(place: str, typed: str) -> None:
    base = analyze(TEXT, SETTINGS)
    broken, index = edited(place, typed)
    incremental = analyze(broken, SETTINGS, previous=base, edit=TextEdit(index, index, 0))
    full = analyze(broken, SETTINGS)
    assert snapshot(incremental) == snapshot(full)
    errors = [f for f in full.findings if f.code == "E999"]
    assert len(errors) == 1 and errors[0].range.start_line >= index
    assert incremental.walked == 1  # the statement (or the class with its one member re-walked), not the file
    # and the next key makes it valid again, as locally
    fixed = analyze(TEXT, SETTINGS, previous=incremental, edit=TextEdit(index, index, 0))
    assert snapshot(fixed) == snapshot(base)
    assert fixed.walked == 1


def test_multi_line_arguments_closed_early_match_a_full_analysis() -> None:
    base = analyze(TEXT, SETTINGS)
    broken, index = edited(*EARLY)
    incremental = analyze(broken, SETTINGS, previous=base, edit=TextEdit(index, index, 0))
    assert snapshot(incremental) == snapshot(analyze(broken, SETTINGS))
    assert [(f.range.start_line, f.message) for f in incremental.findings if f.code == "E999"] == \
        [(index + 1, "SyntaxError: unexpected indent")]


def test_typing_a_statement_then_brackets_inside_a_function_stays_local(monkeypatch) -> None:
    """As the typing probe does: letter by letter, then `)` added and deleted in turn; no
    keystroke parses more than the function it is in."""
    index = line_of("return step(), y")
    lines = list(LINES)
    lines.insert(index, "    \n")
    text = "".join(lines)
    previous = analyze(text, SETTINGS)
    parsed: list[int] = []
    real_parse = ast.parse

    def counting_parse(source, *args, **kwargs):
        parsed.append(sum(1 for line in source.splitlines() if line.strip()))
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting_parse)
    typed = ""
    for key in [*"torch.cuda.synchronize()", ")", "", ")", ""]:
        typed = typed + key if key else typed[:-1]
        lines[index] = "    " + typed + "\n"
        text = "".join(lines)
        parsed.clear()
        incremental = analyze(text, SETTINGS, previous=previous, edit=TextEdit(index, index, 0))
        assert max(parsed) <= 14, (typed, parsed)  # `train` has 13 lines: never the file's 39
        monkeypatch.setattr(ast, "parse", real_parse)
        assert snapshot(incremental) == snapshot(analyze(text, SETTINGS)), typed
        monkeypatch.setattr(ast, "parse", counting_parse)
        previous = incremental
    assert ("NPU103", index) in [(f.code, f.range.start_line) for f in previous.findings]


@pytest.mark.parametrize("other", [
    "def g(:\n    pass\n",  # a syntax error elsewhere, reported after the bracket (Python tokenizes on)
    "z = (1,\n",  # an open bracket elsewhere, which the closing one would match
    "w = f(a b,\n",  # an open bracket behind another error
])
def test_an_unmatched_closing_bracket_beside_another_error_matches_a_full_analysis(other: str) -> None:
    for at_end in (True, False):
        text = TEXT + other if at_end else other + TEXT
        base = analyze(text, SETTINGS)
        shift = 0 if at_end else other.count("\n")
        for place, typed in [*PLACES, EARLY]:
            broken, index = edited(place, typed)
            broken = broken + other if at_end else other + broken
            incremental = analyze(broken, SETTINGS, previous=base, edit=TextEdit(index + shift, index + shift, 0))
            assert snapshot(incremental) == snapshot(analyze(broken, SETTINGS)), (other, place, at_end)


def test_recovery_that_leaves_a_decorator_behind_matches_a_full_analysis() -> None:
    """Recovery blanks a decorated member from its `def`, then the class from its `class`
    line: the class's decorator is left, and in the whole text it decorates the statement
    after the class; a region parsed alone ends there instead."""
    text = TEXT.replace("\n\ndef helper", "\n\n@decorate\ndef helper")
    base = analyze(text, SETTINGS)
    lines = text.splitlines(keepends=True)
    for broken_line in ("        batch,)\n", "        batch = = 1\n"):
        index = lines.index("        batch,\n")
        broken = "".join(lines[:index] + [broken_line] + lines[index + 1:])
        incremental = analyze(broken, SETTINGS, previous=base, edit=TextEdit(index, index, 0))
        assert snapshot(incremental) == snapshot(analyze(broken, SETTINGS)), broken_line


def test_a_decorator_typed_alone_decorates_what_follows_it() -> None:
    """A region that ends in a decorator (its class is the next statement) is not parsed
    alone: there it would decorate nothing."""
    base = analyze(TEXT, SETTINGS)
    index = LINES.index("@decorate\n")
    broken = "".join(LINES[:index] + ["@decorate)\n"] + LINES[index + 1:])
    incremental = analyze(broken, SETTINGS, previous=base, edit=TextEdit(index, index, 0))
    assert snapshot(incremental) == snapshot(analyze(broken, SETTINGS))
    fixed = analyze(TEXT, SETTINGS, previous=incremental, edit=TextEdit(index, index, 0))
    assert snapshot(fixed) == snapshot(base)
    method = LINES.index("    def reset(self):\n")
    typed = "".join(LINES[:method - 1] + ["    @property\n"] + LINES[method:])
    incremental = analyze(typed, SETTINGS, previous=base, edit=TextEdit(method - 1, method - 1, 0))
    assert snapshot(incremental) == snapshot(analyze(typed, SETTINGS))


PROFILE = {"default": 60, "long": 600}[os.environ.get("HYPOTHESIS_PROFILE", "default")]
KEYS = st.lists(st.tuples(st.floats(0, 1), st.sampled_from([")", "]", "}", "))", "(", "[", "", "x", ":", "\n"])),
                min_size=1, max_size=6)


@settings(max_examples=PROFILE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(KEYS)
def test_closing_brackets_anywhere_match_a_full_analysis(keys) -> None:
    """Brackets typed (or a character deleted, for "") at the end of random lines, one key at
    a time, each analysis incremental on the one before."""
    text, previous = TEXT, analyze(TEXT, SETTINGS)
    for where, key in keys:
        lines = text.splitlines(keepends=True)
        index = min(int(where * len(lines)), len(lines) - 1)
        body = lines[index].rstrip("\n")
        new = body + key if key else body[:-1]
        text = "".join(lines[:index] + [new + "\n"] + lines[index + 1:])
        incremental = analyze(text, SETTINGS, previous=previous, edit=TextEdit(index, index, key.count("\n")))
        assert snapshot(incremental) == snapshot(analyze(text, SETTINGS)), repr(text)
        previous = incremental
