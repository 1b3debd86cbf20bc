"""Every request is answered, also with params that do not fit the protocol (an
InvalidParams error is an answer), and a didChange keeps its valid changes. Raw messages
over a real server process."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from fuzz.lsp_stdio import LspProcess

INVALID_PARAMS = -32602
TEXT = "import torch\n\nx = 1\ntorch.cuda.synchronize()\n"


@pytest.fixture
def server(tmp_path: Path):
    process = LspProcess(str(tmp_path))
    process.initialize(tmp_path.as_uri())
    yield process
    process.close()


def pull(server: LspProcess, uri: str) -> list[tuple[str, int]]:
    response = server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=15)
    return sorted((d["code"], d["range"]["start"]["line"]) for d in response["result"]["items"])


def at(line: int, character: int) -> dict:
    return {"line": line, "character": character}


def test_requests_with_invalid_params_are_answered(server: LspProcess, tmp_path: Path) -> None:
    uri = (tmp_path / "a.py").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": TEXT}})
    doc = {"textDocument": {"uri": uri}}
    invalid = [
        ("textDocument/hover", {**doc, "position": at(-1, 0)}),
        ("textDocument/hover", {**doc, "position": at(0, 2**40)}),
        ("textDocument/hover", {**doc}),
        ("textDocument/completion", {"position": at(0, 0)}),
        ("textDocument/codeAction", {**doc, "range": {"start": at(0, -5), "end": at(0, 0)},
                                     "context": {"diagnostics": []}}),
        ("textDocument/codeAction", {**doc, "range": {"start": at(0, 0), "end": at(0, 0)}}),
        ("textDocument/diagnostic", None),
        ("textDocument/diagnostic", ["not", "an", "object"]),
        ("codeAction/resolve", {"kind": "quickfix"}),
    ]
    for method, params in invalid:
        response = server.request(method, params, timeout=5)
        assert response["error"]["code"] == INVALID_PARAMS, (method, params, response)
        assert method in response["error"]["message"]
    huge = 2**31 - 1
    answered = [
        ("textDocument/hover", {**doc, "position": at(huge, huge)}),
        ("textDocument/completion", {**doc, "position": at(huge, 0)}),
        ("textDocument/codeAction", {**doc, "range": {"start": at(huge, 0), "end": at(huge, huge)},
                                     "context": {"diagnostics": []}}),
        ("textDocument/hover", {"textDocument": {"uri": "file:///nowhere/b.py"}, "position": at(0, 0)}),
        ("textDocument/completion", {"textDocument": {"uri": "untitled:Untitled-1"}, "position": at(3, 4)}),
        ("textDocument/diagnostic", {"textDocument": {"uri": "file:///nowhere/b.py"}}),
    ]
    for method, params in answered:
        response = server.request(method, params, timeout=15)
        assert "error" not in response, (method, params, response)
    assert pull(server, uri) == [("NPU103", 3)]
    assert not [m for m in server.notifications if m["method"] == "window/showMessage"]


def test_a_did_change_keeps_its_valid_changes(server: LspProcess, tmp_path: Path) -> None:
    uri = (tmp_path / "a.py").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": TEXT}})
    assert pull(server, uri) == [("NPU103", 3)]
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"range": {"start": at(2, 0), "end": at(2, 5)}, "text": "y = torch.cuda.current_device()"},
        {"range": {"start": at(-3, 0), "end": at(0, -1)}, "text": "# head\n"},  # clamped to the start
        {"range": {"start": at(0, 0), "end": at(0, 0)}},  # no text: dropped
        {"range": {"start": at(99, 0), "end": at(99, 0)}, "text": "torch.cuda.empty_cache()\n"},  # past the end
    ]})
    text = "# head\nimport torch\n\ny = torch.cuda.current_device()\ntorch.cuda.synchronize()\n" \
           "torch.cuda.empty_cache()\n"
    expected = sorted((f.code, f.range.start_line) for f in analyze(text, Settings()).findings)
    assert expected == [("NPU103", 3), ("NPU103", 4), ("NPU103", 5)]
    assert pull(server, uri) == expected
    server.notify("textDocument/didChange", {"textDocument": {"uri": "file:///nowhere/c.py", "version": 2},
                                             "contentChanges": [{"text": "x = 1\n"}]})
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri}, "contentChanges": "nonsense"})
    assert pull(server, uri) == expected
    assert not [m for m in server.notifications if m["method"] == "window/showMessage"]
    assert server.close() == 0
