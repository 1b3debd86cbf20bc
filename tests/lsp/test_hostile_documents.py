"""Documents an untrusted repository can hold, against a real server process over stdio:
each request is answered with a result or an InvalidParams error, never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

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
