"""The `ascend-lsp` language server (pygls 2): stdio by default, `--tcp HOST:PORT` to
debug. Each feature module contributes its handlers through `register(server)`; a new
feature (the "Run on NPU" code lenses) is one more module in `FEATURES`.

`ASCEND_LSP_EXTRA_RULES` (comma-separated module names) is imported at start, after the
shipped rules: a plugin hook for project-specific rules, registered like the shipped
ones with `ascend_lsp.engine.registry.rule` and `handles`."""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import sys
from collections.abc import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..project import Projects
from . import actions, commands, completion, hover, project_ops, pull, runs, settings, sync
from .documents import Documents
from .notebooks import NOTEBOOK_SYNC
from .protocol import Protocol
from .scheduler import Scheduler
from .settings import SettingsStore

FEATURES = (settings, sync, pull, actions, hover, completion, commands, runs, project_ops)
EXTRA_RULES_ENV = "ASCEND_LSP_EXTRA_RULES"


class AscendLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ascend-lsp", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=Protocol)
        self.settings = SettingsStore(self.show_config_error)
        self.projects = Projects()
        self.documents = Documents()
        self.scheduler = Scheduler(self)
        self.runs = runs.Runs()
        self.on_shutdown: list[Callable[[], None]] = [self.scheduler.shutdown, self.runs.close]
        self._shown: set[str] = set()

    @property
    def pull_diagnostics(self) -> bool:
        """The client pulls diagnostics (LSP 3.17); otherwise they are pushed."""
        caps = self.client_capabilities.text_document
        return caps is not None and caps.diagnostic is not None

    def show_config_error(self, message: str) -> None:
        if message not in self._shown:
            self._shown.add(message)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))

    def settings_changed(self) -> None:
        """Re-diagnose every open document; pulling clients are asked to pull again."""
        self._shown.clear()
        self.scheduler.refresh_all()
        self.ask_to_pull()

    def ask_to_pull(self) -> None:
        workspace = self.client_capabilities.workspace
        if self.pull_diagnostics and workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)


def create_server() -> AscendLanguageServer:
    server = AscendLanguageServer()
    for feature in FEATURES:
        feature.register(server)

    @server.feature(types.SHUTDOWN)
    def shutdown(_params: None) -> None:
        for hook in server.on_shutdown:
            hook()

    return server


def load_extra_rules() -> None:
    for name in filter(None, (n.strip() for n in os.environ.get(EXTRA_RULES_ENV, "").split(","))):
        importlib.import_module(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ascend-lsp", description="Language server for moving PyTorch CUDA code "
                                     "to Ascend NPUs (torch_npu) or MindSpore.")
    parser.add_argument("--version", action="version", version=f"ascend-lsp {__version__}")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead (for debugging)")
    parser.add_argument("--log-file", metavar="PATH", help="write the server's own log to PATH")
    parser.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    args = parser.parse_args(argv)
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=args.log_level,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    load_extra_rules()
    server = create_server()
    # Everything imported so far lives as long as the process: keep the collector from
    # rescanning it on every analysis (each parse allocates a fresh AST).
    gc.freeze()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            parser.error("--tcp wants HOST:PORT, e.g. 127.0.0.1:2087")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
