"""The `tests` setting in the editor, against the real server: a test file's findings are
info unless the client's settings say `"tests": "check"`, a test skipped without CUDA is info
either way, and an unknown value is a visible settings error."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, TIMEOUT, diagnostics, open_document, server_config, start
from ..suites import SUITE

INFO, WARNING = types.DiagnosticSeverity.Information, types.DiagnosticSeverity.Warning


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request):
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()


def npu101(found: list[types.Diagnostic]) -> list[tuple[int, types.DiagnosticSeverity]]:
    return [(d.range.start.line, d.severity) for d in found if d.code == "NPU101"]


async def test_default_then_check(client, tmp_path):
    await start(client, client.name, tmp_path)
    uri = open_document(client, tmp_path / "tests" / "test_devices.py", SUITE)
    assert npu101(await diagnostics(client, uri, 1)) == [(6, INFO), (10, INFO)]

    settings = {"ascend-lsp": {"tests": "check"}}
    client.set_configuration(settings)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings=settings if client.name == "neovim" else None))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while npu101(await diagnostics(client, uri, 1)) != [(6, INFO), (10, WARNING)]:
        assert loop.time() < deadline, "the setting did not apply"
        await asyncio.sleep(0.05)  # a pushing client's latest diagnostics, or a new pull


async def test_unknown_value_is_a_visible_settings_error(client, tmp_path):
    await start(client, client.name, tmp_path, options={"tests": "skip"})
    uri = open_document(client, tmp_path / "tests" / "test_devices.py", SUITE)
    assert npu101(await diagnostics(client, uri, 1)) == [(6, INFO), (10, INFO)]  # the defaults meanwhile
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not any("`tests` must be one of info, check, got 'skip'" in m.message for m in client.messages):
        assert loop.time() < deadline, "no settings error shown"
        await asyncio.sleep(0.01)
