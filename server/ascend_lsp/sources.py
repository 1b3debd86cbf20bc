"""Reading a file safely (for the CLI, the server and the tables): a regular file only, never a
FIFO or a device, and bounded in size. source_codec.py turns what is read into the text the
engine checks."""

from __future__ import annotations

import os
from stat import S_ISDIR, S_ISFIFO, S_ISREG
from typing import BinaryIO

MAX_BYTES = 32 * 1024 * 1024  # larger is not source code a person wrote; reported, not read


class SourceError(Exception):
    """The file cannot be checked; the message says why, for a person."""


def open_regular(path: str, follow_links: bool = True) -> tuple[BinaryIO, os.stat_result]:
    """A regular file (through symlinks unless not `follow_links`) opened for reading, and its
    stat. A FIFO, a device (`/dev/zero`, `/dev/urandom`), a socket or a folder is refused
    without reading (a FIFO is opened non-blocking, so it cannot hang)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    handle = os.fdopen(fd, "rb")
    try:
        stat = os.fstat(fd)
    except OSError as exc:
        handle.close()
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if not S_ISREG(stat.st_mode):
        handle.close()
        kind = "a directory" if S_ISDIR(stat.st_mode) else "a FIFO" if S_ISFIFO(stat.st_mode) else "a device or socket"
        raise SourceError(f"not a regular file ({kind}); only files are read")
    return handle, stat


def read_regular(path: str, limit: int = MAX_BYTES, follow_links: bool = True) -> tuple[bytes, int]:
    """The bytes of a regular file (see open_regular) and its mtime; a file over `limit` bytes
    is refused."""
    handle, stat = open_regular(path, follow_links)
    with handle:
        try:
            if stat.st_size > limit:
                raise SourceError(f"too large to check ({stat.st_size / 2**20:.1f} MiB; the limit is "
                                  f"{limit / 2**20:.0f} MiB)")
            # The size first: asking for `limit` bytes would allocate that much for every file.
            raw = handle.read(stat.st_size + 1)
            if len(raw) > stat.st_size:  # growing while read: bounded still
                raw += handle.read(limit + 1 - len(raw))
        except OSError as exc:
            raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise SourceError(f"too large to check (over the limit of {limit / 2**20:.0f} MiB)")
    return raw, stat.st_mtime_ns
