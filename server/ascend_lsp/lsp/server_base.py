"""The server object every part of the language server shares: the pygls server with this
project's protocol and notebook sync, the settings store, the open documents and the marks of
runs, and the ways to tell the client. The scheduler analyses through it; the features
register on its subclass (language_server.py), which adds the scheduler."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..project import Projects
from . import fact_reader
from .documents import Documents
from .notebooks import NOTEBOOK_SYNC
from .protocol import Protocol
from .run_marks import Runs
from .settings import SettingsStore


class ServerBase(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ascend-lsp", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=Protocol)
        self.settings = SettingsStore(self.show_config_error)
        self.projects = Projects(provisional=True)  # the first diagnostics do not wait for a project's reading
        self.fact_readers: set[asyncio.subprocess.Process] = set()  # fact_reader.py's children, while they read
        self.documents = Documents()
        self.runs = Runs()
        self.on_shutdown: list[Callable[[], None]] = [lambda: fact_reader.stop(self.fact_readers)]
        self._shown: set[str] = set()

    @property
    def pull_diagnostics(self) -> bool:
        """The client pulls diagnostics (LSP 3.17); otherwise they are pushed."""
        caps = self.client_capabilities.text_document
        return caps is not None and caps.diagnostic is not None

    @property
    def related_information(self) -> bool:
        """The client shows `Diagnostic.relatedInformation`: it says so for pushed diagnostics,
        or for pulled ones (LSP 3.18). A 3.17 client that pulls declares it for the push model
        only (vscode-languageclient 9), and shows it either way."""
        caps = self.client_capabilities.text_document
        return caps is not None and any(c is not None and bool(c.related_information)
                                        for c in (caps.publish_diagnostics, caps.diagnostic))

    def show_config_error(self, message: str) -> None:
        if message not in self._shown:
            self._shown.add(message)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))

    def ask_to_pull(self) -> None:
        workspace = self.client_capabilities.workspace
        if self.pull_diagnostics and workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)
