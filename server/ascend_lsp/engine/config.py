"""Settings: target, versions, chip, rule selection; read from `[tool.ascend-lsp]`."""

from __future__ import annotations

import difflib
import fnmatch
import functools
import os
import sys
from stat import S_ISREG
from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from urllib.parse import urlsplit

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ..knowledge.chips import load_chips
from .model import Severity

TARGETS = ("torch_npu", "mindspore")
# Ascend's support list has columns for A2, A3 and 950DT only; the older chips are read
# from A2's column (they support no more than A2 does).
SUPPORT_COLUMN = {"910A": "A2", "310P": "A2"}
DOCS_URL_ENV = "ASCEND_LSP_DOCS_URL"
# A rule page's link is opened by the editor: a `command:` or `vscode:` URI there would run
# something, so an address from settings or the environment must be a web page or a file.
DOCS_SCHEMES = ("http", "https", "file")


class ConfigError(Exception):
    """A configuration value that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Settings:
    target: str = "torch_npu"
    torch_npu_version: str = "2.13.0"
    mindspore_version: str = "2.10"
    chip: str = "A2"
    select: tuple[str, ...] = ("NPU", "MS", "RUN")
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    extra_mappings: tuple[str, ...] = ()  # absolute paths
    severity: tuple[tuple[str, Severity], ...] = ()  # code or prefix → severity
    exclude: tuple[str, ...] = ()
    root: str = ""  # folder of the config file: base for per-file-ignores and exclude
    docs_url: str = ""  # where diagnostics link the rule pages; "" is $ASCEND_LSP_DOCS_URL or the default

    @property
    def support_chip(self) -> str:
        """The support-list column that describes the configured chip."""
        return SUPPORT_COLUMN.get(self.chip, self.chip)

    def enabled(self, code: str) -> bool:
        """Ruff's rule: the most specific matching prefix of select/ignore decides."""
        best_select = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        best_ignore = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return best_select >= 0 and best_select > best_ignore

    def ignored_in(self, path: str | None) -> tuple[str, ...]:
        """Codes (prefixes) ignored for `path` by per-file-ignores."""
        if not path or not self.per_file_ignores:
            return ()
        rel = _relative(path, self.root)
        out: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(PurePath(rel).name, pattern):
                out.extend(codes)
        return tuple(out)

    def severity_for(self, code: str, default: Severity) -> Severity:
        best = max(((len(p), s) for p, s in self.severity if code.startswith(p)), default=None)
        return best[1] if best else default

    def merged(self, overrides: dict) -> "Settings":
        """These settings with the (kebab- or snake-case) keys of `overrides` applied."""
        return from_mapping(overrides, base=self, root=self.root)


def _relative(path: str, root: str) -> str:
    try:
        return PurePath(path).relative_to(root).as_posix() if root else PurePath(path).as_posix()
    except ValueError:
        return PurePath(path).as_posix()


def _strings(key: str, value) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"`{key}` must be a list of strings, got {value!r}")
    return tuple(value)


def check_codes(key: str, codes: tuple[str, ...]) -> tuple[str, ...]:
    """`codes` if each is a rule code or the prefix of one, else a ConfigError with a
    suggestion (as Ruff rejects `--select RUF999`)."""
    prefixes = _prefixes()
    for code in codes:
        if code not in prefixes:
            same = sorted(p for p in prefixes if len(p) == len(code))  # NPU99 → NPU9x rather than NPU
            close = difflib.get_close_matches(code.upper(), same, n=1, cutoff=0.6) or \
                difflib.get_close_matches(code.upper(), sorted(prefixes), n=1, cutoff=0.6)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            raise ConfigError(f"{key}: unknown rule code or prefix `{code}`{hint}; `lsp-check rules` lists them")
    return codes


@functools.cache
def _prefixes() -> frozenset[str]:
    """Every rule code and prefix of one: built once, as every folder's settings check
    the command line's codes again (Settings.merged)."""
    from ..rules import RULES

    return frozenset(code[:end] for code in RULES for end in range(1, len(code) + 1))


def from_mapping(data: dict, base: Settings | None = None, root: str = "") -> Settings:
    """Settings from a `[tool.ascend-lsp]` table or LSP settings object."""
    base = base or Settings(root=root)
    changes: dict = {}
    for raw_key, value in data.items():
        key = raw_key.replace("_", "-")
        if value is None:
            continue
        if key == "target":
            if value not in TARGETS:
                raise ConfigError(f"`target` must be one of {', '.join(TARGETS)}, got {value!r}")
            changes["target"] = value
        elif key in ("torch-npu-version", "mindspore-version"):
            if not isinstance(value, str):
                raise ConfigError(f"`{key}` must be a string such as \"2.13.0\", got {value!r}")
            changes[key.replace("-", "_")] = value
        elif key == "chip":
            try:
                changes["chip"] = load_chips().canonical(value)
            except ValueError as exc:
                raise ConfigError(f"`chip` {exc}") from None
        elif key == "exclude":
            changes[key] = _strings(key, value)
        elif key in ("select", "ignore"):
            changes[key] = check_codes(f"`{key}`", _strings(key, value))
        elif key == "extend-select":
            changes["select"] = changes.get("select", base.select) + check_codes(f"`{key}`", _strings(key, value))
        elif key == "extend-ignore":
            changes["ignore"] = changes.get("ignore", base.ignore) + check_codes(f"`{key}`", _strings(key, value))
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError("`per-file-ignores` must be a table of glob = [codes]")
            changes["per_file_ignores"] = tuple(
                (g, check_codes(f"`per-file-ignores` \"{g}\"", _strings(f"per-file-ignores.{g}", c)))
                for g, c in value.items())
        elif key == "extra-mappings":
            paths = _strings(key, value)
            changes["extra_mappings"] = tuple(str((Path(root) / p).resolve()) if root else p for p in paths)
        elif key == "docs-url":
            changes["docs_url"] = check_docs_url("`docs-url`", value)
        elif key == "severity":
            if not isinstance(value, dict):
                raise ConfigError("`severity` must be a table of code = \"error\"|\"warning\"|\"info\"|\"hint\"")
            check_codes("`severity`", tuple(value))
            try:
                changes["severity"] = tuple((c, Severity.parse(s)) for c, s in value.items())
            except (ValueError, AttributeError) as exc:
                raise ConfigError(f"`severity`: {exc}") from None
        else:
            raise ConfigError(f"unknown setting `{raw_key}` in [tool.ascend-lsp]")
    keys = {k.replace("_", "-") for k in data}
    if "select" in keys and not {"ignore", "extend-ignore"} & keys:
        changes["ignore"] = ()  # a new selection starts over, as Ruff's --select does
    if root:
        changes["root"] = root
    return replace(base, **changes)


def check_docs_url(name: str, value) -> str:
    """`value` (stripped) if it is "packaged" or an http, https or file address; else a
    ConfigError naming the setting `name`."""
    address = value.strip() if isinstance(value, str) else ""
    try:
        scheme = urlsplit(address).scheme.lower()
    except ValueError:  # a malformed address ("http://[")
        scheme = ""
    if address != "packaged" and scheme not in DOCS_SCHEMES:
        raise ConfigError(f"{name} must be an http, https or file address such as "
                          f"\"https://example.org/rules/{{code}}.md\", or \"packaged\"; got {value!r}")
    return address


def check_env_docs_url() -> None:
    """A ConfigError for an unusable $ASCEND_LSP_DOCS_URL: every command says so, even where
    the links then use the default."""
    if os.environ.get(DOCS_URL_ENV, "").strip():
        check_docs_url(f"${DOCS_URL_ENV}", os.environ[DOCS_URL_ENV])


def env_docs_url() -> str:
    """$ASCEND_LSP_DOCS_URL when it is an address `check_docs_url` accepts, else ""
    (`load_settings` reports an unusable one)."""
    value = os.environ.get(DOCS_URL_ENV, "").strip()
    try:
        return check_docs_url(f"${DOCS_URL_ENV}", value) if value else ""
    except ConfigError:
        return ""


@functools.lru_cache(maxsize=256)
def _tool_table(path: str, _stamp: tuple[int, int]) -> dict | None:
    """[tool.ascend-lsp] of a pyproject.toml (None without one); cached per file version,
    since every folder of a tree asks for the same few files."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return data.get("tool", {}).get("ascend-lsp")


def find_pyproject(start: Path) -> tuple[Path, dict] | None:
    """The nearest pyproject.toml at or above `start` that has [tool.ascend-lsp], with that table."""
    start = start if start.is_dir() else start.parent
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        try:
            stat = candidate.stat()
        except OSError:
            continue
        if not S_ISREG(stat.st_mode):
            continue
        table = _tool_table(str(candidate), (stat.st_mtime_ns, stat.st_size))
        if table is not None:
            return candidate, table
    return None


def load_settings(start: Path, base: Settings | None = None) -> Settings:
    """Settings from the nearest pyproject.toml with [tool.ascend-lsp], else defaults.
    An unusable $ASCEND_LSP_DOCS_URL is a ConfigError here, where every command and the
    server resolve their settings (the links themselves then use the default)."""
    check_env_docs_url()
    found = find_pyproject(start.resolve())
    if found is None:
        return base or Settings()
    path, table = found
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.ascend-lsp] must be a table")
    try:
        return from_mapping(table, base=base, root=str(path.parent))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


__all__ = ["TARGETS", "ConfigError", "Settings", "check_codes", "check_docs_url",
           "check_env_docs_url", "env_docs_url", "from_mapping", "load_settings"]
