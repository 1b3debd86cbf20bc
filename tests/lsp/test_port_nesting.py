""""Port this file to MindSpore" on code that libcst cannot take (it crashed the server with
SIGSEGV), or beside a port name a repository committed as a link: the server says why,
creates nothing, and goes on answering."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import TIMEOUT, code_actions, diagnostics, open_document, resolved, server_config, start

DEEP = {
    "unary-minus": "import torch\nx = " + "-" * 100_000 + "1\n",  # refused before the port starts
    "nested-lists": "import torch\nx = " + "[" * 140 + "]" * 140 + "\n",  # libcst gives up in the port's process
}
CUDA = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\n"


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, "visual-studio-code", tmp_path, options={"target": "mindspore"})
    yield
    await lsp_client.shutdown_session()


async def shown(client: LanguageClient) -> list[tuple[types.MessageType, str]]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not client.messages:
        assert loop.time() < deadline, "no message shown"
        await asyncio.sleep(0.01)
    return [(m.type, m.message) for m in client.messages]


@pytest.mark.parametrize("name", DEEP)
async def test_port_action_on_deeply_nested_code_says_so_and_the_server_goes_on(client, tmp_path, name):
    uri = open_document(client, tmp_path / "deep.py", DEEP[name])
    await diagnostics(client, uri, 1)
    [action] = [a for a in await code_actions(client, uri, [], only=[types.CodeActionKind.Refactor])
                if a.title == "Port this file to MindSpore"]
    action = await resolved(client, action)
    assert action.edit is None
    assert await shown(client) == [(types.MessageType.Error, "cannot port deep.py: too deeply nested to port")]

    other = open_document(client, tmp_path / "next.py", CUDA)
    assert [d.code for d in await diagnostics(client, other, 1)] == ["MS102"]


async def test_port_action_never_writes_through_a_link_at_the_ports_name(client, tmp_path):
    victim = tmp_path.parent / f"{tmp_path.name}-victim.py"
    victim.write_text("keep me\n")
    (tmp_path / "model_mindspore.py").symlink_to(victim)
    uri = open_document(client, tmp_path / "model.py", CUDA)
    await diagnostics(client, uri, 1)
    [action] = [a for a in await code_actions(client, uri, [], only=[types.CodeActionKind.Refactor])
                if a.title == "Port this file to MindSpore"]
    action = await resolved(client, action)
    assert action.edit is None
    assert await shown(client) == [(types.MessageType.Error, "cannot port model.py: model_mindspore.py: a symbolic "
                                                             "link; not written through it")]
    assert victim.read_text() == "keep me\n"
