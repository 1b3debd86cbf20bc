"""Documents an untrusted repository can hold, against a real server process over stdio:
each request is answered with a result or an InvalidParams error, never an internal error."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from ascend_lsp.sources import MAX_BYTES
from fuzz.lsp_stdio import LspProcess

INVALID_PARAMS = -32602


@pytest.fixture
def server(tmp_path: Path):
    process = LspProcess(str(tmp_path))
    process.initialize(tmp_path.as_uri())
    yield process
    assert process.close() == 0


def open_text(server: LspProcess, uri: str, text: str) -> None:
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})


def test_code_lens_on_nesting_too_deep_to_parse(server: LspProcess, tmp_path: Path) -> None:
    uri = (tmp_path / "deep.py").as_uri()
    # Python's parser gives up on this with MemoryError, its AST builder on the next with RecursionError
    for version, deep in enumerate(("x = " + "-" * 100_000 + "1\n", "x = y" + ".a" * 100_000 + "\n")):
        server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        open_text(server, uri, f"def runs():\n    return 1\n\n{deep}")
        response = server.request("textDocument/codeLens", {"textDocument": {"uri": uri}}, timeout=30)
        assert response.get("result") == [], (version, response)


def test_run_with_a_bad_argument_is_invalid_params(server: LspProcess, tmp_path: Path) -> None:
    uri = (tmp_path / "a.py").as_uri()
    open_text(server, uri, "def runs():\n    return 1\n")
    refused = {
        "the argument must be {uri, function} or {uri, range}": [[], ["x"], [{"range": None}], [{"uri": 3}]],
        "`range` is not an LSP range: required field missing @ range.start.character; required field missing @ "
        "range.end": [[{"uri": uri, "range": {"start": {"line": 0}}}]],
        "`range` is not an LSP range: invalid value @ range.start": [
            [{"uri": uri, "range": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}}]],
        "`function` must be a function's name, got 3": [[{"uri": uri, "function": 3}]],
        "give a `function` or a `range`": [[{"uri": uri}]],
    }
    for command in ("ascend-lsp.run", "ascend-lsp.runLayers"):
        for message, cases in refused.items():
            for arguments in cases:
                response = server.request("workspace/executeCommand",
                                          {"command": command, "arguments": arguments}, timeout=15)
                assert response.get("error", {}).get("code") == INVALID_PARAMS, (command, arguments, response)
                assert response["error"]["message"] == f"{command}: {message}", arguments


# --- the size limit ------------------------------------------------------------------------
LINE = "torch.cuda.synchronize()\n"
SMALL = "import torch\n" + LINE
TOO_LARGE = "too large to check ({:.1f} MiB; the limit is 32 MiB)"
NOT_CHECKED = "ascend-lsp: not checked: " + TOO_LARGE


def kib(pid: int, key: str) -> int:
    return int(re.search(rf"{key}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text()).group(1))


def pull(server: LspProcess, uri: str) -> list[tuple[str | None, int, str]]:
    items = server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=60)["result"]["items"]
    return [(d.get("code"), d["range"]["start"]["line"], d["message"]) for d in items]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_document_over_the_size_limit_gets_one_diagnostic_and_no_analysis(server: LspProcess, tmp_path: Path,
                                                                             newline: str) -> None:
    uri = (tmp_path / "big.py").as_uri()
    big = ("import torch\n" + LINE * (MAX_BYTES // len(LINE))).replace("\n", newline)
    size = len(big) / 2**20
    assert len(big) > MAX_BYTES
    open_text(server, uri, SMALL)
    assert [code for code, _, _ in pull(server, uri)] == ["NPU103"]
    before = kib(server.proc.pid, "VmRSS")
    started = time.monotonic()
    # a paste that makes it too large (as an editor sends it: an incremental change)
    end = {"line": 2, "character": 0}
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": end, "end": end}, "text": big}]})
    total = (len(SMALL) + len(big)) / 2**20
    assert pull(server, uri) == [(None, 0, NOT_CHECKED.format(total))]
    position = {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 6}}
    assert server.request("textDocument/hover", position, timeout=30)["result"] is None
    assert server.request("textDocument/completion", position, timeout=30)["result"] is None
    assert server.request("textDocument/codeLens", {"textDocument": {"uri": uri}}, timeout=30)["result"] == []
    actions = server.request("textDocument/codeAction", {**position, "range": {"start": end, "end": end},
                                                         "context": {"diagnostics": []}}, timeout=30)
    assert actions["result"] is None
    run = server.request("workspace/executeCommand", {"command": "ascend-lsp.run",
                                                      "arguments": [{"uri": uri, "function": "f"}]}, timeout=30)
    assert run["result"] == {"status": "failed",
                             "message": f"Run on NPU: big.py is {TOO_LARGE.format(total)}."}
    # undone: checked again
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
        {"range": {"start": end, "end": {"line": 2 + big.count("\n"), "character": 0}}, "text": ""}]})
    assert [code for code, _, _ in pull(server, uri)] == ["NPU103"]
    assert time.monotonic() - started < 30
    # the text itself, a few copies of it while a message is read, no analysis of it, and
    # no index of its lines to apply a change (1.4 million lines)
    assert (kib(server.proc.pid, "VmHWM") - before) / 1024 < 5 * size
    # opened as it is
    other = (tmp_path / "other.py").as_uri()
    open_text(server, other, big)
    assert pull(server, other) == [(None, 0, NOT_CHECKED.format(size))]


def test_a_notebook_over_the_size_limit_gets_one_diagnostic(server: LspProcess, tmp_path: Path) -> None:
    notebook = (tmp_path / "big.ipynb").as_uri()
    cells = [f"{notebook}#cell{n}" for n in range(2)]
    texts = [SMALL, LINE * (MAX_BYTES // len(LINE) + 1)]
    server.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": notebook, "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": 2, "document": cell} for cell in cells]},
        "cellTextDocuments": [{"uri": cell, "languageId": "python", "version": 1, "text": text}
                              for cell, text in zip(cells, texts)]})
    joined = sum(len(f"# %% ascend-lsp cell {n}\n") + len(text) for n, text in enumerate(texts))
    assert pull(server, cells[0]) == [(None, 0, NOT_CHECKED.format(joined / 2**20))]
    assert pull(server, cells[1]) == []


def test_a_file_on_disk_over_the_size_limit_is_said_not_checked(server: LspProcess, tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    big.write_text("import torch\n" + LINE * (MAX_BYTES // len(LINE)), encoding="utf-8")
    (tmp_path / "small.py").write_text(SMALL, encoding="utf-8")
    report = server.request("workspace/diagnostic", {"previousResultIds": []}, timeout=60)["result"]
    found = {Path(item["uri"]).name: [(d.get("code"), d["message"]) for d in item["items"]] for item in report["items"]}
    size = big.stat().st_size / 2**20
    assert found == {"small.py": [("NPU103", found["small.py"][0][1])],
                     "big.py": [(None, f"ascend-lsp: not checked: too large to check ({size:.1f} MiB; the limit "
                                       "is 32 MiB)")]}
