"""Properties of the server's incremental path, on random edit sequences whose text
includes \\r, \\r\\n, \\n, form feeds, U+2028, emoji and syntax breakage:

- the server's document store holds exactly the text the client has after the edits;
- incremental analysis (the lines each change replaced, composed as the server does)
  gives exactly the findings of a full analysis of the same text.

Bounded to about 30 s (`max_examples`); `HYPOTHESIS_PROFILE=long` runs ten times more."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.text import SourceText, utf16_col
from ascend_lsp.lsp.edits import compose
from ascend_lsp.lsp.text_store import Document

BASE = (
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "# 注释 🚀 cuda\x0c\n"
    "\x0c\n"
    "DEVICE = \"cuda\"\n"
    "\n"
    "\n"
    "class Model(nn.Module):\n"
    "    from os import path\n"
    "    KIND = \"cuda\"\n"
    "\n"
    "    def forward(self, x):\n"
    "        x = x.cuda()  # 中文 \u2028 comment\n"
    "        torch.cuda.synchronize()\n"
    "        return x\n"
    "\n"
    "    def reset(self):\n"
    "        torch.cuda.empty_cache()\n"
    "\n"
    "\n"
    "def train(model):\r\n"
    "    s = \"\u2028🚀\"\r\n"
    "    for step in range(3):\r"
    "        model(torch.ones(2).cuda())\r"
    "    torch.cuda.synchronize()\n"
    "\n"
    "\n"
    "def helper():\n"
    "    return torch.cuda.current_device()\n"
)
PIECES = ["\r", "\n", "\r\n", "\x0c", "\u2028", "\x85", "🚀", "注释", " ", "    ", "x", "(", ")", ":", "\"\"\"", "'",
          "#", "torch.cuda.synchronize()", ".cuda()", "def f(self", "class C:", "import os", "if x:", "return ",
          "\n    y = torch.cuda.current_device()\n", "\n        pass\n", "\ndef g():\n    torch.cuda.synchronize()\n"]
PROFILE = {"default": 60, "long": 600}[os.environ.get("HYPOTHESIS_PROFILE", "default")]

edits = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 12), st.lists(st.sampled_from(PIECES), max_size=3)),
                 min_size=1, max_size=8)


def position(text: str, offset: int) -> tuple[int, types.Position]:
    """The client position of `offset` (moved off the middle of a \\r\\n, which no
    position can name), and the offset it names."""
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        offset -= 1
    source = SourceText(text)
    line, col = source.position(offset)
    return offset, types.Position(line, utf16_col(source.line(line), col))


def snapshot(analysis) -> list:
    return [(f.code, f.range, f.message, [(e.range, e.new_text) for fix in f.fixes for e in fix.edits])
            for f in analysis.findings]


ANALYSIS_SETTINGS = Settings()
FULL_BASE = analyze(BASE, ANALYSIS_SETTINGS)


@settings(max_examples=PROFILE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits)
def test_incremental_analysis_and_document_store_match_the_reference(steps) -> None:
    document = Document("file:///fuzz.py", source=BASE, version=1)
    reference, previous = BASE, FULL_BASE
    for where, length, pieces in steps:
        start, start_pos = position(reference, int(where * len(reference)))
        end, end_pos = position(reference, min(start + length, len(reference)))
        new = "".join(pieces)
        document.apply_change(types.TextDocumentContentChangePartial(types.Range(start_pos, end_pos), new))
        reference = reference[:start] + new + reference[end:]
        assert document.source == reference
        edit = None
        for step in document.take_edits():
            edit = step if edit is None else compose(edit, step)
        incremental = analyze(reference, ANALYSIS_SETTINGS, previous=previous, edit=edit)
        assert snapshot(incremental) == snapshot(analyze(reference, ANALYSIS_SETTINGS)), repr(reference)
        previous = incremental
