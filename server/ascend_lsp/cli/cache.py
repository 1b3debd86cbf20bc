"""lsp-check's result cache, `.lsp-check-cache/` in the checked tree: the findings of files
checked without writing, reused while nothing they depend on changed.

The folder comes with the repository, so it is untrusted: it is used only when it is a real
folder (not a link), its files are replaced by name and never written through, the cache file
is read only when it is a regular file of a bounded size, and anything in it that is not a
cache (a corrupt, foreign or planted file) is discarded and rebuilt. A planted cache cannot
make a file look clean either: an entry holds the file's inode and ctime, which a fresh
checkout (or an edit, even one that restores the mtime) changes."""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from .. import __version__
from ..engine.config import Settings
from ..knowledge.files import tables_stamp
from ..project import ProjectContext, read_by_project, reads_operators
from ..safe_write import WriteRefused, replace
from ..sources import SourceError, read_regular
from .results import FileResult, Record

CACHE_DIR = ".lsp-check-cache"
CACHE_FORMAT = 6  # bump when an entry's shape changes
MAX_BYTES = 256 * 1024 * 1024  # larger is not a cache lsp-check wrote: discarded unread

Stamp = tuple[int, int, int, int]  # mtime_ns, size, ctime_ns, inode


@functools.cache
def code_stamp() -> int:
    """The newest mtime of this package's modules, so an edited checkout (an editable
    install) does not reuse results computed by older rules."""
    return max(p.stat().st_mtime_ns for p in Path(__file__).parent.parent.rglob("*.py"))


def settings_key(settings: Settings, project: ProjectContext | None = None, cache: Cache | None = None) -> str:
    """What a cached result depends on besides the file: the code, the tables, the settings,
    the operators the file's project registers (NPU308), the versions it pins (NPU109, NPU112, and
    the portable fix style: an older torch keeps the npu fixes), the flags it leaves off (NPU106, NPU111) and
    the calls that pass what its defaults would (NPU101); with `cache`, the last three as it kept them."""
    stamp = [code_stamp(), *(_project_digests(settings, project, cache) if project is not None else ())]
    stamp += tables_stamp()
    stamp += [f"{p}:{os.path.getmtime(p) if os.path.exists(p) else 0}" for p in settings.extra_mappings]
    return hashlib.blake2b(repr((__version__, settings, stamp)).encode(), digest_size=12).hexdigest()


def _project_digests(settings: Settings, project: ProjectContext, cache: Cache | None) -> list[str]:
    def kept(kind: str, digest: Callable[[], str]) -> str:
        return digest() if cache is None else cache.kept(project, kind, digest)

    ops = kept("ops", lambda: project.ops.digest()) if reads_operators(settings) else ""
    return [ops, kept("pins", project.pins_digest), kept("python", project.python_digest)]


class Cache:
    """path → (stamp, settings key, records, lines, references or None) for files checked
    without writing."""

    def __init__(self, root: Path | None) -> None:
        self.folder = root / CACHE_DIR if root else None
        self.file = self.folder / f"v{__version__}-{CACHE_FORMAT}.marshal" if self.folder else None
        self.entries: dict = {}
        self.dirty = False
        self._stamps: dict[str, Stamp | None] = {}
        self._projects: dict[tuple, tuple] = {}  # a project's memo → the stamps of its files, taken once a run
        if self.folder is None:
            return
        why = _not_a_folder(self.folder)
        if why:
            print(f"warning: {self.folder}: {why}; results are not cached (remove it to cache them)",
                  file=sys.stderr)
            self.folder = self.file = None
            return
        try:
            entries = marshal.loads(read_regular(str(self.file), MAX_BYTES, follow_links=False)[0])
        except (SourceError, EOFError, ValueError, TypeError):
            return  # none yet, or not one of ours: rebuilt
        if isinstance(entries, dict):
            self.entries = entries

    def stamp(self, path: str) -> Stamp | None:
        """The file's stamp, taken once a run: a result is kept with the stamp of the file
        before it was read, so a file changed while it was checked is checked again."""
        if path not in self._stamps:
            try:
                st = os.stat(path)
            except OSError:
                self._stamps[path] = None
            else:
                self._stamps[path] = st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino
        return self._stamps[path]

    def get(self, path: str, key: str, references: bool = False) -> FileResult | None:
        entry = self.entries.get(path)
        if type(entry) is not tuple or len(entry) != 5 or entry[1] != key or entry[0] != self.stamp(path):
            return None
        _, _, records, lines, refs = entry
        if references and refs is None:
            return None  # checked before without collecting references
        try:
            return FileResult(path, [Record(*r) for r in records], lines=lines,
                              references=[tuple(r) for r in refs] if refs is not None else None)
        except TypeError:  # not an entry this version wrote
            return None

    def kept(self, project: ProjectContext, kind: str, digest: Callable[[], str]) -> str:
        """digest() (of what the project's files say: its operators, pins or Python facts), kept
        beside the entries with the stamps of the files the project's readings read: while none
        changed, none is read again. A planted cache cannot match those stamps (inode and ctime),
        as it cannot an entry's."""
        memo = ("project", project.root, project.exclude)  # one a project: replaced when the code changes
        files = self._projects.get(memo)
        if files is None:
            files = self._projects[memo] = tuple((path, self.stamp(path)) for path in project.files(read_by_project))
        found = self.entries.get(memo)
        if not (type(found) is tuple and len(found) == 3 and found[0] == code_stamp() and found[1] == files
                and type(found[2]) is dict):
            found = self.entries[memo] = (code_stamp(), files, {})
        digests = found[2]
        if type(digests.get(kind)) is not str:
            digests[kind] = digest()
            self.dirty = True
        return digests[kind]

    def put(self, result: FileResult, key: str) -> None:
        stamp = self.stamp(result.path)
        if stamp is None or result.error or result.rule_errors:
            return
        self.entries[result.path] = (stamp, key, [r.fields() for r in result.records], result.lines,
                                     result.references)
        self.dirty = True

    def save(self) -> None:
        """Write the cache, or leave it unwritten (a read-only checkout): it is only a cache."""
        if self.folder is None or self.file is None or not self.dirty:
            return
        try:
            os.mkdir(self.folder)  # fails on any name already there, a link too: never made elsewhere
        except FileExistsError:
            pass
        except OSError:
            return
        if _not_a_folder(self.folder):
            return
        try:  # created only where no name is: an existing .gitignore (or a link there) is left alone
            fd = os.open(self.folder / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
            with os.fdopen(fd, "w") as gitignore:
                gitignore.write("*\n")
        except FileExistsError:
            pass
        except OSError:
            return
        try:
            replace(str(self.file), marshal.dumps(self.entries))
        except (WriteRefused, ValueError):
            pass


def _not_a_folder(folder: Path) -> str:
    """Why `folder` cannot hold the cache ("" when it can, or when it is not there yet)."""
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"cannot use it: {exc.strerror or exc}"
    if stat.S_ISLNK(mode):
        return "a symbolic link, not a folder"
    return "" if stat.S_ISDIR(mode) else "not a folder"
