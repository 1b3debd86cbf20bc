"""Where a folder's settings come from, looked up one way for every adapter: the nearest
pyproject.toml with `[tool.ascend-lsp]`, then the adapter's overrides (lsp-check's command
line, the editor's settings), each value checked by config.from_mapping."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from stat import S_ISREG

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .engine.config import ConfigError, Settings, check_env_docs_url, from_mapping
from .real_folders import RealFolders

OnError = Callable[[ConfigError, str], Settings]  # (the error, the folder) → the settings to use instead


class SettingsResolver:
    """The settings of each folder, kept until `forget`. `codes` are the rule codes and
    prefixes the code settings may name (RuleSet.prefixes); `config`, when given, is the one
    file every folder reads. A value that cannot be used is a ConfigError naming it; the
    adapters differ only in what they do with it: lsp-check lets it end the run (exit 2),
    the language server passes `on_error`, which reports it and returns the folder's last
    good settings (`last_good`)."""

    def __init__(self, codes: frozenset[str], overrides: dict | None = None, config: Path | None = None,
                 on_error: OnError | None = None) -> None:
        self.codes = codes
        self.overrides = overrides or {}
        self.config = config
        self.on_error = on_error
        self.last_good: dict[str, Settings] = {}
        self._by_folder: dict[str, Settings] = {}
        # per real folder, the nearest pyproject.toml with [tool.ascend-lsp] at or above it
        # (None: none up to `/`), and the settings each such file gives: a folder without
        # one has its parent's answer, so the folders of a tree are not each walked up to `/`
        self._nearest: dict[str, tuple[Path, object] | None] = {}  # (the file, its table)
        self._by_file: dict[Path | None, Settings] = {}
        self._real = RealFolders()

    def settings(self, folder: str) -> Settings:
        key = "" if self.config is not None else folder
        found = self._by_folder.get(key)
        if found is None:
            try:
                found = self._resolve(folder)
            except ConfigError as exc:
                if self.on_error is None:
                    raise
                found = self.on_error(exc, folder)
            else:
                self.last_good[folder] = found
            self._by_folder[key] = found
        return found

    def for_path(self, path: str) -> Settings:
        """The settings of the folder that holds `path`."""
        return self.settings(os.path.dirname(os.path.abspath(path)))

    def forget(self) -> None:
        """Look every folder up again (a configuration file or the overrides changed)."""
        self._by_folder.clear()
        self._nearest.clear()
        self._by_file.clear()
        self._real.clear()

    def defaults(self) -> Settings:
        """The defaults with the overrides, or the defaults alone when the overrides are bad."""
        try:
            return Settings().merged(self.overrides, self.codes)
        except ConfigError:
            return Settings()

    def _resolve(self, folder: str) -> Settings:
        """Settings from the nearest pyproject.toml with [tool.ascend-lsp] (at or above the
        configuration file when there is one), else defaults; then the overrides. An unusable
        $ASCEND_LSP_DOCS_URL is a ConfigError here, where every command and the server
        resolve their settings (the links themselves then use the default)."""
        if self.config is not None and not self.config.exists():
            raise ConfigError(f"{self.config}: no such file")
        check_env_docs_url()
        if self.config is not None:
            config = self.config.resolve()
            start = str(config if config.is_dir() else config.parent)
        elif folder == os.path.abspath(folder):
            start = self._real.of(folder)
        else:  # a `..` after a link is resolved from the link's target, not taken away in the text
            start = str(Path(folder).resolve())
        nearest = self._nearest_pyproject(start)
        path = nearest[0] if nearest is not None else None
        found = self._by_file.get(path)
        if found is None:
            project = Settings() if nearest is None else settings_of(*nearest, self.codes)
            found = self._by_file[path] = project.merged(self.overrides, self.codes) if self.overrides else project
        return found

    def _nearest_pyproject(self, folder: str) -> tuple[Path, object] | None:
        walked: list[str] = []
        nearest: tuple[Path, object] | None = None
        candidate = folder
        while True:
            if candidate in self._nearest:
                nearest = self._nearest[candidate]
                break
            walked.append(candidate)
            path = os.path.join(candidate, "pyproject.toml")
            table = _tool_table_of(path)
            if table is not None:
                nearest = Path(path), table
                break
            above = os.path.dirname(candidate)
            if above == candidate:
                break
            candidate = above
        self._nearest.update(dict.fromkeys(walked, nearest))
        return nearest


@functools.lru_cache(maxsize=256)
def _tool_table(path: str, _stamp: tuple[int, int]) -> object:
    """[tool.ascend-lsp] of a pyproject.toml (None without one); cached per file version,
    since every folder of a tree asks for the same few files."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return data.get("tool", {}).get("ascend-lsp")


def _tool_table_of(path: str) -> object:
    """[tool.ascend-lsp] of `path` when it is a regular file, else None."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _tool_table(path, (stat.st_mtime_ns, stat.st_size)) if S_ISREG(stat.st_mode) else None


def settings_of(path: Path, table: object, codes: frozenset[str]) -> Settings:
    """The settings the [tool.ascend-lsp] `table` of the pyproject.toml `path` gives."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.ascend-lsp] must be a table")
    try:
        return from_mapping(table, codes, root=str(path.parent))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
