"""Settings for a document: `[tool.ascend-lsp]` of the nearest pyproject.toml, then the
client's settings (initializationOptions / workspace/configuration section "ascend-lsp")
on top, looked up as lsp-check does (settings_lookup.py). A bad value is reported
once and the last good settings stay in force."""

from __future__ import annotations

import os
from dataclasses import dataclass
from collections.abc import Callable

from ..engine.config import ConfigError, Settings
from ..settings_lookup import SettingsResolver
from ..rules import RULE_SET
from ..runner.job import RUN_TARGETS

SECTION = "ascend-lsp"
DEFAULT_DEBOUNCE_MS = 30


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
