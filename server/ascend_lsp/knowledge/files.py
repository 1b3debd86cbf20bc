"""Reading mappings/: where the tables are, and each file parsed once (cached across runs)."""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .. import __version__
from ..sources import SourceError, read_regular


class TableError(Exception):
    """A mapping table (shipped or user-supplied) that cannot be read."""


@functools.cache
def mappings_root() -> Path:
    # Installed wheels carry the tables inside the package; a source checkout keeps them
    # at the top of the repository.
    packaged = Path(__file__).resolve().parent.parent / "mappings"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "mappings"


def tables_stamp() -> list[str]:
    """The modification times of every shipped table file, in a fixed order: what a result
    computed from the tables depends on."""
    return [str(p.stat().st_mtime_ns) for p in sorted(mappings_root().rglob("*.toml"))]


def cache_dir() -> Path:
    if os.environ.get("ASCEND_LSP_CACHE_DIR"):
        return Path(os.environ["ASCEND_LSP_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ascend-lsp"


def read_table(path: Path) -> dict:
    """The parsed table. tomllib needs ~0.5 s for a support list, too slow for a server
    start, so the parsed form is kept (as marshal data: no code runs on load) in the user
    cache, keyed by the file's identity."""
    try:
        stat = path.stat()
        key = hashlib.blake2b(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{__version__}".encode(),
                              digest_size=8).hexdigest()
        cached = cache_dir() / f"{path.stem}-{key}.marshal"
        try:
            return marshal.loads(cached.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            pass
        data = tomllib.loads(read_regular(str(path))[0].decode("utf-8"))
    except (OSError, SourceError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TableError(f"cannot read mapping table {path}: {exc}") from exc
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(marshal.dumps(data))
        os.replace(partial, cached)
    except (OSError, ValueError):
        pass  # a read-only home still works, just slower
    return data
