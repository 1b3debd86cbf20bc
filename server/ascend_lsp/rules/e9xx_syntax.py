"""E999: the file (or a part of it) does not parse. E902: the file cannot be checked at all."""

from __future__ import annotations

from ..engine.model import Severity
from ..engine.registry import rule

rule(
    code="E999", name="syntax-error", severity=Severity.ERROR, fix="never", targets=("torch_npu", "mindspore"),
    suppressible=False, reported_by=("ascend_lsp.engine.analyzer._syntax_finding",),
    message="SyntaxError: {name}",
    doc=dict(
        what="Reports where Python cannot parse the file.",
        why="Code that does not parse cannot be checked. The rest of the file still is: the statements before "
            "and after the broken one get their findings.",
        example="model.cuda(  # SyntaxError: '(' was never closed",
        fix="None.",
        source="CPython's parser (`ast.parse`).",
    ),
)

# Reported by lsp-check's output (cli/output.py: not_checked), like Ruff's E902 (io-error):
# one finding at 1:1 with the reason, in every format, so a reader of JSON or SARIF sees that
# a file was skipped. Nothing can hide it: the file's noqa comments were never read, and the
# run exits 2 whatever the selection.
rule(
    code="E902", name="file-not-checked", severity=Severity.ERROR, fix="never", targets=("torch_npu", "mindspore"),
    suppressible=False, reported_by=("ascend_lsp.cli.output.not_checked", "ascend_lsp.lsp.diagnostics.unchecked_reports"),
    message="{name}",
    doc=dict(
        what="Reports a file that could not be checked at all: it cannot be read (permissions, a dangling "
             "link), is not a regular file (a FIFO, a device), is over 32 MiB, is binary (a NUL byte), is not "
             "text in its declared encoding, or nests too deeply to analyse. The message says which; a folder "
             "that cannot be listed and an ignore file that cannot be read are reported the same way.",
        why="A file that was not checked has no findings, which must not read as a clean file: `lsp-check` "
            "exits 2 and every output format (text, JSON, SARIF, GitHub annotations, GitLab, JUnit, the "
            "migration report) lists the file with this code, as Ruff reports E902. `# noqa`, `ignore` and "
            "`per-file-ignores` cannot hide it, and a baseline never accepts it.",
        example="# blob.py ends with a NUL byte; `lsp-check blob.py --output-format concise` prints\n"
                "# blob.py:1:1: E902 binary file (a NUL byte at byte 6), not Python source",
        fix="Make the file readable UTF-8 (or declare its encoding with a `# -*- coding: … -*-` line), or "
            "keep it out of the run with `exclude` in `[tool.ascend-lsp]` (or `.gitignore`).",
        source="`lsp-check`: a file it could not read or analyse.",
    ),
)
