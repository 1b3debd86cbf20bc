"""Run on NPU from the editor, against the real server process: the lens above a
function, the command it carries, progress, and the graded result as a RUN001
diagnostic with its table in the hover. The runner uses this interpreter (real torch on
the CPU), target `cpu` (zero delta) and `emulate` (HF32 convolutions)."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, TIMEOUT, diagnostics, open_document, pulls, server_config, start

pytest.importorskip("torch", reason="the torch extra is not installed")


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request):
    """A server per test: each starts it with its own settings."""
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()

SOURCE = '''import torch
import torch.nn as nn


def conv_block():  # 中文 🚀
    torch.manual_seed(0)
    block = nn.Conv2d(8, 8, 3, padding=1)
    return block(torch.randn(2, 8, 16, 16, device="cuda"))


def needs_input(x):
    return x * 2
'''


async def lenses(client, uri: str) -> list[types.CodeLens]:
    found = await asyncio.wait_for(client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(uri))), TIMEOUT)
    return [await asyncio.wait_for(client.code_lens_resolve_async(lens), TIMEOUT) for lens in found]


async def run_and_wait(client, uri: str, argument: dict) -> tuple[dict, types.Diagnostic]:
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ascend-lsp.run", arguments=[argument])), 120)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while loop.time() < deadline:
        if not pulls(client):
            await asyncio.sleep(0.05)
        found = [d for d in await diagnostics(client, uri) if d.code == "RUN001"]
        if found:
            return result, found[0]
    raise TimeoutError("no RUN001 diagnostic")


@pytest.mark.parametrize("target", ["cpu", "emulate"])
async def test_lens_command_result_diagnostic_and_hover(client, tmp_path, target):
    await start(client, client.name, tmp_path, options={"runner": {"target": target, "timeout": 120}})
    uri = open_document(client, tmp_path / f"run_{target}.py", SOURCE)
    await diagnostics(client, uri, 1)
    found = await lenses(client, uri)
    assert [(lens.range.start.line, lens.command.title) for lens in found] == [
        (4, f"▶ Run on NPU ({target})"), (4, "Run on NPU: find the layer")]
    lens = found[0]
    assert lens.command.command == "ascend-lsp.run"
    result, diagnostic = await run_and_wait(client, uri, lens.command.arguments[0])
    assert result["status"] == "passed"
    assert diagnostic.range.start == types.Position(4, 4) and diagnostic.range.end == types.Position(4, 14)
    assert diagnostic.severity == types.DiagnosticSeverity.Information
    assert diagnostic.data["run"]["status"] == "passed" and diagnostic.data["run"]["target"] == target
    assert {o["verdict"] for o in diagnostic.data["run"]["outputs"]} == {"PASS"}
    assert diagnostic.message.startswith(f"Run on {target}")
    assert ("emulated" in diagnostic.message) == (target == "emulate")
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(4, 6))), TIMEOUT)
    table = hover.contents.value
    assert "out" in table and "PASS" in table and "cosine" in table


async def test_lens_functions_setting(client, tmp_path):
    await start(client, client.name, tmp_path, options={"runner": {"functions": ["test_*"]}})
    text = SOURCE + "\n\ndef test_forward():\n    return torch.ones(2)\n"
    uri = open_document(client, tmp_path / "filtered.py", text)
    await diagnostics(client, uri, 1)
    assert [lens.command.arguments[0]["function"] for lens in await lenses(client, uri)] == ["test_forward"] * 2


async def test_run_refused_in_an_untrusted_workspace(client, tmp_path):
    await start(client, client.name, tmp_path, options={"trusted": False})
    uri = open_document(client, tmp_path / "untrusted.py", SOURCE)
    await diagnostics(client, uri, 1)
    assert await lenses(client, uri) == []
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ascend-lsp.run", arguments=[{"uri": uri, "function": "conv_block"}])), TIMEOUT)
    assert result["status"] == "refused"


async def test_cursor_outside_a_runnable_function_says_so(client, tmp_path):
    await start(client, client.name, tmp_path)
    uri = open_document(client, tmp_path / "cursor.py", SOURCE)
    await diagnostics(client, uri, 1)
    cursor = {"line": 11, "character": 4}  # in needs_input(x): it needs an argument
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ascend-lsp.run", arguments=[{"uri": uri, "range": {"start": cursor, "end": cursor}}])), TIMEOUT)
    assert result["status"] == "failed" and "needs no arguments" in result["message"]


async def test_a_run_works_in_its_workspace_folder(client, tmp_path):
    """The server runs outside the workspace (the editor starts it in its own folder, so that
    nothing of the workspace is imported into it); the user's code still runs in its project,
    with the project's interpreter when the setting names one by a relative path."""
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (tmp_path / "env" / "bin" / "python").chmod(0o755)
    await start(client, client.name, tmp_path, options={"runner": {"target": "cpu", "timeout": 120,
                                                                   "interpreter": "env/bin/python"}})
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "scale.txt").write_text("3\n")
    (tmp_path / "models").mkdir()
    source = "import torch\n\n\ndef scaled():\n    return torch.ones(2) * float(open('data/scale.txt').read())\n"
    uri = open_document(client, tmp_path / "models" / "relative.py", source)
    await diagnostics(client, uri, 1)
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ascend-lsp.run", arguments=[{"uri": uri, "function": "scaled"}])), 120)
    assert result["status"] == "passed", result
