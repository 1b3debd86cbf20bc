"""Driving the real server process: a client that records pushed diagnostics with their
versions, and helpers that wait for, pull, and apply what the server sends."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pygls.protocol import default_converter
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from ascend_lsp.engine.text import split_lines
from ascend_lsp.lsp import project_ops
from fuzz.lsp_stdio import LspProcess

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "train_cuda.py"
CLIENTS = ("visual-studio-code", "neovim")  # VS Code 1.65 is push-only; Neovim 0.11 pulls, and negotiates utf-8
TIMEOUT = 15.0


def published(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published[params.uri] = params  # with its version


def register_capability(client: LanguageClient, params: types.RegistrationParams) -> None:
    client.registrations.extend(params.registrations)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published, client.registrations = {}, []
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: published,
                                   types.CLIENT_REGISTER_CAPABILITY: register_capability})
    return client


def server_config(**env: str) -> ClientServerConfig:
    return ClientServerConfig(server_command=[sys.executable, "-m", "ascend_lsp.lsp.server"],
                              client_factory=make_client, server_env={**os.environ, **env})


def capabilities(name: str, notebooks: bool = False, refresh: bool = False) -> types.ClientCapabilities:
    caps = client_capabilities(name)
    if refresh:
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    if notebooks:  # neither recorded client syncs notebooks; VS Code's notebook support does
        caps.notebook_document = types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities())
    return caps


async def start(client: LanguageClient, name: str, root: Path, options: dict | None = None,
                notebooks: bool = False, refresh: bool = False) -> types.InitializeResult:
    client.root = root
    result = await client.initialize_session(types.InitializeParams(
        capabilities=capabilities(name, notebooks, refresh), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)], initialization_options=options))
    client.encoding = result.capabilities.position_encoding or types.PositionEncodingKind.Utf16
    return result


async def project_read(client: LanguageClient) -> None:
    """Wait until the server has read the Python files of the client's project (its log says so),
    and for the analyses that follow: the open documents' diagnostics are then settled."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not any(m.message.startswith(project_ops.READ) for m in client.log_messages):
        assert loop.time() < deadline, "the project's Python files were not read"
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)


def pulls(client: LanguageClient) -> bool:
    return client.capabilities.text_document.diagnostic is not None


def open_document(client: LanguageClient, path: Path, text: str, version: int = 1, language: str = "python") -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, version, text)))
    return uri


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [types.TextDocumentContentChangeWholeDocument(text)]))


async def diagnostics(client: LanguageClient, uri: str, version: int | None = None) -> list[types.Diagnostic]:
    """The diagnostics the client has for `uri` at `version`, pulled or pushed as the
    client's capabilities say."""
    if pulls(client):
        report = await asyncio.wait_for(client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))), TIMEOUT)
        return list(report.items)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while loop.time() < deadline:
        params = client.published.get(uri)
        if params is not None and (version is None or params.version == version):
            return list(params.diagnostics)
        await asyncio.sleep(0.01)
    raise TimeoutError(f"no diagnostics for {uri} version {version}")


def units(client: LanguageClient, text: str) -> int:
    """Length of `text` in the negotiated position encoding."""
    if client.encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if client.encoding == types.PositionEncodingKind.Utf16:
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def offset(client: LanguageClient, text: str, position: types.Position) -> int:
    lines = split_lines(text)
    before = sum(len(line) for line in lines[:position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    col = 0
    while col < len(line) and units(client, line[:col + 1]) <= position.character:
        col += 1
    return before + col


def apply(client: LanguageClient, text: str, edits: list[types.TextEdit]) -> str:
    spans = sorted(((offset(client, text, e.range.start), offset(client, text, e.range.end), e.new_text)
                    for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_by_uri(edit: types.WorkspaceEdit) -> dict[str, list[types.TextEdit]]:
    if edit.document_changes:
        return {change.text_document.uri: list(change.edits) for change in edit.document_changes}
    return {uri: list(items) for uri, items in (edit.changes or {}).items()}


async def code_actions(client: LanguageClient, uri: str, diagnostics_: list[types.Diagnostic],
                       only: list[str] | None = None) -> list[types.CodeAction]:
    rng = diagnostics_[0].range if diagnostics_ else types.Range(types.Position(0, 0), types.Position(0, 0))
    found = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), rng, types.CodeActionContext(diagnostics_, only=only))), TIMEOUT)
    return list(found or [])


async def resolved(client: LanguageClient, action: types.CodeAction) -> types.CodeAction:
    if action.edit is None:
        action = await asyncio.wait_for(client.code_action_resolve_async(action), TIMEOUT)
    return action


def position(client: LanguageClient, text: str, at: int) -> types.Position:
    """The client position of offset `at` in `text` (lines break at \\r\\n, \\r, \\n only)."""
    lines = split_lines(text[:at])
    line = lines[-1] if lines and not lines[-1].endswith(("\n", "\r")) else ""
    count = len(lines) - (1 if line else 0)
    return types.Position(count, units(client, line))


def change(client: LanguageClient, uri: str, text: str, steps: list[tuple[int, int, str]], version: int) -> str:
    """Apply incremental changes, each replacing text[start:end] (of the text the ones
    before it left) with new text, in one didChange; the new text."""
    changes = []
    for start, end, new in steps:
        changes.append(types.TextDocumentContentChangePartial(
            types.Range(position(client, text, start), position(client, text, end)), new))
        text = text[:start] + new + text[end:]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=version, uri=uri), changes))
    return text


def pulled_and_shown(folder: Path, text: str, env: dict[str, str] | None = None,
                     options: dict | None = None) -> tuple[list[dict], list[str]]:
    """A real server over stdio in `folder`: (the pulled diagnostics of `a.py` holding `text`,
    the texts of the server's showMessage notifications, waited for up to 5 s)."""
    server = LspProcess(str(folder), env=env)
    server.request("initialize", {"processId": os.getpid(), "rootUri": folder.as_uri(),
                                  "capabilities": {"textDocument": {"diagnostic": {}}},
                                  "initializationOptions": options})
    server.notify("initialized", {})
    uri = (folder / "a.py").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})
    items = server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=15)["result"]["items"]
    deadline = time.monotonic() + 5
    while not any(m["method"] == "window/showMessage" for m in server.notifications) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.close() == 0
    return items, [m["params"]["message"] for m in server.notifications if m["method"] == "window/showMessage"]
