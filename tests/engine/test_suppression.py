"""Whether a finding can be suppressed is a property of its rule (Rule.suppressible): a
syntax error is never hidden, by `# noqa`, per-file-ignores or `--add-noqa`."""

from __future__ import annotations

import dataclasses

from ascend_lsp.cli.noqa_writer import with_noqa
from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.rules import RULES

TEXT = "import torch\ntorch.cuda.synchronize()  # noqa: NPU103\nx = (  # noqa\n"


def codes(text: str, settings: Settings, path: str = "src/a.py") -> list[str]:
    return [f.code for f in analyze(text, settings, path).findings]


def test_a_syntax_error_is_never_suppressed() -> None:
    assert RULES["E999"].suppressible is False
    assert codes(TEXT, Settings()) == ["E999"]
    ignored = Settings(per_file_ignores=(("src/*", ("E", "NPU")),))
    assert codes("import torch\ntorch.cuda.synchronize()\nx = (\n", ignored) == ["E999"]
    assert with_noqa(TEXT, [(2, "E999")]) == (TEXT, [(2, "E999", "E999 cannot be suppressed")])


def test_the_rule_decides_not_its_code(monkeypatch) -> None:
    monkeypatch.setitem(RULES, "NPU103", dataclasses.replace(RULES["NPU103"], suppressible=False))
    assert codes(TEXT, Settings()) == ["NPU103", "E999"]
    ignored = Settings(per_file_ignores=(("src/*", ("NPU",)),))
    assert codes("import torch\ntorch.cuda.synchronize()\n", ignored) == ["NPU103"]
    text = "import torch\ntorch.cuda.synchronize()\n"
    assert with_noqa(text, [(1, "NPU103")]) == (text, [(1, "NPU103", "NPU103 cannot be suppressed")])
