"""Settings for a document: `[tool.ascend-lsp]` of the nearest pyproject.toml, then the
client's settings (initializationOptions / workspace/configuration section "ascend-lsp")
on top, looked up as lsp-check does (engine/settings_resolver.py). A bad value is reported
once and the last good settings stay in force."""

from __future__ import annotations

import os
from dataclasses import dataclass
from collections.abc import Callable

from ..engine.config import ConfigError, Settings
from ..engine.settings_resolver import SettingsResolver
from ..rules import RULE_SET

SECTION = "ascend-lsp"
DEFAULT_DEBOUNCE_MS = 30


RUN_TARGETS = ("npu", "cuda", "cpu", "emulate", "mindspore")
SERVER_KEYS = ("debounce", "runner", "trusted")


@dataclass(frozen=True)
class RunnerOptions:
    """How "Run on NPU" runs (client settings `runner.*`)."""

    target: str = "npu"
    timeout: float = 60.0
    code_lens: bool = True
    interpreter: str | None = None  # default: this server's interpreter
    command: str | None = None  # a launch template, e.g. ssh host python3 -c {bootstrap_quoted}
    functions: tuple[str, ...] = ()  # glob patterns of the function names that get a lens (empty: all)


@dataclass(frozen=True)
class ServerOptions:
    """Client settings that steer the server rather than the rules."""

    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    runner: RunnerOptions = RunnerOptions()
    trusted: bool = True  # False: an untrusted workspace, where nothing runs


def _number(value, low: float, high: float) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high
    return value if ok else None


def _runner(raw) -> RunnerOptions:
    if not isinstance(raw, dict):
        return RunnerOptions()
    text = {k: v.strip() for k, v in raw.items() if isinstance(v, str) and v.strip()}
    return RunnerOptions(
        target=text["target"] if text.get("target") in RUN_TARGETS else "npu",
        timeout=_number(raw.get("timeout"), 1, 24 * 3600) or 60.0,
        code_lens=raw.get("codeLens", raw.get("code-lens", True)) is not False,
        interpreter=text.get("interpreter"),
        command=text.get("command"),
        functions=tuple(p for p in raw.get("functions", ()) if isinstance(p, str)) if isinstance(
            raw.get("functions"), list) else (),
    )


def split_client_settings(raw) -> tuple[dict, ServerOptions]:
    """(engine settings, server options) from a client settings object."""
    if not isinstance(raw, dict):
        return {}, ServerOptions()
    if isinstance(raw.get(SECTION), dict):  # {"ascend-lsp": {...}} as some clients nest it
        raw = raw[SECTION]
    engine = {k: v for k, v in raw.items() if k not in SERVER_KEYS}
    debounce = _number(raw.get("debounce"), 0, 5000)
    return engine, ServerOptions(
        debounce_ms=int(debounce) if debounce is not None else DEFAULT_DEBOUNCE_MS,
        runner=_runner(raw.get("runner")),
        trusted=raw.get("trusted", True) is not False,
    )


class SettingsStore:
    """The settings of each folder (SettingsResolver, with the client's settings as the
    overrides); `report` receives the message of every configuration error (the server shows
    each distinct one once), and the folder keeps its last good settings."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self.report = report
        self.root: str | None = None
        self.options = ServerOptions()
        self.generation = 0  # bumped on every change: results of older generations are stale
        self.resolver = SettingsResolver(RULE_SET.prefixes, on_error=self._kept)

    @property
    def client(self) -> dict:
        return self.resolver.overrides

    def set_client(self, raw) -> None:
        self.resolver.overrides, self.options = split_client_settings(raw)
        self.invalidate()

    def invalidate(self) -> None:
        self.resolver.forget()
        self.generation += 1

    def depends_on(self, path: str) -> bool:
        """Whether a changed file can change the settings or tables of some folder."""
        path = os.path.realpath(path)
        return os.path.basename(path) == "pyproject.toml" or any(
            os.path.realpath(table) == path for settings in self.resolver.last_good.values()
            for table in settings.extra_mappings)

    def for_path(self, path: str | None) -> Settings:
        return self.resolver.settings(os.path.dirname(path) if path else (self.root or os.getcwd()))

    def _kept(self, error: ConfigError, folder: str) -> Settings:
        self.report(str(error))
        return self.resolver.last_good.get(folder) or self.resolver.defaults()


# --- the protocol side -----------------------------------------------------------------
def register(server) -> None:
    from lsprotocol import types
    from pygls.uris import to_fs_path

    from . import project_ops

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
                    # pyproject.toml and the extra mapping tables it names; C++/CUDA operator registrations
                    watchers=[types.FileSystemWatcher(glob_pattern="**/*.toml"),
                              types.FileSystemWatcher(glob_pattern=project_ops.WATCHED)])))
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
