"""Settings from the client and from pyproject.toml, reloaded when either changes."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, TIMEOUT, diagnostics, open_document, project_read, pulls, server_config, start

CUDA = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\ntorch.cuda.synchronize()\n"


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request, tmp_path):
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()


async def wait_until(condition, timeout: float = TIMEOUT) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def codes(items: list[types.Diagnostic]) -> set[str]:
    return {d.code for d in items}


async def test_client_settings(client, tmp_path):
    # initializationOptions
    await start(client, client.name, tmp_path, options={"ignore": ["NPU102"]})
    uri = open_document(client, tmp_path / "a.py", CUDA)
    assert codes(await diagnostics(client, uri, 1)) == {"NPU103"}

    # workspace/configuration, read again on workspace/didChangeConfiguration
    settings = {"ascend-lsp": {"ignore": ["NPU103"], "severity": {"NPU102": "error"}}}
    client.set_configuration(settings)
    # VS Code pulls workspace/configuration on the event; Neovim 0.11 pushes the settings with it.
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings=settings if client.name == "neovim" else None))
    client.published.clear()
    items = await diagnostics(client, uri, 1)
    assert codes(items) == {"NPU102"} and items[0].severity == types.DiagnosticSeverity.Error

    # A bad value is shown once, and the last good settings stay.
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"ascend-lsp": {"chip": "H100"}}))
    await wait_until(lambda: any("`chip` must be one of" in m.message for m in client.messages))
    assert client.messages[0].type == types.MessageType.Warning
    assert codes(await diagnostics(client, uri, 1)) == {"NPU102"}


async def test_pyproject_change(client, tmp_path):
    await start(client, client.name, tmp_path)
    if client.name == "visual-studio-code":  # it registers watchers dynamically; Neovim 0.11 cannot
        await wait_until(lambda: client.registrations)
        watched = [r for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
        assert watched[0].register_options["watchers"][0]["globPattern"] == "**/*.toml"
    (tmp_path / "src").mkdir()
    uri = open_document(client, tmp_path / "src" / "a.py", CUDA)
    assert codes(await diagnostics(client, uri, 1)) == {"NPU102", "NPU103"}
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.ascend-lsp]\nignore = ["NPU102"]\n', encoding="utf-8")
    client.published.clear()
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(pyproject.as_uri(), types.FileChangeType.Created)]))
    assert codes(await diagnostics(client, uri, 1)) == {"NPU103"}


TEAM_TABLE = """
[[api]]
name = "mylib.cuda_kernels"
rule = "NPU306"
prefix = true
note = "{note}"
source = "team wiki"
"""


async def test_extra_mapping_table_change(client, tmp_path):
    table = tmp_path / "team.toml"
    table.write_text(TEAM_TABLE.format(note="Use mylib.npu_kernels."), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-lsp]\nextra-mappings = ["team.toml"]\n', encoding="utf-8")
    await start(client, client.name, tmp_path)
    uri = open_document(client, tmp_path / "a.py", "from mylib.cuda_kernels import fused\n")
    assert [d.message for d in await diagnostics(client, uri, 1)] == [
        "`mylib.cuda_kernels.fused` builds CUDA code. Use mylib.npu_kernels."]

    # An unrelated table changes nothing; the team's table re-diagnoses the open file.
    await project_read(client)  # after the analysis that follows the project's reading
    client.published.clear()
    (tmp_path / "other.toml").write_text("x = 1\n", encoding="utf-8")
    table.write_text(TEAM_TABLE.format(note="Use mylib.ascend."), encoding="utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent((tmp_path / "other.toml").as_uri(), types.FileChangeType.Created)]))
    if not pulls(client):
        await asyncio.sleep(0.3)
        assert client.published == {}
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(table.as_uri(), types.FileChangeType.Changed)]))
    assert [d.message for d in await diagnostics(client, uri, 1)] == [
        "`mylib.cuda_kernels.fused` builds CUDA code. Use mylib.ascend."]


@pytest_lsp.fixture(config=server_config())
async def neovim(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, "neovim", tmp_path, refresh=True)
    yield
    await lsp_client.shutdown_session()


async def test_pulling_client_is_asked_to_refresh(neovim, tmp_path):
    uri = open_document(neovim, tmp_path / "a.py", CUDA)
    assert codes(await diagnostics(neovim, uri, 1)) == {"NPU102", "NPU103"}
    await asyncio.sleep(0.3)  # the project's Python facts read: a refresh of its own if the analysis came first
    before = neovim.diagnostic_refresh_count
    neovim.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"ascend-lsp": {"ignore": ["NPU1"]}}))
    assert codes(await diagnostics(neovim, uri, 1)) == set()
    assert neovim.diagnostic_refresh_count == before + 1
