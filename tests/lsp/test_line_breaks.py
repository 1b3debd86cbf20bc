"""The server's copy of a document breaks lines where the client does (\\r\\n, \\r, \\n
only), edits beside a lone CR keep the incremental analysis exact, and syntax-error
recovery never moves a finding or its quick fix to another line."""

from __future__ import annotations

import pytest
from lsprotocol import types

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.text import SourceText, split_lines
from ascend_lsp.lsp.positions import Lines

from .helpers import apply, change, code_actions, diagnostics, edits_by_uri, open_document

pytestmark = pytest.mark.asyncio(loop_scope="module")

CUDA = "torch.cuda.synchronize()\n"


def expected(client, text: str) -> list[tuple]:
    lines = Lines([SourceText(text).line(i) for i in range(len(SourceText(text).lines))], client.encoding)
    return sorted((f.code, _tuple(lines.range(f.range))) for f in analyze(text, Settings()).findings)


def found(items: list[types.Diagnostic]) -> list[tuple]:
    return sorted((d.code, _tuple(d.range)) for d in items)


def _tuple(rng: types.Range) -> tuple[int, int, int, int]:
    return rng.start.line, rng.start.character, rng.end.line, rng.end.character


async def edit_and_compare(client, uri: str, text: str, steps: list[tuple[str, str]]) -> str:
    """Each step replaces the first occurrence of `old` with `new` (an empty `old` appends),
    and appends a finding in the same didChange, so that a pushing server has news."""
    for version, (old, new) in enumerate(steps, start=2):
        start = text.index(old) if old else len(text)
        after = text[:start] + new + text[start + len(old):]
        text = change(client, uri, text, [(start, start + len(old), new), (len(after), len(after), CUDA)], version)
        assert found(await diagnostics(client, uri, version)) == expected(client, text), (old, new)
    return text


@pytest.mark.parametrize("page_break", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"])
async def test_characters_that_str_splitlines_breaks_at_do_not_move_edits(client, workspace, page_break):
    text = (f"import torch\n# 注释 🚀{page_break} still a comment\n\x0c\n"  # an Emacs page break
            f"def f():\n    x = 1  # 中文{page_break}\n    s = '{page_break}'\n    return x\n")
    uri = open_document(client, workspace / f"page_{ord(page_break):x}.py", text)
    assert found(await diagnostics(client, uri, 1)) == expected(client, text)
    await edit_and_compare(client, uri, text, [("x = 1", "x = torch.cuda.current_device()"),
                                               ("return x", "return x.cuda()"), ("", "🚀 = 1\n" + CUDA)])


async def test_line_breaks_made_and_unmade_beside_a_lone_cr(client, workspace):
    text = "import torch\rx = 1\ny = 2\n\ndef f():\n    return 1\n" + CUDA
    uri = open_document(client, workspace / "lone_cr.py", text)
    assert found(await diagnostics(client, uri, 1)) == expected(client, text)
    await edit_and_compare(client, uri, text, [
        ("x = 1", "\nx = 1"),  # "\n" typed right after the lone "\r": two breaks become one
        ("y = 2\n", "y = 2\r"),  # "\r" typed before the lone "\n" that follows
        ("return 1\n", "return 1\r"),
        ("1\r", "1\r\n"),
        ("1\r\n", "1 "),  # a whole "\r\n" deleted, and the syntax broken
        ("x = 1", "x = 1\r"),
        ("torch\r\n", "torch\r\r\n\n"),
    ])


async def test_quick_fix_after_recovery_from_a_lone_cr_edits_the_reported_line(client, workspace):
    text = "import torch\rx = = 1\ny = 2\ntorch.cuda.synchronize()\n"
    uri = open_document(client, workspace / "recovery_cr.py", text)
    npu103 = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU103"]
    assert [d.range.start.line for d in npu103] == [3]
    fix = next(a for a in await code_actions(client, uri, npu103) if a.is_preferred)
    fixed = apply(client, text, edits_by_uri(fix.edit)[uri])
    assert split_lines(fixed)[-3:] == ["x = = 1\n", "y = 2\n", "torch.npu.synchronize()\n"]
