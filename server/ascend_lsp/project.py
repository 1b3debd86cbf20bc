"""The facts about one project that the analyses of its files share: its root, the operators
it registers (custom_ops.py, for NPU308), the versions it pins, the boolean flags it leaves
off (flag_defaults.py, for NPU106 and NPU111) and the calls of its functions whose parameters
default to CUDA or that name CUDA (call_sites.py, for NPU101 and NPU1xx): the last two in one
read of its Python files, on first use, and again when the language server sees a Python file
change (`reread_python`). An adapter keeps one
ProjectContext per project (Projects) and hands it to each analysis (`analyze(...,
project=)`), where handlers read `checker.project`: no module keeps them.

The operators are scanned on first use and again when the language server sees a file that
registers some change (`rescan_ops`). The pins are read on first use (and again after the
server sees a pinning file change: `forget_pins`) from the project's
requirements files (nested ones too), pyproject.toml (`[project]` dependencies and
optional-dependencies), setup.py and setup.cfg (`install_requires`) and environment.yml; a
file that is a link out of the project is not read (docs/security.md)."""

from __future__ import annotations

import ast
import functools
import os
import sys
import threading
from pathlib import Path
from collections.abc import Callable, Iterable
from typing import NamedTuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .call_sites import CallIndex, CallScan
from .device_variants import gpu_variants, variants_digest
from .custom_ops import MAX_FILE_BYTES, OpIndex, project_files, registering, scan
from .flag_defaults import FlagIndex, python_file, read_flags
from .opt_in_modules import ImportScan, OptIn
from .opt_in_modules import digest as opt_in_digest
from .engine.config import Settings
from .engine.guards import transfer_to_npu_imports
from .engine.packaging import document_kind, items_of, normalise, requirement_at
from .engine.text import SourceText
from .real_folders import RealFolders
from .sources import SourceError, read_regular

LOCKS = ("_ops_lock", "_pins_lock", "_python_lock")
PIN_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml")


class PythonFacts(NamedTuple):
    """What the project's Python files say, read together (ProjectContext._read_python)."""

    flags: FlagIndex
    calls: CallIndex
    variants: dict[str, str]  # device_variants.py
    opt_in: dict[str, OptIn]  # opt_in_modules.py
    transfer: bool  # a file imports transfer_to_npu


class ProjectContext:
    """One project's shared facts. Safe to use from several threads (the server analyses
    on two); picklable, for lsp-check's worker processes (what was read goes along)."""

    def __init__(self, root: str, exclude: tuple[str, ...] = (), fixed: bool = False,
                 provisional: bool = False) -> None:
        self.root = root
        self.exclude = exclude  # `exclude` of the settings that made it: not the project's own code
        self.fixed = fixed  # no file appears or goes while it is used (one lsp-check run): listed once
        # analyses do not wait for the Python facts (the language server's: its first diagnostics come at once):
        # until read_python has read them, they see nothing that would lower a finding (_unread)
        self.provisional = provisional
        self.seen_unread = False  # an analysis of a provisional project saw its Python facts unread
        self._listing: list[str] | None = None  # the files the readings below read, when fixed
        self._ops: OpIndex | None = None
        self._pins: dict[str, tuple[str, str, int]] | None = None  # name → (specifier, file, 0-based line)
        self._python: PythonFacts | None = None  # read on first use
        # one lock a reading: an analysis that asks for the pins does not wait for the Python files' reading
        self._ops_lock, self._pins_lock, self._python_lock = threading.Lock(), threading.Lock(), threading.Lock()

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in LOCKS and k != "_listing"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _listing=None, **{lock: threading.Lock() for lock in LOCKS})

    def files(self, wanted: Callable[[str], bool]) -> list[str]:
        """The project's files that `wanted` keeps, from one walk for every reading below
        (custom_ops.project_files, MAX_FILES of them at most): walked once while the project
        is fixed, else on every call."""
        listing = self._listing
        if listing is None:
            listing = list(project_files(self.root, self.exclude, read_by_project))
            if self.fixed:
                self._listing = listing
        return [path for path in listing if wanted(path)]

    @property
    def ops(self) -> OpIndex:
        """The operators the project registers, scanned on first use (once: an analysis that
        asks during the scan waits for it)."""
        with self._ops_lock:
            if self._ops is None:
                self._ops = scan(self.root, self.exclude, self.files(registering))
            return self._ops

    def rescan_ops(self) -> None:
        """Scan the operators again: a file that registers some (or did) changed."""
        fresh = scan(self.root, self.exclude, self.files(registering))
        with self._ops_lock:
            self._ops = fresh

    def registers_in(self, path: str) -> bool:
        """Whether the operators as last scanned include a registration from `path`."""
        with self._ops_lock:
            index = self._ops
        return index is not None and any(r.path == path for regs in index.ops.values() for r in regs)

    def ops_digest(self, settings: Settings) -> str:
        """A digest of the registered operators, for result caches; "" when NPU308 does not
        run with these settings (and nothing is scanned)."""
        return self.ops.digest() if reads_operators(settings) else ""

    def pin(self, name: str) -> str | None:
        """The version specifier the project pins the distribution `name` to, as written
        (`==2.1.0`, `>=2.1,<2.3`, conda's `=2.1`), from the first file that gives it one;
        None when none does."""
        found = self._pin(name)
        return found[0] if found is not None else None

    def pin_place(self, name: str) -> tuple[str, int] | None:
        """Where that pin is written: the file and its 0-based line."""
        found = self._pin(name)
        return found[1:] if found is not None else None

    def _pin(self, name: str) -> tuple[str, str, int] | None:
        with self._pins_lock:
            if self._pins is None:
                self._pins = read_pins(self.root, self.exclude, self.files(pins_versions))
            return self._pins.get(normalise(name))

    def forget_pins(self) -> None:
        """Read the pins again on next use: a file that pins versions changed."""
        with self._pins_lock:
            self._pins = None

    def pins_digest(self) -> str:
        """What the pins are and where, for result caches (they decide some findings' severity,
        and their places are related locations)."""
        self.pin("torch")  # read them, once
        return repr(sorted(self._pins.items())) if self._pins else ""


    @property
    def flags(self) -> FlagIndex:
        """The boolean flags the project leaves off (flag_defaults.py), read on first use."""
        return self._python_facts().flags

    @property
    def calls(self) -> CallIndex:
        """The calls of the project's functions with CUDA defaults or naming CUDA (call_sites.py), read with the flags."""
        return self._python_facts().calls

    def gpu_variant(self, path: str) -> str | None:
        """The NPU's module beside the file, when the file is the GPU's of the pair (device_variants.py)."""
        return self._python_facts().variants.get(os.path.relpath(path, self.root).replace(os.sep, "/"))

    def opt_in(self, path: str) -> OptIn | None:
        """Why the module runs only where the user turns an option on, when it does (opt_in_modules.py)."""
        return self._python_facts().opt_in.get(os.path.relpath(path, self.root).replace(os.sep, "/"))

    @property
    def imports_transfer_to_npu(self) -> bool:
        """Whether a Python file of the project imports `torch_npu.contrib.transfer_to_npu`."""
        return self._python_facts().transfer

    def _python_facts(self) -> PythonFacts:
        """The facts of the Python files, read once (an analysis that asks during the read waits
        for it); none while a provisional project's are not read."""
        facts = self._python
        if facts is None and self.provisional:
            self.seen_unread = True
            return self._unread
        return facts if facts is not None else self.read_python()

    @functools.cached_property
    def _unread(self) -> PythonFacts:
        """What a provisional project's analyses see before its Python facts are read: nothing
        that would lower a finding (no flag left off, and any may be on; no call of its functions;
        no module imported only under an option; transfer_to_npu may be imported)."""
        return self._read_python([])._replace(flags=FlagIndex(read=False), transfer=True)

    def read_python(self) -> PythonFacts:
        """Read the facts of the Python files, once."""
        with self._python_lock:
            if self._python is None:
                self._python = self._read_python(self.python_files())
            return self._python

    def adopt_python(self, facts: PythonFacts) -> None:
        """Take the facts of the Python files as read elsewhere (read_python_facts), unless read here meanwhile."""
        with self._python_lock:
            if self._python is None:
                self._python = facts

    @property
    def python_read(self) -> bool:
        """Whether the flags and the calls have been read."""
        return self._python is not None

    def _read_python(self, files: list[str]) -> PythonFacts:
        """The facts of the project's Python `files`, each file read once."""
        scan = CallScan(self.root)
        imports = ImportScan(self.root, files)
        paths: list[str] = []
        transfer = False

        def each(path: str, text: str) -> None:
            nonlocal transfer
            paths.append(path)
            scan.add(path, text)
            imports.add(path, text)
            transfer = transfer or bool(transfer_to_npu_imports(text))

        flags = read_flags(self.root, self.exclude, each, files)
        return PythonFacts(flags, scan.index(), gpu_variants(self.root, paths), imports.index(flags), transfer)

    def python_digest(self) -> str:
        """What the facts of the Python files say, for result caches."""
        facts = self._python_facts()
        return (facts.flags.digest() + facts.calls.digest() + variants_digest(facts.variants)
                + opt_in_digest(facts.opt_in) + str(facts.transfer))

    def python_files(self) -> list[str]:
        """The Python files the flags and the calls are read from."""
        return self.files(python_file)

    def reread_python(self) -> bool:
        """Read the facts of the Python files again, if they were read (a Python file changed);
        whether what they say changed."""
        if self._python is None:
            return False
        before = self.python_digest()
        facts = self._read_python(self.python_files())
        with self._python_lock:
            self._python = facts
        return self.python_digest() != before


def read_python_facts(root: str, exclude: tuple[str, ...]) -> PythonFacts:
    """The facts of a project's Python files, read on their own: the language server reads them in
    a process of its own, where the reading does not hold the interpreter lock that analyses need."""
    return ProjectContext(root, exclude).read_python()


class Projects:
    """An adapter's projects by root, each created on first use. `folders`: the workspace
    folders the language server was given, which are project roots. `fixed`: no project
    marker appears or goes while it is used (one lsp-check run), so each folder's root is
    looked for once, and a folder without a marker takes its parent's answer. `provisional`: each
    project's analyses do not wait for its Python facts (ProjectContext)."""

    def __init__(self, fixed: bool = False, provisional: bool = False) -> None:
        self.folders: set[str] = set()
        self.provisional = provisional  # each project's (ProjectContext)
        self._by_root: dict[str, ProjectContext] = {}
        self._markers: dict[str, str | None] | None = {} if fixed else None
        self._real = RealFolders() if fixed else None

    def for_path(self, path: str | None, settings: Settings) -> ProjectContext | None:
        root = project_root(path, settings, self.folders, self._markers, self._real)
        if root is None:
            return None
        found = self._by_root.get(root)
        if found is None:
            found = self._by_root[root] = ProjectContext(root, settings.exclude, self._markers is not None,
                                                         self.provisional)
        return found


def project_root(path: str | None, settings: Settings, folders: set[str] | frozenset[str] = frozenset(),
                 markers: dict[str, str | None] | None = None, real: RealFolders | None = None) -> str | None:
    """The configured root, else the nearest folder above `path` that is one of `folders`
    or has a pyproject.toml, setup.py or .git; None for an unsaved document. `markers`
    remembers, per folder walked, that nearest folder (None: there is none up to `/`), and
    `real` the real path of each folder."""
    if settings.root:
        return settings.root
    if not path:
        return None
    parent = os.path.dirname(os.path.abspath(path))  # a link's project is where the link is
    folder = real.of(parent) if real is not None else str(Path(parent).resolve())
    walked: list[str] = []
    nearest: str | None = None
    candidate = folder
    while True:
        if markers is not None and candidate in markers:
            nearest = markers[candidate]
            break
        walked.append(candidate)
        if candidate in folders or \
                any(os.path.exists(os.path.join(candidate, marker)) for marker in ("pyproject.toml", "setup.py", ".git")):
            nearest = candidate
            break
        above = os.path.dirname(candidate)
        if above == candidate:
            break
        candidate = above
    if markers is not None:
        markers.update(dict.fromkeys(walked, nearest))
    return nearest or folder


def read_pins(root: str, exclude: tuple[str, ...] = (), files: Iterable[str] | None = None) -> dict[str, tuple[str, str, int]]:
    """Normalised distribution name → the first version specifier the project's files give it
    (top folder first), the file and the line it is on. `files`: the files that may pin
    versions, where the caller has listed them."""
    pins: dict[str, tuple[str, str, int]] = {}
    real_root = os.path.realpath(root)
    for path in project_files(root, exclude, pins_versions) if files is None else files:
        real = os.path.realpath(path)
        if os.path.commonpath([real, real_root]) != real_root:
            continue  # a link out of the project: not the project's to read (docs/security.md)
        try:
            text = read_regular(real, MAX_FILE_BYTES, follow_links=False)[0].decode("utf-8", "replace")
        except SourceError:
            continue
        for name, spec, line in _requirements(path, text):
            if spec:
                pins.setdefault(name, (spec, path, line))
    return pins


def reads_operators(settings: Settings) -> bool:
    """Whether the project's operators decide a finding under these settings (NPU308 runs)."""
    return settings.target == "torch_npu" and settings.enabled("NPU308")


def read_by_project(path: str) -> bool:
    """Whether a reading of ProjectContext reads the file: a source that may register operators,
    a Python file, a file that may pin versions."""
    return registering(path) or pins_versions(path)


def pins_versions(path: str) -> bool:
    """Whether the file is one that may pin versions: a packaging file by its name, or a
    requirements file (`requirements-dev.txt`, `requirements/test.txt`)."""
    return os.path.basename(path).lower() in PIN_FILES or document_kind(path) == "requirements"


def _requirements(path: str, text: str) -> list[tuple[str, str, int]]:
    """(normalised name, specifier, 0-based line) of each requirement the file states."""
    kind = "setup.py" if os.path.basename(path).lower() == "setup.py" else document_kind(path)
    if kind == "setup.py":
        strings = _install_requires(text)
    elif kind == "pyproject":
        source = SourceText(text)  # TOML keeps no places: a string's is where its text first is
        strings = [(d, source.position(max(text.find(d), 0))[0]) for d in _project_dependencies(text)]
    else:
        items = items_of(kind, SourceText(text)) if kind is not None else []
        return [(item.name, item.spec, item.range.start_line) for item in items if item.kind == "requirement"]
    items = [requirement_at(s, line, 0, kind) for s, line in strings]
    return [(item.name, item.spec, item.range.start_line) for item in items if item is not None]


def _project_dependencies(text: str) -> list[str]:
    try:
        project = tomllib.loads(text).get("project", {})
    except tomllib.TOMLDecodeError:
        return []
    if not isinstance(project, dict):
        return []
    groups = [project.get("dependencies")]
    optional = project.get("optional-dependencies")
    if isinstance(optional, dict):
        groups.extend(optional.values())
    return [d for group in groups if isinstance(group, list) for d in group if isinstance(d, str)]


def _install_requires(text: str) -> list[tuple[str, int]]:
    """The string literals of every `install_requires=[...]` keyword in setup.py (not run),
    each with its 0-based line."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return [(item.value, item.lineno - 1) for node in ast.walk(tree)
            if isinstance(node, ast.keyword) and node.arg == "install_requires"
            and isinstance(node.value, (ast.List, ast.Tuple))
            for item in node.value.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
