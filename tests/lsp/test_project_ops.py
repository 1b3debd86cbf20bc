"""NPU308 in the language server: the workspace folder's operator registrations are
scanned, and a changed C++ file (watched) or a saved Python file that registers operators
updates the diagnostics of the open documents; so do the pins and the flags the project leaves off."""

from __future__ import annotations

import asyncio
import os

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from ascend_lsp.lsp import project_ops
from ascend_lsp.lsp.language_server import AscendLanguageServer

from .helpers import CLIENTS, TIMEOUT, diagnostics, open_document, server_config, start

CUDA_OP = ('TORCH_LIBRARY(proj, m) { m.def("gelu(Tensor x) -> Tensor"); }\n'
           'TORCH_LIBRARY_IMPL(proj, CUDA, m) { m.impl("gelu", &gelu_cuda); }\n')
NPU_KERNEL = 'TORCH_LIBRARY_IMPL(proj, PrivateUse1, m) { m.impl("gelu", &gelu_npu); }\n'
CALLS = "import torch\n\ny = torch.ops.proj.gelu(x)\nz = torch.ops.proj.fast(x)\n"
PY_OP = ('import torch\n\n\n@torch.library.custom_op("proj::fast", mutates_args=(), device_types="{device}")\n'
         'def fast(x: torch.Tensor) -> torch.Tensor:\n    return x.clone()\n')


@pytest_lsp.fixture(params=CLIENTS, config=server_config())
async def client(lsp_client: LanguageClient, request, tmp_path):
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()


async def lines_with_npu308(client: LanguageClient, uri: str, expected: list[int]) -> None:
    """Wait until the document's NPU308 findings are on `expected` (1-based) lines."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while True:
        found = sorted(d.range.start.line + 1 for d in await diagnostics(client, uri, 1) if d.code == "NPU308")
        if found == expected:
            return
        assert loop.time() < deadline, f"NPU308 on lines {found}, expected {expected}"
        await asyncio.sleep(0.05)


async def test_registrations_follow_the_files(client, tmp_path):
    (tmp_path / "csrc").mkdir()
    cuda = tmp_path / "csrc" / "ops.cu"
    cuda.write_text(CUDA_OP, encoding="utf-8")
    registry = tmp_path / "ops.py"
    registry.write_text(PY_OP.format(device="npu"), encoding="utf-8")
    await start(client, client.name, tmp_path)
    uri = open_document(client, tmp_path / "model.py", CALLS)
    await lines_with_npu308(client, uri, [3])
    items = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU308"]
    assert items[0].severity == types.DiagnosticSeverity.Error and "(csrc/ops.cu:2)" in items[0].message

    # a Python file saved in the editor now registers proj::fast for CUDA only
    registry.write_text(PY_OP.format(device="cuda"), encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(registry.as_uri())))
    await lines_with_npu308(client, uri, [3, 4])

    # the CUDA source gains an NPU kernel: a watched-file change
    cuda.write_text(CUDA_OP + NPU_KERNEL, encoding="utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(cuda.as_uri(), types.FileChangeType.Changed)]))
    await lines_with_npu308(client, uri, [4])


async def test_a_fifo_in_the_workspace_does_not_stop_the_server(client, tmp_path):
    os.mkfifo(tmp_path / "pipe.py")  # read by the scan and by a watched change, it would never answer
    (tmp_path / "ops.cu").write_text(CUDA_OP, encoding="utf-8")
    await start(client, client.name, tmp_path)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent((tmp_path / "pipe.py").as_uri(), types.FileChangeType.Changed)]))
    uri = open_document(client, tmp_path / "model.py", CALLS)
    await lines_with_npu308(client, uri, [3])


async def test_pins_follow_the_files(client, tmp_path):
    """NPU112's severity follows the project's torch pin: an integer device is a CUDA ordinal
    before torch 2.5. A changed requirements file (watched) is read again."""
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("torch==2.1.0\n", encoding="utf-8")
    await start(client, client.name, tmp_path)
    uri = open_document(client, tmp_path / "train.py", "import torch\n\nx = torch.zeros(2, device=0)\n")

    async def severity() -> types.DiagnosticSeverity | None:
        found = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU112"]
        return found[0].severity if found else None

    assert await severity() == types.DiagnosticSeverity.Error
    requirements.write_text("torch==2.6.0\n", encoding="utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(requirements.as_uri(), types.FileChangeType.Changed)]))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while (found := await severity()) != types.DiagnosticSeverity.Information:
        assert loop.time() < deadline, f"NPU112 stayed {found} after the pin changed"
        await asyncio.sleep(0.05)


async def test_flags_follow_the_files(client, tmp_path):
    """NPU111 under `if config.compile_model:` is info while the project gives the flag only
    False; a saved Python file that turns it on makes it a warning again."""
    config = tmp_path / "config.py"
    config.write_text("class Config:\n    compile_model: bool = False\n", encoding="utf-8")
    await start(client, client.name, tmp_path)
    uri = open_document(client, tmp_path / "model.py",
                        "import torch\n\n\ndef build(config, net):\n    if config.compile_model:\n"
                        "        net = torch.compile(net)\n    return net\n")

    async def becomes(expected: types.DiagnosticSeverity, why: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while (found := [d.severity for d in await diagnostics(client, uri, 1) if d.code == "NPU111"]) != [expected]:
            assert loop.time() < deadline, f"NPU111 stayed {found} {why}"
            await asyncio.sleep(0.05)

    # the first diagnostics may come before the project's facts are read: then a warning, until they are
    await becomes(types.DiagnosticSeverity.Information, "after the project's facts were read")
    train = tmp_path / "train.py"
    train.write_text("build(Config(compile_model=True), net)\n", encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(train.as_uri())))
    await becomes(types.DiagnosticSeverity.Warning, "after the flag was turned on")


async def test_an_opened_documents_project_facts_are_read_off_the_loop(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    (tmp_path / "config.py").write_text("use_amp: bool = False\n", encoding="utf-8")
    path = str(tmp_path / "train.py")
    server = AscendLanguageServer()
    project = server.projects.for_path(path, server.settings.for_path(path))
    assert not project.python_read
    await project_ops.warm_python(server, path)
    assert project.python_read and project.flags.default_off("use_amp") == (str(tmp_path / "config.py"), 0)
    assert project_ops.warm_python(server, path) is None  # read once
