"""Writing files where a repository (or a command line) decides, without harm: every writer
of the package goes through here (`--fix`, `--add-noqa`, the result cache, `port`,
`convert-weights`).

The new content goes to a temporary file with a random name created exclusively
(`O_CREAT|O_EXCL|O_NOFOLLOW`, which never follows a planted symlink) in the target's folder, is flushed to disk, and
replaces the target with `os.replace`, so a reader never sees half a file and a failed write
(a full disk) leaves the target as it was and no temporary file behind."""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO, Callable

Content = bytes | Callable[[BinaryIO], None]  # the bytes, or a function that writes them to the file


class WriteRefused(Exception):
    """The file was not written; the message says why, for a person (without the path)."""


def writable_target(path: str, follow_links: bool = False, within: tuple[str, ...] = ()) -> tuple[str, int | None]:
    """The file to replace for `path` and the mode to give it (None: a new file's). Only a
    regular file or a new name in an existing folder is written: a device, a FIFO or a folder
    is refused, so is a read-only file, and so is a file with hard links (an atomic replace
    would leave the other names with the old content). A symlink is refused unless
    `follow_links` (a file edited in place): then its existing target is written and the link
    kept, provided the target lies inside one of the folders `within` (the checked trees: a
    repository's link may point anywhere). An output name is never followed: a repository
    could have linked it anywhere."""
    target = path
    if os.path.islink(path):
        if not follow_links:
            raise WriteRefused("a symbolic link; not written through it")
        target = os.path.realpath(path)
        if not os.path.lexists(target):
            raise WriteRefused("a symbolic link to nothing; not written")
        if within and not any(os.path.commonpath([target, tree]) == tree for tree in within):
            raise WriteRefused(f"a symbolic link to {target}, outside the checked tree; not written through it")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        folder = os.path.dirname(target) or "."
        if not os.path.isdir(folder):
            raise WriteRefused(f"the folder {folder} does not exist") from None
        return target, None
    except OSError as exc:
        raise WriteRefused(f"cannot write: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a device or socket"
        raise WriteRefused(f"not a regular file ({kind}); only regular files are written")
    # root may write anything: a file nobody may write is read-only for it too
    if not st.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise WriteRefused("the file is read-only; not written")
    if st.st_nlink > 1:
        raise WriteRefused(f"the file has {st.st_nlink} hard links, which writing it would separate; not written")
    return target, stat.S_IMODE(st.st_mode)


def write_file(path: str, content: Content, follow_links: bool = False, within: tuple[str, ...] = ()) -> None:
    """Replace the content of `path` (see writable_target for what is refused)."""
    target, mode = writable_target(path, follow_links, within)
    replace(target, content, mode)


def replace(path: str, content: Content, mode: int | None = None) -> None:
    """Put a new file with `content` at `path`, replacing whatever has that name (the name is
    replaced, nothing is written through it). `mode` None: a new file's mode."""
    try:
        fd, partial = _create_beside(path)
    except OSError as exc:
        raise WriteRefused(f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            if callable(content):
                content(handle)
            else:
                handle.write(content)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(partial, path)
    except BaseException as exc:
        try:
            os.unlink(partial)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise WriteRefused(f"cannot write: {exc.strerror or exc}") from None
        raise


def _create_beside(path: str) -> tuple[int, str]:
    """A new file with a random name in `path`'s folder, as `mkstemp` makes one but with a new
    file's mode (0666 less the umask, applied by the system: no process-wide umask change)."""
    folder, name = os.path.split(path)
    for _ in range(100):
        partial = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666), partial
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name beside the file")
