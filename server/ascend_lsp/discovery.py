"""Which files a run checks: paths and globs, `.py` and `.ipynb`, packaging files, shell
launch scripts, configs and compose files, git's ignore files respected (read by `gitignore`, without running git)."""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Callable
from pathlib import Path

from .engine.config import Settings
from .engine.config_files import names_a_config_key
from .engine.packaging import HEAD_CHARS, document_kind
from .gitignore import ignore_walk
from .sources import SourceError, open_regular

EXTENSIONS = (".py", ".pyi", ".ipynb")
# Never worth descending into (Ruff excludes the same kind of folders by default).
DEFAULT_EXCLUDE = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    "__pycache__", "node_modules", "site-packages", "build", "dist", ".eggs", ".lsp-check-cache",
})
# Names of build output (setuptools' build/, the sdists and wheels in dist/) that are also
# package names: a folder so named that holds an `__init__.py` is source (mmengine's
# `mmengine/dist/`, distributed code) and is checked; build output never holds one at its top
# (build/ holds lib/ and bdist.*, dist/ archives).
BUILD_OUTPUT = frozenset({"build", "dist"})


def _skipped_folder(folder: str) -> bool:
    name = os.path.basename(folder)
    if name in BUILD_OUTPUT:
        return not os.path.isfile(os.path.join(folder, "__init__.py"))
    return name in DEFAULT_EXCLUDE


PACKAGING_CODES = ("NPU501", "NPU502", "NPU503", "NPU504")
# what a launch script or a Dockerfile (its RUN and ENV) can be reported for
LAUNCH_CODES = (*PACKAGING_CODES, "NPU108", "NPU124", "NPU127", "NPU505", "NPU804")
CONFIG_CODES = ("NPU801", "NPU802", "NPU803")
# a compose file: its images, its services' environment, the NVIDIA runtime's requests
COMPOSE_CODES = ("NPU504", "NPU108", "NPU127", "NPU804")
CONFIG_HEAD = 1 << 16  # a config's keys come early: a file whose first 64 KiB name none is no config
KIND_CODES = {"shell": LAUNCH_CODES, "dockerfile": LAUNCH_CODES, "config": CONFIG_CODES, "compose": COMPOSE_CODES}


def _wanted(path: str, settings: Settings) -> bool:
    """Python files and notebooks; packaging files (requirements*.txt, pyproject.toml,
    setup.cfg, environment.yml) while a packaging rule is selected; shell launch scripts (*.sh,
    sbatch files, a file without a suffix whose first line is a shell's `#!`) and Dockerfiles
    (Dockerfile, Dockerfile.*, *.dockerfile, Containerfile, a file in a `docker` folder whose
    first instruction is FROM or ARG) while a rule that reads them is; YAML and JSON files (a
    framework's config when their keys say so, config_files.py) and compose files likewise."""
    name = os.path.basename(path)
    if name.endswith(EXTENSIONS):
        return True
    kind = document_kind(path)  # the path: `requirements/*.txt` is known by its folder
    if kind is None and ("." not in name or os.path.basename(os.path.dirname(path)) == "docker") \
            and any(settings.enabled(code) for code in LAUNCH_CODES):
        kind = document_kind(path, _head(path))
    codes = KIND_CODES.get(kind, PACKAGING_CODES)
    if kind is None or not any(settings.enabled(code) for code in codes):
        return False
    # a YAML or JSON file only when it writes a key of a framework's config near its start
    return kind != "config" or names_a_config_key(_head(path, CONFIG_HEAD))


def _head(path: str, size: int = HEAD_CHARS) -> str:
    """The start of a regular file, as document_kind reads it ("" for anything else: a FIFO is
    never waited on)."""
    try:
        handle, _ = open_regular(path)
    except SourceError:
        return ""
    with handle:
        try:
            return handle.read(size).decode("utf-8", "replace")
        except OSError:
            return ""


class DiscoveryError(Exception):
    pass


def _excluded(path: Path, settings: Settings) -> bool:
    return _in_skipped_folder(path) or _excluded_by(path, settings)


def _in_skipped_folder(path: Path) -> bool:
    return any(_skipped_folder(str(folder)) for folder in path.parents if folder.name)


def _excluded_by(path: Path, settings: Settings) -> bool:
    """Whether the settings' `exclude` patterns name the path (relative to their root) or its name."""
    if settings.exclude:
        rel = os.path.relpath(path, settings.root) if settings.root else str(path)
        return any(fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(path.name, pattern) for pattern in settings.exclude)
    return False


def expand(raw: str) -> list[str]:
    """What a path on the command line names: the matches of a glob, else itself."""
    return glob.glob(raw, recursive=True) if glob.has_magic(raw) else [raw]


def checked_trees(paths: list[str]) -> tuple[str, ...]:
    """The real paths of the folders a run checks: each folder named, and the folder of each
    file named (a link's own folder, not its target's). A fix follows a symlink only into them."""
    return tuple(sorted({os.path.realpath(match if os.path.isdir(match) else os.path.dirname(os.path.abspath(match)))
                         for raw in paths for match in expand(raw)}))


def discover(paths: list[str], settings_for: Callable[[str], Settings], force_exclude: bool = False,
             unreadable: list[tuple[str, str]] | None = None) -> list[str]:
    """Files to check, sorted. Each file is wanted and excluded by its own settings
    (`settings_for(path)`: its project's `exclude` and selection). A file named explicitly is
    always checked, unless `force_exclude` (pre-commit names every staged file, excluded ones
    too). Folders that cannot be listed and ignore files that cannot be read are added to
    `unreadable` as (path, why), never skipped unsaid."""
    found: dict[str, None] = {}
    for raw in paths:
        matches = expand(raw)
        if not matches:
            raise DiscoveryError(f"{raw}: no such file or directory")
        for match in matches:
            path = Path(match)
            if path.is_dir():
                for file in _walk(path, settings_for, unreadable if unreadable is not None else []):
                    found[file] = None
            elif path.exists() or path.is_symlink():
                if glob.has_magic(raw) and not _wanted(match, settings_for(match)):
                    continue
                if (glob.has_magic(raw) or force_exclude) and _excluded(path, settings_for(match)):
                    continue
                found[str(path)] = None
            else:
                raise DiscoveryError(f"{raw}: no such file or directory")
    return sorted(found)


def _walk(folder: Path, settings_for: Callable[[str], Settings], unreadable: list[tuple[str, str]]) -> list[str]:
    out: list[str] = []

    def failed(exc: OSError) -> None:
        unreadable.append((str(exc.filename or folder), f"cannot list the folder: {exc.strerror or exc}"))

    ignore = ignore_walk(folder, unreadable)
    if _in_skipped_folder(folder / "_"):  # the folders below are skipped as the walk meets them
        return out

    for root, dirs, files in os.walk(folder, onerror=failed):
        dirs[:] = sorted(d for d in dirs if not _skipped_folder(os.path.join(root, d)) and not d.endswith(".egg-info"))
        settings = settings_for(os.path.join(root, "_"))  # the folder's
        # a Python file or a notebook is wanted by its name alone (_wanted's first test): most are
        wanted = [name for name in files if name.endswith(EXTENSIONS) or _wanted(os.path.join(root, name), settings)]
        if ignore is not None:
            dirs[:], wanted = ignore.keep(root, dirs, wanted)
        base = str(Path(root))  # as Path writes it: `a.py` in `.`, not `./a.py`
        for name in wanted:
            path = name if base == "." else os.path.join(base, name)
            if not settings.exclude or not _excluded_by(Path(path), settings):
                out.append(path)
    return out
