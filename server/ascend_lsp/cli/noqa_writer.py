"""`--add-noqa`: suppress every current finding in place with `# noqa: CODE`, the other
adoption path besides a baseline. Pure text in, text out; check.py does the writing."""

from __future__ import annotations

import ast
import tokenize

from ..engine.noqa import add_noqa
from ..engine.text import split_lines
from ..rules import RULE_SET


def comment_safe_lines(text: str) -> set[int]:
    """0-based lines a trailing comment can be appended to: those that end in a NEWLINE or
    NL token. A line that ends inside a multi-line string, or is continued with a
    backslash, has neither, and a `#` added there would change the code."""
    safe: set[int] = set()
    # One "\n" per line: tokenize reads lines itself and knows neither lone CRs nor that
    # a form feed does not end a line.
    lines = iter([line.rstrip("\r\n") + "\n" if line.endswith(("\r", "\n")) else line for line in split_lines(text)])
    try:
        for token in tokenize.generate_tokens(lambda: next(lines, "")):
            if token.type in (tokenize.NEWLINE, tokenize.NL):
                safe.add(token.start[0] - 1)
    except (tokenize.TokenError, SyntaxError):
        pass  # lines past the point tokenize gave up stay unsafe
    return safe


def with_noqa(text: str, targets: list[tuple[int, str]],
              no_comment: frozenset[int] | None = None) -> tuple[str, list[tuple[int, str, str]]]:
    """`text` with `# noqa: CODE` for each (0-based line, code); also the targets that were
    left alone, as (line, code, why). `no_comment`: the lines a comment would change, when
    the text is not Python (a launch script's, from its analysis)."""
    lines = split_lines(text)
    safe = comment_safe_lines(text) if no_comment is None else set(range(len(lines))) - no_comment
    refused = []
    for line, code in targets:
        if not RULE_SET.suppressible(code):  # a syntax error: no comment can hide it
            refused.append((line, code, f"{code} cannot be suppressed"))
        elif line not in safe or line >= len(lines):
            refused.append((line, code, "the line ends inside a multi-line string, a heredoc or a command that "
                                        "continues with a backslash, or Docker would read the comment as an "
                                        "argument (only a RUN's last line takes one); suppress it by hand or use "
                                        "a baseline"))
        else:
            body = lines[line].rstrip("\r\n")
            lines[line] = add_noqa(body, code) + lines[line][len(body):]
    new = "".join(lines)
    if new != text and _parses(text) and not _parses(new):  # a last guard: never break a file
        return text, [(line, code, "adding the comment would break the file") for line, code in targets]
    return new, refused


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
