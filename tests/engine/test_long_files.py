"""A long file is parsed and walked a piece at a time (engine/analyzer.py, `_check_pieces`):
the same analysis as one parse of the whole text, with the memory of one piece's AST."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine import analyzer
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.text import SourceText

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = (REPO / "examples" / "train_cuda.py").read_text(encoding="utf-8")
BODY = EXAMPLE[EXAMPLE.index("\nlogger = "):]  # below the imports

LATE_IMPORT = "import torch_npu as tn\nfrom torch.cuda import amp\n\n"
STRING_ACROSS = 'TEMPLATE = """\n' + "import os\nx = (\n" * 30 + '"""\n'  # col-0 lines a cut may land on
DECORATED = "@torch.no_grad()\ndef decorated():\n    return torch.cuda.current_device()\n"
CLASS = "class Model(nn.Module):\n    DEVICE = 'cuda'\n\n    def forward(self, x):\n        return x.cuda()\n"


def analysis_facts(analysis) -> tuple:
    module = analysis.module
    return ([(f.code, f.range, f.message, f.fixes) for f in analysis.findings],
            [(s.start, s.end, s.binds, bool(s.children)) for s in analysis.spans],
            (module.scope.imports, module.imported, module.import_line), analysis.references)


def whole_and_pieces(monkeypatch, text: str) -> tuple[tuple, tuple]:
    monkeypatch.setattr(analyzer, "PIECE_LINES", 10**9)
    whole = analysis_facts(analyze(text, Settings(), "a.py", references=True))
    monkeypatch.setattr(analyzer, "PIECE_LINES", 40)
    return whole, analysis_facts(analyze(text, Settings(), "a.py", references=True))


def test_pieces_give_the_analysis_of_the_whole_text(monkeypatch) -> None:
    # imports in the first piece and in later ones (they bind in the pieces above them too),
    # a string whose lines look like statements, decorators and classes where cuts fall
    parts = [EXAMPLE, BODY, LATE_IMPORT, STRING_ACROSS, BODY, DECORATED * 20, CLASS * 10, BODY, LATE_IMPORT,
             STRING_ACROSS.replace("import", "imp0rt"), BODY]
    text = "".join(parts)
    assert text.count("\n") > 20 * 40
    whole, pieces = whole_and_pieces(monkeypatch, text)
    assert pieces == whole
    assert {"tn", "amp"} <= set(whole[2][0])  # the late imports were seen
    assert len(analyzer._cuts(SourceText(text).lines)) > 10


def test_a_syntax_error_in_a_piece_is_recovered_from_as_in_the_whole_text(monkeypatch) -> None:
    text = EXAMPLE + BODY * 3 + "def broken(:\n    pass\n" + BODY * 3
    whole, pieces = whole_and_pieces(monkeypatch, text)
    assert pieces == whole
    assert [f[0] for f in whole[0]].count("E999") == 1


def test_a_string_across_a_cut_without_imports_falls_back_to_the_whole_text(monkeypatch) -> None:
    # the pieces after the first are not parsed for imports; walking them finds the bad cut
    text = EXAMPLE + ("torch.cuda.synchronize()\n" * 50 + 'S = """\n' + "y = 2\n" * 100 + '"""\n') * 3
    assert "import" not in text[len(EXAMPLE):]
    whole, pieces = whole_and_pieces(monkeypatch, text)
    assert pieces == whole
    assert [f[0] for f in whole[0]].count("NPU103") > 150


def test_a_long_file_is_not_held_as_one_ast() -> None:
    # 300,000 one-line statements: one parse of them peaks at about 800 MiB
    code = (
        "import re\n"
        "from ascend_lsp.analysis import analyze\n"
        "from ascend_lsp.engine.config import Settings\n"
        "def peak(): return int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) // 1024\n"
        "analyze('import torch\\n', Settings())\n"
        "before = peak()\n"
        "text = 'import torch\\n' + 'x = 1\\n' * 300_000 + 'torch.cuda.synchronize()\\n'\n"
        "found = [f.code for f in analyze(text, Settings(), 'a.py').findings]\n"
        "print(found, peak() - before)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "server")})
    found, growth = done.stdout.rsplit(" ", 1)
    assert found == "['NPU103']", done.stderr
    assert int(growth) < 250, growth


@pytest.mark.parametrize("lines", [30_000, 100_000])
def test_cuts_fall_on_statements(lines: int) -> None:
    text = "x = [\n    1,\n]\n" * (lines // 3)
    cuts = analyzer._cuts(SourceText(text).lines)
    assert cuts[0] == 0 and cuts[-1] == len(SourceText(text).lines)
    assert all(SourceText(text).lines[c].startswith("x = [") for c in cuts[1:-1])
    assert len(cuts) - 1 <= analyzer.MAX_PIECES + 1
