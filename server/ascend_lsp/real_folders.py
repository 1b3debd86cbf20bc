"""Real paths of folders, each found from its parent's: the folders of a tree share their
ancestors, which `os.path.realpath` would look at again for each (a stat per component)."""

from __future__ import annotations

import os
import stat


class RealFolders:
    """`os.path.realpath` of absolute folders, remembered: a folder is its real parent's
    child, unless it is a link (then realpath resolves it). Kept by an adapter while the
    links do not change (one lsp-check run; the server forgets them with its settings)."""

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def of(self, folder: str) -> str:
        """The real path of `folder`, which os.path.abspath leaves as it is."""
        real = self._known.get(folder)
        if real is None:
            parent, name = os.path.split(folder)
            if not name:  # the root
                real = os.path.realpath(folder)
            else:
                real = os.path.join(self.of(parent), name)
                try:
                    link = stat.S_ISLNK(os.lstat(real).st_mode)
                except OSError:  # not there: kept as it is, as realpath keeps it
                    link = False
                if link:
                    real = os.path.realpath(real)
            self._known[folder] = real
        return real

    def clear(self) -> None:
        self._known.clear()
