"""Settings: target, versions, chip, rule selection, and how each value of `[tool.ascend-lsp]`
or an adapter's overrides is checked (settings_lookup.py finds them)."""

from __future__ import annotations

import difflib
import fnmatch
import os
from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from urllib.parse import urlsplit

from ..knowledge.chips import load_chips
from .model import FIX_STYLES, Severity
from .test_suites import TESTS_MODES
from ..knowledge.api_tables import TableError, available_versions, mindspore_table

TARGETS = ("torch_npu", "mindspore")
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
    fix_style: str = "npu"  # what a fix writes: torch_npu's names, or torch.accelerator's (FIX_STYLES)
    tests: str = "info"  # test files' findings: info, or "check" at their severity (test_suites.py)

    @property
    def support_chip(self) -> str:
        """The support-list column that describes the configured chip."""
        return load_chips().chips[self.chip].support_column

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

    def merged(self, overrides: dict, codes: frozenset[str]) -> "Settings":
        """These settings with the (kebab- or snake-case) keys of `overrides` applied (`codes`:
        as from_mapping's)."""
        return from_mapping(overrides, codes, base=self, root=self.root)


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


def check_codes(key: str, codes: tuple[str, ...], prefixes: frozenset[str]) -> tuple[str, ...]:
    """`codes` if each is one of `prefixes` (the rule codes and their prefixes: RuleSet.prefixes),
    else a ConfigError with a suggestion (as Ruff rejects `--select RUF999`)."""
    for code in codes:
        if code not in prefixes:
            same = sorted(p for p in prefixes if len(p) == len(code))  # NPU99 → NPU9x rather than NPU
            close = difflib.get_close_matches(code.upper(), same, n=1, cutoff=0.6) or \
                difflib.get_close_matches(code.upper(), sorted(prefixes), n=1, cutoff=0.6)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            raise ConfigError(f"{key}: unknown rule code or prefix `{code}`{hint}; `lsp-check rules` lists them")
    return codes


def from_mapping(data: dict, codes: frozenset[str], base: Settings | None = None, root: str = "") -> Settings:
    """Settings from a `[tool.ascend-lsp]` table or LSP settings object; `codes` are the rule
    codes and prefixes the code settings may name (RuleSet.prefixes)."""
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
            changes[key.replace("-", "_")] = _check_version(key, value)
        elif key == "chip":
            try:
                changes["chip"] = load_chips().canonical(value)
            except ValueError as exc:
                raise ConfigError(f"`chip` {exc}") from None
        elif key == "exclude":
            changes[key] = _strings(key, value)
        elif key in ("select", "ignore"):
            changes[key] = check_codes(f"`{key}`", _strings(key, value), codes)
        elif key == "extend-select":
            changes["select"] = changes.get("select", base.select) + check_codes(f"`{key}`", _strings(key, value), codes)
        elif key == "extend-ignore":
            changes["ignore"] = changes.get("ignore", base.ignore) + check_codes(f"`{key}`", _strings(key, value), codes)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError("`per-file-ignores` must be a table of glob = [codes]")
            changes["per_file_ignores"] = tuple(
                (g, check_codes(f"`per-file-ignores` \"{g}\"", _strings(f"per-file-ignores.{g}", c), codes))
                for g, c in value.items())
        elif key == "extra-mappings":
            paths = _strings(key, value)
            changes["extra_mappings"] = tuple(str((Path(root) / p).resolve()) if root else p for p in paths)
        elif key == "fix-style":
            if value not in FIX_STYLES:
                raise ConfigError(f"`fix-style` must be one of {', '.join(FIX_STYLES)}, got {value!r}")
            changes["fix_style"] = value
        elif key == "tests":
            if value not in TESTS_MODES:
                raise ConfigError(f"`tests` must be one of {', '.join(TESTS_MODES)}, got {value!r}")
            changes["tests"] = value
        elif key == "docs-url":
            changes["docs_url"] = check_docs_url("`docs-url`", value)
        elif key == "severity":
            if not isinstance(value, dict):
                raise ConfigError("`severity` must be a table of code = \"error\"|\"warning\"|\"info\"|\"hint\"")
            check_codes("`severity`", tuple(value), codes)
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


def _check_version(key: str, value: str) -> str:
    """`value` if the tables cover that release: a support list for torch-npu, a mapping table
    for MindSpore."""
    if key == "torch-npu-version":
        known = available_versions()
        if value not in known:
            raise ConfigError(f"`torch-npu-version` {value!r} has no support list (known: {', '.join(known)})")
        return value
    try:
        mindspore_table(value)
    except TableError as exc:
        raise ConfigError(str(exc)) from None
    return value


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
    (the settings resolver reports an unusable one)."""
    value = os.environ.get(DOCS_URL_ENV, "").strip()
    try:
        return check_docs_url(f"${DOCS_URL_ENV}", value) if value else ""
    except ConfigError:
        return ""


__all__ = ["TARGETS", "ConfigError", "Settings", "check_codes", "check_docs_url",
           "check_env_docs_url", "env_docs_url", "from_mapping"]
