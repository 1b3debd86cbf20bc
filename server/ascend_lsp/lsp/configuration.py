"""The settings' protocol side: the client's settings at `initialize`, pulled again
(`workspace/configuration`) or pushed (`workspace/didChangeConfiguration`) when they change,
and the watched files that change a folder's settings, tables or custom operators; the store
that resolves them is settings.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from . import project_ops
from .settings import SECTION, split_client_settings

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer


def register(server: AscendLanguageServer) -> None:
    store = server.settings

    def client_supports(path: str) -> bool:
        node = server.client_capabilities
        for part in path.split("."):
            node = getattr(node, part, None)
            if node is None:
                return False
        return bool(node)

    async def pull_configuration() -> bool:
        """Ask the client for section "ascend-lsp"; True when the settings changed."""
        if not client_supports("workspace.configuration"):
            return False
        try:
            values = await server.workspace_configuration_async(types.ConfigurationParams(
                items=[types.ConfigurationItem(scope_uri=server.workspace.root_uri, section=SECTION)]))
        except Exception as exc:  # a client that fails the request keeps the settings it gave
            server.scheduler.log_once(f"workspace/configuration failed: {exc}", types.MessageType.Warning)
            return False
        value = values[0] if values else None
        if not isinstance(value, dict) or split_client_settings(value)[0] == store.client:
            return False
        store.set_client(value)
        return True

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        store.root = server.workspace.root_path
        if params.initialization_options is not None:
            store.set_client(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(_params: types.InitializedParams) -> None:
        registrations = []
        if client_supports("workspace.did_change_watched_files.dynamic_registration"):
            registrations.append(types.Registration(
                id="ascend-lsp-config-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    # pyproject.toml and the extra mapping tables it names; C++/CUDA operator
                    # registrations; the files that pin versions
                    watchers=[types.FileSystemWatcher(glob_pattern="**/*.toml"),
                              types.FileSystemWatcher(glob_pattern=project_ops.WATCHED),
                              types.FileSystemWatcher(glob_pattern=project_ops.WATCHED_PINS)])))
        if client_supports("workspace.did_change_configuration.dynamic_registration"):
            registrations.append(types.Registration(id="ascend-lsp-configuration",
                                                    method=types.WORKSPACE_DID_CHANGE_CONFIGURATION))
        if await pull_configuration():
            server.settings_changed()
        project_ops.warm(server)
        if registrations:
            try:
                await server.client_register_capability_async(types.RegistrationParams(registrations))
            except Exception as exc:
                server.scheduler.log_once(f"client/registerCapability failed: {exc}", types.MessageType.Warning)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        pushed = params.settings
        if isinstance(pushed, dict) and isinstance(pushed.get(SECTION), dict):
            store.set_client(pushed[SECTION])  # the push model: the settings come with the event
        elif not await pull_configuration():
            return
        server.settings_changed()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params: types.DidChangeWatchedFilesParams) -> None:
        paths = [p for p in (to_fs_path(change.uri) for change in params.changes) if p]
        project_ops.changed(server, paths)
        if any(store.depends_on(path) for path in paths):
            store.invalidate()
            server.settings_changed()
